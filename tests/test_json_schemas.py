"""Every command's `--json` against its documented JSON Schema (dicecup/cli/schemas/COMMAND.json).

One style across commands: an object whose first keys are `variant` (the id; null for
`variants`) and `options` (the chosen option values), settlements and chances as numbers;
`-q` with `--json` prints the JSON alone.
"""

from __future__ import annotations

import pytest
from _cli_helpers import REGISTRY, SCHEMAS, check, json_of
from _solver_helpers import CLI_TINY
from jsonschema import Draft202012Validator

from dicecup.cli.app import app, get_engine, json_schema

pytestmark = pytest.mark.usefixtures("cli_builtins")  # the CLI's engine: built-in plugins only


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("schemas") / "tiny.yaml"
    path.write_text(CLI_TINY)
    return str(path)


def test_every_schema_is_valid_and_shares_the_envelope():
    envelope = SCHEMAS["odds"]["properties"]["options"]
    for name, schema in SCHEMAS.items():
        Draft202012Validator.check_schema(schema)
        assert schema["$id"] == f"urn:dicecup:cli:{name}"
        if "$ref" in schema:  # resume: what play prints
            continue
        assert schema["required"][:2] == ["variant", "options"], name
        assert schema["properties"]["options"] == envelope, name
        assert schema["additionalProperties"] is False, name
    assert json_schema("odds") == SCHEMAS["odds"]


def test_every_command_with_json_has_a_schema():
    from typer.main import get_command

    group = get_command(app)
    with_json = {
        name
        for name, cmd in group.commands.items()  # type: ignore[attr-defined]
        if any("--json" in p.opts for p in cmd.params)
    }
    assert with_json <= set(SCHEMAS), with_json - set(SCHEMAS)


def test_variants():
    data = json_of("variants")
    check("variants", data)
    assert data["variant"] is None and any(v["id"] == "yahtzee" for v in data["variants"])


@pytest.mark.parametrize("variant", ["generala", "triple-yahtzee", "balut", "yamb"])
def test_show(variant):
    data = json_of("show", "-v", variant)
    check("show", data)
    assert data["variant"] == variant and data["options"] == dict(get_engine().variant(variant).options)


def test_score():
    check("score", json_of("score", "-v", "generala", "--first-roll", "12345"))


def test_solve_and_advise(tiny):
    solved = json_of("solve", "-v", tiny)
    check("solve", solved)
    advice = json_of("advise", "-v", tiny, "-d", "114", "-r", "1", "-c", "fours=4")
    check("advise", advice)
    assert advice["best"] == advice["moves"][0]
    scored = json_of("advise", "-v", tiny, "-d", "111", "-r", "0")
    check("advise", scored)
    assert {m["action"] for m in scored["moves"]} == {"score"}


@pytest.mark.parametrize("strategy", ["greedy", "optimal"])
def test_simulate(tiny, strategy):
    data = json_of("simulate", "-v", tiny, "-s", strategy, "-n", "200", "--seed", "3")
    check("simulate", data)
    assert data["games"] == sum(data["scores"].values()) == 200


def test_play_settles_in_numbers(tmp_path):
    players = ("-p", "bot:random", "-p", "bot:random:Vera", "-p", "bot:random:Olga")
    data = json_of("play", "-v", "russian", *players, "--seed", "3", "--rounds", "1")
    check("play", data)
    assert all(isinstance(a, int | float) for a in data["settlement"].values())
    assert sum(data["settlement"].values()) == pytest.approx(0, abs=1e-9)
    figures = json_of("play", "-v", "balut", "-p", "bot:random", "--seed", "1")
    check("play", figures)
    assert "match_figures" in figures and figures["settlement"] is None


def test_resume_prints_what_play_prints(tmp_path):
    save = tmp_path / "game.json"
    played = json_of("play", "-v", "yacht", "-p", "bot:random", "--seed", "2", "--save", str(save))
    resumed = json_of("resume", str(save))
    check("resume", resumed)
    assert resumed == played


def test_odds(tiny):
    fresh = json_of("odds", "-v", "yahtzee")
    check("odds", fresh)
    check("odds", json_of("odds", "-v", tiny, "-d", "114", "-r", "2"))
    assert {r["row"]: r["turn"] for r in fresh["rows"]}["yahtzee"] == pytest.approx(0.0460286, abs=1e-7)


def test_distribution(tiny):
    whole = json_of("distribution", "-v", tiny)
    check("distribution", whole)
    assert whole["dice"] is None and whole["rolls_left"] is None and whole["card"] == {}
    assert sum(row["probability"] for row in whole["scores"]) == pytest.approx(1.0, abs=1e-12)
    mid = json_of("distribution", "-v", tiny, "-c", "fours=4", "-d", "114", "-r", "1")
    check("distribution", mid)
    assert (mid["dice"], mid["rolls_left"], mid["card"]) == ([1, 1, 4], 1, {"fours": 4})


def test_the_schemas_refuse_the_old_shapes():
    """A fraction string where a number belongs, a missing envelope: the schemas are not blank checks."""
    data = json_of("play", "-v", "russian", "-p", "bot:random", "-p", "bot:random:Vera", "--seed", "2")
    validator = Draft202012Validator(SCHEMAS["play"], registry=REGISTRY)
    assert validator.is_valid(data)
    assert not validator.is_valid({**data, "settlement": {n: str(a) for n, a in data["settlement"].items()}})
    assert not validator.is_valid({k: v for k, v in data.items() if k != "options"})
    odds = json_of("odds", "-v", "yacht")
    assert not Draft202012Validator(SCHEMAS["odds"]).is_valid({**odds, "rows": [{**odds["rows"][0], "turn": 1.5}]})
