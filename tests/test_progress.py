"""Progress reports: the engine tells a `Reporter` what its long work does, the CLI renders it once (a bar on
a terminal, one estimate line piped, nothing with -q or --json); runs too large are refused at once; the
tables bots and advisors need are kept, signed, and read back; simulate's memory stays flat in -n."""

from __future__ import annotations

import io
import json
import time
import tracemalloc

import numpy as np
import pytest
from _solver_helpers import flip_array_byte, tiny_variant
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from dicecup.cli import progress as cli_progress
from dicecup.cli.app import app
from dicecup.errors import DicecupError
from dicecup.progress import NULL, Recorder, task

runner = CliRunner()


@pytest.fixture(autouse=True)
def private_cache(monkeypatch, tmp_path_factory):
    """Tables made here go to a test folder, signed with a test key."""
    monkeypatch.setenv("DICECUP_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
    monkeypatch.setenv("DICECUP_STATE_DIR", str(tmp_path_factory.mktemp("state")))


# ----------------------------------------------------------------------------- the reporter


def test_a_task_is_closed_however_its_block_ends():
    seen = Recorder()
    with pytest.raises(ValueError), task(seen, "outer", 3, "steps") as told:
        told.advance()
        with task(told, "inner"):
            raise ValueError("stop")
    assert seen.labels() == ["outer", "inner"] and seen.balanced()
    with task(None, "nobody watches") as told:  # NULL takes everything
        assert told is NULL
        told.advance(5)


class Clock:
    """A monotonic clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_piped_work_prints_one_estimate_line_once_it_will_take_long(monkeypatch):
    clock = Clock()
    monkeypatch.setattr(cli_progress.time, "monotonic", clock)
    out = io.StringIO()
    line = cli_progress.EstimateLine(out)
    line.start("solving yatzy", 100, "states")
    clock.now += 0.5
    line.advance(1)  # 1% in half a second: not settled yet
    assert out.getvalue() == ""
    clock.now += 0.5
    line.advance(9)  # from 1% to 10% in half a second: 90% to go, about 5 s
    assert out.getvalue() == "solving yatzy: about 5 s (100 states)\n"
    for _ in range(5):
        clock.now += 1
        line.advance(10)
    line.done()
    assert out.getvalue().count("\n") == 1  # never a second line


def test_piped_work_that_is_quick_says_nothing(monkeypatch):
    clock = Clock()
    monkeypatch.setattr(cli_progress.time, "monotonic", clock)
    out = io.StringIO()
    line = cli_progress.EstimateLine(out)
    line.start("loading", 10, "layers")
    for _ in range(10):
        clock.now += 0.1
        line.advance()
    line.done()
    assert out.getvalue() == ""


def test_an_estimate_known_up_front_is_told_before_the_first_unit(monkeypatch):
    clock = Clock()
    monkeypatch.setattr(cli_progress.time, "monotonic", clock)
    out = io.StringIO()
    line = cli_progress.EstimateLine(out)
    line.start("target play's tables of yahtzee")
    line.start("target vectors", 359_616, "states", seconds=600.0)
    assert out.getvalue() == "target play's tables of yahtzee: about 10 min\n"


def test_the_time_left_counts_the_unit_under_way_from_its_first_progress(monkeypatch):
    """A command of 8 thetas: 10% of the first one's layers seen after 5 s (a search before them), 50% a
    second later: 1/20 of the command in a second, 15/16 to go, 18.75 s."""
    clock = Clock()
    monkeypatch.setattr(cli_progress.time, "monotonic", clock)
    tasks = cli_progress.EstimateLine(io.StringIO())
    tasks.start("risk play", 8, "thetas")
    tasks.start("solving")  # no size: the nearest task inside it with one tells
    clock.now += 5  # the search, of no known size: no estimate
    assert tasks.left() is None
    tasks.start("backward pass", 100, "layers")
    tasks.advance(10)
    clock.now += 1
    tasks.advance(40)
    assert tasks.left() == pytest.approx(18.75)


def test_piped_work_of_several_phases_a_unit_is_estimated_from_whole_units(monkeypatch):
    """Each theta is a quick solve then a long distribution: the solve's rate says nothing of the theta's,
    so the line waits for the first whole theta (22 s of 8: 7 more to go, 154 s)."""
    clock = Clock()
    monkeypatch.setattr(cli_progress.time, "monotonic", clock)
    out = io.StringIO()
    line = cli_progress.EstimateLine(out)
    line.start("risk play of yatzy", 8, "thetas")
    line.start("backward pass", 100, "states")
    for _ in range(10):
        clock.now += 0.3
        line.advance(10)
    line.done()
    line.start("score distribution", 30, "layers")
    for _ in range(30):
        clock.now += 0.6
        line.advance()
    line.done()
    assert out.getvalue() == ""  # the solve alone would have said "about 22 s"
    line.advance()
    assert out.getvalue() == "risk play of yatzy: about 2 min (8 thetas)\n"


def test_reporter_is_nothing_quiet_a_bar_on_a_terminal_else_a_line():
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    assert cli_progress.reporter(quiet=True) is NULL
    assert isinstance(cli_progress.reporter(stream=io.StringIO()), cli_progress.EstimateLine)
    assert isinstance(cli_progress.reporter(stream=Tty()), cli_progress.Bar)


def test_durations_and_huge_counts_read_as_a_person_says_them():
    say = cli_progress.say_duration
    assert [say(0.2), say(40), say(200), say(5 * 3600), say(10 * 86400)] == [
        "about 1 s",
        "about 40 s",
        "about 3 min",
        "about 5.0 h",
        "about 10 days",
    ]
    assert say(1e300).endswith("years") and len(say(1e300)) < 30
    assert say(float("inf")) == "more than a billion years"


# ----------------------------------------------------------------------------- the engine reports


def test_the_solver_reports_its_search_and_every_state_of_its_backward_pass(tmp_path):
    from dicecup.solver.solve import solve

    v = tiny_variant(tmp_path, "two-groups")
    seen = Recorder()
    solution = solve(v, progress=seen)
    assert seen.balanced()
    assert seen.labels() == [f"solving {v.id}", "exploring its states", "backward pass"]
    back = seen.events.index(("start", "backward pass", solution.states, "states", None))
    assert sum(e[1] for e in seen.events[back:] if e[0] == "advance") == solution.states


def test_distribution_target_and_review_report_balanced_tasks(tmp_path):
    from dicecup import GameState
    from dicecup.simulate.distribution import distribution
    from dicecup.solver.review import review
    from dicecup.solver.solve import solve
    from dicecup.solver.target import solve_target

    v = tiny_variant(tmp_path, "two-groups")
    solution = solve(v)
    for work in (
        lambda r: distribution(solution, progress=r),
        lambda r: solve_target(solution, progress=r),
        lambda r: review(solution, GameState.new(v, 1), progress=r),
    ):
        seen = Recorder()
        work(seen)
        assert seen.balanced() and seen.labels(), seen.events
        for e in seen.events:
            if e[0] == "start" and e[2]:  # every unit of a task of known size is told, never more
                i = seen.events.index(e)
                depth, told = 0, 0
                for f in seen.events[i + 1 :]:
                    depth += {"start": 1, "done": -1}.get(f[0], 0)
                    if depth < 0:
                        break
                    if depth == 0 and f[0] == "advance":
                        told += f[1]
                assert told == e[2], (e, told)


# ----------------------------------------------------------------------------- kept tables


def test_target_tables_are_kept_signed_and_read_back(tmp_path):
    from dicecup.solver import cache
    from dicecup.solver.solve import solve
    from dicecup.solver.target_store import KIND, target_kept, target_tables

    v = tiny_variant(tmp_path, "two-groups")
    solution = solve(v)
    made, cached = target_tables(solution)
    assert not cached and target_kept(solution)
    again, cached = target_tables(solution)
    assert cached
    assert np.array_equal(again.curve().probs, made.curve().probs)
    path = cache.arrays_path(v, KIND)
    flip_array_byte(path)  # the signature no longer matches
    warned: list[str] = []
    rebuilt, cached = target_tables(solution, warn=warned.append)
    assert not cached and warned and np.array_equal(rebuilt.curve().probs, made.curve().probs)


def test_the_start_distribution_is_kept_and_read_back(tmp_path):
    from dicecup.simulate.distribution import distribution
    from dicecup.simulate.kept import start_distribution
    from dicecup.solver.solve import solve

    v = tiny_variant(tmp_path, "two-groups")
    solution = solve(v)
    first = start_distribution(solution)
    seen = Recorder()
    second = start_distribution(solution, seen)
    assert seen.events == []  # read back: nothing computed
    assert np.array_equal(first.probs, second.probs) and first.low == second.low
    assert np.array_equal(distribution(solution).probs, second.probs)


# ----------------------------------------------------------------------------- bounded runs


def _one_error_line(res) -> str:
    lines = [ln for ln in res.output.splitlines() if ln.strip()]
    assert res.exit_code == 2 and len(lines) == 1 and lines[0].startswith("error: "), res.output
    assert "Traceback" not in res.output
    return lines[0]


GAMES = st.one_of(
    st.integers(min_value=-(10**40), max_value=10**40),
    st.integers(min_value=-3, max_value=3),
    st.sampled_from([10**9, 10**9 + 1, 10**7, 10**7 + 1, 10**12, 2**63, 10**300]),
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(games=GAMES)
def test_any_number_of_games_is_refused_at_once_or_within_the_caps(cli_builtins, games):
    """`simulate -n` and `match -n`: a count past a cap, or below 1, is one error line with exit 2, saying how
    long it would take; any other is accepted by the same check (and plays in flat memory: below)."""
    from dicecup.cli.matching import MAX_GAMES as MATCH_GAMES
    from dicecup.cli.simulating import MAX_GAMES as SIMULATE_GAMES

    for command, most, extra in (
        ("simulate", SIMULATE_GAMES, ["-s", "nonsense-after-the-count"]),
        ("match", MATCH_GAMES, ["-p", "bot:win", "-p", "bot:optimal", "--plot", "/nonexistent/x.png"]),
    ):
        res = runner.invoke(app, [command, "-v", "yacht", "-n", str(games), *extra])
        line = _one_error_line(res)  # the count refused, or else the bad argument after it: never any work
        if 1 <= games <= most:
            assert "--games" not in line, line
        else:
            assert "--games" in line and len(line) < 300, line
            if games > most:
                assert "would take about" in line or "more than a billion years" in line


def test_a_run_of_a_trillion_games_is_refused_at_once_with_its_time(cli_builtins):
    import time

    start = time.perf_counter()
    res = runner.invoke(app, ["simulate", "-v", "yahtzee", "-n", "1000000000000"])
    line = _one_error_line(res)
    assert "1,000,000,000,000" in line and "about 12 days" in line
    assert time.perf_counter() - start < 5


def test_simulate_memory_does_not_grow_with_the_games(engine, monkeypatch):
    """Four times the games in the same pieces: the same peak of traced memory (within a few kB)."""
    import dicecup.simulate as sim

    v = engine.variant("yacht")
    monkeypatch.setattr(sim, "RANGE_PIECE", 250)
    sim.simulate_range(v, "random", 1, 0, 250)  # tables built and kernels loaded outside the measure
    peaks = []
    for games in (1_000, 4_000):
        tracemalloc.start()
        sim.simulate_range(v, "random", 1, 0, games)
        peaks.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
    assert peaks[1] < peaks[0] * 1.25 + 64_000, peaks


def test_simulate_in_pieces_reports_the_very_games_of_one_run(cli_builtins, engine, monkeypatch):
    """The CLI plays in pieces and tallies as it goes: every figure is the one of the whole run at once."""
    import dicecup.simulate as sim
    from dicecup.simulate import simulate, summarize

    monkeypatch.setattr(sim, "RANGE_PIECE", 97)
    res = runner.invoke(app, ["simulate", "-v", "yahtzee", "-s", "greedy", "-n", "500", "--seed", "12", "--json"])
    assert res.exit_code == 0, res.output
    got = json.loads(res.stdout)
    want = summarize(simulate(engine.variant("yahtzee"), "greedy", 500, 12))
    assert {k: v for k, v in got.items() if k != "notes"} == json.loads(json.dumps(want))


def test_check_games_takes_only_whole_counts():
    with pytest.raises(DicecupError, match="whole number"):
        cli_progress.check_games("--games", True, 10)  # type: ignore[arg-type]
    with pytest.raises(DicecupError, match="whole number"):
        cli_progress.check_games("--games", 0, 10)
    cli_progress.check_games("--games", 10, 10)


def test_quick_work_draws_no_bar_and_slow_work_does():
    """Work done before the bar's delay leaves the terminal untouched (no flicker); work that lasts longer
    brings the bar up with its rows, and closing takes it away."""
    quick = cli_progress.Bar("working", appear=5.0)
    quick.hold()
    quick.start("solving", 10, "layers")
    quick.advance(10)
    quick.done()
    quick.close()
    assert quick.bar is None and quick.timer is None

    slow = cli_progress.Bar("working", appear=0.05)
    slow.hold()
    slow.start("solving", 10, "layers")
    deadline = time.monotonic() + 10
    while slow.bar is None and time.monotonic() < deadline:
        time.sleep(0.01)
    assert slow.bar is not None  # brought up by the timer
    assert [t.description for t in slow.bar.tasks] == ["solving"]
    slow.advance(4)
    slow.done()
    assert [t.description for t in slow.bar.tasks] == ["working"]  # the held row, between tasks
    slow.close()
    assert slow.bar is None
