"""The game's page, served by `dicecup serve`, in a real headless Chromium (Debian's, driven by Playwright; no
browser download): a whole game against a bot for every family of card, on a phone (360x640) and on a desktop,
by taps or by the keyboard alone; two people at one table from two browsers, through a crash of the server; a
spectator; names full of markup shown as text; the lobby's refusals; a rematch."""

from __future__ import annotations

from typing import Any

import pytest
from _browser_helpers import (
    DESKTOP,
    PHONE,
    launch_chromium,
    make_table,
    my_turn,
    new_page,
    no_sideways_scroll,
    play_to_the_end,
    serve_with_instant_bots,
)
from _server_helpers import tiny_server

pytestmark = pytest.mark.slow  # a whole game in a browser each: tens of seconds

SNEAKY = "<img src=x onerror=\"document.title='pwned'\">bob"

browser = pytest.fixture(scope="module", name="browser")(launch_chromium)
server = pytest.fixture(scope="module", name="server")(serve_with_instant_bots)


def visible_columns(page: Any) -> int:
    """How many of the first card's columns of boxes the page shows now."""
    return int(
        page.evaluate(
            "() => [...document.querySelectorAll('.player-card table.columns thead th:not(.corner)')]"
            ".filter((th) => th.offsetParent !== null && th.closest('.player-card') === "
            "document.querySelector('.player-card')).length"
        )
    )


def check_end(page: Any) -> None:
    """The end: a winner, a ranking of every player, its scores those of the cards, nothing off the screen."""
    page.wait_for_selector("#result .winner")
    assert page.inner_text("#result .winner").startswith(("Winner: ", "Tie: "))
    names = page.evaluate("() => [...document.querySelectorAll('#seats .name')].map((n) => n.textContent)")
    ranked = page.locator("#ranking tbody th").all_inner_texts()
    assert sorted(ranked) == sorted(names)
    totals = {t.get_attribute("data-total"): t.inner_text() for t in page.locator("[data-total]").all()}
    score_col = page.locator("#ranking thead th").all_inner_texts().index("Score")
    for row in page.locator("#ranking tbody tr").all():
        cells = row.locator("th, td").all_inner_texts()
        assert cells[score_col] == totals[cells[1]]
    assert page.locator("#table-panel").is_hidden()


# (variant, viewport, keyboard alone): every family of card on a phone and on a desktop; half of the games
# played without a pointer.
GAMES = [
    ("yahtzee", "phone", False),
    ("yahtzee", "desktop", True),
    ("triple-yahtzee", "phone", False),
    ("triple-yahtzee", "desktop", True),
    ("yamb", "phone", True),
    ("yamb", "desktop", False),
    ("maxi-yatzy", "phone", False),
    ("maxi-yatzy", "desktop", True),
    ("kismet", "phone", True),
    ("kismet", "desktop", False),
    ("balut", "phone", False),
    ("balut", "desktop", True),
    ("generala", "phone", False),
    ("generala", "desktop", True),
    ("russian", "phone", True),
    ("russian", "desktop", False),
]


@pytest.mark.parametrize(("variant", "size", "keyboard"), GAMES, ids=[f"{v}-{s}" for v, s, _ in GAMES])
def test_a_whole_game_against_a_bot(server, browser, variant, size, keyboard):
    phone = size == "phone"
    page = new_page(browser, PHONE if phone else DESKTOP)
    make_table(page, server.url, variant, "bot:greedy")
    page.wait_for_selector("#controls:not([hidden])")
    assert page.inner_text("#turn") == "Your turn, ann"
    page.wait_for_function("document.querySelector('#live').textContent.includes('Your turn')")
    columns = page.evaluate("() => document.querySelectorAll('.player-card').length") > 0
    if columns:  # a column game: tabs of one column on a phone, every column at once on a desktop
        page.wait_for_selector(".player-card")
        tabs = page.locator(".player-card").first.locator("[role=tab]")
        assert tabs.first.is_visible() == phone
        assert visible_columns(page) == (1 if phone else tabs.count())
    if variant == "kismet":  # coloured faces, said in the dice's names too
        assert page.locator("#dice .die[class*=colour-]").count() == 5
        assert any(w in page.get_attribute("#dice .die", "aria-label") for w in ("red", "green", "black"))
    if variant == "maxi-yatzy":
        assert page.locator("#dice .die").count() == 6 and page.locator("tr.banked").count() == 1
    if variant == "balut":
        assert page.locator("tr.figure th", has_text="Points").count() == 2
    if phone:
        no_sideways_scroll(page)
    play_to_the_end([page], keyboard=keyboard, checks=no_sideways_scroll if phone else None)
    check_end(page)
    if phone:
        no_sideways_scroll(page)
    if variant == "balut":
        assert page.locator("#ranking thead th").all_inner_texts() == ["Place", "Player", "Points", "Score"]
    if variant == "russian":  # a game played for stakes: who pays whom
        assert page.locator("#result .settlement tr").count() == 2
    page.screenshot(path=f"/tmp/dicecup-page-{variant}-{size}.png", full_page=True)
    if variant == "yahtzee":  # a rematch: a new table, the same seats, the creator playing again
        first = page.url
        page.click("#rematch")
        page.wait_for_url(lambda url: "/t/" in url and url != first)
        page.wait_for_selector("#controls:not([hidden])")
        assert page.inner_text("#turn") == "Your turn, ann" and "bot:greedy" in page.inner_text("#seats")
    page.context.close()


def test_two_browsers_play_one_table_through_a_crash_of_the_server(tmp_path, browser):
    serve = tiny_server(tmp_path, "--bot-delay", "0").start()
    try:
        ann = new_page(browser, PHONE)
        link = make_table(ann, serve.url, "yahtzee", "invite")
        assert ann.input_value("#share-link") == link and len(link.rsplit("/", 1)[1]) == 16
        ann.wait_for_selector("#seats li:nth-child(2) button")

        bob = new_page(browser, DESKTOP)
        bob.goto(link)
        bob.fill("#seats li:nth-child(2) input", SNEAKY)
        bob.click("#seats li:nth-child(2) button")
        bob.wait_for_selector("#cards table")
        watcher = new_page(browser, PHONE)
        watcher.goto(link)
        watcher.wait_for_selector("#cards table")
        for page in (ann, bob, watcher):
            page.wait_for_function("document.querySelector('#seats').innerText.includes('onerror')")
            assert SNEAKY in page.inner_text("#seats")  # the name as typed, shown as text
            assert page.locator("img").count() == 0 and page.title() == "dicecup"
        assert watcher.locator("#controls").is_hidden() and watcher.inner_text("#link-status") == "watching"

        ann.wait_for_selector("#controls:not([hidden])")
        ann.click("#roll")
        ann.wait_for_function("document.querySelector('#turn-detail').innerText.startsWith('1 roll left')")

        serve.kill()  # a crash: every connection drops at once
        for page in (ann, bob, watcher):
            page.wait_for_function("document.querySelector('#link-status').innerText.includes('reconnecting')")
        serve.start()  # the same port, the same database: the pages reconnect by themselves
        ann.wait_for_function("document.querySelector('#link-status').innerText === ''")
        assert my_turn(ann) and ann.inner_text("#turn-detail").startswith("1 roll left")
        bob.reload()  # the seat's token is kept in this browser: the same seat again
        bob.wait_for_selector("#cards table")
        assert "you" in bob.inner_text("#seats li:nth-child(2)")

        play_to_the_end([ann, bob])
        for page in (ann, bob, watcher):
            check_end(page)
        totals = ann.locator("[data-total]").all_inner_texts()
        assert (
            totals == watcher.locator("[data-total]").all_inner_texts() == bob.locator("[data-total]").all_inner_texts()
        )
    finally:
        serve.stop()
    assert "Traceback" not in serve.log(), serve.log()


def test_a_table_shows_no_controls_before_its_first_state(server, browser):
    """Opened with the server's socket held silent, the room shows neither the game nor its buttons: nothing to
    press and no empty turn line until the table's state has arrived (a test once pressed them too early)."""
    page = new_page(browser, PHONE)
    link = make_table(page, server.url, "tiny", "bot:greedy")
    silent = new_page(browser, PHONE)
    sockets: list[Any] = []
    silent.route_web_socket("**/ws", lambda ws: sockets.append(ws))  # accepted, never answered, never forwarded
    silent.goto(link)
    silent.wait_for_function("!document.querySelector('#room').hidden")
    while not sockets:  # the page has opened its socket: it is waiting on the table's state
        silent.wait_for_timeout(50)
    assert silent.locator("#game").is_hidden() and silent.locator("#controls").is_hidden()
    assert silent.locator("#share").is_hidden() and silent.inner_text("#turn") == ""
    for p in (page, silent):
        p.context.close()


def test_a_double_tap_scores_once_and_the_page_stays_in_step(server, browser):
    page = new_page(browser, PHONE)
    make_table(page, server.url, "tiny", "bot:greedy")
    page.wait_for_selector("#controls:not([hidden])")
    box = page.get_attribute("button.score", "data-score")
    page.evaluate("(box) => { const b = document.querySelector(`[data-score='${box}']`); b.click(); b.click(); }", box)
    page.wait_for_selector(f"td.filled[data-box='{box}'][data-player='0']")
    page.wait_for_selector("#controls:not([hidden])")  # the bot has played its turn: ann's turn again
    assert page.locator("#log li", has_text="score").count() == 2  # ann's one score, and the bot's
    assert not page.locator("#message.error").count() and page.js_errors == []


def test_the_lobby_refuses_a_bad_code_and_shows_the_servers_refusals(server, browser):
    page = new_page(browser, PHONE)
    page.goto(server.url)
    page.wait_for_selector("#create:not([disabled])")
    page.fill("#join-code", "not a code")
    page.click("#join")
    assert "16 letters" in page.inner_text("#lobby-message")
    page.select_option("#variant", "yahtzee")
    page.select_option("#others select.seat-kind", "bot:risk:THETA")
    assert page.locator("#others .seat-arg input").input_value() == "0.05"
    page.fill("#others .seat-arg input", "lots")
    page.click("#create")
    page.wait_for_selector("#lobby-message.error")
    assert "theta must be a number" in page.inner_text("#lobby-message") and "/t/" not in page.url
    page.goto(f"{server.url}/t/{'A' * 16}")
    page.wait_for_selector("#room-message.error")
    assert "no table" in page.inner_text("#room-message") and page.locator("#game").is_hidden()
    assert page.js_errors == []


def test_every_bot_the_server_offers_is_offered_in_the_lobby(server, browser):
    page = new_page(browser, PHONE)
    page.goto(f"{server.url}/?variant=yahtzee")
    page.wait_for_selector("#create:not([disabled])")
    offered = page.evaluate("() => [...document.querySelector('#others select').options].map((o) => o.value)")
    from _server_helpers import call

    _, variants = call(f"{server.url}/api/variants")
    bots = next(v for v in variants if v["id"] == "yahtzee")["bots"]
    assert offered == ["invite", "hotseat", *bots]
    assert {"bot:optimal", "bot:strong", "bot:risk:THETA", "bot:target:T", "bot:win"} <= set(offered)


def test_dice_tumble_unless_the_system_asks_for_less_motion(server, browser):
    for motion, tumbles in (("no-preference", True), ("reduce", False)):
        page = new_page(browser, PHONE, reduced_motion=motion)
        make_table(page, server.url, "yahtzee", "bot:greedy")
        page.wait_for_selector("#controls:not([hidden])")
        page.wait_for_selector("#dice .die[aria-pressed]")  # the turn's dice drawn and live (a loaded machine)
        page.keyboard.press("1")
        page.wait_for_function("document.querySelector('#dice .die').getAttribute('aria-pressed') === 'true'")
        page.keyboard.press("r")
        page.wait_for_function("document.querySelector('#turn-detail').innerText.startsWith('1 roll left')")
        assert (page.locator("#dice .die.rolling").count() == 4) == tumbles
        assert page.locator("#dice .die.kept").count() == 1  # the die kept stays kept for the next roll
        page.wait_for_function("document.querySelector('#live').textContent.includes('rolled')")
        page.context.close()


def test_two_people_at_one_device_play_in_turn(server, browser):
    page = new_page(browser, PHONE)
    make_table(page, server.url, "tiny", "hotseat")
    page.wait_for_selector("#controls:not([hidden])")
    assert page.inner_text("#turn") == "Your turn, ann"
    names = page.locator("#seats .name").all_inner_texts()
    assert names == ["ann", "player 2"] and page.locator("#seats .handoff").count() == 2
    page.locator("button.score").first.click()
    page.wait_for_function("document.querySelector('#turn').innerText === 'Your turn, player 2'")
    play_to_the_end([page])
    check_end(page)


def test_a_hint_picks_the_dice_to_keep_or_marks_the_box(server, browser):
    page = new_page(browser, PHONE)
    make_table(page, server.url, "yahtzee", "bot:greedy")
    page.wait_for_selector("#controls:not([hidden])")
    for _ in range(3):  # the first roll's hint, then after rolling as it says, until it says to score
        page.keyboard.press("h")
        page.wait_for_function("document.querySelector('#message').innerText.startsWith('Hint (bot:greedy): ')")
        said = page.inner_text("#message").split(": ", 1)[1]
        page.wait_for_function("document.querySelector('#live').textContent.startsWith('Hint')")
        if said.startswith("score "):
            assert page.locator("button.score.hinted").count() == 1
            break
        kept = said.removeprefix("keep ").split() if said != "keep nothing" else []
        pressed = page.locator("#dice .die[aria-pressed=true]").all()
        assert sorted(d.get_attribute("data-face") for d in pressed) == sorted(kept)
        rolls = page.inner_text("#turn-detail")
        page.keyboard.press("r")
        page.wait_for_function(f"document.querySelector('#turn-detail').innerText !== {rolls!r}")
    else:
        raise AssertionError("three rolls and no hint to score")
    assert page.js_errors == []


def test_the_lobby_lists_the_games_this_browser_plays(server, browser):
    page = new_page(browser, PHONE)
    page.goto(server.url)
    page.wait_for_selector("#create:not([disabled])")
    assert page.locator("#mine").is_hidden()  # a new browser plays nowhere yet
    link = make_table(page, server.url, "kismet", "bot:greedy")
    page.wait_for_selector("#controls:not([hidden])")
    page.goto(server.url)
    page.wait_for_selector("#my-tables li")
    assert page.inner_text("#my-tables li a") == "Kismet" and "being played" in page.inner_text("#my-tables")
    assert "ann (you) 0 · greedy 0" in page.inner_text("#my-tables")
    no_sideways_scroll(page)
    page.click("#my-tables li a")
    page.wait_for_url(link)
    page.wait_for_selector("#controls:not([hidden])")  # the seat again, from this browser's token


def test_the_page_plays_under_its_own_content_security_policy(server, browser):
    """Not bypassed here: no script, style or connection of the page is blocked by the server's policy."""
    # (less motion: the die is measured still, not in the middle of a tumble, which scales it)
    page = browser.new_context(viewport=PHONE, reduced_motion="reduce").new_page()
    blocked: list[str] = []
    page.on("console", lambda m: blocked.append(m.text) if "Content Security Policy" in m.text else None)
    page.goto(f"{server.url}/?variant=maxi-yatzy")
    page.locator("#create:not([disabled])").wait_for()
    page.click("#create")
    page.locator("#controls:not([hidden])").wait_for()
    page.locator("#dice .die").first.click()
    page.click("#roll")
    page.locator("#turn-detail", has_text="1 roll left").wait_for()
    page.locator("button.score").first.click()
    page.locator("#log li", has_text="score").first.wait_for(state="attached")
    width = page.locator("#dice .die").first.bounding_box()["width"]
    assert 44 <= width <= 60  # six dice in a row on a phone: the grid's width, set from the script, applies
    assert blocked == []
    page.context.close()
