"""A box that scores only while other boxes hold given scores (Generala's double generala)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from dicecup import REQUIRED, BoxFlag, ParameterError, ScoreContext, Variant, hookimpl


def _check(variant: Variant, params: Mapping[str, Any]) -> None:
    boxes = params["boxes"]
    if not isinstance(boxes, Mapping) or not boxes:
        raise ParameterError("boxes", f"boxes must map a box to {{other box: score, ...}}, got {boxes!r}")
    for box, holds in boxes.items():
        if not variant.has_ref(box):
            raise ParameterError("boxes", f"no box or row {box!r}")
        if not isinstance(holds, Mapping) or not holds:
            raise ParameterError("boxes", f"{box} must map to {{box: score, ...}}, got {holds!r}")
        for other, value in holds.items():
            if not variant.has_ref(other):
                raise ParameterError("boxes", f"{box}: no box or row {other!r}")
            if isinstance(value, bool) or not isinstance(value, int):
                raise ParameterError("boxes", f"{box}: {other} must map to a score, got {value!r}")


@hookimpl
def dicecup_register_rules(register: Callable[..., None]) -> None:
    register(
        "box_requires",
        {"boxes": REQUIRED},
        "`boxes: {box: {other: score}}`: the box scores 0 unless every other box holds that score.",
        check=_check,
    )


@hookimpl
def dicecup_adjust_score(ctx: ScoreContext, score: int) -> int | None:
    table = ctx.variant.params("box_requires")["boxes"]
    needs = table.get(ctx.box.id) or table.get(ctx.box.row)
    if needs and not all(ctx.card.scores.get(b) == v for ref, v in needs.items() for b in ctx.variant.boxes_of(ref)):
        return 0
    return None


@hookimpl
def dicecup_state_flags(variant: Variant) -> list[BoxFlag]:
    return [
        BoxFlag(b, v)
        for needs in variant.params("box_requires")["boxes"].values()
        for ref, v in needs.items()
        for b in variant.boxes_of(ref)
    ]
