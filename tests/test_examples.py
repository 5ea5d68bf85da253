"""The programs in examples/: the out-of-tree plugin, installed for real and found
through its entry point, and the host game that rolls its own dice."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from conftest import BUILTIN_VARIANTS, FAMILY_VARIANTS

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


@pytest.fixture(scope="module")
def plugin_path(tmp_path_factory) -> Path:
    """examples/house_rules installed with pip into a private folder (not into the venv)."""
    root = tmp_path_factory.mktemp("house_rules")
    src = root / "src"
    shutil.copytree(EXAMPLES / "house_rules", src)  # building writes into the source tree: use a copy
    target = root / "site"
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "--no-build-isolation", "--no-index",
         "--disable-pip-version-check", "--quiet", "--target", str(target), str(src)],
        capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert any(p.name.endswith(".dist-info") for p in target.iterdir())
    return target


def dicecup(plugin_path: Path, *args: str, autoload: bool = True) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "DICECUP_DISABLE_PLUGIN_AUTOLOAD"}
    env["PYTHONPATH"] = os.pathsep.join([str(plugin_path)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    env["COLUMNS"] = "200"
    if not autoload:
        env["DICECUP_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    return subprocess.run([sys.executable, "-m", "dicecup", *args], capture_output=True, text=True, env=env,
                          timeout=120)


def test_entry_point_plugin_is_picked_up(plugin_path):
    proc = dicecup(plugin_path, "variants", "--json")
    assert proc.returncode == 0, proc.stderr
    rows = {r["id"]: r for r in json.loads(proc.stdout)}
    house = rows["yahtzee-house"]
    assert house["origin"] == "plugin:house_rules"
    assert house["name"] == "Yahtzee (house rules)"
    # the variant extends yahtzee: the parent's option stays, its own is added
    assert house["options"] == {
        "joker": {"default": "free", "choices": ["free", "forced", "none"]},
        "penalty": {"default": 5, "choices": [0, 5, 10]},
    }
    assert rows["yahtzee"]["origin"] == "built-in"


def test_autoload_can_be_switched_off(plugin_path):
    proc = dicecup(plugin_path, "variants", "--json", autoload=False)
    assert proc.returncode == 0, proc.stderr
    assert "yahtzee-house" not in {r["id"] for r in json.loads(proc.stdout)}


def test_house_rule_scores_a_scratch_below_zero(plugin_path):
    proc = dicecup(plugin_path, "score", "-v", "yahtzee-house", "--json", "12346")
    assert proc.returncode == 0, proc.stderr
    scores = json.loads(proc.stdout)["scores"]
    # lower boxes the dice do not meet cost the penalty; met ones and the upper section are plain Yahtzee
    assert scores["small_straight"] == 30 and scores["chance"] == 16
    assert scores["full_house"] == scores["yahtzee"] == scores["three_of_a_kind"] == -5
    assert scores["fives"] == 0 and scores["ones"] == 1
    proc = dicecup(plugin_path, "score", "-v", "yahtzee-house", "-o", "penalty=0", "--json", "12346")
    assert json.loads(proc.stdout)["scores"]["full_house"] == 0


def test_house_variant_plays_to_the_end(plugin_path):
    proc = dicecup(plugin_path, "play", "-v", "yahtzee-house", "-p", "bot:random", "-p", "bot:random:rita",
                   "--seed", "3", "--json", "--quiet")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    for card in data["final_cards"].values():
        assert None not in card["boxes"].values()
        assert sum(card["boxes"].values()) + sum(card["bonuses"].values()) == card["total"]
    lower = ("three_of_a_kind", "four_of_a_kind", "full_house", "small_straight", "large_straight", "yahtzee", "chance")
    cards = data["final_cards"].values()
    assert all(card["boxes"][b] != 0 for card in cards for b in lower)  # a lower scratch is -5, never 0
    assert any(card["boxes"][b] == -5 for card in cards for b in lower)  # random bots do scratch


def test_house_rule_parameters_are_checked(plugin_path, tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("id: bad\nextends: yahtzee\nrules:\n  scratch_penalty: {points: 5, section: middle}\n")
    proc = dicecup(plugin_path, "validate", str(bad))
    assert proc.returncode == 2
    assert "section 'middle' has no boxes; sections are lower, upper" in proc.stderr
    assert "Traceback" not in proc.stderr


# ----------------------------------------------------------------------------- the host game


@pytest.fixture(scope="module")
def host_game():
    """examples/host_game.py imported as a module, so its games run in this process."""
    spec = importlib.util.spec_from_file_location("host_game", EXAMPLES / "host_game.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("variant", BUILTIN_VARIANTS + FAMILY_VARIANTS)
def test_host_game_plays_every_builtin_variant_with_legal_moves_only(engine, host_game, monkeypatch, variant):
    """20 seeds of each variant to the end; every move it picks is one `legal_actions()` lists."""
    picked: Counter[str] = Counter()
    rule_of_thumb = host_game.choose

    def checked(state):
        action = rule_of_thumb(state)
        assert action in state.legal_actions(), (action, state.legal_actions())
        picked[type(action).__name__] += 1
        return action

    monkeypatch.setattr(host_game, "choose", checked)
    v = engine.variant(variant)
    for seed in range(20):
        final = host_game.play(variant, ["ann", "bob"], seed, engine)
        assert final.over and len(final.results) == final.rounds
        if final.results[-1].instant_winner is None:
            assert all(len(card.scores) == len(v.boxes) for card in final.cards)
        lines = host_game.report(final)
        assert [line.split(":")[0] for line in lines] == ["ann", "bob", "winner"]
    assert picked["Score"] >= 20 and picked["Keep"] >= 20
    if variant == "yamb":  # the announce column's 13 boxes are filled only after announcing each
        assert picked["RuleAction"] == 20 * 2 * 13


def test_host_game_command_line(engine, host_game):
    """The script itself, once: its output is the in-process game's report, the same dice again."""
    proc = subprocess.run([sys.executable, str(EXAMPLES / "host_game.py"), "--variant", "yamb", "--seed", "5"],
                          capture_output=True, text=True, timeout=120, env={**os.environ, "DICECUP_DISABLE_PLUGIN_AUTOLOAD": "1"})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == host_game.report(host_game.play("yamb", ["ann", "bob"], 5, engine))
