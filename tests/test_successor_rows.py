"""Every state's successor values (`Solution.successors`), compiled in one pass (`numeric.advance.successor_rows`),
against the numpy steps they replaced, a box and a slot at a time (`solver.dp.successor_values`): the same
values, bit for bit, NaN where a box is filled or a slot is past the box's slots; for every small variant
(groups and none, interchangeable boxes, stages, flags, banked rolls), a risk objective and single precision."""

from __future__ import annotations

import numpy as np
import pytest
from _solver_helpers import TINY, tiny_variant

from dicecup import Engine
from dicecup.numeric import compiled
from dicecup.numeric.advance import successor_rows
from dicecup.numeric.objective import Objective
from dicecup.solver import solve
from dicecup.solver.dp import successor_values

needs_kernels = pytest.mark.skipif(not compiled.AVAILABLE, reason="no compiled kernels (numpy mode)")


def _by_steps(solution, codes: np.ndarray, prog: np.ndarray) -> np.ndarray:
    """[states, boxes * slot_width] as numpy made it: each box's slots over every state, filled boxes NaN."""
    space, k = solution.space, solution.slot_width
    out = np.full((len(codes), space.nb * k), np.nan)
    for b in range(space.nb):
        succ = solution.objective.shown(successor_values(space, solution.column(), b, codes, prog))
        succ[:, (codes >> b) & 1 == 1] = np.nan
        out[:, b * k : b * k + len(succ)] = succ.T
    return out


def _states(solution, step: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """Every `step`th state of every layer but the full cards' (class codes, clamped group totals)."""
    layers = solution.space.layers[:-1]
    codes, prog = np.concatenate([lay.codes for lay in layers]), np.concatenate([lay.progress for lay in layers])
    return codes[::step], prog[::step]


def _compare(solution, step: int = 1) -> None:
    codes, prog = _states(solution, step)
    raw = successor_rows(solution.slots, solution.index.arrays, codes, prog, solution.values, 0)
    got = solution.objective.shown(raw)
    want = _by_steps(solution, codes, prog)
    assert got.shape == want.shape and got.dtype == want.dtype == np.float64
    np.testing.assert_array_equal(got, want)
    assert np.isnan(got).any() and not np.isnan(got).all()


@needs_kernels
@pytest.mark.parametrize("name", sorted(TINY))
def test_every_small_variant_s_successors_are_numpy_s(tmp_path, name):
    _compare(solve(tiny_variant(tmp_path, name)))


@needs_kernels
def test_yahtzee_s_successors_are_numpy_s_in_single_precision_too():
    v = Engine(entry_points=False).variant("yahtzee")
    solution = solve(v, precision="float32")
    assert solution.values.dtype == np.float32
    _compare(solution, step=29)


@needs_kernels
def test_a_risk_objective_s_successors_are_its_certainty_equivalents_as_numpy_gave_them(tmp_path):
    solution = solve(tiny_variant(tmp_path, "threshold"), objective=Objective(0.05))
    _compare(solution)
    codes, prog = _states(solution)
    assert np.array_equal(solution.successors(codes, prog), _by_steps(solution, codes, prog), equal_nan=True)
