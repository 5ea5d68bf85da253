"""Built-in patterns (what a box needs) and scorers (what it then scores).

A pattern returns the dice that form the combination, or None when the roll does
not meet it; a scorer turns those dice into points. Both register through the
same hooks a third-party plugin uses.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from dicecup import ParameterError, PatternContext, PatternFn, Roll, ScorerFn, hookimpl


def _positive(name: str, value: object, key: str | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ParameterError(key or name, f"{name} must be a whole number >= 1, got {value!r}")
    return value


def _face(ctx: PatternContext, value: object, name: str = "face", key: str | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= ctx.faces:
        raise ParameterError(key or name, f"{name} must be a face from 1 to {ctx.faces}, got {value!r}")
    return value


# ----------------------------------------------------------------------------- patterns


def always(ctx: PatternContext) -> PatternFn:
    """Met by every roll; the combination is all the dice."""
    return lambda roll: roll.dice


def face(ctx: PatternContext, face: int) -> PatternFn:
    """Met by every roll; the combination is the dice showing `face` (maybe none)."""
    f = _face(ctx, face)
    return lambda roll: (f,) * roll.counts[f]


def of_a_kind(ctx: PatternContext, n: int) -> PatternFn:
    """At least `n` equal dice; the combination is `n` of the highest such face."""
    n = _positive("n", n)
    if n > ctx.dice:
        raise ParameterError("n", f"n={n} needs more dice than the variant's {ctx.dice}")

    def match(roll: Roll) -> tuple[int, ...] | None:
        counts = roll.counts
        for f in range(roll.faces, 0, -1):
            if counts[f] >= n:
                return (f,) * n
        return None

    return match


def pairs(ctx: PatternContext, count: int = 1) -> PatternFn:
    """`count` different faces with at least two dice each; the highest such pairs."""
    count = _positive("count", count)
    if 2 * count > ctx.dice:
        raise ParameterError("count", f"{count} pairs need {2 * count} dice; the variant has {ctx.dice}")

    size = 2 * count

    def match(roll: Roll) -> tuple[int, ...] | None:
        counts = roll.counts
        found: tuple[int, ...] = ()
        for f in range(roll.faces, 0, -1):  # the highest faces first, up to `count` of them
            if counts[f] >= 2:
                found = (f, f) + found  # (ascending: each lower pair goes in front)
                if len(found) == size:
                    return found
        return None

    return match


def groups(ctx: PatternContext, sizes: Sequence[int]) -> PatternFn:
    """Different faces with at least the given numbers of dice, e.g. [3, 2] for a full house.

    Five alike do not make a full house: each group needs its own face. When
    several choices fit, the one with the highest sum is the combination.
    """
    if not isinstance(sizes, (list, tuple)) or not sizes:
        raise ParameterError("sizes", f"sizes must be a list of group sizes like [3, 2], got {sizes!r}")
    sizes = sorted((_positive("each size", s, "sizes") for s in sizes), reverse=True)
    if sum(sizes) > ctx.dice:
        raise ParameterError("sizes", f"groups {sizes} need {sum(sizes)} dice; the variant has {ctx.dice}")

    largest, least = sizes[0], sizes[-1]

    def match(roll: Roll) -> tuple[int, ...] | None:
        # a face per group (the first group the largest), the faces tried highest first at each group: the first
        # choice with the highest sum wins, as in a depth-first search that keeps a strictly better one
        counts = roll.counts
        if max(counts) < largest:  # (most rolls: no face for the largest group)
            return None
        able = [f for f in range(roll.faces, 0, -1) if counts[f] >= least]  # (permutations keep this order)
        if len(able) < len(sizes):
            return None
        top, top_sum = None, -1
        for faces in itertools.permutations(able, len(sizes)):
            total = 0
            for f, size in zip(faces, sizes, strict=True):
                if counts[f] < size:
                    break
                total += f * size
            else:
                if total > top_sum:
                    top, top_sum = faces, total
        if top is None:
            return None
        return tuple(f for f, size in sorted(zip(top, sizes, strict=True)) for _ in range(size))

    return match


def straight(ctx: PatternContext, length: int | None = None, runs: Sequence[Sequence[int]] | None = None) -> PatternFn:
    """Contains one of the given runs (faces, any order); the combination is the highest-sum one.

    `length: 4` means every run of 4 consecutive faces; `runs` lists them
    explicitly (Generala's ace-high 3-4-5-6-1 is just another run).
    """
    if (length is None) == (runs is None):
        raise ValueError("give exactly one of `length` or `runs`")
    if length is not None:
        length = _positive("length", length)
        if length > min(ctx.dice, ctx.faces):
            raise ParameterError("length", f"a run of {length} does not fit {ctx.dice} dice with {ctx.faces} faces")
        sets = [tuple(range(s, s + length)) for s in range(1, ctx.faces - length + 2)]
    else:
        if not isinstance(runs, (list, tuple)) or not runs:
            raise ParameterError("runs", "runs must be a non-empty list of face lists")
        sets = []
        for r in runs:
            if not isinstance(r, (list, tuple)) or not r or len(set(r)) != len(r):
                raise ParameterError("runs", f"each run must list distinct faces, got {r!r}")
            if len(r) > ctx.dice:
                raise ParameterError("runs", f"run {list(r)} needs {len(r)} dice; the variant has {ctx.dice}")
            sets.append(tuple(_face(ctx, f, "a run's face", "runs") for f in r))
    sets.sort(key=lambda s: -sum(s))
    combos = [(s, tuple(sorted(s))) for s in sets]

    def match(roll: Roll) -> tuple[int, ...] | None:
        counts = roll.counts
        for s, combo in combos:
            for f in s:
                if not counts[f]:
                    break
            else:
                return combo
        return None

    return match


def all_in(ctx: PatternContext, faces: Sequence[int]) -> PatternFn:
    """Every die shows one of `faces` (e.g. [2, 4, 6] for all even); the combination is all dice."""
    if not isinstance(faces, (list, tuple)) or not faces:
        raise ParameterError("faces", "faces must be a non-empty list")
    allowed = frozenset(_face(ctx, f, "each face", "faces") for f in faces)

    def match(roll: Roll) -> tuple[int, ...] | None:
        return roll.dice if all(d in allowed for d in roll.dice) else None

    return match


def none_of(ctx: PatternContext, boxes: Sequence[str]) -> PatternFn:
    """Met when the roll meets none of the named boxes' patterns; the combination is all dice."""
    if not isinstance(boxes, (list, tuple)) or not boxes:
        raise ParameterError("boxes", "boxes must be a non-empty list of box ids")
    try:
        others = [ctx.pattern(b) for b in boxes]
    except ValueError as exc:  # no such box, or patterns that refer to each other in a loop
        raise ParameterError("boxes", str(exc)) from None

    def match(roll: Roll) -> tuple[int, ...] | None:
        return roll.dice if all(p(roll) is None for p in others) else None

    return match


def count_of(ctx: PatternContext, face: int, at_least: int) -> PatternFn:
    """At least `at_least` dice show `face`; the combination is every die showing it."""
    f = _face(ctx, face)
    n = _positive("at_least", at_least)
    if n > ctx.dice:
        raise ParameterError("at_least", f"at_least={n} needs more dice than the variant's {ctx.dice}")
    return lambda roll: (f,) * roll.counts[f] if roll.counts[f] >= n else None


def same(ctx: PatternContext, attribute: str, of: Any = "always") -> PatternFn:
    """The combination of pattern `of` (default: every die), when all its dice share `attribute`.

    Kismet's flush is `{kind: same, attribute: colour}`; a same-colour full house
    is `{kind: same, attribute: colour, of: {kind: groups, sizes: [3, 2]}}`.
    """
    if not isinstance(attribute, str):
        raise ParameterError("attribute", f"attribute must be the name of a dice attribute, got {attribute!r}")
    try:
        values = ctx.attribute(attribute)
    except ValueError as exc:
        raise ParameterError("attribute", str(exc)) from None
    inner = ctx.compile_pattern(of, "of")

    def match(roll: Roll) -> tuple[int, ...] | None:
        comb = inner(roll)
        if comb is None or not comb or len({values[d] for d in comb}) != 1:
            return None
        return comb

    return match


PATTERNS = {
    "always": always,
    "face": face,
    "count_of": count_of,
    "of_a_kind": of_a_kind,
    "pairs": pairs,
    "groups": groups,
    "straight": straight,
    "all_in": all_in,
    "none_of": none_of,
    "same": same,
}


def _faces_text(values: Any) -> str:
    return "".join(str(v) for v in values) if all(int(v) < 10 for v in values) else ",".join(map(str, values))


PATTERN_TEXTS = {
    "always": lambda p: "any roll",
    "face": lambda p: f"any roll (counts the {p['face']}s)",
    "count_of": lambda p: f"at least {p['at_least']} dice showing {p['face']}",
    "of_a_kind": lambda p: f"at least {p['n']} alike",
    "pairs": lambda p: "a pair" if p.get("count", 1) == 1 else f"{p['count']} pairs of different faces",
    "groups": lambda p: " + ".join(str(s) for s in p["sizes"]) + " alike, different faces",
    "straight": lambda p: (
        f"a run of {p['length']}"
        if p.get("length") is not None
        else "one of " + " / ".join(_faces_text(r) for r in p["runs"])
    ),
    "all_in": lambda p: "every die one of " + _faces_text(p["faces"]),
    "none_of": lambda p: "none of: " + ", ".join(p["boxes"]),
    "same": lambda p: (
        ("every die" if p.get("of", "always") == "always" else _nested_text(p["of"])) + f", all one {p['attribute']}"
    ),
}


def _nested_text(spec: Any) -> str:
    if isinstance(spec, str):
        kind, params = spec, {}
    else:
        kind, params = spec.get("kind"), {k: v for k, v in spec.items() if k != "kind"}
    text = PATTERN_TEXTS.get(kind)
    return text(params) if text else str(kind)


# ----------------------------------------------------------------------------- scorers


def sum_(ctx: PatternContext) -> ScorerFn:
    """The sum of the combination's dice."""
    return lambda comb, roll: sum(comb)


def total(ctx: PatternContext) -> ScorerFn:
    """The sum of all the dice, not only the combination's."""
    return lambda comb, roll: roll.total


def fixed(ctx: PatternContext, points: int) -> ScorerFn:
    """A fixed number of points."""
    if isinstance(points, bool) or not isinstance(points, int):
        raise ParameterError("points", f"points must be a whole number, got {points!r}")
    return lambda comb, roll: points


def relative(ctx: PatternContext, face: int, par: int = 3) -> ScorerFn:
    """(count - par) x face: the Russian upper stage, negative below par."""
    f = _face(ctx, face)
    if isinstance(par, bool) or not isinstance(par, int) or par < 0:
        raise ParameterError("par", f"par must be a whole number >= 0, got {par!r}")
    return lambda comb, roll: (roll.counts[f] - par) * f


def best_of(ctx: PatternContext, of: Sequence[Any]) -> ScorerFn:
    """The best score among several (pattern, scorer) choices: a whole game of one box is YAML.

    Each item of `of` is `{pattern: ..., score: ...}`; a choice whose pattern the
    roll does not meet counts 0.
    """
    if not isinstance(of, (list, tuple)) or not of:
        raise ParameterError("of", "of must be a non-empty list of {pattern: ..., score: ...} choices")
    choices = []
    for i, item in enumerate(of):
        if (
            not isinstance(item, Mapping)
            or set(item) - {"pattern", "score"}
            or "pattern" not in item
            or "score" not in item
        ):
            raise ParameterError("of", f"choice {i + 1} must be a mapping with `pattern` and `score`, got {item!r}")
        choices.append(
            (
                ctx.compile_pattern(item["pattern"], "of", i, "pattern"),
                ctx.compile_scorer(item["score"], "of", i, "score"),
            )
        )

    def score(comb: tuple[int, ...], roll: Roll) -> int:
        best = 0
        for pattern, scorer in choices:
            got = pattern(roll)
            if got is not None:
                best = max(best, int(scorer(got, roll)))
        return best

    return score


def lookup(ctx: PatternContext, points: Mapping[Any, Any], default: int = 0) -> ScorerFn:
    """Points by the combination's dice (written like `12345`, or `1,2,3` above nine faces); `default` else.

    Yamb's straight: `{kind: lookup, points: {12345: 35, 23456: 45}}`.
    """
    if not isinstance(points, Mapping) or not points:
        raise ParameterError("points", "points must map combinations (e.g. 12345) to points")
    table: dict[tuple[int, ...], int] = {}
    for key, value in points.items():
        text = str(key)
        parts = text.split(",") if "," in text else list(text)
        if not all(p.strip().isdigit() for p in parts):
            raise ParameterError("points", f"{key!r} is not a combination of dice like 12345")
        dice = tuple(sorted(int(p) for p in parts))
        if any(not 1 <= d <= ctx.faces for d in dice) or len(dice) > ctx.dice:
            raise ParameterError(
                "points", f"{key!r} is not a combination of {ctx.dice} dice with faces 1 to {ctx.faces}"
            )
        if isinstance(value, bool) or not isinstance(value, int):
            raise ParameterError("points", f"{key}: points must be a whole number, got {value!r}")
        table[dice] = value
    if isinstance(default, bool) or not isinstance(default, int):
        raise ParameterError("default", f"default must be a whole number, got {default!r}")
    return lambda comb, roll: table.get(tuple(sorted(comb)), default)


SCORERS = {"sum": sum_, "total": total, "fixed": fixed, "relative": relative, "best_of": best_of, "lookup": lookup}

SCORER_TEXTS = {
    "sum": lambda p: "sum of those dice",
    "total": lambda p: "sum of all dice",
    "fixed": lambda p: str(p["points"]),
    "relative": lambda p: f"(count of {p['face']}s - {p.get('par', 3)}) x {p['face']}",
    "best_of": lambda p: f"the best of {len(p['of'])} combinations",
    "lookup": lambda p: (
        ", ".join(f"{k}: {v}" for k, v in p["points"].items()) + (f", else {p['default']}" if p.get("default") else "")
    ),
}


@hookimpl
def dicecup_register_patterns(register: Callable[..., None]) -> None:
    for name, factory in PATTERNS.items():
        register(name, factory, text=PATTERN_TEXTS[name])


@hookimpl
def dicecup_register_scorers(register: Callable[..., None]) -> None:
    for name, factory in SCORERS.items():
        register(name, factory, text=SCORER_TEXTS[name])
