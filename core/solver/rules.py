"""What the solver knows of a variant's rules, learned by asking the engine on traced cards.

Nothing here names a box, a variant or a rule: scores, awards, legality, end bonuses, state flags and the
box groups whose totals matter all come from the compiled variant's own methods, so every variant the
language and its plugins declare is solved the same way. `RuleModel` is the whole of it.
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Callable, Iterable
from functools import cached_property
from typing import Any

import numpy as np

from ..errors import ContractError, DicecupError
from ..language.dice import Roll
from ..language.model import Card, Variant
from ..language.tracing import VALUE, Reads, traced_card, traced_roll, tracing
from ..numeric.coding import ClassCoding
from ..numeric.dice import DiceGraph
from .errors import SolverError, StateSpaceTooLarge

__all__ = ["RuleModel", "Legality", "MAX_COMBOS", "SOLVER_MAX_ROLLS", "check_solvable"]

MAX_COMBOS = 4096  # card situations explored for one (box, roll) before giving up
MAX_TERMINAL = 2_000_000
SOLVER_MAX_ROLLS = 20_000  # the turn recursion visits every kept-dice multiset per state
MAX_CLASSES = 1 << 27
FEW_LOOKUPS = 64  # (classes x memos) looked up one by one rather than as arrays
DETECT_SYMMETRY = True  # count interchangeable boxes (off: enumerate every box, to compare against)
# hooks that may treat boxes apart in ways the model does not trace for every class in advance
UNTRACED_HOOKS = ("legal_boxes", "may_reroll", "actions", "apply_action")


def check_solvable(variant: Variant) -> None:
    """Refuse, before any work, a variant the solver cannot model or whose size rules it out (with the size)."""
    if variant.implements("actions"):
        raise SolverError(
            f"{variant.id}: its rules add actions of their own (announcements); the solver does not model them"
        )
    if variant.roll_count > SOLVER_MAX_ROLLS:
        raise StateSpaceTooLarge(
            variant.id,
            variant.roll_count,
            SOLVER_MAX_ROLLS,
            complete=True,
            what=f"{variant.dice} dice with {variant.faces} faces have {variant.roll_count:,} distinct rolls",
        )
    masks = 1 << len(variant.boxes)
    if masks > MAX_CLASSES:
        raise StateSpaceTooLarge(
            variant.id,
            masks,
            MAX_CLASSES,
            complete=False,
            what=f"{len(variant.boxes)} boxes make at least 2^{len(variant.boxes)} = {masks:,} card classes"
            + _counted_note(variant),
        )


def _counted_note(variant: Variant) -> str:
    """How many classes remain with interchangeable boxes counted (for a refusal), or '' if none are proven."""
    try:
        model = RuleModel(variant, checked=False)
        if not model.symmetric:
            return ""
        sizes = "+".join(str(len(g)) for g in model.symmetric)
        return (
            f" ({model.counted_classes:,} with its interchangeable boxes ({sizes}) counted; "
            "the index still spans every box bit)"
        )
    except DicecupError:  # the refusal stands without the note
        return ""


class Legality:
    """Where a class may score: the same open boxes for every roll (`bits`), or a table per roll."""

    __slots__ = ("first", "later", "table")

    def __init__(self, first: int, later: int, table: np.ndarray | None = None) -> None:
        self.first = first  # bitmask of boxes, when the roll does not matter
        self.later = later
        self.table = table  # (rolls, 2) int64 bitmasks [later, first] per roll, or None


class _Answers:
    """The legality answers asked so far, by id, in arrays grown in place (the search asks a few per layer and
    looks them up by id as arrays; entries from `n` on are unused): the boxes allowed as bits (`bits`), those
    bits where they hold for every roll else -1 (`flat`), whether the call read whether the roll is the first
    (`first`), and the rolls each answer holds for (`match`)."""

    __slots__ = ("bits", "first", "flat", "match", "n")

    def __init__(self) -> None:
        self.n = 0
        self.bits = np.zeros(16, dtype=np.int64)
        self.flat = np.zeros(16, dtype=np.int64)
        self.first = np.zeros(16, dtype=bool)
        self.match: list[np.ndarray] = []

    def add(self, bits: int, alone: bool, first: bool, match: np.ndarray) -> int:
        """Keep one more answer (`alone`: it holds for every roll); its id."""
        a = self.n
        if a == len(self.bits):
            self.bits, self.flat, self.first = (
                np.concatenate([x, np.zeros_like(x)]) for x in (self.bits, self.flat, self.first)
            )
        self.bits[a], self.flat[a], self.first[a] = bits, bits if alone else -1, first
        self.match.append(match)
        self.n = a + 1
        return a


class RuleModel(ClassCoding):
    """The compiled variant seen by the solver: score tables per context, legality, end bonuses.

    A *class* is a card abstracted to what the rules may depend on: which boxes are filled, plus a digit per
    flagged box saying which declared flag value it holds (0: none), packed into an int as
    `mask | flagcode << n_boxes`. A box's *category* on a card is 0 open, 1 filled with no flagged value,
    2 + i filled with the box's i-th flag value. Boxes proven interchangeable (`symmetric`) are counted, not
    enumerated: classes are canonical (`numeric.coding`) and only the first open box of such a group is
    offered, which leads to the same canonical class as any other."""

    def __init__(self, variant: Variant, checked: bool = True) -> None:
        if checked:  # (unchecked: only to prove symmetry for a refusal's message)
            check_solvable(variant)
        self.variant = variant
        super().__init__(variant)
        self.rolls: tuple[Roll, ...] = variant.all_rolls()
        self.graph = DiceGraph(variant.dice, variant.faces)
        self._other_values()
        self._groups()
        self._traced_rolls: list[Roll | None] = [None] * len(self.rolls)  # made when first asked (`_traced`)

    # ------------------------------------------------------------------ declarations

    def _other_values(self) -> None:
        """Per flagged box, a score outside its declared values (the 'filled, no flag value' category)."""
        self.ncat = [2 + len(self.flag_values.get(b, ())) for b in range(self.nb)]
        self.other_value = [0] * self.nb
        for b, vals in self.flag_values.items():
            other = 0
            while other in vals:
                other -= 1
            self.other_value[b] = other

    def _groups(self) -> None:
        """The box groups whose totals the end bonuses depend on, as the rules declare them."""
        groups: list[tuple[int, ...]] = []
        names: list[str] = []
        for total in self.variant.state_totals():
            missing = [b for b in total.boxes if b not in self.bidx]
            if missing:
                raise SolverError(
                    f"a rule declares a total over box {missing[0]!r}, which {self.variant.id} does not have"
                )
            groups.append(tuple(sorted(self.bidx[b] for b in total.boxes)))
            names.append(total.name)
        self.all_groups = tuple(groups)
        self.group_names = tuple(names)

    # ------------------------------------------------------------------ cards

    def _traced(self, r: int) -> Roll:
        """Roll r as a traced roll (made once, when first asked: the rules are asked about a few rolls)."""
        got = self._traced_rolls[r]
        if got is None:
            got = self._traced_rolls[r] = traced_roll(self.rolls[r])
        return got

    def cat_value(self, b: int, cat: int) -> int:
        return self.other_value[b] if cat == 1 else self.flag_values[b][cat - 2]

    def class_cats(self, code: int) -> list[int]:
        mask, flagcode = code & ((1 << self.nb) - 1), code >> self.nb
        cats = []
        for b in range(self.nb):
            if not mask >> b & 1:
                cats.append(0)
            elif b in self.flag_values:
                cats.append(1 + (flagcode // self.radix[b]) % (len(self.flag_values[b]) + 1))
            else:
                cats.append(1)
        return cats

    def _card(self, assign: dict[int, int], alt: bool = False, items: tuple | None = None) -> Card:
        """A traced card with these categories; `alt`: another value for 'filled, no flag value'. `items`:
        `assign`'s items sorted, where the caller has them."""
        key = (tuple(sorted(assign.items())) if items is None else items, alt)
        card = self._cards.get(key)
        if card is None:
            ids, flags, other = self.box_ids, self.flag_values, self.other_value
            # (a box without flag values has one filled category: its 'other' value, with `alt` or not)
            card = self._cards[key] = traced_card(
                {ids[b]: self._value(b, c, alt) if b in flags else other[b] for b, c in key[0] if c}
            )
        return card

    @cached_property
    def _cards(self) -> dict[tuple, Card]:
        """Traced cards by categories (a traced card is immutable; its reads go to whoever traces)."""
        return {}

    def _value(self, b: int, cat: int, alt: bool) -> int:
        if alt and cat == 1 and b in self.flag_values:
            return max(self.flag_values[b]) + 1
        return self.cat_value(b, cat)

    def _other_read(self, reads: Reads, assign: dict[int, int]) -> bool:
        """Whether a flagged box holding none of its flag values had its value read."""
        for name, kind in reads.boxes.items():
            b = self.bidx.get(name)
            if b is not None and kind & VALUE and assign.get(b) == 1 and b in self.flag_values:
                return True
        return False

    def _beyond_flags(self, what: str, reads: Reads, assign: dict[int, int]) -> str:
        names = [n for n, k in reads.boxes.items() if k & VALUE and assign.get(self.bidx.get(n, -1)) == 1]
        return (
            f"{what} depends on the value of box {names[0]!r} beyond the declared flag values "
            f"{list(self.flag_values[self.bidx[names[0]]])}; declare every value the rule compares with"
        )

    def _check_legal_reads(
        self, reads: Reads, assign: dict[int, int], card_alt: Callable[[], bool] | None = None
    ) -> None:
        """A legality probe may read which boxes are filled, and flagged values only (compared with them)."""
        if reads.awards or reads.values or reads.situation:
            self._check_reads(reads, assign, "a legality rule")
            if reads.values and self._other_read(reads, assign) and card_alt is not None and card_alt():
                raise SolverError(self._beyond_flags("a legality rule", reads, assign))

    def _check_reads(
        self, reads: Reads, assign: dict[int, int], what: str, allowed_values: frozenset[int] = frozenset()
    ) -> list[int]:
        """Boxes read (indices); refuses reads the solver's state cannot answer."""
        if reads.awards:
            raise SolverError(f"{what} reads the awards on the card, which the solver does not track")
        if reads.situation:
            fields = ", ".join(sorted(reads.situation))
            raise SolverError(
                f"{what} reads the game around the card ({fields}), which the solitaire solver does not model"
            )
        out = []
        for name, kind in reads.boxes.items():
            if name == "*":
                continue
            b = self.bidx.get(name)
            if b is None:
                continue
            if kind & VALUE and assign.get(b, 0) and b not in self.flag_values and b not in allowed_values:
                raise SolverError(
                    f"{what} reads the value of box {name!r}, which no rule declares as a state flag "
                    "(a rule that depends on a box's value must declare it with dicecup_state_flags)"
                )
            out.append(b)
        return out

    # ------------------------------------------------------------------ scores

    @cached_property
    def score_groups(self) -> list[tuple[tuple[int, ...], np.ndarray, np.ndarray, np.ndarray]]:
        """Every (box, roll, first) key grouped by the boxes its score depends on.

        Each entry: (boxes D, keys (n, 3) [box, roll, first], scores (n, combos),
        points (n, combos)) where combos enumerate the categories of D (mixed
        radix, D[0] fastest). A combo whose evaluation raised holds score
        -2**31 (and its error is kept in `score_errors`).

        The rules are asked on a traced roll: where no call of an exploration read the
        dice themselves, only declared patterns (the box's own among them), its answer
        holds for every roll those patterns treat alike, so a box is explored once per
        distinct declared result rather than once per roll. An exploration after a later roll in which
        no call read `first_roll` holds after the first roll too.
        """
        # per dep: each exploration's rows as (box << 1 | first), the rolls it holds for (an array), its results
        by_dep: dict[tuple[int, ...], tuple[list[int], list[np.ndarray], list[list[tuple[int, float]]]]] = {}
        self.score_errors: dict[tuple[int, int, int, tuple], Exception] = {}
        n = len(self.rolls)
        for b, box in enumerate(self.box_ids):
            again = np.zeros(n, dtype=bool)  # rolls whose later-roll answers read first_roll: asked again
            for f in (0, 1):
                pending = again if f else np.ones(n, dtype=bool)
                r = int(pending.argmax())  # the first pending roll (none: argmax is 0, not pending)
                while pending[r]:
                    dep, results, reads = self._explore(box, b, r, bool(f))
                    group = self._answer_rolls(reads, r)
                    held = group[pending[group]]
                    pending[held] = False
                    firsts = (f,) if f or reads.first_roll else (0, 1)
                    if not f and reads.first_roll:
                        again[held] = True
                    got = by_dep.get(dep)
                    if got is None:
                        got = by_dep[dep] = ([], [], [])
                    tags, helds, found = got
                    for g in firsts:
                        tags.append(b << 1 | g)
                        helds.append(held)
                        found.append(results)
                    for i, (s, _) in enumerate(results):
                        if s == ERR:
                            for rr in held.tolist():
                                for g in firsts:
                                    self.score_errors[(b, rr, g, dep + (i,))] = self._last_errors[i]
                    r = int(pending.argmax())
        out = []
        self._score_rows: list[tuple[tuple[int, ...], np.ndarray, np.ndarray]] = []
        for dep, (tags, helds, found) in by_dep.items():
            counts = np.fromiter(map(len, helds), dtype=np.intp, count=len(helds))
            tag = np.array(tags, dtype=np.intp)
            rows = np.repeat(np.arange(len(found)), counts)
            keys = np.empty((len(rows), 3), dtype=np.intp)
            keys[:, 0] = tag[rows] >> 1
            keys[:, 1] = np.concatenate(helds)
            keys[:, 2] = tag[rows] & 1
            shape = (len(found), len(found[0]))  # (explorations, combos)
            flat = list(itertools.chain.from_iterable(found))
            scores = np.fromiter((s for s, _ in flat), dtype=np.int64, count=len(flat)).reshape(shape)
            points = np.fromiter((p for _, p in flat), dtype=np.float64, count=len(flat)).reshape(shape)
            out.append((dep, keys, scores[rows], points[rows]))
            self._score_rows.append((dep, np.column_stack([tag >> 1, tag & 1]), scores))
        return out

    @property
    def score_rows(self) -> list[tuple[tuple[int, ...], np.ndarray, np.ndarray]]:
        """`score_groups` with the keys of each exploration taken together: per group, (boxes D, [box, first]
        per row (E, 2), scores (E, combos)). Each key of the group has its box, first flag and scores in a row,
        and each row in a key (an exploration answers for one roll at least): what depends only on those
        (every score a box can get, the slots a box reaches) is found from a few rows, not every key."""
        self.score_groups  # noqa: B018  (made with them)
        return self._score_rows

    def _score(self, card: Card, box: str, r: int, first: bool, reads: Reads) -> tuple[int, float] | Exception:
        """The engine's score (and award points) of `box` on a traced card and roll; its reads go into `reads`."""
        with tracing() as got:
            try:
                res = self.variant.score(card, box, self._traced(r), first)
                out: tuple[int, float] | Exception = (int(res.score), float(res.points))
            except ContractError:  # a value of the wrong kind: the plugin's bug whatever the situation
                raise
            except Exception as exc:  # only fatal if this situation can occur
                out = exc
        reads.roll |= got.roll
        reads.patterns |= got.patterns
        reads.first_roll |= got.first_roll
        self._last_reads = got
        return out

    def _explore(self, box: str, b: int, r: int, first: bool) -> tuple[tuple[int, ...], list[tuple[int, float]], Reads]:
        """The boxes the score of `box` with roll `r` depends on, its result for each of their categories,
        and what all those calls read of the roll (`Reads.roll`, `Reads.patterns`, `Reads.first_roll`)."""
        dep: list[int] = []
        evals: dict[tuple, tuple[int, float] | Exception] = {}
        seen = Reads()
        while True:
            grew = False
            for combo in itertools.product(*map(range, map(self.ncat.__getitem__, dep))):
                assign = {d: c for d, c in zip(dep, combo, strict=False) if c}
                key = tuple(sorted(assign.items()))
                if key in evals:
                    continue
                out = self._score(self._card(assign, items=key), box, r, first, seen)
                reads = self._last_reads
                if "*" in reads.boxes:
                    raise SolverError(
                        f"the score of box {box!r} depends on the whole card; the solver supports rules that read named boxes"
                    )
                read = (
                    self._check_reads(reads, assign, f"the score of box {box!r}")
                    if reads.boxes or reads.awards or reads.situation
                    else []  # read nothing of the card: nothing to check
                )
                if reads.values and self._other_read(reads, assign):
                    alt = self._score(self._card(assign, alt=True), box, r, first, seen)
                    if alt != out and not (isinstance(alt, Exception) and isinstance(out, Exception)):
                        raise SolverError(self._beyond_flags(f"the score of box {box!r}", reads, assign))
                evals[key] = out
                new = [d for d in read if d not in dep] if read else read
                if new:
                    dep.extend(sorted(new))
                    size = int(np.prod([self.ncat[d] for d in dep]))
                    if size > MAX_COMBOS:
                        raise SolverError(f"the score of box {box!r} depends on too many boxes ({len(dep)})")
                    grew = True
                    break
            if not grew:
                break
        results = []
        self._last_errors = {}
        if not dep:  # (the common case: the score reads no box)
            got = evals[()]
            if isinstance(got, Exception):
                self._last_errors[0] = got
                return (), [(ERR, 0.0)], seen
            return (), [got], seen
        order = sorted(dep)
        for i, combo in enumerate(itertools.product(*(range(self.ncat[d]) for d in order))):
            assign = {d: c for d, c in zip(order, combo, strict=False) if c}
            got = evals[tuple(sorted(assign.items()))]
            if isinstance(got, Exception):
                self._last_errors[i] = got
                results.append((ERR, 0.0))
            else:
                results.append(got)
        return tuple(order), results, seen

    @cached_property
    def context_boxes(self) -> tuple[int, ...]:
        """The boxes whose category any score depends on (a class's projection on them is its context)."""
        return tuple(sorted({d for dep, *_ in self.score_groups for d in dep}))

    def context_of(self, codes: np.ndarray) -> np.ndarray:
        """Context id of each class code (mixed radix of the context boxes' categories)."""
        codes = np.asarray(codes, dtype=np.int64)
        out = np.zeros(codes.shape, dtype=np.int64)
        mult = 1
        for b in self.context_boxes:
            out += self._cats_vec(codes, b) * mult
            mult *= self.ncat[b]
        return out

    def _cats_vec(self, codes: np.ndarray, b: int) -> np.ndarray:
        filled = (codes >> b) & 1
        if b not in self.flag_values:
            return filled
        digit = ((codes >> self.nb) // self.radix[b]) % (len(self.flag_values[b]) + 1)
        return filled * (1 + digit)

    def _ctx_cats(self, ctx: int) -> dict[int, int]:
        cats = {}
        for b in self.context_boxes:
            cats[b] = ctx % self.ncat[b]
            ctx //= self.ncat[b]
        return cats

    @cached_property
    def box_scores(self) -> list[np.ndarray]:
        """Every score each box can get (sorted), over all rolls and card situations."""
        # every (box, score) pair as one number (box << 40 | score + 2**39), sorted and made unique at once
        pairs = [np.zeros(0, dtype=np.int64)]
        for _, tags, scores in self.score_rows:
            ok = scores != ERR
            boxes = np.broadcast_to(tags[:, :1].astype(np.int64), scores.shape)[ok]
            pairs.append((boxes << 40) + scores[ok] + (1 << 39))
        found = np.unique(np.concatenate(pairs))
        box, score = found >> 40, (found & ((1 << 40) - 1)) - (1 << 39)
        cut = np.searchsorted(box, np.arange(self.nb + 1))
        return [score[cut[b] : cut[b + 1]].astype(np.int64) for b in range(self.nb)]

    def context_tables(self, ctx: int) -> tuple[np.ndarray, np.ndarray]:
        """(scores int64, points float64), each (boxes, rolls, 2) with axis 2 = [later, first]."""
        cached = self._ctx_cache.get(ctx)
        if cached is not None:
            return cached
        cats = self._ctx_cats(ctx)
        scores = np.zeros((self.nb, len(self.rolls), 2), dtype=np.int64)
        points = np.zeros((self.nb, len(self.rolls), 2), dtype=np.float64)
        for dep, keys, sc, pt in self.score_groups:
            combo = 0
            for d in dep:  # itertools.product order: the last box varies fastest
                combo = combo * self.ncat[d] + cats[d]
            scores[keys[:, 0], keys[:, 1], keys[:, 2]] = sc[:, combo]
            points[keys[:, 0], keys[:, 1], keys[:, 2]] = pt[:, combo]
        self._ctx_cache[ctx] = (scores, points)
        return scores, points

    @cached_property
    def _ctx_cache(self) -> dict:
        return {}

    def check_context(self, ctx: int, scores: np.ndarray, open_boxes: int) -> None:
        """Raise the engine's own error if a box open in this context failed to score."""
        bad = np.argwhere(scores == ERR)
        for b, r, f in bad:
            if open_boxes >> int(b) & 1:
                for (bb, rr, ff, _), exc in self.score_errors.items():
                    if (bb, rr, ff) == (b, r, f):
                        raise SolverError(
                            f"scoring box {self.box_ids[b]!r} with {self.rolls[r]} failed: {exc}"
                        ) from exc

    # ------------------------------------------------------------------ legality

    def legality(self, code: int) -> Legality:
        """Where class `code` may score each roll, after the first roll and after later ones (`legal_arrays`)."""
        later, first, index, tables = self.legal_arrays(np.array([code], dtype=np.int64))
        if index[0] < 0:
            return Legality(int(first[0]), int(later[0]))
        return Legality(0, 0, tables[int(index[0])])

    def legal_arrays(self, codes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Where classes `codes` may score: (later bits, first bits, row in the per-roll tables or -1,
        the per-roll tables (T, rolls, 2) [later, first]); the bits hold where the roll does not matter.

        The rules are asked what they allow (`Variant.rules_allow`), and each class's open
        boxes are taken from its code, so a rule's answer is reused for every class that
        agrees on what the rule read (for a card without legality rules: one call for all).
        One engine call answers for every roll that gives the same results to the
        declared patterns the rules asked about (through `Variant.combination` or
        `declared_score`); a rule that reads the roll itself is asked roll by roll.
        """
        codes = np.asarray(codes, dtype=np.int64).reshape(-1)
        later, first, index, tables = self._allowed_arrays(codes)
        if not self.symmetric:
            return later, first, index, tables
        return self.first_open(later), self.first_open(first), index, self.first_open(tables)

    def _allowed_arrays(self, codes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """`legal_arrays` before symmetric groups are cut to their first open box."""
        open_bits = ~codes & self._full
        n = len(self.rolls)
        asked = [self._allowed_rolls(codes, False)]
        index = np.full(len(codes), -1, dtype=np.int64)
        # where no answer read whether the roll is the first, the first roll's pass would ask the same (memoised)
        # questions and get the same answers: it is the same
        if asked[0][3]:
            asked.append(self._allowed_rolls(codes, True))
        elif not len(asked[0][1]):  # (and no class's bits depend on the roll)
            later = asked[0][0] & open_bits
            return later, later.copy(), index, self._no_tables
        else:
            asked.append(asked[0])
        later, first = (np.maximum(flat, 0) & open_bits for flat, *_ in asked)  # (-1: bits by roll, in the tables)
        dep = np.flatnonzero((asked[0][0] < 0) | (asked[1][0] < 0))
        if not len(dep):
            return later, first, index, self._no_tables
        tables = np.empty((len(dep), n, 2), dtype=np.int64)
        for f, (flat, varies, rows, _) in enumerate(asked):
            tables[:, :, f] = flat[dep, None]
            tables[np.searchsorted(dep, varies), :, f] = rows
        tables &= open_bits[dep, None, None]
        same = (tables == tables[:, :1, :]).all(axis=(1, 2))
        later[dep[same]], first[dep[same]] = tables[same, 0, 0], tables[same, 0, 1]
        varies = dep[~same]
        index[varies] = np.arange(len(varies))
        return later, first, index, tables[~same]

    def _allowed_rolls(self, codes: np.ndarray, first: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray, bool]:
        """What the legality rules allow classes `codes` (box bits, open or not): (per class the bits, or -1
        where they depend on the roll; those classes' positions; their bits per roll (classes, rolls);
        whether any answer used read whether the roll is the first).

        A class is asked about roll 0, then about the first roll its answers so far do not cover: an
        answer holds for every roll that gives the same results to the declared patterns the rules
        asked about (r alone if they read the dice), as `_same_answer` says."""
        ids = self._roll_ids(codes, first, 0)
        answers = self._answers
        read_first = bool(answers.first[ids].any())
        flat = answers.flat[ids]
        varies = np.flatnonzero(flat < 0)
        n = len(self.rolls)
        if not len(varies):  # every answer holds for every roll (no legality rule read the roll)
            return flat, varies, self._no_tables[:, :, 0], read_first
        rows = np.zeros((len(varies), n), dtype=np.int64)
        pending = np.ones((len(varies), n), dtype=bool)
        sub, ids = np.arange(len(varies)), ids[varies]
        while len(sub):
            bits = answers.bits
            read_first |= bool(answers.first[ids].any())
            uniq, inverse = np.unique(ids, return_inverse=True)
            match = np.stack([answers.match[a] for a in uniq.tolist()])[inverse.reshape(-1)] & pending[sub]
            rows[sub] = np.where(match, bits[ids][:, None], rows[sub])
            pending[sub] &= ~match
            sub = np.flatnonzero(pending.any(axis=1))
            at = pending[sub].argmax(axis=1)
            ids = np.empty(len(sub), dtype=np.int64)
            for r in np.unique(at).tolist():
                sel = np.flatnonzero(at == r)
                ids[sel] = self._roll_ids(codes[varies[sub[sel]]], first, r)
        same = (rows == rows[:, :1]).all(axis=1)
        flat[varies[same]] = rows[same, 0]
        return flat, varies[~same], rows[~same], read_first

    def _roll_ids(self, codes: np.ndarray, first: bool, r: int) -> np.ndarray:
        """Per class, the id of what the legality rules allow it for roll r (`_answers`): memoised where
        the class agrees with an earlier one on every fact (box and read kind) that call read, since the rules
        then follow the same path (a hook depends only on what it reads); the engine asked for the others."""
        ids = np.full(len(codes), -1, dtype=np.int64)
        keys_of: dict[tuple, np.ndarray] = {}  # per read set: each class's fact key under it
        memos = self._roll_memo.setdefault((first, r), {})
        few = len(codes) * len(memos) <= FEW_LOOKUPS  # a few classes (a forced order's): no arrays to look up
        for known, memo in memos.items():  # the first memo that knows a class answers for it
            if few:
                for i, code in enumerate(codes.tolist()):
                    if ids[i] < 0:
                        ids[i] = memo.get(self._fact_key(code, known), -1)
            else:
                keys = keys_of[known] = self._fact_keys(codes, known)
                have, got = self._memo_arrays((first, r, known), memo)
                at = np.minimum(np.searchsorted(have, keys), len(have) - 1)
                hit = (have[at] == keys) & (ids < 0)
                ids[hit] = got[at[hit]]
            if ids.min() >= 0:
                return ids
        for i in np.flatnonzero(ids < 0).tolist():
            if ids[i] >= 0:
                continue
            known, key, a = self._ask_roll(int(codes[i]), first, r)
            got_keys = keys_of.get(known)
            if got_keys is None:
                got_keys = keys_of[known] = self._fact_keys(codes, known)
            ids[(got_keys == key) & (ids < 0)] = a
        return ids

    def _ask_roll(self, code: int, first: bool, r: int) -> tuple[tuple[tuple[int, int], ...], int, int]:
        """Ask the legality rules about class `code` and roll r; memoise the answer on the facts the call read:
        (those (box, read kind) facts, the class's key under them, the answer's id). An answer that did not
        read whether the roll is the first holds for the other case too."""
        assign = {b: c for b, c in enumerate(self.class_cats(code)) if c}
        with tracing() as reads:
            card = self._card(assign, items=tuple(assign.items()))  # (in box order: sorted)
            allowed = self.variant.rules_allow(card, self._traced(r), first)
        self._check_legal_reads(reads, assign, self._legal_differs(assign, r, first, allowed))
        bidx = self.bidx
        if "*" in reads.boxes:
            facts: dict[int, int] = {}
            for name, kind in reads.boxes.items():
                if name == "*":
                    for b in range(self.nb):
                        facts[b] = facts.get(b, 0) | kind
                elif name in bidx:
                    facts[bidx[name]] = facts.get(bidx[name], 0) | kind
        else:  # (each box read once: no kinds to merge)
            facts = {bidx[name]: kind for name, kind in reads.boxes.items() if name in bidx}
        known = tuple(sorted(facts.items()))
        key = self._fact_key(code, known)
        alone = not reads.roll and not reads.patterns  # the roll played no part: one answer for every roll
        every = self._every_roll
        a = self._answers.add(
            self._full if allowed is None else self._bits(allowed),
            alone,
            reads.first_roll,
            every if alone else self._same_answer(reads, r, every),
        )
        for f in (first,) if reads.first_roll else (False, True):
            self._roll_memo.setdefault((f, r), {}).setdefault(known, {})[key] = a
        return known, key, a

    def _memo_arrays(self, where: tuple, memo: dict[int, int]) -> tuple[np.ndarray, np.ndarray]:
        """Memo `where` (first roll?, roll, reads): its fact keys sorted, and their answer ids (made again only
        after the memo grew)."""
        got = self._sorted_memos.get(where)
        if got is None or len(got[0]) != len(memo):
            have = np.fromiter(memo.keys(), dtype=np.int64, count=len(memo))
            ids = np.fromiter(memo.values(), dtype=np.int64, count=len(memo))
            order = np.argsort(have)
            got = self._sorted_memos[where] = (have[order], ids[order])
        return got

    @cached_property
    def _sorted_memos(self) -> dict[tuple, tuple[np.ndarray, np.ndarray]]:
        """`_memo_arrays` by memo."""
        return {}

    @cached_property
    def _roll_memo(self) -> dict[tuple[bool, int], dict[tuple[tuple[int, int], ...], dict[int, int]]]:
        """(first roll?, roll) -> the (box, read kind) facts a legality call read -> fact key -> answer id."""
        return {}

    @cached_property
    def _answers(self) -> _Answers:
        """Every legality answer asked (`_ask_roll`), by id."""
        return _Answers()

    @cached_property
    def _every_roll(self) -> np.ndarray:
        """A mask of every roll (read-only: the match of each answer that holds for every roll)."""
        every = np.ones(len(self.rolls), dtype=bool)
        every.setflags(write=False)
        return every

    @cached_property
    def _no_tables(self) -> np.ndarray:
        """(0, rolls, 2) per-roll legality tables: where no class's legality depends on the roll (read-only)."""
        none = np.zeros((0, len(self.rolls), 2), dtype=np.int64)
        none.setflags(write=False)
        return none

    def _fact_key(self, code: int, known: tuple[tuple[int, int], ...]) -> int:
        """The facts class `code` shows to the reads `known`, packed into one int: the filled bits of the boxes
        read as filled or not, and above them the categories of the boxes whose value was read (mixed radix)."""
        filled, valued = self._read_masks(known)
        key = code & filled
        if valued:
            cats, value = self.class_cats(code), 0
            for b in valued:
                value = value * self.ncat[b] + cats[b]
            key |= value << self.nb
        return key

    def _fact_keys(self, codes: np.ndarray, known: tuple[tuple[int, int], ...]) -> np.ndarray:
        """`_fact_key` of many class codes at once."""
        filled, valued = self._read_masks(known)
        key = codes & filled
        if valued:
            value = np.zeros(len(codes), dtype=np.int64)
            for b in valued:
                value = value * self.ncat[b] + self._cats_vec(codes, b)
            key |= value << self.nb
        return key

    def _read_masks(self, known: tuple[tuple[int, int], ...]) -> tuple[int, tuple[int, ...]]:
        """(bits of the boxes `known` reads as filled or not only, the boxes whose value it reads)."""
        got = self._masks_of.get(known)
        if got is None:
            filled = sum(1 << b for b, kind in known if not kind & VALUE)
            got = self._masks_of[known] = (filled, tuple(b for b, kind in known if kind & VALUE))
        return got

    @cached_property
    def _masks_of(self) -> dict[tuple[tuple[int, int], ...], tuple[int, tuple[int, ...]]]:
        return {}

    @cached_property
    def _full(self) -> int:
        return (1 << self.nb) - 1

    def _legal_differs(
        self, assign: dict[int, int], r: int, first: bool, allowed: frozenset[str] | None
    ) -> Callable[[], bool]:
        """A check (run only if needed): does the alternative 'no flag value' card change what the rules allow?"""

        def check() -> bool:
            with tracing():
                return self.variant.rules_allow(self._card(assign, alt=True), self.rolls[r], first) != allowed

        return check

    def _same_answer(self, reads: Reads, r: int, pending: np.ndarray) -> np.ndarray:
        """The pending rolls an answer asked on roll r holds for (`_answer_rolls`), as a mask."""
        match = np.zeros(len(pending), dtype=bool)
        match[self._answer_rolls(reads, r)] = True
        return match & pending

    def _answer_rolls(self, reads: Reads, r: int) -> np.ndarray:
        """The rolls (ascending, an array not to be written) an answer asked on roll r holds for: r alone if the
        rules read the dice, else every roll the declared patterns they asked about treat as they treat r."""
        if reads.roll:
            return np.array([r], dtype=np.intp)
        asked = tuple(sorted(reads.patterns))
        got = self._alike.get(asked)
        if got is None:  # the rolls grouped by what these patterns give them
            keys: list[Any]
            if not asked:
                keys = [()] * len(self.rolls)
            elif len(asked) == 1:
                keys = self._signature(*asked[0])
            else:
                keys = list(zip(*(self._signature(*a) for a in asked), strict=True))
            # each roll's group as the group's first roll, then the rolls sorted by it (a stable sort: ascending
            # within a group), each group a slice of them: loops in C, not a Python loop per roll
            first: dict[Any, int] = {}
            of_roll = np.fromiter(map(first.setdefault, keys, range(len(keys))), dtype=np.intp, count=len(keys))
            order = np.argsort(of_roll, kind="stable")
            got = self._alike[asked] = (of_roll, order, of_roll[order].tolist())
        of_roll, order, firsts = got
        at = int(of_roll[r])
        start = bisect.bisect_left(firsts, at)
        return order[start : bisect.bisect_right(firsts, at, start)]

    @cached_property
    def _alike(self) -> dict[tuple[tuple[str, str], ...], tuple[np.ndarray, np.ndarray, list[int]]]:
        """`_answer_rolls` by the patterns read: each roll's group under them (as its first roll), the rolls
        sorted by group (ascending within one), and their groups in that order."""
        return {}

    def _signature(self, kind: str, box: str) -> list[Any]:
        """Per roll, what the declared pattern of `box` gives to a read of this kind (`Reads.patterns`), equal
        where the read sees the same: its combination ("combination"), that and the declared points
        ("declared"), or only whether it is met and the points ("points")."""
        declared = self._declared_results(box)
        if kind == "points":  # (None where unmet: unmet rolls give 0 points, met ones the points)
            return [None if comb is None else points for comb, points in declared]
        if kind == "combination":
            return [comb for comb, _ in declared]
        return declared

    def _declared_results(self, box: str) -> list[tuple[tuple[int, ...] | None, int]]:
        """`Variant.declared_score` of `box` for every roll, in roll order (asked once per box)."""
        got = self._declared.get(box)
        if got is None:
            spec = self.variant.box(box)
            got = self._declared[box] = self.variant.declared_scores(spec, self.rolls)
        return got

    @cached_property
    def _declared(self) -> dict[str, list[tuple[tuple[int, ...] | None, int]]]:
        return {}

    def _bits(self, boxes: Iterable[str]) -> int:
        out = 0
        for box in boxes:
            b = self.bidx.get(box)
            if b is not None:  # a rule may name boxes this card does not have: they are not legal
                out |= 1 << b
        return out

    # ------------------------------------------------------------------ symmetry

    @cached_property
    def symmetric(self) -> tuple[tuple[int, ...], ...]:  # type: ignore[override]
        """Groups of two or more boxes proven interchangeable: any card and the card with two of them swapped
        have the same future, so a class counts a group's filled boxes instead of naming them.

        Proven, box by box, from what the rules model learnt: the same multiplier, the same declared
        pattern results and the same score and award points for every roll (first or not) in every
        situation of the boxes the score reads; no score reads any of them, none carries a state flag,
        and they lie in the same threshold groups (end bonuses see only the groups' totals, `terminal`).
        Legality and reroll rules are not traced for every class in advance (`UNTRACED_HOOKS`), so a
        variant with any is never counted.
        """
        v = self.variant
        sheets = list(v.sheets.values())
        if not DETECT_SYMMETRY or any(x.implements(h) for x in [v, *sheets] for h in UNTRACED_HOOKS):
            return ()
        tables: list[list[tuple]] = [[] for _ in range(self.nb)]
        read = set()
        for dep, keys, scores, points in self.score_groups:
            read |= set(dep)
            for b in np.unique(keys[:, 0]).tolist():
                sel = np.flatnonzero(keys[:, 0] == b)
                sel = sel[np.lexsort((keys[sel, 2], keys[sel, 1]))]
                tables[b].append((dep, keys[sel, 1:].tobytes(), scores[sel].tobytes(), points[sel].tobytes()))
        by_key: dict[tuple, list[int]] = {}
        for b, box in enumerate(self.box_ids):
            if b in read or b in self.flag_values:
                continue
            member = tuple(gi for gi, g in enumerate(self.all_groups) if b in g)
            by_key.setdefault((v.multiplier(box), member, tuple(sorted(tables[b]))), []).append(b)
        out: list[tuple[int, ...]] = []
        for alike in (g for g in by_key.values() if len(g) > 1):  # the declared patterns last: the dearest
            by_pattern: dict[tuple, list[int]] = {}
            for b in alike:  # (the declared results hold the combinations too)
                key = tuple(self._declared_results(self.box_ids[b]))
                by_pattern.setdefault(key, []).append(b)
            out.extend(tuple(g) for g in by_pattern.values() if len(g) > 1)
        return tuple(sorted(out))

    @property
    def counted_classes(self) -> int:
        """How many classes there can be: 2 masks per box, k + 1 per symmetric group of k boxes (counted),
        times the flag codes."""
        grouped = sum(len(g) for g in self.symmetric)
        n = 1 << (self.nb - grouped)
        for g in self.symmetric:
            n *= len(g) + 1
        return n * self.n_flagcodes

    # ------------------------------------------------------------------ end of game

    @cached_property
    def group_ranges(self) -> list[tuple[int, int]]:
        """(lowest, highest) total each threshold group can reach."""
        mins = [int(s.min()) if len(s) else 0 for s in self.box_scores]
        maxs = [int(s.max()) if len(s) else 0 for s in self.box_scores]
        return [(sum(mins[b] for b in g), sum(maxs[b] for b in g)) for g in self.all_groups]

    @property
    def terminal(self) -> np.ndarray:
        """End bonuses of a full card: array (flagcodes, *group ranges) of points, from the engine."""
        return self._terminal_tables[0]

    @property
    def terminal_awards(self) -> dict[str, np.ndarray] | None:
        """`terminal` per award id (an id missing: no points anywhere); None where an award's points (not
        only their sum) depend on how a threshold group's total is split between its boxes."""
        return self._terminal_tables[1]

    @cached_property
    def _terminal_tables(self) -> tuple[np.ndarray, dict[str, np.ndarray] | None]:
        """`terminal` and `terminal_awards`, from the same engine calls."""
        ranges = self.group_ranges
        dims = [hi - lo + 1 for lo, hi in ranges]
        size = self.n_flagcodes * int(np.prod(dims, dtype=np.int64))
        if size > MAX_TERMINAL:
            raise SolverError(
                f"{self.variant.id}: {size:,} end-of-game situations to evaluate; too many threshold groups"
            )
        carriers = self._carriers()
        shape = [self.n_flagcodes] + dims
        flat: list[float] = []  # the points of each end-of-game situation, in C order of `shape`
        # per award id: (position in `flat`, points) where it gave any; None once a split changes them
        award_at: dict[str, list[tuple[int, int]]] | None = {}
        allowed = frozenset(b for g in self.all_groups for b in g)
        # a group's total sits in its first carrier, and in its last on the second card: the end bonuses
        # must agree on both (a group of one carrier gives the same card twice: asked once)
        alts = (0, 1) if any(len(free) > 1 for free in carriers) else (0,)
        checked: dict[str, int] = {}  # the boxes the last checked call read (the check depends on nothing else)
        every_box = dict.fromkeys(range(self.nb), 1)
        end_bonuses = self.variant.end_bonuses
        for flagcode in range(self.n_flagcodes):
            code = ((1 << self.nb) - 1) | (flagcode << self.nb)
            base = {b: self.cat_value(b, c) for b, c in enumerate(self.class_cats(code))}
            fixed = [
                sum(base[b] for b in g if b not in free) for g, free in zip(self.all_groups, carriers, strict=False)
            ]
            cards = []  # per alt: the card's values (its holders' set again each time; the card copies them)
            for alt in alts:
                filled = dict(base)
                for free in carriers:
                    for b in free:
                        filled[b] = 0
                template = {self.box_ids[b]: v for b, v in filled.items()}
                cards.append((template, [self.box_ids[free[-1] if alt else free[0]] for free in carriers]))
            starts = [lo - f for (lo, _), f in zip(ranges, fixed, strict=True)]  # each group's total at 0
            for point in itertools.product(*(range(d) for d in dims)):
                held = [start + i for start, i in zip(starts, point, strict=True)]
                first_total, first_by_id = 0, {}  # the first card's total points, and points by award id
                for k, (template, holders) in enumerate(cards):
                    for box, value in zip(holders, held, strict=False):
                        template[box] = value
                    card = traced_card(template)
                    with tracing() as reads:
                        awards = end_bonuses(card)
                    if reads.awards or reads.situation or reads.boxes != checked:
                        self._check_reads(reads, every_box, "an end-of-game bonus", allowed)
                        checked = reads.boxes
                    total = 0
                    by_id: dict[str, int] = {}
                    for a in awards:
                        total += a.points
                        by_id[a.id] = by_id.get(a.id, 0) + a.points
                    if not k:  # (`alts` gives one card at least)
                        first_total, first_by_id = total, by_id
                    elif total != first_total:
                        raise SolverError(
                            f"{self.variant.id}: an end-of-game bonus depends on how a threshold group's total is "
                            "split between its boxes; the solver tracks only the total"
                        )
                    elif by_id != first_by_id:
                        award_at = None
                if award_at is not None:
                    for aid, pts in first_by_id.items():
                        award_at.setdefault(aid, []).append((len(flat), pts))
                flat.append(float(first_total))
        out = np.array(flat, dtype=np.float64).reshape(shape)
        if award_at is None:
            return out, None
        per_award = {}
        for aid, found in award_at.items():
            table = np.zeros(out.size)
            table[[i for i, _ in found]] = [p for _, p in found]
            per_award[aid] = table.reshape(shape)
        return out, per_award

    def _carriers(self) -> list[list[int]]:
        """For each group, the boxes that may hold its total (in no other group, no flag)."""
        out = []
        for gi, g in enumerate(self.all_groups):
            others = {b for j, h in enumerate(self.all_groups) if j != gi for b in h}
            free = [b for b in g if b not in others and b not in self.flag_values]
            if not free:
                raise SolverError(
                    f"{self.variant.id}: threshold bonus {self.group_names[gi]!r} shares all its boxes with other "
                    "groups or flags; the solver cannot represent its total"
                )
            out.append(free)
        return out

    @cached_property
    def clamps(self) -> list[tuple[int, int] | None]:
        """Per group: (lo, hi) with the end bonuses constant for totals <= lo and >= hi; None if irrelevant."""
        table = self.terminal
        out: list[tuple[int, int] | None] = []
        for gi, (lo_p, _hi_p) in enumerate(self.group_ranges):
            axis = table.ndim - len(self.group_ranges) + gi
            t = np.moveaxis(table, axis, 0)
            n = t.shape[0]
            if n < 2:  # no total (every score failed) or a single one: nothing to clamp
                out.append(None)
                continue
            same_next = (t[1:] == t[:-1]).reshape(n - 1, -1).all(axis=1).tolist()  # total i and i + 1 alike
            if all(same_next):
                out.append(None)
                continue
            hi = n - 1
            while hi > 0 and same_next[hi - 1]:
                hi -= 1
            lo = 0
            while lo < n - 1 and same_next[lo]:
                lo += 1
            out.append((lo_p + lo, lo_p + hi))
        return out


ERR = -(2**31)
