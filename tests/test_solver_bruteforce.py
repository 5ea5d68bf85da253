"""The DP equals a plain brute-force expectimax over GameState on small variants of every rule family."""

from __future__ import annotations

import pytest
from _solver_helpers import TINY, brute_force, brute_values, tiny_variant

from dicecup import Card, GameState, Keep, Score
from dicecup.solver import jit, solve
from dicecup.solver.advice import advise_state, best_action

CASES = [(name, None) for name in TINY if name != "flags"] + [
    ("flags", {"joker": m}) for m in ("free", "forced", "none")
]


KERNELS = ["numpy"] + (["numba"] if jit.AVAILABLE else [])


@pytest.mark.parametrize(("name", "options"), CASES, ids=[f"{n}-{o['joker']}" if o else n for n, o in CASES])
def test_dp_equals_brute_force(tmp_path, name, options):
    v = tiny_variant(tmp_path, name, options=options)
    expected = brute_force(v)
    for kernel in KERNELS:
        solution = solve(v, kernel=kernel)
        assert solution.expected_score == pytest.approx(expected, abs=1e-9), kernel
        assert solution.states > 0


@pytest.mark.parametrize("name", ["served", "stages", "flags"])
def test_advisor_values_equal_brute_force_after_each_first_roll(tmp_path, name):
    """For every first roll of a game, each option's value is the brute-force value of taking it."""
    v = tiny_variant(tmp_path, name)
    solution = solve(v)
    value = brute_values(v)
    start = GameState.new(v, 1)
    for action, _ in start.chance_outcomes():
        state = start.apply(action)
        options = advise_state(solution, state)
        assert {o.action for o in options} == set(state.legal_actions())
        for o in options:
            assert o.value == pytest.approx(value(state.apply(o.action)), abs=1e-9), (state.dice, o.action)
        assert options[0].best and options[0].value == pytest.approx(value(state), abs=1e-9)
        chosen = best_action(solution, state)
        assert value(state.apply(chosen)) == pytest.approx(value(state), abs=1e-9)


def test_advisor_mid_game_matches_brute_force(tmp_path):
    """A state with flags set and a filled box: the advisor still agrees with brute force."""
    v = tiny_variant(tmp_path, "flags", options={"joker": "forced"})
    solution = solve(v)
    value = brute_values(v)
    state = GameState.new(v, 1).roll(dice=(2, 2)).score("yam")  # yam holds 20: flag on
    state = state.roll(dice=(3, 3))
    options = advise_state(solution, state)
    for o in options:
        assert o.value == pytest.approx(value(state.apply(o.action)), abs=1e-9)
    assert isinstance(options[0].action, (Keep, Score))
    assert solution.value(Card()) == pytest.approx(value(GameState.new(v, 1)), abs=1e-9)
