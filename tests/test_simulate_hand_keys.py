"""The compiled player's dice keys (`jit.hand_keys`): a roll's row found from the sum of its dice's keys is
the row the dice graph reaches die by die, for every multiset and face (so the games stay the same)."""

from __future__ import annotations

import numpy as np
import pytest

from dicecup.numeric.dice import DiceGraph
from dicecup.simulate import jit

pytestmark = pytest.mark.skipif(not jit.AVAILABLE, reason="numba is not installed")


@pytest.mark.parametrize(("dice", "faces"), [(5, 6), (6, 6), (3, 4), (1, 2), (4, 8)])
def test_keys_add_like_the_dice_graph(dice: int, faces: int) -> None:
    d = DiceGraph(dice, faces).arrays
    hk = jit.hand_keys(d.row_counts, dice, faces)
    rows = np.arange(len(d.row_size))
    assert (hk.row_of_key[hk.key_of] == rows).all()  # every multiset has its own key
    assert np.count_nonzero(hk.row_of_key >= 0) == len(rows)
    for h in rows[d.row_size < dice]:
        for f in range(faces):
            assert hk.row_of_key[hk.key_of[h] + hk.weight[f]] == d.add_edges[h, f]


def test_no_table_past_the_limits() -> None:
    """Too many keys (or faces past a byte's draw): empty arrays, and the player walks the dice graph."""
    d = DiceGraph(2, 20).arrays
    assert len(jit.hand_keys(d.row_counts, 2, 20).key_of) == 0
    big = DiceGraph(6, 8).arrays  # 7 ** 8 keys
    assert len(jit.hand_keys(big.row_counts, 6, 8).row_of_key) == 0
