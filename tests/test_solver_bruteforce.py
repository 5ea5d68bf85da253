"""The DP equals a plain brute-force expectimax over GameState on small variants of every rule family."""

from __future__ import annotations

import random
import sys

import numpy as np
import pytest
from _solver_helpers import TINY, brute_values, draw_outcome, tiny_variant

from dicecup import Card, GameState, Keep, Score
from dicecup.solver import SolverError, jit, solve
from dicecup.solver.advice import advise_state
from dicecup.solver.policy import best_action

CASES = [(name, None) for name in TINY if name != "flags"] + [
    ("flags", {"joker": m}) for m in ("free", "forced", "none")
]


KERNELS = ["numpy"] + (["numba"] if jit.AVAILABLE else [])


@pytest.fixture(scope="module")
def brute(tmp_path_factory):
    """(name, options) -> (tiny variant, its brute-force value function, the start's value), built once a
    module: several tests ask the same variants' values, and building the expectimax is their cost."""
    done = {}

    def get(name: str, options: dict | None = None):
        key = (name, tuple(sorted((options or {}).items())))
        if key not in done:
            v = tiny_variant(tmp_path_factory.mktemp(name), name, options=options)
            value = brute_values(v)
            limit = sys.getrecursionlimit()
            sys.setrecursionlimit(max(limit, 10_000))
            try:
                done[key] = v, value, value(GameState.new(v, 1))  # every state the game reaches, memoised
            finally:
                sys.setrecursionlimit(limit)
        return done[key]

    return get


@pytest.mark.parametrize(("name", "options"), CASES, ids=[f"{n}-{o['joker']}" if o else n for n, o in CASES])
def test_dp_equals_brute_force(brute, name, options):
    v, _, expected = brute(name, options)
    for kernel in KERNELS:
        solution = solve(v, kernel=kernel)
        assert solution.expected_score == pytest.approx(expected, abs=1e-9), kernel
        assert solution.states > 0


@pytest.mark.parametrize("name", ["served", "stages", "flags", "banked"])
def test_advisor_values_equal_brute_force_after_each_first_roll(brute, name):
    """For every first roll of a game, each option's value is the brute-force value of taking it."""
    v, value, _ = brute(name)
    solution = solve(v)
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


def test_advisor_mid_game_matches_brute_force(brute):
    """A state with flags set and a filled box: the advisor still agrees with brute force."""
    v, value, _ = brute("flags", {"joker": "forced"})
    solution = solve(v)
    state = GameState.new(v, 1).roll(dice=(2, 2)).score("yam")  # yam holds 20: flag on
    state = state.roll(dice=(3, 3))
    options = advise_state(solution, state)
    for o in options:
        assert o.value == pytest.approx(value(state.apply(o.action)), abs=1e-9)
    assert isinstance(options[0].action, (Keep, Score))
    assert solution.value(Card()) == pytest.approx(value(GameState.new(v, 1)), abs=1e-9)


@pytest.mark.parametrize("name", ["banked", "banked-three", "banked-served"])
@pytest.mark.parametrize("kernel", KERNELS)
def test_banked_rolls_every_decision_of_random_games_matches_brute_force(brute, name, kernel):
    """Unused rolls carried over: at every decision of random games (banks of every size arise), each
    option's value, the optimal bot's choice and the start-of-turn values per bank are brute force's."""
    v, value, _ = brute(name)
    solution = solve(v, kernel=kernel)
    assert solution.banks == (v.rolls - 1) * len(v.boxes) + 1
    rng = random.Random(7)
    banks_seen = set()
    for _ in range(12):
        state = GameState.new(v, 1)
        while not state.over:
            if state.is_chance:
                if state.rolls_used == 0:  # start of a turn: the table's value for the bank it carries
                    banks_seen.add(state.banked[0])
                    got = solution.value(state.card, state.banked[0])
                    assert got == pytest.approx(value(state), abs=1e-9)
                state = draw_outcome(state, rng)
                continue
            options = advise_state(solution, state)
            assert {o.action for o in options} == set(state.legal_actions())
            for o in options:
                assert o.value == pytest.approx(value(state.apply(o.action)), abs=1e-9)
            assert value(state.apply(best_action(solution, state))) == pytest.approx(value(state), abs=1e-9)
            state = state.apply(rng.choice(state.legal_actions()))  # random play reaches every bank size
    assert max(banks_seen) >= 2, banks_seen


def test_banked_values_grow_with_the_bank(tmp_path):
    """More rolls banked is never worth less, and a bank the card cannot have is refused."""
    v = tiny_variant(tmp_path, "banked")
    solution = solve(v)
    code, prog = solution.index.state_of_card(Card())
    start = solution.values[solution.index.lookup(np.array([code]), prog)[0]]
    assert np.isfinite(start[0]) and np.isnan(start[1:]).all()  # the first turn banks nothing
    state = GameState.new(v, 1).roll(dice=(1, 2)).score("run")  # 1 roll unused
    assert state.banked == (1,)
    assert solution.future(state.card, 1) > solution.future(state.card, 0)
    with pytest.raises(SolverError, match="cannot arise with 2 rolls banked"):
        solution.future(state.card, 2)
    with pytest.raises(SolverError, match="a game can bank 0..4"):
        solution.future(state.card, 5)
