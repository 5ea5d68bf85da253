"""The state coding (`numeric.coding`) against an oracle written from its definition, one box at a time.

A card's class code is one bit per filled box plus, above those bits, a mixed-radix
digit per flagged box saying which declared value it holds; a state adds each
threshold group's running total, clamped to the range where the end bonus is not
decided yet. The engine computes these for many rows at once with a few array
operations; the oracle here walks each box of each row in plain Python.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from _solver_helpers import tiny_variant
from hypothesis import given, settings
from hypothesis import strategies as st

from dicecup import Engine
from dicecup.language.model import BoxFlag, Card
from dicecup.numeric.coding import EMPTY, ClassCoding, StateIndex
from dicecup.solver.errors import SolverError
from dicecup.solver.solve import solve


def _oracle_code(coding: ClassCoding, row: list[int]) -> int:
    """The class code of one row, box by box (no interchangeable boxes)."""
    code = 0
    for b, score in enumerate(row):
        if score == EMPTY:
            continue
        code |= 1 << b
        declared = coding.flag_values.get(b, ())
        if score in declared:
            code += (declared.index(score) + 1) * coding.radix[b] << coding.nb
    return code


def _oracle_totals(ix: StateIndex, row: list[int]) -> list[int]:
    """Each threshold group's total of the filled boxes, clamped: below lo - (what its open boxes can still
    add at most) the bonus is lost whatever comes, above hi - (what they add at least) it is won."""
    out = []
    for g, boxes in enumerate(ix.groups):
        total = sum(row[b] for b in boxes if row[b] != EMPTY)
        still_max = sum(ix.box_max[b] for b in boxes if row[b] == EMPTY)
        still_min = sum(ix.box_min[b] for b in boxes if row[b] == EMPTY)
        lo, hi = ix.clamp_bounds[g]
        out.append(min(max(total, lo - still_max), hi - still_min))
    return out


def _rows(nb: int, scores: list[int]) -> st.SearchStrategy[np.ndarray]:
    """1 to 6 card rows: each box open or holding one of `scores`."""
    box = st.one_of(st.just(EMPTY), st.sampled_from(scores))
    return st.lists(st.lists(box, min_size=nb, max_size=nb), min_size=1, max_size=6).map(
        lambda rows: np.array(rows, dtype=np.int64)
    )


_YAHTZEE = Engine().variant("yahtzee")
_YAHTZEE_CODING = ClassCoding(_YAHTZEE)


@settings(max_examples=150, deadline=None)
@given(_rows(len(_YAHTZEE.box_ids), [0, 1, 3, 12, 25, 30, 40, 50, 63]))
def test_class_codes_are_the_bits_and_flag_digits_of_each_box(rows):
    """Yahtzee's yahtzee box is flagged (it matters later whether it holds 50): a row's code has its digit."""
    assert _YAHTZEE_CODING.flag_values  # the case this test is about
    got = _YAHTZEE_CODING.class_codes_of(rows).tolist()
    assert got == [_oracle_code(_YAHTZEE_CODING, row) for row in rows.tolist()]


@pytest.fixture(scope="module")
def indexes(tmp_path_factory) -> dict[str, StateIndex]:
    """The solved state index of two tiny variants: one with flags, one with two threshold groups."""
    tmp = Path(tmp_path_factory.mktemp("coding"))
    return {name: solve(tiny_variant(tmp, name)).index for name in ("flags", "two-groups")}


@settings(max_examples=100, deadline=None)
@given(data=st.data())
@pytest.mark.parametrize("name", ["flags", "two-groups"])
def test_encode_gives_each_rows_code_and_clamped_group_totals(indexes, name, data):
    ix = indexes[name]
    assert ix.flag_values if name == "flags" else ix.G == 2  # what each case is about
    rows = data.draw(_rows(ix.nb, sorted({0, 1, 2, 3, 4, 5, 6, 9, 15, 20, 40, *ix.box_max})))
    codes, totals = ix.encode(rows)
    assert codes.tolist() == [_oracle_code(ix, row) for row in rows.tolist()]
    assert totals.shape == (len(rows), ix.G)
    assert totals.tolist() == [_oracle_totals(ix, row) for row in rows.tolist()]


def test_a_flag_on_the_open_box_mark_is_refused(monkeypatch):
    """A rule declaring the very value that marks an open box would make every open box read as flagged."""
    v = Engine().variant("yahtzee")
    monkeypatch.setattr(type(v), "state_flags", lambda self: (BoxFlag("yahtzee", int(EMPTY)),))
    with pytest.raises(SolverError, match="state flag value .* on box 'yahtzee', out of range"):
        ClassCoding(v)


def _card_of(box_ids: tuple[str, ...], row: list[int]) -> Card:
    """The card whose `vals` row is `row` (boxes filled in a shuffled order: a card's order is not its class)."""
    filled = [(box_ids[b], score) for b, score in enumerate(row) if score != EMPTY]
    return Card(dict(reversed(filled)))


@settings(max_examples=150, deadline=None)
@given(
    _rows(len(_YAHTZEE.box_ids), [0, 1, 3, 12, 25, 30, 40, 50, 63]),
    st.sampled_from([(), ((0, 2, 4),), ((1, 3), (6, 7, 8))]),
)
def test_one_cards_code_is_its_rows_code(rows, symmetric):
    """`class_of_card` (one card in plain Python, the advisor's per-decision path) is `class_codes_of` of the
    card's row, interchangeable boxes counted the same way."""
    coding = ClassCoding(_YAHTZEE, symmetric)
    want = coding.class_codes_of(rows).tolist()
    assert [coding.class_of_card(_card_of(coding.box_ids, row)) for row in rows.tolist()] == want


@settings(max_examples=100, deadline=None)
@given(data=st.data())
@pytest.mark.parametrize("name", ["flags", "two-groups"])
def test_one_cards_state_is_its_rows_encoding(indexes, name, data):
    """`state_of_card` gives what `encode` gives for the card's row: the code and the clamped group totals."""
    ix = indexes[name]
    rows = data.draw(_rows(ix.nb, sorted({0, 1, 2, 3, 4, 5, 6, 9, 15, 20, 40, *ix.box_max})))
    codes, totals = ix.encode(rows)
    for row, code, total in zip(rows.tolist(), codes.tolist(), totals, strict=True):
        got_code, got_totals = ix.state_of_card(_card_of(ix.box_ids, row))
        assert (got_code, got_totals.shape, got_totals.dtype) == (code, (1, ix.G), np.int64)
        assert got_totals[0].tolist() == total.tolist()


def test_a_card_with_a_box_the_variant_lacks_is_refused():
    with pytest.raises(KeyError, match="nonesuch"):
        _YAHTZEE_CODING.class_of_card(Card({"ones": 3, "nonesuch": 4}))


@settings(max_examples=150, deadline=None)
@given(data=st.data())
@pytest.mark.parametrize("name", ["flags", "two-groups"])
def test_the_kernels_state_lookup_is_the_index_lookup(indexes, name, data):
    """`lookup.state_slot`, what every kernel calls per successor (plain Python, and compiled where numba is), is
    the vector `lookup` of the class with its group totals plus the increment, clamped for that class; codes
    past the index and unreachable classes give `size` (the NaN sentinel)."""
    from dicecup.numeric import compiled, lookup

    ix = indexes[name]
    code = data.draw(st.integers(-2, ix.n_codes + 2))
    prog = np.array(data.draw(st.lists(st.integers(-5, 80), min_size=ix.G, max_size=ix.G)), dtype=np.int64)
    inc = np.array(data.draw(st.lists(st.integers(0, 70), min_size=ix.G, max_size=ix.G)), dtype=np.int64)
    if 0 <= code < ix.n_codes:
        clamped = ix.clamp(np.array([code & ix.full]), (prog + inc)[None, :])
        want = int(ix.lookup(np.array([code]), clamped)[0])
    else:
        want = ix.size
    assert lookup.state_slot(ix.arrays, code, prog, inc) == want
    if compiled.NUMBA:
        assert lookup.jitted()(ix.arrays, code, prog, inc) == want


@settings(max_examples=150, deadline=None)
@given(
    _rows(len(_YAHTZEE.box_ids), [0, 1, 3, 12, 25, 30, 40, 50, 63]),
    st.sampled_from([(), ((0, 2, 4),), ((1, 3), (6, 7, 8))]),
    st.sampled_from([0, 3, 25, 50]),
)
def test_a_fills_successor_code_is_the_code_plus_its_fill_code_and_shift(rows, symmetric, score):
    """Filling an open box adds `fill_code` (its bit, its flag digit) plus `fill_shift` (a symmetric group's box
    fills the group's first open one) to the card's canonical code: the code of the card with the box filled."""
    coding = ClassCoding(_YAHTZEE, symmetric)
    for row, code in zip(rows.tolist(), coding.class_codes_of(rows).tolist(), strict=True):
        shift = coding.fill_shift(code)
        assert shift.shape == (coding.nb,)
        for b in (b for b, s in enumerate(row) if s == EMPTY):
            filled = np.array([row[:b] + [score] + row[b + 1 :]], dtype=np.int64)
            want = int(coding.class_codes_of(filled)[0])
            assert code + coding.fill_code(b, coding.digit_of(b, score)) + int(shift[b]) == want


@settings(max_examples=100, deadline=None)
@given(st.lists(st.lists(st.booleans(), min_size=13, max_size=13), min_size=1, max_size=5))
def test_packed_boxes_are_the_filled_bits_and_unpack_to_the_open_boxes(flags):
    """`pack_boxes` of a row's filled boxes is its class code's filled bits; `open_boxes` reads them back."""
    filled = np.array(flags, dtype=bool)
    rows = np.where(filled, 1, EMPTY).astype(np.int64)  # (1 is no declared flag value)
    packed = _YAHTZEE_CODING.pack_boxes(filled)
    assert packed.tolist() == [sum(1 << b for b, f in enumerate(row) if f) for row in flags]
    assert packed.tolist() == (_YAHTZEE_CODING.class_codes_of(rows)).tolist()
    assert np.array_equal(_YAHTZEE_CODING.open_boxes(packed), ~filled)


@pytest.mark.parametrize("name", ["flags", "two-groups"])
def test_fill_totals_are_what_a_box_adds_to_each_group(indexes, name):
    ix = indexes[name]
    scores = np.array([0, 2, 7, 30], dtype=np.int64)
    for b in range(ix.nb):
        want = [[s if b in boxes else 0 for boxes in ix.groups] for s in scores.tolist()]
        assert ix.fill_totals(b, scores).tolist() == want
