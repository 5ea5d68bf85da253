"""Strategy cards (`dicecup strategy-card`): the card's moves are legal, it plays whole games, its value is
reproducible, more rules never raise the training loss, and the CLI prints it and its JSON."""

from __future__ import annotations

import json
import random

import pytest
from _cli_helpers import check
from _solver_helpers import CLI_TINY, cli_run, decision_states
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dicecup.game.actions import Keep, Score
from dicecup.solver.cache import load_or_solve
from dicecup.solver.strategy_card import ANY, SOME, Rule, StrategyCard, Vocabulary
from dicecup.solver.strategy_card_learn import card_after, distil, measure, state_view, training_loss

#: Yatzy's card of the docs: `dicecup strategy-card -v yatzy` (100 rules, 1000 games, seed 1, 2000 games played)
YATZY_STATED = 229.2


@pytest.fixture(scope="module")
def yatzy(engine):
    return load_or_solve(engine.variant("yatzy"))[0]


@pytest.fixture(scope="module")
def made(yatzy):
    return distil(yatzy, 30, 60, 1, seed=3)


def random_card(vocab: Vocabulary, rng: random.Random, n: int) -> StrategyCard:
    """A card of `n` rules drawn at random from the vocabulary."""
    tests = [ANY, SOME, 0, 1, 2]
    rules = [
        Rule(rng.choice(tests), tuple(rng.sample(range(len(vocab.features)), rng.randint(0, 2))),
             rng.randrange(len(vocab.actions)))
        for _ in range(n)
    ]  # fmt: skip
    return StrategyCard(vocab, rules)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10_000), variant=st.sampled_from(["yatzy", "yahtzee", "generala"]))
def test_every_action_the_card_takes_is_legal(engine, seed, variant):
    v = engine.variant(variant)
    vocab = Vocabulary(v, dict.fromkeys(v.box_ids, 5))
    card = random_card(vocab, random.Random(seed), 12)
    for state in decision_states(v, 6, seed):
        view = state_view(vocab, state)
        keeps, boxes = set(state.legal_keeps()), set(state.legal_boxes())
        for a in range(len(vocab.actions)):
            move = vocab.resolve(a, view)
            if isinstance(move, Keep):
                assert move.dice in keeps and vocab.actions[a].kind != "box"
            elif isinstance(move, Score):
                assert move.box in boxes
        move = card.choose(view)
        assert (move.dice in keeps) if isinstance(move, Keep) else (move.box in boxes)


def test_a_card_of_no_rules_plays_whole_games(engine):
    vocab = Vocabulary(engine.variant("yahtzee"))
    value = measure(StrategyCard(vocab, ()), 20, seed=5)
    assert value.games == 20 and 50 < value.mean < 400 and value.stderr > 0


def test_the_value_is_reproducible_with_a_seed(made):
    card = card_after(made.vocab, made.choices, 10)
    assert measure(card, 30, seed=11) == measure(card, 30, seed=11)
    assert measure(card, 30, seed=11) != measure(card, 30, seed=12)


def test_more_rules_never_raise_the_training_loss(made):
    losses = [training_loss(card_after(made.vocab, made.choices, k), made.positions) for k in range(31)]
    assert len(made.choices) == 30
    for k, choice in enumerate(made.choices):
        assert losses[k + 1] <= losses[k] + 1e-9
        assert losses[k] - losses[k + 1] == pytest.approx(choice.gain, abs=1e-6)  # each step's exact gain
    assert losses[-1] < 0.5 * losses[0]


def test_the_rules_are_read_in_words(made):
    card = card_after(made.vocab, made.choices, 30)
    lines = card.lines()
    assert len(lines) == 32 and lines[-2].startswith("Otherwise: keep the largest group of a kind")
    assert lines[-1].startswith("Targets: Ones ")
    assert all(":" in line and "{" not in line for line in lines)
    assert [r["text"] for r in card.to_json()] == lines[:30]


def test_the_cli_prints_the_card_and_its_json(tmp_path, cli_env):
    path = tmp_path / "tiny.yaml"
    path.write_text(CLI_TINY)
    args = ("strategy-card", "-v", str(path), "--rules", "4", "--games", "30", "--play", "40", "--seed", "2")
    text = cli_run(*args)
    assert text.exit_code == 0, text.output
    assert "1. " in text.output and "Otherwise:" in text.output and "value: " in text.output
    out = json.loads(cli_run(*args, "--json").output)
    check("strategy-card", out)
    assert out["variant"] == "tiny" and len(out["rules"]) <= 4 and out["tradeoff"][-1] == out["value"]
    again = json.loads(cli_run(*args, "--json").output)
    assert again["value"] == out["value"] and again["rules"] == out["rules"]


def test_the_cli_plots_the_tradeoff(tmp_path, cli_env):
    path = tmp_path / "tiny.yaml"
    path.write_text(CLI_TINY)
    png = tmp_path / "card.png"
    args = ("strategy-card", "-v", str(path), "--rules", "6", "--games", "30", "--play", "20", "--plot", str(png))
    out = json.loads(cli_run(*args, "--json").output)
    assert [r["rules"] for r in out["tradeoff"]][:2] == [0, 5] and png.read_bytes()[:4] == b"\x89PNG"


def test_the_cli_refuses_what_the_solver_does_not_reach(cli_env):
    got = cli_run("strategy-card", "-v", "yamb")
    assert got.exit_code == 2 and "announcements" in got.output and "Traceback" not in got.output


@pytest.mark.slow
def test_yatzys_card_keeps_its_stated_value(yatzy):
    made = distil(yatzy, 100, 1000, 1, seed=1)
    value = measure(card_after(made.vocab, made.choices, 100), 2000, seed=1)
    assert abs(value.mean - YATZY_STATED) < value.stderr
    assert value.mean > 227.5  # dlangk's hand-written strategy
