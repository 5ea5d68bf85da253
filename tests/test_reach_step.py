"""The state search's step on reached totals (`numeric.reach.shift_clamp_merge`, compiled) and its numpy twin
(`solver.bitrows.shift_clamp_merge`) against an oracle on Python integers, move by move; and whole searches
that find the same layers with either."""

from __future__ import annotations

import numpy as np
import pytest
from _solver_helpers import TINY, tiny_variant
from hypothesis import given, settings
from hypothesis import strategies as st

from dicecup.numeric import compiled, reach
from dicecup.solver import SolverError, bitrows
from dicecup.solver import space as space_module
from dicecup.solver.rules import RuleModel
from dicecup.solver.space import StateSpace

needs_kernels = pytest.mark.skipif(not compiled.AVAILABLE, reason="no compiled kernels (numpy mode)")


def _as_int(words: np.ndarray) -> int:
    return sum(int(w) << (64 * k) for k, w in enumerate(words.tolist()))


def oracle(words: np.ndarray, moves: list[tuple[int, int, int, int, int]], n_out: int) -> list[int]:
    """Each row as one integer (bit t: total t reached): shifted, its bits past the top of its words dropped;
    any bit above hi makes bit hi, any bit below lo (or shifted below bit 0) makes bit lo; OR'ed per row."""
    bits = 64 * words.shape[1]
    out = [0] * n_out
    for row, d, lo, hi, into in moves:
        v = _as_int(words[row])
        below = d < 0 and v & ((1 << -d) - 1) != 0
        v = (v << d if d >= 0 else v >> -d) & ((1 << bits) - 1)
        if v >> (hi + 1):
            v = v & ((1 << (hi + 1)) - 1) | 1 << hi
        below = below or v & ((1 << lo) - 1) != 0
        v &= ~((1 << lo) - 1)
        out[into] |= v | (1 << lo if below else 0)
    return out


def masks(words: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`StateSpace._masks` for rows of this many words, every bit a total."""
    pos, at = np.arange(64 * words), np.append(np.arange(64 * words), -1)[:, None]
    return tuple(bitrows.pack(m) for m in (pos[None, :] <= at, pos[None, :] > at, pos[None, :] == at))  # type: ignore[return-value]


@st.composite
def cases(draw):
    n_words = draw(st.integers(1, 3))
    bits = 64 * n_words
    rows = draw(st.integers(1, 6))
    totals = st.lists(st.integers(0, bits - 1), max_size=4)  # a row's few reached totals: edges are met often
    words = np.zeros((rows, n_words), dtype=np.uint64)
    for r, reached in enumerate(draw(st.lists(totals, min_size=rows, max_size=rows))):
        for t in reached:
            words[r, t // 64] |= np.uint64(1) << np.uint64(t % 64)
    n_out = draw(st.integers(1, 5))

    def move(lo: int):
        return st.tuples(
            st.integers(0, rows - 1), st.integers(-bits - 70, bits + 70), st.just(lo), st.integers(lo, bits - 1)
        )

    moves = draw(st.lists(st.integers(0, bits - 1).flatmap(move), min_size=1, max_size=30))
    into = sorted(draw(st.lists(st.integers(0, n_out - 1), min_size=len(moves), max_size=len(moves))))
    return words, [(*m, t) for m, t in zip(moves, into, strict=True)], n_out


def _columns(moves):
    return [np.array(c, dtype=np.int64) for c in zip(*moves, strict=True)]


@needs_kernels
@settings(max_examples=300, deadline=None)
@given(cases())
def test_the_compiled_step_is_the_oracle_s(case):
    words, moves, n_out = case
    out = np.zeros((n_out, words.shape[1]), dtype=np.uint64)
    assert reach.shift_clamp_merge(words, *_columns(moves), out)
    assert [_as_int(r) for r in out] == oracle(words, moves, n_out)


@settings(max_examples=300, deadline=None)
@given(cases())
def test_the_numpy_twin_is_the_oracle_s(case):
    words, moves, n_out = case
    out = np.zeros((n_out, words.shape[1]), dtype=np.uint64)
    bitrows.shift_clamp_merge(words, *_columns(moves), out, masks(words.shape[1]))
    assert [_as_int(r) for r in out] == oracle(words, moves, n_out)


def _layers(model: RuleModel) -> list[tuple[np.ndarray, ...]]:
    space = StateSpace(model, None)
    return [(layer.codes, layer.progress, layer.index) for layer in space.layers]


def _same_with_the_twin(model: RuleModel, monkeypatch) -> None:
    compiled_layers = _layers(model)
    with monkeypatch.context() as patch:
        patch.setattr(space_module.reach, "shift_clamp_merge", lambda *args: False)
        twin_layers = _layers(model)
    assert len(compiled_layers) == len(twin_layers)
    for got, want in zip(compiled_layers, twin_layers, strict=True):
        for a, b in zip(got, want, strict=True):
            np.testing.assert_array_equal(a, b)


@needs_kernels
@pytest.mark.parametrize("vid", ["yahtzee", "yatzy", "kniffel", "generala"])
def test_built_in_searches_find_the_same_layers_with_the_compiled_step_and_the_twin(engine, monkeypatch, vid):
    _same_with_the_twin(RuleModel(engine.variant(vid)), monkeypatch)


@needs_kernels
@pytest.mark.parametrize("name", sorted(TINY))
def test_small_variants_searches_find_the_same_layers_with_either(engine, tmp_path, monkeypatch, name):
    try:
        model = RuleModel(tiny_variant(tmp_path, name, engine))
        model.score_groups  # noqa: B018
        StateSpace(model, None)
    except SolverError:
        pytest.skip("the solver refuses this variant")
    _same_with_the_twin(model, monkeypatch)


EDGES = [
    (t, d, lo, hi)
    for t in (0, 1, 63, 64, 65, 127, 150)
    for d in (-t - 1, -t, -t + 1, 0, 1, 63 - t, 64 - t, 191 - t, 192 - t)
    for lo, hi in ((0, 191), (0, 63), (1, 64), (64, 64), (63, 128), (150, 191))
]


@needs_kernels
def test_a_single_total_at_the_edges_of_words_and_bounds_moves_as_the_oracle_says():
    """One total t moved by d with bounds (lo, hi), for totals and moves at word edges, on three-word rows:
    each lands where the oracle says, with either step (the random cases seldom meet these)."""
    words = np.zeros((len(EDGES), 3), dtype=np.uint64)
    for i, (t, *_) in enumerate(EDGES):
        words[i, t // 64] = np.uint64(1) << np.uint64(t % 64)
    moves = [(i, d, lo, hi, i) for i, (_, d, lo, hi) in enumerate(EDGES)]
    want = oracle(words, moves, len(EDGES))
    out, twin = np.zeros_like(words), np.zeros_like(words)
    assert reach.shift_clamp_merge(words, *_columns(moves), out)
    bitrows.shift_clamp_merge(words, *_columns(moves), twin, masks(3))
    assert [_as_int(r) for r in out] == want
    assert [_as_int(r) for r in twin] == want
