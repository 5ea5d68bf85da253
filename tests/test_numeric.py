"""The numeric core: the dice graph's arrays, and the compiled turn recursion against the numpy reference."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dicecup.numeric import DiceGraph, first_values, fold, turn_tables, turn_value
from dicecup.numeric.records import TurnArrays
from dicecup.numeric.reference import plain_pick
from dicecup.numeric.turn import W, turn_block

SHAPES = [(1, 6), (2, 3), (3, 4), (5, 6), (4, 2)]


@pytest.mark.parametrize(("dice", "faces"), SHAPES)
def test_dice_arrays_describe_the_multisets(dice, faces):
    g = DiceGraph(dice, faces)
    a = g.arrays
    ms = g.multisets
    assert a.levels[-1] == len(ms) and a.levels[0] == 0
    for size in range(dice + 1):
        rows = range(a.levels[size], a.levels[size + 1])
        assert all(len(ms[r]) == size for r in rows)
        assert len(rows) == math.comb(size + faces - 1, size)
    for r, m in enumerate(ms):
        assert a.row_size[r] == len(m)
        assert a.row_counts[r].tolist() == [m.count(f) for f in range(1, faces + 1)]
        for f in range(1, faces + 1):
            if len(m) < dice:
                assert ms[a.add_edges[r, f - 1]] == tuple(sorted(m + (f,)))
            if f in m:
                rest = list(m)
                rest.remove(f)
                assert ms[a.sub_face[r, f - 1]] == tuple(rest)
            else:
                assert a.sub_face[r, f - 1] == -1
        subs = {ms[a.sub_edges[r, j]] for j in range(a.sub_count[r])}
        assert len(subs) == a.sub_count[r] == len(set(m))
    # the roll probabilities are the multinomial ones, counted by brute force
    counts: dict[tuple[int, ...], int] = {}
    for roll in itertools.product(range(1, faces + 1), repeat=dice):
        key = tuple(sorted(roll))
        counts[key] = counts.get(key, 0) + 1
    full = [ms[r] for r in range(a.levels[dice], a.levels[dice + 1])]
    assert np.allclose(a.roll_probs, [counts[m] / faces**dice for m in full])


def _brute_turn(graph: DiceGraph, first: np.ndarray, later: np.ndarray, rolls: int) -> float:
    """Expected value of a turn by enumerating every keep of every roll (no shared recursion)."""
    rolls_list = [graph.multisets[r] for r in graph.levels[graph.dice]]
    pos = {m: i for i, m in enumerate(rolls_list)}

    def outcomes(kept: tuple[int, ...]):
        n = graph.dice - len(kept)
        for extra in itertools.product(range(1, graph.faces + 1), repeat=n):
            yield tuple(sorted(kept + extra))

    def roll_value(m: tuple[int, ...], left: int, is_first: bool) -> float:
        best = (first if is_first else later)[pos[m]]
        if left == 0:
            return best
        for size in range(len(m)):
            for kept in set(itertools.combinations(m, size)):
                outs = list(outcomes(kept))
                best = max(best, sum(roll_value(o, left - 1, False) for o in outs) / len(outs))
        return best

    outs = list(outcomes(()))
    return sum(roll_value(o, rolls - 1, True) for o in outs) / len(outs)


@pytest.mark.parametrize(("dice", "faces", "rolls"), [(1, 6, 2), (2, 3, 3), (3, 2, 2), (2, 4, 1)])
def test_reference_turn_value_is_the_brute_force_expectimax(dice, faces, rolls):
    g = DiceGraph(dice, faces)
    rng = np.random.default_rng(dice * 100 + faces * 10 + rolls)
    first = rng.integers(0, 30, g.n_rolls).astype(float)
    later = rng.integers(0, 30, g.n_rolls).astype(float)
    got = turn_value(g, first[:, None], later[:, None], rolls)[0]
    assert got == pytest.approx(_brute_turn(g, first, later, rolls), rel=1e-12)


def _run_block(g: DiceGraph, score: np.ndarray, pick: np.ndarray, first_pick: np.ndarray):
    """turn_block on `score` with fresh output and scratch arrays: (val, keeps [stage], levels [left], lo)."""
    width, rolls = score.shape[2], len(pick)
    a = g.arrays
    lo = int(a.levels[g.dice])
    val = np.empty((g.n_rolls, width))
    keeps = np.empty((max(rolls - 1, 1), lo, width))
    levels = np.empty((rolls, g.n_rolls, width))
    scratch = (np.empty((len(g.multisets), width)), np.empty((len(g.multisets), width)))
    turn_block(score, pick, first_pick, a, TurnArrays(val, *scratch, keeps, levels))
    return val, keeps, levels, lo


@settings(max_examples=25, deadline=None)
@given(shape=st.sampled_from(SHAPES), rolls=st.integers(1, 4), seed=st.integers(0, 2**32 - 1))
def test_compiled_turn_recursion_matches_the_reference(shape, rolls, seed):
    """turn_block (numba where installed) gives the reference's roll values and keep values, column by
    column, bit for bit: it sums the faces in the reference's order, and a max is exact."""
    g = DiceGraph(*shape)
    rng = np.random.default_rng(seed)
    score = rng.normal(0, 10, (2, g.n_rolls, W))
    score[:, rng.random(g.n_rolls) < 0.1, :] = -np.inf  # rolls no box can take
    val, keeps, levels, lo = _run_block(g, score, plain_pick(rolls), plain_pick(rolls))
    want = turn_tables(g, score[1], score[0], rolls)
    assert np.array_equal(val, want[0][0])
    for stage in range(rolls - 1):
        ref = want[stage][1]
        assert ref is not None
        assert np.array_equal(keeps[stage], ref[:lo])
    for stage in range(rolls):
        assert np.array_equal(levels[rolls - 1 - stage], want[stage][0])


@pytest.mark.parametrize("width", [1, W - 1, W + 1])
def test_compiled_turn_recursion_refuses_blocks_of_another_width(width):
    """The kernel's lanes are W states wide: arrays of another width are refused, not overrun."""
    g = DiceGraph(2, 3)
    with pytest.raises(ValueError, match="columns"):
        _run_block(g, np.zeros((2, g.n_rolls, width)), plain_pick(2), plain_pick(2))


@settings(max_examples=20, deadline=None)
@given(shape=st.sampled_from(SHAPES), rolls=st.integers(1, 6), seed=st.integers(0, 2**32 - 1))
def test_compiled_recursion_with_a_score_row_per_rolls_left_matches_the_reference_fold(shape, rolls, seed):
    """With banked rolls each decision scores against its own row (the bank it leaves): pick[left] = left,
    and every decision's roll values come back in levels_out, as `reference.fold` gives them."""
    g = DiceGraph(*shape)
    rng = np.random.default_rng(seed)
    score = rng.normal(0, 10, (rolls, g.n_rolls, W)) + np.arange(rolls)[:, None, None]  # more bank, more worth
    pick = np.arange(rolls, dtype=np.int64)
    val, keeps, levels, lo = _run_block(g, score, pick, pick)
    want = fold(g, list(score))
    for left in range(rolls):
        assert np.allclose(levels[left], want[left][0])
        if left:
            assert np.allclose(keeps[rolls - 1 - left], want[left][1][:lo])
    assert np.allclose(val, want[-1][0])


@settings(max_examples=20, deadline=None)
@given(shape=st.sampled_from(SHAPES), rolls=st.integers(1, 5), seed=st.integers(0, 2**32 - 1))
def test_first_roll_rows_beside_banked_rows_match_the_reference(shape, rolls, seed):
    """Banked rolls and first-roll scoring together: the fold goes on with the later rows (pick), and
    levels_out holds each decision's values as a turn's first (first_pick), as `first_values` gives them."""
    g = DiceGraph(*shape)
    rng = np.random.default_rng(seed)
    score = rng.normal(0, 10, (2 * rolls, g.n_rolls, W))
    later = np.arange(rolls, dtype=np.int64)
    val, _, levels, _ = _run_block(g, score, later, later + rolls)
    decisions = fold(g, list(score[:rolls]))
    firsts = first_values(g, decisions, list(score[rolls:]))
    for left in range(rolls):
        assert np.allclose(levels[left], firsts[left])
    assert np.allclose(val, decisions[-1][0])


@given(st.integers(1, 5), st.integers(2, 6), st.data())
@settings(max_examples=40, deadline=None)
def test_keep_order_is_the_games_and_kept_rows_undo_its_masks(dice, faces, data):
    """A roll's proper keeps come in the order the game lists them (`GameState.legal_keeps` takes them from
    `sub_multisets`), each as a mask of the roll's sorted dice that keeps exactly it, and `kept_rows`
    maps every mask back to the multiset it keeps."""
    from dicecup.language.dice import sub_multisets

    g = DiceGraph(dice, faces)
    rows, counts, masks = g.keep_order
    i = data.draw(st.integers(0, g.n_rolls - 1))
    roll = g.multisets[int(g.roll_rows[i])]
    want = [k for k in sub_multisets(roll) if len(k) < len(roll)]
    assert [g.multisets[int(r)] for r in rows[i, : counts[i]]] == want
    assert len(set(masks[i, : counts[i]].tolist())) == counts[i]
    for j, k in enumerate(want):
        assert tuple(d for b, d in enumerate(roll) if masks[i, j] >> b & 1) == k
    mask = data.draw(st.integers(0, (1 << dice) - 1))
    kept = tuple(d for b, d in enumerate(roll) if mask >> b & 1)
    assert g.kept_rows[i, mask] == g.index[kept]


@pytest.mark.parametrize(("dice", "faces"), [(3, 6), (2, 40)])
def test_rows_of_counts_finds_each_multiset_also_past_one_int64_of_counts(dice, faces):
    """`rows_of_counts` gives every multiset's own row, where the counts pack into one int64 (3 d6) and where
    they do not (3 ** 40 passes 2 ** 62: looked up a tuple at a time)."""
    g = DiceGraph(dice, faces)
    counts = np.zeros((len(g.multisets), faces), dtype=np.int64)
    for i, m in enumerate(g.multisets):
        for d in m:
            counts[i, d - 1] += 1
    rng = np.random.default_rng(0)
    order = rng.permutation(len(g.multisets))
    np.testing.assert_array_equal(g.rows_of_counts(counts[order]), order)
    np.testing.assert_array_equal(g.rows_of_counts(counts[order].reshape(-1, 1, faces)), order.reshape(-1, 1))


@settings(max_examples=25, deadline=None)
@given(
    rows=st.integers(0, 3 * (1 << 16)),
    width=st.integers(1, 13),
    dtype=st.sampled_from([np.int64, np.int32, np.uint64, np.float64]),
)
def test_zeroed_gives_a_zero_writable_array_mapped_from_the_paged_size(rows, width, dtype):
    """`pages.zeroed` is `np.zeros` to its caller (shape, dtype, C order, writable, equal after pickling), on
    mapped pages from `PAGED_BYTES` on (numpy's own below), and a run's counts keep their column-major layout."""
    import mmap
    import pickle

    from dicecup.numeric.pages import PAGED_BYTES, zeroed
    from dicecup.numeric.records import counts_array

    a = zeroed((rows, width), dtype)
    assert a.shape == (rows, width) and a.dtype == np.dtype(dtype) and a.flags.c_contiguous and a.flags.writeable
    assert not a.any()
    mapped = a.nbytes >= PAGED_BYTES
    base = a.base
    while base is not None and not isinstance(base, mmap.mmap):
        base = getattr(base, "base", None) if isinstance(base, np.ndarray) else getattr(base, "obj", None)
    assert isinstance(base, mmap.mmap) == mapped
    if rows:
        a[-1, -1] = 7
        a[0, 0] = 3
        again = pickle.loads(pickle.dumps(a))
        np.testing.assert_array_equal(again, a)
        assert int(a.sum()) == (3 if a.size == 1 else 10)
    counts = counts_array(rows, width)
    assert counts.shape == (rows, width) and not counts.any()
    assert counts.strides == (8, 8 * (rows + 1))  # column by column, a padding row: one layout for every chunk


def test_zeroed_takes_a_whole_number_shape():
    from dicecup.numeric.pages import PAGED_BYTES, zeroed

    assert zeroed(PAGED_BYTES // 8, np.int64).shape == (PAGED_BYTES // 8,)
    assert zeroed(0, np.int64).shape == (0,)
