"""Fixed policies against the exact duel, layer by layer: their exact shares of the win, and sampled games.

`evaluate_layers` is `duel.evaluate` over the layered solve's own layers (each with its lead bound, only the
card pairs that occur), so it reaches cards the one dense array cannot hold. `play_duels` plays games with
dice, roll by roll, each player's decisions read from its best-move rows (`bot:duel`'s, `bot:win`'s or
`bot:optimal`'s), as a check by sampling of the exact figures.
"""

from __future__ import annotations

import time

import numpy as np
from attrs import field, frozen

from ..errors import DicecupError
from ..progress import Reporter, task
from .duel import POLICIES
from .duel_bot import DuelPolicy
from .duel_solve import DuelLayer, ExactDuel
from .matches import MatchResult
from .win import WinPlanner

__all__ = ["DuelGames", "duel_match", "evaluate_layers", "play_duels"]

BATCH = 1 << 13
"""Games played in lockstep at once by `play_duels`, bounding the memory of their best-move rows."""
CHUNK_ROWS = 1 << 15
"""Positions (other state x lead) whose moves are made at once, bounding the memory of a mover's turn."""


def _after(Vn: np.ndarray, Rn: int, o: np.ndarray, rows: np.ndarray, pts: np.ndarray, R: int) -> np.ndarray:
    """[len(o), 2R + 1, outcomes]: 1 - Vn[o, m', Rn - (d + p)] for each outcome (m', p) of the mover's turn, the
    other at o (rows of the next layer's movers), every lead |d| <= R; past the next bound Rn the sign decides;
    -inf for an outcome the turn cannot have."""
    d = np.arange(-R, R + 1)
    out = np.full((len(o), 2 * R + 1, len(pts)), -np.inf)
    Bn = 2 * Rn + 1
    for u, (m2, p) in enumerate(zip(rows.tolist(), pts.tolist(), strict=True)):
        if m2 < 0:
            continue
        lead = d + p
        idx = Rn - lead
        inside = (idx >= 0) & (idx < Bn)
        vals = Vn[o[:, None], m2, np.clip(idx, 0, Bn - 1)[None, :]]
        out[:, :, u] = np.where(inside[None, :], 1.0 - vals, np.where(lead > 0, 1.0, 0.0)[None, :])
    return out


def _optimum(exact: ExactDuel, layer: DuelLayer) -> np.ndarray:
    """A layer of the layered solve as a [movers, others, 2R + 1] float64 array."""
    raw = exact.values[layer.name]
    return np.asarray(raw, dtype=np.float64).reshape(layer.movers, layer.others, layer.width)


def evaluate_layers(
    planner: WinPlanner, exact: ExactDuel, first: str, second: str, progress: Reporter | None = None
) -> float:
    """Player one's exact share of the win (a tie half) when it plays `first` and player two `second` (each
    "exact": bot:duel, "win": bot:win, "optimal": bot:optimal), from the layered solve's values, one layer
    held beside the next."""
    for p in (first, second):
        if p not in POLICIES:
            raise DicecupError(f"unknown policy {p!r}; policies: {', '.join(POLICIES)}")
    L = DuelPolicy(planner, exact)
    layers = exact.plan.layers
    mean = planner.mean_table() if "optimal" in (first, second) else None
    E = _optimum(exact, layers[0])  # both cards full: the end bonuses and the lead decide, whoever plays
    total = sum(x.values for x in layers[1:])
    with task(progress, f"{first} against {second} in {exact.plan.variant_id}", total, "values") as told:
        for prev, layer in zip(layers, layers[1:], strict=False):
            policy = second if layer.km < layer.ko else first
            Vn = _optimum(exact, prev) if policy == "exact" else None
            E = _policy_layer(planner, L, layer, prev, E, Vn, policy, mean, told=told)
    return float(E[0, 0, layers[-1].R])


def _policy_layer(
    planner: WinPlanner,
    L: DuelPolicy,
    layer: DuelLayer,
    prev: DuelLayer,
    En: np.ndarray,
    Vn: np.ndarray | None,
    policy: str,
    mean: np.ndarray | None,
    told: Reporter,
) -> np.ndarray:
    """One layer's values of the fixed policies from the next layer's `En` (`Vn`: the optimum's, for "exact")."""
    lay = L.lay
    R, B = layer.R, layer.width
    d = np.arange(-R, R + 1)
    E = np.empty((layer.movers, layer.others, B))
    per = max(1, CHUNK_ROWS // B)
    for i in range(layer.movers):
        g = int(L.starts[layer.km]) + i
        succ, rows, pts, _, _ = lay.turn(g)
        rows_n = np.where(rows >= 0, rows - L.starts[layer.km + 1], -1)
        for a in range(0, layer.others, per):
            o = np.arange(a, min(layer.others, a + per))
            m = len(o) * B
            slots = np.full(m, lay.slots[g], dtype=np.int64)
            s_rep = np.repeat(succ, m, axis=0)
            if policy == "optimal":
                assert mean is not None
                moves = np.repeat(mean[lay.slots[g]][None], m, axis=0)
            elif policy == "exact":
                assert Vn is not None
                leaf = np.full((m, planner.width), -np.inf)
                leaf[:, : len(pts)] = _after(Vn, prev.R, o, rows_n, pts, R).reshape(m, -1)
                moves = planner.moves(slots, leaf)
            else:
                opp = np.repeat(lay.slots[int(L.starts[layer.ko]) + o], B)[:, None]
                start, curve = planner.curves(opp, np.zeros((m, 1), dtype=np.int64))
                leaf = planner.leaves(slots, np.tile(d, len(o)), s_rep, start, curve)
                moves = planner.moves(slots, leaf)
            acc, _ = planner.outcomes(slots, moves, s_rep)
            acc = acc[:, : len(pts)]
            worth = _after(En, prev.R, o, rows_n, pts, R).reshape(m, -1)
            E[i, o] = (acc * np.where(acc > 0, worth, 0.0)).sum(axis=1).reshape(len(o), B)
            told.advance(m)
    return E


@frozen
class DuelGames:
    """Games played with dice between two policies: player one's share of each game's win (1, 1/2, 0)."""

    first: str
    second: str
    share: np.ndarray = field(repr=False)
    seconds: float
    finals: np.ndarray = field(repr=False, default=None)  # int64 [games, 2]: each player's final score

    @property
    def mean(self) -> float:
        return float(self.share.mean())

    @property
    def stderr(self) -> float:
        return float(self.share.std(ddof=1) / np.sqrt(len(self.share))) if len(self.share) > 1 else 0.0


class _Dice:
    """Rolls by their graph rows: dice drawn, sorted and looked up by a mixed-radix code."""

    def __init__(self, planner: WinPlanner) -> None:
        sol = planner.solution
        v = sol.variant
        self.n, self.faces, self.flag = v.dice, v.faces, planner.flag
        graph = sol.graph
        self.first_row = int(graph.roll_rows[0])
        self.lookup = np.full((v.faces + 1) ** v.dice, -1, dtype=np.int64)
        for dice, row in graph.index.items():
            if len(dice) == v.dice and row >= self.first_row:
                self.lookup[self.code(np.array([dice]))[0]] = row - self.first_row

    def code(self, dice: np.ndarray) -> np.ndarray:
        return (dice * (self.faces + 1) ** np.arange(self.n)).sum(axis=1)

    def rows(self, dice: np.ndarray) -> np.ndarray:
        got = self.lookup[self.code(np.sort(dice, axis=1))]
        if (got < 0).any():
            raise DicecupError("internal error: a roll with no row in the roll graph")
        return got


def play_duels(
    planner: WinPlanner,
    exact: ExactDuel,
    first: str,
    second: str,
    games: int,
    seed: int = 0,
    progress: Reporter | None = None,
    batch: int = BATCH,
) -> DuelGames:
    """`games` games of player one playing `first` and player two `second`, `batch` at a time in lockstep: every
    roll of the dice drawn, every keep and box read from best-move rows made for all the games' positions at
    once by the compiled kernels (no Python per game or roll)."""
    for p in (first, second):
        if p not in POLICIES:
            raise DicecupError(f"unknown policy {p!r}; policies: {', '.join(POLICIES)}")
    if games < 1 or batch < 1:
        raise DicecupError(f"games and batch must be at least 1, got {games:,} and {batch:,}")
    t0 = time.perf_counter()
    rng = np.random.default_rng(seed)
    pol = DuelPolicy(planner, exact)
    lay = pol.lay
    goes, points = pol.outcomes()
    dice = _Dice(planner)
    rolls = planner.solution.variant.rolls
    oid = planner.run.tables.oid
    mean = planner.mean_table() if "optimal" in (first, second) else None
    share = np.empty(games)
    finals = np.empty((games, 2), dtype=np.int64)
    with task(progress, f"{games:,} games of {first} against {second}", games * 2 * lay.nb, "turns") as told:
        for a in range(0, games, batch):
            n = min(batch, games - a)
            pos = np.zeros((n, 2), dtype=np.int64)  # each player's row among the duel's states
            pts = np.zeros((n, 2), dtype=np.int64)
            for _ in range(lay.nb):
                for me, policy in ((0, first), (1, second)):
                    m = pos[:, me]
                    moves = _moves(planner, pol, policy, mean, m, pos[:, 1 - me], pts[:, me] - pts[:, 1 - me])
                    box, f, r = _play_turn(moves, dice, rolls, rng)
                    u = oid[planner.ctx_all[lay.slots[m]], f, box, r]
                    if (u < 0).any():
                        raise DicecupError("internal error: a turn ended in an outcome its state does not have")
                    pts[:, me] += points[m, u]
                    pos[:, me] = goes[m, u]
                    told.advance(n)
            final = finals[a : a + n] = pts + lay.ends[pos]
            share[a : a + n] = np.where(final[:, 0] > final[:, 1], 1.0, np.where(final[:, 0] == final[:, 1], 0.5, 0.0))
    return DuelGames(first, second, share, time.perf_counter() - t0, finals)


def duel_match(
    planner: WinPlanner, exact: ExactDuel, kinds: list[str], games: int, seed: int = 0, progress: Reporter | None = None
) -> MatchResult:
    """A two-player match (`dicecup match`) where a seat is bot:duel: `kinds` the two players' bots ("duel",
    "win" or "optimal"), the lineup rotated one seat per game as `play_matches` rotates it (game g: the first
    player of `kinds` in seat g % 2), the games played with dice by `play_duels`. As `MatchResult`, whose
    reference seat is bot:win's where it plays, else the first player's (what `player_figures` reads)."""
    if len(kinds) != 2:
        raise DicecupError(f"internal error: a duel match of {len(kinds)} players")
    policy = [{"duel": "exact"}.get(k, k) for k in kinds]
    finals = np.empty((games, 2), dtype=np.int64)  # by seat
    t0 = time.perf_counter()
    for g0, a, b in ((0, 0, 1), (1, 1, 0)):  # games where player a sits first
        n = len(range(g0, games, 2))
        if n:
            got = play_duels(planner, exact, policy[a], policy[b], n, 2 * seed + g0, progress)
            finals[g0::2] = got.finals
    ref = kinds.index("win") if "win" in kinds else 0
    seat = (np.arange(games, dtype=np.int64) + ref) % 2
    rows = np.arange(games)
    mine, theirs = finals[rows, seat], finals[rows, 1 - seat]
    share = np.where(mine > theirs, 1.0, np.where(mine == theirs, 0.5, 0.0))
    return MatchResult(exact.plan.variant_id, 2, share, finals, seat, time.perf_counter() - t0)


def _moves(
    planner: WinPlanner,
    pol: DuelPolicy,
    policy: str,
    mean: np.ndarray | None,
    mover: np.ndarray,
    other: np.ndarray,
    lead: np.ndarray,
) -> np.ndarray:
    """A policy's best-move rows [games, rolls, decisions] at the games' turn starts (mover row, other row,
    lead), each distinct position made once."""
    slots = pol.lay.slots[mover].astype(np.int64)
    if policy == "optimal":
        assert mean is not None
        return mean[slots]
    keys, back = np.unique(np.stack([mover, other, lead], axis=1), axis=0, return_inverse=True)
    m, o, d = keys[:, 0], keys[:, 1], keys[:, 2]
    if policy == "exact":
        got = pol.moves_many(m, o, d)
    else:
        s = pol.lay.slots[m].astype(np.int64)
        succ, _ = planner.successors(s)
        opp = pol.lay.slots[o].astype(np.int64)[:, None]
        start, curve = planner.curves(opp, np.zeros((len(keys), 1), dtype=np.int64))
        got = planner.moves(s, planner.leaves(s, d, succ, start, curve))
    return got[back.reshape(-1)]


def _play_turn(
    moves: np.ndarray, dice: _Dice, rolls: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each game's turn with dice by its move row: (box scored, 1 if on the first roll, the roll's row)."""
    n = len(moves)
    flag = dice.flag
    held = np.zeros((n, dice.n), dtype=np.int64)  # dice kept (0: to roll)
    done = np.zeros(n, dtype=bool)
    box = np.zeros(n, dtype=np.int64)
    first = np.zeros(n, dtype=np.int64)
    row = np.zeros(n, dtype=np.int64)
    ar = np.arange(n)
    for k in range(rolls):
        live = ~done
        fresh = rng.integers(1, dice.faces + 1, size=(n, dice.n))
        roll = np.sort(np.where(held > 0, held, fresh), axis=1)
        r = dice.rows(roll)
        x = moves[ar, r, k].astype(np.int64)
        scores = live & (((x & flag) != 0) | (k == rolls - 1))
        box[scores] = x[scores] & (flag - 1)
        first[scores] = int(k == 0)
        row[scores] = r[scores]
        done |= scores
        bits = (x[:, None] >> np.arange(dice.n)[None, :]) & 1
        held = np.where(bits == 1, roll, 0)
    return box, first, row
