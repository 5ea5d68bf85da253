"""The game in the player's words: moves, boxes and why a box cannot be scored, named as the card names
them (ids are for JSON and the API), and "did you mean" for what was mistyped."""

from __future__ import annotations

import difflib
from collections.abc import Iterable

from ..game.state import GameState
from ..game.words import variant_box_name
from ..language.model import Variant
from ..locales import _

__all__ = [
    "box_name",
    "box_names",
    "example_action",
    "typed_box",
    "score_example",
    "why_not",
    "why_not_here",
    "closest",
]


def box_name(st: GameState, box: str) -> str:
    """A box of this game as the card names it (see `variant_box_name`)."""
    return variant_box_name(st.variant, box)


def box_names(variant: Variant, boxes: Iterable[str]) -> str:
    """Boxes as the card names them, comma-separated."""
    return ", ".join(variant_box_name(variant, b) for b in boxes)


def example_action(st: GameState) -> str:
    """One action the rules offer now, as it is typed (`announce full`)."""
    a = st.rule_actions()[0]
    v = st.variant
    if isinstance(a.arg, str) and a.arg in v.box_ids:
        return f"{a.name} {v.box(a.arg).row}"
    return a.label


def typed_box(variant: Variant, box: str) -> str:
    """How a box is scored at the prompt, by its number: `s 9`, or `s 11 down` on a card with columns."""
    b = variant.box(box)
    if len(variant.columns) > 1:
        return f"s {variant.rows.index(b.row) + 1} {b.column}"
    return f"s {variant.box_ids.index(box) + 1}"


def score_example(st: GameState) -> str:
    """`s N` for a box the dice can go in now (the first on the card), else for the first open box."""
    boxes = st.legal_boxes() or st.variant.open_boxes(st.card) or st.variant.box_ids
    return typed_box(st.variant, boxes[0])


def why_not(state: GameState, box: str) -> str:
    """The rules' reason open `box` cannot take the dice now."""
    roll = state.roll_now
    if roll is None:
        return _("roll the dice first")
    return state.variant.why_illegal(state.card, roll, state.first_roll, box, state.situation()) or _(
        "the rules forbid it now"
    )


def why_not_here(st: GameState, box: str) -> str:
    """Why an open box cannot take the dice now, in the player's terms (forced card order said plainly)."""
    v = st.variant
    name = box_name(st, box)
    legal = st.legal_boxes()
    if len(v.columns) == 1 and v.columns[0].order in ("down", "up") and len(legal) == 1:
        nxt = legal[0]
        return _(
            "{box} cannot be scored yet: this game fills the boxes in card order, so this turn scores {next} ({typed})"
        ).format(box=name, next=v.box(nxt).name, typed=typed_box(v, nxt))
    why = why_not(st, box)
    if not legal:
        allowed = "; ".join(st.turn_status()) or _("no box can be scored before another move")
    elif len(legal) <= 4:
        allowed = _("now you can score {boxes}").format(boxes=box_names(v, legal))
    else:
        allowed = _("{n} other boxes can be scored now (the card shows them)").format(n=len(legal))
    return _("{box} cannot be scored now: {why}; {allowed}").format(box=name, why=why, allowed=allowed)


def closest(word: str, choices: Iterable[str], cutoff: float = 0.6) -> str | None:
    """The choice `word` most likely misspells (difflib's closest match), or None when none is this close."""
    found = difflib.get_close_matches(word.lower(), list(choices), n=1, cutoff=cutoff)
    return found[0] if found else None
