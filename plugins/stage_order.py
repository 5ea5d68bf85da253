"""Stages: every box of a stage must be filled before a box of a later stage opens."""

from __future__ import annotations

from dicecup import TurnContext, hookimpl


@hookimpl
def dicecup_register_rules(register):
    register("stage_order", {}, "Boxes open stage by stage (each box's `stage`, lowest first).")


@hookimpl
def dicecup_legal_boxes(ctx: TurnContext):
    if not ctx.open_boxes:
        return None
    stage = {b.id: b.stage for b in ctx.variant.boxes}
    first = min(stage[b] for b in ctx.open_boxes)
    return [b for b in ctx.open_boxes if stage[b] == first]
