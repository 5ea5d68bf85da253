"""Matches of `bot:win` against `bot:optimal`, played in lockstep in solver states (`dicecup match`).

Each seat's turn is drawn from its exact law under the seat's policy (`win.WinPlanner.outcomes`), which is
how its dice would fall, a chunk of games at a time; the lineup is rotated one seat per game.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import numpy as np
from attrs import field, frozen

from ..errors import DicecupError
from ..language.model import Card
from ..locales import N_, NP_, Phrase
from ..progress import Reporter, task
from .win import WinPlanner

__all__ = ["MatchResult", "play_matches", "player_figures"]


@frozen
class MatchResult:
    """Games of one `bot:win` seat against `bot:optimal` in the others (seats rotated): the win seat's share
    of each game's win (1, 1/k for a k-way tie, 0) and every seat's final score."""

    variant_id: str
    players: int
    share: np.ndarray = field(repr=False)  # float64 [games]
    finals: np.ndarray = field(repr=False)  # int64 [games, players]
    win_seat: np.ndarray = field(repr=False)  # int64 [games]
    seconds: float

    def rate(self) -> tuple[float, float]:
        """(mean share of the win, half-width of its 95% confidence interval, normal approximation)."""
        n = len(self.share)
        mean = float(self.share.mean())
        sd = float(self.share.std(ddof=1)) if n > 1 else 0.0
        return mean, 1.959963984540054 * sd / max(n, 1) ** 0.5


def play_matches(
    planner: WinPlanner,
    players: int,
    games: int,
    seed: int = 0,
    chunk: int = 16384,
    win_seats: bool = True,
    progress: Reporter | None = None,
) -> MatchResult:
    """`games` games of `players` players, game g's seat g % players played by `bot:win` and the others by
    `bot:optimal` (`win_seats` False: every seat by `bot:optimal`, the control). Played a chunk of games in
    lockstep, turn by turn in solver states (value slot and points so far per seat): each turn's outcome
    (box, points, successor) drawn from its exact law under the seat's policy (`WinPlanner.outcomes`), which
    is how its dice would fall. The same seed plays the same games; `progress` hears of the games played."""
    if players < 2:
        raise DicecupError(Phrase(N_("a match needs at least two players")))
    t0 = time.perf_counter()
    sol = planner.solution
    rng = np.random.default_rng(seed)
    share = np.empty(games)
    finals = np.empty((games, players), dtype=np.int64)
    seat = np.arange(games, dtype=np.int64) % players
    with task(progress, Phrase(N_("bot optimal's moves in every state of {variant}"), variant=sol.variant.id)):
        mean = planner.mean_table()
    playing = NP_("playing {games} game of {variant}", "playing {games} games of {variant}")
    with task(progress, Phrase(playing, n=games, games=f"{games:,}", variant=sol.variant.id), games, "games") as told:
        for a in range(0, games, chunk):
            _play_chunk(planner, players, a, min(chunk, games - a), seat, mean, rng, win_seats, share, finals, told)
    return MatchResult(sol.variant.id, players, share, finals, seat, time.perf_counter() - t0)


def _play_chunk(
    planner: WinPlanner,
    players: int,
    a: int,
    n: int,
    seat: np.ndarray,
    mean: np.ndarray,
    rng: np.random.Generator,
    win_seats: bool,
    share: np.ndarray,
    finals: np.ndarray,
    told: Reporter,
) -> None:
    """Games a .. a + n - 1 of a match, played in lockstep (`play_matches`), into `share` and `finals`."""
    sol = planner.solution
    nb = len(sol.variant.box_ids)
    lo = planner.table.lo
    slot = np.full((n, players), planner.slot_of(Card()), dtype=np.int64)
    pts = np.zeros((n, players), dtype=np.int64)
    mine = seat[a : a + n]
    for t in range(nb):
        for p in range(players):
            here = slot[:, p].copy()
            succ, after = planner.successors(here)
            is_win = (mine == p) if win_seats else np.zeros(n, dtype=bool)
            moves: np.ndarray = np.empty((n, sol.graph.n_rolls, sol.variant.rolls), dtype=planner.dtype)
            m = ~is_win
            if m.any():
                moves[m] = mean[here[m]]
            if is_win.any():
                w = np.flatnonzero(is_win)
                others = [q for q in range(players) if q != p]
                start_s, curve = planner.curves(slot[w][:, others], pts[w][:, others])
                leaf = planner.leaves(here[w], pts[w, p], succ[w], start_s, curve)
                moves[w] = planner.moves(here[w], leaf)
            acc, nxt = planner.outcomes(here, moves, succ)
            cum = np.cumsum(acc, axis=1)
            u = (1.0 - rng.random(n)) * cum[:, -1]  # in (0, total]: never an outcome of no chance
            o = np.minimum((cum < u[:, None]).sum(axis=1), acc.shape[1] - 1)
            rows = np.arange(n)
            slot[:, p] = nxt[rows, o]
            pts[:, p] += planner.points(here)[rows, o]
        told.advance(n * (t + 1) // nb - n * t // nb)
    final = pts + lo[slot]  # a full card's remaining points: its end bonus
    finals[a : a + n] = final
    best = final.max(axis=1)
    top = final == best[:, None]
    share[a : a + n] = np.where(top[np.arange(n), mine], 1.0 / top.sum(axis=1), 0.0)


def player_figures(result: MatchResult, kinds: Sequence[str]) -> list[dict[str, Any]]:
    """Per player of a lineup (`kinds`: "win" at most once, "optimal" in the rest, in the order given; the
    lineup rotated one seat per game as `play_matches` rotates bot:win's seat): its share of the wins (a
    k-way tie counts 1/k) with a 95% confidence interval (normal approximation) and its mean final score."""
    n, players = result.finals.shape
    if len(kinds) != players:
        raise DicecupError(f"internal error: {len(kinds)} players for games of {players}")
    w = kinds.index("win") if "win" in kinds else 0
    rows = np.arange(n)
    top = result.finals == result.finals.max(axis=1, keepdims=True)
    split = top.sum(axis=1)
    out = []
    for i, kind in enumerate(kinds):
        seat = (result.win_seat + (i - w)) % players  # player i sits i - w seats after bot:win's seat
        share = np.where(top[rows, seat], 1.0 / split, 0.0)
        mean = float(share.mean()) if n else 0.0
        sd = float(share.std(ddof=1)) if n > 1 else 0.0
        half = 1.959963984540054 * sd / max(n, 1) ** 0.5
        scores = result.finals[rows, seat]
        out.append(
            {
                "player": f"bot:{kind}",
                "win_share": mean,
                "ci95": [max(0.0, mean - half), min(1.0, mean + half)],
                "outright": float((top[rows, seat] & (split == 1)).mean()) if n else 0.0,
                "mean_score": float(scores.mean()) if n else 0.0,
                "sd_score": float(scores.std(ddof=1)) if n > 1 else 0.0,
            }
        )
    return out
