"""The turn recursion in numpy: the reference the compiled kernel (`turn.py`) is tested against.

It is also what runs where numba is missing, and for one-off positions (the
advisor, the cache check), where compiling would cost more than it saves. Arrays
are (rows, B): one row per dice multiset or full roll, one column per state.
"""

from __future__ import annotations

import numpy as np

from .dice import DiceGraph

__all__ = ["turn_tables", "turn_value"]


def turn_tables(
    graph: DiceGraph, score_first: np.ndarray, score_later: np.ndarray, rolls: int
) -> list[tuple[np.ndarray, np.ndarray | None]]:
    """Per roll of the turn (1..rolls): (value of each roll on the table, value of each keep or None).

    `score_first` / `score_later` (rolls, B) are the best value of scoring each
    roll right after the first roll / after a later one. Entry i describes the
    decision after roll i+1: rolls_left = rolls - 1 - i.
    """
    out: list[tuple[np.ndarray, np.ndarray | None]] = []
    value = score_first if rolls == 1 else score_later
    out.append((value, None))
    for left in range(1, rolls):
        keeps = graph.expect(value)
        score = score_first if left == rolls - 1 else score_later
        value = np.maximum(score, graph.best_keep(keeps))
        out.append((value, keeps))
    out.reverse()
    return out


def turn_value(graph: DiceGraph, score_first: np.ndarray, score_later: np.ndarray | None, rolls: int) -> np.ndarray:
    """(B,): expected value of a whole turn from the first roll, played optimally."""
    tables = turn_tables(graph, score_first, score_first if score_later is None else score_later, rolls)
    return graph.roll_probs @ tables[0][0]
