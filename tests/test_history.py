"""The move history states share (`History`) and the undo stack built on it (`UndoStack`): each reads as the
plain sequence it replaces (a tuple of moves, a list of states), whatever the operations (hypothesis)."""

from __future__ import annotations

import copy
import pickle
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dicecup import Game, GameState, IllegalAction, Keep, RollDice, Score
from dicecup.game.history import EMPTY, History
from dicecup.game.undo import CHECKPOINT, UndoStack

MOVES = st.one_of(
    st.builds(RollDice, st.lists(st.integers(1, 6), min_size=1, max_size=5)),
    st.builds(Keep, st.lists(st.integers(1, 6), max_size=4)),
    st.builds(Score, st.sampled_from(["ones", "chance", "yahtzee"])),
)


@given(st.lists(MOVES, max_size=40), st.integers(-45, 45), st.integers(-45, 45))
def test_a_history_reads_as_the_tuple_of_its_moves(moves, i, j):
    history = EMPTY + moves
    plain = tuple(moves)
    assert len(history) == len(plain) and bool(history) == bool(plain)
    assert list(history) == list(plain) and list(reversed(history)) == list(reversed(plain))
    assert history == plain and history == list(plain) and hash(history) == hash(plain)
    assert history[i:j] == plain[i:j] and history[::2] == plain[::2]
    if -len(plain) <= i < len(plain):
        assert history[i] == plain[i]
    else:
        with pytest.raises(IndexError):
            history[i]
    for move in plain[:3]:
        assert history.index(move) == plain.index(move) and history.count(move) == plain.count(move)
        assert move in history
    assert History(moves) == history and History(history) == history
    for twin in (copy.copy(history), copy.deepcopy(history), pickle.loads(pickle.dumps(history))):
        assert twin == history and list(twin) == list(plain)


@given(st.lists(MOVES, max_size=30), st.lists(MOVES, max_size=10), st.lists(MOVES, max_size=10))
def test_histories_share_their_common_moves(common, left, right):
    base = EMPTY + common
    a, b = base + left, base + right
    assert a.back(len(common)) is base and b.back(len(common)) is base  # shared, not copied
    assert a.since(len(common)) == left and (a == b) == (left == right)
    assert base.then(Score("chance")).before is base


def test_a_long_history_pickles_shallowly_and_frees_without_recursion():
    history = EMPTY
    for k in range(300_000):
        history = history.then(RollDice([k % 6 + 1]))
    back = pickle.loads(pickle.dumps(history))  # nesting is logarithmic: no RecursionError
    assert len(back) == len(history) and back[-1] == history[-1] and back[12345] == history[12345]
    del history, back  # a chain of 300,000 nodes released without exhausting the C stack


def test_a_state_constructed_by_hand_takes_any_sequence_of_moves(engine):
    state = GameState.new(engine.variant("yacht"), 1).roll(dice=[1, 2, 3, 4, 5])
    assert isinstance(state.history, History) and state.history == (RollDice([1, 2, 3, 4, 5]),)
    rebuilt = GameState(**{**{f: getattr(state, f) for f in ("variant", "players", "cards")}, "history": []})
    assert rebuilt.history == () and isinstance(rebuilt.history, History)


# ----------------------------------------------------------------------------- Game's undo stack

ACTIONS = st.lists(st.sampled_from(["move", "move", "move", "reroll", "undo", "replace"]), max_size=400)


@settings(max_examples=40, deadline=None)
@given(ACTIONS, st.integers(0, 2**32))
def test_undo_gives_back_every_state_as_a_list_of_states_would(engine, actions, seed):
    """The stack against the list of states it replaced: the same states after any moves, rerolls, undos and
    states put in place by hand, across whole states (CHECKPOINT) and copies."""
    v = engine.variant("yahtzee")
    game = Game.new(v, ["a", "b"], seed=seed)
    rng = random.Random(seed)
    model: list[GameState] = []  # the undo stack as a plain list

    def move() -> None:
        st_ = game.state
        if st_.over:
            return
        model.append(st_)
        if st_.is_chance:
            game.roll()
        else:
            game.apply(rng.choice(st_.legal_actions()))

    for action in actions:
        if action == "move":
            move()
        elif action == "reroll" and game.state.legal_keeps():
            model.append(game.state)
            game.reroll(list(rng.choice(game.state.legal_keeps())))
        elif action == "undo":
            if model:
                assert game.undo() == model.pop()
            else:
                with pytest.raises(IllegalAction):
                    game.undo()
        elif action == "replace":  # a host puts a state in place by hand: kept whole, no move leads to it
            game.state = GameState.new(v, ["a", "b"]).roll(dice=[rng.randint(1, 6) for _ in range(5)])
        assert len(game.history) == len(model)
    assert game.history == model and list(game.history) == model
    if model:
        assert game.history[-1] == model[-1] and game.history[0] == model[0]
    for twin in (copy.copy(game), copy.deepcopy(game), pickle.loads(pickle.dumps(game))):
        assert twin.history == model and twin.state == game.state
    while model:
        assert game.undo() == model.pop()


def test_a_long_game_keeps_a_whole_state_only_every_checkpoint(engine):
    game = Game.new(engine.variant("yahtzee"), ["a", "b"], seed=5, rounds=20)
    while not game.over:
        game.roll() if game.state.is_chance else game.apply(game.state.legal_actions()[-1])
    stack: UndoStack = game.history
    kept = len(stack._whole)
    assert len(stack) > 20 * CHECKPOINT and kept <= len(stack) // CHECKPOINT + 2
    assert stack[len(stack) // 2].history == game.state.history[: len(stack[len(stack) // 2].history)]
