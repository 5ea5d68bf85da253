"""The reference agent of examples/rl: a learned card value (numpy) and each turn searched exactly against it.

On a small Yatzy (its upper section, chance and yatzy: 8 boxes, solved in a second) a few DAgger rounds must
learn a value whose play beats greedy and comes close to the optimum, on games of a run it never trained on.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("gymnasium")

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples" / "rl"))

from agent import TRAIN_SEED, Data, evaluate_net, learn
from learned import ExactTeacher
from valuenet import ValueNet

from dicecup import Engine
from dicecup.simulate import simulate

SMALL = {"ones", "twos", "threes", "fours", "fives", "sixes", "chance", "yatzy"}


@pytest.fixture(scope="module")
def small():
    yatzy = Engine().variant("yatzy")
    return yatzy.derive({"id": "yatzy-small", "boxes": {b: None for b in yatzy.box_ids if b not in SMALL}})


@pytest.fixture(scope="module")
def teacher(small):
    return ExactTeacher(small)


def test_the_teachers_states_are_the_solver_table_slot_by_slot(teacher):
    idx = teacher.exact.index
    assert np.array_equal(idx.lookup(teacher.codes, teacher.totals), np.arange(teacher.size))
    assert teacher.features.shape[0] == teacher.size and np.isfinite(teacher.features).all()
    # the learned copy of the table, with the exact values written back, plays exactly as the solver does
    exact_net = _Exact(teacher)
    a = teacher.play(exact_net, 300, 5)  # type: ignore[arg-type]
    b = simulate(teacher.variant, "optimal", 300, 5).totals
    assert np.array_equal(a, b)


def test_a_recorded_run_notes_every_turns_states_and_plays_the_same_games(teacher):
    """The optimal policy told of each turn (`on_turn`) records the states its games meet, as slots of the table,
    and plays as it plays unrecorded."""
    record: list[np.ndarray] = []
    a = teacher.play(None, 200, 6, 0, record)
    assert np.array_equal(a, teacher.play(None, 200, 6, 0))
    met = np.concatenate(record)
    assert len(record) >= len(SMALL) and ((met >= 0) & (met < teacher.size)).all()
    assert np.isfinite(teacher.values[met]).all()


def test_labels_add_the_states_one_box_away(teacher):
    start = np.array([int(teacher.exact.index.locate(np.full((1, 8), -1))[0])])
    got = teacher.label(start)
    assert start[0] in got
    # from the empty card, each box filled with each of its scores: the successors the turn's search compares
    after = teacher.exact.successors(teacher.codes[start], teacher.totals[start])
    want = np.sort(np.unique(after[np.isfinite(after)]))
    assert np.allclose(np.sort(np.unique(teacher.values[got[got != start[0]]])), want)


def test_the_network_fits_and_survives_a_round_trip(tmp_path):
    rng = np.random.default_rng(0)
    x = rng.random((2000, 5))
    y = 100 * x[:, 0] + 30 * np.sin(3 * x[:, 1])
    net = ValueNet(5, 16, scale=100.0)
    net.fit_inputs(x)
    before = float(np.mean((net.predict(x) - y) ** 2))
    net.train(x, y, 15, 1e-2, rng, batch=128)
    after = float(np.mean((net.predict(x) - y) ** 2))
    assert after < before / 20
    net.save(tmp_path / "v.npz", variant="v", train_seed=TRAIN_SEED)
    back, meta = ValueNet.load(tmp_path / "v.npz")
    assert np.array_equal(back.predict(x), net.predict(x)) and str(meta["variant"]) == "v"


@pytest.mark.slow
def test_dagger_learns_a_value_that_plays_close_to_optimal_on_unseen_games(teacher):
    net, history, played = learn(teacher, 5.0, rounds=3, round_games=2000, epochs=30, hidden=32, say=lambda s: None)
    assert [h["played_by"] for h in history] == ["optimal", "agent", "agent"]
    assert history[-1]["states"] >= history[0]["states"]  # the agent's own games add the states it meets
    assert played == 6000
    greedy = simulate(teacher.variant, "greedy", 4000, 7).totals.mean()
    optimal = teacher.exact.expected_score
    got = evaluate_net(net, teacher, 4000, 7, TRAIN_SEED).mean()  # run 7: never a training run
    assert got > greedy + 2
    assert got > 0.97 * optimal


def test_evaluation_refuses_training_runs(teacher):
    net = ValueNet(teacher.features.shape[1], 4)
    with pytest.raises(SystemExit, match="training"):
        evaluate_net(net, teacher, 10, TRAIN_SEED, TRAIN_SEED)
    with pytest.raises(SystemExit, match="training"):
        evaluate_net(net, teacher, 10, TRAIN_SEED + 3, TRAIN_SEED)


def test_data_keeps_each_state_once(teacher):
    data = Data(teacher)
    slots = np.arange(0, teacher.size, 97)
    first = data.add([slots])
    assert first == len(data.y) > 0
    assert data.add([slots]) == 0
    assert np.isfinite(data.y).all()  # the table's slots no game reaches (no value) are left out
    assert np.array_equal(data.y, teacher.values[data.slots])
    reached = slots[np.isfinite(teacher.values[slots])]
    assert np.isin(reached, data.slots).all() and len(data.slots) > len(reached)  # and their successors added


class _Exact:
    """A stand-in network that answers the exact values (what the table copy must reproduce)."""

    def __init__(self, teacher: ExactTeacher) -> None:
        self.values = teacher.values

    def predict(self, x: np.ndarray) -> np.ndarray:
        return self.values.copy()


def test_the_agents_table_split_over_processes_plays_the_very_games_of_one_process():
    """`agents_table.py --jobs N` splits an engine-played cell into N ranges of the run: the totals, game by game,
    are those one process plays."""
    from agents_table import split_totals

    variant = Engine().variant("yamb")  # bot greedy on Yamb: played game by game by the engine
    split = split_totals(variant, "greedy", 7, 3, 2)
    assert simulate(variant, "greedy", 2, 3).method != "batched"
    np.testing.assert_array_equal(split, simulate(variant, "greedy", 7, 3).totals)
