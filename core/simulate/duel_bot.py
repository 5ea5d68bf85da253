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
from .duel_solve import MAX_MEMORY, DuelPlan, ExactDuel, open_solved, plan, solve
from .win import WinBot, WinPlanner, check_win, planner_for

if TYPE_CHECKING:
    from ..solver.solve import Solution

__all__ = ["AUTO_SECONDS", "DuelBot", "adopt", "DuelPolicy", "check_duel", "duel_folder", "duel_for", "duel_plan"]

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


def solved_in(folder: Path, p: DuelPlan) -> bool:
    """The folder holds every chunk of this plan (its manifest matching is checked when it is opened)."""
    import json

    try:
        done = json.loads((folder / "progress.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(done, dict) and all(len(done.get(x.name, {})) >= x.chunks for x in p.layers)


def adopt(variant: Variant, folder: Path, progress: Reporter | None = None) -> ExactDuel:
    """Hand a work folder's finished duel to bot:duel without solving it again: every chunk's digest checked,
    then its layer files linked (symbolic links: the work folder must stay) into `duel_folder`, the manifest
    and the record of finished chunks (last, so that an interrupted adoption is not taken for a finished one)
    copied beside them. Nothing in `folder` is written."""
    import os
    import shutil

    solution, _ = duel_plan(variant)
    exact = open_solved(solution, folder, verify=True, progress=progress)
    dest = duel_folder(variant)
    if dest.exists() and dest.resolve() == folder.resolve():
        return exact
    dest.mkdir(parents=True, exist_ok=True)
    (dest / "progress.json").unlink(missing_ok=True)
    for x in exact.plan.layers:
        link = dest / f"{x.name}.bin"
        link.unlink(missing_ok=True)
        link.symlink_to((folder / link.name).resolve())
    for name in ("duel.json", "progress.json"):
        shutil.copyfile(folder / name, dest / f"{name}.new")
        os.replace(dest / f"{name}.new", dest / name)
    return exact


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
    if solved_in(duel_folder(variant), p):
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
        if solved_in(folder, p):
            exact = open_solved(planner.solution, folder, progress=progress)
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
        self._outs: tuple[np.ndarray, np.ndarray] | None = None

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

    def outcomes(self) -> tuple[np.ndarray, np.ndarray]:
        """[states, outcomes]: each state row's turn outcomes as the rows they lead to (-1: no such outcome, or a
        full card) and the points they score, every state at once (made at first use, then kept)."""
        if self._outs is None:
            p, lay = self.planner, self.lay
            t = p.run.tables
            n, w = len(lay.slots), p.width
            rows = np.full((n, w), -1, dtype=np.int64)
            pts = np.zeros((n, w), dtype=np.int64)
            live = np.flatnonzero(lay.filled < lay.nb)
            s = lay.slots[live].astype(np.int64)
            succ, _ = p.successors(s)
            c = p.ctx_all[s]
            box, sl = t.out_box[c], t.out_slot[c]
            ok = (np.arange(w)[None, :] < p.n_out[c][:, None]) & (sl >= 0) & (sl < p.kmax)
            nxt = np.take_along_axis(succ, np.clip(box * p.kmax + sl, 0, succ.shape[1] - 1), axis=1)
            size = p.solution.index.size
            rows[live] = np.where(ok, lay.row[np.clip(nxt, 0, size)], -1)
            pts[live] = np.where(ok, t.out_pts[c], 0)
            self._outs = (rows, pts)
        return self._outs

    def leaves(self, mover: np.ndarray, other: np.ndarray, lead: np.ndarray) -> np.ndarray:
        """[positions, outcomes]: the mover's exact share of the win after each outcome of its turn (-inf: no such
        outcome), for positions (mover row, other row, mover's lead) whose cards have the same filled boxes."""
        rows, pts = self.outcomes()
        f = self.lay.filled
        out = np.full((len(mover), self.planner.width), -np.inf)
        if not len(mover):
            return out
        km, ko = int(f[mover[0]]), int(f[other[0]])
        if (f[mover] != km).any() or (f[other] != ko).any():
            raise DicecupError("internal error: positions of different layers valued together")
        nxt = self.exact.plan.layer(ko, km + 1)
        values = self.exact.values[nxt.name]
        m2, p = rows[mover], pts[mover]
        ok = m2 >= 0
        after = lead[:, None] + p  # the mover's lead after the outcome; the other then moves trailing by it
        col = nxt.R - after
        inside = ok & (col >= 0) & (col < nxt.width)
        flat = (other - int(self.starts[ko]))[:, None] * nxt.others + (m2 - int(self.starts[km + 1]))
        got = np.asarray(values[np.where(inside, flat, 0), np.where(inside, col, 0)], dtype=np.float64)
        out[:, : rows.shape[1]] = np.where(inside, 1.0 - got, np.where(ok, (after > 0) * 1.0, -np.inf))
        return out

    def leaf(self, mover: int, other: int, lead: int) -> np.ndarray:
        """[outcomes]: the mover's exact share of the win after each outcome of its turn (-inf: no such one)."""
        return self.leaves(np.array([mover]), np.array([other]), np.array([lead]))[0]

    def moves_many(self, mover: np.ndarray, other: np.ndarray, lead: np.ndarray) -> np.ndarray:
        """The movers' best-move rows [positions, rolls, decisions] (flagged as `WinPlanner.moves` writes them)."""
        slots = self.lay.slots[mover].astype(np.int64)
        return self.planner.moves(slots, self.leaves(mover, other, lead))

    def moves(self, mover: int, other: int, lead: int) -> np.ndarray:
        """The mover's best-move row [rolls, decisions] (flagged as `WinPlanner.moves` writes it)."""
        return self.moves_many(np.array([mover]), np.array([other]), np.array([lead]))[0]

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
