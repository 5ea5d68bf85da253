"""What the page's browser tests share: Debian's chromium (installed with apt-get when missing; Playwright never
downloads a browser), pages of their own browser context at a phone's or a desktop's size, a table made in the
lobby as a person makes one, and a whole game played by clicks and keys as a person plays it."""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = Path("/usr/bin/chromium")
PHONE = {"width": 360, "height": 640}
DESKTOP = {"width": 1280, "height": 900}


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


def launch_chromium() -> Iterator[Any]:
    """Debian's chromium, headless: a test module's fixture, `browser = pytest.fixture(scope="module")(launch_chromium)`."""
    ensure_chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=str(CHROMIUM), headless=True)
        yield chromium
        chromium.close()


def serve_with_instant_bots(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A server offering the tiny variant too, its bots moving at once: a test module's fixture, as `browser`."""
    from _server_helpers import tiny_server

    serve = tiny_server(tmp_path_factory.mktemp("page"), "--bot-delay", "0")
    yield serve.start()
    serve.stop()
    assert "Traceback" not in serve.log(), serve.log()


def new_page(browser: Any, viewport: dict[str, int] = DESKTOP, **context: Any) -> Any:
    """A page of its own browser context: its own localStorage, as another person's browser. (The page's
    Content-Security-Policy forbids eval, which Playwright's waiting on a condition needs: bypassed here.)"""
    page = browser.new_context(viewport=viewport, bypass_csp=True, **context).new_page()
    page.set_default_timeout(30_000)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.js_errors = errors  # every uncaught error of the page's scripts, for the tests to assert there are none
    return page


def make_table(page: Any, url: str, variant: str, *seats: str, name: str = "ann", pace: str = "0") -> str:
    """Create a table in the lobby, as a person does: `seats` after the creator's are "invite", "hotseat" or a
    bot ("bot:greedy"); `pace` is the bots' pace ("0": at once). The table's link."""
    page.goto(f"{url}/?variant={variant}")
    page.wait_for_selector("#create:not([disabled])")
    page.fill("#name", name)
    page.click("#others .remove")
    for kind in seats:
        page.click("#add-seat")
        page.select_option("#others li:last-child select.seat-kind", kind)
    page.select_option("#pace", pace)
    page.click("#create")
    page.wait_for_url("**/t/*")
    page.wait_for_selector("#turn:not(:empty), #share:not([hidden])")
    return str(page.url)


def over(page: Any) -> bool:
    return bool(page.locator("#result .winner").count())


def seq(page: Any) -> int:
    return int(page.evaluate("() => document.querySelectorAll('#log li').length"))


def my_turn(page: Any) -> bool:
    return bool(page.locator("#controls:not([hidden])").count())


def take_turn_step(page: Any, keyboard: bool) -> None:
    """One decision on this page's turn: roll (keeping the first die) while it may, then score a box.
    `keyboard`: by keys alone (number keys, R, Tab to a box and Enter); else by taps."""
    rolls = page.evaluate("() => !document.querySelector('#roll').disabled")
    if rolls and seq(page) % 3 == 0:
        if keyboard:
            page.keyboard.press("1")
            page.keyboard.press("r")
        else:
            page.locator("#dice .die").first.click()
            page.click("#roll")
        return
    tab = page.locator(".tabs:visible [role=tab]:has(.count)")
    if tab.count() and not page.locator("button.score:visible").count():
        tab.first.click()
    button = page.locator("button.score:visible")
    if button.count():
        if keyboard:
            button.first.focus()
            page.keyboard.press("Enter")
        else:
            button.first.click()
    elif page.locator("#actions button").count():
        page.locator("#actions button").first.click()  # a move of the rules (Yamb: announce the first it offers)
    elif rolls:
        page.keyboard.press("r") if keyboard else page.click("#roll")
    else:
        raise AssertionError(f"no move offered on the page: {page.inner_text('#table-panel')}")


def play_to_the_end(
    pages: list[Any], keyboard: bool = False, timeout: float = 300, checks: Callable[[Any], None] | None = None
) -> None:
    """Play every page's seats until the game is over on all of them (bots move on the server); `checks(page)`
    runs every few moves."""
    deadline = time.monotonic() + timeout
    moves = 0
    while not all(over(p) for p in pages):
        assert time.monotonic() < deadline, f"the game did not end within {timeout} s"
        acted = False
        for page in pages:
            if over(page) or not my_turn(page):
                continue
            before = seq(page)
            take_turn_step(page, keyboard)
            page.wait_for_function(
                f"document.querySelectorAll('#log li').length > {before} || document.querySelector('#message.error')"
            )
            assert not page.locator("#message.error").count(), page.inner_text("#message")
            moves += 1
            acted = True
            if checks is not None and moves % 7 == 0:
                checks(page)
        if not acted:
            pages[0].wait_for_timeout(50)
    for page in pages:
        assert page.js_errors == [], page.js_errors


def no_sideways_scroll(page: Any) -> None:
    """The page's own metrics: nothing wider than the window."""
    wide = page.evaluate("() => [document.scrollingElement.scrollWidth, window.innerWidth]")
    assert wide[0] <= wide[1], f"the page scrolls sideways: {wide[0]} px wide in a {wide[1]} px window"
