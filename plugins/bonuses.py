"""Declared bonuses, as a third party would write them against the public hooks.

* `threshold`: points once a group of boxes (a section, or listed boxes or rows)
  totals at least `at_least`; with `tiers`, the highest tier reached applies
  (Kismet's 35/55/75, Balut's score bands).
* `event`: points each time a roll meets a box's pattern while boxes hold given
  scores (the Yahtzee bonus). Each scoring whose roll meets that pattern, in any
  box, is also reported as the event `<pattern_of>_rolled` (`yahtzee_rolled`).
* `nonzero`: points when every listed box holds a non-zero score, or per such box
  with `each: true` (Balut).
* `spread`: (high - low) x times, once the three boxes are filled (Yamb's middle value).

Box references are box ids or row ids (a row means its box in every column).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from dicecup import (
    REQUIRED,
    Award,
    Bonus,
    BoxFlag,
    BoxTotal,
    Card,
    ParameterError,
    Progress,
    ScoreContext,
    TooLarge,
    Variant,
    hookimpl,
)
from dicecup.locales import _, ngettext

# ----------------------------------------------------------------------------- checks


def _whole(key: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ParameterError(key, f"{key} must be a whole number, got {value!r}")
    return value


def _refs(variant: Variant, key: str, value: Any) -> tuple[str, ...]:
    """The boxes a list of box or row ids names (ParameterError for anything else)."""
    if not isinstance(value, (list, tuple)) or not value:
        raise ParameterError(key, f"{key} must be a non-empty list of box or row ids, got {value!r}")
    out: list[str] = []
    for ref in value:
        if not variant.has_ref(ref):
            raise ParameterError(key, f"no box or row {ref!r}; rows are {', '.join(variant.rows)}")
        out.extend(b for b in variant.boxes_of(ref) if b not in out)
    return tuple(out)


def _group(variant: Variant, params: Mapping[str, Any]) -> tuple[str, ...]:
    if params.get("boxes") is not None:
        return _refs(variant, "boxes", params["boxes"])
    return tuple(b.id for b in variant.boxes if b.section == params["section"])


def _tiers(params: Mapping[str, Any]) -> tuple[tuple[int, int], ...]:
    """(at_least, points) tiers, lowest first: `tiers`, or the single `at_least`/`points` pair."""
    if params.get("tiers") is None:
        return ((params["at_least"], params["points"]),)
    return tuple(sorted((int(a), int(p)) for a, p in params["tiers"]))


def _check_threshold(variant: Variant, params: Mapping[str, Any]) -> None:
    single = params.get("at_least") is not None or params.get("points") is not None
    if (params.get("tiers") is None) != single:
        raise ValueError(
            "a threshold bonus gives either `at_least` and `points`, or `tiers: [[at_least, points], ...]`"
        )
    if single:
        _whole("at_least", params["at_least"])
        _whole("points", params["points"])
    else:
        tiers = params["tiers"]
        if not isinstance(tiers, (list, tuple)) or not tiers:
            raise ParameterError("tiers", "tiers must be a non-empty list of [at_least, points] pairs")
        seen = set()
        for t in tiers:
            if not isinstance(t, (list, tuple)) or len(t) != 2:
                raise ParameterError("tiers", f"each tier is [at_least, points], got {t!r}")
            _whole("tiers", t[0])
            _whole("tiers", t[1])
            if t[0] in seen:
                raise ParameterError("tiers", f"two tiers start at {t[0]}")
            seen.add(t[0])
    if (params.get("boxes") is None) == (params.get("section") is None):
        raise ValueError("a threshold bonus names either `boxes` (box or row ids) or `section`")
    if params.get("section") is not None:
        if not isinstance(params["section"], str):
            raise ParameterError("section", f"section must be a section name, got {params['section']!r}")
        if not _group(variant, params):
            sections = sorted({b.section for b in variant.boxes})
            raise ParameterError(
                "section", f"section {params['section']!r} has no boxes; sections are {', '.join(sections)}"
            )
    else:
        _refs(variant, "boxes", params["boxes"])


def _check_event(variant: Variant, params: Mapping[str, Any]) -> None:
    _whole("points", params["points"])
    if not variant.has_ref(params["pattern_of"]):
        raise ParameterError("pattern_of", f"no box or row {params['pattern_of']!r}")
    holds = params["box_holds"]
    if not isinstance(holds, Mapping):
        raise ParameterError("box_holds", f"box_holds must map boxes to scores, e.g. {{yahtzee: 50}}, got {holds!r}")
    for b, v in holds.items():
        if not variant.has_ref(b):
            raise ParameterError("box_holds", f"no box or row {b!r}")
        if isinstance(v, bool) or not isinstance(v, int):
            raise ParameterError("box_holds", f"{b} must map to a score, got {v!r}")


def _check_nonzero(variant: Variant, params: Mapping[str, Any]) -> None:
    _whole("points", params["points"])
    _refs(variant, "boxes", params["boxes"])


def _check_spread(variant: Variant, params: Mapping[str, Any]) -> None:
    for key in ("high", "low", "times"):
        ref = params[key]
        if not variant.has_ref(ref) or len(variant.boxes_of(ref)) != 1:
            raise ParameterError(key, f"{key} must name one box, got {ref!r}")


@hookimpl
def dicecup_register_rules(register: Callable[..., None]) -> None:
    register(
        "threshold",
        {"boxes": None, "section": None, "at_least": None, "points": None, "tiers": None},
        "Award `points` once the boxes (or the section) total at least `at_least`; with "
        "`tiers: [[at_least, points], ...]` the highest tier reached applies.",
        kind="bonus",
        check=_check_threshold,
    )
    register(
        "event",
        {"pattern_of": REQUIRED, "box_holds": REQUIRED, "points": REQUIRED},
        "Award `points` each time a roll meets box `pattern_of`'s pattern while every box in "
        "`box_holds` holds the given score (a row means every column's box).",
        kind="bonus",
        check=_check_event,
    )
    register(
        "nonzero",
        {"boxes": REQUIRED, "points": REQUIRED, "each": False},
        "Award `points` once every box listed holds a non-zero score (with `each: true`, per such box).",
        kind="bonus",
        check=_check_nonzero,
    )
    register(
        "spread",
        {"high": REQUIRED, "low": REQUIRED, "times": REQUIRED},
        "Award (high - low) x times once the three boxes are filled (may be zero or negative).",
        kind="bonus",
        check=_check_spread,
    )


# ----------------------------------------------------------------------------- threshold


def _lowest(variant: Variant, box_id: str) -> int | None:
    """The lowest declared score a box can get (0 if it can be scratched); None when rolls are too many to list."""
    try:
        return _lowest_cached(variant, box_id)
    except TooLarge:
        return None


T = TypeVar("T")


def _per_rules(fn: Callable[[Variant, str], T]) -> Callable[[Variant, str], T]:
    """`fn(variant, key)` memoised on the variant's fingerprint (its compiled rules and plugins) and the key.
    An lru_cache on the Variant itself hashes it and, for an equal variant compiled again (another engine:
    every test, every embedding that reloads), compares every box and spec at each look-up: most of the
    state search's time on a small card. What `fn` raises is not memoised."""
    memo: dict[tuple[str, str], T] = {}

    @functools.wraps(fn)
    def get(variant: Variant, key: str) -> T:
        at = (variant.fingerprint, key)
        if at not in memo:
            if len(memo) >= 4096:
                memo.clear()
            memo[at] = fn(variant, key)
        return memo[at]

    return get


@_per_rules
def _lowest_cached(variant: Variant, box_id: str) -> int:
    box = variant.box(box_id)
    return min(0, min(variant.declared_score(box, r)[1] for r in variant.all_rolls()))


def _bonus_tiers(variant: Variant, bonus: Bonus) -> tuple[tuple[int, int], ...]:
    """A declared threshold bonus's tiers, worked out once per variant."""
    return _bonus_facts(variant, bonus.id)[1]


@_per_rules
def _bonus_facts(variant: Variant, bonus_id: str) -> tuple[tuple[str, ...], tuple[tuple[int, int], ...]]:
    """A declared bonus's group of boxes and its tiers, worked out once per variant (end bonuses see every card)."""
    bonus = next(b for b in variant.bonuses if b.id == bonus_id)
    return _group(variant, bonus.params), _tiers(bonus.params)


def _threshold_state(variant: Variant, card: Card, bonus: Any) -> tuple[int, int | None, tuple[str, ...]]:
    """(total so far, index of the highest tier certain now or None, the group's boxes).

    A tier is certain when the open boxes can no longer bring the total below it.
    """
    ids, tiers = _bonus_facts(variant, bonus.id)  # (one cache look-up: end bonuses see every card)
    get = card.scores.get  # (one look-up per box, its value or None where open: end bonuses see every card)
    got, lows, unknown = 0, 0, False
    for b in ids:
        value = get(b)
        if value is None:
            low = _lowest(variant, b)
            if low is None:
                unknown = True
            else:
                lows += low
        else:
            got += value
    reached = None
    if not unknown:  # (a full group is never unknown: its floor is its total)
        level = got + lows
        for i, (at, _points) in enumerate(tiers):
            if level >= at:
                reached = i
    return got, reached, ids


@hookimpl
def dicecup_end_bonuses(variant: Variant, card: Card) -> list[Award]:
    out = []
    for bonus in variant.bonuses:
        if bonus.kind == "threshold":
            _got, reached, _ids = _threshold_state(variant, card, bonus)
            if reached is not None:
                out.append(Award(bonus.id, _bonus_tiers(variant, bonus)[reached][1], bonus.name))
        elif bonus.kind == "nonzero":
            ids = _refs(variant, "boxes", bonus.params["boxes"])
            hits = sum(1 for b in ids if card.scores.get(b, 0) != 0)
            if bonus.params["each"] and hits:
                out.append(Award(bonus.id, hits * bonus.params["points"], bonus.name))
            elif not bonus.params["each"] and hits == len(ids):
                out.append(Award(bonus.id, bonus.params["points"], bonus.name))
        elif bonus.kind == "spread":
            p = bonus.params
            boxes = [variant.boxes_of(p[k])[0] for k in ("high", "low", "times")]
            if all(b in card.scores for b in boxes):
                high, low, times = (card.scores[b] for b in boxes)
                out.append(Award(bonus.id, (high - low) * times, bonus.name))
    return out


@hookimpl
def dicecup_state_totals(variant: Variant) -> list[BoxTotal]:
    return [BoxTotal(b.id, _group(variant, b.params)) for b in variant.bonuses if b.kind == "threshold"]


@hookimpl
def dicecup_state_flags(variant: Variant) -> list[BoxFlag]:
    flags: list[BoxFlag] = []
    for bonus in variant.bonuses:
        if bonus.kind == "event":
            for ref, v in bonus.params["box_holds"].items():
                flags.extend(BoxFlag(b, v) for b in variant.boxes_of(ref))
    return flags


@hookimpl
def dicecup_progress(variant: Variant, card: Card) -> list[Progress] | None:
    out = []
    for bonus in variant.bonuses:
        if bonus.kind == "threshold":
            out.append(_threshold_progress(variant, card, bonus))
        elif bonus.kind == "event":
            count = sum(1 for a in card.awards if a.id == bonus.id)
            if count:
                earned = ngettext("{bonus}: earned {n} time", "{bonus}: earned {n} times", count)
                out.append(Progress(bonus.id, line=earned.format(bonus=bonus.name, n=count)))
        elif bonus.kind == "nonzero" and not bonus.params["each"]:
            ids = _refs(variant, "boxes", bonus.params["boxes"])
            hits = sum(1 for b in ids if card.scores.get(b, 0) != 0)
            if hits < len(ids):
                out.append(Progress(bonus.id, cell=f"{hits}/{len(ids)}"))
    return out


def _threshold_progress(variant: Variant, card: Card, bonus: Any) -> Progress:
    got, reached, ids = _threshold_state(variant, card, bonus)
    tiers = _tiers(bonus.params)
    left = [b for b in ids if b not in card.scores]
    nxt = next(((at, pts) for at, pts in tiers if reached is None or at > tiers[reached][0]), None)
    if not left:
        line = f"{bonus.name}: {got}" + (f", {tiers[reached][1]:+d}" if reached is not None else _(", missed"))
        return Progress(bonus.id, line=line)
    if nxt is None:
        return Progress(
            bonus.id,
            line=_("{bonus}: {got}, {points:+d} secured").format(bonus=bonus.name, got=got, points=tiers[-1][1]),
        )
    par = _par(variant, ids, nxt[0])
    extra = _(", {diff:+d} against three of each").format(diff=got - par(card)) if par else ""
    secured = _(", {points:+d} secured").format(points=tiers[reached][1]) if reached is not None else ""
    to_go = ngettext("{n} box to go", "{n} boxes to go", len(left)).format(n=len(left))
    line = _("{bonus}: {got}/{at} for {points:+d}").format(bonus=bonus.name, got=got, at=nxt[0], points=nxt[1])
    return Progress(bonus.id, cell=f"{got}/{nxt[0]}", line=f"{line}{secured}, {to_go}{extra}")


def _par(variant: Variant, ids: Sequence[str], need: int) -> Any:
    """For the classic upper bonus (face boxes, 63 = three of each): compare with 3 x face per filled box."""
    faces = {}
    for b in ids:
        box = variant.box(b)
        if box.pattern.kind != "face" or box.scorer.kind != "sum" or box.scorer.multiply != 1:
            return None
        faces[b] = box.pattern.params["face"]
    if sum(3 * f for f in faces.values()) != need:
        return None
    return lambda card: sum(3 * faces[b] for b in ids if b in card.scores)


# ----------------------------------------------------------------------------- event


@hookimpl
def dicecup_extra_points(ctx: ScoreContext) -> list[Award]:
    out = []
    variant, card = ctx.variant, ctx.card
    for bonus in variant.bonuses:
        if bonus.kind != "event":
            continue
        p = bonus.params
        if (
            variant.combination(
                variant.row(p["pattern_of"]) if p["pattern_of"] in variant.rows else variant.box(p["pattern_of"]),
                ctx.roll,
            )
            is None
        ):
            continue
        if all(card.scores.get(b) == v for ref, v in p["box_holds"].items() for b in variant.boxes_of(ref)):
            out.append(Award(bonus.id, p["points"], bonus.name))
    return out


def _event_patterns(variant: Variant) -> dict[str, Any]:
    """The box (or row) refs whose pattern an `event` bonus watches, each once, with the box holding it."""
    out: dict[str, Any] = {}
    for bonus in variant.bonuses:
        ref = bonus.params["pattern_of"] if bonus.kind == "event" else None
        if ref is not None and ref not in out:
            out[ref] = variant.row(ref) if ref in variant.rows else variant.box(ref)
    return out


@hookimpl
def dicecup_event_names(variant: Variant) -> dict[str, str]:
    return {f"{ref}_rolled": f"{box.name} rolled" for ref, box in _event_patterns(variant).items()}


@hookimpl
def dicecup_turn_events(ctx: ScoreContext) -> dict[str, int]:
    """`<pattern_of>_rolled`: the roll scored meets an event bonus's pattern (a Yahtzee), whichever box takes it."""
    return {
        f"{ref}_rolled": 1
        for ref, box in _event_patterns(ctx.variant).items()
        if ctx.variant.combination(box, ctx.roll) is not None
    }
