"""`bot:duel`: two-player play read from the exact duel's table (`duel_solve.ExactDuel`).

At a turn's start the position is (the mover's state, the other's, the mover's lead). Each outcome of the turn
(box, points p, successor s') hands the move to the other trailing by lead + p, so it is worth
1 - V'(other, s', -(lead + p)) to the mover, V' the next layer's values; the turn is folded over those leaf
values for that one position by the simulator's best-move kernel (`WinPlanner.moves`), so every decision
maximises the mover's exact share of the win. The table is solved in memory for small cards, or read from
the cache folder where `dicecup duel --keep` writes it; past that the bot is refused with the table's size.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ..errors import DicecupError, TooLarge
from ..game.state import GameState
from ..language.model import Card, Variant
from ..progress import Reporter
from ..store import store_of
from .duel import _Layout
from .duel_solve import MAX_MEMORY, DuelPlan, ExactDuel, plan, solve
from .win import WinBot, WinPlanner, check_win, planner_for

if TYPE_CHECKING:
    from ..solver.solve import Solution

__all__ = ["AUTO_SECONDS", "DuelBot", "DuelPolicy", "check_duel", "duel_folder", "duel_for", "duel_plan"]

AUTO_SECONDS = 60.0
"""The longest estimated single-thread solve bot:duel runs by itself, in memory; past it the table must be
solved beforehand (`dicecup duel -v ID --keep`)."""
KIND = "duel-tables"
KEPT = 2


def duel_folder(variant: Variant) -> Path:
    """Where `dicecup duel --keep` writes a variant's exact duel and bot:duel reads it: beside the solver's
    table in the cache folder, named by the same key (another solver or rules version: another folder)."""
    from ..solver.tablekeys import cache_path

    path = cache_path(variant)
    return path.with_name(path.stem + "-duel")


def _solved(folder: Path, p: DuelPlan) -> bool:
    """The folder holds every chunk of this plan (its manifest matching is checked when it is opened)."""
    import json

    try:
        done = json.loads((folder / "progress.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(done, dict) and all(len(done.get(x.name, {})) >= x.chunks for x in p.layers)


def duel_plan(variant: Variant) -> tuple[Solution, DuelPlan]:
    """The variant's mean solution (loaded or solved) and its duel's plan, after bot win's refusals."""
    from .optimal import solution_for

    check_win(variant)
    solution = solution_for(variant)
    return solution, plan(solution)


def check_duel(variant: Variant) -> None:
    """Refuse at once, with the table's size, a variant whose exact duel is neither solved in the cache folder
    nor small enough to solve in memory now (and whatever bot win refuses)."""
    _, p = duel_plan(variant)
    if _solved(duel_folder(variant), p):
        return
    secs = p.seconds(1)
    if p.disk > MAX_MEMORY or secs > AUTO_SECONDS:
        raise TooLarge(
            f"bot duel plays from the exact duel's table, and {p.describe(1)}; that is not solved yet: "
            f"solve it first with `dicecup duel -v {variant.id} --keep` (resumable), then play"
            if p.disk <= 64 * MAX_MEMORY
            else f"bot duel plays from the exact duel's table, and {p.describe(1)}: too large to solve here"
        )


def duel_for(variant: Variant, progress: Reporter | None = None) -> DuelPolicy:
    """The exact duel policy of a variant (the table read from `duel_folder` where solved there, else solved in
    memory in float64), one per fingerprint, kept by the engine that compiled the variant."""

    def make() -> DuelPolicy:
        check_duel(variant)
        planner = planner_for(variant, progress)
        p = plan(planner.solution)
        folder = duel_folder(variant)
        if _solved(folder, p):
            exact = solve(planner.solution, folder, progress=progress)
        else:
            exact = solve(planner.solution, dtype=np.float64, progress=progress)
        return DuelPolicy(planner, exact)

    return store_of(variant).get(
        KIND, variant.fingerprint, make, KEPT, valid=lambda got: got.planner.solution.variant.hooks is variant.hooks
    )


class DuelPolicy:
    """The exact duel's moves: the outcome values of one position's turn, and its best-move rows."""

    def __init__(self, planner: WinPlanner, exact: ExactDuel) -> None:
        self.planner, self.exact = planner, exact
        self.lay = _Layout(planner)
        counts = [np.count_nonzero(self.lay.filled == k) for k in range(self.lay.nb + 1)]
        self.starts = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        self._turns: dict[int, tuple[np.ndarray, np.ndarray]] = {}

    def row_of(self, card: Card) -> int:
        """A card's row among the duel's states (turn start; a DicecupError where no play reaches it)."""
        ix = self.planner.solution.index
        code, prog = ix.state_of_card(card)
        s = int(ix.lookup(np.array([code]), prog)[0])
        row = int(self.lay.row[s]) if 0 <= s < len(self.lay.row) else -1
        if row < 0:
            raise DicecupError(
                f"{self.exact.plan.variant_id}: bot duel has no value for this card (no play reaches it)"
            )
        return row

    def _turn(self, i: int) -> tuple[np.ndarray, np.ndarray]:
        got = self._turns.get(i)
        if got is None:
            _, rows, pts, _, _ = self.lay.turn(i)
            got = self._turns[i] = (rows, pts)
        return got

    def leaf(self, mover: int, other: int, lead: int) -> np.ndarray:
        """[outcomes]: the mover's exact share of the win after each outcome of its turn (-inf: no such one)."""
        rows, pts = self._turn(mover)
        f = self.lay.filled
        km, ko = int(f[mover]), int(f[other])
        out = np.full(self.planner.width, -np.inf)
        o = other - int(self.starts[ko])
        for u, (m2, p) in enumerate(zip(rows.tolist(), pts.tolist(), strict=True)):
            if m2 >= 0:
                after = self.exact.value(ko, km + 1, o, m2 - int(self.starts[km + 1]), -(lead + p))
                out[u] = 1.0 - after
        return out

    def moves(self, mover: int, other: int, lead: int) -> np.ndarray:
        """The mover's best-move row [rolls, decisions] (flagged as `WinPlanner.moves` writes it)."""
        slots = np.array([self.lay.slots[mover]], dtype=np.int64)
        return self.planner.moves(slots, self.leaf(mover, other, lead)[None])[0]

    def value(self, mover: int, other: int, lead: int) -> float:
        """The mover's exact share of the win at this turn's start."""
        f = self.lay.filled
        km, ko = int(f[mover]), int(f[other])
        return self.exact.value(km, ko, mover - int(self.starts[km]), other - int(self.starts[ko]), lead)


class DuelBot(WinBot):
    """Plays a two-player game exactly: each decision maximises its chance of winning (a tie half) given both
    cards and the lead, read from the exact duel's table. Earlier games of a match are played for the mean."""

    name = "duel"

    def __init__(self, rng: random.Random | None = None) -> None:
        super().__init__(rng)

    def prepare(self, variant: Variant, progress: Reporter | None = None) -> None:
        """Load or solve the duel's table now (a game asks before it starts), telling `progress`."""
        duel_for(variant, progress)

    def row(self, state: GameState) -> tuple[np.ndarray, int]:
        v = state.variant
        if len(state.players) != 2:
            raise DicecupError(
                f"bot duel plays games of two players, and this one has {len(state.players)}; with more, use bot:win"
            )
        if state.round < state.rounds:
            return super().row(state)  # not the match's last game: the mean's play, as bot win plays it
        policy = duel_for(v)
        key = ("duel", v.fingerprint, state.cards, state.current, tuple(r.totals for r in state.results))
        got = self._rows.get(key)
        if got is not None:
            return got
        me, other = state.current, 1 - state.current
        carried = [sum(r.totals[i] for r in state.results) for i in range(2)]
        lead = int(v.points_so_far(state.cards[me])) + carried[me]
        lead -= int(v.points_so_far(state.cards[other])) + carried[other]
        moves = policy.moves(policy.row_of(state.cards[me]), policy.row_of(state.cards[other]), lead)
        got = self._rows[key] = (moves, policy.planner.flag)
        if len(self._rows) > 64:
            self._rows.popitem(last=False)
        return got
