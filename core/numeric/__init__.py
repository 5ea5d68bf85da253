"""The numeric core: a variant's dice, states and turns as arrays, shared by the solver, advisor and simulator.

- `dice`: every multiset of kept or rolled dice as a graph (`DiceGraph`, `DiceArrays`).
- `coding`: the state coding, once: class codes, clamped threshold totals, value slots (`StateIndex`).
- `reference`: the turn recursion in numpy (the reference, and the path without numba).
- `turn` / `lookup`: the same recursion and state lookup compiled with numba, for kernels.
- `objective`: what is maximised, the mean or an exponential utility (`risk:THETA`), and its leaf.
- `card`: the advisor's kernel, one card's turn (successors, best score per roll, keeps) in one call.
- `layer` / `target`: the solver's kernels, a layer of states' values (mean or risk) and target vectors.
- `moves` / `play` (with `draws`, `scoreclass`, `intrinsics`): the simulator's best-move rows and whole games.
- `propagate` / `curves`: the exact score distribution's kernels, and `bot:win`'s share-of-win curves.
- `compiled`: the one switch deciding how the kernels run here (`$DICECUP_KERNELS`).

Nothing here asks the rules: callers hand in the tables they learned. Importing it does not import numba.
"""

from __future__ import annotations

from .coding import EMPTY, ClassCoding, StateArrays, StateIndex
from .dice import DiceArrays, DiceGraph
from .errors import SolverError
from .reference import first_values, fold, turn_tables, turn_value

__all__ = [
    "EMPTY",
    "ClassCoding",
    "DiceArrays",
    "DiceGraph",
    "SolverError",
    "StateArrays",
    "StateIndex",
    "first_values",
    "fold",
    "turn_tables",
    "turn_value",
]
