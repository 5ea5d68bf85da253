"""`turn_scores.TurnScores.points` hands a card whose facts repeat the table it kept (`tracer.Traced.table`): the
answers must stay those of tables learned afresh for that card alone, across cards that read new facts."""

from __future__ import annotations

import random

import numpy as np
import pytest

from dicecup import Card, Engine
from dicecup.solver.turn_scores import TurnScores


def _cards(v, n: int, seed: int) -> list[Card]:
    """`n` cards of `v` with random boxes filled by random scores each could get (some of them twice over)."""
    rng = random.Random(seed)
    rolls = v.all_rolls()
    out = []
    for _ in range(n):
        boxes = rng.sample(v.box_ids, rng.randrange(len(v.box_ids)))
        out.append(Card({b: v.score(Card(), b, rng.choice(rolls)).score for b in boxes}))
    return out + out[:2]


@pytest.mark.parametrize("variant_id", ["yahtzee", "yatzy"])
def test_kept_tables_answer_as_fresh_ones(engine: Engine, variant_id: str) -> None:
    v = engine.variant(variant_id)
    warm = TurnScores(v)
    for card in _cards(v, 6, 3):
        row = warm.row_of(card)
        got, fresh = warm.points(row), TurnScores(v).points(row)
        assert np.array_equal(got[0], fresh[0]) and np.array_equal(got[1], fresh[1])


def test_a_table_that_reads_no_fact_is_handed_out_again(engine: Engine) -> None:
    """Yamb's scores read nothing of the card: once learned (the first card), every card takes the same table,
    with nothing asked of the engine."""
    v = engine.variant("yamb")
    tables = TurnScores(v)
    first, second = (tables.points(tables.row_of(card)) for card in _cards(v, 2, 5)[:2])
    asked = tables.scores.traced.asked
    third = tables.points(tables.row_of(Card({"down.ones": 3})))
    assert third[1] is second[1] and tables.scores.traced.asked == asked
    assert np.array_equal(first[1], second[1])
    assert not third[1].flags.writeable
