"""Each decision of a card's turn scored: every roll's legal boxes, their points and what follows them.

A turn's rolls are scored from the variant's score tables (`advice_tables`) once they answer, else by the
engine (`Variant.legal_boxes`, `Variant.score`), both giving the same bits; the keeps are folded from them by
the turn recursion (compiled where it is built, else numpy). What a turn's decisions share is memoised in
the variant's `AdvisorMemory`, so the next decision of the same turn is a look-up.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from functools import lru_cache
from types import ModuleType
from typing import Any, Protocol

import numpy as np
from attrs import evolve, frozen

from ..language.contexts import Situation
from ..language.dice import Roll
from ..language.model import Card, Variant
from ..language.tracing import Reads, traced_roll, tracing
from ..numeric.advance import best_box
from ..numeric.coding import EMPTY
from ..numeric.dice import DiceGraph
from ..numeric.objective import MEAN, Objective
from ..numeric.reference import fold
from ..numeric.tables import Untabulable
from .advice_tables import box_points, class_of, tables_of
from .advisor_memory import memory_of
from .errors import SolverError

__all__ = ["TABLES_AFTER", "Scored", "Values", "fold_keeps", "legal_in", "legal_reads", "scored_cached"]


#: Cards a process advises from the engine before the score tables answer and numba's kernels fold (a process
#: that asks about one card starts at once, with no tables to build nor kernels to compile).
TABLES_AFTER = 3
UNREACHABLE = "this card cannot arise in play under the variant's rules (its state is not reachable)"


class Values(Protocol):
    """What the advisor needs of a table of values: an exact `Solution`, or an estimate of one
    (`relax.Relaxation`, the strong strategy's sum of exactly solved parts)."""

    @property
    def variant(self) -> Variant: ...
    @property
    def graph(self) -> DiceGraph: ...
    @property
    def banks(self) -> int: ...
    def bank_after(self, rolls_left: int) -> int: ...
    def futures(self, card: Card, fills: Sequence[tuple[str, int]], bank: int = 0) -> np.ndarray: ...
    def row_of(self, card: Card) -> np.ndarray: ...


@frozen(eq=False)  # arrays: compared by identity
class Scored:
    """Every roll of a decision with its legal boxes: what each box adds now, and what follows it.

    `legal`, `points` (box score times its column's multiplier plus score-figure awards) and
    `after` (expected points to come once it is filled, -inf where illegal) are [rolls, boxes].
    """

    legal: np.ndarray
    points: np.ndarray
    after: np.ndarray

    @classmethod
    def empty(cls, rolls: int, boxes: int) -> Scored:
        return cls(
            np.zeros((rolls, boxes), dtype=bool),
            np.zeros((rolls, boxes), dtype=np.int64),
            np.full((rolls, boxes), -np.inf),
        )

    def best(self) -> np.ndarray:
        """(rolls, 1): the best value (points now + points to come) of scoring each roll."""
        return best_box(self.points, self.after)[0][:, None]


def tables_answer(v: Variant) -> bool:
    """Whether the score tables answer for `v` now: built already, or this is the `TABLES_AFTER`-th card."""
    memory = memory_of(v)
    return not memory.untabulable and (memory.tables is not None or memory.asked >= TABLES_AFTER)


def use_compiled(v: Variant) -> bool:
    """Whether to fold with the compiled turn recursion: always where it is built ahead of time; where numba
    would compile it, once this process has advised `TABLES_AFTER` cards of `v` (a one-card process does not
    wait for a compiler)."""
    mode = kernels()[0].MODE
    return mode == "aot" or (mode == "jit" and memory_of(v).asked >= TABLES_AFTER)


@lru_cache(maxsize=1)
def kernels() -> tuple[ModuleType, ModuleType]:
    """`numeric.compiled` and `numeric.card`, imported at first use (loading the built kernels)."""
    from ..numeric import card, compiled

    return compiled, card


def memo_peek(key: tuple, solution: Values) -> Any:
    """What `memo` holds for `key` and this `solution`, or None."""
    hit = memory_of(solution.variant).later.get((id(solution), *key))
    return hit[1] if hit is not None and hit[0]() is solution else None


def memo(key: tuple, solution: Values, make: Callable[[], Any]) -> Any:
    """`make()`, remembered for the last few keys of a live `solution` (a turn's decisions share them: the
    variant's `AdvisorMemory.later`)."""
    got = memo_peek(key, solution)
    if got is None:
        got = make()
        memory_of(solution.variant).remember((id(solution), *key), (weakref.ref(solution), got))
    return got


def objective_of(solution: Values) -> Objective:
    """What the table maximises (`Solution.objective`; estimates of the mean's table have none)."""
    return getattr(solution, "objective", MEAN)


def after_roll(situation: Situation | None) -> Situation | None:
    """The situation after one more roll of this turn (what every later roll is asked with)."""
    if situation is None:
        return None
    return evolve(situation, rolls_used=situation.rolls_used + 1, rolls_left=max(0, situation.rolls_left - 1))


def scored_cached(
    solution: Values, card: Card, bank: int, situation: Situation | None = None, first: bool = False
) -> Scored:
    """`_later_scores`, memoised."""
    return memo(
        ("scored", card, bank, situation, first),
        solution,
        lambda: _later_scores(solution, card, bank, situation, first),
    )


def scored_now(solution: Values, card: Card, r: int, bank: int, situation: Situation | None, first: bool) -> Scored:
    """The decision's own roll `r` scored (its row of the result): the turn's table when it is memoised
    already, else that roll alone (from the tables or the engine: a single `dicecup advise` scores one roll)."""
    key = ("scored", card, bank, situation, first)
    full = memo_peek(key, solution)
    if full is not None:
        return full
    return memo((*key, r), solution, lambda: _later_scores(solution, card, bank, situation, first, only=r))


def later_cached(
    solution: Values, card: Card, bank: int, situation: Situation | None = None, first: bool = False
) -> np.ndarray:
    """(rolls, 1): the best value of scoring each roll after a later roll (`first`: the first), memoised;
    as the turn recursion folds it (a risk objective's utility, not points: `Objective.utility`)."""
    return memo(
        ("best", card, bank, situation, first),
        solution,
        lambda: objective_of(solution).utility(scored_cached(solution, card, bank, situation, first).best()),
    )


def keeps_cached(solution: Values, card: Card, rolls_left: int, later: Situation | None) -> np.ndarray:
    """(keeps, 1): each keep's value with `rolls_left` rolls left on `card`, memoised; `later` is the
    situation every later roll is asked with."""

    def make() -> np.ndarray:
        # every roll from here on scores as a later one, with as many rolls left to bank as it leaves
        rows = [later_cached(solution, card, solution.bank_after(left), later) for left in range(rolls_left)]
        return objective_of(solution).shown(fold_keeps(solution, rows + rows[-1:]))  # as points

    return memo(("keeps", card, rolls_left, later), solution, make)


def fold_keeps(solution: Values, rows: list[np.ndarray]) -> np.ndarray:
    """(keeps, 1): every keep's value at the decision with len(rows) - 1 rolls left, rows[left] (rolls, 1) the
    best value of scoring each roll with `left` rolls left: the turn recursion, compiled (`use_compiled`), else
    its numpy twin (the same sums in the same order: the same values)."""
    v = solution.variant
    if not use_compiled(v):
        keeps = fold(solution.graph, rows)[-1][1]
        assert keeps is not None  # a decision with rolls left has keeps
        return keeps
    from ..numeric.records import TurnArrays
    from ..numeric.turn import W, turn_block

    d = solution.graph.arrays
    n_rows, n_keeps = d.add_edges.shape[0], int(d.levels[d.dice])
    pick = np.arange(len(rows), dtype=np.int64)  # decision `left` scores from rows[left]
    score = np.zeros((len(rows), d.roll_probs.shape[0], W))  # the kernel folds W states: this card is lane 0
    score[:, :, 0] = np.stack(rows)[:, :, 0]
    keeps = np.empty((len(rows) - 1, n_keeps, W))  # per stage: the decision with len(rows) - 1 - stage rolls left
    scratch = np.empty((n_rows, W)), np.empty((n_rows, W))
    no_levels = np.empty((0, 0, W))  # no per-decision roll values for the advisor
    turn_block(score, pick, pick, d, TurnArrays(np.empty((d.roll_probs.shape[0], W)), *scratch, keeps, no_levels))
    return keeps[0][:, :1].copy()


def _later_scores(
    solution: Values,
    card: Card,
    bank: int = 0,
    situation: Situation | None = None,
    first: bool = False,
    only: int | None = None,
) -> Scored:
    """Every roll's legal boxes scored after a later roll (`first`: after the turn's first roll), each
    leaving `bank` rolls banked (`only`: that roll's row alone, the others left illegal).

    The first cards of a variant ask the engine roll by roll (no start-up cost: one
    `dicecup advise` asks one card); from the `TABLES_AFTER`-th on, the variant's score
    and legality tables answer (memoised on what the rules read: a one-off cost of about
    a second for Yahtzee, then a new card costs lookups). Rules the tables cannot hold
    always go to the engine. With a `situation`, legality is the engine's, asked per roll.
    """
    v = solution.variant
    if only is None:
        memory_of(v).asked += 1
    if tables_answer(v):
        try:
            return _later_from_tables(solution, card, bank, situation, first, only)
        except Untabulable:
            memory_of(v).untabulable = True
    return _later_from_engine(solution, card, bank, situation, first, only)


def _later_from_tables(
    solution: Values,
    card: Card,
    bank: int,
    situation: Situation | None = None,
    first: bool = False,
    only: int | None = None,
) -> Scored:
    """`Scored` from the variant's score and legality tables, every roll at once (`only`: that roll's row
    alone); legality from the engine where it reads the game around the card. Raises Untabulable."""
    v = solution.variant
    scores, legal, mult = tables_of(v)
    vals = solution.row_of(card)
    _, shaped, box_scores = class_of(v, scores, vals)
    asked = np.arange(scores.R) if only is None else np.array([only])  # the rolls scored: all, or the one
    ok = None
    if situation is None or not memory_of(v).situated:
        try:
            ok = legal.allowed(np.repeat(legal.lookup(vals), len(asked)), first, asked)
        except Untabulable:  # legality reads the game around the card (an announcement)
            if situation is None:
                raise
            memory_of(v).situated = True
    if ok is None:
        assert situation is not None
        ok = legal_in(v, card, [scores.rolls[r] for r in asked.tolist()], situation, first)
    ok &= vals[0] == EMPTY
    fr = int(first)
    rows = slice(None) if only is None else slice(only, only + 1)
    got_scores = box_scores[fr, rows]  # [asked rolls, boxes], legal or not: dense arrays, few numpy calls
    points = box_points(v, got_scores, shaped[fr, rows], mult)
    after = np.full(ok.shape, -np.inf)
    if ok.any():
        lo = int(got_scores.min())
        span = int(got_scores.max()) - lo + 1
        distinct, which = _distinct((np.arange(len(v.box_ids)) * span + (got_scores - lo))[ok])  # one per (box, score)
        after[ok] = _after_fills(solution, card, bank, distinct // span, distinct % span + lo)[which]
    if only is None:
        return Scored(ok, np.where(ok, points, 0), after)
    out = Scored.empty(solution.graph.n_rolls, len(v.box_ids))
    out.legal[only], out.points[only], out.after[only] = ok[0], np.where(ok[0], points[0], 0), after[0]
    return out


def _later_from_engine(
    solution: Values,
    card: Card,
    bank: int,
    situation: Situation | None = None,
    first: bool = False,
    only: int | None = None,
) -> Scored:
    """`Scored` from the engine, roll by roll (`only`: that roll's row alone, the others left illegal)."""
    v = solution.variant
    index = {b: i for i, b in enumerate(v.box_ids)}
    scored: list[tuple[int, str, int, int]] = []  # (roll, box, score, points)
    rolls = v.all_rolls()
    for i, r in enumerate(rolls) if only is None else [(only, rolls[only])]:
        for box in v.legal_boxes(card, r, first, situation):
            res = v.score(card, box, r, first, situation)
            scored.append((i, box, res.score, res.points))
    fills = sorted({(box, score) for _, box, score, _ in scored})
    after = dict(zip(fills, _futures(solution, card, fills, bank).tolist(), strict=False))
    out = Scored.empty(solution.graph.n_rolls, len(v.box_ids))
    for i, box, score, points in scored:
        b = index[box]
        out.legal[i, b], out.points[i, b], out.after[i, b] = True, points, after[(box, score)]
    return out


def legal_in(v: Variant, card: Card, rolls: Sequence[Roll], situation: Situation, first: bool) -> np.ndarray:
    """[rolls, boxes] legal boxes from the engine with the game around the card (`legal_reads`' answer)."""
    return legal_reads(v, card, rolls, situation, first)[0]


def legal_reads(
    v: Variant, card: Card, rolls: Sequence[Roll], situation: Situation, first: bool
) -> tuple[np.ndarray, Reads | None]:
    """([rolls, boxes] legal boxes from the engine with the game around the card, what the rules read): one
    call stands for every roll when the rules were not seen to look at the dice (neither the roll nor a
    declared pattern), and its reads are given; asked roll by roll otherwise, with None for the reads."""
    index = {b: i for i, b in enumerate(v.box_ids)}
    ok = np.zeros((len(rolls), len(v.box_ids)), dtype=bool)
    with tracing() as reads:
        legal = v.legal_boxes(card, traced_roll(rolls[0]), first, situation)
    if not (reads.roll or reads.patterns):
        ok[:, [index[b] for b in legal]] = True
        return ok, reads
    for r, roll in enumerate(rolls):
        ok[r, [index[b] for b in v.legal_boxes(card, roll, first, situation)]] = True
    return ok, None


def _distinct(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(the distinct values of small non-negative ints `keys`, ascending; each key's place among them)."""
    size = int(keys.max()) + 1
    if size > 1 << 20:
        distinct, which = np.unique(keys, return_inverse=True)
        return distinct, which.reshape(-1)
    seen = np.zeros(size, dtype=bool)
    seen[keys] = True
    return np.flatnonzero(seen), (np.cumsum(seen) - 1)[keys]


def _after_fills(solution: Values, card: Card, bank: int, boxes: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """`_futures_at` of fills (box positions, scores; sorted, distinct) on `card`, memoised per card and bank: a
    decision's own roll, scored after the turn's later rolls were, asks mostly the fills they asked."""
    wanted = (boxes.astype(np.int64) << 32) | (scores.astype(np.int64) + (1 << 31))  # box-major, then score
    held = memo_peek(("after", card, bank), solution)
    if held is None:
        values = _futures_at(solution, card, boxes, scores, bank)
        memo(("after", card, bank), solution, lambda: (wanted, values))
        return values
    keys, values = held
    at = np.minimum(np.searchsorted(keys, wanted), len(keys) - 1)
    new = keys[at] != wanted
    if new.any():  # a few fills more: their successors looked up, the memo kept sorted
        keys = np.concatenate([keys, wanted[new]])
        values = np.concatenate([values, _futures_at(solution, card, boxes[new], scores[new], bank)])
        order = np.argsort(keys, kind="stable")
        keys, values = keys[order], values[order]
        memory_of(solution.variant).remember(
            (id(solution), "after", card, bank), (weakref.ref(solution), (keys, values))
        )
        at = np.searchsorted(keys, wanted)
    return values[at]


def _futures_at(solution: Values, card: Card, boxes: np.ndarray, scores: np.ndarray, bank: int) -> np.ndarray:
    """`_futures` of the fills (box position, score) given as arrays (a `Solution` takes them as they are)."""
    at = getattr(solution, "futures_at", None)
    if at is None:
        ids = solution.variant.box_ids
        return _futures(
            solution, card, [(ids[b], s) for b, s in zip(boxes.tolist(), scores.tolist(), strict=True)], bank
        )
    out = at(card, boxes, scores, bank)
    if np.isnan(out).any():
        raise SolverError(UNREACHABLE)
    return out


def _futures(solution: Values, card: Card, fills: list[tuple[str, int]], bank: int = 0) -> np.ndarray:
    """`Solution.futures`, refusing a successor the solver never reached (the card cannot arise in play)."""
    out = solution.futures(card, fills, bank) if fills else np.zeros(0)
    if np.isnan(out).any():
        raise SolverError(UNREACHABLE)
    return out
