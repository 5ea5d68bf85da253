"""Pot settlement of a match (docs/games/russian.md, "Matches and settlement"): who pays whom, summing to zero."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from fractions import Fraction
from typing import Any

from dicecup import ParameterError, Variant, hookimpl
from dicecup.locales import N_, Phrase

TWO_PLAYER_MODES = ("difference", "fixed")


def _check(variant: Variant, params: Mapping[str, Any]) -> None:
    for key in ("stake", "fixed_stake"):
        value = params[key]
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ParameterError(key, f"{key} must be a number, got {value!r}")
    if params["two_players"] not in TWO_PLAYER_MODES:
        raise ParameterError(
            "two_players", f"two_players must be one of {', '.join(TWO_PLAYER_MODES)}, got {params['two_players']!r}"
        )
    for key in ("stake", "fixed_stake"):
        if params[key] < 0:
            raise ParameterError(key, f"{key} cannot be negative, got {params[key]}")


@hookimpl
def dicecup_register_rules(register: Callable[..., None]) -> None:
    register(
        "pot_settlement",
        {"stake": 1, "two_players": "difference", "fixed_stake": 1},
        "Two players: the lower total pays the difference x stake (or `fixed_stake`). "
        "Three or more: below the mean pays (mean - total) x stake into a pot shared "
        "by those above it in proportion to (total - mean).",
        check=_check,
    )


def settle(
    totals: Mapping[str, int], stake: int = 1, two_players: str = "difference", fixed_stake: int = 1
) -> dict[str, Fraction]:
    """Payments per player (positive: receives). Exact fractions; they sum to zero."""
    names = list(totals)
    if len(names) < 2:
        return {n: Fraction(0) for n in names}
    if len(names) == 2:
        a, b = names
        diff = totals[a] - totals[b]
        amount = Fraction(abs(diff) * stake) if two_players == "difference" else Fraction(fixed_stake if diff else 0)
        sign = (diff > 0) - (diff < 0)
        return {a: sign * amount, b: -sign * amount}
    par = Fraction(sum(totals.values()), len(names))
    pot = sum((par - t) * stake for t in totals.values() if t < par)
    above = sum(t - par for t in totals.values() if t > par)
    out = {}
    for n, t in totals.items():
        if t < par:
            out[n] = -(par - t) * stake
        elif t > par:
            out[n] = pot * (t - par) / above
        else:
            out[n] = Fraction(0)
    return out


@hookimpl
def dicecup_settle(variant: Variant, totals: Mapping[str, int]) -> dict[str, Fraction]:
    p = variant.params("pot_settlement")
    return settle(totals, p["stake"], p["two_players"], p["fixed_stake"])


@hookimpl
def dicecup_solitaire_notes(variant: Variant) -> list[str]:
    return [Phrase(N_("solitaire play: one game per simulated match, no settlement"))]
