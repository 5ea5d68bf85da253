"""The messages players read in other languages: every message the code marks is in every catalog, each
translation takes the same fields, plural forms follow each language, and a game is played in one."""

from __future__ import annotations

import string
from pathlib import Path

import pytest
from _cli_helpers import ENV
from babel.messages.extract import DEFAULT_KEYWORDS, extract_from_dir
from babel.messages.pofile import read_po
from typer.testing import CliRunner

import dicecup
import dicecup.plugins
from dicecup.cli.app import app
from dicecup.locales import DEFAULT, LANGUAGES, catalog_path, ngettext, speak

PACKAGES = (Path(dicecup.__file__).parent, Path(dicecup.plugins.__file__).parent)  # the engine, its built-in rules
SPOKEN = [lang for lang in LANGUAGES if lang != DEFAULT]


def _used() -> dict[str | tuple[str, str], str]:
    """Every message the package and its built-in plugins mark for translation (`_`, `N_` and `ngettext`), with
    where it is."""
    found: dict[str | tuple[str, str], str] = {}
    methods = [("**.py", "python"), ("**/static/**.js", "javascript")]  # the page's table marks N_ and NP_
    keywords = {**DEFAULT_KEYWORDS, "NP_": (1, 2)}
    for folder in PACKAGES:
        for file, line, message, _comments, _context in extract_from_dir(str(folder), methods, keywords=keywords):
            found.setdefault(message, f"{folder.name}/{file}:{line}")
    return found


USED = _used()


def _catalog(lang: str):
    with catalog_path(lang).open("rb") as f:
        return read_po(f, locale=lang)


def _fields(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name is not None}


def test_the_code_marks_messages() -> None:
    assert len(USED) >= 250  # the terminal game's lines, the rules' explanations and the page's
    assert "Roll all the dice" in USED and ("{n} roll left", "{n} rolls left") in USED  # the page's, from JS


@pytest.mark.parametrize("lang", SPOKEN)
def test_every_message_the_code_uses_is_translated(lang: str) -> None:
    catalog = _catalog(lang)
    missing = [f"{where}: {msg!r}" for msg, where in USED.items() if not _translated(catalog, msg)]
    assert not missing, f"{catalog_path(lang)} lacks {len(missing)} message(s):\n" + "\n".join(missing)
    unused = [m.id for m in catalog if m.id and m.id not in USED]
    assert not unused, f"{catalog_path(lang)} holds messages no code uses: {unused}"


def _translated(catalog, msg) -> bool:
    entry = catalog.get(msg[0] if isinstance(msg, tuple) else msg)
    if entry is None or entry.fuzzy:
        return False
    if isinstance(msg, tuple):
        forms = entry.string if isinstance(entry.string, tuple) else ()
        return len(forms) == catalog.num_plurals and all(forms)
    return bool(entry.string)


@pytest.mark.parametrize("lang", SPOKEN)
def test_each_translation_takes_the_fields_its_message_gives(lang: str) -> None:
    for m in _catalog(lang):
        if not m.id:
            continue
        ids = m.id if isinstance(m.id, tuple) else (m.id,)
        given = set().union(*(_fields(i) for i in ids))
        for text in m.string if isinstance(m.string, tuple) else (m.string,):
            assert _fields(text) <= given, (lang, m.id, text)


@pytest.mark.parametrize(
    ("lang", "forms"),
    [
        ("ru", {1: "осталась 1 клетка", 3: "осталось 3 клетки", 5: "осталось 5 клеток", 21: "осталась 21 клетка"}),
        ("de", {1: "noch 1 Feld", 2: "noch 2 Felder"}),
        ("es", {1: "queda 1 casilla", 2: "quedan 2 casillas"}),
        ("sv", {1: "1 ruta kvar", 7: "7 rutor kvar"}),
        ("en", {1: "1 box to go", 2: "2 boxes to go"}),
    ],
)
def test_plural_forms_follow_the_language(lang: str, forms: dict[int, str]) -> None:
    undo = speak(lang)
    try:
        assert {n: ngettext("{n} box to go", "{n} boxes to go", n).format(n=n) for n in forms} == forms
    finally:
        undo()


def test_a_game_is_played_in_russian_and_the_next_command_speaks_english_again() -> None:
    turns = "".join(f"s {k}\nд\n" for k in range(1, 13))
    got = CliRunner().invoke(
        app, ["--lang", "ru", "play", "-v", "yacht", "-p", "анна", "--seed", "2"], input=turns, env=ENV
    )
    assert got.exit_code == 0, got.output
    assert "анна: ход 1 из 12 (осталось 12 клеток)" in got.stdout
    assert "Вы записываете" in got.stdout and "Единицы" in got.stdout
    again = CliRunner().invoke(app, ["play", "-v", "yacht", "-p", "ann", "--seed", "2"], input="q\ny\n", env=ENV)
    assert "ann: turn 1 of 12 (12 boxes to go)" in again.stdout
