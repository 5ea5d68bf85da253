"""How a simulated game's dice are drawn: its own splitmix64 stream, a chunk of dice a 32-bit draw.

A game's dice depend only on (seed, game number), not on how games are batched or how many threads play them.
A chunk's outcome is one look-up away from its multiset's key (`HandKeys`), so a roll is one draw and one
look-up rather than one a die. The records and their builders are numpy; the drawing itself is compiled
(`compiled.NUMBA_KERNELS`).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any

import numpy as np

from . import compiled
from .records import HandKeys, RollDraws

__all__ = [
    "CHUNK_OUTCOMES",
    "HAND_KEYS",
    "DiceStreams",
    "chunk",
    "chunk_faces",
    "compiled_names",
    "hand_keys",
    "roll_draws",
    "seed_streams",
]

MASK64 = (1 << 64) - 1
HAND_KEYS = 1 << 20  # keys at most (the table's size): past this, rolls walk the dice graph
CHUNK_OUTCOMES = 1 << 13  # outcomes of a chunk of dice drawn at once, at most: its table of keys stays in L1


def hand_keys(row_counts: np.ndarray, dice: int, faces: int) -> HandKeys:
    """The key of each dice graph row (its counts [rows, faces] in base dice + 1) and the row of each key;
    empty arrays where the table would pass HAND_KEYS keys."""
    base = dice + 1
    if base**faces > HAND_KEYS:
        empty = np.zeros(0, dtype=np.int64)
        return HandKeys(empty, np.zeros(0, dtype=np.int32), empty)
    weight = base ** np.arange(faces, dtype=np.int64)
    key_of = np.ascontiguousarray(row_counts @ weight, dtype=np.int64)
    row_of_key = np.full(base**faces, -1, dtype=np.int32)
    row_of_key[key_of] = np.arange(len(key_of), dtype=np.int32)
    return HandKeys(key_of, row_of_key, weight)


def roll_draws(dice: int, faces: int, weight: np.ndarray) -> RollDraws:
    """The chunks of a roll of up to `dice` dice with `faces` faces, with keys summing `weight`
    (`HandKeys.weight`; empty: no keys, the player decodes the dice)."""
    per = 1
    while per < dice and faces ** (per + 1) <= CHUNK_OUTCOMES:
        per += 1
    outcomes = np.array([faces**j for j in range(per + 1)], dtype=np.uint64)
    low = np.array([(1 << 32) % faces**j for j in range(per + 1)], dtype=np.uint64)
    start = np.zeros(per + 1, dtype=np.int64)
    start[1:] = np.cumsum(outcomes[:-1].astype(np.int64))
    parts = [np.zeros(1, dtype=np.int64)]
    if len(weight):
        for j in range(1, per + 1):  # outcome o of j dice: die i is digit i of o in base faces
            digits = np.arange(faces**j, dtype=np.int64)[:, None] // faces ** np.arange(j, dtype=np.int64) % faces
            parts.append(weight[digits].sum(axis=1))
        keys = np.concatenate(parts).astype(np.int32)
    else:
        keys = np.zeros(0, dtype=np.int32)
    return RollDraws(per, outcomes, low, start, keys)


def chunk_faces(outcome: np.ndarray, j: int, faces: int) -> np.ndarray:
    """The j dice of a chunk's outcomes [n] as faces [n, j] (digits in base faces, lowest first, plus one)."""
    return np.asarray(outcome, dtype=np.int64)[:, None] // faces ** np.arange(j, dtype=np.int64) % faces + 1


def seed_streams(seed: int, first_game: int, games: int) -> np.ndarray:
    """The initial splitmix64 state of games first_game .. first_game + games - 1 of a run."""
    base = np.uint64((seed * 0x9E3779B97F4A7C15 + 0x632BE59BD9B4E019) & MASK64)
    with np.errstate(over="ignore"):
        return base + np.arange(first_game, first_game + games, dtype=np.uint64) * np.uint64(0xD1B54A32D192ED03)


def _next(state, g):
    """splitmix64: advance game g's stream, return 64 random bits."""
    state[g] += np.uint64(0x9E3779B97F4A7C15)
    z = state[g]
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def chunk(state, g, buf, left, n, low):
    """(outcome, buf, left): a uniform integer 0 .. n - 1 from the next 32 bits of game g's stream (`buf` holds
    `left` such halves of a word; a new word when none): the high half of the 32 bits times n, drawn again
    where the low half is below low = 2**32 % n (Lemire's multiply: no modulo, no bias). Held in locals,
    not arrays, so that a roll's draws stay in registers."""
    while True:
        if left == 0:
            buf = _next(state, g)
            left = 2
        left -= 1
        m = (buf & np.uint64(0xFFFFFFFF)) * n
        buf >>= np.uint64(32)
        if (m & np.uint64(0xFFFFFFFF)) >= low:
            return np.int64(m >> np.uint64(32)), buf, left


class DiceStreams:
    """The dice `play.play_games` draws, game by game, for a reference player to replay the compiled
    player's games on the same dice (tests): a turn's dice start from a fresh word of the stream."""

    def __init__(self, seed: int, games: int, faces: int, dice: int) -> None:
        self.state = seed_streams(seed, 0, games)
        self.buf = np.zeros(games, dtype=np.uint64)
        self.left = np.zeros(games, dtype=np.int64)
        self.faces, self.draws = faces, roll_draws(dice, faces, np.zeros(0, dtype=np.int64))

    def new_turn(self) -> None:
        self.left[:] = 0

    def roll(self, g: int, n: int) -> tuple[int, ...]:
        """n dice of game g: a chunk of dice at a time."""
        out: list[int] = []
        rd = self.draws
        while len(out) < n:
            j = min(n - len(out), rd.per)
            o, buf, left = compiled_names()["chunk"](
                self.state, g, self.buf[g], self.left[g], rd.outcomes[j], rd.low[j]
            )
            self.buf[g], self.left[g] = buf, left
            out.extend(chunk_faces(np.array([o]), j, self.faces)[0].tolist())
        return tuple(out)


@cache
def compiled_names() -> Mapping[str, Any]:
    """`chunk` compiled by numba, for the player to inline (and `DiceStreams` to call)."""
    return compiled.jit_namespace(globals(), (), inline=("_next", "chunk"))
