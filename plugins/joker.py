"""The Yahtzee joker rule in three modes (docs/games/yahtzee.md; columns as in docs/games/triple-yahtzee.md).

free: any open box; once the yahtzee box is filled and the upper box of the
face is filled too, the fixed-score lower boxes pay their full points.
forced: once the yahtzee box is filled, the upper box of the face must be used
if open; else an open lower box (paying full points); else an open upper box.
none: no joker scoring.

Event `joker_used` (free and forced): five alike scored in a box other than the
yahtzee box once every yahtzee box is filled, whatever the box pays.

With columns, `box` and the boxes in `points` are rows: "the yahtzee box is
filled" means in every column, and so does "the upper box of the face".
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from dicecup import Card, ParameterError, Roll, ScoreContext, TurnContext, Variant, hookimpl
from dicecup.locales import _

MODES = ("free", "forced", "none")


def _check(variant: Variant, params: Mapping[str, Any]) -> None:
    if params["mode"] not in MODES:
        raise ParameterError("mode", f"mode must be one of {', '.join(MODES)}, got {params['mode']!r}")
    if params["box"] not in variant.rows:
        raise ParameterError("box", f"no row {params['box']!r}")
    if not isinstance(params["points"], Mapping):
        raise ParameterError("points", f"points must map rows to their joker points, got {params['points']!r}")
    for b, v in params["points"].items():
        if b not in variant.rows:
            raise ParameterError("points", f"no row {b!r}")
        if isinstance(v, bool) or not isinstance(v, int):
            raise ParameterError("points", f"{b} must map to a whole number of points, got {v!r}")
    if not isinstance(params["upper_section"], str) or not any(
        b.section == params["upper_section"] for b in variant.boxes
    ):
        raise ParameterError("upper_section", f"no box is in section {params['upper_section']!r}")


@hookimpl
def dicecup_register_rules(register: Callable[..., None]) -> None:
    register(
        "joker",
        {
            "mode": "free",
            "box": "yahtzee",
            "points": {"full_house": 25, "small_straight": 30, "large_straight": 40},
            "upper_section": "upper",
        },
        "Five alike as a joker once the `box` is filled; `mode` free, forced or none.",
        check=_check,
    )


def _upper_boxes(variant: Variant, section: str, face: int) -> tuple[str, ...]:
    """Every column's upper box counting `face`."""
    return tuple(
        b.id
        for b in variant.boxes
        if b.section == section and b.pattern.kind == "face" and b.pattern.params.get("face") == face
    )


def _joker_face(variant: Variant, card: Card, roll: Roll, params: Mapping[str, Any]) -> int | None:
    """The face of a joker roll (five alike with every yahtzee box filled), else None."""
    if not all(card.is_filled(b) for b in variant.boxes_of(params["box"])):
        return None
    if variant.combination(variant.row(params["box"]), roll) is None:
        return None
    return roll.dice[0]


@hookimpl
def dicecup_adjust_score(ctx: ScoreContext, score: int) -> int | None:
    params = ctx.variant.params("joker")
    if params["mode"] == "none" or ctx.box.row not in params["points"]:
        return None
    face = _joker_face(ctx.variant, ctx.card, ctx.roll, params)
    if face is None:
        return None
    if not all(ctx.card.is_filled(b) for b in _upper_boxes(ctx.variant, params["upper_section"], face)):
        return None  # free: the face's upper box is open, no joker; forced: not reachable
    return params["points"][ctx.box.row]


@hookimpl
def dicecup_legal_boxes(ctx: TurnContext) -> list[str] | None:
    params = ctx.variant.params("joker")
    if params["mode"] != "forced" or ctx.roll is None:
        return None
    face = _joker_face(ctx.variant, ctx.card, ctx.roll, params)
    if face is None:
        return None
    section = params["upper_section"]
    upper = [b for b in _upper_boxes(ctx.variant, section, face) if b in ctx.open_boxes]
    if upper:
        return upper
    sections = {b.id: b.section for b in ctx.variant.boxes}
    lower = [b for b in ctx.open_boxes if sections[b] != section]
    return lower or [b for b in ctx.open_boxes if sections[b] == section]


@hookimpl
def dicecup_explain(ctx: TurnContext, box: str) -> str | None:
    params = ctx.variant.params("joker")
    if params["mode"] != "forced" or ctx.roll is None or _joker_face(ctx.variant, ctx.card, ctx.roll, params) is None:
        return None
    allowed = dicecup_legal_boxes(ctx)
    if allowed is None or box in allowed:
        return None
    return _("the forced joker rule sends five alike to {boxes}").format(
        boxes=", ".join(ctx.variant.box(b).name for b in allowed)
    )


@hookimpl
def dicecup_event_names(variant: Variant) -> dict[str, str] | None:
    if variant.params("joker")["mode"] == "none":
        return None
    return {"joker_used": "Joker used"}


@hookimpl
def dicecup_turn_events(ctx: ScoreContext) -> dict[str, int] | None:
    """A joker is used when five alike, with every yahtzee box filled, go in another box under the rule."""
    params = ctx.variant.params("joker")
    if params["mode"] == "none" or ctx.box.row == params["box"]:
        return None
    if _joker_face(ctx.variant, ctx.card, ctx.roll, params) is None:
        return None
    return {"joker_used": 1}
