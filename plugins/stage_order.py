"""Stages: every box of a stage must be filled before a box of a later stage opens."""

from __future__ import annotations

from collections.abc import Callable

from dicecup import Card, Progress, TurnContext, Variant, hookimpl
from dicecup.locales import _


@hookimpl
def dicecup_register_rules(register: Callable[..., None]) -> None:
    register("stage_order", {}, "Boxes open stage by stage (each box's `stage`, lowest first).")


def _open_stage(variant: Variant, card: Card) -> int | None:
    """The lowest stage with an open box (None: the card is full), reading the card no further than that:
    the solver learns the rule from what it reads, so a rule that reads less is asked fewer times."""
    for stage in sorted({b.stage for b in variant.boxes}):
        if any(b.id not in card.scores for b in variant.boxes if b.stage == stage):
            return stage
    return None


@hookimpl
def dicecup_legal_boxes(ctx: TurnContext) -> list[str] | None:
    first = _open_stage(ctx.variant, ctx.card)
    if first is None:
        return None
    return [b.id for b in ctx.variant.boxes if b.stage == first]  # the engine keeps the open ones


@hookimpl
def dicecup_explain(ctx: TurnContext, box: str) -> str | None:
    first = _open_stage(ctx.variant, ctx.card)
    if first is None or box in ctx.card.scores:
        return None
    stage = ctx.variant.box(box).stage
    if stage <= first:
        return None
    return _("{box} is a stage-{stage} box: fill every stage-{first} box first").format(
        box=ctx.variant.box(box).name, stage=stage, first=first
    )


@hookimpl
def dicecup_progress(variant: Variant, card: Card) -> list[Progress] | None:
    stage = _open_stage(variant, card)
    if stage is None:
        return None
    in_stage = [b for b in variant.boxes if b.stage == stage]
    filled = sum(1 for b in in_stage if b.id in card.scores)
    later = any(b.stage > stage for b in variant.boxes)
    line = _("Stage {stage}: {filled}/{total} boxes filled").format(stage=stage, filled=filled, total=len(in_stage))
    if later:
        line += _("; stage {next} opens after it").format(next=stage + 1)
    return [Progress("stage_order", line=line)]
