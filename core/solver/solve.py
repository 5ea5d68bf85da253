"""`solve(variant)`: the optimal solitaire strategy's values, and the `Solution` that holds them."""

from __future__ import annotations

import itertools
import os
import time
from collections.abc import Callable, Iterator, Sequence
from functools import cached_property
from typing import Any

import numpy as np

from ..language.model import Card, Variant
from ..locales import N_, Phrase
from ..numeric import compiled
from ..numeric.advance import successor_rows
from ..numeric.coding import StateIndex
from ..numeric.dice import DiceGraph, graph_of
from ..numeric.objective import MEAN, Objective
from ..numeric.records import SlotArrays
from ..numeric.reference import fold, turn_tables
from ..progress import Reporter, task
from .dp import (
    LayerBackend,
    backward,
    backward_jit,
    banked_scores,
    batches,
    score_arrays,
    slot_arrays,
    successor_values,
    value_shape,
)
from .endtables import EndAwards, TerminalAxes
from .errors import SolverError
from .rules import ERR, RuleModel
from .space import StateSpace, state_bound

__all__ = ["solve", "check_objective", "score_bounds", "Solution", "SOLVER_VERSION", "DEFAULT_MAX_STATES"]

SOLVER_VERSION = "1"
DEFAULT_MAX_STATES = 40_000_000  # Maxi Yatzy without saved rolls (33.5 million states, ~2.3 GB) fits
PRECISIONS = {"float64": np.float64, "float32": np.float32}
FLOAT32_FROM = 2_000_000  # "auto" stores values as float32 from this many states on (half the memory and disk)

# per decision of a turn: (value of each roll on the table, value of each keep or None after the last roll)
TurnTables = list[tuple[np.ndarray, np.ndarray | None]]


class Solution:
    """Expected points still to come from the start of a turn, for every reachable state of a variant.

    Built by `solve`, or loaded from the cache (then without the search
    structures, which `model` rebuilds on demand for the fast policy). `values` is
    (states,), or (states, bank sizes) where unused rolls are banked: a state's value
    for each number of rolls it carries into its next turn.

    `objective` is what the table maximises (`numeric.objective`): for a risk objective
    `values` holds sign(theta) * E[exp(theta * points to come)], and every method that
    returns values (`future`, `futures`, `successors`, `turn_tables`) returns them as
    points, their certainty equivalents (`Objective.shown`), so that callers compare and
    add points whatever the objective.
    """

    def __init__(
        self,
        variant: Variant,
        index: StateIndex,
        values: np.ndarray,
        states: int,
        seconds: float,
        space: StateSpace | None = None,
        objective: Objective = MEAN,
        model: RuleModel | None = None,
    ) -> None:
        self.variant = variant
        self.objective = objective
        self.index = index
        self.values = values
        self.states = states
        self.seconds = seconds
        self._space = space
        self._model = model if model is not None and model.variant is variant else None
        self.kept_end: EndAwards | None = None
        """The end bonuses of full cards as the table's file kept them (`EndAwards`), where it was loaded with them."""

    @property
    def space(self) -> StateSpace:
        """The search structures (legality, contexts); rebuilt from the rules when loaded from cache (from the
        rules model the caller learned already, where it gave one)."""
        if self._space is None:
            model = self._model if self._model is not None else RuleModel(self.variant)
            self._space = StateSpace(model, max_states=None, index=self.index)
            self._model = None  # the space holds it
        return self._space

    @property
    def model(self) -> RuleModel:
        return self.space.model

    @property
    def searched(self) -> StateSpace | None:
        """The search structures where they are at hand (this process solved, or asked for `space`), else None:
        for what is cheap to read off a search and costly to redo (`card_tables`)."""
        return self._space

    @cached_property
    def graph(self) -> DiceGraph:
        """The dice multisets of this variant (for the turn recursions)."""
        return graph_of(self.variant)

    @property
    def banks(self) -> int:
        """Bank sizes a value is kept for: 1, or where unused rolls are banked 0 .. (rolls - 1) x boxes."""
        return 1 if self.values.ndim == 1 else int(self.values.shape[1])

    def bank_after(self, rolls_left: int) -> int:
        """The bank a box scored with `rolls_left` rolls left carries on: those rolls where they are banked."""
        return rolls_left if self.banks > 1 else 0

    def column(self, bank: int = 0) -> np.ndarray:
        """Every state's value when it carries `bank` banked rolls into its next turn (states,)."""
        if not 0 <= bank < self.banks:
            most = self.banks - 1
            raise SolverError(
                f"{self.variant.id}: {bank} banked rolls; "
                + ("this variant banks no rolls" if most == 0 else f"a game can bank 0..{most}")
            )
        return self.values if self.values.ndim == 1 else self.values[:, bank]

    @cached_property
    def expected_score(self) -> float:
        """The optimal expected final score of a whole game (a risk objective: its certainty equivalent)."""
        return self.value(Card())

    def future(self, card: Card, bank: int = 0) -> float:
        """Expected points still to come (boxes, awards and end bonuses) from the start of a turn on `card`,
        with `bank` rolls banked from earlier turns (a risk objective: their certainty equivalent); CardError
        where the card does not fit the variant."""
        self.variant.check_card(card)
        code, prog = self.index.state_of_card(card)
        value = self.column(bank)[int(self.index.lookup(np.array([code]), prog)[0])]
        if np.isnan(value):
            raise SolverError(
                "this card cannot arise in play under the variant's rules (its state is not reachable)"
                if bank == 0
                else f"this card cannot arise with {bank} rolls banked (each turn leaves at most "
                f"{self.variant.rolls - 1} unused)"
            )
        return float(self.objective.shown(value))

    def value(self, card: Card, bank: int = 0) -> float:
        """Expected final total of a game continued optimally from the start of a turn on `card`."""
        to_come = self.future(card, bank)  # (checks the card first)
        return self.variant.points_so_far(card) + to_come

    def layer_states(self, mask: int = 0) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """Per number of filled boxes, the reachable states (codes, clamped totals, value slots) whose filled boxes
        include `mask` (all a card with those boxes filled can reach), read off the state index and the values
        (a cached solution has no search structures)."""
        ix = self.index
        values = self.column()
        keep = (ix.class_codes & mask) == mask
        codes = ix.class_codes[keep]
        dims = ix.class_dims[keep]
        pmin = ix.class_pmin[keep]
        sizes = dims.prod(axis=1) if ix.G else np.ones(len(codes), dtype=np.int64)
        cls = np.repeat(np.arange(len(codes)), sizes)
        within = np.arange(len(cls)) - np.repeat(np.cumsum(sizes) - sizes, sizes)
        progs = np.zeros((len(cls), ix.G), dtype=np.int64)
        rest = within.copy()
        for g in range(ix.G - 1, -1, -1):  # the last group varies fastest (`StateIndex` strides)
            progs[:, g] = pmin[cls, g] + rest % dims[cls, g]
            rest //= dims[cls, g]
        state_codes = codes[cls]
        slots = ix.lookup(state_codes, progs)
        ok = slots < ix.size
        ok[ok] = np.isfinite(values[slots[ok]])
        state_codes, progs, slots = state_codes[ok], progs[ok], slots[ok]
        # boxes filled, counted per class (a Python popcount per state costs a fifth of a second on Yahtzee)
        filled = np.array([int(x).bit_count() for x in (codes & ix.full).tolist()], dtype=np.int64)[cls[ok]]
        order = np.argsort(filled, kind="stable")  # by layer, in index order within one
        state_codes, progs, slots = state_codes[order], progs[order], slots[order]
        cut = np.searchsorted(filled[order], np.arange(ix.nb + 2)).tolist()
        return [(state_codes[a:b], progs[a:b], slots[a:b]) for a, b in itertools.pairwise(cut)]

    # ------------------------------------------------------------------ playing from the table

    def legal_arrays(self, codes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """`StateSpace.legal_arrays`: the legality of many classes as kernel arrays."""
        return self.space.legal_arrays(codes)

    @cached_property
    def slots(self) -> SlotArrays:
        """Each box's successor slots as the kernels read them (`dp.slot_arrays`)."""
        return slot_arrays(self.space)

    @property
    def slot_width(self) -> int:
        """Successor slots per box in `successors` (box b's slot k is column b * slot_width + k)."""
        return self.space.slot_width

    @cached_property
    def score_slots(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(lowest score, highest score, offset into the map) per box, and the dense score -> slot map."""
        return self.space.score_slots.exact_map(self.slot_width)

    def slot_of_scores(self, scores: np.ndarray) -> np.ndarray:
        """The successor slot (a column of `successors`) of each box score in `scores` [..., boxes];
        -1 for a score the solver never saw in that box."""
        lo, hi, off, dense = self.score_slots
        inside = (scores >= lo) & (scores <= hi)
        return np.where(inside, dense[off + np.clip(scores, lo, hi) - lo], -1).astype(np.int64)

    def score_contexts(self, codes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The score tables of many classes, by context (classes whose boxes score alike share one):
        (context of each code [N]; points [C, 2, boxes, rolls], a box's score plus awards after a later
        roll (0) or the first (1); the `successors` column each score leads to, -1 for none; whether the
        first roll scores like a later one [C]). What a policy over every state needs, from the rules model."""
        space, model = self.space, self.model
        raw = model.context_of(codes)
        ids, ctx = np.unique(raw, return_inverse=True)
        n_rolls = self.graph.n_rolls
        points = np.zeros((len(ids), 2, space.nb, n_rolls))
        slots = np.zeros((len(ids), 2, space.nb, n_rolls), dtype=np.int64)
        same = np.zeros(len(ids), dtype=bool)
        for c, raw_id in enumerate(ids.tolist()):
            scores, pts = model.context_tables(raw_id)  # (boxes, rolls, [later, first])
            points[c] = pts.transpose(2, 0, 1)
            slots[c] = self.slot_of_scores(scores.transpose(2, 1, 0)).transpose(0, 2, 1)
            same[c] = space.same_first(raw_id)
        return ctx.reshape(-1), points, slots, same

    def end_awards(
        self, vals: np.ndarray, states: tuple[np.ndarray, np.ndarray] | None = None
    ) -> dict[str, np.ndarray] | None:
        """The end bonuses of full cards (rows of box scores), per award id, from the tables the solver
        built from the engine, or as its file kept them (`kept_end`); None where an award's points depend on
        more than the state the solver keeps, or where neither is at hand (a table loaded without them, whose
        rules this process has not learned: learning them costs more than the engine's end-bonus tables).
        `states`: the cards' class codes and group totals (not clamped) where the caller has them (the
        compiled simulator keeps them as boxes fill), instead of encoding `vals` again."""
        end = self.kept_end if self.searched is None else self.end_table()
        if end is None:
            return None
        if states is None:
            codes, prog = self.index.encode(vals)
        else:
            codes, prog = states[0], self.index.clamp(states[0] & self.index.full, states[1])
        return end.of(codes, prog)

    def end_table(self) -> EndAwards | None:
        """The end bonuses of full cards by award id, by flag code and threshold groups' totals (from the rules
        model); None where an award's points depend on more than the state the solver keeps."""
        model, space = self.model, self.space
        tables = model.terminal_awards
        if tables is None:
            return None
        untracked = [1 + gi for gi in range(len(model.all_groups)) if gi not in space.group_ids]
        if any(np.ptp(t, axis=axis).any() for t in tables.values() for axis in untracked):
            return None
        return EndAwards(tables, TerminalAxes.of_model(model, space))

    def successors(self, codes: np.ndarray, prog: np.ndarray) -> np.ndarray:
        """[states, boxes * slot_width]: the value of the state each slot leads to (NaN where the box is filled;
        interchangeable boxes: see `ClassCoding.spread_symmetric`)."""
        space, k = self.space, self.slot_width
        if compiled.AVAILABLE:  # one compiled pass
            out = self.objective.shown(successor_rows(self.slots, self.index.arrays, codes, prog, self.values, 0))
        else:
            out = np.full((len(codes), space.nb * k), np.nan)
            for b in range(space.nb):
                succ = self.objective.shown(successor_values(space, self.column(), b, codes, prog))  # (slots, states)
                succ[:, (codes >> b) & 1 == 1] = np.nan
                out[:, b * k : b * k + len(succ)] = succ.T
        return self.index.spread_symmetric(codes, out.reshape(len(codes), space.nb, k)).reshape(len(codes), -1)

    def turn_tables(
        self, codes: np.ndarray, prog: np.ndarray, bank: int = 0
    ) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray, TurnTables]]:
        """(positions, first-roll scores, later scores, `reference.turn_tables`) for these states, a batch at
        a time (`dp.batches`): every roll's and every keep's value at each decision of their turn.

        With `bank` rolls banked the turn has that many rolls more, and each decision scores
        against the bank it leaves (first and later are then the first decision's scores).
        Folded on the stored values, returned as points (`Objective.shown`).
        """
        rolls = self.variant.rolls + bank
        ob = self.objective
        for part, ctx in batches(self.space, codes):
            if self.banks == 1:
                self.column(bank)  # refuses a bank where none is kept
                first, later = score_arrays(self.space, self.values, ctx, codes[part], prog[part], ob)
                later = first if later is None else later
                tables = turn_tables(self.graph, first, later, rolls)
            else:
                laters, firsts = banked_scores(self.space, self.values, ctx, codes[part], prog[part], rolls, ob)
                first, later = (firsts or laters)[-1], laters[-1]
                tables = fold(self.graph, laters)[::-1]
            if not ob.is_mean:
                first, later = ob.shown(first), ob.shown(later)
                tables = [(ob.shown(v), None if k is None else ob.shown(k)) for v, k in tables]
            yield part, first, later, tables

    def row_of(self, card: Card) -> np.ndarray:
        """A card as a (1, boxes) row of box scores, `EMPTY` where open (the advisor's tables read it)."""
        return self.index.row_of(card)

    def futures(self, card: Card, fills: Sequence[tuple[str, int]], bank: int = 0) -> np.ndarray:
        """Expected points still to come after filling each (box, score) of `fills` on `card`, at once,
        `bank` rolls banked (`bank_after`); a risk objective: their certainty equivalents.

        NaN where the card that results is not reachable in play (awards do not change a state).
        """
        boxes = np.array([self.index.bidx[box] for box, _ in fills], dtype=np.int64)
        return self.futures_at(card, boxes, np.array([score for _, score in fills], dtype=np.int64), bank)

    def futures_at(self, card: Card, boxes: np.ndarray, scores: np.ndarray, bank: int = 0) -> np.ndarray:
        """`futures` with the fills as arrays: each box's position (in `variant.box_ids`) and its score."""
        ix = self.index
        rows = np.repeat(ix.row_of(card), len(boxes), axis=0)
        rows[np.arange(len(boxes)), boxes] = scores
        return self.objective.shown(self.column(bank)[ix.locate(rows)])


def terminal_values(model: RuleModel, space: StateSpace) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """The value of full-card states (their end bonuses, from the engine), looked up by (codes, clamped totals)."""
    table, axes = model.terminal, TerminalAxes.of_model(model, space)

    def lookup(codes: np.ndarray, progress: np.ndarray) -> np.ndarray:
        return table[axes.index(codes, progress)]

    return lookup


def score_bounds(model: RuleModel) -> tuple[float, float]:
    """(lowest, highest) final score a game can reach, bounded by each box's lowest and highest points
    (with their awards) and the end bonuses: what a risk objective's range is checked against."""
    lo, hi = np.zeros(model.nb), np.zeros(model.nb)
    seen = np.zeros(model.nb, dtype=bool)
    for _, keys, scores, points in model.score_groups:
        ok = scores != ERR
        for b in np.unique(keys[:, 0]).tolist():
            got = points[keys[:, 0] == b][ok[keys[:, 0] == b]]
            if len(got):
                lo[b] = min(lo[b], float(got.min())) if seen[b] else float(got.min())
                hi[b] = max(hi[b], float(got.max())) if seen[b] else float(got.max())
                seen[b] = True
    terminal = model.terminal
    return float(lo.sum() + terminal.min(initial=0.0)), float(hi.sum() + terminal.max(initial=0.0))


def check_objective(variant: Variant, objective: Objective, model: RuleModel | None = None) -> None:
    """Refuse at once an objective that no table of one player's values holds (winning needs the other cards),
    or whose values leave float64 for this variant's scores (with the numbers)."""
    if not isinstance(objective, Objective):
        raise SolverError(
            f"objective {objective.id} is not solved as a table: it ranks moves against the other players' cards "
            "(advise --objective win --opponent CARD, play --objective win, bot:win, dicecup match)"
        )
    if not objective.is_mean and not objective.is_target:
        objective.check_range(variant.id, *score_bounds(model or RuleModel(variant)))


def solve(
    variant: Variant,
    max_states: int | None = DEFAULT_MAX_STATES,
    progress: Reporter | None = None,
    kernel: str | None = None,
    precision: str = "auto",
    workdir: str | os.PathLike | None = None,
    objective: Objective = MEAN,
    backend: LayerBackend | None = None,
    model: RuleModel | None = None,
) -> Solution:
    """Solve `variant` exactly (solitaire, maximising the expected final score, or `objective`).

    `kernel`: "numba" (compiled, parallel), "numpy" (vectorised reference) or "auto"
    (the default: compiled unless the process runs the numpy kernels, `compiled.MODE`).
    `precision`: how values are stored, "float64", "float32" or "auto" (float32 from
    FLOAT32_FROM states on). Every value is computed in float64 from its successors;
    float32 storage rounds each one (~6e-8 relative), which keeps Yahtzee's and
    Yatzy's expected scores within 1e-5 of float64 (tests/test_solver_variants.py).
    `workdir`: a folder that holds the table on disk while solving (`workdir.WorkDir`):
    memory holds what the OS pages in, and a solve interrupted there resumes after
    its last finished layer when run again with the same folder.
    `objective`: a risk objective (`numeric.objective`) is solved on the same states, stored in
    float64 (its values span far more than float32's range; `precision` float32 is refused), and
    refused before the search when exp(theta * score) leaves float64 for this variant's scores.
    `backend`: run the backward pass there (`dp.LayerBackend`: the cluster's, `dicecup.cluster`), which keeps
    its own store of finished work (so `workdir` is refused with it); the rules model and the state search
    stay in this process. Same table, bit for bit, as the compiled kernel's here.
    `model`: the variant's rules model where the caller learned it already (`check_objective`, say): the
    rules are not learned again.
    """
    start = time.perf_counter()
    kernel = _kernel_for(kernel, precision, backend, workdir)
    from . import jit  # numba is imported only when solving (the advisor does not need it)

    with task(progress, Phrase(N_("solving {variant}"), variant=variant.id)):
        run = backward_jit if kernel == "numba" else backward
        if kernel == "numba":
            jit.compile_ahead()  # while the rules model and the search run
        model = _rules_for(variant, objective, precision, model)
        counter = [0]

        def on_class() -> None:
            counter[0] += 1
            if progress and counter[0] % 256 == 0:
                progress.advance(256)

        # an obviously small variant skips the limit checks; otherwise the search counts, and stops past the limit
        limit = None if max_states is None or state_bound(model) <= max_states else max_states
        with task(progress, Phrase(N_("exploring its states")), unit="card classes"):
            space = StateSpace(model, limit, on_class)
        states = space.n_states
        assert states is not None  # counted by the search

        def on_states(n: int) -> None:
            if progress:
                progress.advance(n)

        if precision == "auto":
            precision = "float32" if states >= FLOAT32_FROM and objective.is_mean else "float64"
        dtype = PRECISIONS[precision]
        signature = _signature(variant, states, kernel, precision, objective)
        work = None
        if workdir is not None:
            from .workdir import WorkDir

            work = WorkDir(workdir, signature, value_shape(space), dtype)
        bonus = terminal_values(model, space)

        def terminal(codes: np.ndarray, prog: np.ndarray) -> np.ndarray:
            return objective.terminal(bonus(codes, prog))

        with task(progress, Phrase(N_("backward pass")), states, "states"):
            if backend is not None:
                values = backend.backward(space, terminal, on_states, dtype, objective, signature)
            else:
                values = run(space, terminal, on_states, dtype, work, objective)
        if work is not None:
            values = np.asarray(values)  # the memory-mapped table, read-only from here on
        return Solution(variant, space.index, values, states, time.perf_counter() - start, space, objective)


def _signature(variant: Variant, states: int, kernel: str, precision: str, objective: Objective) -> dict[str, Any]:
    """What a table on disk (a work folder's, a backend's store) must have been made for to be taken up again."""
    signature: dict[str, Any] = {
        "variant": variant.id,
        "fingerprint": variant.fingerprint,
        "solver": SOLVER_VERSION,
        "states": states,
        "kernel": kernel,  # the two kernels agree to rounding, not bit for bit
        "precision": precision,
    }
    if not objective.is_mean:
        signature["objective"] = objective.id
    return signature


def _kernel_for(
    kernel: str | None, precision: str, backend: LayerBackend | None, workdir: str | os.PathLike | None
) -> str:
    """The kernel a solve runs ("numba" or "numpy"), its arguments checked before any work."""
    if backend is not None and (workdir is not None or kernel == "numpy"):
        raise SolverError(
            "a solve on a backend keeps its work in the backend's own store and runs the compiled kernel: "
            "give it neither a work folder nor the numpy kernel"
        )
    if precision not in ("auto", *PRECISIONS):
        raise SolverError(f"unknown precision {precision!r}; precisions: auto, {', '.join(PRECISIONS)}")
    kernel = kernel or "auto"
    if kernel not in ("auto", "numba", "numpy"):
        raise SolverError(f"unknown solver kernel {kernel!r}; kernels: auto, numba, numpy")
    from . import jit

    if kernel == "auto":
        kernel = "numba" if jit.AVAILABLE else "numpy"
    if kernel == "numba" and not jit.AVAILABLE:
        raise SolverError("the numba kernel was asked for but numba is not installed (pip install numba)")
    return kernel


def _rules_for(variant: Variant, objective: Objective, precision: str, model: RuleModel | None = None) -> RuleModel:
    """The variant's rules model (`model`, where it is the variant's), its scores explored up front (errors
    surface before the search), and the objective checked against them."""
    model = model if model is not None and model.variant is variant else RuleModel(variant)
    model.score_groups  # noqa: B018
    model.clamps  # noqa: B018
    if not isinstance(objective, Objective):
        check_objective(variant, objective)
    if objective.is_target:
        raise SolverError(
            f"objective {objective.id}: target play's values are vectors, solved by solver.target.solve_target "
            "(from the mean's Solution), not by solve"
        )
    if not objective.is_mean:
        if precision == "float32":
            raise SolverError(
                f"a risk objective's table is stored in float64 (its values span exp(theta x score)); "
                f"precision float32 cannot hold {objective.id}"
            )
        check_objective(variant, objective, model)
    return model
