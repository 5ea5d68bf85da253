"""The trainer's page (/train) in a real headless Chromium: a drill answered by taps on a phone and by the keyboard
alone on a desktop, its grade the server's, the running figures kept in the browser across a reload, and
nothing wider than a phone's screen."""

from __future__ import annotations

import json
import os
from typing import Any

import pytest
from _browser_helpers import DESKTOP, PHONE, launch_chromium, new_page, no_sideways_scroll, serve_with_instant_bots

SHOTS = os.environ.get("DICECUP_SCREENSHOTS") == "1"  # screenshots in /tmp, to look at while developing

pytestmark = pytest.mark.slow  # a server and a browser of their own

browser = pytest.fixture(scope="module", name="browser")(launch_chromium)
server = pytest.fixture(scope="module", name="server")(serve_with_instant_bots)


def open_drill(page: Any, url: str, variant: str = "yacht") -> None:
    page.goto(f"{url}/train?variant={variant}")
    page.wait_for_selector(f"#train-variant option[value='{variant}']", state="attached")
    page.click("#train-next")
    page.wait_for_selector("#train-board:not([hidden])")
    page.wait_for_function("() => document.querySelector('#train-dice .die') !== null")


def graded(page: Any) -> dict[str, Any]:
    page.wait_for_selector("#train-grade p")
    kept = json.loads(page.evaluate("() => localStorage.getItem('dicecup.training')"))
    return kept[-1]


def test_a_drill_by_taps_on_a_phone_is_graded_and_remembered(server, browser):
    page = new_page(browser, PHONE)
    open_drill(page, server.url)
    no_sideways_scroll(page)
    keep = page.locator("#train-keep")
    if keep.is_visible():  # rolls left: keep the first die and roll the others
        page.click("#train-dice [data-die='0']")
        assert page.get_attribute("#train-dice [data-die='0']", "aria-pressed") == "true"
        keep.click()
    else:
        page.locator("#train-cards button.score").first.click()
    move = graded(page)
    assert move["variant"] == "yacht" and move["loss"] >= 0 and move["importance"] > 0
    text = page.inner_text("#train-grade")
    assert ("Best move" in text) == move["best"]
    assert page.inner_text("#train-grade .why")  # why the best move is best, the explanation's text
    assert page.inner_text("#train-session").startswith("This session: ")
    assert "of 1 move best" in page.inner_text("#train-session")
    assert page.locator("#train-cards button.score").count() == 0  # graded: the card takes no more moves
    no_sideways_scroll(page)
    page.reload()
    page.wait_for_selector("#train-variant option[value='yacht']", state="attached")
    page.wait_for_function("() => document.querySelector('#train-all').textContent.includes('of 1 move best')")
    if SHOTS:
        page.screenshot(path="/tmp/train-phone.png", full_page=True)
    assert page.js_errors == []


def test_a_drill_by_the_keyboard_alone(server, browser):
    page = new_page(browser, DESKTOP)
    page.goto(f"{server.url}/train?variant=yacht")
    page.wait_for_selector("#train-variant option[value='yacht']", state="attached")
    page.focus("#train-next")
    page.keyboard.press("Enter")
    page.wait_for_function("() => document.querySelector('#train-dice .die') !== null")
    assert page.evaluate("() => document.activeElement.id") == "train-heading"
    if page.locator("#train-keep").is_visible():
        page.keyboard.press("1")
        page.keyboard.press("r")
    else:
        page.locator("#train-cards button.score").first.focus()
        page.keyboard.press("Enter")
    graded(page)
    assert page.evaluate("() => document.activeElement.id") == "train-next"
    if SHOTS:
        page.screenshot(path="/tmp/train-desktop.png", full_page=True)
    page.keyboard.press("n")  # the next drill, from the keyboard too
    page.wait_for_function("() => document.querySelector('#train-heading').textContent.endsWith('2')")
    assert page.js_errors == []
