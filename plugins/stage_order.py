"""Stages: every box of a stage must be filled before a box of a later stage opens."""

from __future__ import annotations

from collections.abc import Callable

from dicecup import Card, Progress, TurnContext, Variant, hookimpl


@hookimpl
def dicecup_register_rules(register: Callable[..., None]) -> None:
    register("stage_order", {}, "Boxes open stage by stage (each box's `stage`, lowest first).")


def _open_stage(variant: Variant, open_boxes: tuple[str, ...]) -> int:
    return min(variant.box(b).stage for b in open_boxes)


@hookimpl
def dicecup_legal_boxes(ctx: TurnContext) -> list[str] | None:
    if not ctx.open_boxes:
        return None
    first = _open_stage(ctx.variant, ctx.open_boxes)
    return [b for b in ctx.open_boxes if ctx.variant.box(b).stage == first]


@hookimpl
def dicecup_explain(ctx: TurnContext, box: str) -> str | None:
    if box not in ctx.open_boxes:
        return None
    first = _open_stage(ctx.variant, ctx.open_boxes)
    stage = ctx.variant.box(box).stage
    if stage <= first:
        return None
    return f"{box} is a stage-{stage} box: fill every stage-{first} box first"


@hookimpl
def dicecup_progress(variant: Variant, card: Card) -> list[Progress] | None:
    open_boxes = variant.open_boxes(card)
    if not open_boxes:
        return None
    stage = _open_stage(variant, open_boxes)
    in_stage = [b for b in variant.boxes if b.stage == stage]
    filled = sum(1 for b in in_stage if b.id in card.scores)
    later = any(b.stage > stage for b in variant.boxes)
    line = f"Stage {stage}: {filled}/{len(in_stage)} boxes filled" + (
        f"; stage {stage + 1} opens after it" if later else ""
    )
    return [Progress("stage_order", line=line)]
