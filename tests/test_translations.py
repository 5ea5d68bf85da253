"""Variants in the players' languages: the `translations` key, the language chosen, and what stays the same."""

from __future__ import annotations

import random

import pytest
from _cli_helpers import ENV, cli_fails
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from dicecup import Engine, GameState
from dicecup.cli.app import app
from dicecup.errors import DicecupError, VariantError
from dicecup.locales import LANGUAGES, choose, normalise
from dicecup.solver.tablekeys import cache_key
from dicecup.testing import play_random

ENGINE = Engine()
OTHERS = ("ru", "de", "es", "sv")


def _names(variant) -> dict[str, str]:
    return {r: variant.row(r).name for r in variant.rows}


@pytest.mark.parametrize("vid", ENGINE.variant_ids())
@pytest.mark.parametrize("lang", OTHERS)
def test_every_built_in_row_and_bonus_is_named_in_every_language(vid: str, lang: str) -> None:
    v = ENGINE.resolve(vid, {})
    t = v.in_language(lang)
    assert lang in v.translations, f"{vid} has no {lang} translation"
    tr = v.translations[lang]
    assert tr.name and tr.description, f"{vid}: no {lang} name or description"
    assert set(v.rows) <= set(tr.boxes), f"{vid} ({lang}) lacks rows {sorted(set(v.rows) - set(tr.boxes))}"
    assert {b.id for b in v.bonuses} <= set(tr.bonuses)
    assert t.fingerprint == v.fingerprint
    assert [b.id for b in t.boxes] == [b.id for b in v.boxes]
    assert all(b.name.strip() for b in t.boxes)


def test_the_russian_game_uses_its_own_terms() -> None:
    names = {r: n.lower() for r, n in _names(ENGINE.resolve("russian", {}).in_language("ru")).items()}
    assert names == {
        "ones": "единицы", "twos": "двойки", "threes": "тройки", "fours": "четвёрки", "fives": "пятёрки",
        "sixes": "шестёрки", "pair": "пара", "two_pairs": "две пары", "three_of_a_kind": "тройка",
        "small_straight": "короткая линия", "even": "чёт", "odd": "нечёт", "full_house": "фул",
        "large_straight": "длинная линия", "four_of_a_kind": "каре", "yahtzee": "яхтзи", "chance": "шанс",
    }  # fmt: skip


def test_kniffel_keeps_its_german_names_in_english_and_its_own_in_others() -> None:
    v = ENGINE.resolve("kniffel", {})
    assert v.row("small_straight").name == "Kleine Straße"
    assert v.in_language("en") is v  # its German names are what makes it Kniffel
    assert v.in_language("ru").row("yahtzee").name == "Книффель"  # not the Yahtzee it extends
    assert v.in_language("de").row("yahtzee").name == "Kniffel"  # not the Yahtzee it extends


def test_a_translated_variant_shares_tables_and_plays_the_same_game() -> None:
    v = ENGINE.resolve("yamb", {})
    t = v.in_language("ru")
    assert cache_key(v) == cache_key(t)
    assert t.column("down").name == "Вниз"
    assert {b.name for b in t.column_bonuses} >= {"Бонус за верх (Вниз)", "Середина (Объявленная)"}
    finals = [play_random(GameState.new(variant, ["a"]), random.Random(7))[0].totals() for variant in (v, t)]
    assert finals[0] == finals[1]


def _third_party(tmp_path, body: str):
    path = tmp_path / "house.yaml"
    path.write_text("id: house\nextends: yahtzee\nboxes: {chance: null}\n" + body, encoding="utf-8")
    return ENGINE.resolve(str(path), {})


def test_a_third_party_file_adds_a_language_and_keeps_what_it_inherits(tmp_path) -> None:
    v = _third_party(tmp_path, "translations:\n  fr: {name: Maison, boxes: {ones: As, chance: Chance}}\n")
    fr = v.in_language("fr")
    assert fr.name == "Maison" and fr.row("ones").name == "As" and fr.row("twos").name == "Twos"
    assert v.in_language("fr-CA").name == "Maison"  # a region falls back to its language
    assert v.in_language("ru").row("twos").name == "Двойки"  # inherited from yahtzee; chance dropped, no error
    assert v.in_language("it") is v


@pytest.mark.parametrize(
    ("body", "says"),
    [
        ("translations: {French: {name: X}}", "'French' is not a language code"),
        ("translations: {fr: {name: 3}}", "`name` must be a non-empty string"),
        ("translations: {fr: {boxes: {ones: ''}}}", "`ones` must be a non-empty string"),
        ("translations: {fr: {rows: {ones: As}}}", "unknown key 'rows'"),
        ("translations: [fr]", "a mapping of language code to translation"),
    ],
)
def test_a_bad_translation_is_one_precise_error(tmp_path, body: str, says: str) -> None:
    with pytest.raises(VariantError) as got:
        _third_party(tmp_path, body + "\n")
    assert says in str(got.value)
    assert "house.yaml" in str(got.value)


def test_the_language_is_the_flag_then_the_environment() -> None:
    assert choose("ru_RU.UTF-8") == "ru"
    assert choose("sv", {"LANG": "de_DE.UTF-8"}) == "sv"
    assert choose(None, {"LANG": "de_DE.UTF-8"}) == "de"
    assert choose(None, {"LANGUAGE": "fr:es", "LANG": "de_DE.UTF-8"}) == "es"
    assert choose(None, {"LC_ALL": "C", "LANG": "ru_RU.UTF-8"}) == "en"  # LC_ALL decides before LANG
    assert choose(None, {"LC_MESSAGES": "es_AR.UTF-8"}) == "es"
    assert choose(None, {}) == "en"
    with pytest.raises(DicecupError, match="does not speak 'fr'"):
        choose("fr")


@given(st.sampled_from(sorted(LANGUAGES)), st.sampled_from(["", "_XX", "-YY"]), st.sampled_from(["", ".UTF-8"]))
def test_any_spelling_of_a_locale_names_its_language(code: str, region: str, charset: str) -> None:
    assert normalise(code + region + charset) == code
    assert choose(None, {"LANG": code + region + charset}) == code


def test_the_command_line_speaks_the_chosen_language(monkeypatch) -> None:
    def run(*args: str):
        return CliRunner().invoke(app, list(args), env=ENV)

    got = run("--lang", "ru", "show", "-v", "russian")
    assert got.exit_code == 0, got.output
    assert "Короткая линия" in got.output and "Русская игра в два этапа" in got.output
    monkeypatch.setenv("LANGUAGE", "")
    monkeypatch.setenv("LANG", "sv_SE.UTF-8")
    got = run("show", "-v", "yatzy")
    assert got.exit_code == 0, got.output
    assert "Kåk" in got.output and "Liten stege" in got.output


def test_an_unknown_language_is_refused_on_one_line() -> None:
    out = cli_fails("--lang", "xx", "show", "-v", "yahtzee")
    assert "--lang: dicecup does not speak 'xx'" in out and "sv (Svenska)" in out
