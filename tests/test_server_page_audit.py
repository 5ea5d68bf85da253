"""The page audited by axe-core (from npm, installed by the test into a folder of its own, never served by the
server): no serious or critical violation on any screen, in the light theme and the dark one, on a phone and on
a desktop. Also: touch targets of 44 px, and the page's files cached by content hash."""

from __future__ import annotations

import fcntl
import shutil
import subprocess
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from _browser_helpers import (
    DESKTOP,
    PHONE,
    launch_chromium,
    make_table,
    new_page,
    play_to_the_end,
    serve_with_instant_bots,
)

AXE_HOME = Path("/tmp/dicecup-test-axe-core")  # shared by test runs: npm is asked once


@pytest.fixture(scope="session")
def axe_script() -> Path:
    """axe.min.js, installed with npm into AXE_HOME the first time (other workers wait on a lock)."""
    script = AXE_HOME / "node_modules" / "axe-core" / "axe.min.js"
    AXE_HOME.mkdir(exist_ok=True)
    with open(AXE_HOME / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not script.exists():
            if shutil.which("npm") is None:
                pytest.skip("npm is not installed: axe-core cannot be fetched (apt-get install npm)")
            cmd = ["npm", "install", "--prefix", str(AXE_HOME), "--no-audit", "--no-fund", "axe-core@4"]
            try:
                proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
            except subprocess.TimeoutExpired:
                pytest.skip("npm did not answer within 5 minutes: axe-core cannot be fetched")
            if proc.returncode != 0 or not script.exists():
                pytest.skip(f"npm could not install axe-core (is the registry reachable?): {proc.stderr[-300:]}")
    return script


browser = pytest.fixture(scope="module", name="browser")(launch_chromium)
server = pytest.fixture(scope="module", name="server")(serve_with_instant_bots)


def audit(page: Any, axe: Path, where: str) -> None:
    """axe-core's serious and critical violations on the page as it is now: none."""
    page.add_script_tag(path=str(axe))
    found = page.evaluate(
        "async () => (await axe.run(document, {resultTypes: ['violations']})).violations"
        ".filter((v) => ['serious', 'critical'].includes(v.impact))"
        ".map((v) => `${v.id}: ${v.help} (${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join('; ')})`)"
    )
    assert found == [], f"{where}: {found}"


def small_targets(page: Any) -> list[str]:
    """Every visible button, select, text field or link of the controls smaller than 44 px high."""
    return list(
        page.evaluate(
            """() => [...document.querySelectorAll('button, select, input, #save, .handoff, summary')]
            .filter((e) => e.offsetParent !== null)
            .filter((e) => e.getBoundingClientRect().height < 43.5)
            .map((e) => `${e.tagName} ${e.id || e.className} ${Math.round(e.getBoundingClientRect().height)}`)"""
        )
    )


@pytest.mark.slow
@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_axe_finds_no_serious_violation_on_any_screen(server, browser, axe_script, scheme):
    phone = new_page(browser, PHONE, color_scheme=scheme)
    phone.goto(f"{server.url}/?variant=yamb")
    phone.wait_for_selector("#create:not([disabled])")
    audit(phone, axe_script, "the lobby")
    assert small_targets(phone) == []

    make_table(phone, server.url, "yamb", "invite")
    audit(phone, axe_script, "a table waiting for a player")
    desk = new_page(browser, DESKTOP, color_scheme=scheme)
    link = phone.url
    desk.goto(link)
    desk.fill("#seats li:nth-child(2) input", "bob")
    desk.click("#seats li:nth-child(2) button")
    phone.wait_for_selector("#controls:not([hidden])")  # a column game on a phone: the tabs, the rules' moves
    audit(phone, axe_script, "a column game on a phone, on its turn")
    assert small_targets(phone) == []
    desk.wait_for_selector("#cards .player-card")
    audit(desk, axe_script, "a column game on a desktop, waiting")
    desk.context.close()

    solo = new_page(browser, PHONE, color_scheme=scheme)
    make_table(solo, server.url, "kismet", "bot:greedy")
    solo.wait_for_selector("#controls:not([hidden])")
    solo.keyboard.press("2")
    audit(solo, axe_script, "a one-column card, a die kept")
    play_to_the_end([solo])
    audit(solo, axe_script, "the end of a game")
    assert small_targets(solo) == []

    two = new_page(browser, PHONE, color_scheme=scheme)  # two people at one phone: an undo, then the review
    make_table(two, server.url, "tiny", "hotseat")
    two.wait_for_selector("#controls:not([hidden])")
    two.locator("button.score").first.click()
    two.wait_for_selector("#undo:not([hidden])")
    audit(two, axe_script, "a score that can be taken back")
    assert small_targets(two) == []
    two.keyboard.press("u")
    two.wait_for_function("document.querySelector('#live').textContent.includes('took back')")
    audit(two, axe_script, "a score taken back")
    play_to_the_end([two])
    two.click("#review-link")
    two.wait_for_selector("#review-table tbody tr")
    audit(two, axe_script, "the review of a game on a phone")
    assert small_targets(two) == []
    wide = new_page(browser, DESKTOP, color_scheme=scheme)
    wide.goto(two.url)
    wide.wait_for_selector("#review-table tbody tr")
    audit(wide, axe_script, "the review of a game on a desktop")


@pytest.mark.slow
@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_axe_finds_no_serious_violation_in_the_trainer(server, browser, axe_script, scheme):
    phone = new_page(browser, PHONE, color_scheme=scheme)
    phone.goto(f"{server.url}/train?variant=yacht")
    phone.wait_for_selector("#train-variant option[value='yacht']", state="attached")
    audit(phone, axe_script, "the trainer before a drill")
    phone.click("#train-next")
    phone.wait_for_selector("#train-board:not([hidden])")
    audit(phone, axe_script, "a drill on a phone")
    assert small_targets(phone) == []
    phone.locator("#train-cards button.score").first.click()
    phone.wait_for_selector("#train-grade p")
    audit(phone, axe_script, "a graded drill on a phone")
    assert small_targets(phone) == []


def fetch(url: str, headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, {k.lower(): v for k, v in answer.headers.items()}, answer.read()
    except urllib.error.HTTPError as exc:
        return exc.code, {k.lower(): v for k, v in exc.headers.items()}, exc.read()


def test_the_pages_files_are_cached_by_their_content(server):
    status, headers, page = fetch(server.url + "/")
    assert status == 200 and headers["cache-control"] == "no-cache"
    version = page.decode().split('src="/static/v/', 1)[1].split("/", 1)[0]
    assert len(version) == 16 and f'href="/static/v/{version}/style.css"' in page.decode()
    status, again, _ = fetch(server.url + "/t/" + "A" * 16, {"If-None-Match": headers["etag"]})
    assert status == 304  # a reload asks, and the page it has is still the one

    status, kept, script = fetch(f"{server.url}/static/v/{version}/room.js")
    assert status == 200 and kept["cache-control"] == "public, max-age=31536000, immutable"
    assert kept["content-type"].startswith("text/javascript") and b"WebSocket" in script
    status, plain, same = fetch(f"{server.url}/static/room.js")
    assert status == 200 and same == script and plain["cache-control"] == "no-cache" and plain["etag"] == kept["etag"]
    assert fetch(f"{server.url}/static/room.js", {"If-None-Match": plain["etag"]})[0] == 304
    status, old, _ = fetch(f"{server.url}/static/v/0000000000000000/room.js")
    assert status == 200 and old["cache-control"] == "no-cache"  # another version's name: not kept for good
    status, _, body = fetch(f"{server.url}/static/v/{version}/nothing.js")
    assert status == 404 and b"error" in body
    assert fetch(f"{server.url}/static/..%2Fapp.py")[0] == 404
