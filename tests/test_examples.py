"""The programs in examples/: the out-of-tree plugins, installed for real and found
through their entry point (house_rules adds a rule, double_down a move of its own),
and the host game that rolls its own dice."""

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
from _saves import moves
from _variants import BUILTIN_VARIANTS, FAMILY_VARIANTS

from dicecup import Engine, GameState, RuleAction, SaveError, VariantError
from dicecup.testing import check_variant

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def install_example(name: str, tmp_path_factory) -> Path:
    """examples/NAME installed with pip into a private folder (not into the venv); that folder."""
    root = tmp_path_factory.mktemp(name)
    src = root / "src"
    shutil.copytree(EXAMPLES / name, src)  # building writes into the source tree: use a copy
    target = root / "site"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            "--disable-pip-version-check",
            "--quiet",
            "--target",
            str(target),
            str(src),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert any(p.name.endswith(".dist-info") for p in target.iterdir())
    return target


@pytest.fixture(scope="module")
def plugin_path(tmp_path_factory) -> Path:
    """examples/house_rules, installed."""
    return install_example("house_rules", tmp_path_factory)


def dicecup(
    plugin_path: Path, *args: str, autoload: bool = True, stdin: str | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "DICECUP_DISABLE_PLUGIN_AUTOLOAD"}
    env["PYTHONPATH"] = os.pathsep.join([str(plugin_path)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    env["COLUMNS"] = "200"
    if not autoload:
        env["DICECUP_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    return subprocess.run(
        [sys.executable, "-m", "dicecup", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        input=stdin,
        cwd=cwd,
    )


def test_entry_point_plugin_is_picked_up(plugin_path):
    proc = dicecup(plugin_path, "variants", "--json")
    assert proc.returncode == 0, proc.stderr
    rows = {r["id"]: r for r in json.loads(proc.stdout)["variants"]}
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
    assert "yahtzee-house" not in {r["id"] for r in json.loads(proc.stdout)["variants"]}


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
    proc = dicecup(
        plugin_path,
        "play",
        "-v",
        "yahtzee-house",
        "-p",
        "bot:random",
        "-p",
        "bot:random:rita",
        "--seed",
        "3",
        "--json",
        "--quiet",
    )
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
    proc = subprocess.run(
        [sys.executable, str(EXAMPLES / "host_game.py"), "--variant", "yamb", "--seed", "5"],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "DICECUP_DISABLE_PLUGIN_AUTOLOAD": "1"},
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == host_game.report(host_game.play("yamb", ["ann", "bob"], 5, engine))


# ----------------------------------------------------------------------------- the double_down plugin


@pytest.fixture(scope="module")
def double_down():
    """The plugin module, imported from its source folder, and an engine that has it (no entry points)."""
    sys.path.insert(0, str(EXAMPLES / "double_down"))
    try:
        module = importlib.import_module("dicecup_double_down")
    finally:
        sys.path.remove(str(EXAMPLES / "double_down"))
    return Engine([module], entry_points=False)


DOUBLE = RuleAction("double_down", "double")


def test_double_is_offered_after_each_roll_until_used_up(double_down):
    state = GameState.new(double_down.variant("yahtzee-double"), ["ann", "bob"])
    assert DOUBLE not in state.legal_actions() and state.rule_actions() == ()  # nothing rolled yet
    rolled = state.roll(dice=(1, 2, 3, 5, 6))
    assert DOUBLE in rolled.legal_actions()
    again = rolled.keep((5, 6)).roll(dice=(5, 6, 6))
    assert DOUBLE in again.legal_actions()  # after any roll of the turn, not only the first
    declared = again.apply(DOUBLE)
    assert DOUBLE not in declared.legal_actions()  # once a turn
    bob = declared.score("chance").roll(dice=(1, 1, 2, 2, 3))
    assert bob.player == "bob" and DOUBLE in bob.legal_actions()  # bob has his own
    ann = bob.score("ones").roll(dice=(4, 4, 4, 4, 4))
    assert ann.player == "ann" and DOUBLE not in ann.legal_actions()  # ann used her one double
    twice = GameState.new(double_down.variant("yahtzee-double", {"doubles": 2}), 1)
    twice = twice.roll(dice=(1, 1, 1, 1, 1)).act(DOUBLE).score("yahtzee").roll(dice=(2, 2, 3, 3, 3))
    assert DOUBLE in twice.legal_actions()
    assert DOUBLE not in twice.act(DOUBLE).score("full_house").roll(dice=(2, 2, 3, 3, 3)).legal_actions()


def test_declaring_keeps_its_state_as_rule_state(double_down):
    rolled = GameState.new(double_down.variant("yahtzee-double"), ["ann", "bob"]).roll(dice=(3, 3, 3, 2, 2))
    declared = rolled.act(DOUBLE)
    assert rolled.turn_state == {} and declared.turn_state == {"double_down": True}
    assert declared.player_state == ({"double_down": 0}, {})
    assert declared.turn_status()[0].startswith("Double down: the box you score this turn counts double")
    after = declared.score("full_house")
    assert after.turn_state == {} and after.player_state == ({"double_down": 0}, {})  # the turn's part is gone


def test_the_doubled_score_shows_in_score_preview(double_down):
    rolled = GameState.new(double_down.variant("yahtzee-double"), 1).roll(dice=(3, 3, 3, 2, 2))
    declared = rolled.act(DOUBLE)
    for box, plain, doubled in [
        ("full_house", 25, 50),
        ("three_of_a_kind", 13, 26),
        ("threes", 9, 18),
        ("ones", 0, 0),
        ("small_straight", 0, 0),
        ("yahtzee", 0, 0),
    ]:
        assert rolled.score_preview(box).points == plain and declared.score_preview(box).points == doubled, box
    assert declared.score("full_house").cards[0].scores["full_house"] == 50


def test_a_doubled_yahtzee_keeps_the_yahtzee_bonus_and_a_joker_miss_scores_nothing(double_down):
    v = double_down.variant("yahtzee-double")
    state = GameState.new(v, 1).roll(dice=(6, 6, 6, 6, 6)).act(DOUBLE).score("yahtzee")
    assert state.cards[0].scores["yahtzee"] == 100
    state = state.roll(dice=(6, 6, 6, 6, 6)).score("sixes")
    assert [(a.id, a.points) for a in state.cards[0].awards] == [("doubled_yahtzee_bonus", 100)]
    joker = state.roll(dice=(6, 6, 6, 6, 6))
    assert joker.score_preview("full_house").score == 25  # the joker pays the full house
    with_double = GameState.new(double_down.variant("yahtzee-double", {"doubles": 2}), 1)
    with_double = with_double.roll(dice=(6,) * 5).score("yahtzee").roll(dice=(6,) * 5).score("sixes")
    assert with_double.roll(dice=(6,) * 5).act(DOUBLE).score_preview("full_house").score == 0  # five alike miss it


def test_a_save_with_a_declared_double_round_trips_and_replays(double_down):
    state = GameState.new(double_down.variant("yahtzee-double", {"doubles": 2}), ["ann", "bob"])
    state = state.roll(dice=(2, 2, 2, 5, 5)).act(DOUBLE).keep((2, 2, 2)).roll(dice=(2, 1))
    text = state.to_json()
    assert ["rule", "double_down", "double", None] in json.loads(text)["history"]
    back = GameState.from_json(text, double_down)
    assert back == state and back.turn_state == {"double_down": True}
    assert back.score_preview("twos").points == 16 and back.score("twos") == state.score("twos")
    scored = GameState.from_json(state.score("twos").to_json(), double_down)
    assert scored.cards[0].scores["twos"] == 16 and scored.player_state[0] == {"double_down": 1}
    forged = json.loads(text)
    forged["turn_state"] = {}
    with pytest.raises(SaveError, match="turn_state"):
        GameState.from_dict(forged, double_down)


def test_yahtzee_double_passes_the_conformance_check(double_down):
    for options in ({}, {"doubles": 3}):
        report = check_variant(double_down, "yahtzee-double", games=6, seed=2, players=(1, 2), options=options)
        assert report.rule_actions > 0 and report.contract_checks > 0


def test_the_rule_checks_its_parameter(double_down, tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("id: bad\nextends: yahtzee\nrules:\n  double_down: {times: 14}\n")
    with pytest.raises(VariantError, match="times must be 1 to 13"):
        double_down.load_file(bad)


@pytest.fixture(scope="module")
def double_down_path(tmp_path_factory) -> Path:
    """examples/double_down, installed."""
    return install_example("double_down", tmp_path_factory)


def test_the_terminal_game_offers_double(double_down_path, tmp_path):
    """A human types `double` after the first roll and scores chance; the save shows the doubled box."""
    proc = dicecup(
        double_down_path,
        "play",
        "-v",
        "yahtzee-double",
        "-p",
        "you",
        "--seed",
        "4",
        "--save",
        "game.json",
        stdin="?\ndouble\ndouble\ns chance\nq\n",
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout
    assert "double ...    make the box you score this turn count double" in out  # `?` lists the rule's verb
    assert "You may also double" in out and "Double down: 1 left this game (type double)" in out
    assert "You double." in out and "you cannot double now" in out  # a second double is refused
    roll, declared, score = moves(tmp_path / "game.json")[:3]  # the save's moves; then the next turn's first roll
    assert declared == ["rule", "double_down", "double", None] and score == ["score", "chance"]
    assert f"You score {2 * sum(roll[1])} in Chance." in out  # doubled; second person, not "you scores"


def test_show_describes_yahtzee_double(double_down_path):
    proc = dicecup(double_down_path, "show", "-v", "yahtzee-double")
    assert proc.returncode == 0, proc.stderr
    for words in (
        "Yahtzee (double down) (yahtzee-double)",
        'may declare "double" right after a roll',
        "double_down",
        "times=1",
        "doubles",
        "doubled_yahtzee_bonus",
    ):
        assert words in proc.stdout, words
    data = json.loads(dicecup(double_down_path, "show", "-v", "yahtzee-double", "-o", "doubles=2", "--json").stdout)
    assert data["rules"]["double_down"] == {"times": 2}
    proc = dicecup(double_down_path, "variants", "--json")
    assert {r["id"]: r["origin"] for r in json.loads(proc.stdout)["variants"]}["yahtzee-double"] == "plugin:double_down"
