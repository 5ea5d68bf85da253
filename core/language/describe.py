"""Plain-words descriptions of a compiled variant, shared by `show`, `variants` and play.

Built-in pattern and scorer kinds get a readable phrase; a kind from a third-party
plugin falls back to its declared form (`kind(param=value)`), so nothing breaks
when a plugin adds one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from .model import Box, Spec, Variant

__all__ = ["pattern_text", "scorer_text", "box_info", "variant_info", "options_text"]


def _faces(values: Any) -> str:
    return "".join(str(v) for v in values) if all(int(v) < 10 for v in values) else ",".join(map(str, values))


_PATTERNS: dict[str, Callable[[Mapping[str, Any]], str]] = {
    "always": lambda p: "any roll",
    "face": lambda p: f"any roll (counts the {p['face']}s)",
    "of_a_kind": lambda p: f"at least {p['n']} alike",
    "pairs": lambda p: "a pair" if p.get("count", 1) == 1 else f"{p['count']} pairs of different faces",
    "groups": lambda p: " + ".join(str(s) for s in p["sizes"]) + " alike, different faces",
    "straight": lambda p: (
        f"a run of {p['length']}" if p.get("length") is not None else "one of " + " / ".join(_faces(r) for r in p["runs"])
    ),
    "all_in": lambda p: "every die one of " + _faces(p["faces"]),
    "none_of": lambda p: "none of: " + ", ".join(p["boxes"]),
}

_SCORERS: dict[str, Callable[[Mapping[str, Any]], str]] = {
    "sum": lambda p: "sum of those dice",
    "total": lambda p: "sum of all dice",
    "fixed": lambda p: str(p["points"]),
    "relative": lambda p: f"(count of {p['face']}s - {p.get('par', 3)}) x {p['face']}",
}


def _text(spec: Spec, table: Mapping[str, Callable[[Mapping[str, Any]], str]]) -> str:
    fn = table.get(spec.kind)
    if fn is None:
        return spec.describe()
    try:
        return fn(spec.params)
    except (KeyError, TypeError, ValueError):  # a plugin reusing a built-in name differently
        return spec.describe()


def pattern_text(spec: Spec) -> str:
    """What a box needs, in words (`at least 3 alike`)."""
    return _text(spec, _PATTERNS)


def scorer_text(spec: Spec) -> str:
    """What a box scores when its pattern is met, in words."""
    return _text(spec, _SCORERS)


def box_info(box: Box) -> dict[str, Any]:
    """One box as plain data (for `show --json` and tables)."""
    return {
        "id": box.id,
        "name": box.name,
        "section": box.section,
        "stage": box.stage,
        "needs": pattern_text(box.pattern),
        "pattern": {"kind": box.pattern.kind, **dict(box.pattern.params)},
        "scores": scorer_text(box.scorer),
        "scorer": {"kind": box.scorer.kind, **dict(box.scorer.params)},
        "first_roll": box.first_roll.describe() if box.first_roll else None,
        "extra": box.extra,
        "help": box.help,
    }


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def variant_info(v: Variant) -> dict[str, Any]:
    """The whole scorecard and rules of a compiled variant as plain, JSON-ready data."""
    return {
        "id": v.id,
        "name": v.name,
        "description": v.description,
        "dice": {"count": v.dice, "faces": v.faces},
        "turn": {"rolls": v.rolls, "carry_over": v.carry_over},
        "boxes": [box_info(b) for b in v.boxes],
        "bonuses": [{"id": b.id, "name": b.name, "kind": b.kind, **_plain(b.params)} for b in v.bonuses],
        "rules": {name: _plain(params) for name, params in v.rules.items() if name not in {b.kind for b in v.bonuses}},
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
