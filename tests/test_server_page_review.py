"""The page's undo and its review of a game, in a real headless Chromium: the Undo button and the U key take back
a score, said in the live region, the same dice coming again; the review screen, opened from the end of a game
and from the lobby's list, shows every decision with the best move and the loss, and the total lost."""

from __future__ import annotations

import json
import urllib.request

import pytest
from _browser_helpers import (
    DESKTOP,
    PHONE,
    launch_chromium,
    make_table,
    new_page,
    no_sideways_scroll,
    play_to_the_end,
    serve_with_instant_bots,
)

pytestmark = pytest.mark.slow  # a browser and a server process

browser = pytest.fixture(scope="module", name="browser")(launch_chromium)
server = pytest.fixture(scope="module", name="server")(serve_with_instant_bots)


def test_undo_takes_back_a_score_by_button_or_key_and_the_same_dice_come(server, browser):
    page = new_page(browser, DESKTOP)
    make_table(page, server.url, "tiny", "hotseat")
    page.wait_for_selector("#controls:not([hidden])")
    assert page.locator("#undo").is_hidden()  # nothing to take back yet
    dice = page.locator("#dice .die").evaluate_all("(ds) => ds.map((d) => d.dataset.face)")
    page.locator("button.score").first.click()
    page.wait_for_function("document.querySelector('#turn').innerText === 'Your turn, player 2'")
    seen = page.locator("#dice .die").evaluate_all("(ds) => ds.map((d) => d.dataset.face)")
    undo = page.locator("#undo")
    assert undo.is_visible() and undo.inner_text().startswith("Undo: score ")
    logged = page.locator("#log li").count()
    page.keyboard.press("u")
    page.wait_for_function("document.querySelector('#turn').innerText === 'Your turn, ann'")
    page.wait_for_function("document.querySelector('#live').textContent.includes('took back')")
    live = page.inner_text("#live")
    assert live.startswith("ann took back: score ") and "The dice are as they were." in live
    assert page.locator("#log li").count() == logged - 2  # the score and the roll after it
    assert page.locator("#dice .die").evaluate_all("(ds) => ds.map((d) => d.dataset.face)") == dice
    assert undo.is_hidden() and page.locator("#roll").is_disabled()  # the dice to come were seen: score a box
    assert "no reroll now" in page.inner_text("#message")
    page.locator("button.score").nth(1).click()
    page.wait_for_function("document.querySelector('#turn').innerText === 'Your turn, player 2'")
    assert page.locator("#dice .die").evaluate_all("(ds) => ds.map((d) => d.dataset.face)") == seen
    undo.click()  # the button does it too
    page.wait_for_function("document.querySelector('#turn').innerText === 'Your turn, ann'")
    assert page.js_errors == []


def test_the_review_opens_from_the_end_and_from_the_lobby(server, browser):
    page = new_page(browser, PHONE)
    link = make_table(page, server.url, "tiny", "bot:greedy")
    play_to_the_end([page])
    page.click("#review-link")
    page.wait_for_url("**/review?seat=0")
    page.wait_for_selector("#review-table tbody tr")
    code = link.rsplit("/", 1)[1]
    with urllib.request.urlopen(f"{server.url}/api/tables/{code}/review?seat=0", timeout=60) as answer:
        review = json.loads(answer.read())
    rows = page.locator("#review-table tbody tr")
    assert rows.count() == len(review["decisions"]) > 0
    lost = review["players"][0]["total_loss"]
    assert page.inner_text("#review-table tfoot td") == f"{lost:.2f}"
    assert page.locator("#review-table tr.costly").count() == sum(d["loss"] > 0 for d in review["decisions"])
    assert page.inner_text("#review-heading") == "Review of ann's moves"
    assert page.locator("#review-players a[aria-current=page]").inner_text() == "ann (you)"
    no_sideways_scroll(page)
    page.click("#review-players a:not([aria-current])")  # the bot's moves, reviewed the same way
    page.wait_for_url("**/review?seat=1")
    page.wait_for_function("document.querySelector('#review-heading').innerText === \"Review of greedy's moves\"")
    page.goto(server.url)
    page.wait_for_selector("#my-tables li a.review")
    page.click("#my-tables li a.review")
    page.wait_for_url("**/review?seat=0")
    page.wait_for_selector("#review-table tbody tr")
    page.click("#review-back")
    page.wait_for_url(link)
    assert page.js_errors == []
