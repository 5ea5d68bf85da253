"""The game's page, served by `dicecup serve`, in a real headless Chromium (Debian's, driven by Playwright; no
browser download): a table created in one browser, joined by its link from another, watched from a third,
played to the end, a reload resumed, an illegal click refused in the engine's words, and a name full of
markup shown as plain text."""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _server_helpers import Serve, tiny_server

pytestmark = pytest.mark.slow  # tens of seconds each

CHROMIUM = Path("/usr/bin/chromium")
SNEAKY = "<img src=x onerror=\"document.title='pwned'\">bob"


def ensure_chromium() -> None:
    """Debian's chromium, installed with apt-get when it is missing (once: other workers wait on a lock)."""
    if CHROMIUM.exists():
        return
    if shutil.which("apt-get") is None or os.geteuid() != 0:
        pytest.skip("no /usr/bin/chromium, and apt-get cannot install it here (it needs Debian and root)")
    with open("/tmp/dicecup-chromium.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        out = ""
        for step in (
            ["apt-get", "install", "-y", "chromium"],
            ["apt-get", "update"],
            ["apt-get", "install", "-y", "chromium"],
        ):
            if CHROMIUM.exists():
                break
            env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
            proc = subprocess.run(step, capture_output=True, text=True, timeout=900, env=env)
            out = proc.stdout + proc.stderr
    if not CHROMIUM.exists():
        pytest.skip(f"chromium could not be installed with apt-get: {out.strip().splitlines()[-1:]}")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Serve]:
    serve = tiny_server(tmp_path_factory.mktemp("page"), "--bot-delay", "0.1")
    yield serve.start()
    serve.stop()
    assert "Traceback" not in serve.log(), serve.log()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    ensure_chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=str(CHROMIUM), headless=True)
        yield chromium
        chromium.close()


def new_page(browser: Any) -> Any:
    """A page of its own browser context: its own localStorage, as another person's browser. (The page's
    Content-Security-Policy forbids eval, which Playwright's waiting on a condition needs: bypassed here.)"""
    page = browser.new_context(viewport={"width": 1280, "height": 900}, bypass_csp=True).new_page()
    page.set_default_timeout(30_000)
    return page


def my_turn(page: Any) -> bool:
    return page.inner_text("#turn").startswith("Your turn")


def test_two_browsers_and_a_spectator_play_a_table_by_its_link(server, browser):
    ann = new_page(browser)
    ann.goto(f"{server.url}/?variant=tiny")
    ann.fill("#name", "ann")
    ann.select_option("#others select.seat-kind", "invite")
    ann.click("#create")
    ann.wait_for_url("**/t/*")
    link = ann.input_value("#share-link")
    assert link == ann.url and len(link.rsplit("/", 1)[1]) == 16
    ann.wait_for_selector("#seats li:nth-child(2) button")
    assert "Ann" not in ann.inner_text("#seats") and "ann · you" in ann.inner_text("#seats")

    bob = new_page(browser)
    bob.goto(link)
    bob.fill("#seats li:nth-child(2) input", SNEAKY)
    bob.click("#seats li:nth-child(2) button")
    bob.wait_for_function("document.querySelector('#turn').innerText.length > 0")
    watcher = new_page(browser)
    watcher.goto(link)
    watcher.wait_for_selector("#cards table")
    for page in (ann, bob, watcher):
        page.wait_for_function("document.querySelector('#seats').innerText.includes('onerror')")
        assert SNEAKY in page.inner_text("#seats")  # the name as typed, shown as text
        assert page.locator("#seats img, #cards img, #log img").count() == 0 and page.title() == "dicecup"
    assert "· you" not in watcher.inner_text("#seats") and watcher.locator("#controls").is_hidden()

    ann.wait_for_function("document.querySelector('#turn').innerText.startsWith('Your turn')")
    ann.locator("#dice .die").first.click()
    ann.click("#keep")
    ann.wait_for_function("document.querySelector('#turn').innerText.includes('0 rolls left')")
    ann.reload()  # the seat's token is in this browser: the page resumes the same seat, the same dice
    ann.wait_for_function("document.querySelector('#turn').innerText.includes('0 rolls left')")
    assert my_turn(ann)

    refused = False
    for _ in range(30):
        if ann.locator("#result").is_visible() and bob.locator("#result").is_visible():
            break
        for page in (ann, bob):
            if page.locator("#result").is_visible() or not my_turn(page):
                continue
            seq = page.evaluate("() => document.querySelectorAll('#log li').length")
            filled = page.locator("td.filled.mine")
            if filled.count() and not refused:  # a box already filled: the engine says no, in its words
                filled.first.click()
                page.wait_for_selector("#message.error")
                assert "is already filled" in page.inner_text("#message")
                refused = True
            page.locator("td.open.legal, td.open").first.click()
            page.wait_for_function(f"document.querySelectorAll('#log li').length > {seq}")
        ann.wait_for_timeout(200)
    assert refused
    for page in (ann, bob, watcher):
        page.wait_for_selector("#result .winner")
        assert page.inner_text("#result .winner").startswith(("Winner: ", "Tie: "))
    ann.screenshot(path="/tmp/server-page-final.png", full_page=True)
    totals = ann.locator("[data-total]").all_inner_texts()
    assert totals == watcher.locator("[data-total]").all_inner_texts() and len(totals) == 2


def test_the_lobby_refuses_a_bad_code_and_shows_the_servers_refusals(server, browser):
    page = new_page(browser)
    page.goto(server.url)
    page.fill("#join-code", "not a code")
    page.click("#join")
    assert "16 letters" in page.inner_text("#lobby-message")
    page.goto(f"{server.url}/t/{'A' * 16}")
    page.wait_for_selector("#message.error")
    assert "no table" in page.inner_text("#message")
