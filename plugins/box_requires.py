"""A box that scores only while other boxes hold given scores (Generala's double generala)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dicecup import ParameterError, REQUIRED, BoxFlag, ScoreContext, Variant, hookimpl


def _check(variant: Variant, params: Mapping[str, Any]) -> None:
    for box, holds in params["boxes"].items():
        if box not in variant.box_ids:
            raise ParameterError("boxes", f"no box {box!r}")
        if not isinstance(holds, Mapping) or not holds:
            raise ParameterError("boxes", f"{box} must map to {{box: score, ...}}, got {holds!r}")
        for other, value in holds.items():
            if other not in variant.box_ids:
                raise ParameterError("boxes", f"{box}: no box {other!r}")
            if isinstance(value, bool) or not isinstance(value, int):
                raise ParameterError("boxes", f"{box}: {other} must map to a score, got {value!r}")


@hookimpl
def dicecup_register_rules(register):
    register(
        "box_requires",
        {"boxes": REQUIRED},
        "`boxes: {box: {other: score}}`: the box scores 0 unless every other box holds that score.",
        check=_check,
    )


@hookimpl
def dicecup_adjust_score(ctx: ScoreContext, score: int) -> int | None:
    needs = ctx.variant.rule("box_requires")["boxes"].get(ctx.box.id)
    if needs and not all(ctx.card.scores.get(b) == v for b, v in needs.items()):
        return 0
    return None


@hookimpl
def dicecup_state_flags(variant: Variant):
    return [BoxFlag(b, v) for needs in variant.rule("box_requires")["boxes"].values() for b, v in needs.items()]
