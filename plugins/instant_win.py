"""A roll that wins a multi-player game at once (Generala served). Solitaire ignores it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dicecup import ParameterError, REQUIRED, TurnContext, Variant, hookimpl


def _check(variant: Variant, params: Mapping[str, Any]) -> None:
    if params["pattern_of"] not in variant.box_ids:
        raise ParameterError("pattern_of", f"no box {params['pattern_of']!r}")


@hookimpl
def dicecup_register_rules(register):
    register(
        "instant_win",
        {"pattern_of": REQUIRED, "first_roll": True},
        "A roll meeting box `pattern_of`'s pattern (on the first roll, if `first_roll`) wins at once.",
        check=_check,
    )


@hookimpl
def dicecup_instant_win(ctx: TurnContext, players: int) -> bool | None:
    params = ctx.variant.rule("instant_win")
    if players < 2 or (params["first_roll"] and not ctx.first_roll):
        return None
    return True if ctx.variant.combination(ctx.variant.box(params["pattern_of"]), ctx.roll) is not None else None
