"""Which successor slot a box score leads to (`solver.scoreslots.ScoreSlots`): read from its table of every
score value, searched, and by a plain walk of each box's scores, the same slot for any score; and the exact map the
compiled player reads."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from dicecup.solver.rules import ERR
from dicecup.solver.scoreslots import ScoreSlots


def walk(scores: list[int], slots: list[int], s: int) -> int:
    """The slot of the box's first score at or above s; past its highest, that one's; none: slot 0."""
    for score, slot in zip(scores, slots, strict=True):
        if score >= s:
            return slot
    return slots[-1] if slots else 0


boxes = st.lists(
    st.lists(st.integers(-20, 120), max_size=8, unique=True)
    .map(sorted)
    .flatmap(
        lambda scores: st.tuples(
            st.just(scores), st.lists(st.integers(0, 5), min_size=len(scores), max_size=len(scores))
        )
    ),
    min_size=1,
    max_size=6,
)


@settings(max_examples=200, deadline=None)
@given(boxes, st.lists(st.integers(-40, 150) | st.just(ERR), min_size=1, max_size=30))
def test_the_table_the_search_and_a_walk_give_each_score_the_same_slot(card, asked):
    box_scores = [np.array(s, dtype=np.int64) for s, _ in card]
    slot_of = [np.array(k, dtype=np.int64) for _, k in card]
    table, search = ScoreSlots(box_scores, slot_of), ScoreSlots(box_scores, slot_of)
    search._table = None  # the cached table taken away: every look-up searched
    b = np.array([i % len(card) for i in range(len(asked))], dtype=np.int64)
    s = np.array(asked, dtype=np.int64)
    want = [walk(*card[i], x) for i, x in zip(b.tolist(), asked, strict=True)]
    assert table._table is not None
    assert table.of(b, s).tolist() == want
    assert search.of(b, s).tolist() == want


@settings(max_examples=200, deadline=None)
@given(boxes, st.integers(1, 7))
def test_the_exact_map_names_each_score_a_box_gets_and_no_other(card, width):
    """`exact_map` (the compiled player's look-up): every score from a box's lowest to its highest maps to
    b * width + its slot where the box gets it, else -1; boxes lie one after another in the map."""
    box_scores = [np.array(s, dtype=np.int64) for s, _ in card]
    slot_of = [np.array(k, dtype=np.int64) for _, k in card]
    lo, hi, off, dense = ScoreSlots(box_scores, slot_of).exact_map(width)
    at = 0
    for b, (scores, slots) in enumerate(card):
        assert (lo[b], hi[b]) == ((min(scores), max(scores)) if scores else (0, 0)) and off[b] == at
        got = dense[at : at + hi[b] - lo[b] + 1].tolist()
        of = dict(zip(scores, slots, strict=True))
        assert got == [b * width + of[s] if s in of else -1 for s in range(lo[b], hi[b] + 1)]
        at += len(got)
    assert at == len(dense)
