"""README.md is tested as a new user would use it: its commands, its API tour, the
variants it teaches (validated and played through the CLI) and its plugin example."""

from __future__ import annotations

import importlib
import json
import os
import random
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from dicecup import Card, Engine, GameState, VariantError
from dicecup.game.bots import GreedyBot

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
ENV = {**os.environ, "DICECUP_DISABLE_PLUGIN_AUTOLOAD": "1"}


def blocks(lang: str) -> list[str]:
    """The fenced code blocks of one language, in order."""
    return re.findall(rf"^```{lang}\n(.*?)^```$", README, flags=re.S | re.M)


def dicecup(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "dicecup", *args], capture_output=True, text=True, env=ENV, cwd=cwd, timeout=120
    )


def test_first_lines_are_the_two_fresh_machine_commands():
    head = README.split("## ", 1)[0]
    play, test = blocks("sh")[:2]
    assert play in head and test in head
    assert play.strip() == (
        "python3 -m venv .venv && .venv/bin/pip install -e . && "
        ".venv/bin/dicecup play --variant yahtzee --player you --player bot:greedy"
    )
    assert "pip install -e '.[test]'" in test and "-m pytest" in test


def test_ci_runs_exactly_the_readme_test_command():
    test = blocks("sh")[1].strip()
    script = (ROOT / ".ci" / "run").read_text()
    assert "set -euo pipefail" in script
    commands = [line for line in script.splitlines() if line.strip() and not line.startswith("#")]
    assert commands[-1] == test


def test_api_tour_runs_and_prints_what_it_says(tmp_path):
    (code,) = [b for b in blocks("python") if "GameState.new" in b]
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=ENV, cwd=tmp_path, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    for line in [
        "ann 2",
        "6",
        "36",
        "56 (RollDice(dice=(1, 1, 1)), Fraction(1, 216))",
        "bob {'threes': 12}",
        "refused: roll the dice first",
        "(0,) False",
    ]:
        assert line in proc.stdout.splitlines()


@pytest.mark.slow
def test_solver_tour_runs_and_prints_what_it_says(tmp_path):
    """The solving section's example, in a fresh process (the run's shared cache, from conftest: the table
    is solved once per run, whoever asks first): each print gives its comment."""
    (code,) = [b for b in blocks("python") if "load_or_solve" in b]
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=ENV, cwd=tmp_path, timeout=600
    )
    assert proc.returncode == 0, proc.stderr
    said = [line.split("  # ", 1)[1] for line in code.splitlines() if line.startswith("print(")]
    assert proc.stdout.splitlines() == said


def variant_files(tmp_path: Path) -> list[Path]:
    paths = []
    for text in blocks("yaml"):
        vid = re.search(r"^id: (\S+)$", text, flags=re.M).group(1)
        path = tmp_path / f"{vid}.yaml"
        path.write_text(text)
        paths.append(path)
    return paths


def test_readme_variants_validate_and_play(tmp_path):
    paths = variant_files(tmp_path)
    assert [p.stem for p in paths] == ["sprint", "doubles", "yahtzee-kids"]
    for path in paths:
        proc = dicecup("validate", path.name, cwd=tmp_path)
        assert proc.returncode == 0 and proc.stdout.startswith(f"ok: {path.name}"), proc.stderr
        proc = dicecup(
            "play", "-v", path.name, "-p", "bot:greedy", "-p", "bot:random", "--seed", "1", "--json", "-q", cwd=tmp_path
        )
        assert proc.returncode == 0, proc.stderr
        data = json.loads(proc.stdout)
        for card in data["final_cards"].values():
            assert None not in card["boxes"].values()
            assert sum(card["boxes"].values()) + sum(card["bonuses"].values()) == card["total"]


def test_readme_variants_mean_what_the_readme_says(tmp_path):
    sprint, doubles, kids = variant_files(tmp_path)
    engine = Engine(entry_points=False)
    v = engine.load_file(sprint)
    assert (v.dice, v.rolls, len(v.boxes)) == (3, 2, 6)
    served = v.score(v.empty_card(), "run", v.roll_of([4, 5, 6]), first_roll=True)
    assert served.score == 25  # 20, +5 on the first roll
    assert v.score(v.empty_card(), "triple", v.roll_of([2, 2, 2])).score == 30
    big = engine.load_file(sprint, {"triple": 50, "chance": "without"})
    assert big.score(big.empty_card(), "triple", big.roll_of([2, 2, 2])).score == 50
    assert "chance" not in big.box_ids
    card = v.empty_card().fill("triple", 30)
    assert [a.points for a in v.score(card, "pair", v.roll_of([5, 5, 5])).awards] == [25]  # triple_bonus
    d = engine.load_file(doubles)
    assert d.box_ids[0] == "free.ones" and d.box_ids[-1] == "double.yacht" and len(d.boxes) == 24
    assert d.score(d.empty_card(), "double.yacht", d.roll_of([3] * 5)).written == 100
    threes = {f"double.{r}": 3 * f for f, r in enumerate(("ones", "twos", "threes", "fours", "fives", "sixes"), 1)}
    assert {a.id: a.points for a in d.end_bonuses(Card(threes))} == {"double.upper_bonus": 70}
    k = engine.load_file(kids)
    assert "chance" not in k.box_ids and k.options["joker"] == "none" and k.match.rounds_for(2) == 3
    assert k.score(k.empty_card(), "yahtzee", k.roll_of([4] * 5)).score == 100


def test_plugin_example_works(tmp_path, monkeypatch):
    (code,) = [b for b in blocks("python") if "dicecup_register_patterns" in b]
    (tmp_path / "lucky.py").write_text(code)
    monkeypatch.syspath_prepend(str(tmp_path))
    lucky = importlib.import_module("lucky")
    (variant_text,) = blocks("text")
    path = tmp_path / "lucky.yaml"
    path.write_text(variant_text)
    engine = Engine(plugins=[lucky], entry_points=False)
    v = engine.load_file(path)
    result = v.score(v.empty_card(), "big", v.roll_of([6, 6, 6, 5, 4]))
    assert result.score == 27 and [a.points for a in result.awards] == [5]
    assert v.score(v.empty_card(), "big", v.roll_of([1, 2, 3, 4, 5])).score == 0
    state, bot = GameState.new(v, ["a", "b"]), GreedyBot()
    rng = random.Random(2)
    while not state.over:
        state = state.roll(rng) if state.is_chance else state.apply(bot.choose(state))
    assert all(len(c.scores) == len(v.boxes) for c in state.cards)
    (toml_text,) = blocks("toml")
    assert tomllib.loads(toml_text)["project"]["entry-points"]["dicecup"] == {"lucky": "lucky"}
    bad = tmp_path / "bad.yaml"
    bad.write_text(variant_text.replace("at_least: 24", "at_least: 31"))
    with pytest.raises(VariantError, match="more than 5 dice can show"):
        engine.load_file(bad)
