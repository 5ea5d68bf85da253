"""The browser game (examples/web): its JSON API refuses bad requests with one precise message, and a real
headless Chromium (Debian's, driven by Playwright; no browser download) plays through the page."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dicecup import Engine, GameState, IllegalAction, Keep, Score, UnknownVariant
from dicecup.game.actions import action_to_json

APP = Path(__file__).resolve().parent.parent / "examples" / "web" / "app.py"
CHROMIUM = Path("/usr/bin/chromium")
SHOT = Path("/tmp/web-shot.png")

# Three dice, three boxes and a bonus: a whole two-player game is six decisions of the human's.
TINY = """\
id: tiny
name: Tiny
description: Three dice, three boxes, two rolls a turn.
dice: {count: 3, faces: 6}
turn: {rolls: 2}
boxes:
  sixes:  {name: Sixes,  section: upper, pattern: {kind: face, face: 6}, score: sum}
  triple: {name: Triple, section: lower, pattern: {kind: of_a_kind, n: 3}, score: 30}
  chance: {name: Chance, section: lower, pattern: always, score: total}
bonuses:
  upper_bonus: {kind: threshold, section: upper, at_least: 12, points: 10}
"""


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
            proc = subprocess.run(
                step,
                capture_output=True,
                text=True,
                timeout=900,
                env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"},
            )
            out = proc.stdout + proc.stderr
    if not CHROMIUM.exists():
        pytest.skip(f"chromium could not be installed with apt-get: {out.strip().splitlines()[-1:]}")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launch(folder: Path, *args: str) -> tuple[subprocess.Popen, str, Any]:
    """The app started as its README says (with `args`), its tables cached in `folder`: (process, address, log)."""
    port = free_port()
    log = open(folder / "server.log", "w+")  # a file, not a pipe: a pipe nobody reads would fill and stall it
    env = {**os.environ, "DICECUP_CACHE_DIR": str(folder / "cache"), "DICECUP_STATE_DIR": str(folder / "state")}
    proc = subprocess.Popen(
        [sys.executable, str(APP), "--port", str(port), *args], stdout=log, stderr=subprocess.STDOUT, text=True, env=env
    )
    deadline = time.monotonic() + 60
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                break
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                pytest.fail(f"the web app did not start: {(folder / 'server.log').read_text()}")
            time.sleep(0.1)
    return proc, f"http://127.0.0.1:{port}", log


def stop(proc: subprocess.Popen, log: Any, folder: Path, url: str) -> str:
    """Stop the app as a service manager would (SIGTERM) and return its log, checked: no request failed."""
    proc.terminate()
    proc.wait(timeout=10)
    log.close()
    out = (folder / "server.log").read_text()
    assert out.startswith(f"dicecup web game on {url}/") and "Traceback" not in out, out
    return out


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[str]:
    """The app with the tiny variant file offered too, the tables of tiny, Yahtzee and Triple Yahtzee prepared."""
    folder = tmp_path_factory.mktemp("web")
    tiny = folder / "tiny.yaml"
    tiny.write_text(TINY)
    proc, url, log = launch(
        folder, "--variant-file", str(tiny), "--prepare", "tiny", "--prepare", "yahtzee", "--prepare", "triple-yahtzee"
    )
    yield url
    stop(proc, log, folder, url)


def call(url: str, body: bytes | None = None, method: str | None = None) -> tuple[int, Any]:
    """(status, JSON answer) of one request."""
    req = urllib.request.Request(url, data=body, method=method, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=60) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def post(url: str, data: Any) -> tuple[int, Any]:
    return call(url, json.dumps(data).encode())


def new_game(server: str, **body: Any) -> dict[str, Any]:
    """A game started as the page starts one: asked again while the server says its tables are being prepared."""
    for _ in range(240):
        status, game = post(f"{server}/api/games", body)
        if status != 503:
            break
        assert "being prepared; try again in a moment" in game["error"]
        time.sleep(0.5)
    assert status == 200, game
    return game


def saved(server: str, game_id: str, engine: Engine) -> GameState:
    """The game on the server, rebuilt here from its save (`GameState.to_dict`)."""
    status, data = call(f"{server}/api/games/{game_id}/save")
    assert status == 200
    return GameState.from_dict(data, engine)


def engine_message(state: GameState, action: Any) -> str:
    with pytest.raises(IllegalAction) as exc:
        state.apply(action)
    return str(exc.value)


# ---------------------------------------------------------------------------- the JSON API


def test_the_catalogue_lists_every_variant_with_its_bots_and_hints(server, engine):
    status, rows = call(f"{server}/api/variants")
    assert status == 200
    by_id = {r["id"]: r for r in rows}
    assert list(by_id) == [*engine.variant_ids(), "tiny"]
    assert by_id["yahtzee"]["hints"] == "exact" and "optimal" in by_id["yahtzee"]["bots"]
    assert by_id["triple-yahtzee"]["hints"] == "estimate" and "optimal" not in by_id["triple-yahtzee"]["bots"]
    assert by_id["yamb"]["columns"] == 4
    specs = engine.variant("maxi-yatzy").option_specs
    assert by_id["maxi-yatzy"]["options"] == [
        {"name": o.name, "default": o.default, "choices": list(o.choices)} for o in specs
    ]
    assert {"name": "saved_rolls", "default": True, "choices": [True, False]} in by_id["maxi-yatzy"]["options"]


@pytest.mark.parametrize(
    ("body", "status", "says"),
    [
        (
            b"{",
            400,
            "the request body is not JSON: Expecting property name enclosed in double quotes at line 1, column 2",
        ),
        (b"[1, 2]", 400, "the request body must be a JSON object, got list"),
        (b"[" * 5000, 400, "the request body is not JSON"),
        (b'{"seed": 1' + b"0" * 5000 + b"}", 400, "the request body is not JSON"),
        (b"\xff\xfe{}", 400, "the request body is not JSON"),
        (b'{"variant": 7, "players": []}', 400, "'variant' must be a variant id such as 'yahtzee', got 7"),
        (b'{"variant": "yacht", "players": "ann"}', 400, "'players' must be a list such as"),
        (b'{"variant": "yacht", "players": [{"name": "a", "kind": "greedy"}]}', 400, "at least one human player"),
        (b'{"variant": "yacht", "players": [{"name": "a"}], "seed": "7"}', 400, "'seed' must be a whole number"),
        (b'{"variant": "yacht", "players": [{"name": "a"}], "hints": 1}', 400, "'hints' must be true or false"),
        (
            b'{"variant": "yacht", "players": [{"name": "a"}, {"name": "b", "kind": "ai"}]}',
            400,
            "bot 'ai' is not offered here; this server's bots: greedy, random, optimal",
        ),
        (
            b'{"variant": "yacht", "players": [{"name": "a"}, {"name": "a", "kind": "greedy"}]}',
            400,
            "player names must differ",
        ),
        (
            b'{"variant": "yamb", "players": [{"name": "a"}, {"name": "b", "kind": "optimal"}]}',
            400,
            "yamb: its rules add actions",
        ),
        (b'{"variant": "maxi-yatzy", "options": {"saved_rolls": 3}, "players": [{"name": "a"}]}', 400, "saved_rolls"),
        (b'{"variant": "maxi-yatzy", "options": [1], "players": [{"name": "a"}]}', 400, "'options' must be an object"),
    ],
)
def test_a_bad_request_to_start_a_game_gets_one_message(server, body, status, says):
    got, answer = call(f"{server}/api/games", body)
    assert got == status
    assert list(answer) == ["error"] and says in answer["error"], answer
    assert "Traceback" not in answer["error"]


def test_an_unknown_variant_is_refused_with_the_engines_message(server, engine):
    status, answer = post(f"{server}/api/games", {"variant": "nope", "players": [{"name": "a"}]})
    assert status == 404
    assert answer == {"error": str(UnknownVariant("nope", [*engine.variant_ids(), "tiny"]))}


def raw_post(server: str, head: bytes, body: bytes) -> tuple[bytes, Any]:
    """(status line, JSON answer) of a POST /api/games sent as these bytes after its first line."""
    port = int(server.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=30) as conn:
        conn.sendall(b"POST /api/games HTTP/1.1\r\nHost: here\r\n" + head + b"\r\n" + body)
        reply = b""
        while b"}" not in reply.partition(b"\r\n\r\n")[2] and (got := conn.recv(4096)):
            reply += got
    status, _, answer = reply.partition(b"\r\n\r\n")
    return status.split(b"\r\n")[0], json.loads(answer)


def test_a_huge_body_is_refused_before_it_is_read_whole_and_the_server_goes_on(server):
    # a size announced over the limit: refused at once, before a byte of it is sent
    status, answer = raw_post(server, b"Content-Length: 20000000\r\n", b"")
    assert status.startswith(b"HTTP/1.1 413 ")
    assert answer == {"error": "the request body is 20,000,000 bytes; at most 16,384 are accepted"}
    # a size not announced (chunks): read up to the limit, then refused; the body's end is never sent
    over = 16 * 1024 + 1
    status, answer = raw_post(server, b"Transfer-Encoding: chunked\r\n", b"%x\r\n" % over + b" " * over + b"\r\n")
    assert status.startswith(b"HTTP/1.1 413 ")
    assert answer == {"error": "the request body is over 16,384 bytes; at most 16,384 are accepted"}
    assert call(f"{server}/api/variants")[0] == 200


def test_moves_are_checked_by_the_engine(server, engine):
    game = new_game(server, variant="yacht", players=[{"name": "ann"}, {"name": "bob", "kind": "greedy"}], seed=4)
    moves = f"{server}/api/games/{game['id']}/move"
    state = saved(server, game["id"], engine)
    for move in (["keep", list(state.dice) * 2], ["score", "nope"], ["keep", [1, 2, 3, 4, 5]]):
        status, answer = post(moves, {"move": move})
        assert status == 409
        assert answer == {"error": engine_message(state, Keep(move[1]) if move[0] == "keep" else Score(move[1]))}
    assert post(moves, {"move": "score"}) == (
        400,
        {"error": "'move': each move must be a list such as [\"roll\", [1, 2, 3, 4, 5]]"},
    )
    assert post(moves, {"move": ["score", 3]})[1]["error"].startswith("'move': a box id is a string")
    assert saved(server, game["id"], engine).history == state.history  # nothing refused changed the game
    status, after = post(moves, {"move": ["score", "choice"]})
    assert status == 200 and after["players"][0]["scores"]["choice"] == sum(state.dice)
    assert after["your_turn"] and after["current"] == 0  # bob's whole turn was played in between
    assert any(line.startswith("bob: score") for line in after["log"])
    assert call(f"{server}/api/games/nope/move", b'{"move": ["score", "choice"]}')[0] == 404
    assert call(f"{server}/api/games/{game['id']}/hint") == (409, {"error": "this game was started without hints"})


def test_beyond_the_exact_solver_hints_are_estimates_that_rank_legal_moves(server, engine):
    game = new_game(server, variant="triple-yahtzee", players=[{"name": "ann"}], seed=2, hints=True)
    assert game["hints"] == "estimate"
    status, hint = call(f"{server}/api/games/{game['id']}/hint")
    assert status == 200 and hint["source"] == "estimate"
    state = saved(server, game["id"], engine)
    legal = [action_to_json(a) for a in state.legal_actions()]
    assert hint["best"]["move"] in legal and all(o["move"] in legal for o in hint["options"])
    values = [o["value"] for o in hint["options"]]
    assert len(values) == 6 and values == sorted(values, reverse=True)
    status, after = post(f"{server}/api/games/{game['id']}/move", {"move": hint["best"]["move"]})
    assert status == 200 and after["log"][-2].startswith(f"ann: {hint['best']['label']}")  # then the next roll


# ---------------------------------------------------------------------------- bots, tables, shutdown


@pytest.mark.parametrize("kind", ["target:300", "risk:0.05", "win", "strong", "optimal:1", "x" * 5000])
def test_only_the_bots_the_page_offers_are_taken(server, kind):
    """Any other bot (target:300 computed for minutes at 3 GB in one request) is refused before any work."""
    status, answer = post(
        f"{server}/api/games", {"variant": "yahtzee", "players": [{"name": "a"}, {"name": "b", "kind": kind}]}
    )
    assert status == 400 and "is not offered here; this server's bots: greedy, random, optimal" in answer["error"]
    assert len(answer["error"]) < 200


def test_the_catalogue_offers_only_the_servers_bots(server):
    rows = call(f"{server}/api/variants")[1]
    assert all(set(r["bots"]) <= {"greedy", "random", "optimal"} for r in rows)
    by_id = {r["id"]: r for r in rows}
    assert "optimal" not in by_id["yatzy"]["bots"] and by_id["yatzy"]["hints"] is None  # its tables: not prepared here


def test_a_variant_whose_tables_are_not_prepared_says_how_to_get_them(server):
    status, answer = post(
        f"{server}/api/games", {"variant": "yatzy", "players": [{"name": "a"}, {"name": "b", "kind": "optimal"}]}
    )
    assert (status, answer["error"]) == (
        409,
        "bot:optimal is not offered for yatzy on this server: its tables are not prepared here "
        "(start the server with --prepare yatzy)",
    )
    status, answer = post(f"{server}/api/games", {"variant": "yatzy", "players": [{"name": "a"}], "hints": True})
    assert status == 409 and "hints is not offered for yatzy" in answer["error"]


def test_a_table_too_large_for_the_server_is_refused_with_its_size(tmp_path):
    proc, url, log = launch(tmp_path, "--prepare", "yacht", "--max-states", "1000")
    try:
        for _ in range(240):  # the worker finds yacht's 4,096 states over the limit
            rows = {r["id"]: r for r in call(f"{url}/api/variants")[1]}
            if not rows["yacht"]["preparing"]:
                break
            time.sleep(0.25)
        # beyond the limit no bot:optimal; hints fall back to the estimate from the card's parts
        assert rows["yacht"]["bots"] == ["greedy", "random"] and rows["yacht"]["hints"] == "estimate"
        status, answer = post(
            f"{url}/api/games", {"variant": "yacht", "players": [{"name": "a"}, {"name": "b", "kind": "optimal"}]}
        )
        assert status == 409 and answer["error"].startswith("bot:optimal is not offered for yacht on this server: ")
        assert "states, above the limit of 1,000; raise it with --max-states" in answer["error"]
        assert new_game(url, variant="yacht", players=[{"name": "a"}, {"name": "b", "kind": "greedy"}])["id"]
    finally:
        stop(proc, log, tmp_path, url)


def test_a_game_waits_for_its_tables_and_sigterm_stops_the_server_mid_computation(tmp_path):
    """A request never computes: while the worker prepares Yahtzee's table a game that needs it is told to
    come back (503, Retry-After); SIGTERM then ends the server and the worker at once, mid-solve."""
    psutil = pytest.importorskip("psutil")
    proc, url, log = launch(tmp_path, "--prepare", "yahtzee")  # a fresh cache: the worker solves Yahtzee now
    body = {"variant": "yahtzee", "players": [{"name": "a"}, {"name": "b", "kind": "optimal"}]}
    req = urllib.request.Request(f"{url}/api/games", data=json.dumps(body).encode(), method="POST")
    started = time.monotonic()
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(req, timeout=10)
    assert time.monotonic() - started < 5  # answered at once, not after the solve
    assert refused.value.code == 503 and refused.value.headers["Retry-After"] == "5"
    assert json.loads(refused.value.read())["error"] == (
        "the tables bot:optimal needs for yahtzee (joker=free) are being prepared; try again in a moment"
    )
    workers = psutil.Process(proc.pid).children(recursive=True)
    assert any(w.is_running() for w in workers)  # the worker, computing
    started = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=15)
    assert time.monotonic() - started < 10
    gone, alive = psutil.wait_procs(workers, timeout=5)
    assert not alive, alive
    log.close()
    assert "Traceback" not in (tmp_path / "server.log").read_text()


# ---------------------------------------------------------------------------- in the browser


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    ensure_chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=str(CHROMIUM), headless=True)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser) -> Iterator[Any]:
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.set_default_timeout(30_000)
    yield page
    page.close()


def start(
    page: Any, server: str, variant: str, opponents: int, bot: str = "greedy", hints: bool = False
) -> dict[str, Any]:
    """Choose a game on the page and start it; the server's first answer."""
    page.goto(f"{server}/?variant={variant}")
    page.select_option("#opponents", str(opponents))
    if opponents:
        page.select_option("#bot", bot)
    page.set_checked("#hints", hints)
    page.fill("#seed", "11")
    with page.expect_response(lambda r: r.url.endswith("/api/games") and r.status != 503, timeout=120_000) as answer:
        page.click("#start")  # the page asks again while the server prepares the game's tables (503)
    page.wait_for_selector("#game:not([hidden])")
    return answer.value.json()


def click_move(page: Any, move: list[Any]) -> dict[str, Any]:
    """Make a move as a person would (pick the dice and press keep, or click the box); the server's answer."""
    with page.expect_response(lambda r: r.url.endswith("/move")) as answer:
        if move[0] == "keep":
            wanted = list(move[1])
            for die in page.locator("#dice .die").all():
                if int(die.inner_text()) in wanted:
                    wanted.remove(int(die.inner_text()))
                    die.click()
            assert not wanted
            page.click("#keep")
        else:
            page.click(f'td[data-box="{move[1]}"][data-player="0"]')
    return answer.value.json()


def test_a_whole_game_against_bot_optimal_with_hints_in_chromium(page, server, engine, tmp_path):
    game = start(page, server, "tiny", opponents=1, bot="optimal", hints=True)
    assert page.inner_text("#title") == "Tiny"
    refused, rerolls = False, 0
    for _ in range(20):
        if page.locator("#result").is_visible():
            break
        page.click("#hint")
        move = json.loads(page.wait_for_selector("#advice button.best").get_attribute("data-move"))
        assert page.locator("#advice li").count() >= 1
        before = page.locator("#dice .die").all_inner_texts()
        answer = click_move(page, move)
        assert "error" not in answer, answer
        if move[0] == "keep" and answer["your_turn"]:  # rerolled: the kept dice stay where they were, marked
            held = page.locator("#dice .die.held")
            assert sorted(int(d) for d in held.all_inner_texts()) == move[1]
            for i in (int(x) for x in page.eval_on_selector_all("#dice .die.held", "ds => ds.map(d => d.dataset.die)")):
                assert page.locator("#dice .die").nth(i).inner_text() == before[i]
            shown = sorted(int(d) for d in page.locator("#dice .die").all_inner_texts())
            assert shown == sorted(answer["dice"])
            rerolls += 1
        if move[0] == "score" and not refused and not answer["over"]:
            # an illegal click: the filled box again; the engine refuses it, and the page says why
            state = saved(server, game["id"], engine)
            page.click(f'td[data-box="{move[1]}"][data-player="0"]')
            page.wait_for_selector("#message.error")
            assert page.inner_text("#message") == engine_message(state, Score(move[1]))
            assert saved(server, game["id"], engine).history == state.history
            refused = True
    assert refused and rerolls  # the seed gives both (the same seed, the same game)
    final = saved(server, game["id"], engine)
    assert final.over
    page.wait_for_selector("#result .winner")
    winners = final.winners()
    assert page.inner_text("#result .winner") == (
        f"Winner: {winners[0]}" if len(winners) == 1 else f"Tie: {', '.join(winners)}"
    )
    rows = page.locator("#ranking tr").all_inner_texts()[1:]
    totals = dict(zip(final.players, final.match_totals(), strict=True))
    assert sorted(int(r.split("\t")[2]) for r in rows) == sorted(totals.values())
    for name, total in totals.items():
        assert page.inner_text(f'td[data-total="{name}"]') == str(total)
    page.reload()  # the address names the game: it is shown again, finished
    assert page.inner_text("#result .winner").startswith(("Winner: ", "Tie: "))
    assert page.locator("#setup").is_hidden()
    page.screenshot(path=str(tmp_path / "final.png"), full_page=True)
    page.screenshot(path="/tmp/web-shot-final.png", full_page=True)


def test_yamb_shows_its_columns_refuses_an_out_of_order_box_and_offers_announcing(page, server, engine, tmp_path):
    game = start(page, server, "yamb", opponents=1)
    assert page.locator("table.card").count() == 2  # one card per player, rows by columns
    heads = page.locator("table.card").first.locator("thead th").all_inner_texts()[1:]
    assert heads == ["Down ↓", "Up ↑", "Free", "Announce"]
    assert page.locator('table.card td[data-player="0"][data-box^="announce."]').count() == 13
    state = saved(server, game["id"], engine)
    page.click('td[data-box="down.twos"][data-player="0"]')  # the down column is filled from the top
    page.wait_for_selector("#message.error")
    assert page.inner_text("#message") == engine_message(state, Score("down.twos"))
    # right after the first roll the rules offer announcing; the page lists what they offer
    offered = [a for a in state.rule_actions() if a.name == "announce"]
    assert page.locator('select[data-verb="announce"] option').count() == len(offered) == 13
    page.locator("#dice .die").first.click()  # picked to keep: only the page knows, until the keep is sent
    assert page.locator("#dice .die.kept").count() == 1
    page.screenshot(path=str(SHOT), full_page=True)  # the card, the refusal, the dice, the announcements
    page.select_option(
        'select[data-verb="announce"]',
        json.dumps(["rule", "announced", "announce", "announce.yamb"], separators=(",", ":")),
    )
    with page.expect_response(lambda r: r.url.endswith("/move")):
        page.click('button[data-verb="announce"]')
    page.wait_for_function("document.querySelector('#notes').innerText.includes('Yamb')")
    after = saved(server, game["id"], engine)
    assert list(after.rule_actions()) == []
    assert all(line in page.inner_text("#notes") for line in after.turn_status() if line)
    assert page.locator("td.open.legal").all() and all(
        c.get_attribute("data-box") == "announce.yamb" for c in page.locator("td.open.legal").all()
    )
    page.screenshot(path=str(tmp_path / "yamb.png"), full_page=True)


def test_kismet_dice_are_coloured_and_maxi_yatzy_banks_rolls(page, server, engine):
    start(page, server, "kismet", opponents=0)
    colours = engine.variant("kismet").attributes["colour"]
    dice = page.locator("#dice .die").all()
    assert len(dice) == 5
    for die in dice:
        assert die.get_attribute("style") == f"color: {colours[int(die.inner_text())]}"
    game = start(page, server, "maxi-yatzy", opponents=0)
    assert "2 rolls left" in page.inner_text("#turn")  # the turn's first roll is made
    answer = click_move(page, ["score", "chance"])  # at once: two rolls are banked
    assert answer["players"][0]["banked"] == 2
    assert "4 rolls left (2 banked)" in page.inner_text("#turn")
    assert saved(server, game["id"], engine).rolls_left == 4


def test_triple_yahtzee_card_has_its_multiplied_columns(page, server):
    start(page, server, "triple-yahtzee", opponents=2)
    assert page.locator("table.card").count() == 3
    heads = page.locator("table.card").first.locator("thead th").all_inner_texts()[1:]
    assert heads == ["x1", "x2", "x3"]
    assert page.locator("td.open.legal").count() > 0
