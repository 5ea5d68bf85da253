"""`turn_scores.SituatedLegality` gives the engine's legal boxes in every situation, asking it once per what the
rules read: the engine (`advice_scoring.legal_in`, asked afresh each time) is the oracle."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from _solver_helpers import TINY
from hypothesis import given, settings
from hypothesis import strategies as st

from dicecup import Engine, Variant, hookimpl
from dicecup.language.card import Card
from dicecup.language.contexts import Situation
from dicecup.language.frozen import FrozenMap
from dicecup.solver.advice_scoring import legal_in
from dicecup.solver.turn_scores import SituatedLegality

YAMB = Engine(entry_points=False).variant("yamb")
ANNOUNCE_BOXES = [b for b in YAMB.box_ids if YAMB.box(b).column == "announce"]


def _situation(announced: str | None, rolls_used: int, turn: int, rolls: int = 3) -> Situation:
    state = FrozenMap() if announced is None else FrozenMap({"announced": announced})
    return Situation(turn=turn, rolls_used=rolls_used, rolls_left=rolls - rolls_used, turn_state=state)


calls = st.lists(
    st.tuples(st.sampled_from([None, *ANNOUNCE_BOXES]), st.integers(1, 3), st.integers(1, 52), st.booleans()),
    min_size=1,
    max_size=12,
)


@settings(max_examples=40, deadline=None)
@given(filled=st.sets(st.sampled_from(YAMB.box_ids), max_size=51), asked=calls)
def test_the_memo_answers_as_the_engine_in_every_situation(filled: set[str], asked: list) -> None:
    """Yamb's legality reads the announcement (the turn's rule state) and not the roll count or the turn: every
    answer is the engine's, and situations that differ only in what the rules did not read ask it once."""
    card, rolls, memo = Card(dict.fromkeys(filled, 0)), YAMB.all_rolls(), SituatedLegality(YAMB)
    for announced, used, turn, first in asked:
        sit = _situation(announced, used, turn)
        got = memo.allowed(card, rolls, sit, first)
        assert np.array_equal(got, legal_in(YAMB, card, rolls, sit, first))
    assert memo.asked == len({announced for announced, *_ in asked})


class LastRollPair:
    """The pair box takes a roll only with no rolls left: a legality rule that reads the situation's rolls."""

    @hookimpl
    def dicecup_legal_boxes(self, ctx):
        return [b for b in ctx.open_boxes if b != "pair" or ctx.rolls_left == 0]


def _tiny(tmp_path: Path) -> Variant:
    path = tmp_path / "threshold.yaml"
    path.write_text(TINY["threshold"], encoding="utf-8")
    return Engine([LastRollPair()], entry_points=False).load_file(path)


def test_a_field_the_rules_read_tells_situations_apart(tmp_path: Path) -> None:
    """Situations differing in the rolls left are asked apart (the pair is legal on the last roll alone), those
    differing in the turn alone are not; a new card starts afresh."""
    v = _tiny(tmp_path)
    rolls, memo, pair = v.all_rolls(), SituatedLegality(v), v.box_ids.index("pair")
    for card in (Card(), Card({"ones": 1})):
        for turn in (1, 2, 3):
            for used in (1, 2):
                sit = _situation(None, used, turn, rolls=2)
                got = memo.allowed(card, rolls, sit, used == 1)
                assert np.array_equal(got, legal_in(v, card, rolls, sit, used == 1))
                assert got[:, pair].all() == (used == 2)
    assert memo.asked == 4  # two cards, each with rolls left and without
