"""The turn recursion, compiled, written once: what every roll and every keep of a turn is worth.

From the value of scoring each full roll at each decision, a turn is folded back one decision at a time: a
keep is worth the mean over the next die's face of keeping one die more (`DiceArrays.add_edges`); a roll is
worth the best of scoring it and of its best proper keep, the best over one die removed (`sub_edges`).
`reference.turn_tables` is the numpy twin the tests hold it to. `turn_block` is what Python calls (built
ahead of time or compiled by numba: `compiled.MODE`); `jitted()` is numba's, for other kernels to call.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from functools import cache
from typing import Any

import numpy as np

from . import compiled
from .records import DiceArrays, TurnArrays, W

__all__ = ["W", "compile_ahead", "compiled_names", "jitted", "turn_block"]


def _lanes(a: np.ndarray, i: int) -> tuple[float, ...]:
    """Row i of an (rows, W) array as W values (held in registers: loads, then no stores in between)."""
    return (a[i, 0], a[i, 1], a[i, 2], a[i, 3], a[i, 4], a[i, 5], a[i, 6], a[i, 7])


def _store(a: np.ndarray, i: int, x: tuple[float, ...]) -> None:
    """a[i, :] = x."""
    a[i, 0], a[i, 1], a[i, 2], a[i, 3] = x[0], x[1], x[2], x[3]
    a[i, 4], a[i, 5], a[i, 6], a[i, 7] = x[4], x[5], x[6], x[7]


def _add(x: tuple[float, ...], y: tuple[float, ...]) -> tuple[float, ...]:
    return (x[0] + y[0], x[1] + y[1], x[2] + y[2], x[3] + y[3], x[4] + y[4], x[5] + y[5], x[6] + y[6], x[7] + y[7])


def _max(x: tuple[float, ...], y: tuple[float, ...]) -> tuple[float, ...]:
    return (
        max(x[0], y[0]), max(x[1], y[1]), max(x[2], y[2]), max(x[3], y[3]),
        max(x[4], y[4]), max(x[5], y[5]), max(x[6], y[6]), max(x[7], y[7]),
    )  # fmt: skip


def _scale(x: tuple[float, ...], c: float) -> tuple[float, ...]:
    return (x[0] * c, x[1] * c, x[2] * c, x[3] * c, x[4] * c, x[5] * c, x[6] * c, x[7] * c)


def _offset(x: tuple[float, ...], c: float) -> tuple[float, ...]:
    """x + c in every lane."""
    return (x[0] + c, x[1] + c, x[2] + c, x[3] + c, x[4] + c, x[5] + c, x[6] + c, x[7] + c)


def _mean(a: np.ndarray, edges: np.ndarray, row: int, shift: int, inv: float) -> tuple[float, ...]:
    """The mean of a's rows edges[row, 0] + shift, edges[row, 1] + shift, ... of a (rows, W) array (inv: 1 /
    their number), summed in that order. (The edges and the row, not a view of the row: a view made in a loop
    takes and drops a reference on the shared array each time.)"""
    acc = _lanes(a, edges[row, 0] + shift)
    for j in range(1, edges.shape[1]):
        acc = _add(acc, _lanes(a, edges[row, j] + shift))
    return _scale(acc, inv)


def _turn_block(
    score: np.ndarray,
    pick: np.ndarray,
    first_pick: np.ndarray,
    d: DiceArrays,
    arrays: TurnArrays,
) -> None:
    """Fold one turn of len(pick) decisions for the W states (columns) of a block, in place.

    score (S, rolls of the graph, W): best values of scoring each roll now; the decision
    with `left` rolls left uses row pick[left] (`reference.plain_pick`: the first roll's
    row and a later one's; with banked rolls, row `left`, the bank scoring leaves).
    In `arrays` (`TurnArrays`): on return val (rolls, W) holds the value of each roll on the table at the
    decision after the first roll. keeps (stages, keeps, W), when it has stages, gets the
    value of every keep (the rest rerolled) at the decision after roll stage + 1;
    levels (decisions, rolls, W), when it has rows, the roll values at the decision
    with each number of rolls left were it the turn's first, scoring from row
    first_pick[left] (with banked rolls, a turn begun with b banked first decides with
    rolls - 1 + b left; the fold itself goes on with pick's rows). keep and best (rows,
    W) are scratch. Every array's last axis is W (`W` lanes; the values are the same
    as the numpy reference's, sums taken face by face in the same order).
    """
    val, keep, best, keeps_out, levels_out = arrays.val, arrays.keep, arrays.best, arrays.keeps, arrays.levels
    for a in (score[0], val, keep, best):
        if a.shape[1] != W:
            raise ValueError("turn_block: the arrays must have W (numeric.turn.W) columns, one per state")
    if (keeps_out.shape[0] > 0 and keeps_out.shape[2] != W) or (levels_out.shape[0] > 0 and levels_out.shape[2] != W):
        raise ValueError("turn_block: the arrays must have W (numeric.turn.W) columns, one per state")
    rolls = pick.shape[0]
    levels, add_edges, sub_edges, sub_count = d.levels, d.add_edges, d.sub_edges, d.sub_count
    faces, dice = d.faces, d.dice
    n_rolls = levels[dice + 1] - levels[dice]
    lo_roll = levels[dice]
    store = keeps_out.shape[0] > 0
    store_levels = levels_out.shape[0] > 0
    first = score[pick[0]]
    if rolls == 1:  # (with more rolls the fold reads the first row where it is, and writes val at the end)
        for r in range(n_rolls):
            _store(val, r, _lanes(first, r))
    if store_levels:
        lv, ff = levels_out[0], score[first_pick[0]]
        for r in range(n_rolls):
            _store(lv, r, _lanes(ff, r))
    inv = 1.0 / faces
    for left in range(1, rolls):
        now = score[pick[left]]
        rolled = first if left == 1 else val  # the roll values a keep of dice - 1 dice averages
        for row in range(levels[dice - 1], lo_roll):  # expectation: keep k is the mean of keeping k + face
            _store(keep, row, _mean(rolled, add_edges, row, -lo_roll, inv))
        for s in range(dice - 2, -1, -1):
            for row in range(levels[s], levels[s + 1]):
                _store(keep, row, _mean(keep, add_edges, row, 0, inv))
        if store:
            ko = keeps_out[rolls - 1 - left]
            for row in range(lo_roll):
                _store(ko, row, _lanes(keep, row))
        for row in range(levels[0], levels[1]):  # best keep: the best over one die removed
            _store(best, row, _lanes(keep, row))
        for s in range(1, dice):
            for row in range(levels[s], levels[s + 1]):
                acc = _lanes(keep, row)
                for j in range(sub_count[row]):
                    acc = _max(acc, _lanes(best, sub_edges[row, j]))
                _store(best, row, acc)
        if store_levels:
            ff = score[first_pick[left]]
            lv = levels_out[left]
        for r in range(n_rolls):
            row = lo_roll + r
            acc = _lanes(best, sub_edges[row, 0])  # the best proper keep of this roll, then the best of it and scoring
            for j in range(1, sub_count[row]):
                acc = _max(acc, _lanes(best, sub_edges[row, j]))
            if store_levels:
                _store(lv, r, _max(_lanes(ff, r), acc))
            _store(val, r, _max(_lanes(now, r), acc))


@cache
def compiled_names() -> Mapping[str, Any]:
    """The fold and its lane helpers compiled by numba (`compiled.jit_namespace`), for numba kernels that
    hold a row of W lanes in registers too."""
    return compiled.jit_namespace(
        globals(), ("_turn_block",), inline=("_lanes", "_store", "_add", "_max", "_scale", "_offset", "_mean")
    )


def jitted() -> Any:
    """The fold compiled by numba (its lane helpers inlined), for numba kernels and the `jit` mode."""
    return compiled_names()["_turn_block"]


turn_block: Any = _turn_block
"""The fold for Python callers, as this process runs kernels (`compiled.MODE`)."""
if compiled.MODE == "aot":
    turn_block = compiled.aot_kernel("turn_block")
elif compiled.MODE == "jit":
    turn_block = jitted()


def _compile_turn() -> None:
    """Compile (or load from numba's cache) the turn recursion for the argument types the layer kernel gives
    it: any dice graph's arrays have the same types, so a two-faced die's stands in."""
    from .dice import DiceGraph
    from .reference import plain_pick

    graph = DiceGraph(1, 2)
    rolls, rows = graph.n_rolls, len(graph.multisets)
    pick = plain_pick(2)
    scratch = (np.empty((rolls, W)), np.empty((rows, W)), np.empty((rows, W)))
    arrays = TurnArrays(*scratch, np.empty((0, 0, W)), np.empty((0, rolls, W)))
    jitted()(np.zeros((2, rolls, W)), pick, pick, graph.arrays, arrays)


def compile_ahead() -> threading.Thread | None:
    """Where numba compiles the kernels (`compiled.MODE == "jit"`), start compiling the turn recursion in a
    thread while the caller builds the rules model and searches the states (its compiler spends most of
    its time in LLVM, which releases the GIL): a part of a first compile hides behind the search. The
    layer kernel, which calls it, waits for it through numba's compiler lock when it compiles in turn."""
    if compiled.MODE != "jit":
        return None
    thread = threading.Thread(target=_compile_turn, name="dicecup-compile", daemon=True)
    thread.start()
    return thread
