"""`dicecup simulate` on the quick path, and the rule tables it reads back: a plain command line runs without
typer, click or pydantic (rich only to draw the report's tables) and prints what the typer path prints; the
rule tables restored a set of answers at a time are the tables `state` gave."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from dicecup import Engine
from dicecup.numeric.tables import EMPTY, RuleTables
from dicecup.simulate.result import bonus_columns, event_columns

_LIBRARIES = ("typer", "click", "pydantic", "rich")


def _dicecup(*args: str) -> tuple[subprocess.CompletedProcess, list[str]]:
    """`dicecup ARGS` through the console script's `main`, and which of typer, click, pydantic and rich it
    imported (printed on stderr last)."""
    code = (
        "import sys\n"
        "from dicecup.cli import main\n"
        "try:\n    main(sys.argv[1:])\n"
        "finally:\n"
        f"    print(sorted({{m.split('.')[0] for m in sys.modules}} & {set(_LIBRARIES)!r}), file=sys.stderr)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=600)
    *rest, imported = proc.stderr.splitlines()
    return proc, json.loads(imported.replace("'", '"'))


@pytest.mark.usefixtures("cli_env")
@pytest.mark.parametrize(
    "args", [("-v", "yahtzee", "-n", "300", "--seed", "1"), ("-v", "yahtzee", "-n", "200", "--seed", "9"),
             ("-v", "yatzy", "-n", "200", "--seed", "4"), ("-v", "yahtzee", "-s", "greedy", "-n", "50", "--seed", "2")],
)  # fmt: skip
def test_a_plain_simulate_line_runs_without_typer_and_prints_what_typer_prints(args):
    """The same games and the same bytes as the typer path (the time it took aside), as JSON with none of the
    libraries, as tables with rich alone."""
    from dicecup.cli.app import app

    proc, imported = _dicecup("simulate", *args, "--json")
    assert proc.returncode == 0, proc.stderr
    assert imported == []
    typed = CliRunner().invoke(app, ["simulate", *args, "--json"])
    assert typed.exit_code == 0, typed.output
    assert proc.stdout == typed.stdout
    table, imported = _dicecup("simulate", *args)
    assert table.returncode == 0 and imported == ["rich"]
    typed = CliRunner().invoke(app, ["simulate", *args])
    took = r"[0-9.]+ s, [0-9,]+ games/s"  # (the first line says how long the run took)
    assert [_untimed(line, took) for line in table.stdout.splitlines()] == [
        _untimed(line, took) for line in typed.stdout.splitlines()
    ]


def _untimed(line: str, took: str) -> str:
    import re

    return re.sub(took, "T", line)


@pytest.mark.usefixtures("cli_env")
@pytest.mark.parametrize(
    "args, message",
    [
        (["-v", "nope"], "error: unknown variant 'nope'; known variants: "),  # the option's callback
        (["-v", "yahtzee", "-n", "0"], "error: --games must be a whole number from 1 to "),  # the command
        (["-v", "yahtzee", "-n", "x"], "error: --games: 'x' is not a whole number"),  # typer
        (["-v", "yahtzee", "--max-seconds", "0.5"], "error: --max-seconds: must be at least 1, got 0.5"),
        (["-v", "yahtzee", "--seed", "-1"], "error: --seed must be 0 .. 2**63 - 1, got -1"),
        (["-n", "10"], "error: missing option '--variant' / '-v'"),
    ],
)
def test_simulate_errors_are_the_typer_paths_lines(args, message):
    """An error on the quick path, or a line it leaves to typer, is the one `error:` line of the typer path."""
    from dicecup.cli.app import app

    proc, _ = _dicecup("simulate", *args)
    typed = CliRunner().invoke(app, ["simulate", *args])
    assert proc.returncode == typed.exit_code == 2
    err = proc.stderr.splitlines()[:-1]  # (the last line: the libraries imported)
    assert err == typed.stderr.splitlines() and err[0].startswith(message) and len(err) == 1


@pytest.fixture(scope="module")
def yahtzee():
    return Engine(entry_points=False).variant("yahtzee")


def _tables(v) -> RuleTables:
    ids, _ = bonus_columns(v)
    return RuleTables(v, list(ids), event_columns(v)[0])


@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 30))
def test_restored_tables_give_back_the_state_they_were_given(yahtzee, seed, n):
    """`restore` (a group's answers put back a set of fact values at a time) then `state` gives the arrays
    `state` gave, in the same order; and every class's table made at once is the table made one by one."""
    rng = np.random.default_rng(seed)
    nb = len(yahtzee.box_ids)
    vals = np.where(rng.random((n, nb)) < 0.5, rng.integers(0, 31, (n, nb)), EMPTY)
    vals[rng.random(n) < 0.3] = rng.integers(0, 31, nb)  # some full cards: the end bonuses' tables learn them
    learnt = _tables(yahtzee)
    learnt.scores.traced.classes(vals)
    full = vals[(vals != EMPTY).all(axis=1)]
    if len(full):
        learnt.end.points(full)
    meta, arrays = learnt.state()
    meta = json.loads(json.dumps(meta))  # as the cache keeps it
    back, once, twice = _tables(yahtzee), _tables(yahtzee), _tables(yahtzee)
    back.restore(meta, arrays)
    once.restore(meta, arrays)
    again = back.state()[1]
    assert sorted(again) == sorted(arrays)
    for part in ("s_", "e_"):  # the same answers (each entry's, under the same fact values)
        assert _answers(again, part) == _answers(arrays, part)
    for name in ("s_reads_len", "s_reads", "s_keyed", "s_keys", "e_keyed", "e_keys", "l_keys", "l_simple"):
        np.testing.assert_array_equal(again[name], arrays[name], err_msg=name)
    twice.restore(meta, again)  # and restored again, the very arrays: nothing reordered
    for name, a in twice.state()[1].items():
        np.testing.assert_array_equal(a, again[name], err_msg=name)
        assert a.dtype == again[name].dtype, name
    for restored, fresh in ((back.scores.traced, once.scores.traced), (back.end.traced, once.end.traced)):
        if len(restored.tables):
            stacked = restored.tables.stacked()
            np.testing.assert_array_equal(stacked, np.stack([fresh.tables[c] for c in range(len(fresh.tables))]))
            assert restored.tables[0] is restored.tables[0]  # a table handed out is the same object each time


def _answers(arrays: dict[str, np.ndarray], part: str) -> list[tuple[int, ...]]:
    """Every kept answer of one table (`part`: its arrays' prefix) as (entry, fact values..., answer...), sorted."""
    entry, values, answers = (arrays[part + k] for k in ("entry", "values", "answers"))
    return sorted(map(tuple, np.column_stack([entry, values, answers]).tolist()))
