"""`dicecup solve` and `dicecup advise` as a user meets them, and the strategy-table cache:
JSON shapes, errors (exit 2, one line, no traceback), corrupt and stale cache files rebuilt."""

from __future__ import annotations

import json

import numpy as np
import pytest
from _solver_helpers import ANNOUNCED, TINY
from typer.testing import CliRunner

from dicecup import Card, Engine, hookimpl
from dicecup.cli.app import app, get_engine
from dicecup.solver import cache
from dicecup.solver.advice import advise

ENV = {"DICECUP_DISABLE_PLUGIN_AUTOLOAD": "1", "COLUMNS": "200"}


@pytest.fixture(autouse=True)
def isolated_cache(monkeypatch, tmp_path):
    """Every test gets its own cache folder and the built-in plugins only."""
    monkeypatch.setenv(cache.CACHE_ENV, str(tmp_path / "cache"))
    monkeypatch.setenv(cache.STATE_ENV, str(tmp_path / "state"))  # the key that signs tables, not the user's
    monkeypatch.setenv("DICECUP_DISABLE_PLUGIN_AUTOLOAD", "1")
    yield


def run(*args: str):
    return CliRunner().invoke(app, list(args), env=ENV)


def test_solve_json_shape_then_cached(tmp_path):
    first = run("solve", "--variant", "yacht", "--json", "--quiet")
    assert first.exit_code == 0, first.output
    data = json.loads(first.stdout)
    assert list(data) == ["variant", "options", "objective", "expected_score", "states", "seconds", "cached", "notes"]
    assert data["variant"] == "yacht" and data["states"] == 2**12  # no bonus, no flags: one state per filled set
    assert data["cached"] is False and data["notes"] == []
    again = run("solve", "--variant", "yacht")
    assert again.exit_code == 0
    assert "loaded from the cache" in again.stdout
    assert f"{data['expected_score']:.4f}" in again.stdout
    files = sorted(p.name for p in (tmp_path / "cache").glob("yacht-*.npz"))
    assert len(files) == 2 and files[0].endswith(".card-tables.npz")  # the table, and the advisor's tables beside it


def test_solve_notes_solitaire_instant_win():
    out = run("solve", "--variant", "generala", "--quiet")
    assert out.exit_code == 0
    assert "an instant win (Generala served) is scored as an ordinary Generala" in out.stdout


def test_solve_refuses_above_max_states():
    out = run("solve", "--variant", "yacht", "--max-states", "100", "--json")
    assert out.exit_code == 2
    assert "above the limit of 100" in out.stderr and "--max-states" in out.stderr
    assert "Traceback" not in out.output


@pytest.mark.parametrize("damage", ["garbage", "truncate", "values", "stale"])
def test_bad_cache_file_is_detected_and_rebuilt(engine, damage):
    v = engine.variant("yacht")
    good, cached = cache.load_or_solve(v)
    assert not cached
    path = cache.cache_path(v)
    raw = path.read_bytes()
    if damage == "garbage":
        path.write_bytes(b"not a table at all")
    elif damage == "truncate":
        path.write_bytes(raw[: len(raw) // 2])
    else:
        with np.load(path) as data:
            arrays = {k: data[k].copy() for k in data.files}
        header = json.loads(bytes(arrays["header"]).decode())
        if damage == "values":
            arrays["values"][0] += 1.0  # a wrong number with a still valid file: the checksum catches it
        else:
            header["key"] = "0" * 24
            arrays["header"] = np.frombuffer(json.dumps(header).encode(), dtype=np.uint8)
        with open(path, "wb") as fh:
            np.savez(fh, **arrays)
    warnings: list[str] = []
    again, cached = cache.load_or_solve(v, warn=warnings.append)
    assert not cached and len(warnings) == 1 and "ignored and rebuilt" in warnings[0]
    assert again.expected_score == good.expected_score
    assert cache.load(v).expected_score == good.expected_score  # the rebuilt file is valid


def test_advise_json_ranks_every_option():
    out = run("advise", "--variant", "yacht", "--dice", "11256", "--rolls-left", "2", "--json", "--quiet")
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    opts = data["moves"]
    keeps = [tuple(o["keep"]) for o in opts if o["action"] == "keep"]
    boxes = [o["box"] for o in opts if o["action"] == "score"]
    assert (
        len(keeps) == len(set(keeps)) == 3 * 2 * 2 * 2 - 1
    )  # distinct proper sub-multisets of 11256 (0-2 ones, 2, 5, 6)
    assert sorted(boxes) == sorted(get_engine().variant("yacht").box_ids)
    values = [o["expected_score"] for o in opts]
    assert values == sorted(values, reverse=True)
    assert [o["best"] for o in opts].count(True) == 1 and opts[0]["best"] and data["best"] == opts[0]


def test_advise_card_and_last_roll():
    out = run(
        "advise",
        "-v",
        "yahtzee",
        "--dice",
        "66666",
        "--rolls-left",
        "0",
        "--card",
        "yahtzee=50,sixes=24",
        "--json",
        "-q",
    )
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    assert all(o["action"] == "score" for o in data["moves"])
    by_box = {o["box"]: o for o in data["moves"]}
    assert "sixes" not in by_box and "yahtzee" not in by_box
    # the free joker (docs/games/yahtzee.md): the upper box of the face is filled, so large straight pays 40, +100 bonus
    assert by_box["large_straight"]["points"] == 140
    assert data["best"]["box"] == "large_straight"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--dice", "1125"], "expected 5 dice, got 4"),
        (["--dice", "11257"], "out of range"),
        (["--dice", "11256", "--rolls-left", "3"], "--rolls-left must be 0..2"),
        (["--dice", "11256", "--card", "onez=3"], "no box 'onez' in yahtzee"),
        (["--dice", "11256", "--card", "ones=7"], "box 'ones' cannot hold 7"),
        (["--dice", "11256", "--card", "ones=x"], "must be a whole number"),
        (["--dice", "11256", "--card", "ones"], "is not BOX=SCORE"),
        (["--dice", "11256", "--card", "ones=1,ones=2"], "given twice"),
    ],
)
def test_advise_errors_exit_2(args, message):
    out = run("advise", "--variant", "yahtzee", *args)
    assert out.exit_code == 2
    assert message in out.stderr
    assert "Traceback" not in out.output


def test_advise_with_banked_rolls(tmp_path, engine):
    """Unused rolls banked: --banked widens the rolls left, the values are the API's with that many rolls,
    and a bank the card cannot have (or a variant that banks nothing) is refused before any solving."""
    path = tmp_path / "yacht-banked.yaml"
    path.write_text("id: yacht-banked\nextends: yacht\nturn: {rolls: 3, carry_over: true}\n")
    args = ["advise", "-v", str(path), "--dice", "11256", "--card", "yacht=0", "--json", "-q"]
    out = run(*args, "--banked", "2")
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    assert (data["rolls_left"], data["banked"], data["first_roll"]) == (4, 2, True)
    solution, _ = cache.load_or_solve(engine.load_file(path))
    want = advise(solution, Card({"yacht": 0}), (1, 1, 2, 5, 6), 4)
    assert data["best"]["expected_score"] == pytest.approx(want[0].value)
    plain = json.loads(run(*args).stdout)  # two rolls left and nothing banked: worth less
    assert plain["rolls_left"] == 2 and plain["best"]["expected_score"] < data["best"]["expected_score"]
    for extra, message in [
        (["--banked", "3"], "--banked must be 0..2 for yacht-banked (this card's turns left at most 2)"),
        (["--banked", "1", "--rolls-left", "4"], "--rolls-left must be 0..3 (yacht-banked has 3 rolls a turn, plus 1"),
    ]:
        bad = run(*args, *extra)
        assert bad.exit_code == 2 and message in bad.stderr, bad.output
    bad = run("advise", "-v", "yacht", "--dice", "11256", "--banked", "1")
    assert bad.exit_code == 2 and "its turns bank no unused rolls" in bad.stderr


def test_advise_refuses_an_unreachable_card():
    """Russian stage order: a stage-2 box cannot be filled while stage 1 is open."""
    out = run("advise", "--variant", "russian", "--dice", "11256", "--card", "pair=4", "-q")
    assert out.exit_code == 2
    assert "cannot arise in play" in out.stderr


def test_advice_from_a_cached_table_does_not_solve_again(engine, monkeypatch):
    """Once cached, the table answers: loading and advising never run the solver (its speed: bench_advise.py)."""
    v = engine.variant("yacht")
    solved, _ = cache.load_or_solve(v)

    def refuse(*args, **kwargs):
        raise AssertionError("the solver ran although the table was cached")

    monkeypatch.setattr(cache, "solve", refuse)
    loaded, was_cached = cache.load_or_solve(v)
    assert was_cached
    options = advise(loaded, Card(), (1, 1, 2, 5, 6), 2)
    assert options[0].best
    assert [o.value for o in options] == pytest.approx([o.value for o in advise(solved, Card(), (1, 1, 2, 5, 6), 2)])


def test_tables_from_older_code_are_removed_when_a_new_one_is_written(engine):
    v = engine.variant("yacht")
    path = cache.cache_path(v)
    path.parent.mkdir(parents=True, exist_ok=True)
    stale = path.with_name(path.name.replace(cache.cache_key(v), "0" * 24))
    stale.write_bytes(b"a table from an older solver")
    other_options = cache.cache_path(engine.variant("yahtzee"))
    other_options.write_bytes(b"another variant's table")
    cache.load_or_solve(v)
    assert path.exists() and not stale.exists() and other_options.exists()


# ----------------------------------------------------------------------------- limits and refusals

LIMIT_MESSAGE = (
    r"yacht: the state space has (more than )?[\d,]+ states, above the limit of 100; raise it with --max-states"
)


def test_max_states_refuses_a_cached_table_like_an_uncached_one():
    import re

    before = run("solve", "-v", "yacht", "--max-states", "100", "-q")
    assert run("solve", "-v", "yacht", "-q").exit_code == 0  # now cached, 4,096 states
    after = run("solve", "-v", "yacht", "--max-states", "100", "-q")
    for out in (before, after):
        assert out.exit_code == 2 and re.search(LIMIT_MESSAGE, out.stderr), out.stderr
    assert "has 4,096 states" in after.stderr  # the cached table knows its exact size


@pytest.mark.parametrize(
    "args",
    [
        ["solve", "-v", "yacht", "-q"],
        ["advise", "-v", "yacht", "--dice", "11256", "-q"],
        ["simulate", "-v", "yacht", "-s", "optimal", "-n", "10", "--seed", "1"],
        ["play", "-v", "yacht", "-p", "bot:random", "--hints", "--seed", "1", "-q"],
        ["play", "-v", "yacht", "-p", "bot:optimal", "--seed", "1", "-q"],
    ],
    ids=["solve", "advise", "simulate", "play-hints", "play-optimal"],
)
def test_commands_loading_a_cached_table_check_the_default_limit(engine, tmp_path, args):
    """A (validly signed) table claiming more states than the default limit is refused by every command."""
    from dicecup.solver import DEFAULT_MAX_STATES

    v = engine.variant("yacht")
    cache.load_or_solve(v)
    path = cache.cache_path(v)
    with np.load(path) as data:
        arrays = {k: data[k].copy() for k in data.files}
    header = json.loads(bytes(arrays.pop("header")).decode())
    header["states"] = DEFAULT_MAX_STATES + 1
    header["hmac"] = cache._mac((tmp_path / "state" / cache.KEY_FILE).read_bytes(), header, arrays)
    with open(path, "wb") as fh:
        np.savez(fh, header=np.frombuffer(json.dumps(header).encode(), dtype=np.uint8), **arrays)
    out = run(*args)
    assert out.exit_code == 2, out.output
    assert f"has {DEFAULT_MAX_STATES + 1:,} states, above the limit of {DEFAULT_MAX_STATES:,}" in out.stderr
    assert "Traceback" not in out.output


@pytest.mark.parametrize(
    ("vid", "reason"),
    [
        ("yamb", "announcements"),
        ("maxi-yatzy", "above the limit of 40,000,000"),
        ("triple-yahtzee", "39 boxes"),
        ("balut", "28 boxes"),
    ],
)
def test_variants_the_solver_cannot_model_are_refused(vid, reason):
    out = run("solve", "-v", vid, "-q")
    assert out.exit_code == 2 and reason in out.stderr, out.output
    assert "Traceback" not in out.output
    dice = "1,2,3,4,5" + (",6" if vid == "maxi-yatzy" else "")
    hint = run("advise", "-v", vid, "--dice", dice, "-q", "--strategy", "optimal")
    assert hint.exit_code == 2 and reason in hint.stderr, hint.output


TWO_COLUMNS = TINY["two-columns"]


def test_advise_with_the_strong_strategy(tmp_path):
    path = tmp_path / "two-columns.yaml"
    path.write_text(TWO_COLUMNS, encoding="utf-8")
    out = run("advise", "-v", str(path), "--dice", "33", "--card", "a.threes=6", "--json", "-q", "-s", "strong")
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    assert data["strategy"] == "strong"
    boxes = {o["box"] for o in data["moves"] if o["action"] == "score"}
    assert boxes == {"a.ones", "a.pair", "b.ones", "b.threes", "b.pair"}  # the filled box is not offered
    assert data["best"] == data["moves"][0]
    text = run("advise", "-v", str(path), "--dice", "33", "-q", "-s", "strong")
    assert text.exit_code == 0 and "bot strong" in text.stdout, text.output
    bad = run("advise", "-v", str(path), "--dice", "33", "-q", "-s", "best")
    assert bad.exit_code == 2 and "unknown strategy 'best'" in bad.stderr
    single = tmp_path / "one-part.yaml"  # one column, one section: nothing to split
    single.write_text(
        TWO_COLUMNS.replace("id: tiny-two-columns", "id: one-part").split("columns:")[0]
        + (
            "boxes:\n  ones: {pattern: {kind: face, face: 1}, score: sum}\n  pair: {pattern: {kind: of_a_kind, n: 2}, score: 8}\n"
        ),
        encoding="utf-8",
    )
    one = run("advise", "-v", str(single), "--dice", "12", "-q", "-s", "strong")
    assert one.exit_code == 2 and "columns or sections" in one.stderr, one.output


def test_advise_falls_back_to_strong_where_the_solver_refuses(tmp_path):
    """Announcements put a game beyond the solver: `advise` (auto) answers with bot strong instead."""
    path = tmp_path / "announced.yaml"
    path.write_text(ANNOUNCED, encoding="utf-8")
    out = run("advise", "-v", str(path), "--dice", "33", "--json", "-q")
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    assert data["strategy"] == "strong"
    assert {o["box"] for o in data["moves"] if o["action"] == "score"} == {"free.ones", "free.threes", "free.pair"}
    refused = run("advise", "-v", str(path), "--dice", "33", "-q", "-s", "optimal")
    assert refused.exit_code == 2 and "announcements" in refused.stderr


class RollsLeft:
    """The choice box scores double while rolls are left: a rule that reads the game situation."""

    @hookimpl
    def dicecup_adjust_score(self, ctx, score):
        return score * 2 if ctx.box.id == "choice" and ctx.rolls_left > 0 else None


def test_a_rule_reading_the_situation_is_refused():
    from dicecup.solver import SolverError, solve

    v = Engine(plugins=[RollsLeft()], entry_points=False).variant("yacht")
    with pytest.raises(SolverError, match=r"reads the game around the card \(rolls_left\)"):
        solve(v)
    with pytest.raises(SolverError, match=r"rolls_left"):
        cache.load_or_solve(v)


@pytest.mark.parametrize("vid", ["yatzy-forced", "kismet", "tests/variants/seven.yaml"])
def test_family_and_other_faces_solve(vid):
    out = run("solve", "-v", vid, "--json", "-q")
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    assert data["states"] > 0 and data["expected_score"] > 100


def test_ten_faces_is_refused_only_for_its_size():
    """11,803,008 states: the model takes it, only the limit does not (solving it takes many minutes)."""
    out = run("solve", "-v", "tests/variants/ten.yaml", "--max-states", "100000", "-q")
    assert out.exit_code == 2
    assert "states, above the limit of 100,000; raise it with --max-states" in out.stderr, out.stderr


@pytest.mark.parametrize("vid", ["yatzy-forced", "tests/variants/seven.yaml"])
def test_optimal_value_matches_engine_games(vid):
    """Brute force over GameState is out of reach (every distinct card is a state), so bot:optimal plays
    400 games through the engine simulator; their mean must be the solver's value within 4 standard errors."""
    solved = run("solve", "-v", vid, "--json", "-q")
    assert solved.exit_code == 0, solved.output
    expected = json.loads(solved.stdout)["expected_score"]
    sim = run("simulate", "-v", vid, "-s", "optimal", "--method", "engine", "-n", "400", "--seed", "9", "--json")
    assert sim.exit_code == 0, sim.output
    games = json.loads(sim.stdout)
    assert games["method"] == "engine"
    assert abs(games["mean"] - expected) < 4 * games["se"], (games["mean"], expected, games["se"])


def test_the_documented_state_limit_is_the_solver_default():
    from dicecup.solver import DEFAULT_MAX_STATES

    out = run("solve", "--help")
    assert f"{DEFAULT_MAX_STATES:,}" in " ".join(out.stdout.split())


def test_simulate_with_the_strong_strategy(tmp_path):
    path = tmp_path / "two-columns.yaml"
    path.write_text(TWO_COLUMNS, encoding="utf-8")
    out = run("simulate", "-v", str(path), "-s", "strong", "-n", "30", "--seed", "3", "--json")
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    assert data["strategy"] == "strong" and data["games"] == 30 and data["method"] == "engine"
    assert out.stderr == ""  # --json: no progress, the correction fitted in silence (then it is kept)
    again = run("simulate", "-v", str(path), "-s", "strong", "-n", "30", "--seed", "3", "--json")
    assert json.loads(again.stdout)["mean"] == data["mean"] and again.stderr == ""
    refused = run("simulate", "-v", "maxi-yatzy", "-s", "strong", "-n", "3")
    assert refused.exit_code == 2 and "banked rolls" in refused.stderr, refused.output


def test_play_with_bot_strong(tmp_path):
    path = tmp_path / "two-columns.yaml"
    path.write_text(TWO_COLUMNS, encoding="utf-8")
    from dicecup.progress import Recorder
    from dicecup.solver.strong import StrongBot

    seen = Recorder()
    StrongBot().prepare(get_engine().load_file(path), seen)  # what play asks before the game starts
    assert seen.balanced() and any("fitting bot strong's correction" in label for label in seen.labels())
    out = run("play", "-v", str(path), "-p", "bot:strong", "-p", "bot:greedy", "--seed", "1", "--json")
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    assert len(data["players"]) == 2, data
