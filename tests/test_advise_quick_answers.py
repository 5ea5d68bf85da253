"""`dicecup advise --json` on the quick path answers with the API's bits, whether the variant's document was
parsed by this process or kept parsed by an earlier one (`language.parsed`), or the card was advised on
before and its kept advice table answers (`kept_advice`); a process that reads a kept document imports no
PyYAML, and no command-line library; one that reads a card's kept table imports no engine, solver nor numpy,
and prints the same bytes as the engine would.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from _solver_helpers import TINY

from dicecup import Card, Engine, kept_advice
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
        shutil.rmtree(tmp_path / "cache" / kept_advice.FOLDER)  # (else the card's kept table answers)
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
    shutil.rmtree(tmp_path / "cache" / kept_advice.FOLDER)  # (else the card's kept table answers)
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


# ---------------------------------------------------------------------- a card's kept advice table

_PROBE = (
    "import sys\n"
    "from dicecup.cli import main\n"
    "try:\n    main(sys.argv[1:])\n"
    "finally:\n"
    "    sys.stdout.flush()\n"
    "    heavy = {'yaml', 'typer', 'click', 'rich', 'numpy', 'attrs', 'babel', 'dicecup.language', 'dicecup.solver'}\n"
    "    print(sorted(heavy & set(sys.modules)))\n"
)
_SECONDS = re.compile(r'"seconds": [-+0-9.e]+')


def _run(*args: str, env: dict[str, str] | None = None) -> tuple[str, str, list[str], bool]:
    """`dicecup ARGS` in a fresh process: its stdout with the time it took blanked, its stderr, which heavy
    modules it imported, and whether it read a catalog (Babel reads them)."""
    proc = subprocess.run([sys.executable, "-c", _PROBE, *args], capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr
    *out, probe = proc.stdout.splitlines()
    heavy = json.loads(probe.replace("'", '"'))
    return _SECONDS.sub('"seconds": 0', "\n".join(out)), proc.stderr, heavy, "babel" in heavy


def _question(variant: str, dice: str, left: int | None, card: str | None) -> list[str]:
    args = ["advise", "-v", variant, "--dice", dice, "--json"]
    return args + (["--rolls-left", str(left)] if left is not None else []) + (["--card", card] if card else [])


def _tables(tmp_path: Path) -> list[Path]:
    folder = tmp_path / "cache" / kept_advice.FOLDER
    return sorted(folder.iterdir()) if folder.exists() else []


def test_a_card_asked_about_again_is_answered_from_its_kept_table_byte_for_byte(tmp_path):
    """For several variants and cards, the first question about a card learns its table; every later question
    about that card (any roll, any rolls left) is answered from it without the engine, the solver, numpy or a
    catalog, and prints the bytes the engine prints for the same question (checked with the tables removed)."""
    files = {}
    for name in ("threshold", "served", "stages"):
        files[name] = tmp_path / f"tiny-{name}.yaml"
        files[name].write_text(TINY[name], encoding="utf-8")
    cards = [
        ("yacht", None, [("11256", 2), ("66665", 0), ("12345", 1), ("3,3,3,4,4", None)]),
        ("yacht", "ones=2,sixes=24", [("66665", 0), ("11112", 1), ("65432", 2)]),
        ("yacht", " choice=20 ", [("12345", 1), ("55555", 0)]),
        (str(files["threshold"]), "ones=1,pair=8", [("33", 0), ("12", 1), ("31", None)]),
        (str(files["served"]), None, [("113", 2), ("123", 1), ("333", 0)]),
        (str(files["stages"]), None, [("21", 0), ("44", 1)]),
    ]
    quick: dict[tuple, str] = {}
    for variant, card, positions in cards:
        (dice, left), *later = positions
        first, _, heavy, _ = _run(*_question(variant, dice, left, card))
        assert "dicecup.solver" in heavy  # the engine answered, and learned the card's table
        for dice, left in positions:
            quick[variant, card, dice, left], stderr, heavy, spoken = _run(*_question(variant, dice, left, card))
            assert heavy == [] and not spoken and stderr == "", (variant, card, dice, left, heavy)
        assert quick[variant, card, positions[0][0], positions[0][1]] == first
    assert len(_tables(tmp_path)) == len(cards)  # one table a card
    shutil.rmtree(tmp_path / "cache" / kept_advice.FOLDER)
    for (variant, card, dice, left), said in quick.items():
        engine, _, heavy, _ = _run(*_question(variant, dice, left, card))
        assert "dicecup.solver" in heavy
        assert engine == said, (variant, card, dice, left)
        shutil.rmtree(tmp_path / "cache" / kept_advice.FOLDER)


def test_questions_a_kept_table_does_not_answer_go_to_the_engine(tmp_path):
    """A kept table answers only the plain JSON question: text, another objective, a state limit, another
    strategy, dice it does not read (or bad ones), a rolls-left out of range go to the engine (which says
    what is wrong), and so does a question in another language; its answer is the same bytes."""
    args = _question("yacht", "11256", 2, None)
    first, _, _, _ = _run(*args)
    (table,) = _tables(tmp_path)
    for extra in (["--objective", "mean"], ["--max-states", "100000000"], ["--strategy", "optimal"]):
        said, _, heavy, _ = _run(*args, *extra)
        assert "dicecup.solver" in heavy, extra
        if extra[0] == "--strategy":  # another question: a table of its own
            assert said.replace('"strategy": "optimal"', "") == first.replace('"strategy": "optimal"', "")
    text, _, heavy, _ = _run(*[a for a in args if a != "--json"])
    assert "rich" in heavy and "keep 5" in text
    for bad in (["--dice", "1125"], ["--dice", "11257"], ["--rolls-left", "3"]):
        proc = subprocess.run(
            [sys.executable, "-m", "dicecup", *args, *bad], capture_output=True, text=True, timeout=300
        )
        assert proc.returncode == 2 and proc.stderr.startswith("error: "), (bad, proc.stderr)
    env = {k: v for k, v in os.environ.items() if k not in ("LANGUAGE", "LC_ALL", "LC_MESSAGES")}
    russian, _, heavy, spoken = _run(*args, env={**env, "LANG": "ru_RU.UTF-8"})
    assert "dicecup.solver" in heavy and spoken and russian == first
    flagged, _, heavy, spoken = _run("--lang", "ru", *args)  # (typer reads the line: --lang comes first)
    assert "dicecup.solver" in heavy and spoken and flagged == first
    english, _, heavy, _ = _run("--lang", "en", *args)
    assert "dicecup.solver" not in heavy and "typer" in heavy and english == first
    plugin = tmp_path / "nothing_plugin.py"
    plugin.write_text(
        '"""A plugin file that adds nothing."""\nimport dicecup\n\n\n@dicecup.hookimpl\n'
        "def dicecup_register_variants(register):\n    pass\n",
        encoding="utf-8",
    )
    with_plugin, _, heavy, _ = _run("--plugin", str(plugin), *args)  # its rules could change the answer
    assert "dicecup.solver" in heavy and with_plugin == first
    assert table in _tables(tmp_path) and len(_tables(tmp_path)) == 2  # (--strategy optimal's own; no Russian one)


def test_a_quick_command_speaks_the_environments_language_only_when_asked(tmp_path):
    """Without a language in the environment a quick command reads no catalog; with one, its errors and its
    table are in that language."""
    env = {k: v for k, v in os.environ.items() if k not in ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG")}
    proc = subprocess.run(
        [sys.executable, "-m", "dicecup", "advise", "-v", "yacht", "--dice", "11256", "--rolls-left", "5"],
        capture_output=True, text=True, timeout=300, env={**env, "LANG": "ru_RU.UTF-8"},
    )  # fmt: skip
    assert proc.returncode == 2 and proc.stderr.startswith("ошибка: --rolls-left должно быть от 0 до 2"), proc.stderr
    proc = subprocess.run(
        [sys.executable, "-m", "dicecup", "advise", "-v", "yacht", "--dice", "11256", "--card", "ones=x"],
        capture_output=True, text=True, timeout=300, env={**env, "LANG": "de_DE.UTF-8"},
    )  # fmt: skip
    assert proc.returncode == 2 and "die Punkte von ones müssen eine ganze Zahl sein" in proc.stderr
    table = subprocess.run(
        [sys.executable, "-m", "dicecup", "advise", "-v", "yacht", "--dice", "11256", "--top", "2"],
        capture_output=True, text=True, timeout=300, env={**env, "LANGUAGE": "sv"},
    )  # fmt: skip
    assert (
        table.returncode == 0 and "poäng nu" in table.stdout and "alternativ till; --top N visar fler" in table.stdout
    )
    english = subprocess.run(
        [sys.executable, "-c", _PROBE, "advise", "-v", "yacht", "--dice", "11256", "--rolls-left", "9"],
        capture_output=True, text=True, timeout=300, env=env,
    )  # fmt: skip
    assert english.returncode == 2 and english.stderr.startswith("error: --rolls-left must be 0..2")
    assert "babel" not in english.stdout


def _damage(path: Path, how: str) -> None:
    """Damage a kept table: a flipped byte, another user's signature, or another key (other code) signed."""
    head, _, payload = path.read_bytes().partition(b"\n")
    form, key, mac = head.split(b" ")
    if how == "flipped":
        path.write_bytes(head + b"\n" + payload[:-1] + bytes([payload[-1] ^ 0x01]))
        return
    if how == "foreign":
        mac = kept_advice.KeptAdvice()._file.mac(b"x" * 32, key, payload)
    else:
        key = b"0" * len(key)
        mac = kept_advice.KeptAdvice()._file.mac(signing_key(), key, payload)
    path.write_bytes(b" ".join((form, key, mac)) + b"\n" + payload)


@pytest.mark.parametrize("how", ["flipped", "foreign", "other-code"])
def test_a_damaged_foreign_or_stale_table_is_not_used_and_is_made_again(tmp_path, how):
    """A table with a flipped byte or another user's signature is said on stderr, removed, and the engine
    answers (the same bytes) and learns the table again; a table of other code is not used, silently, and is
    made again over it. The next question is answered from the new table."""
    args = _question("yacht", "12345", 1, "ones=3")
    first, _, _, _ = _run(*args)
    (path,) = _tables(tmp_path)
    _damage(path, how)
    again, stderr, heavy, _ = _run(*args)
    assert again == first and "dicecup.solver" in heavy
    if how == "other-code":
        assert stderr == ""
    else:
        assert stderr.startswith("warning: the kept advice table ") and "damaged, stale or not ours" in stderr
    assert _tables(tmp_path) == [path] and path.read_bytes().split(b" ")[1] != b"0" * 64
    third, stderr, heavy, _ = _run(*args)
    assert third == first and heavy == [] and stderr == ""


def test_a_table_is_named_by_its_question_and_keyed_by_what_decides_the_answer(tmp_path):
    """The variant's file text, the installed distributions and the code are in a table's key; the question
    (variant, options, card, strategy) and the user's key in its name; only the plain `--dice` forms are read."""
    path = tmp_path / "v.yaml"
    path.write_text(TINY["threshold"], encoding="utf-8")
    q = kept_advice.Question(str(path), (), "", "auto")
    before = kept_advice.question_key(q)
    path.write_text(TINY["threshold"].replace("points: 9", "points: 8"), encoding="utf-8")
    assert kept_advice.question_key(q) not in (before, None)
    assert kept_advice.question_key(kept_advice.Question(str(tmp_path / "gone.yaml"), (), "", "auto")) is None
    site = tmp_path / "site"
    site.mkdir()
    empty = kept_advice._installed([str(site)])
    (site / "plugin-1.0.dist-info").mkdir()
    assert kept_advice._installed([str(site)]) != empty
    assert kept_advice._installed([str(tmp_path / "nowhere"), str(site)]) == kept_advice._installed([str(site)])
    secret = b"k" * 32
    names = {
        kept_advice.KeptAdvice.path(secret, kept_advice.Question(v, o, c, s))
        for v, o, c, s in [("yacht", (), "", "auto"), ("yacht", ("a=b",), "", "auto"),
                           ("yacht", (), "ones=1", "auto"), ("yacht", (), "", "optimal")]
    }  # fmt: skip
    assert len(names) == 4
    assert kept_advice.KeptAdvice.path(b"j" * 32, kept_advice.Question("yacht", (), "", "auto")) not in names
    assert kept_advice.read_dice(" 11256 ", 5, 6) == (1, 1, 2, 5, 6)
    assert kept_advice.read_dice("1, 1,2 5,6", 5, 6) == (1, 1, 2, 5, 6)
    for unread in ("1125", "11257", "1125x", "112560", "", "1,1,2,5,66", "²1256"):
        assert kept_advice.read_dice(unread, 5, 6) is None, unread
    assert kept_advice.read_dice("10,12", 2, 12) == (10, 12) and kept_advice.read_dice("1012", 2, 12) is None


def test_the_tables_switch_is_the_engines():
    """The environment variable that stops installed plugins loading is in a table's key under its own name."""
    from dicecup.language.engine import AUTOLOAD_ENV

    assert kept_advice.AUTOLOAD_ENV == AUTOLOAD_ENV
