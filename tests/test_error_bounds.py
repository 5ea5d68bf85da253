"""Errors that echo what a user gave stay short: one bounded formatter (`dicecup.errors.shown`) for values in
messages, and every CLI command fuzzed with enormous arguments (huge numbers, thousands of dice, long option
values, long names): exit 2, one `error:` line under 300 characters, no traceback."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from dicecup.cli.app import app
from dicecup.cli.base import parse_options
from dicecup.errors import DicecupError, bounded_line, shown, shown_path

LINE = 300  # the longest error line allowed

# ---------------------------------------------------------------------- the formatter

anything = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=10**25, max_value=10**2000)
    | st.floats()
    | st.text(max_size=3000)
    | st.binary(max_size=500),
    lambda inner: st.lists(inner, max_size=60) | st.tuples(inner) | st.dictionaries(st.text(max_size=200), inner),
    max_leaves=80,
)


@settings(max_examples=300, deadline=None)
@given(anything, st.integers(min_value=12, max_value=200))
def test_shown_never_raises_and_stays_short(value, limit):
    text = shown(value, limit)
    assert isinstance(text, str) and len(text) <= limit + 30


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (10**308, "a 309-digit number"),
        (-(10**5000), "a negative 5,001-digit number"),  # beyond what Python prints: measured, not printed
        ("9" * 309, "a 309-digit number"),
        (12345, "12345"),
        ([1, 2, 3], "[1, 2, 3]"),
        ((4,), "(4,)"),
        (np.int64(7), "7"),
        ("x" * 10, "'xxxxxxxxxx'"),
    ],
    ids=range(8),
)
def test_shown_examples(value, expected):
    assert shown(value) == expected


def test_shown_names_a_large_collection_by_its_size():
    assert shown([1] * 5000, items="dice") == "5,000 dice"
    assert shown(np.zeros(10**6)) == "1,000,000 items"
    long = shown("x" * 3000)
    assert long.endswith("… (3,000 characters)") and len(long) < 110


def test_shown_survives_a_repr_that_fails():
    class Bad:
        def __repr__(self) -> str:
            raise RuntimeError("no")

    assert shown(Bad()) == "<Bad>"


def test_shown_path_keeps_the_start_and_the_name():
    path = "/data/" + "d/" * 500 + "table.npz"
    text = shown_path(path)
    assert len(text) <= 160 and text.startswith("/data/") and text.endswith("table.npz") and "…" in text
    assert shown_path("/short/path") == "/short/path"


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=20000))
def test_bounded_line_bounds_every_line(message):
    out = bounded_line(message)
    assert all(len(line) <= LINE + 40 for line in out.splitlines())
    assert out.count("\n") == max(len(message.splitlines()), 1) - 1


# ---------------------------------------------------------------------- --option


def test_an_option_given_twice_is_refused_with_both_values():
    with pytest.raises(DicecupError, match=r"--option 'joker' is given twice \('free', then 'none'\)"):
        parse_options(["joker=free", "joker=none"])
    with pytest.raises(DicecupError, match="given twice"):
        parse_options(["joker=free", " joker = free "])  # the same key however it is spaced, even the same value
    assert parse_options(["joker=free", "upper=63"]) == {"joker": "free", "upper": "63"}


def test_an_option_given_twice_on_the_command_line_is_exit_2(cli_env):
    result = CliRunner().invoke(app, ["show", "-v", "yahtzee", "-o", "joker=free", "--option", "joker=none"])
    assert result.exit_code == 2
    assert result.stderr == "error: --option 'joker' is given twice ('free', then 'none'); give each option once\n"


@pytest.mark.parametrize(
    ("options", "says"),
    [
        ({"joker": None}, "option 'joker' cannot be None"),
        ({"joker": ["free"]}, "option 'joker' cannot be ['free']"),
        ({1: "free"}, "option names are text"),
    ],
)
def test_api_options_of_the_wrong_kind_are_refused_not_coerced(engine, options, says):
    with pytest.raises(DicecupError, match=re.escape(says)):
        engine.variant("yahtzee", options)


def test_an_option_value_is_text_or_of_its_choices_kind(engine):
    assert engine.variant("maxi-yatzy", {"saved_rolls": "False"}).options["saved_rolls"] is False  # text, any case
    assert engine.variant("maxi-yatzy", {"saved_rolls": False}).options["saved_rolls"] is False
    with pytest.raises(DicecupError, match="option 'saved_rolls' cannot be 1"):
        engine.variant("maxi-yatzy", {"saved_rolls": 1})  # 1 == True in Python: no longer taken for it


# ---------------------------------------------------------------------- the CLI, fuzzed


def huge_number() -> st.SearchStrategy[str]:
    return st.builds(
        lambda sign, digits: sign + "9" * digits, st.sampled_from(["", "-"]), st.integers(min_value=21, max_value=400)
    )


def many_dice() -> st.SearchStrategy[str]:
    return st.builds(
        lambda n, sep, face: sep.join([face] * n),
        st.integers(min_value=21, max_value=6000),
        st.sampled_from(["", ",", " "]),
        st.sampled_from(["1", "6", "9"]),
    )


def long_text() -> st.SearchStrategy[str]:
    return st.builds(
        lambda n, c: c * n, st.integers(min_value=81, max_value=6000), st.sampled_from(["x", "é", "_", "A-"])
    )


HOSTILE = {
    "YAML": st.builds(lambda t, sep: sep.join([t] * 3) + ".yaml", long_text(), st.sampled_from(["", "/"])),
    "INT": huge_number(),
    "DICE": many_dice() | huge_number(),
    "TEXT": long_text(),
    "NUM": huge_number() | st.builds(lambda s: s + "e999", huge_number()),
    "OPT": st.builds(lambda k, v: f"{k}={v}", st.sampled_from(["joker"]), long_text() | huge_number())
    | st.builds(lambda k: f"{k}=1", long_text()),
    "CARD": st.builds(lambda v: f"ones={v}", huge_number()) | st.builds(lambda k: f"{k}=3", long_text()),
    "OBJ": st.builds(lambda kind, v: f"{kind}:{v}", st.sampled_from(["risk", "target", "mean"]), huge_number())
    | long_text(),
    "PLAYER": long_text()
    | st.builds(lambda v: f"bot:{v}", long_text())
    | st.builds(lambda v: f"bot:target:{v}", huge_number()),
}

#: every command with one slot for a hostile argument (none of them is valid: each must be refused)
TEMPLATES = [
    ["show", "-v", "TEXT"],
    ["show", "-v", "yahtzee", "-o", "OPT"],
    ["score", "-v", "yacht", "DICE"],
    ["score", "-v", "TEXT", "11111"],
    ["odds", "-v", "yacht", "-d", "DICE"],
    ["odds", "-v", "yacht", "-r", "INT"],
    ["odds", "-v", "yacht", "-b", "TEXT"],
    ["odds", "-v", "yahtzee", "-o", "OPT"],
    ["solve", "-v", "yacht", "--objective", "OBJ"],
    ["solve", "-v", "yacht", "--cluster", "TEXT"],
    ["solve", "-v", "yahtzee", "-o", "OPT"],
    ["advise", "-v", "yacht", "-d", "DICE"],
    ["advise", "-v", "yacht", "-d", "11111", "-c", "CARD"],
    ["advise", "-v", "yacht", "-d", "11111", "-r", "INT"],
    ["advise", "-v", "yacht", "-d", "11111", "-b", "INT"],
    ["advise", "-v", "yacht", "-d", "11111", "-s", "TEXT"],
    ["advise", "-v", "yacht", "-d", "11111", "--objective", "OBJ"],
    ["advise", "-v", "yacht", "-d", "11111", "--objective", "win", "--opponent", "CARD"],
    ["distribution", "-v", "yacht", "-c", "CARD"],
    ["distribution", "-v", "yacht", "-d", "DICE"],
    ["distribution", "-v", "yacht", "-d", "11111", "-r", "INT"],
    ["match", "-v", "yacht", "-p", "PLAYER", "-p", "bot:optimal"],
    ["match", "-v", "yacht", "-p", "bot:win", "-p", "bot:optimal", "-n", "INT"],
    ["match", "-v", "yacht", "-p", "bot:win", "-p", "bot:optimal", "--seed", "INT"],
    ["play", "-v", "yacht", "-p", "PLAYER"],
    ["play", "-v", "yacht", "-p", "bot:random", "--rounds", "INT"],
    ["play", "-v", "yacht", "-p", "bot:random", "--objective", "OBJ"],
    ["play", "-v", "yacht", "-p", "bot:random", "--pace", "NUM"],
    ["risk", "-v", "yacht", "-t", "NUM"],
    ["simulate", "-v", "yacht", "-s", "TEXT"],
    ["simulate", "-v", "yacht", "-s", "OBJ"],
    ["simulate", "-v", "yacht", "-n", "INT"],
    ["simulate", "-v", "yacht", "-n", "1", "--seed", "INT"],
    ["simulate", "-v", "yacht", "-n", "1", "--method", "TEXT"],
    ["simulate", "-v", "yahtzee", "-n", "1", "-o", "OPT"],
    ["resume", "-v", "TEXT", "nothing.json"],
    ["show", "-v", "YAML"],
    ["validate", "YAML"],
    ["review", "YAML"],
    ["resume", "YAML"],
]


@st.composite
def hostile_command(draw: Any) -> list[str]:
    template = draw(st.sampled_from(TEMPLATES))
    slot = next(i for i, a in enumerate(template) if a in HOSTILE)
    return [*template[:slot], draw(HOSTILE[template[slot]]), *template[slot + 1 :]]


def assert_one_short_error(result: Any, argv: list[str]) -> None:
    where = " ".join(a if len(a) < 40 else a[:20] + "…" for a in argv)
    assert result.exit_code == 2, (where, result.output[-500:])
    assert result.exception is None or isinstance(result.exception, SystemExit), where
    lines = result.stderr.splitlines()
    errors = [line for line in lines if line.startswith("error: ")]
    assert len(errors) == 1 and lines[0] == errors[0], (where, result.stderr[:600])
    assert all(line.startswith("  hint: ") for line in lines[1:]), (where, result.stderr[:600])  # a hint at most
    assert all(len(line) < LINE for line in lines), (where, [len(line) for line in lines], result.stderr[:800])
    assert "Traceback" not in result.output


@settings(
    max_examples=250, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)
@given(argv=hostile_command())
def test_every_command_refuses_enormous_arguments_in_one_short_line(cli_env, argv):
    result = CliRunner().invoke(app, argv, env={"COLUMNS": "200"})
    assert_one_short_error(result, argv)


@pytest.mark.parametrize("template", TEMPLATES, ids=lambda t: " ".join(t[:1] + t[-2:]))
def test_each_template_once_with_its_largest_value(cli_env, template):
    """Every template at least once (the fuzz above samples them), with the largest value of its kind."""
    biggest = {
        "YAML": "/".join(["x" * 2000] * 3) + ".yaml",
        "INT": "9" * 400,
        "DICE": ",".join(["6"] * 6000),
        "TEXT": "x" * 6000,
        "NUM": "9" * 400,
        "OPT": "joker=" + "x" * 6000,
        "CARD": "ones=" + "9" * 400,
        "OBJ": "risk:" + "9" * 400,
        "PLAYER": "bot:target:" + "9" * 400,
    }
    argv = [biggest.get(a, a) for a in template]
    assert_one_short_error(CliRunner().invoke(app, argv, env={"COLUMNS": "200"}), argv)


def test_a_309_digit_number_is_named_by_its_length(cli_env):
    result = CliRunner().invoke(app, ["advise", "-v", "yacht", "-d", "11111", "-r", str(10**308)])
    assert result.exit_code == 2 and "a 309-digit number" in result.stderr and "9999" not in result.stderr
    result = CliRunner().invoke(app, ["score", "-v", "yacht", ",".join(["1"] * 5000)])
    assert result.stderr == "error: expected 5 dice, got 5,000\n"
