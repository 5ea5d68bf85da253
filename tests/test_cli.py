"""The `dicecup` command line as a user meets it: every command, its JSON shapes, its
errors (exit 2, one message, no traceback), all-bot games of every variant whose
printed totals add up, scripted human games, and saved games resumed exactly."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from fractions import Fraction
from pathlib import Path

import pytest
from _rules_oracle import ORACLES
from _saves import header, moves, reseal, state
from _variants import BUILTIN_VARIANTS
from typer.testing import CliRunner

from dicecup import GameState
from dicecup.cli.app import app

ENV = {"DICECUP_DISABLE_PLUGIN_AUTOLOAD": "1", "COLUMNS": "200"}


pytestmark = pytest.mark.usefixtures("cli_builtins")  # the CLI's engine: built-in plugins only


def run(*args: str, input: str | None = None):
    return CliRunner().invoke(app, list(args), input=input, env=ENV)


def ok(*args: str, input: str | None = None) -> str:
    result = run(*args, input=input)
    assert result.exit_code == 0, result.output
    return result.stdout


def fails(*args: str, input: str | None = None) -> str:
    """Run a command that must fail cleanly; return its error text."""
    result = run(*args, input=input)
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    return result.stderr


def cli(*args: str, cwd: Path | None = None, input: str | None = None) -> subprocess.CompletedProcess:
    """The real console entry (`python -m dicecup`), exit codes through `main`."""
    env = {**os.environ, **ENV}
    return subprocess.run(
        [sys.executable, "-m", "dicecup", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        input=input,
        timeout=120,
    )


# ---------------------------------------------------------------------------- variants


def test_variants_json_lists_every_builtin_with_origin_and_options():
    data = json.loads(ok("variants", "--json"))
    assert (data["variant"], data["options"]) == (None, {})  # the envelope every --json has
    rows = data["variants"]
    by_id = {r["id"]: r for r in rows}
    assert set(BUILTIN_VARIANTS) <= set(by_id)
    assert all(by_id[v]["origin"] == "built-in" for v in BUILTIN_VARIANTS)
    assert by_id["yahtzee"]["name"] == "Yahtzee"
    assert by_id["yahtzee"]["options"] == {"joker": {"default": "free", "choices": ["free", "forced", "none"]}}
    assert by_id["generala"]["options"]["served_bonus"] == {"default": 5, "choices": [5, 10]}
    assert by_id["yacht"]["options"] == {}


def test_variants_table_names_them_all():
    out = ok("variants")
    for vid in BUILTIN_VARIANTS:
        assert vid in out


# ---------------------------------------------------------------------------- show


@pytest.mark.parametrize("variant", BUILTIN_VARIANTS)
def test_show_prints_every_box_and_the_json_matches_the_variant(engine, variant):
    v = engine.variant(variant)
    text = ok("show", "--variant", variant)
    for box in v.boxes:
        assert box.id in text and box.name in text
    info = json.loads(ok("show", "--variant", variant, "--json"))
    assert [b["id"] for b in info["boxes"]] == list(v.box_ids)
    assert info["dice"] == {"count": 5, "faces": 6, "attributes": {}}
    assert info["turn"]["rolls"] == 3
    assert [b["id"] for b in info["bonuses"]] == [b.id for b in v.bonuses]


def test_show_describes_what_boxes_need_and_score():
    info = json.loads(ok("show", "-v", "generala", "--json"))
    boxes = {b["id"]: b for b in info["boxes"]}
    assert boxes["straight"]["needs"] == "one of 12345 / 23456 / 34561"
    assert boxes["straight"]["scores"] == "20"
    assert boxes["straight"]["first_roll"] == "+5 on first roll"
    assert boxes["four_of_a_kind"]["needs"] == "at least 4 alike"
    rus = {b["id"]: b for b in json.loads(ok("show", "-v", "russian", "--json"))["boxes"]}
    assert rus["ones"]["scores"] == "(count of 1s - 3) x 1"
    assert rus["yahtzee"]["extra"] == 50 and rus["yahtzee"]["stage"] == 2
    text = ok("show", "-v", "russian")
    assert "x2 on first roll; then +50" in text
    assert "stage_order" in text and "pot_settlement" in text


def test_show_with_an_option_and_its_errors():
    info = json.loads(ok("show", "-v", "generala", "-o", "served_bonus=10", "--json"))
    assert info["options"]["served_bonus"] == 10 and info["option_specs"]["served_bonus"]["value"] == 10
    assert {b["id"]: b for b in info["boxes"]}["full_house"]["first_roll"] == "+10 on first roll"
    err = fails("show", "-v", "yahtzee", "-o", "joker=sometimes")
    assert "option 'joker' cannot be 'sometimes'" in err and "free, forced, none" in err
    err = fails("show", "-v", "yahtzee", "-o", "jokers=free")
    assert "unknown option 'jokers'" in err and "this variant's options: joker" in err
    assert "KEY=VALUE" in fails("show", "-v", "yahtzee", "-o", "joker")


# ---------------------------------------------------------------------------- score

SAMPLE_ROLLS = [
    "11111",
    "66666",
    "12345",
    "23456",
    "13456",
    "11333",
    "22335",
    "33665",
    "12356",
    "24662",
    "15353",
    "44441",
]


@pytest.mark.parametrize("variant", BUILTIN_VARIANTS)
@pytest.mark.parametrize("first", [False, True])
def test_score_json_matches_the_rules_oracle(variant, first):
    """Scores on an empty card against the independent rules oracle (`_rules_oracle`), JSON shape exact."""
    oracle = ORACLES[variant]
    for dice in SAMPLE_ROLLS:
        args = ["score", "--variant", variant, "--json", dice] + (["--first-roll"] if first else [])
        data = json.loads(ok(*args))
        assert list(data) == ["variant", "options", "dice", "first_roll", "scores"]
        assert data["variant"] == variant
        assert data["dice"] == [int(c) for c in dice]
        assert data["first_roll"] is first
        assert data["scores"] == oracle(tuple(int(c) for c in dice), first), dice


def test_score_reads_commas_and_options():
    a = json.loads(ok("score", "-v", "yahtzee", "--json", "1,1,3,3,3"))
    b = json.loads(ok("score", "-v", "yahtzee", "--json", "11333"))
    assert a == b and a["scores"]["full_house"] == 25
    plain = json.loads(ok("score", "-v", "generala", "-o", "straight=plain", "--json", "13456"))
    assert plain["scores"]["straight"] == 0  # 3-4-5-6-1 only counts when ace high
    assert json.loads(ok("score", "-v", "generala", "--json", "13456"))["scores"]["straight"] == 20


def test_score_table():
    out = ok("score", "-v", "yatzy", "33665")
    row = next(line for line in out.splitlines() if "two_pairs" in line)
    assert row.split("│")[-2].strip() == "18"  # 3+3+6+6 (docs/games/yatzy.md, two pairs)


@pytest.mark.parametrize(
    ("dice", "message"),
    [
        ("1234", "expected 5 dice, got 4"),
        ("123456", "expected 5 dice, got 6"),
        ("12347", "die value 7 is out of range: each die shows a face from 1 to 6"),
        ("1,2,3,4,0", "die value 0 is out of range"),
        ("12a45", "cannot read die"),
    ],
)
def test_score_bad_dice_say_what_was_expected(dice, message):
    assert message in fails("score", "-v", "yahtzee", dice)


def test_unknown_variant_lists_the_known_ones():
    result = run("score", "-v", "yahtzy", "11111")
    assert result.exit_code == 2
    for vid in BUILTIN_VARIANTS:
        assert vid in result.output
    assert "unknown variant 'yahtzy'" in result.output


@pytest.mark.parametrize("where", ["/dev/zero", "/tmp", "variants/yahtzee.txt"])
def test_a_path_that_is_not_a_yaml_file_is_named_as_such(where):
    """A device, a folder or a mistyped file name is not read, and the message says why."""
    result = run("show", "-v", where)
    assert result.exit_code == 2 and "Traceback" not in result.output
    flat = " ".join(result.output.replace("│", " ").split())
    assert f"'{where}' is not a variant id" in flat and "must end in .yaml or .yml" in flat


def test_errors_through_the_console_entry_exit_2_without_traceback(tmp_path):
    for args in (
        ["score", "-v", "yahtzee", "1234"],
        ["score", "-v", "nope", "11111"],
        ["validate", str(tmp_path / "none.yaml")],
        ["play", "-v", "yacht", "-p", "bot:genius"],
        ["resume", str(tmp_path / "none.json")],
    ):
        proc = cli(*args)
        assert proc.returncode == 2, (args, proc.stderr)
        assert "Traceback" not in proc.stderr and proc.stderr.strip(), args
    proc = cli("score", "-v", "yahtzee", "1234")
    assert proc.stderr.strip() == "error: expected 5 dice, got 4: [1, 2, 3, 4]"


def test_module_entry_points_run():
    proc = subprocess.run(
        [sys.executable, "-m", "dicecup", "score", "-v", "yacht", "--json", "22222"],
        capture_output=True,
        text=True,
        env={**os.environ, **ENV},
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["scores"]["yacht"] == 50


# ---------------------------------------------------------------------------- validate

GOOD = """\
id: tiny
name: Tiny
dice: {count: 3}
turn: {rolls: 2}
options:
  bonus:
    default: small
    choices:
      small: {}
      big: {bonuses: {top: {points: 50}}}
boxes:
  ones: {section: top, pattern: {kind: face, face: 1}, score: sum}
  sixes: {section: top, pattern: {kind: face, face: 6}, score: sum}
  triple: {pattern: {kind: of_a_kind, n: 3}, score: 30}
bonuses:
  top: {kind: threshold, section: top, at_least: 12, points: 10}
"""


def test_validate_ok_summary(tmp_path):
    f = tmp_path / "tiny.yaml"
    f.write_text(GOOD)
    out = ok("validate", str(f))
    assert out.startswith(f"ok: {f}: variant 'tiny' (Tiny)")
    assert "3 dice x 6 faces" in out and "3 boxes" in out and "options: bonus=small|big" in out
    assert ", 1 bonus," in out  # one bonus, counted in the singular


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (
            ("  triple: {pattern:", "  triple: {patern:"),
            [":14: ", "boxes -> triple -> patern", "unknown key 'patern'", "did you mean 'pattern'?"],
        ),
        (("face: 6}", "face: 9}"), [":13: ", "boxes -> sixes -> pattern", "face must be a face from 1 to 6"]),
        (("kind: threshold", "kind: treshold"), [":16: ", "bonuses -> top -> kind", "unknown bonus kind 'treshold'"]),
        (("points: 10", "points: ten"), [":16: ", "bonuses -> top", "points must be a whole number, got 'ten'"]),
        (("dice: {count: 3}", "dice: {count: 3"), ["not valid YAML"]),
    ],
)
def test_validate_reports_file_line_path_and_hint(tmp_path, change, expected):
    f = tmp_path / "bad.yaml"
    f.write_text(GOOD.replace(*change))
    err = fails("validate", str(f))
    assert err.startswith(f"error: {f}")
    for part in expected:
        assert part in err


def test_validate_compiles_every_option_choice(tmp_path):
    """A mistake only one option choice reaches is still found."""
    f = tmp_path / "bad_choice.yaml"
    f.write_text(GOOD.replace("big: {bonuses: {top: {points: 50}}}", "big: {bonuses: {top: {pointz: 50}}}"))
    err = fails("validate", str(f))
    assert "unknown parameter 'pointz'" in err


def test_validate_missing_file(tmp_path):
    assert "cannot read the file" in fails("validate", str(tmp_path / "nope.yaml"))


@pytest.mark.parametrize("variant", BUILTIN_VARIANTS)
def test_validate_every_builtin_file(variant):
    path = Path(__file__).parent.parent / "variants" / f"{variant}.yaml"
    assert ok("validate", str(path)).startswith("ok: ")


# ---------------------------------------------------------------------------- play: all bots


def results_row(text: str, player: str) -> list[int]:
    """A player's numbers in the results table printed at the game's end: parts, TOTAL (then other figures)."""
    end = text.rsplit("Game over", 1)[1]
    line = next(line for line in end.splitlines() if line.split()[1:2] == [player])
    return [int(x) for x in line.split()[2:]]


def check_card_adds_up(text: str, players: list[str]) -> dict[str, int]:
    """Each player's parts (sections or columns, bonuses) add up to the TOTAL in the results at the game's end."""
    totals = {}
    for p in players:
        *parts, total = results_row(text, p)
        assert sum(parts) == total, (p, parts, total)
        totals[p] = total
    return totals


@pytest.mark.parametrize("variant", BUILTIN_VARIANTS)
def test_all_bot_game_of_every_variant_finishes_and_adds_up(engine, variant):
    """The printed final card adds up, and agrees with the JSON result of the same run."""
    v = engine.variant(variant)
    result = run(
        "play", "--variant", variant, "--player", "bot:greedy", "--player", "bot:random", "--seed", "4", "--json"
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    after = len(v.figures) + (data["settlement"] is not None)  # after the TOTAL: Balut's points, the settlement
    totals = {p: results_row(result.stderr, p)[-1 - after] for p in ("greedy", "random")}
    for p in totals:
        assert sum(results_row(result.stderr, p)[: -1 - after]) == totals[p]
    assert "Winner: " in result.stderr or "Tie" in result.stderr
    assert data["match_totals"] == totals
    for _name, card in data["final_cards"].items():
        assert sum(s for s in card["boxes"].values() if s is not None) + sum(card["bonuses"].values()) == card["total"]
    if not any(r["instant_winner"] for r in data["rounds"]):
        assert all(s is not None for card in data["final_cards"].values() for s in card["boxes"].values())


def test_text_output_shows_the_same_game_as_json():
    text = ok("play", "-v", "yatzy", "-p", "bot:greedy", "-p", "bot:random", "--seed", "6")
    data = json.loads(
        ok("play", "-v", "yatzy", "-p", "bot:greedy", "-p", "bot:random", "--seed", "6", "--json", "--quiet")
    )
    assert check_card_adds_up(text, ["greedy", "random"]) == data["match_totals"]
    assert text.count("greedy: ") == 15  # one narrated line per bot turn


def test_upper_bonus_shows_in_the_printed_card():
    """A greedy Yatzy game reaching 63 shows the 50 bonus (docs/games/yatzy.md) and counts it in the total."""
    for seed in range(1, 30):
        result = run("play", "-v", "yatzy", "-p", "bot:greedy", "--seed", str(seed), "--json")
        card = json.loads(result.stdout)["final_cards"]["greedy"]
        upper = sum(card["boxes"][b] for b in ("ones", "twos", "threes", "fours", "fives", "sixes"))
        assert card["bonuses"]["upper_bonus"] == (50 if upper >= 63 else 0)
        if upper >= 63:
            assert "upper lower Bonus TOTAL" in result.stderr
            assert results_row(result.stderr, "greedy") == [upper, card["total"] - upper - 50, 50, card["total"]]
            assert check_card_adds_up(result.stderr, ["greedy"])["greedy"] == card["total"]
            return
    pytest.fail("no seed in 1..29 reached the upper bonus")


def test_russian_match_of_three_settles_to_zero():
    args = ["play", "-v", "russian", "-p", "bot:random", "-p", "bot:random", "-p", "bot:random:Vera", "--seed", "9"]
    data = json.loads(ok(*args, "--json"))
    names = ["random", "random2", "Vera"]
    assert len(data["rounds"]) >= 13  # docs/games/russian.md: 13 rounds for three or more players (more on a full tie)
    for n in names:
        assert data["match_totals"][n] == sum(r["totals"][n] for r in data["rounds"])
    pay = data["settlement"]  # numbers (exact thirds and shares, as floats)
    assert all(isinstance(a, int | float) for a in pay.values())
    assert sum(pay.values()) == pytest.approx(0, abs=1e-9)
    par = Fraction(sum(data["match_totals"].values()), 3)
    for n in names:  # below par pays (par - total) x stake
        if data["match_totals"][n] < par:
            assert pay[n] == pytest.approx(float(data["match_totals"][n] - par))
    out = ok(*args)
    assert "settles: + receives, - pays" in out
    end = out.rsplit("Match over after", 1)[1].splitlines()
    for n in names:  # each player's match total, then what they receive or pay
        line = next(line for line in end if line.split()[1:2] == [n])
        assert int(line.split()[-2]) == data["match_totals"][n]
        assert float(line.split()[-1]) == pytest.approx(pay[n], abs=0.005)


def test_two_player_russian_settles_the_difference():
    data = json.loads(ok("play", "-v", "russian", "-p", "bot:greedy", "-p", "bot:random", "--seed", "2", "--json"))
    a, b = data["match_totals"]["greedy"], data["match_totals"]["random"]
    assert len(data["rounds"]) == 1
    assert data["settlement"]["greedy"] == a - b == -data["settlement"]["random"]  # whole numbers here


def test_rounds_flag_and_generala_instant_win_table():
    data = json.loads(ok("play", "-v", "yacht", "-p", "bot:random", "-p", "bot:random", "--rounds", "3", "--json"))
    assert len(data["rounds"]) == 3 and data["settlement"] is None
    for seed in range(1, 200):  # find a game won by a served generala
        data = json.loads(
            ok("play", "-v", "generala", "-p", "bot:random", "-p", "bot:random", "--seed", str(seed), "--json")
        )
        winner = data["rounds"][0]["instant_winner"]
        if winner:
            assert data["winners"] == [winner]
            out = ok("play", "-v", "generala", "-p", "bot:random", "-p", "bot:random", "--seed", str(seed))
            assert "rolled a Generala on the first roll: an instant win!" in out
            assert "Winner: " + winner + ", at once (instant win)" in out
            return
    pytest.fail("no served generala in 199 seeds")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-p", "bot:genius"], "no bot 'genius'"),
        (["-p", "ann", "-p", "ann"], "two players are called 'ann'"),
        (["-p", "x", "--rounds", "0"], "--rounds"),
    ],
)
def test_play_argument_errors(args, message):
    result = run("play", "-v", "yacht", *args)
    assert result.exit_code == 2 and message in result.output


def test_hints_for_a_variant_the_solver_refuses_fail_before_the_game(tmp_path):
    message = fails("play", "-v", "triple-yahtzee", "--hints", "-p", "bot:random")
    assert "39 boxes make at least 2^39" in message


# ---------------------------------------------------------------------------- play: humans


def turns(n: int, start: int = 1) -> str:
    """Score boxes start..n in order; the `y` confirms a scratch (or is a harmless wrong command)."""
    return "".join(f"s {k}\ny\n" for k in range(start, n + 1))


def test_scripted_human_game_with_wrong_input():
    script = "xyz\nk 9\nkeep 7\ns 99\n?\nc\n" + turns(15)  # c: the whole card
    result = run("play", "-v", "yatzy", "-p", "ann", "--seed", "1", input=script)
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "I don't understand 'xyz'" in out
    assert "there is no die at position 9" in out
    assert "you have no 7s" in out
    assert "there is no box 99: boxes are numbered 1 to 15" in out
    assert "k 1 3 4       keep the dice at positions 1, 3 and 4" in out  # the help
    assert "ann's card · ann, roll 1 of 3: " in out and "#1: " in out and "●" in out  # the card on c, dice drawn
    assert "Scratch" in out and "[y/N]" in out  # prompts are plain text, not rich markup
    check_card_adds_up(out, ["ann"])


def test_human_against_a_bot_and_end_of_input():
    result = run("play", "-v", "yacht", "-p", "[b]ann", "-p", "bot:greedy", "--seed", "3", input="c\n" + turns(4))
    assert result.exit_code == 2
    assert result.stderr.strip() == "error: input ended before the game did"
    assert "Traceback" not in result.output
    assert result.stdout.count("greedy: ") == 4  # the bot played its four turns in between
    assert "You score" in result.stdout and re.search(r"box +\[b\]ann +greedy +now", result.stdout)  # not markup


def test_quit_without_save():
    result = run("play", "-v", "yacht", "-p", "ann", input="q\n")
    assert result.exit_code == 0 and "Game stopped" in result.stdout


# ---------------------------------------------------------------------------- saves


def test_save_and_resume_continue_exactly(tmp_path):
    """A game stopped after 5 turns and resumed ends as the same game played in one go."""
    args = ["-v", "yacht", "-p", "ann", "-p", "bot:random", "--seed", "8", "--json"]
    whole = run("play", *args, input=turns(12))
    assert whole.exit_code == 0, whole.output
    save = tmp_path / "game.json"
    first = run("play", *args, "--save", str(save), input=turns(5))
    assert first.exit_code == 2 and f"the game is saved in {save}" in first.stderr
    saved = header(save)
    assert saved["format"] == "dicecup/play" and saved["version"] == 2
    assert [s["kind"] for s in saved["seats"]] == ["human", "bot:random"]
    assert [len(c.scores) for c in state(save).cards] == [5, 5]
    second = run("resume", str(save), "--json", input=turns(12, start=6))
    assert second.exit_code == 0, second.output
    assert json.loads(second.stdout) == json.loads(whole.stdout)
    assert state(save).over is True


def test_quit_with_save_then_resume(tmp_path):
    save = tmp_path / "g.json"
    result = run("play", "-v", "yacht", "-p", "ann", "--save", str(save), input="q\n")
    assert result.exit_code == 0 and f"dicecup resume {save}" in result.stdout
    assert "no rolls left" not in result.stdout
    assert run("resume", str(save), input=turns(12)).exit_code == 0


def test_killed_mid_game_resumes_exactly(tmp_path):
    """SIGKILL while bots play: the save holds every move made, and resume ends the same (the same dice)."""
    args = [
        "play",
        "-v",
        "yacht",
        "-p",
        "bot:random",
        "-p",
        "bot:random",
        "--seed",
        "12",
        "--rounds",
        "12",
        "--json",
        "-q",
    ]
    whole = cli(*args)
    assert whole.returncode == 0, whole.stderr
    save = tmp_path / "killed.json"
    proc = subprocess.Popen(
        [sys.executable, "-m", "dicecup", *args, "--save", str(save)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, **ENV},
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if sum(m[0] == "score" for m in moves(save)) >= 2 * 2 * 12:  # two games of two players
                    break
            except (OSError, ValueError, KeyError):
                pass
            time.sleep(0.02)
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait()
    if state(save).over:
        pytest.skip("the game ended before it could be killed")
    resumed = cli("resume", str(save), "--json")
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout) == json.loads(whole.stdout)


def test_corrupt_and_foreign_saves_are_refused_untouched(tmp_path, engine):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    assert "not a dicecup saved game (invalid JSON" in fails("resume", str(bad))
    assert "is not a dicecup saved game; nothing was written" in fails(
        "play", "-v", "yacht", "-p", "a", "--save", str(bad)
    )
    assert bad.read_text() == "{not json"
    bare = tmp_path / "bare.json"
    bare.write_text(GameState.new(engine.variant("yacht"), ["a"]).to_json())
    assert "bare game state" in fails("resume", str(bare))
    other = tmp_path / "other.json"
    assert run("play", "-v", "yacht", "-p", "a", "--save", str(other), input="q\n").exit_code == 0
    before = other.read_text()
    assert "holds a yacht game, not yatzy" in fails("resume", str(other), "--variant", "yatzy")
    assert "already holds an unfinished yacht game" in fails("play", "-v", "yatzy", "-p", "a", "--save", str(other))
    changed = tmp_path / "changed.json"
    changed.write_text(before.replace('"fingerprint":"', '"fingerprint":"0'))
    assert "line 1 does not match its checksum" in fails("resume", str(changed))  # an edit that breaks the seal
    reseal(changed, lambda lines: [{**lines[0], "fingerprint": "0" * 16}, *lines[1:]])  # one that seals again
    assert "different definition of variant 'yacht'" in fails("resume", str(changed))
    changed.write_text(before)
    reseal(changed, lambda lines: [{**lines[0], "seats": [{"name": "a", "kind": "bot:genius"}]}, *lines[1:]])
    assert "seats[0].kind is 'bot:genius'" in fails("resume", str(changed))
    assert other.read_text() == before
