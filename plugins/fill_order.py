"""Fill orders of card columns: `down` (rows top to bottom) and `up` (bottom to top).

A column declares its order (`columns: {down: {order: down}}`); a variant with
one column and `order: down` is filled strictly in card order (yatzy-forced).
"""

from __future__ import annotations

from collections.abc import Callable

from dicecup import Card, Column, Progress, TurnContext, Variant, hookimpl
from dicecup.locales import _

ORDERS = ("down", "up")


@hookimpl
def dicecup_register_rules(register: Callable[..., None]) -> None:
    register("down", {}, "The column's rows are filled from the top of the card down.", kind="order")
    register("up", {}, "The column's rows are filled from the bottom of the card up.", kind="order")


def _next_box(variant: Variant, column: Column, open_boxes: set[str]) -> str | None:
    """The one box of an ordered column that may be filled next (None when the column is full)."""
    ids = [b.id for b in variant.boxes if b.column == column.id]
    if column.order == "up":
        ids.reverse()
    return next((b for b in ids if b in open_boxes), None)


def _ordered(variant: Variant) -> list[Column]:
    return [c for c in variant.columns if c.order in ORDERS]


@hookimpl
def dicecup_legal_boxes(ctx: TurnContext) -> list[str] | None:
    ordered = _ordered(ctx.variant)
    if not ordered:
        return None
    open_boxes = set(ctx.open_boxes)
    blocked: set[str] = set()
    for col in ordered:
        nxt = _next_box(ctx.variant, col, open_boxes)
        blocked.update(b.id for b in ctx.variant.boxes if b.column == col.id and b.id != nxt)
    return [b for b in ctx.open_boxes if b not in blocked]


@hookimpl
def dicecup_explain(ctx: TurnContext, box: str) -> str | None:
    if box not in ctx.open_boxes:
        return None
    col = ctx.variant.column(ctx.variant.box(box).column)
    if col.order not in ORDERS:
        return None
    nxt = _next_box(ctx.variant, col, set(ctx.open_boxes))
    if nxt is None or nxt == box:
        return None
    said = (
        _("the {column} column is filled top to bottom: {box} comes next")
        if col.order == "down"
        else _("the {column} column is filled bottom to top: {box} comes next")
    )
    return said.format(column=col.name, box=ctx.variant.box(nxt).name)


@hookimpl
def dicecup_progress(variant: Variant, card: Card) -> list[Progress] | None:
    out = []
    open_boxes = set(variant.open_boxes(card))
    for col in _ordered(variant):
        nxt = _next_box(variant, col, open_boxes)
        if nxt is not None:
            out.append(
                Progress(
                    f"order:{col.id}",
                    line=_("{column} column ({order}): {box} next").format(
                        column=col.name, order=col.order, box=variant.box(nxt).name
                    ),
                )
            )
    return out
