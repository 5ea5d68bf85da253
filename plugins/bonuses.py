"""Declared bonuses: `threshold` (a group of boxes reaching a total) and `event` (a
repeated combination while a box holds a value, like the Yahtzee bonus)."""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from dicecup import ParameterError, REQUIRED, Award, BoxFlag, Card, ScoreContext, Variant, hookimpl


def _threshold_boxes(variant: Variant, params: Mapping[str, Any]) -> tuple[str, ...]:
    if params.get("boxes"):
        return tuple(params["boxes"])
    return tuple(b.id for b in variant.boxes if b.section == params["section"])


def _check_whole(params: Mapping[str, Any], *keys: str) -> None:
    """Required numbers have no default to type-check against, so check them here."""
    for key in keys:
        value = params[key]
        if isinstance(value, bool) or not isinstance(value, int):
            raise ParameterError(key, f"{key} must be a whole number, got {value!r}")


def _check_threshold(variant: Variant, params: Mapping[str, Any]) -> None:
    _check_whole(params, "at_least", "points")
    if (params.get("boxes") is None) == (params.get("section") is None):
        raise ValueError("a threshold bonus names either `boxes` (a list of box ids) or `section`")
    if params.get("boxes") is not None:
        for b in params["boxes"]:
            if b not in variant.box_ids:
                raise ParameterError("boxes", f"no box {b!r}; boxes are {', '.join(variant.box_ids)}")
    elif not _threshold_boxes(variant, params):
        sections = sorted({b.section for b in variant.boxes})
        raise ParameterError("section", f"section {params['section']!r} has no boxes; sections are {', '.join(sections)}")


def _check_event(variant: Variant, params: Mapping[str, Any]) -> None:
    _check_whole(params, "points")
    if params["pattern_of"] not in variant.box_ids:
        raise ParameterError("pattern_of", f"no box {params['pattern_of']!r}")
    for b, v in params["box_holds"].items():
        if b not in variant.box_ids:
            raise ParameterError("box_holds", f"no box {b!r}")
        if isinstance(v, bool) or not isinstance(v, int):
            raise ParameterError("box_holds", f"{b} must map to a score, got {v!r}")


@hookimpl
def dicecup_register_rules(register):
    register(
        "threshold",
        {"boxes": None, "section": None, "at_least": REQUIRED, "points": REQUIRED},
        "Award `points` once the boxes (or the section) total at least `at_least`.",
        kind="bonus",
        check=_check_threshold,
    )
    register(
        "event",
        {"pattern_of": REQUIRED, "box_holds": REQUIRED, "points": REQUIRED},
        "Award `points` each time a roll meets box `pattern_of`'s pattern while every box in "
        "`box_holds` holds the given score.",
        kind="bonus",
        check=_check_event,
    )


@lru_cache(maxsize=4096)
def _lowest(variant: Variant, box_id: str) -> int:
    """The lowest declared score a box can get (0 if it can be scratched)."""
    box = variant.box(box_id)
    return min(0, min(variant.declared_score(box, r)[1] for r in variant.all_rolls()))


def threshold_progress(variant: Variant, card: Card, params: Mapping[str, Any]) -> tuple[int, bool]:
    """(total so far, whether the bonus is certain now): open boxes could still lower it."""
    ids = _threshold_boxes(variant, params)
    got = sum(card.scores.get(b, 0) for b in ids)
    floor = got + sum(_lowest(variant, b) for b in ids if b not in card.scores)
    return got, floor >= params["at_least"]


@hookimpl
def dicecup_end_bonuses(variant: Variant, card: Card):
    out = []
    for bonus in variant.bonuses:
        if bonus.kind == "threshold" and threshold_progress(variant, card, bonus.params)[1]:
            out.append(Award(bonus.id, bonus.params["points"], bonus.name))
    return out


@hookimpl
def dicecup_extra_points(ctx: ScoreContext):
    out = []
    variant, card = ctx.variant, ctx.card
    for bonus in variant.bonuses:
        if bonus.kind != "event":
            continue
        p = bonus.params
        if variant.combination(variant.box(p["pattern_of"]), ctx.roll) is None:
            continue
        if all(card.scores.get(b) == v for b, v in p["box_holds"].items()):
            out.append(Award(bonus.id, p["points"], bonus.name))
    return out


@hookimpl
def dicecup_state_flags(variant: Variant):
    return [
        BoxFlag(b, v)
        for bonus in variant.bonuses
        if bonus.kind == "event"
        for b, v in bonus.params["box_holds"].items()
    ]
