"""The advisor's kernel: one card's turn, from the state values to every keep's value, in one compiled call.

The advisor used to build a card's scoring table with some sixty numpy calls (successor
lookups, best of each roll, the fold), a few microseconds each: most of a new card's
cost. Here the same steps run compiled: each open box's successors are looked up
(`advance._successors`), each decision's best score per roll is the solver's own
score-and-advance step (`advance._advance`) at the card's state of a `LayerArrays` (the advisor passes one layer holding
every class it knows, checked once, and the class's row in it), and the keeps are folded by the
one turn recursion (`turn.turn_block`). Same sums in the same order as the solver and
the numpy path: the same bits. `card_turn` is what Python calls (built ahead of time
per value dtype, or compiled by numba, or plain Python: `compiled.MODE`).
"""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np

from . import compiled
from .advance import _advance, _successors
from .records import CardArrays, DiceArrays, LayerArrays, SlotArrays, StateArrays, TurnArrays
from .turn import W, turn_block

__all__ = ["AVAILABLE", "CardArrays", "card_turn", "jitted"]


def _card_turn(card, sl, layer, st, d, values, scratch):
    """scratch = (sv, score, keeps_out, ok_out): sv[q, b, k] = the value (bank q) of the state box b's slot k
    leads to, for each open box of the card (`advance._successors` from the card's class code and group
    totals; `layer.states.codes[card.state]`'s low bits: its filled boxes); score[q, :, 0] = the best of
    scoring each roll at decision q (the score-and-advance step, `advance._advance`, at row `card.state` of
    `layer`); keeps_out (stages, keeps, W), when it has stages, gets the keeps' values of the turn folded
    from those rows (`turn_block`, lane 0). ok_out[0] = 0 where a legal box leads to a state without a value."""
    sv, score, keeps_out, ok_out = scratch
    nb = sv.shape[1]
    _successors(sl, st, (card.code, card.prog), layer.states.codes[card.state] & ((1 << nb) - 1), values, sv)
    n_rolls = score.shape[1]
    row = np.empty(n_rolls)
    ok = True
    for q in range(score.shape[0]):
        if q > 0 and card.ff[q] == card.ff[q - 1] and card.bank[q] == card.bank[q - 1]:
            for r in range(n_rolls):  # the same scoring as the decision before (rolls banked nowhere): a copy
                score[q, r, 0] = score[q - 1, r, 0]
            continue
        ok &= _advance(layer, card.state, card.ff[q], sv[card.bank[q]], row)
        for r in range(n_rolls):
            score[q, r, 0] = row[r]
    ok_out[0] = 1 if ok else 0
    if keeps_out.shape[0] > 0:
        n_rows = d.add_edges.shape[0]
        pick = np.arange(score.shape[0])
        arrays = TurnArrays(
            np.empty((n_rolls, W)), np.empty((n_rows, W)), np.empty((n_rows, W)), keeps_out, np.empty((0, 0, W))
        )
        turn_block(score, pick, pick, d, arrays)


@cache
def jitted() -> Any:
    """The card kernel compiled by numba, with what it calls (the `jit` mode, and the ahead-of-time build)."""
    from . import advance, turn

    step = advance.compiled_names()
    calls = {"_advance": step["_advance"], "_successors": step["_successors"], "turn_block": turn.jitted()}
    return compiled.jit_namespace(globals(), ("_card_turn",), calls=calls)["_card_turn"]


AVAILABLE = compiled.MODE == "jit" or (compiled.MODE == "aot" and hasattr(compiled.aot_module(), "card_f8"))
"""Whether the kernel runs compiled here (an ahead-of-time build from before it was written lacks it)."""


@cache
def _aot(name: str) -> Any:
    """The ahead-of-time build of `name`, behind a check of the arguments `card_turn` is given (made once)."""
    return compiled.aot_kernel(name, checked=_GIVEN)


_GIVEN = 6  # card_turn's arguments; the kernel's last, the scratch card_turn allocates


def card_turn(
    card: CardArrays,
    sl: SlotArrays,
    layer: LayerArrays,
    st: StateArrays,
    d: DiceArrays,
    values: np.ndarray,
    checks: compiled.RecordChecks | None = None,
) -> tuple[np.ndarray, np.ndarray, bool]:
    """`_card_turn` by the kernel this process runs, for values (states + 1, banks), float64 or float32, on
    scratch of its own: (sv, keeps, ok), keeps (decisions - 1, keeps, W) (none for a single decision) and ok
    False where a legal box leads to a state without a value. `checks`: the records the caller keeps that the
    built kernel's argument check passed already (`compiled.RecordChecks`: the layer it pinned)."""
    nb, kmax = sl.add.shape
    n = card.ff.shape[0]
    sv = np.empty((values.shape[1], nb, kmax))
    score = np.zeros((n, d.roll_probs.shape[0], W))
    keeps = np.empty((n - 1, d.levels[d.dice], W) if n > 1 else (0, 0, W))
    ok = np.empty(1, dtype=np.int64)  # the kernel always sets it
    args = (card, sl, layer, st, d, values, (sv, score, keeps, ok))
    if compiled.MODE == "aot":
        _aot("card_f4" if values.dtype == np.float32 else "card_f8")(*args, checks=checks)
    else:
        (jitted() if compiled.MODE == "jit" else _card_turn)(*args)
    return sv.transpose(1, 0, 2), keeps, bool(ok[0])
