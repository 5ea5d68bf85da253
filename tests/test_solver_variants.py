"""Solver results on the built-in variants: the published Yahtzee optimum, agreement with an
independent solver on the other joker modes and Yatzy, and the two kernels giving the same table."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dicecup import GameState
from dicecup.numeric.turn import W
from dicecup.solver import advise_state, jit, solve
from dicecup.solver.policy import SolverPolicy


@pytest.fixture(scope="module")
def yahtzee(engine):
    return solve(engine.variant("yahtzee"))


def test_yahtzee_free_joker_is_the_published_optimum(yahtzee):
    """Verhoeff (1999): optimal solitaire Yahtzee scores 254.5896 on average (free-choice joker)."""
    assert round(yahtzee.expected_score, 4) == 254.5896


def test_kniffel_is_yahtzee_under_other_names(engine, yahtzee):
    kniffel = solve(engine.variant("kniffel"))
    assert kniffel.states == yahtzee.states
    assert kniffel.expected_score == pytest.approx(yahtzee.expected_score, abs=1e-9)


# Values from an independent implementation: the Rust solver of PyPI `yatzy-solver` 1.0.0
# (variants american+forced-joker, american+no-joker, yatzy-scandinavian, yatzy-scandinavian+forced),
# run on this machine.
@pytest.mark.slow
@pytest.mark.parametrize(
    ("vid", "options", "peer"),
    [
        ("yahtzee", {"joker": "forced"}, 254.58772873449593),
        ("yahtzee", {"joker": "none"}, 253.97024118978018),
        ("yatzy", {}, 248.4399893778553),
    ],
)
def test_agrees_with_independent_solver(engine, vid, options, peer):
    assert solve(engine.variant(vid, options)).expected_score == pytest.approx(peer, abs=1e-8)


def test_yatzy_in_forced_order_agrees_with_independent_solver(engine):
    """`yatzy-solver` 1.0.0, variant yatzy-scandinavian+forced, state "upper 0 | filled -": 122.55852739642387."""
    assert solve(engine.variant("yatzy-forced")).expected_score == pytest.approx(122.55852739642387, abs=1e-8)


@pytest.mark.skipif(not jit.AVAILABLE, reason="numba is not installed")
@pytest.mark.parametrize(
    ("vid", "options"), [("generala", {}), ("russian", {}), ("russian", {"bonus_at": "nonnegative"}), ("yacht", {})]
)
def test_numba_and_numpy_kernels_give_the_same_table(engine, vid, options):
    v = engine.variant(vid, options)
    a, b = solve(v, kernel="numba"), solve(v, kernel="numpy")
    assert a.states == b.states
    np.testing.assert_allclose(a.values, b.values, rtol=0, atol=1e-9, equal_nan=True)


@pytest.mark.skipif(not jit.AVAILABLE, reason="numba is not installed")
def test_the_next_layers_records_made_while_a_layer_is_solved_change_no_bit(engine, monkeypatch):
    """The backward pass makes a layer's kernel records while the kernel's threads solve the layer before
    (`layer_values(meanwhile=...)`): the table is the one of records made after the kernel, on one thread."""
    v = engine.variant("russian")
    overlapped = solve(v).values
    calls = []
    kernel = jit.layer_values

    def one_thread(*args, meanwhile=None, **how):
        calls.append(meanwhile is not None)
        return kernel(*args, workers=1, meanwhile=meanwhile, **how)

    monkeypatch.setattr(jit, "layer_values", one_thread)
    after = solve(v).values
    assert calls.count(True) == len(calls) - 1  # every layer's but the last one's records made meanwhile
    assert overlapped.tobytes() == after.tobytes()


@given(n_blocks=st.integers(0, 10**7), workers=st.integers(2, 256))
def test_a_layers_chunks_cover_its_blocks_once_largest_first_and_end_small(n_blocks, workers):
    """The threads take a layer's chunks in turn (`jit.chunk_bounds`): every block once, in order, the chunks
    never growing, the last one at most a 64th of a thread's share (the threads end together), and about
    as many chunks a thread as equal chunks gave (a cost on the main thread, each)."""
    bounds = jit.chunk_bounds(n_blocks, workers)
    sizes = np.diff(bounds)
    assert bounds[0] == 0 and bounds[-1] == n_blocks and (sizes > 0).all()
    assert (np.diff(sizes) <= 0).all()
    if n_blocks:
        assert sizes[-1] <= max(1, n_blocks // (64 * workers))
    assert len(sizes) <= max(12 * workers, n_blocks if n_blocks < 64 * workers else 0)


def _one_context_blocks(ctxs: np.ndarray) -> int:
    """Full blocks of W states of a single context (the kernel scores those a lane each)."""
    blocks = ctxs[: len(ctxs) // W * W].reshape(-1, W)
    return int((blocks == blocks[:, :1]).all(axis=1).sum())


@pytest.mark.skipif(not jit.AVAILABLE, reason="numba is not installed")
@pytest.mark.parametrize("vid", ["generala", "yacht", "russian"])
def test_a_layer_solved_in_any_order_of_its_states_has_the_same_bits(engine, monkeypatch, vid):
    """The kernel scores a block of W states of one context side by side, a lane each, and a block of several
    contexts state by state; the solver groups a layer's states by context (`dp.by_context`). Each layer
    solved again with its states shuffled (its blocks mixed) gives every state the same bits."""
    from dicecup.solver import dp

    kernel = jit.layer_values
    same, lanes, mixed = [], 0, 0

    def twice(arrays, *args, **how):
        nonlocal lanes, mixed
        v = kernel(arrays, *args, **how)
        order = np.random.default_rng(7).permutation(len(arrays.states.codes))
        shuffled = dp.layer_take(arrays, order)
        same.append(kernel(shuffled, *args, **how).tobytes() == v[order].tobytes())
        lanes += _one_context_blocks(arrays.states.ctxs)
        mixed += len(order) // W - _one_context_blocks(shuffled.states.ctxs)
        return v

    monkeypatch.setattr(jit, "layer_values", twice)
    solve(engine.variant(vid))
    assert same and all(same)
    assert lanes > 0 and (mixed > 0 or vid != "generala")  # both paths taken (Yacht's states share one context)


@pytest.fixture(scope="module")
def generala(engine):
    return solve(engine.variant("generala"))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1), stop=st.integers(0, 60))
def test_policy_and_advisor_agree_on_random_states(generala, seed, stop):
    """The bot's fast tables and the advisor's direct engine calls pick equally good actions."""
    rng = random.Random(seed)
    state = GameState.new(generala.variant, 1)
    steps = 0
    while not state.over:
        if state.is_chance:
            state = state.roll(rng)
            continue
        options = advise_state(generala, state)
        values = {o.action: o.value for o in options}
        assert set(values) == set(state.legal_actions())
        chosen = SolverPolicy.of(generala).choose(state)
        assert values[chosen] == pytest.approx(options[0].value, abs=1e-9)
        steps += 1
        if steps > stop:
            break
        state = state.apply(rng.choice(state.legal_actions()))  # wander off the optimal path too


@pytest.mark.slow
@pytest.mark.parametrize(("vid", "exact"), [("yahtzee", 254.5896094819625), ("yatzy", 248.4399893778553)])
def test_float32_values_keep_the_expected_score_within_1e4(engine, vid, exact):
    """Values stored as float32 (computed in float64): the game's value moves by less than 1e-4 from the
    float64 figure (the independent solver's, which the float64 tables above match to 1e-8)."""
    narrow = solve(engine.variant(vid), precision="float32")
    assert narrow.values.dtype == np.float32
    assert abs(narrow.expected_score - exact) < 1e-4


def test_float32_tables_are_cached_checked_and_advised(engine, tmp_path, monkeypatch):
    from dicecup import Card
    from dicecup.solver import cache

    monkeypatch.setenv(cache.CACHE_ENV, str(tmp_path / "cache"))
    monkeypatch.setenv(cache.STATE_ENV, str(tmp_path / "state"))
    v = engine.variant("yacht")
    narrow = solve(v, precision="float32")
    path = cache.save(narrow)
    loaded = cache.load(v, path, verify_values=True)  # the check allows float32's rounding, not more
    assert loaded.values.dtype == np.float32
    assert loaded.expected_score == pytest.approx(solve(v).expected_score, abs=1e-4)
    assert loaded.future(Card()) == pytest.approx(narrow.future(Card()))
    with pytest.raises(Exception, match="precision"):
        solve(v, precision="float16")
