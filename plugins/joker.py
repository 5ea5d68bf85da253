"""The Yahtzee joker rule in three modes (RULES.md section 1).

free: any open box; once the yahtzee box is filled and the upper box of the
face is filled too, the fixed-score lower boxes pay their full points.
forced: once the yahtzee box is filled, the upper box of the face must be used
if open; else an open lower box (paying full points); else an open upper box.
none: no joker scoring.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dicecup import ParameterError, ScoreContext, TurnContext, Variant, hookimpl

MODES = ("free", "forced", "none")


def _check(variant: Variant, params: Mapping[str, Any]) -> None:
    if params["mode"] not in MODES:
        raise ParameterError("mode", f"mode must be one of {', '.join(MODES)}, got {params['mode']!r}")
    if params["box"] not in variant.box_ids:
        raise ParameterError("box", f"no box {params['box']!r}")
    for b in params["points"]:
        if b not in variant.box_ids:
            raise ParameterError("points", f"no box {b!r}")
    if not any(b.section == params["upper_section"] for b in variant.boxes):
        raise ParameterError("upper_section", f"no box is in section {params['upper_section']!r}")


@hookimpl
def dicecup_register_rules(register):
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


def _upper_box(variant: Variant, section: str, face: int) -> str | None:
    for b in variant.boxes:
        if b.section == section and b.pattern.kind == "face" and b.pattern.params.get("face") == face:
            return b.id
    return None


def _joker_face(variant: Variant, card, roll, params) -> int | None:
    """The face of a joker roll (five alike with the yahtzee box filled), else None."""
    if not card.is_filled(params["box"]):
        return None
    if variant.combination(variant.box(params["box"]), roll) is None:
        return None
    return roll.dice[0]


@hookimpl
def dicecup_adjust_score(ctx: ScoreContext, score: int) -> int | None:
    params = ctx.variant.rule("joker")
    if params["mode"] == "none" or ctx.box.id not in params["points"]:
        return None
    face = _joker_face(ctx.variant, ctx.card, ctx.roll, params)
    if face is None:
        return None
    upper = _upper_box(ctx.variant, params["upper_section"], face)
    if upper is not None and not ctx.card.is_filled(upper):
        return None  # free: the face's upper box is open, no joker; forced: not reachable
    return params["points"][ctx.box.id]


@hookimpl
def dicecup_legal_boxes(ctx: TurnContext):
    params = ctx.variant.rule("joker")
    if params["mode"] != "forced":
        return None
    face = _joker_face(ctx.variant, ctx.card, ctx.roll, params)
    if face is None:
        return None
    section = params["upper_section"]
    upper = _upper_box(ctx.variant, section, face)
    if upper is not None and upper in ctx.open_boxes:
        return [upper]
    sections = {b.id: b.section for b in ctx.variant.boxes}
    lower = [b for b in ctx.open_boxes if sections[b] != section]
    return lower or [b for b in ctx.open_boxes if sections[b] == section]
