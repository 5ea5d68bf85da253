"""`dicecup simulate`: output shape, determinism, plots and errors (exit 2)."""

from __future__ import annotations

import json
import os
import re
import stat
import struct
import zlib
from collections import Counter

import pytest
from _variants import BUILTIN_VARIANTS
from typer.testing import CliRunner

from dicecup import hookimpl
from dicecup.cli.app import app

runner = CliRunner()


@pytest.fixture(autouse=True)
def private_state(monkeypatch, tmp_path_factory):
    """The key that signs cached strategy tables goes to a test folder (never inside a test's cache
    folder, which may be tmp_path itself), not the user's state folder."""
    monkeypatch.setenv("DICECUP_STATE_DIR", str(tmp_path_factory.mktemp("state")))


def run(*args: str):
    return runner.invoke(app, ["simulate", *args])


def sim_json(*args: str) -> dict:
    res = run(*args, "--json")
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def test_json_holds_every_figure(engine):
    d = sim_json("--variant", "yahtzee", "--strategy", "greedy", "--games", "50", "--seed", "3")
    assert d["variant"] == "yahtzee" and d["strategy"] == "greedy" and d["games"] == 50 and d["seed"] == 3
    for key in ("mean", "sd", "se", "median", "mode", "mode_count", "mode_rate", "min", "max"):
        assert isinstance(d[key], (int, float)), key
    assert list(d["percentiles"]) == ["1", "5", "25", "75", "95", "99"]
    assert list(d["boxes"]) == list(engine.variant("yahtzee").box_ids)
    assert all(set(b) == {"mean", "zero_rate"} for b in d["boxes"].values())
    assert set(d["bonuses"]) == {"upper_bonus", "yahtzee_bonus"}
    assert all(set(b) == {"name", "rate", "mean_points", "per_game", "times"} for b in d["bonuses"].values())
    assert sum(d["scores"].values()) == 50 and d["scores"][str(d["mode"])] == d["mode_count"]
    h = d["histogram"]
    assert sum(h["counts"]) == 50 and len(h["edges"]) == len(h["counts"]) + 1
    assert h["edges"][0] <= d["min"] and d["max"] < h["edges"][-1]
    # the figures agree with each other
    assert d["min"] <= d["percentiles"]["1"] <= d["median"] <= d["percentiles"]["99"] <= d["max"]
    assert d["se"] == pytest.approx(d["sd"] / 50**0.5)
    upper = sum(d["boxes"][b]["mean"] for b in d["boxes"])
    assert d["mean"] == pytest.approx(upper + sum(b["mean_points"] for b in d["bonuses"].values()))


@pytest.mark.parametrize("method", ["batched", "engine"])
def test_same_seed_same_results(method):
    args = ("--variant", "yatzy", "--strategy", "random", "--games", "30", "--method", method)
    a = sim_json(*args, "--seed", "11")
    b = sim_json(*args, "--seed", "11")
    c = sim_json(*args, "--seed", "12")
    assert a == b
    assert a != c


def test_seed_defaults_to_a_fresh_one_that_reproduces():
    first = sim_json("--variant", "yacht", "--strategy", "random", "--games", "20")
    again = sim_json("--variant", "yacht", "--strategy", "random", "--games", "20", "--seed", str(first["seed"]))
    assert first == again


def test_terminal_report_and_histogram():
    res = run("--variant", "generala", "--strategy", "random", "--games", "40", "--seed", "1")
    assert res.exit_code == 0, res.output
    assert "standard deviation" in res.stdout and "percentile 95" in res.stdout
    assert "Histogram" in res.stdout and "│" in res.stdout and "█" in res.stdout
    assert "instant win" in res.stdout  # the solitaire note docs/games/generala.md promises


def test_json_counts_every_final_score_and_bonus_exactly(engine):
    """The exact tallies are those of the very games the API plays with the same seed, counted here."""
    from dicecup.simulate import simulate

    args = ("--variant", "yahtzee", "--strategy", "greedy", "--games", "600", "--seed", "10")
    d = sim_json(*args)
    result = simulate(engine.variant("yahtzee"), "greedy", 600, seed=10)
    totals = Counter(result.totals.tolist())
    assert d["scores"] == {str(t): totals[t] for t in sorted(totals)}
    assert [int(t) for t in d["scores"]] == sorted(totals)  # ascending by value in the JSON text too
    top = max(totals.values())
    assert (d["mode"], d["mode_count"]) == (min(t for t, c in totals.items() if c == top), top)
    assert d["mode_rate"] == top / 600
    for j, bid in enumerate(result.bonus_ids):
        points = result.bonus_points[:, j].tolist()
        assert d["bonuses"][bid]["per_game"] == {str(p): c for p, c in sorted(Counter(points).items())}
        earned = Counter(result.bonus_counts[:, j].tolist())
        assert d["bonuses"][bid]["times"] == {str(k): earned[k] for k in range(max(earned) + 1)}
    upper, bonus = d["bonuses"]["upper_bonus"], d["bonuses"]["yahtzee_bonus"]
    assert set(upper["times"]) == {"0", "1"}
    assert list(bonus["times"]) == ["0", "1", "2", "3"]  # this seed has games with 2 and 3 bonuses
    assert bonus["times"]["2"] > 0 and bonus["times"]["3"] > 0


def test_terminal_report_shows_the_mode_the_exact_totals_and_bonus_times():
    args = ("--variant", "yahtzee", "--strategy", "greedy", "--games", "600", "--seed", "3")
    d = sim_json(*args)
    res = run(*args)
    assert res.exit_code == 0, res.output
    out = res.stdout
    assert f"{d['mode']} ({d['mode_count']} games, {100 * d['mode_rate']:.1f}%)" in out
    # the most frequent totals: ten rows, most games first, the smaller total first on ties
    section = out.split("Most frequent totals", 1)[1]
    assert f"of {len(d['scores'])} distinct; --scores lists every one" in section
    rows = [(int(t), int(g)) for t, g in re.findall(r"│\s+(-?\d+) │\s+(\d+) │\s+[\d.]+% │", section)]
    expected = sorted(((int(t), c) for t, c in d["scores"].items()), key=lambda tc: (-tc[1], tc[0]))[:10]
    assert rows == expected
    times = re.search(r"yahtzee_bonus\s+│\s+100 │(.*)│", out.split("games by times earned", 1)[1]).group(1)
    assert [int(c) for c in times.split("│")] == list(d["bonuses"]["yahtzee_bonus"]["times"].values())


def test_times_table_shows_the_recorded_counts_and_mean_points_each(engine):
    """Column multipliers: 100, 200 or 300 a bonus. The table shows the recorded times and the mean points each."""
    import io

    import numpy as np
    from rich.console import Console

    from dicecup.cli.simulating import _print_times
    from dicecup.simulate import SimResult, summarize

    v = engine.variant("yahtzee")  # its declared bonuses: reported even when no game earned them
    boxes = np.zeros((4, len(v.box_ids)), dtype=np.int64)
    points = np.array([[0, 0], [300, 0], [300, 0], [400, 0]])  # x3 once; x1 and x2; x1 twice and x2
    earned = np.array([[0, 0], [1, 0], [2, 0], [3, 0]])
    s = summarize(
        SimResult(
            v,
            "random",
            0,
            "engine",
            points.sum(axis=1),
            boxes,
            ("yahtzee_bonus", "upper_bonus"),
            ("Y", "N"),
            points,
            earned,
            (),
            (),
            np.zeros((4, 0), dtype=np.int64),
        )
    )
    out = io.StringIO()
    _print_times(Console(file=out, width=120, highlight=False), s)
    text = out.getvalue()
    assert "points each (mean)" in text
    y = re.search(r"│ yahtzee_bonus\s+│\s+(\S+) │(.*)│", text)
    assert y.group(1) == "166.67"  # 1000 points over 6 earnings
    assert [int(c) for c in y.group(2).split("│")] == [1, 1, 1, 1]
    n = re.search(r"│ upper_bonus\s+│\s+(\S+) │(.*)│", text)
    assert n.group(1) == "—" and n.group(2).split("│")[0].strip() == "4"  # never earned: 0 times in every game


def test_scores_flag_lists_every_total_with_its_cumulative_share():
    args = ("--variant", "yacht", "--strategy", "random", "--games", "80", "--seed", "9")
    d = sim_json(*args)
    res = run(*args, "--scores")
    assert res.exit_code == 0, res.output
    section = res.stdout.split("Exact scores", 1)[1]
    rows = re.findall(r"│\s+(-?\d+) │\s+(\d+) │\s+([\d.]+)% │\s+([\d.]+)% │", section)
    assert [(t, int(g)) for t, g, _, _ in rows] == [(t, c) for t, c in d["scores"].items()]
    running = 0
    for _, games, share, at_most in rows:
        running += int(games)
        assert (share, at_most) == (f"{100 * int(games) / 80:.2f}", f"{100 * running / 80:.2f}")
    assert rows[-1][3] == "100.00"


def _png_chunks(data: bytes) -> list[bytes]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, kinds = 8, []
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind = data[pos + 4 : pos + 8]
        body = data[pos + 8 : pos + 8 + length]
        (crc,) = struct.unpack(">I", data[pos + 8 + length : pos + 12 + length])
        assert zlib.crc32(kind + body) == crc
        kinds.append(kind)
        pos += 12 + length
    return kinds


def test_plot_writes_a_valid_png(tmp_path):
    out = tmp_path / "hist.png"
    res = run("--variant", "yacht", "--strategy", "random", "--games", "60", "--seed", "2", "--plot", str(out))
    assert res.exit_code == 0, res.output
    kinds = _png_chunks(out.read_bytes())
    assert kinds[0] == b"IHDR" and kinds[-1] == b"IEND" and b"IDAT" in kinds
    width, height = struct.unpack(">II", out.read_bytes()[16:24])
    assert width > 400 and height > 300
    assert [p.name for p in tmp_path.iterdir()] == ["hist.png"]  # no temporary file left behind


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--games", "0"], "--games must be a whole number from 1 to"),
        (["--games", "-3"], "--games must be a whole number from 1 to"),
        (["--strategy", "clever"], "unknown strategy 'clever'"),
        (["--plot", "/nonexistent-dir/x.png"], "does not exist"),
        (["--plot", "hist.jpg"], "ending in .png"),
        (["--option", "joker=sometimes"], "joker"),
        (["--method", "quantum"], "unknown method"),
    ],
)
def test_bad_input_exits_2(args, message):
    res = run("--variant", "yahtzee", "--strategy", "random", "--games", "5", *args)
    assert res.exit_code == 2
    assert message in res.output
    assert "Traceback" not in res.output


def test_plot_path_that_is_a_directory_exits_2(tmp_path):
    folder = tmp_path / "x.png"
    folder.mkdir()
    res = run("--variant", "yacht", "--strategy", "random", "--games", "5", "--plot", str(folder))
    assert res.exit_code == 2 and "is a directory" in res.output


@pytest.mark.parametrize("command", [["simulate", "--strategy", "random", "--games", "5"], ["distribution"]])
def test_plot_path_that_is_a_pipe_exits_2_and_stays(tmp_path, command):
    """A named pipe as --plot is refused before any work, and left as it was (not replaced by a PNG)."""
    fifo = tmp_path / "x.png"
    os.mkfifo(fifo)
    res = CliRunner().invoke(app, [command[0], "--variant", "yacht", *command[1:], "--plot", str(fifo)])
    assert res.exit_code == 2 and "not a regular file" in res.output and "Traceback" not in res.output
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)


def test_unknown_variant_exits_2():
    res = run("--variant", "farkle", "--strategy", "random", "--games", "5")
    assert res.exit_code == 2 and "unknown variant" in res.output


@pytest.mark.parametrize("variant", BUILTIN_VARIANTS)
@pytest.mark.parametrize("strategy", ["random", "greedy"])
def test_every_builtin_variant_simulates(variant, strategy, engine):
    d = sim_json("--variant", variant, "--strategy", strategy, "--games", "12", "--seed", "5")
    assert d["games"] == 12
    assert list(d["boxes"]) == list(engine.variant(variant).box_ids)


def test_optimal_strategy_from_the_solver(tmp_path, monkeypatch, engine):
    solver = pytest.importorskip("dicecup.solver")
    monkeypatch.setenv("DICECUP_CACHE_DIR", str(tmp_path))
    d = sim_json("--variant", "generala", "--strategy", "optimal", "--games", "3000", "--seed", "4")
    assert d["strategy"] == "optimal" and d["method"] == "batched"
    expected = solver.solve(engine.variant("generala")).expected_score
    assert abs(d["mean"] - expected) < 4 * d["se"]
    assert any(tmp_path.iterdir())  # the strategy table was cached where the environment says


# ----------------------------------------------------------------------------- what the batched tables cannot hold


@pytest.mark.parametrize(
    ("vid", "strategy", "games"),
    [
        ("triple-yahtzee", "greedy", 1),  # column multipliers
        ("yamb", "random", 20),  # rule actions (announcements)
        ("maxi-yatzy", "greedy", 3),  # banked rolls
        ("balut", "random", 20),  # awards in another figure (points)
    ],
)
def test_variants_the_tables_cannot_hold_are_played_by_the_engine(monkeypatch, vid, strategy, games):
    """Each game's total is Variant.total of its final card, and the report's figures are those games'."""
    from dicecup.simulate import engine_sim

    played = []
    real = engine_sim.play_one

    def recording(variant, bot, rng, events=None):
        card, total = real(variant, bot, rng, events)
        played.append((variant, card, total))
        return card, total

    monkeypatch.setattr(engine_sim, "play_one", recording)
    d = sim_json("--variant", vid, "--strategy", strategy, "--games", str(games), "--seed", "2")
    assert d["method"] == "engine" and d["games"] == games == len(played)
    for variant, card, total in played:
        assert variant.id == vid and len(card.scores) == len(variant.boxes)
        assert total == variant.total(card)
    assert d["mean"] == pytest.approx(sum(t for *_, t in played) / games)
    v = played[0][0]
    for box in v.box_ids:
        written = [v.written(box, card.scores[box]) for _, card, _ in played]
        assert d["boxes"][box]["mean"] == pytest.approx(sum(written) / games)


class RollsLeft:
    """The choice box scores double while rolls are left: a rule that reads the game situation."""

    @hookimpl
    def dicecup_adjust_score(self, ctx, score):
        return score * 2 if ctx.box.id == "choice" and ctx.rolls_left > 0 else None


def test_a_rule_reading_the_situation_is_not_tabulated():
    from dicecup import DicecupError, Engine
    from dicecup.simulate import simulate

    v = Engine(plugins=[RollsLeft()], entry_points=False).variant("yacht")
    with pytest.raises(DicecupError, match=r"batched simulator cannot play 'random' on yacht: .*\(rolls_left\)"):
        simulate(v, "random", 20, seed=1, method="batched")
    auto = simulate(v, "random", 20, seed=1)
    assert auto.method == "engine"
    assert (auto.totals == simulate(v, "random", 20, seed=1, method="engine").totals).all()


class AwardsSeen:
    """The choice box scores one more once the card holds any award: a rule that reads the awards."""

    @hookimpl
    def dicecup_adjust_score(self, ctx, score):
        return score + 1 if ctx.box.id == "choice" and ctx.card.awards else None


def test_a_rule_reading_the_awards_is_not_tabulated():
    from dicecup import DicecupError, Engine
    from dicecup.simulate import simulate

    v = Engine(plugins=[AwardsSeen()], entry_points=False).variant("yacht")
    with pytest.raises(DicecupError, match=r"cannot play 'random' on yacht: a rule plugin reads the card's awards"):
        simulate(v, "random", 20, seed=1, method="batched")
    assert simulate(v, "random", 20, seed=1).method == "engine"


def test_a_risk_run_learns_the_rules_once(tmp_path, monkeypatch):
    """The size check, the table (solved here) and the games share one rules model: the rules are learned
    once a command."""
    from dicecup.solver import rules

    monkeypatch.setenv("DICECUP_CACHE_DIR", str(tmp_path))
    made = []
    real = rules.RuleModel.__init__

    def counted(self, *args, **kwargs):
        made.append(args[0].id)
        real(self, *args, **kwargs)

    monkeypatch.setattr(rules.RuleModel, "__init__", counted)
    d = sim_json("--variant", "yacht", "--strategy", "risk:0.05", "--games", "200", "--seed", "3")
    assert d["strategy"] == "risk:0.05" and made == ["yacht"]
