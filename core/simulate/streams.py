"""Per-game random streams for the numpy simulator: game g of a run draws only from its own stream.

Game g's stream is the splitmix64 sequence the compiled player gives it (`jit.seed_streams`), and dice
are drawn from it as that player draws them (a byte per die where faces <= 16, 32 bits otherwise,
redrawn past the largest multiple of the faces; each turn from a fresh word): a game's dice depend
only on the seed and its number, never on the batch it is played in, and the numpy policies play on
the very dice the compiled player would. Here the games are stepped together, as numpy arrays.
"""

from __future__ import annotations

import numpy as np

from .jit import seed_streams

__all__ = ["GameStreams", "RowStreams"]

_GAMMA = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_BYTE, _WORD32 = np.uint64(0xFF), np.uint64(0xFFFFFFFF)


class GameStreams:
    """The streams of games first_game .. first_game + games - 1 of a run (row i: game first_game + i)."""

    def __init__(self, seed: int, first_game: int, games: int, faces: int) -> None:
        self.state = seed_streams(seed, first_game, games)
        self.buf = np.zeros(games, dtype=np.uint64)  # each game's bits drawn but not used yet this turn
        self.left = np.zeros(games, dtype=np.int64)  # ... in chunks (bytes or 32-bit halves)
        self.faces = faces
        small = faces <= 16
        self.chunk_bits = np.uint64(8 if small else 32)
        self.chunks = 8 if small else 2
        self.mask = _BYTE if small else _WORD32
        # a chunk below `limit` gives face chunk % faces + 1; one at or above it is drawn again (no bias)
        self.limit = np.uint64(256 - 256 % faces if small else (1 << 32) - (1 << 32) % faces)

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

    def dice(self, free: np.ndarray, width: int) -> np.ndarray:
        """int64 [rows, width]: row j's first free[j] entries are faces drawn in turn from its game's stream
        (the rest 0)."""
        s = self.streams
        out = np.zeros((len(self.rows), width), dtype=np.int64)
        for c in range(width):
            need = np.flatnonzero(free > c)
            while need.size:
                g = self.rows[need]
                empty = g[s.left[g] == 0]
                if empty.size:
                    s.buf[empty] = s.next_words(empty)
                    s.left[empty] = s.chunks
                bits = s.buf[g]
                s.buf[g] = bits >> s.chunk_bits
                s.left[g] -= 1
                x = bits & s.mask
                ok = x < s.limit
                out[need[ok], c] = (x[ok] % np.uint64(s.faces)).astype(np.int64) + 1
                need = need[~ok]
        return out

    def random(self, size: int) -> np.ndarray:
        """float64 [rows] uniform on [0, 1): 53 bits of a fresh word of each row's stream (`size`: the rows)."""
        if size != len(self.rows):
            raise ValueError(f"random({size}) for {len(self.rows)} rows: one number per row")
        return (self.streams.next_words(self.rows) >> np.uint64(11)).astype(np.float64) * 2.0**-53
