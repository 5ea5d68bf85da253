"""Plain-words descriptions of a compiled variant and of a card's bonuses, shared by `show`, `variants`, play
and the front ends (the terminal game, the web example).

What a pattern needs and what a scorer gives is said by the plugin that
registered it (`register(name, factory, text=...)`); a kind without a text falls
back to its declared form (`kind(param=value)`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .card import Card
from .model import Box, Variant

__all__ = ["bonus_cells", "box_info", "row_info", "variant_info", "options_text", "plain"]


def plain(value: Any) -> Any:
    """Parameters as plain JSON data (FrozenMaps to dicts, tuples to lists)."""
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


def row_info(box: Box) -> dict[str, Any]:
    """One row (a box's pattern and scorer) as plain data."""
    return {
        "id": box.row or box.id,
        "name": box.name,
        "section": box.section,
        "stage": box.stage,
        "needs": box.pattern.describe(),
        "pattern": {"kind": box.pattern.kind, **plain(box.pattern.params)},
        "scores": box.scorer.describe(),
        "scorer": {
            "kind": box.scorer.kind,
            **plain(box.scorer.params),
            **({"multiply": box.scorer.multiply} if box.scorer.multiply != 1 else {}),
        },
        "first_roll": box.first_roll.describe() if box.first_roll else None,
        "extra": box.extra,
        "help": box.help,
    }


def box_info(box: Box) -> dict[str, Any]:
    """One box as plain data (for `show --json` and tables)."""
    return {**row_info(box), "id": box.id, "row": box.row or box.id, "column": box.column}


def variant_info(v: Variant) -> dict[str, Any]:
    """The whole scorecard and rules of a compiled variant as plain, JSON-ready data."""
    bonus_kinds = {b.kind for b in v.declared_bonuses}
    orders = {c.order for c in v.columns}
    return {
        "id": v.id,
        "name": v.name,
        "description": v.description,
        "dice": {
            "count": v.dice,
            "faces": v.faces,
            "attributes": {
                name: {str(f): vals[f] for f in range(1, v.faces + 1)} for name, vals in v.attributes.items()
            },
        },
        "turn": {"rolls": v.rolls, "carry_over": v.carry_over},
        "columns": [{"id": c.id, "name": c.name, "multiplier": c.multiplier, "order": c.order} for c in v.columns],
        "rows": [row_info(v.row(r)) for r in v.rows],
        "boxes": [box_info(b) for b in v.boxes],
        "bonuses": [
            {
                "id": b.id,
                "name": b.name,
                "kind": b.kind,
                "scope": b.scope,
                "figure": b.figure,
                "column": b.column,
                **plain(b.params),
            }
            for b in v.declared_bonuses
        ],
        "rules": {name: plain(params) for name, params in v.rules.items() if name not in bonus_kinds | orders},
        "figures": [{"id": "score", "name": "Score"}] + [{"id": f.id, "name": f.name} for f in v.figures],
        "rank_by": list(v.rank_by),
        "options": {
            s.name: {"default": s.default, "choices": list(s.choices), "value": v.options.get(s.name), "help": s.help}
            for s in v.option_specs
        },
        "match": {
            "rounds": {("default" if k == 0 else str(k)): n for k, n in v.match.rounds.items()},
            "replay_ties": v.match.replay_ties,
        },
        "source": v.source,
    }


def options_text(v: Variant) -> str:
    """`joker=free` style summary of the chosen options (empty when the variant has none)."""
    return ", ".join(f"{k}={val}" for k, val in v.options.items())


def bonus_cells(variant: Variant, card: Card, final: bool) -> list[tuple[str, str, str, int]]:
    """Bonus rows of one card: (id, name, shown text, points earned so far).

    Declared bonuses come first, in order (per-column ones as `column.bonus`);
    awards a plugin adds under other ids follow. Before the end, a bonus not yet
    earned shows the progress its plugin reports (`42/63`).
    """
    earned: dict[str, int] = {}
    names: dict[str, str] = {}
    for a in list(card.awards) + list(variant.end_bonuses(card)):
        earned[a.id] = earned.get(a.id, 0) + a.points
        names.setdefault(a.id, a.name or a.id)
    cells = {} if final else {p.id: p.cell for p in variant.progress(card) if p.cell}
    rows: list[tuple[str, str, str, int]] = []
    for bonus in variant.declared_bonuses:
        pts = earned.pop(bonus.id, 0)
        text = cells.get(bonus.id, str(pts)) if not pts else str(pts)
        rows.append((bonus.id, bonus.name, text, pts))
    rows.extend((aid, names[aid], str(pts), pts) for aid, pts in earned.items())
    return rows
