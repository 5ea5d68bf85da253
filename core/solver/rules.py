"""What the solver knows of a variant's rules, learned by asking the engine on traced cards.

Nothing here names a box, a variant or a rule: scores, awards, legality, end bonuses, state flags and the
box groups whose totals matter all come from the compiled variant's own methods, so every variant the
language and its plugins declare is solved the same way. `RuleModel` is the whole of it: its questions to
the rules are `rule_probes`', its legality `rule_legality`'s, its scores, symmetry and end bonuses here.

A *class* means what it means in the rule tracer (`numeric.tracer`): the cards the rules cannot tell
apart. The tracer learns which facts the rules read before it keys a class; the solver enumerates every
class in advance, so it keys one on every fact the rules may read (the filled boxes, and per flagged box
which declared value it holds): a class *code*.
"""

from __future__ import annotations

import itertools
from functools import cached_property

import numpy as np

from ..errors import ContractError, DicecupError
from ..language.model import Card, Variant
from ..language.tracing import Reads, traced_card, tracing
from .bitrows import distinct
from .errors import SolverError, StateSpaceTooLarge
from .rule_legality import Legality, RuleLegality

__all__ = ["RuleModel", "Legality", "MAX_COMBOS", "SOLVER_MAX_ROLLS", "check_solvable"]

MAX_COMBOS = 4096  # card situations explored for one (box, roll) before giving up
MAX_TERMINAL = 2_000_000
SOLVER_MAX_ROLLS = 20_000  # the turn recursion visits every kept-dice multiset per state
MAX_CLASSES = 1 << 27
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


class RuleModel(RuleLegality):
    """The compiled variant seen by the solver: score tables per context, legality, end bonuses.

    A class (code) is a card abstracted to what the rules may depend on: which boxes are filled, plus a digit per
    flagged box saying which declared flag value it holds (0: none), packed into an int as
    `mask | flagcode << n_boxes`. A box's *category* on a card is 0 open, 1 filled with no flagged value,
    2 + i filled with the box's i-th flag value. Boxes proven interchangeable (`symmetric`) are counted, not
    enumerated: classes are canonical (`numeric.coding`) and only the first open box of such a group is
    offered, which leads to the same canonical class as any other."""

    def __init__(self, variant: Variant, checked: bool = True) -> None:
        if checked:  # (unchecked: only to prove symmetry for a refusal's message)
            check_solvable(variant)
        super().__init__(variant)

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
            out += self.category(codes, b) * mult
            mult *= self.ncat[b]
        return out

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
        found = distinct(np.concatenate(pairs))
        box, score = found >> 40, (found & ((1 << 40) - 1)) - (1 << 39)
        cut = np.searchsorted(box, np.arange(self.nb + 1))
        return [score[cut[b] : cut[b + 1]].astype(np.int64) for b in range(self.nb)]

    def context_tables(self, ctx: int) -> tuple[np.ndarray, np.ndarray]:
        """(scores int64, points float64), each (boxes, rolls, 2) with axis 2 = [later, first]."""
        cached = self._ctx_cache.get(ctx)
        if cached is not None:
            return cached
        cats = self._ctx_cats(ctx)
        shape = (self.nb, len(self.rolls), 2)
        scores = np.zeros(shape, dtype=np.int64)
        points = np.zeros(shape, dtype=np.float64)
        flat_scores, flat_points = scores.reshape(-1), points.reshape(-1)
        for (dep, _, sc, pt), cells in zip(self.score_groups, self._group_cells, strict=True):
            combo = 0
            for d in dep:  # itertools.product order: the last box varies fastest
                combo = combo * self.ncat[d] + cats[d]
            flat_scores[cells] = sc[:, combo]
            flat_points[cells] = pt[:, combo]
        self._ctx_cache[ctx] = (scores, points)
        return scores, points

    @cached_property
    def _group_cells(self) -> list[np.ndarray]:
        """Each score group's keys (box, roll, first) as positions in a context's flat table: one index a cell,
        where three took four times as long to assign, a context at a time."""
        n_rolls = len(self.rolls)
        return [(keys[:, 0] * n_rolls + keys[:, 1]) * 2 + keys[:, 2] for _, keys, _, _ in self.score_groups]

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
