"""The game's page in the players' languages: the browser's language first, a switch on the page, the names of the
variant and its boxes from the variant file's translations, the rest from the gettext catalogs the server sends
(`GET /api/messages/LANG`), plural forms by `Intl.PluralRules`; a whole game in Russian on a phone; the server's
own narration, notes and labels in each connection's language."""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

import pytest
from _browser_helpers import (
    PHONE,
    launch_chromium,
    make_table,
    new_page,
    no_sideways_scroll,
    play_to_the_end,
    serve_with_instant_bots,
)
from _server_helpers import Player, call, create, http_check

import dicecup
from dicecup.locales import LANGUAGES, messages
from dicecup.server.protocol import schema

browser = pytest.fixture(scope="module", name="browser")(launch_chromium)
server = pytest.fixture(scope="module", name="server")(serve_with_instant_bots)


def test_the_server_sends_each_languages_messages_and_the_variants_names(server):
    for lang in LANGUAGES:
        status, answer = call(f"{server.url}/api/messages/{lang}")
        http_check(status, answer, "messages")
        assert answer["language"] == lang
    status, ru = call(f"{server.url}/api/messages/ru")
    assert ru["messages"]["Roll all the dice"] == messages("ru").gettext("Roll all the dice") == "Бросить все кости"
    assert ru["messages"]["{n} roll left"] == ["остался {n} бросок", "осталось {n} броска", "осталось {n} бросков"]
    assert ru["plural"] == {"one": 0, "few": 1, "many": 2, "other": 2}
    status, answer = call(f"{server.url}/api/messages/fr")
    assert status == 404 and "languages: en, ru, de, es, sv" in http_check(status, answer, "error")["error"]
    status, variants = call(f"{server.url}/api/variants")
    russian = next(v for v in http_check(status, variants, "variants") if v["id"] == "russian")
    assert russian["translations"]["ru"]["name"] == "Русская игра в два этапа"
    assert russian["translations"]["de"]["description"].startswith("Stufe 1 zählt")


def _texts(page: Any, selector: str) -> list[str]:
    return page.locator(selector).all_inner_texts()


def test_the_page_speaks_the_browsers_language_and_its_switch_changes_it(server, browser):
    page = new_page(browser, PHONE, locale="ru-RU")
    page.goto(f"{server.url}/?variant=russian")
    page.wait_for_selector("#create:not([disabled])")
    assert page.evaluate("() => document.documentElement.lang") == "ru"
    assert page.inner_text("#create") == "Создать стол"
    assert "Русская игра в два этапа" in _texts(page, "#variant option")
    assert "Первый этап считается относительно тройки" in page.inner_text("#lobby")
    assert page.input_value("#lang") == "ru"
    page.select_option("#lang", "de")  # the page is drawn again in German, and remembers it
    page.wait_for_function("() => document.documentElement.lang === 'de'")
    page.wait_for_selector("#create:not([disabled])")
    assert page.inner_text("#create") == "Tisch anlegen"
    assert page.evaluate("() => localStorage.getItem('dicecup.lang')") == "de"
    page.select_option("#lang", "en")
    page.wait_for_function("() => document.documentElement.lang === 'en'")
    page.wait_for_selector("#create:not([disabled])")
    assert page.inner_text("#create") == "Create the table"
    assert not page.js_errors, page.js_errors


def test_a_whole_game_in_russian_on_a_phone(server, browser):
    page = new_page(browser, PHONE, locale="ru-RU")
    make_table(page, server.url, "russian", "bot:greedy", name="анна")
    page.wait_for_selector("#cards table")
    rows = " ".join(_texts(page, "#cards th"))
    for name in ("Единицы", "Пара", "Две пары", "Короткая линия", "Чёт", "Нечёт", "Фул", "Каре", "Яхтзи", "Шанс"):
        assert name in rows, (name, rows)
    assert page.inner_text("#roll") in ("Бросить все кости", "Бросить 5 костей")
    no_sideways_scroll(page)
    play_to_the_end([page], timeout=240, checks=no_sideways_scroll)
    assert page.inner_text("#result .winner").startswith(("Победитель: ", "Ничья: "))
    assert "Итоговые места" in page.inner_text("#result")
    log = page.evaluate("() => [...document.querySelectorAll('#log li')].map((li) => li.textContent).join('\\n')")
    assert "записать в «" in log and "score " not in log, log[-2000:]  # the server's narration, in Russian
    assert not page.js_errors, page.js_errors


def test_each_connection_reads_the_servers_narration_in_its_own_language(server):
    made = create(server, {"player": "human", "name": "ann", "mine": True}, {"player": "bot:greedy"}, variant="yahtzee")
    token = made["tokens"][0]["token"]
    ru, en = Player(server), Player(server)
    try:
        ru.send({"type": "hello", "v": 1, "table": made["code"], "tokens": [token], "lang": "ru"})
        welcome = ru.until(lambda m: m["type"] == "welcome")
        assert welcome["recent"][-1]["label"].startswith("бросок ")
        assert any(line.startswith("Бонус за верх: 0/63 за +35") for line in welcome["game"]["progress"])
        assert en.hello(made["code"])["recent"][-1]["label"].startswith("roll ")
        assert any(line.startswith("Upper bonus: 0/63 for +35") for line in en.game["progress"])
        ack = ru.move(0, ["score", "chance"])
        assert ack["type"] == "ack"
        said_ru = ru.until(lambda m: m["type"] == "update")["moves"][0]["label"]
        said_en = en.until(lambda m: m["type"] == "update")["moves"][0]["label"]
        points = said_en.removeprefix("score Chance for ")
        assert said_en == f"score Chance for {points}" and said_ru == f"записать в «Шанс» {points}"
        ru.send({"type": "sync", "id": "s"})
        state = ru.until(lambda m: m["type"] == "state")
        assert any(e["label"] == said_ru for e in state["recent"])  # a resync is in the same language
        en.until(lambda m: m["type"] == "update" and m["game"]["to_move"] == 0, timeout=60)  # the bot has played
        ru.at_least(en.game["seq"])
        for lang, starts in (("ru", ("оставить ", "записать в «")), ("en", ("keep ", "score "))):
            status, hint = call(f"{server.url}/api/tables/{made['code']}/hint", {"token": token, "lang": lang})
            assert status == 200 and http_check(status, hint, "hint")["label"].startswith(starts), hint
    finally:
        ru.close()
        en.close()


def _refusal_codes_raised() -> set[str]:
    """The codes the server's HTTP refusals carry, read from its source: `Refused(..., code="...")` and
    `_error(status, text, "code", ...)`."""
    found: set[str] = set()
    for path in (Path(dicecup.__file__).parent / "server").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
                continue
            if node.func.id == "Refused":
                codes = [k.value for k in node.keywords if k.arg == "code"]
                assert len(codes) == 1 and isinstance(codes[0], ast.Constant), f"{path.name}:{node.lineno}: no code"
                found.add(codes[0].value)
            elif node.func.id == "_error":
                code = node.args[2]
                if isinstance(code, ast.Constant):
                    found.add(code.value)
                elif isinstance(code, ast.Call):  # {404: "not_found", ...}.get(status, "internal")
                    found |= {v.value for v in code.func.value.values} | {code.args[1].value}  # type: ignore[attr-defined]
    return found


def test_every_http_refusal_has_a_code_the_schema_lists_and_the_page_words():
    listed = set(schema("http")["$defs"]["error"]["properties"]["code"]["enum"])
    raised = _refusal_codes_raised()
    assert raised == listed, (raised - listed, listed - raised)
    page = (Path(dicecup.__file__).parent / "server" / "static" / "i18n.js").read_text(encoding="utf-8")
    worded = set(re.findall(r'"refused\.(\w+)"', page))
    assert listed <= worded, listed - worded


def test_a_refusal_and_the_lobbys_options_are_in_the_pages_language(server, browser):
    page = new_page(browser, PHONE, locale="ru-RU")
    page.goto(f"{server.url}/t/AAAAAAAAAAAAAAAA")  # no such table: the server refuses the hello (unknown_table)
    page.wait_for_function("() => document.querySelector('#room-message').textContent !== ''")
    assert page.inner_text("#room-message") == "Такого стола нет: проверьте ссылку или код."
    page.goto(f"{server.url}/?variant=yahtzee")
    page.wait_for_selector("#create:not([disabled])")
    assert page.inner_text("#options label") == "Правило джокера"
    said = page.evaluate(
        """async () => {
            const dom = await import(new URL("dom.js", document.querySelector("script[type=module]").src));
            try {
                await dom.api("/api/tables", {variant: "nope", seats: [{player: "human"}]});
            } catch (error) {
                return [error.message, error.code, error.status];
            }
        }"""
    )  # an HTTP refusal, said by its code in the page's language
    assert said == ["На этом сервере нет варианта nope.", "unknown_variant", 404]
    assert _texts(page, "#options option") == [
        "свободное: любая клетка",
        "принудительное: официальные правила",
        "без джокера",
    ]
    assert page.evaluate("() => [...document.querySelectorAll('#options option')].map((o) => JSON.parse(o.value))") == [
        "free",
        "forced",
        "none",
    ]  # the values sent to the server are the variant's own
    english = new_page(browser, PHONE, locale="en-US")
    english.goto(f"{server.url}/t/AAAAAAAAAAAAAAAA")  # in English, the server's own words
    english.wait_for_function("() => document.querySelector('#room-message').textContent !== ''")
    assert english.inner_text("#room-message").startswith("no table")
    assert not page.js_errors and not english.js_errors, (page.js_errors, english.js_errors)
