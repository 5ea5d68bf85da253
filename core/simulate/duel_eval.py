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
from .win import WinPlanner

__all__ = ["DuelGames", "evaluate_layers", "play_duels"]

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
) -> DuelGames:
    """`games` games of player one playing `first` and player two `second`, in lockstep, every roll of the
    dice drawn and every keep and box read from the player's best-move row for its position."""
    for p in (first, second):
        if p not in POLICIES:
            raise DicecupError(f"unknown policy {p!r}; policies: {', '.join(POLICIES)}")
    t0 = time.perf_counter()
    rng = np.random.default_rng(seed)
    pol = DuelPolicy(planner, exact)
    lay = pol.lay
    dice = _Dice(planner)
    rolls = planner.solution.variant.rolls
    mean = planner.mean_table() if "optimal" in (first, second) else None
    pos = np.zeros((games, 2), dtype=np.int64)  # each player's row among the duel's states
    pts = np.zeros((games, 2), dtype=np.int64)
    cache: dict[tuple[str, int, int, int], np.ndarray] = {}
    turns: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
    with task(progress, f"{games:,} games of {first} against {second}", 2 * lay.nb, "turns") as told:
        for _ in range(lay.nb):
            for me, policy in ((0, first), (1, second)):
                keys = np.stack([pos[:, me], pos[:, 1 - me], pts[:, me] - pts[:, 1 - me]], axis=1)
                uniq, back = np.unique(keys, axis=0, return_inverse=True)
                table = np.stack([_moves(planner, pol, policy, mean, tuple(k), cache) for k in uniq.tolist()])
                moves = table[back.reshape(-1)]
                box, f, r = _play_turn(moves, dice, rolls, rng)
                for g in np.unique(pos[:, me]).tolist():
                    at = pos[:, me] == g
                    if g not in turns:
                        _, rows, outs, oid, _ = lay.turn(g)
                        turns[g] = (rows, outs, oid)
                    rows, outs, oid = turns[g]
                    u = oid[f[at], box[at], r[at]]
                    pts[at, me] += outs[u]
                    pos[at, me] = rows[u]
                told.advance(1)
    ends = lay.ends
    final = pts + ends[pos]
    share = np.where(final[:, 0] > final[:, 1], 1.0, np.where(final[:, 0] == final[:, 1], 0.5, 0.0))
    return DuelGames(first, second, share, time.perf_counter() - t0)


def _moves(
    planner: WinPlanner,
    pol: DuelPolicy,
    policy: str,
    mean: np.ndarray | None,
    key: tuple[int, int, int],
    cache: dict[tuple[str, int, int, int], np.ndarray],
) -> np.ndarray:
    """The best-move row of a policy at a turn's start (mover row, other row, lead), kept for the run."""
    got = cache.get((policy, *key))
    if got is not None:
        return got
    i, j, lead = key
    slot = np.array([pol.lay.slots[i]], dtype=np.int64)
    if policy == "optimal":
        assert mean is not None
        got = mean[slot[0]]
    elif policy == "exact":
        got = pol.moves(i, j, lead)
    else:
        succ, _ = planner.successors(slot)
        start, curve = planner.curves(np.array([[pol.lay.slots[j]]]), np.zeros((1, 1), dtype=np.int64))
        leaf = planner.leaves(slot, np.array([lead]), succ, start, curve)
        got = planner.moves(slot, leaf)[0]
    cache[(policy, *key)] = got
    return got


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
