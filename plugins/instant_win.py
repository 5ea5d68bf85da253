"""A roll that wins a multi-player game at once (Generala served). Solitaire ignores it."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from dicecup import REQUIRED, Box, ParameterError, TurnContext, Variant, hookimpl
from dicecup.locales import N_, Phrase, _


def _check(variant: Variant, params: Mapping[str, Any]) -> None:
    if not variant.has_ref(params["pattern_of"]):
        raise ParameterError("pattern_of", f"no box or row {params['pattern_of']!r}")


@hookimpl
def dicecup_register_rules(register: Callable[..., None]) -> None:
    register(
        "instant_win",
        {"pattern_of": REQUIRED, "first_roll": True},
        "A roll meeting box `pattern_of`'s pattern (on the first roll, if `first_roll`) wins at once.",
        check=_check,
    )


def _box(variant: Variant, ref: str) -> Box:
    return variant.row(ref) if ref in variant.rows else variant.box(ref)


@hookimpl
def dicecup_instant_win(ctx: TurnContext, players: int) -> str | None:
    params = ctx.variant.params("instant_win")
    if players < 2 or ctx.roll is None or (params["first_roll"] and not ctx.first_roll):
        return None
    box = _box(ctx.variant, params["pattern_of"])
    if ctx.variant.combination(box, ctx.roll) is None:
        return None
    return (_("a {box} on the first roll") if params["first_roll"] else _("a {box}")).format(box=box.name)


@hookimpl
def dicecup_solitaire_notes(variant: Variant) -> list[str]:
    params = variant.params("instant_win")
    name = _box(variant, params["pattern_of"]).name
    if params["first_roll"]:
        return [Phrase(N_("solitaire play: an instant win ({name} served) is scored as an ordinary {name}"), name=name)]
    return [Phrase(N_("solitaire play: an instant win ({name}) is scored as an ordinary {name}"), name=name)]
