"""Every command's own words in the player's language: chosen by `--lang` or the environment, with each
language's plural forms; `--json` the same in every language (it is an API), and English when none is asked."""

from __future__ import annotations

import io
import json
import pickle
import re
import threading
from pathlib import Path

import pytest
from _cli_helpers import ENV
from _solver_helpers import CLI_TINY
from typer.testing import CliRunner

from dicecup.cli.app import app
from dicecup.cli.progress import Bar, EstimateLine, say_duration
from dicecup.locales import speak

#: no language in the environment but the one a test gives (the test run pins LANGUAGE=en)
UNSET = {"LANGUAGE": None, "LC_ALL": None, "LC_MESSAGES": None, "LANG": None}


def run(*args: str, env: dict[str, str | None] | None = None, code: int = 0):
    """`dicecup ARGS` with the built-in plugins and the environment's language replaced by `env`'s."""
    got = CliRunner().invoke(app, list(args), env={**ENV, **(env or {})})
    assert got.exit_code == code, (args, got.output)
    return got


def said(*args: str, **kw) -> str:
    """What a command prints, its lines' trailing blanks (rich pads table titles) dropped."""
    return "\n".join(line.rstrip() for line in run(*args, **kw).stdout.splitlines())


def flat(text: str) -> str:
    """`text` with every run of blanks and line breaks one space (rich wraps a long title to its table's width)."""
    return " ".join(text.split())


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> str:
    """A four-box variant every command solves and plays in a moment."""
    path = tmp_path_factory.mktemp("languages") / "tiny.yaml"
    path.write_text(CLI_TINY, encoding="utf-8")
    return str(path)


# ----------------------------------------------------------------------------- choosing the language


def test_lang_and_the_environment_choose_the_language_and_english_is_the_default() -> None:
    english = said("show", "-v", "yacht")
    assert "5 dice with faces 1-6, 3 rolls a turn, 12 boxes." in english
    assert "5 костей с гранями 1-6, 3 броска за ход, 12 клеток." in said("--lang", "ru", "show", "-v", "yacht")
    german = said("show", "-v", "yacht", env={**UNSET, "LANG": "de_DE.UTF-8"})
    assert "5 Würfel mit Augen 1-6, 3 Würfe pro Zug, 12 Felder." in german
    assert said("show", "-v", "yacht", env={**UNSET, "LANG": "C.UTF-8"}) == english
    swedish_first = {**UNSET, "LANGUAGE": "sv:de", "LANG": "de_DE.UTF-8"}  # LANGUAGE's list decides first
    assert "5 tärningar med sidorna 1-6, 3 slag per omgång, 12 rutor." in said("show", "-v", "yacht", env=swedish_first)
    assert said("--lang", "en", "show", "-v", "yacht", env={**UNSET, "LANG": "ru_RU.UTF-8"}) == english


# ----------------------------------------------------------------------------- each command's words


def test_variants_show_score_and_validate(tiny: str) -> None:
    listed = said("--lang", "ru", "variants")
    assert "варианты dicecup" in listed and "встроенный" in listed
    assert "* значение по умолчанию; другое выбирается через --option КЛЮЧ=ЗНАЧЕНИЕ" in listed
    shown = said("--lang", "de", "show", "-v", "yahtzee")
    assert "Felder" in shown and "Boni" in shown and "Optionen (--option SCHLÜSSEL=WERT)" in shown
    scored = said("--lang", "es", "score", "11111", "-v", "yacht", "--first-roll")
    assert "Yate: 1 1 1 1 1 (primera tirada)" in scored and "casilla" in scored and "puntuación" in scored
    checked = said("--lang", "sv", "validate", tiny)
    assert re.search(
        r"ok: .*tiny\.yaml: variant 'tiny' \(Tiny\): 3 tärningar x 4 sidor, 3 slag, 4 rutor, 1 bonus, ", checked
    )
    assert checked.endswith("1 kombination av alternativ kontrollerad")


def test_odds_in_spanish_and_russian() -> None:
    table = said("--lang", "es", "odds", "-v", "yacht", "-d", "11256")
    assert "Yate: dados 1 1 2 5 6, quedan 2 tiradas" in table
    assert "ya cumplida" in table and "al final del turno" in table and "qué guardar" in table
    assert "una tirada: los mejores dados guardados para la fila y luego una tirada;" in table
    last = said("--lang", "ru", "odds", "-v", "yacht", "-d", "11256", "-r", "1")
    assert "Яхта: кости 1 1 2 5 6, остался 1 бросок" in last
    turn = said("--lang", "ru", "odds", "-v", "yacht")
    assert "Яхта: ход из 3 бросков" in turn and "один бросок: все кости брошены один раз;" in turn


def test_simulate_says_its_report_and_counts_games_in_russian_plurals(tiny: str) -> None:
    forms = {1: "1 игра", 2: "2 игры", 5: "5 игр", 21: "21 игра", 22: "22 игры", 25: "25 игр"}
    for n, words in forms.items():
        report = said("--lang", "ru", "simulate", "-v", tiny, "-s", "random", "-n", str(n), "--seed", "3")
        assert f"tiny: стратегия random, {words}, seed 3 (симулятор" in report, report
        assert "Итоговый счёт" in report and "стандартное отклонение" in report and "[bold]" not in report
    english = said("simulate", "-v", tiny, "-s", "random", "-n", "1", "--seed", "3")
    assert "tiny: random strategy, 1 game, seed 3 (" in english and "Final score" in english


def test_solve_and_distribution(tiny: str) -> None:
    solved = said("--lang", "sv", "solve", "-v", tiny)
    assert "optimal förväntad poäng: " in solved and re.search(
        r"tillstånd: [\d,]+; (löst på|laddad från cachen)", solved
    )
    spread = flat(said("--lang", "ru", "distribution", "-v", tiny, "-d", "144"))  # (from a position: no table kept)
    assert "Tiny: оптимальная игра с начала игры, кости 1 4 4, осталось 2 броска" in spread
    assert (
        "медиана" in spread
        and "5-й перцентиль" in spread
        and "P(итог >= t)" in spread
        and "точно, вычислено за" in spread
    )
    later = flat(said("--lang", "de", "distribution", "-v", tiny, "-c", "ones=2", "-d", "144", "-r", "1"))
    assert "optimales Spiel von einem Block mit 1 ausgefülltem Feld, Würfel 1 4 4, noch 1 Wurf" in later
    english = flat(said("distribution", "-v", tiny, "-d", "144"))
    assert "Tiny: optimal play from the start, dice 1 4 4, 2 rolls left" in english and "5th percentile" in english


def test_match(tiny: str) -> None:
    matched = said("--lang", "es", "match", "-v", tiny, "-p", "bot:win", "-p", "bot:optimal", "-n", "40")
    assert "Tiny: 40 partidas, puestos rotados" in matched and "parte de victorias" in matched
    assert "empates repartidos" in matched


@pytest.mark.slow  # each theta's exact distribution from the start: the kept table is made for each
def test_risk(tiny: str) -> None:
    risky = said("--lang", "de", "risk", "-v", tiny, "-t", "0,0.05")
    assert "Tiny: Endstand des risikooptimalen Spielers" in risky and "Sicherheitsäquiv." in risky
    assert "0 (Mittelwert)" in risky and "exakte Verteilungen" in risky


def test_a_played_game_reviewed_in_russian(tiny: str, tmp_path: Path) -> None:
    game = tmp_path / "game.json"
    run("play", "-v", tiny, "-p", "bot:random:R", "--seed", "5", "-q", "--save", str(game))
    review = said("--lang", "ru", "review", str(game), "--all", "-v", tiny)
    assert re.search(r"игра окончена: \d+ решени(е|я|й) сравнено с оптимальной стратегией", review)
    assert "Все решения" in review and "Ожидаемые потери очков относительно оптимальной игры" in review
    assert "ожидание: ожидаемый итог после хода" in review
    assert re.search(r"(оставить \d+|перебросить все|записать \w)", review)  # the moves in words, not "keep 14"
    assert not re.search(r"\b(keep|score) ", review), review


def test_advices_moves_and_objectives_are_said_in_the_language() -> None:
    """advise's table words each move (the box by the variant's name for it in that language) and what its values
    mean; English keeps the moves' labels."""
    russian = said("--lang", "ru", "advise", "-v", "yahtzee", "--dice", "11256", "--rolls-left", "0", "--top", "20")
    assert "записать в «Единицы»" in russian and "записать в «Шанс»" in russian  # Ones and Chance in Russian
    assert "ожидаемый итоговый счёт" in flat(russian) and not re.search(r"\b(score|keep|expected) ", russian)
    german = flat(said("--lang", "de", "advise", "-v", "yahtzee", "--dice", "11256", "--rolls-left", "2"))
    assert "behalte 5" in german and "erwarteter Endstand" in german
    risky = flat(
        said(
            "--lang", "sv", "advise", "-v", "yacht", "--dice", "11256", "--rolls-left", "1", "--objective", "risk:-0.02"
        )
    )
    assert "säkerhetsekvivalent för slutpoängen (risk theta -0.02, försiktigt)" in risky
    noted = flat(said("--lang", "de", "advise", "-v", "generala", "--dice", "11256", "--rolls-left", "0"))
    assert (
        "Hinweis: Solospiel: ein Sofortsieg (Generala im ersten Wurf) wird als gewöhnliches Generala gewertet" in noted
    )
    notes = json.loads(
        said("--lang", "de", "advise", "-v", "generala", "--dice", "11256", "--rolls-left", "0", "--json")
    )
    assert notes["notes"] == ["solitaire play: an instant win (Generala served) is scored as an ordinary Generala"]
    english = said("advise", "-v", "yahtzee", "--dice", "11256", "--rolls-left", "0", "--top", "20")
    assert "score chance" in english and "expected final score" in flat(english)


def test_progress_words_and_durations_in_each_language() -> None:
    cases = {
        "ru": {40: "около 40 с", 600: "около 10 мин", 3 * 86400: "около 3 дня", 5 * 86400: "около 5 дней"},
        "de": {40: "etwa 40 s", 21 * 86400: "etwa 21 Tage", 1e30: "mehr als eine Milliarde Jahre"},
        "es": {5400: "unos 1.5 h", 86400 * 400: "unos 400 días"},
        "sv": {86400 * 365.25 * 3: "omkring 3 år"},
    }
    for lang, durations in cases.items():
        undo = speak(lang)
        try:
            assert {s: say_duration(s) for s in durations} == durations
        finally:
            undo()
    assert say_duration(3 * 86400) == "about 3 days"


def test_the_estimate_line_names_its_units_in_the_language() -> None:
    out = io.StringIO()
    undo = speak("ru")
    try:
        EstimateLine(out).start("simulate tiny", 1000, "games", seconds=90.0)  # estimated up front: said at once
    finally:
        undo()
    assert out.getvalue() == "simulate tiny: около 90 с (1,000 игр)\n"


def test_the_bars_time_left_is_said_in_the_language_from_rich_s_own_thread() -> None:
    """Rich redraws the bar from a thread of its own, which does not inherit the language: the bar keeps it."""
    from types import SimpleNamespace

    undo = speak("de")
    try:
        bar = Bar(appear=3600)  # never drawn: its columns are rendered by hand
        bar.start("solving tiny", seconds=40.0)
    finally:
        undo()
    left = bar._columns()[-1]
    got: list[str] = []
    worker = threading.Thread(target=lambda: got.append(left.render(SimpleNamespace(fields={"depth": 0})).plain))
    worker.start()
    worker.join()
    bar.close()
    assert re.fullmatch(r"noch (39|40) s", got[0]), got


# ----------------------------------------------------------------------------- help


def test_help_is_said_in_each_language_with_its_figures_filled() -> None:
    russian = flat(said("--lang", "ru", "simulate", "--help"))
    assert "Сыграть много одиночных партий одной стратегией" in russian
    assert "Сколько партий сыграть (1 .. 1,000,000,000); расход памяти не растёт." in russian  # {max_games}
    assert "(по умолчанию: 10 самых частых)" in russian and "bot:optimal" in russian  # {top_scores}, {bots}
    assert "Показать эту справку и выйти." in russian  # click's own --help
    german = flat(said("simulate", "--help", env={**UNSET, "LANG": "de_DE.UTF-8"}))
    assert "Anzahl der zu spielenden Partien (1 .. 1,000,000,000)" in german
    spanish = flat(said("--lang", "es", "risk", "--help"))
    assert "Por defecto: -0.05, -0.03, -0.01, 0, 0.01, 0.03, 0.05, 0.07." in spanish  # {thetas}
    swedish = flat(said("--lang", "sv", "advise", "--help"))
    assert "Tärningarna på bordet, t.ex. 11256 eller 1,1,2,5,6." in swedish
    listed = flat(said("--lang", "ru", "--help"))  # the root: the commands' helps in the listing too
    assert "Играть, считать очки, решать и анализировать" in listed and "Сыграть партию в терминале" in listed
    english = flat(said("simulate", "--help"))  # and the next command line's help is English again
    assert "Number of games to play (1 .. 1,000,000,000); memory stays flat." in english
    assert "Play many solitaire games with one strategy" in english and "Сыграть" not in english


def test_clicks_own_words_in_a_help_are_said_in_the_language() -> None:
    """The usage line, the section headings and an option's closing `[default: ...; required]`: click words them in
    English, dicecup's formatter in the language (on a terminal too: `SpokenFormatter`)."""
    russian = said("--lang", "ru", "simulate", "--help")
    assert russian.startswith("Использование: dicecup simulate [OPTIONS]") and "\nНастройки:\n" in russian
    assert (
        "[обязательно]" in russian and "[по умолчанию: 1000]" in russian and "[по умолчанию: 3600.0; x>=1]" in russian
    )
    assert not re.search(r"Usage:|Options:|\[required\]|\[default:", russian)
    swedish = said("--lang", "sv", "--help")
    assert swedish.startswith("Användning: dicecup") and "\nKommandon:\n" in swedish and "\nAlternativ:\n" in swedish
    english = said("simulate", "--help")
    assert english.startswith("Usage: dicecup simulate") and "[required]" in english and "[default: 1000]" in english


def test_every_help_the_cli_shows_is_marked_for_the_catalogs() -> None:
    """A help text written without `N_` would stay English in every language: each one is a message of the
    catalogs (whose own test then checks that every language has it)."""
    import typer
    from babel.messages.extract import DEFAULT_KEYWORDS, extract_from_dir

    import dicecup

    folder = str(Path(dicecup.__file__).parent / "cli")
    marked = {m for _f, _l, m, _c, _x in extract_from_dir(folder, [("**.py", "python")], keywords=DEFAULT_KEYWORDS)}
    root = typer.main.get_command(app)
    shown = [("dicecup", root.help), *((f"dicecup {p.name}", p.help) for p in root.params)]
    for name, command in root.commands.items():
        shown += [(name, command.help), *((f"{name} {p.name}", getattr(p, "help", None)) for p in command.params)]
    unmarked = [(where, text) for where, text in shown if text and text not in marked]
    assert not unmarked, unmarked


# ----------------------------------------------------------------------------- errors


def test_errors_are_one_line_in_the_language() -> None:
    bad = run("--lang", "ru", "simulate", "-v", "yacht", "--games", "0", code=2)
    assert bad.stderr.startswith("ошибка: --games должно быть целым числом от 1 до 1,000,000,000, получено 0")
    typo = run("--lang", "de", "score", "11111", "-v", "yacht", "--nope", code=2)
    assert typo.stderr == "Fehler: keine solche Option: --nope (siehe `dicecup score --help`)\n"
    word = run("--lang", "ru", "simulate", "-v", "yacht", "--games", "abc", code=2)
    assert word.stderr.startswith("ошибка: --games: 'abc' — не целое число (см. `dicecup simulate --help`)")
    missing = run("--lang", "de", "simulate", code=2)
    assert missing.stderr == "Fehler: es fehlt die Option '--variant' / '-v' (siehe `dicecup simulate --help`)\n"
    unknown = run("--lang", "xx", "show", "-v", "yacht", env={**UNSET, "LANG": "es_ES.UTF-8"}, code=2)
    assert unknown.stderr.startswith("error: --lang: dicecup no habla 'xx'; elige uno de: en (English), ru (Русский)")
    path = run("--lang", "sv", "show", "-v", "no/such", code=2)  # a callback's error, said before the command runs
    assert path.stderr.startswith("fel: --variant: 'no/such' är inget variant-id,")
    english = run("show", "-v", "no/such", code=2)  # and the next command line speaks English again
    assert english.stderr.startswith("error: --variant: 'no/such' is not a variant id,")


def test_the_engines_errors_are_said_in_the_language() -> None:
    strategy = run("--lang", "ru", "simulate", "-v", "yacht", "-s", "nope", "-n", "1", code=2)
    assert strategy.stderr.startswith("ошибка: неизвестная стратегия 'nope'; стратегии: optimal, strong, greedy")
    cluster = run("--lang", "es", "simulate", "-v", "yacht", "-n", "1", "--cluster", "nowhere", code=2)
    assert cluster.stderr.startswith("error: el clúster 'nowhere' no es una dirección")
    english = run("simulate", "-v", "yacht", "-s", "nope", "-n", "1", code=2)
    assert english.stderr.startswith("error: unknown strategy 'nope'; strategies: optimal, strong, greedy")


def test_an_engine_phrase_is_english_for_programs_and_said_in_the_language_where_it_is_shown() -> None:
    from dicecup.cli.common import error_line
    from dicecup.errors import DicecupError
    from dicecup.language.engine import Engine
    from dicecup.simulate import check_run
    from dicecup.solver.odds import odds

    with pytest.raises(DicecupError) as games:
        check_run("random", 0, None, "auto")
    with pytest.raises(DicecupError) as rolls:
        odds(Engine().resolve("yacht", {}), dice=(1, 1, 2, 5, 6), rolls_left=7)
    assert str(games.value) == "the number of games must be a whole number >= 1, got 0"  # the API: English
    assert str(rolls.value) == "rolls_left must be 0..2 for yacht: rolls left after these dice; got 7"
    copied = pickle.loads(pickle.dumps(rolls.value))  # (as a worker process sends it back)
    undo = speak("de")
    try:
        assert (
            error_line(str(games.value)) == "Fehler: die Anzahl der Partien muss eine ganze Zahl >= 1 sein, erhalten: 0"
        )
        assert error_line(str(copied)) == (  # the phrase inside a phrase said too
            "Fehler: rolls_left muss für yacht 0..2 sein: verbleibende Würfe nach diesen Würfeln; erhalten: 7"
        )
    finally:
        undo()


def test_the_engines_progress_labels_are_said_where_shown() -> None:
    from dicecup.locales import NP_, Phrase
    from dicecup.progress import Recorder

    label = Phrase(
        NP_("simulating {games} game of {variant} ({strategy})", "simulating {games} games of {variant} ({strategy})"),
        n=1000,
        games="1,000",
        variant="tiny",
        strategy="random",
    )
    kept = Recorder()
    kept.start(label, 1000, "games")
    assert kept.events[0][1] == "simulating 1,000 games of tiny (random)"  # a program's reporter: English
    out = io.StringIO()
    undo = speak("ru")
    try:
        EstimateLine(out).start(label, 1000, "games", seconds=90.0)
    finally:
        undo()
    assert out.getvalue() == "симуляция 1,000 партий в tiny (random): около 90 с (1,000 игр)\n"


def test_an_unknown_variant_is_said_in_the_language_and_stays_english_for_programs() -> None:
    got = run("--lang", "ru", "show", "-v", "nosuch", code=2)
    assert got.stderr.startswith("ошибка: неизвестный вариант 'nosuch'; известные варианты: yahtzee, yatzy")
    close = run("--lang", "de", "show", "-v", "yahtze", code=2)
    assert close.stderr.startswith("Fehler: unbekannte Variante 'yahtze'; meinten Sie 'yahtzee'? bekannte Varianten:")
    from dicecup import Engine
    from dicecup.errors import UnknownVariant

    with pytest.raises(UnknownVariant) as refused:
        Engine().variant("nosuch")
    assert str(refused.value).startswith("unknown variant 'nosuch'; known variants: yahtzee")


# ----------------------------------------------------------------------------- what stays the same


def _stable(text: str) -> object:
    """A command's JSON without its timings (they differ from run to run, whatever the language)."""

    def drop(value: object) -> object:
        if isinstance(value, dict):
            return {k: drop(v) for k, v in value.items() if k not in ("seconds", "target_seconds")}
        if isinstance(value, list):
            return [drop(v) for v in value]
        return value

    return drop(json.loads(text))


@pytest.mark.parametrize(
    "args",
    [
        ["variants"],
        ["show", "-v", "yahtzee"],
        ["score", "12345", "-v", "kniffel"],
        ["odds", "-v", "yacht", "-d", "11256"],
        ["simulate", "-v", "{tiny}", "-s", "random", "-n", "50", "--seed", "1"],
        ["solve", "-v", "{tiny}"],
        ["distribution", "-v", "{tiny}", "-d", "144"],
        pytest.param(["risk", "-v", "{tiny}", "-t", "0.02"], marks=pytest.mark.slow),
        ["match", "-v", "{tiny}", "-p", "bot:win", "-p", "bot:optimal", "-n", "20"],
    ],
    ids=lambda args: args[0],
)
def test_json_is_the_same_whatever_the_language(args: list[str], tiny: str) -> None:
    line = [a.replace("{tiny}", tiny) for a in args] + ["--json", "-q"]
    english = _stable(run(*line).stdout)
    assert _stable(run("--lang", "ru", *line).stdout) == english
    assert _stable(run(*line, env={**UNSET, "LANG": "de_DE.UTF-8"}).stdout) == english
