"""The compiled player's dice keys (`numeric.draws.hand_keys`): a roll's row found from the sum of its dice's keys is
the row the dice graph reaches die by die, for every multiset and face (so the games stay the same)."""

from __future__ import annotations

import numpy as np
import pytest

from dicecup.numeric import compiled, draws
from dicecup.numeric.dice import DiceGraph

pytestmark = pytest.mark.skipif(not compiled.NUMBA_KERNELS, reason="numba is not installed")


@pytest.mark.parametrize(("dice", "faces"), [(5, 6), (6, 6), (3, 4), (1, 2), (4, 8)])
def test_keys_add_like_the_dice_graph(dice: int, faces: int) -> None:
    d = DiceGraph(dice, faces).arrays
    hk = draws.hand_keys(d.row_counts, dice, faces)
    rows = np.arange(len(d.row_size))
    assert (hk.row_of_key[hk.key_of] == rows).all()  # every multiset has its own key
    assert np.count_nonzero(hk.row_of_key >= 0) == len(rows)
    for h in rows[d.row_size < dice]:
        for f in range(faces):
            assert hk.row_of_key[hk.key_of[h] + hk.weight[f]] == d.add_edges[h, f]


def test_no_table_past_the_limits() -> None:
    """Too many keys (or faces past a byte's draw): empty arrays, and the player walks the dice graph."""
    d = DiceGraph(2, 20).arrays
    assert len(draws.hand_keys(d.row_counts, 2, 20).key_of) == 0
    big = DiceGraph(6, 8).arrays  # 7 ** 8 keys
    assert len(draws.hand_keys(big.row_counts, 6, 8).row_of_key) == 0


@pytest.mark.parametrize(("dice", "faces"), [(5, 6), (10, 2), (3, 20), (4, 8)])
def test_a_chunk_of_dice_keys_as_its_faces(dice: int, faces: int) -> None:
    """`roll_draws`: the most dice a chunk whose outcomes fit CHUNK_OUTCOMES, and each outcome's key is the
    multiset key of the dice its digits give (`chunk_faces`), so a roll drawn a chunk at a time lands on the
    row the dice graph reaches die by die."""
    d = DiceGraph(dice, faces).arrays
    hk = draws.hand_keys(d.row_counts, dice, faces)
    rd = draws.roll_draws(dice, faces, hk.weight)
    assert faces**rd.per <= draws.CHUNK_OUTCOMES and (rd.per == dice or faces ** (rd.per + 1) > draws.CHUNK_OUTCOMES)
    for j in range(1, rd.per + 1):
        n = faces**j
        assert rd.outcomes[j] == n and rd.low[j] == (1 << 32) % n
        outcome = np.arange(n)
        got = draws.chunk_faces(outcome, j, faces)
        assert got.min() == 1 and got.max() == faces
        assert len({tuple(r) for r in got.tolist()}) == n  # every sequence of j dice once
        if len(hk.weight):
            keys = rd.keys[rd.start[j] : rd.start[j] + n]
            assert (keys == hk.weight[got - 1].sum(axis=1)).all()
            assert (hk.row_of_key[keys] >= 0).all()


def test_dice_streams_roll_in_chunks() -> None:
    """`DiceStreams.roll`: a roll of more dice than a chunk takes two draws; the faces stay in range and a new
    turn starts from a fresh word (the same seed gives the same first roll of any game in any turn order)."""
    a, b = draws.DiceStreams(3, 4, 6, 8), draws.DiceStreams(3, 4, 6, 8)
    first = a.roll(2, 8)
    assert len(first) == 8 and set(first) <= set(range(1, 7))
    b.roll(1, 5)
    assert b.roll(2, 8) == first
