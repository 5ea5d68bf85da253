"""The turn recursion in numpy: the reference the compiled kernel (`turn.py`) is tested against.

It is also what runs where numba is missing, and for one-off positions (the
advisor, the cache check), where compiling would cost more than it saves. Arrays
are (rows, B): one row per dice multiset or full roll, one column per state.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .dice import DiceGraph

__all__ = ["first_values", "fold", "plain_pick", "turn_tables", "turn_value"]

Decision = tuple[np.ndarray, np.ndarray | None]  # (value of each roll on the table, value of each keep or None)


def fold(graph: DiceGraph, scores: Sequence[np.ndarray]) -> list[Decision]:
    """The turn folded back from its last decision: entry `left` is the decision with `left` rolls left.

    scores[left] (rolls, B) is the best value of scoring each roll at that decision
    (after the first roll or a later one; where unused rolls are banked, with `left`
    rolls to bank). Entry 0 has no keeps: the dice must be scored.
    """
    value = scores[0]
    out: list[Decision] = [(value, None)]
    for left in range(1, len(scores)):
        keeps = graph.expect(value)
        value = np.maximum(scores[left], graph.best_keep(keeps))
        out.append((value, keeps))
    return out


def first_values(graph: DiceGraph, decisions: Sequence[Decision], firsts: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Per decision of a `fold`: each roll's value were that decision the turn's first, scoring from
    firsts[left] (boxes that score differently on the first roll, where banked rolls make any number
    of rolls left a first decision). The keeps are the fold's: later rolls score as later ones."""
    out = [firsts[0]]
    for left in range(1, len(decisions)):
        keeps = decisions[left][1]
        assert keeps is not None  # every decision with rolls left has keeps
        out.append(np.maximum(firsts[left], graph.best_keep(keeps)))
    return out


def plain_pick(rolls: int) -> np.ndarray:
    """The score row of each decision (by rolls left) without banked rolls: 1 after the first roll, else 0.

    What `turn.turn_block` takes as `pick`; with banked rolls the row is the rolls left.
    """
    pick = np.zeros(rolls, dtype=np.int64)
    pick[rolls - 1] = 1
    return pick


def turn_tables(graph: DiceGraph, score_first: np.ndarray, score_later: np.ndarray, rolls: int) -> list[Decision]:
    """Per roll of the turn (1..rolls): (value of each roll on the table, value of each keep or None).

    `score_first` / `score_later` (rolls, B) are the best value of scoring each
    roll right after the first roll / after a later one. Entry i describes the
    decision after roll i+1: rolls_left = rolls - 1 - i.
    """
    return fold(graph, [score_later] * (rolls - 1) + [score_first])[::-1]


def turn_value(graph: DiceGraph, score_first: np.ndarray, score_later: np.ndarray | None, rolls: int) -> np.ndarray:
    """(B,): expected value of a whole turn from the first roll, played optimally."""
    tables = turn_tables(graph, score_first, score_first if score_later is None else score_later, rolls)
    return graph.roll_probs @ tables[0][0]
