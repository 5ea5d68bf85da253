"""The game in the player's words: moves, boxes and why a box cannot be scored, named as the card names them."""

from __future__ import annotations

from collections.abc import Sequence

from ..game.actions import Action, Keep, RuleAction, Score
from ..game.state import GameState
from ..language.model import Variant
from .commands import why_not

__all__ = ["plural", "box_name", "dice_digits", "action_text", "example_action", "why_not_here"]


def plural(n: int, one: str, many: str) -> str:
    """`1 box`, `2 boxes`: a count with its noun in the right number."""
    return f"{n} {one if n == 1 else many}"


def box_name(st: GameState, box: str) -> str:
    b = st.variant.box(box)
    if len(st.variant.columns) > 1:
        return f"{b.name} ({st.variant.column(b.column).name})"
    return b.name


def dice_digits(dice: Sequence[int], faces: int) -> str:
    """Dice as digits for one-line narration: `11235` (comma-separated above nine faces)."""
    return ("" if faces < 10 else ",").join(map(str, dice))


def action_text(action: Action, variant: Variant | None = None) -> str:
    """A move in a few words: `keep 566`, `score full_house`, `announce Full (Announce)`."""
    if isinstance(action, Score):
        return f"score {action.box}"
    if isinstance(action, Keep):
        return "reroll all" if not action.dice else "keep " + "".join(map(str, action.dice))
    if isinstance(action, RuleAction):
        if variant is not None and isinstance(action.arg, str) and action.arg in variant.box_ids:
            b = variant.box(action.arg)
            where = f" ({variant.column(b.column).name})" if len(variant.columns) > 1 else ""
            return f"{action.name} {b.name}{where}"
        return action.label
    return str(action)


def example_action(st: GameState) -> str:
    """One action the rules offer now, as it is typed (`announce full`)."""
    a = st.rule_actions()[0]
    v = st.variant
    if isinstance(a.arg, str) and a.arg in v.box_ids:
        return f"{a.name} {v.box(a.arg).row}"
    return a.label


def why_not_here(st: GameState, box: str) -> str:
    """Why an open box cannot take the dice now, in the player's terms (forced card order said plainly)."""
    v = st.variant
    name = box_name(st, box)
    legal = st.legal_boxes()
    if len(v.columns) == 1 and v.columns[0].order in ("down", "up") and len(legal) == 1:
        nxt = legal[0]
        return (
            f"{name} cannot be scored yet: this game fills the boxes in card order, "
            f"so this turn scores {v.box(nxt).name} (s {v.box_ids.index(nxt) + 1})"
        )
    why = why_not(st, box)
    if not legal:
        allowed = "; ".join(st.turn_status()) or "no box can be scored before another move"
    elif len(legal) <= 4:
        allowed = "now you can score " + ", ".join(legal)
    else:
        allowed = f"{len(legal)} other boxes can be scored now (the card shows them)"
    return f"{name} cannot be scored now: {why}; {allowed}"
