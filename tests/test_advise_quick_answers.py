"""`dicecup advise --json` on the quick path answers with the API's bits, whether the variant's document was
parsed by this process or kept parsed by an earlier one (`language.parsed`); a process that reads a kept
document imports no PyYAML, and no command-line library."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from _solver_helpers import TINY

from dicecup import Card, Engine
from dicecup.game.actions import Score
from dicecup.language.parsed import FOLDER
from dicecup.signing import signing_key
from dicecup.solver import advise, load_or_solve

pytestmark = pytest.mark.usefixtures("cli_env")  # the built-in engine, the cache in the test's folder

_RUN = (
    "import sys\n"
    "from dicecup.cli import main\n"
    "try:\n    main(sys.argv[1:])\n"
    "finally:\n"
    "    sys.stdout.flush()\n"
    "    print(sorted({m.split('.')[0] for m in sys.modules} & {'yaml', 'typer', 'click', 'pydantic', 'rich'}))\n"
)


def _advise(*args: str) -> tuple[dict, list[str]]:
    """`dicecup advise ARGS --json` in a fresh process: its JSON, and which of PyYAML and the command-line
    libraries it imported."""
    proc = subprocess.run(
        [sys.executable, "-c", _RUN, "advise", *args, "--json"], capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr
    *out, imported = proc.stdout.splitlines()
    return json.loads("\n".join(out)), json.loads(imported.replace("'", '"'))


def _api(variant: str, dice: str, left: int, card: dict[str, int]) -> list[tuple]:
    """The moves the API ranks for the same question, as (action, keep or box, points, value), best first."""
    v = Engine(entry_points=False).resolve(variant)
    solution, _ = load_or_solve(v)
    options = advise(solution, Card(card), tuple(int(c) for c in dice), left, left == v.rolls - 1)
    return [
        ("score", o.action.box, o.points, o.value)
        if isinstance(o.action, Score)
        else ("keep", list(o.action.dice), None, o.value)
        for o in options
    ]


def _moves(answer: dict) -> list[tuple]:
    return [(m["action"], m.get("box", m.get("keep")), m.get("points"), m["expected_score"]) for m in answer["moves"]]


def test_advise_answers_as_the_api_does_with_its_document_parsed_or_kept(tmp_path):
    """For several variants (bundled, and files) and positions: the first process parses the document and keeps
    it, the second reads it back without PyYAML; both print the same JSON (its time aside), whose moves are the
    API's, value for value. (Documents are kept once the user has a key: the API's solve makes it first.)"""
    files = {}
    for name in ("threshold", "served", "stages"):
        files[name] = tmp_path / f"tiny-{name}.yaml"
        files[name].write_text(TINY[name], encoding="utf-8")
    asked = [
        ("yacht", "11256", 2, {}),
        ("yacht", "66665", 0, {"ones": 2, "sixes": 24}),
        ("yacht", "12345", 1, {"choice": 20}),
        (str(files["threshold"]), "12", 1, {}),
        (str(files["threshold"]), "33", 0, {"ones": 1, "pair": 8}),
        (str(files["served"]), "113", 2, {}),
        (str(files["stages"]), "21", 0, {}),
    ]
    for variant, dice, left, card in asked:
        args = ["-v", variant, "--dice", dice, "--rolls-left", str(left)]
        if card:
            args += ["--card", ",".join(f"{b}={s}" for b, s in card.items())]
        api = _api(variant, dice, left, card)
        cold, _ = _advise(*args)
        warm, imported = _advise(*args)
        assert imported == []  # the document was kept: no PyYAML, nor typer, click, pydantic or rich
        assert {**cold, "seconds": 0} == {**warm, "seconds": 0}
        assert _moves(warm) == api, (variant, dice, left, card)
    assert len(list((tmp_path / "cache" / FOLDER).iterdir())) == 4  # yacht's, and each file's


def test_a_tampered_kept_document_warns_and_answers_the_same(tmp_path):
    """A kept document damaged between two runs: the second run says so on stderr, parses the text, and
    answers the same."""
    signing_key()  # (a user who has solved before)
    args = ["advise", "-v", "yacht", "--dice", "11256", "--json"]
    first = subprocess.run([sys.executable, "-m", "dicecup", *args], capture_output=True, text=True, timeout=300)
    assert first.returncode == 0, first.stderr
    (path,) = (tmp_path / "cache" / FOLDER).iterdir()
    raw = path.read_bytes()
    path.write_bytes(raw[:-1] + bytes([raw[-1] ^ 0x20]))
    second = subprocess.run([sys.executable, "-m", "dicecup", *args], capture_output=True, text=True, timeout=300)
    assert second.returncode == 0
    assert second.stderr.startswith("warning: the kept variant document ") and "not ours" in second.stderr
    assert {**json.loads(first.stdout), "seconds": 0} == {**json.loads(second.stdout), "seconds": 0}


def test_the_document_is_kept_beside_the_tables_not_before_them(tmp_path):
    """A first command line on a machine with no key (nothing solved yet) keeps no document: `show` writes
    nothing in the cache folder."""
    done = subprocess.run(
        [sys.executable, "-m", "dicecup", "show", "-v", "yacht"], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert not (tmp_path / "cache").exists() and not (tmp_path / "state").exists()
    assert Path(tmp_path).is_dir()
