"""A variant's turns as the kernels see them, without any table of values: what bot:win's planner and the exact
two-player game both fold over."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..numeric import propagate
from . import distribution as dist

if TYPE_CHECKING:
    from ..solver.solve import Solution

__all__ = ["TurnOutcomes"]


class TurnOutcomes:
    """A variant's turns as the kernels see them, without any table: score contexts, outcomes (box, successor
    slot, points) and successor slots of every live turn-start state (what `WinPlanner` and the exact duel
    fold over)."""

    def __init__(self, solution: Solution) -> None:
        self.solution = solution
        ix = solution.index
        codes, progs = ix.states()
        values = solution.column()
        self.live = np.flatnonzero(np.isfinite(values[: ix.size]) & ((codes & ix.full) != ix.full))
        self.codes, self.progs = codes, progs
        self.run = dist.LayerPass(solution, codes[self.live])
        t = self.run.tables
        self.ctx_all = np.full(ix.size + 1, -1, dtype=np.int64)
        self.ctx_all[self.live] = t.dense(solution, codes[self.live])
        self.n_out = self.run.outs.n  # a context's outcomes (the rest: padding)
        self.width = t.out_box.shape[1]
        self.kmax = self.run.slot_add.shape[1]

    def successors(self, slots: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(successor value slot of each (box, slot) [n, boxes * kmax], solver value there) of turn-start states."""
        r = self.run
        c, p = self.codes[slots], np.ascontiguousarray(self.progs[slots])
        n = len(slots)
        succ = np.empty((n, r.slot_add.shape[0] * self.kmax), dtype=np.int64)
        after = np.empty(succ.shape)
        propagate.successor_slots(c, p, r.nexts, r.states, r.values, succ, after)
        return succ, after
