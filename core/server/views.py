"""What clients are shown of a table: the variant's card layout, each player's card, the dice and the
legal moves with what they score, narration of each move, and the result. All from the engine's own
state and queries: a client holds no rules.
"""

from __future__ import annotations

from typing import Any

from ..game.actions import Action, Keep, Score, action_to_json
from ..game.state import GameState
from ..language.describe import bonus_cells
from ..language.model import RuleAction, Variant
from ..locales import _

__all__ = [
    "box_name",
    "move_label",
    "variant_view",
    "players_view",
    "progress_lines",
    "turn_view",
    "result_view",
    "timeout_action",
    "reviewable",
]


def box_name(v: Variant, box: str) -> str:
    """A box's name, with its column's where the card has several: `Full house`, `Yamb (Announce)`."""
    b = v.box(box)
    return f"{b.name} ({v.column(b.column).name})" if len(v.columns) > 1 else b.name


def move_label(state: GameState, action: Action, names: Variant | None = None) -> str:
    """A move in words, made in `state`: `keep 5 5`, `score Full house for 25`, `roll 1 3 3 5 6`, in the language
    spoken (`names`: the variant in it, `Variant.in_language`)."""
    v = names or state.variant
    if isinstance(action, Keep):
        return _("keep {dice}").format(dice=" ".join(map(str, action.dice)) or _("nothing"))
    if isinstance(action, Score):
        result = state.score_preview(action.box)
        named = {b.id: b.name for b in (*v.bonuses, *v.column_bonuses)}
        awards = "".join(f" ({named.get(a.id, a.name or a.id)} {a.points:+d})" for a in result.awards)
        return _("score {box} for {points}{awards}").format(
            box=box_name(v, action.box), points=result.points, awards=awards
        )
    if isinstance(action, RuleAction):
        on_box = action.arg in v.box_ids
        return f"{action.name} {box_name(v, action.arg)}" if on_box else action.label
    held = state.held or ()
    return _("roll {dice}").format(dice=" ".join(map(str, sorted(held + action.dice))))


def variant_view(v: Variant) -> dict[str, Any]:
    """The variant as a client draws its card: boxes, rows and columns, face attributes (Kismet's colours)."""
    return {
        "id": v.id,
        "name": v.name,
        "description": v.description,
        "dice": v.dice,
        "faces": v.faces,
        "boxes": [
            {"id": b.id, "name": b.name, "section": b.section, "row": b.row, "column": b.column} for b in v.boxes
        ],
        "rows": [{"id": r, "name": v.row(r).name, "section": v.row(r).section} for r in v.rows],
        "columns": [{"id": c.id, "name": c.name, "multiplier": c.multiplier, "order": c.order} for c in v.columns],
        "attributes": {name: list(values[1:]) for name, values in v.attributes.items()},
        "figures": {f.id: f.name for f in v.figures},
        "carry_over": v.carry_over,
        "translations": translations_view(v),
    }


def translations_view(v: Variant) -> dict[str, dict[str, Any]]:
    """The variant's names in other languages (its `translations`), for a page that speaks one."""
    out = {}
    for lang, tr in v.translations.items():
        names: dict[str, Any] = {k: getattr(tr, k) for k in ("name", "description") if getattr(tr, k)}
        for part in ("boxes", "bonuses", "columns", "figures", "sections"):
            if getattr(tr, part):
                names[part] = dict(getattr(tr, part))
        out[lang] = names
    return out


def players_view(state: GameState, names: Variant | None = None) -> list[dict[str, Any]]:
    """Every player's card: boxes as written (null when open), bonus lines, column totals, figures, total
    (`names`: the variant in the language spoken)."""
    v = names or state.variant
    out = []
    for i, (name, card) in enumerate(zip(state.players, state.cards, strict=True)):
        part = state.breakdown(i)
        out.append(
            {
                "name": name,
                "scores": part["boxes"],
                "bonuses": [
                    {"id": bid, "name": bname, "text": text}
                    for bid, bname, text, _points in bonus_cells(v, card, False)
                ],
                "columns": part.get("columns"),
                "figures": part.get("figures"),
                "total": part["total"],
                "banked": state.banked[i] if v.carry_over else None,
            }
        )
    return out


def progress_lines(state: GameState, names: Variant | None = None) -> list[str]:
    """How the bonuses stand on the current player's card, in the rules' words (`names`: the variant in the
    language spoken)."""
    return [p.line for p in (names or state.variant).progress(state.card) if p.line] if not state.over else []


def turn_view(
    state: GameState, progress: list[str] | None = None, previews: bool = True, names: Variant | None = None
) -> dict[str, Any]:
    """The turn as it stands: dice, rolls left, and for a decision the legal boxes and rule moves (`progress`:
    `progress_lines(state)`, when the caller has it already; `previews`: what each legal box would score,
    left out while a bot decides: scoring every box is most of a view's cost, and nobody clicks them)."""
    deciding = not state.over and not state.is_chance
    legal = {}
    for box in state.legal_boxes() if deciding and previews else ():
        res = state.score_preview(box)
        legal[box] = {"written": res.written, "points": res.points}
    return {
        "current": None if state.over else state.current,
        "round": state.round,
        "rounds": state.rounds,
        "dice": list(state.dice),
        "rolls_left": state.rolls_left if deciding else 0,
        "may_reroll": deciding and state.may_reroll(),
        "legal": legal,
        "rule_actions": [
            {"move": action_to_json(a), "label": move_label(state, a, names)}
            for a in (state.rule_actions() if deciding else ())
        ],
        "notes": [t for t in state.turn_status() if t] if deciding else [],
        "progress": progress_lines(state, names) if progress is None else progress,
    }


def result_view(state: GameState) -> dict[str, Any]:
    """The end of the match: every game's totals, the ranking by the variant's own keys, winners, settlement."""
    v, names = state.variant, state.players
    keys = [state.match_totals(f) for f in v.rank_by]
    order = sorted(range(len(names)), key=lambda i: tuple(-k[i] for k in keys))
    ranking: list[dict[str, Any]] = []
    for n, i in enumerate(order):
        tied = n > 0 and all(k[i] == k[order[n - 1]] for k in keys)
        ranking.append(
            {"place": ranking[-1]["place"] if tied else n + 1, "name": names[i], "keys": [k[i] for k in keys]}
        )
    settle = state.settlement()
    return {
        "games": [list(r.totals) for r in state.results],
        "rank_by": [next((f.name for f in v.figures if f.id == key), "Score") for key in v.rank_by],
        "ranking": ranking,
        "winners": list(state.winners()),
        "totals": list(state.match_totals()),
        "settlement": None if settle is None else {p: float(amount) for p, amount in settle.items()},
    }


def reviewable(v: Variant) -> bool:
    """Whether the games of `v` can be reviewed move by move (the exact solver takes the variant)."""
    from ..solver.errors import SolverError
    from ..solver.review import check_reviewable

    try:
        check_reviewable(v)
    except SolverError:
        return False
    return True


def timeout_action(state: GameState) -> Action:
    """What a turn timer plays for a seat whose time ran out: the box worth the most points now (the first
    such box on the card on a tie), else the first legal move (a rule's move that must come first)."""
    v, roll = state.variant, state.roll_now
    boxes = state.legal_boxes()
    if boxes and roll is not None:
        sit = state.situation()
        return Score(
            max(boxes, key=lambda b: (v.score(state.card, b, roll, state.first_roll, sit).points, -v.box_ids.index(b)))
        )
    return state.legal_actions()[0]
