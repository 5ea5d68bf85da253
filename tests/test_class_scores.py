"""The score classes' fill arrays (`numeric.moves.class_scores`), compiled, against numpy written here from what
the player's arrays mean: a cell is a score << 1, or << 1 | 1 the row of `extras` whose score and awards it wins."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dicecup.numeric import compiled, moves

needs_numba = pytest.mark.skipif(not compiled.NUMBA_KERNELS, reason="numba is not installed")


def _oracle(cells, extras, n_awards, lo, hi, off, dense):
    """Each cell read on its own: its score (an extra row's where odd), the points it gains with the awards,
    and the slot the dense map gives its score in its box (-1 outside the box's range)."""
    n, _, n_rolls, nb = cells.shape
    points = np.zeros((n, 2, nb, n_rolls))
    slots = np.zeros((n, 2, nb, n_rolls), dtype=np.int64)
    for c, f, r, b in np.ndindex(n, 2, n_rolls, nb):
        cell = int(cells[c, f, r, b])
        row = extras[cell >> 1] if cell & 1 else None
        score = int(row[0]) if row is not None else cell >> 1
        points[c, f, b, r] = score + (int(row[1 : 1 + n_awards].sum()) if row is not None else 0)
        slots[c, f, b, r] = dense[off[b] + score - lo[b]] if lo[b] <= score <= hi[b] else -1
    same = np.array([(points[c, 0] == points[c, 1]).all() and (slots[c, 0] == slots[c, 1]).all() for c in range(n)])
    return points, slots, same.astype(bool)


@st.composite
def _classes(draw):
    n, n_rolls, nb = draw(st.integers(0, 5)), draw(st.integers(1, 4)), draw(st.integers(1, 4))
    width, n_awards = draw(st.integers(1, 4)), draw(st.integers(0, 3))
    n_awards = min(n_awards, width - 1)
    scores = st.integers(-3, 40)
    cells = np.array(
        draw(st.lists(scores, min_size=n * 2 * n_rolls * nb, max_size=n * 2 * n_rolls * nb)), dtype=np.int64
    )
    cells = (cells << 1).reshape(n, 2, n_rolls, nb)
    n_extras = 0
    for at in np.ndindex(cells.shape):  # some cells win awards: each names its own row of `extras`
        if draw(st.integers(0, 5)) == 0:
            cells[at] = n_extras << 1 | 1
            n_extras += 1
    rows = st.lists(st.lists(scores, min_size=width, max_size=width), min_size=n_extras, max_size=n_extras)
    extras = np.array(draw(rows), dtype=np.int64).reshape(n_extras, width)
    if draw(st.booleans()) and n:  # the first roll scores like a later one in the first class
        cells[0, 1] = cells[0, 0]
    lo = np.array([draw(st.integers(-2, 10)) for _ in range(nb)], dtype=np.int64)
    hi = lo + np.array([draw(st.integers(0, 30)) for _ in range(nb)], dtype=np.int64)
    off = np.concatenate([[0], np.cumsum(hi - lo + 1)[:-1]]).astype(np.int64)
    size = int(off[-1] + hi[-1] - lo[-1] + 1)
    dense = np.array(draw(st.lists(st.integers(-1, 99), min_size=size, max_size=size)), dtype=np.int64)
    return cells.astype(np.int32), extras, n_awards, (lo, hi, off, dense)


@settings(max_examples=80, deadline=None)
@given(_classes())
def test_class_scores_read_each_cell_as_the_player_does(classes):
    cells, extras, n_awards, maps = classes
    points, slots, same = moves.class_scores(cells, extras, n_awards, maps)
    want = _oracle(cells, extras, n_awards, *maps)
    assert points.dtype == np.float64 and slots.dtype == np.int64 and same.dtype == bool
    assert (points == want[0]).all() and (slots == want[1]).all() and (same == want[2]).all()


@needs_numba
def test_the_ahead_of_time_and_numba_kernels_agree(monkeypatch):
    """The build made ahead of time and numba's compiled kernel give the same arrays (each is what runs on
    some machine)."""
    rng = np.random.default_rng(3)
    cells = (rng.integers(0, 30, size=(7, 2, 5, 3)) << 1).astype(np.int32)
    cells[2, 1, 3, 0], cells[5, 0, 0, 2] = 1, 3  # extra rows 0 and 1
    extras = np.array([[7, 35, 0], [50, 0, 100]], dtype=np.int64)
    lo, hi = np.zeros(3, dtype=np.int64), np.full(3, 29, dtype=np.int64)
    maps = (lo, hi, np.arange(3, dtype=np.int64) * 30, rng.integers(-1, 60, size=90).astype(np.int64))
    built = moves.class_scores(cells, extras, 2, maps)
    monkeypatch.setattr(compiled, "aot_fits", lambda *args: False)
    jitted = moves.class_scores(cells, extras, 2, maps)
    for a, b, w in zip(built, jitted, _oracle(cells, extras, 2, *maps), strict=True):
        assert (a == b).all() and (a == w).all()
