"""Per-game random streams for the numpy simulator: game g of a run draws only from its own stream.

Game g's stream is the splitmix64 sequence the compiled player gives it (`numeric.draws.seed_streams`), and dice
are drawn from it as that player draws them (`numeric.draws.roll_draws`: a roll's dice in chunks, each one uniform
outcome from 32 bits, drawn again below Lemire's bound, whose base-faces digits are the dice; each turn
from a fresh word): a game's dice depend only on the seed and its number, never on the batch it is
played in, and the numpy policies play on the very dice the compiled player would. Here the games are
stepped together, as numpy arrays.
"""

from __future__ import annotations

import numpy as np

from ..numeric.draws import chunk_faces, roll_draws, seed_streams

__all__ = ["GameStreams", "RowStreams"]

_GAMMA = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_WORD32 = np.uint64(0xFFFFFFFF)
_HALF = np.uint64(32)


class GameStreams:
    """The streams of games first_game .. first_game + games - 1 of a run (row i: game first_game + i)."""

    def __init__(self, seed: int, first_game: int, games: int, faces: int, dice: int) -> None:
        self.state = seed_streams(seed, first_game, games)
        self.buf = np.zeros(games, dtype=np.uint64)  # each game's bits drawn but not used yet this turn
        self.left = np.zeros(games, dtype=np.int64)  # ... in 32-bit halves
        self.faces = faces
        self.draws = roll_draws(dice, faces, np.zeros(0, dtype=np.int64))

    def new_turn(self) -> None:
        """A turn's dice start from a fresh word of each stream."""
        self.left[:] = 0

    def next_words(self, rows: np.ndarray) -> np.ndarray:
        """Advance the streams of rows `rows` (distinct) once: 64 random bits each."""
        z = self.state[rows] + _GAMMA
        self.state[rows] = z
        z = (z ^ (z >> np.uint64(30))) * _MIX1
        z = (z ^ (z >> np.uint64(27))) * _MIX2
        return z ^ (z >> np.uint64(31))

    def at(self, rows: np.ndarray) -> RowStreams:
        """Draws for the games of rows `rows` (distinct), row j of each draw from game rows[j]'s stream."""
        return RowStreams(self, np.asarray(rows, dtype=np.int64))


class RowStreams:
    """What the batched games and the numpy policies draw, for some rows of a `GameStreams`."""

    def __init__(self, streams: GameStreams, rows: np.ndarray) -> None:
        self.streams = streams
        self.rows = rows

    def _outcomes(self, need: np.ndarray, j: np.ndarray) -> np.ndarray:
        """One chunk's outcome (uniform 0 .. faces ** j - 1) for each row need[k] (positions in `rows`) of j[k]
        dice, from the next 32 bits of its stream, drawn again where `numeric.draws.chunk` draws again."""
        s, rd = self.streams, self.streams.draws
        n, low = rd.outcomes[j], rd.low[j]
        out = np.empty(len(need), dtype=np.int64)
        todo = np.arange(len(need))
        while todo.size:
            g = self.rows[need[todo]]
            empty = g[s.left[g] == 0]
            if empty.size:
                s.buf[empty] = s.next_words(empty)
                s.left[empty] = 2
            bits = s.buf[g]
            s.buf[g] = bits >> _HALF
            s.left[g] -= 1
            m = (bits & _WORD32) * n[todo]
            ok = (m & _WORD32) >= low[todo]
            out[todo[ok]] = (m[ok] >> _HALF).astype(np.int64)
            todo = todo[~ok]
        return out

    def dice(self, free: np.ndarray, width: int) -> np.ndarray:
        """int64 [rows, width]: row j's first free[j] entries are faces drawn in turn from its game's stream
        (the rest 0)."""
        s = self.streams
        per = s.draws.per
        free = np.asarray(free, dtype=np.int64)
        out = np.zeros((len(self.rows), width), dtype=np.int64)
        for c in range(0, width, per):  # the chunk of dice c .. c + per - 1 of each row that rolls that many
            need = np.flatnonzero(free > c)
            if not need.size:
                break
            j = np.minimum(free[need] - c, per)
            faces = chunk_faces(self._outcomes(need, j), per, s.faces)
            for i in range(min(per, width - c)):
                sel = i < j
                out[need[sel], c + i] = faces[sel, i]
        return out

    def random(self, size: int) -> np.ndarray:
        """float64 [rows] uniform on [0, 1): 53 bits of a fresh word of each row's stream (`size`: the rows)."""
        if size != len(self.rows):
            raise ValueError(f"random({size}) for {len(self.rows)} rows: one number per row")
        return (self.streams.next_words(self.rows) >> np.uint64(11)).astype(np.float64) * 2.0**-53
