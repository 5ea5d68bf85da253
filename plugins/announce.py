"""Announced columns (Yamb's najava): a box there is filled only after announcing it.

A column with `order: announced` can take a box only when the player announced
that box right after the turn's first roll (the action `announce BOX`); once
announced, the turn must end by scoring that box (0 if missed). When only such
boxes are left, the player must announce before rolling again.

The rule keeps the announced box as its turn state, so saving, replaying and
the terminal game handle it with no code of their own.
"""

from __future__ import annotations

from collections.abc import Callable

from dicecup import RuleAction, StateUpdate, TurnContext, Variant, hookimpl
from dicecup.locales import N_, Phrase, _

RULE = "announced"


@hookimpl
def dicecup_register_rules(register: Callable[..., None]) -> None:
    register(
        RULE,
        {},
        "A box of this column is filled only when announced right after the turn's first roll.",
        kind="order",
        actions={
            "announce": "announce the box of an announced column this turn will score (right after the first roll)"
        },
    )


def _announced_boxes(variant: Variant, open_boxes: tuple[str, ...]) -> list[str]:
    cols = {c.id for c in variant.columns if c.order == RULE}
    return [b for b in open_boxes if variant.box(b).column in cols]


def _announced(ctx: TurnContext) -> str | None:
    got = ctx.turn_state.get(RULE)
    return got if isinstance(got, str) else None


@hookimpl
def dicecup_legal_boxes(ctx: TurnContext) -> list[str] | None:
    chosen = _announced(ctx)
    if chosen is not None:
        return [chosen] if chosen in ctx.open_boxes else []
    closed = set(_announced_boxes(ctx.variant, ctx.open_boxes))
    return [b for b in ctx.open_boxes if b not in closed]


@hookimpl
def dicecup_actions(ctx: TurnContext) -> list[RuleAction] | None:
    if ctx.roll is None or ctx.rolls_used != 1 or _announced(ctx) is not None:
        return None
    return [RuleAction(RULE, "announce", b) for b in _announced_boxes(ctx.variant, ctx.open_boxes)]


@hookimpl
def dicecup_apply_action(ctx: TurnContext, action: RuleAction) -> StateUpdate | None:
    if action.name != "announce":
        return None
    return StateUpdate(turn=action.arg)


@hookimpl
def dicecup_may_reroll(ctx: TurnContext) -> bool | None:
    """Only announced boxes left and none announced: announce first (a later roll could not)."""
    if _announced(ctx) is not None:
        return None
    left = _announced_boxes(ctx.variant, ctx.open_boxes)
    if left and len(left) == len(ctx.open_boxes):
        return False
    return None


@hookimpl
def dicecup_explain(ctx: TurnContext, box: str) -> str | None:
    chosen = _announced(ctx)
    if chosen is not None:
        if box == chosen:
            return None
        b = ctx.variant.box(chosen)
        return _("you announced {box} in the {column} column: this turn must score it").format(
            box=b.name, column=ctx.variant.column(b.column).name
        )
    if box in _announced_boxes(ctx.variant, ctx.open_boxes):
        b = ctx.variant.box(box)
        return _(
            "the {column} column takes a box only when announced right after the first roll (announce {row})"
        ).format(column=ctx.variant.column(b.column).name, row=b.row)
    return None


@hookimpl
def dicecup_turn_status(ctx: TurnContext) -> list[str] | None:
    chosen = _announced(ctx)
    if chosen is not None:
        box = ctx.variant.box(chosen)
        said = _("Announced: {box} ({column} column); this turn scores it")
        return [said.format(box=box.name, column=ctx.variant.column(box.column).name)]
    left = _announced_boxes(ctx.variant, ctx.open_boxes)
    if left and len(left) == len(ctx.open_boxes) and ctx.rolls_used == 1:
        said = _("Only announced boxes are left: announce one now (e.g. announce {row})")
        return [said.format(row=ctx.variant.box(left[0]).row)]
    return None


@hookimpl
def dicecup_solitaire_notes(variant: Variant) -> list[str]:
    return [Phrase(N_("announcements are moves of their own; the exact solver does not model them yet"))]
