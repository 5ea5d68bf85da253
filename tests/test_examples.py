"""The programs in examples/: the out-of-tree plugin, installed for real and found
through its entry point, and the host game that rolls its own dice."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

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


@pytest.mark.parametrize("variant", ["yahtzee", "generala", "russian"])
def test_host_game_runs(variant):
    proc = subprocess.run([sys.executable, str(EXAMPLES / "host_game.py"), "--variant", variant, "--seed", "5"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.strip().splitlines()
    assert lines[0].startswith("ann: ") and lines[1].startswith("bob: ")
    assert lines[-1].startswith("winner: ")
    again = subprocess.run([sys.executable, str(EXAMPLES / "host_game.py"), "--variant", variant, "--seed", "5"],
                           capture_output=True, text=True, timeout=120)
    assert again.stdout == proc.stdout  # the host's own seeded dice: the same game again
