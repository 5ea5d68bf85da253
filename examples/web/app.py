"""A browser game on the dicecup engine: pick any variant, play against bots, ask for hints.

Run it from the repository root (after `pip install -e '.[web]'`) and open the address it prints:

    python examples/web/app.py --port 8000

The page (static HTML, CSS and JavaScript beside this file, no build step) holds no rules. It
sends every click here as a move in the engine's own JSON form (`["keep", [5, 5]]`,
`["score", "full_house"]`, `["rule", "announced", "announce", "announce.yamb"]`), and this server
applies it with `GameState.apply`: an illegal click is refused with the engine's own message.
The server rolls the dice (`Game`, seeded) and plays the bots' turns between two human moves.

It offers a fixed list of bots (`--bots`, from those the page knows) and prepares their tables and the hints'
ahead, in a worker process (`preparing.py`): no request ever solves, a game that needs a table still being
prepared is answered 503 (try again), and SIGTERM stops the server, and the worker with it, at once.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import threading
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from dicecup import DicecupError, Engine, UnknownVariant, Variant
from dicecup.errors import bounded_line, shown
from dicecup.game.actions import action_from_json

sys.path.insert(0, str(Path(__file__).resolve().parent))  # preparing.py beside this file, however it is run
from games import HUMAN, Table, move_label
from preparing import (
    DEFAULT_BOTS,
    DEFAULT_MAX_STATES,
    FAILED,
    PAGE_BOTS,
    PENDING,
    TABLE_JOBS,
    Adviser,
    Job,
    Preparer,
    describe,
    hint_source,
    job,
)

HERE = Path(__file__).resolve().parent
MAX_BODY = 16 * 1024  # bytes: a request is a few hundred; a larger body is refused before it is read whole
MAX_GAMES = 64  # games kept in memory; starting one more forgets the one least recently played
MAX_SEED = 2**63 - 1
HINT_OPTIONS = 6  # ranked options a hint lists


class Refused(Exception):
    """A request this server refuses: an HTTP status and one message saying what and how to fix it."""

    def __init__(self, status: int, message: str, retry: int | None = None) -> None:
        super().__init__(bounded_line(message))
        self.status = status
        self.retry = retry  # seconds after which to ask again (503: tables still being prepared)


# ---------------------------------------------------------------------------- the server


class Lobby:
    """The engine, the variants and bots on offer, the tables prepared for them, and the games in progress (at
    most MAX_GAMES). `bots`: the bots offered (from PAGE_BOTS); `prepare`: the variants whose tables are
    prepared at start-up (None: every one); `preparer`: the worker preparing them (None: no bot or hint that
    needs a table is offered)."""

    def __init__(
        self,
        engine: Engine,
        files: list[Path],
        bots: tuple[str, ...] = DEFAULT_BOTS,
        preparer: Preparer | None = None,
        prepare: list[str] | None = None,
    ) -> None:
        self.engine = engine
        self.files: dict[str, Path] = {}  # extra variant files, by their ids
        for path in files:
            vid = engine.load_file(path).id
            if vid in engine.variant_ids() or vid in self.files:
                raise DicecupError(
                    f"--variant-file {path}: a variant {vid!r} is already offered; give the file another id"
                )
            self.files[vid] = path
        unknown = [b for b in bots if b not in PAGE_BOTS]
        if unknown:
            raise DicecupError(f"--bots: the page offers {', '.join(PAGE_BOTS)}, not {shown(unknown[0])}")
        self.bots = tuple(bots)
        self.preparer = preparer
        missing = [vid for vid in prepare or () if vid not in self.ids()]
        if missing:
            raise DicecupError(str(UnknownVariant(missing[0], self.ids())).replace("unknown", "--prepare: unknown", 1))
        self.prepared = set(self.ids() if prepare is None else prepare)
        self.games: OrderedDict[str, Table] = OrderedDict()
        self.lock = threading.Lock()
        self._catalogue: list[dict[str, Any]] | None = None

    def start_preparing(self) -> None:
        """Send the worker every table the offered bots and hints need, for each prepared variant's defaults."""
        if self.preparer is None:
            return
        for row in self._rows():
            if row["id"] in self.prepared:
                variant = self.variant(row["id"], None)
                kinds = [TABLE_JOBS[bot] for bot in row["can_play"] if bot in TABLE_JOBS]
                for kind in kinds + (["hints"] if row["can_hint"] else []):
                    self.preparer.ask(self.job(kind, variant))

    def job(self, kind: str, variant: Variant) -> Job:
        return job(kind, variant, str(self.files[variant.id]) if variant.id in self.files else None)

    def ready(self, item: Job, what: str) -> str:
        """What a prepared job made; Refused when it is not ready: 503 while it is prepared, 409 with the reason
        where it cannot be, or where this server does not prepare tables for the variant."""
        if self.preparer is None or item[1] not in self.prepared:
            raise Refused(
                409,
                f"{what} is not offered for {item[1]} on this server: its tables are not prepared here "
                f"(start the server with --prepare {item[1]})",
            )
        state, text = self.preparer.ask(item)
        if state == FAILED:
            raise Refused(409, f"{what} is not offered for {describe(item)} on this server: {text}")
        if state == PENDING:
            raise Refused(
                503, f"the tables {what} needs for {describe(item)} are being prepared; try again in a moment", 5
            )
        return text

    def variant(self, vid: Any, options: Any) -> Variant:
        """The variant a request names, with its options; Refused (4xx) saying what is wrong."""
        if not isinstance(vid, str):
            raise Refused(400, f"'variant' must be a variant id such as 'yahtzee', got {json.dumps(vid)[:40]}")
        if options is not None and (
            not isinstance(options, dict) or not all(isinstance(x, (str, int, bool)) for x in options.values())
        ):
            raise Refused(400, "'options' must be an object of option values such as {\"saved_rolls\": false}")
        if vid not in self.ids():
            raise Refused(404, str(UnknownVariant(vid, self.ids())))
        try:
            if vid in self.files:
                return self.engine.load_file(self.files[vid], options)
            return self.engine.variant(vid, options)
        except DicecupError as exc:  # an option it does not have, a value not among its choices
            raise Refused(400, str(exc)) from None

    def ids(self) -> list[str]:
        """Every variant on offer: the engine's (built-in and from plugins), then the extra files'."""
        return [*self.engine.variant_ids(), *self.files]

    def catalogue(self) -> list[dict[str, Any]]:
        """Every variant with its options, the offered bots that can play it and where its hints come from;
        a bot or hints that need tables only where they are prepared or being prepared ("preparing" lists
        those not ready yet)."""
        return [self._offer(row) for row in self._rows()]

    def _rows(self) -> list[dict[str, Any]]:
        """Every variant with its options, the offered bots that can play it, whether it can have hints."""
        if self._catalogue is None:
            rows = []
            for vid in self.ids():
                try:
                    v = self.variant(vid, None)
                except Refused:
                    continue  # a broken plugin variant is left out, not the whole list
                can_play = []
                for bot in self.bots:
                    try:
                        self.engine.check_bot(bot, v)
                    except DicecupError:
                        continue
                    can_play.append(bot)
                rows.append(
                    {
                        "id": vid,
                        "name": v.name,
                        "description": v.description,
                        "columns": len(v.columns),
                        "options": [
                            {"name": o.name, "default": o.default, "choices": list(o.choices)} for o in v.option_specs
                        ],
                        "can_play": can_play,
                        "can_hint": hint_source(v) is not None,
                    }
                )
            self._catalogue = rows
        return self._catalogue

    def _offer(self, row: dict[str, Any]) -> dict[str, Any]:
        """A catalogue row as the page reads it: the bots and hints on offer now, and those still prepared."""
        v = self.variant(row["id"], None)
        bots, preparing, hints = [], [], None
        for bot in row["can_play"]:
            if bot in TABLE_JOBS:
                state = self._state(self.job(TABLE_JOBS[bot], v))
                if state is None or state == FAILED:
                    continue
                if state == PENDING:
                    preparing.append(bot)
            bots.append(bot)
        if row["can_hint"]:
            state = self._state(self.job("hints", v))
            if state == PENDING:
                preparing.append("hints")
                hints = hint_source(v)
            elif state is not None and state != FAILED:
                hints = self.preparer.ask(self.job("hints", v))[1] if self.preparer else None
        out = {k: v for k, v in row.items() if k not in ("can_play", "can_hint")}
        return out | {"bots": bots, "hints": hints, "preparing": preparing}

    def _state(self, item: Job) -> str | None:
        """A job's state (None: tables this server does not prepare)."""
        if self.preparer is None or item[1] not in self.prepared:
            return None
        return self.preparer.ask(item)[0]

    def start(self, body: dict[str, Any]) -> Table:
        """A new game from `{"variant", "options", "players": [{"name", "kind"}], "seed", "hints"}`."""
        variant = self.variant(body.get("variant"), body.get("options"))
        players = body.get("players")
        if not isinstance(players, list) or not all(
            isinstance(p, dict) and isinstance(p.get("name"), str) and isinstance(p.get("kind", HUMAN), str)
            for p in players
        ):
            raise Refused(
                400, '\'players\' must be a list such as [{"name": "you"}, {"name": "bob", "kind": "greedy"}]'
            )
        seats = [(p["name"], p.get("kind", HUMAN)) for p in players]
        if HUMAN not in (kind for _, kind in seats):
            raise Refused(400, 'a browser game needs at least one human player (kind "human")')
        seed = body.get("seed")
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED):
            raise Refused(400, f"'seed' must be a whole number from 0 to {MAX_SEED}, or null for fresh dice")
        hints = body.get("hints", False)
        if not isinstance(hints, bool):
            raise Refused(400, "'hints' must be true or false")
        try:
            for _, kind in seats:
                if kind != HUMAN and kind not in self.bots:
                    raise Refused(
                        400, f"bot {shown(kind)} is not offered here; this server's bots: {', '.join(self.bots)}"
                    )
                if kind != HUMAN:
                    self.engine.check_bot(kind, variant)  # refused at once, with the reason, before any work
            for kind in sorted({kind for _, kind in seats} & set(TABLE_JOBS)):
                self.ready(self.job(TABLE_JOBS[kind], variant), f"bot:{kind}")  # ready, or refused: never solved here
            source = None
            if hints:
                if hint_source(variant) is None:
                    raise Refused(409, f"{variant.id} has no hints: neither the solver nor its estimate reaches it")
                source = self.ready(self.job("hints", variant), "hints")
            table = Table(self.engine, variant, seats, seed)
            if source is not None:
                table.adviser = Adviser(variant, source)  # loads the prepared tables (from the cache)
            table.run()
        except DicecupError as exc:
            raise Refused(400, str(exc)) from None
        with self.lock:
            self.games[table.id] = table
            while len(self.games) > MAX_GAMES:
                self.games.popitem(last=False)
        return table

    def table(self, game_id: str) -> Table:
        """The game `game_id`, now the most recently played; Refused (404) when there is none."""
        with self.lock:
            table = self.games.get(game_id)
            if table is None:
                raise Refused(404, f"no game {game_id[:40]!r} here (finished games are forgotten): start a new one")
            self.games.move_to_end(game_id)
            return table


async def read_json(request: Request) -> dict[str, Any]:
    """The request body as a JSON object, reading no more than MAX_BODY bytes of it; Refused (4xx) otherwise."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_BODY:
        raise Refused(413, f"the request body is {int(declared):,} bytes; at most {MAX_BODY:,} are accepted")
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_BODY:
            raise Refused(413, f"the request body is over {MAX_BODY:,} bytes; at most {MAX_BODY:,} are accepted")
    try:
        data = json.loads(body)
    except json.JSONDecodeError as exc:
        raise Refused(
            400, f"the request body is not JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}"
        ) from None
    except (UnicodeDecodeError, RecursionError, ValueError):
        raise Refused(
            400, "the request body is not JSON that can be read (not UTF-8, nested too deeply or a number too long)"
        ) from None
    if not isinstance(data, dict):
        raise Refused(400, f"the request body must be a JSON object, got {type(data).__name__}")
    return data


def create_app(
    engine: Engine | None = None,
    files: list[Path] | None = None,
    bots: tuple[str, ...] = DEFAULT_BOTS,
    prepare: list[str] | None = None,
    max_states: int = DEFAULT_MAX_STATES,
) -> Starlette:
    """The ASGI application: the page, its static files and the JSON API over one engine, offering `bots` (from
    PAGE_BOTS), with the tables of the variants `prepare` names (None: all) prepared ahead by a worker process
    that runs from the application's start-up to its shutdown, tables over `max_states` states refused."""
    lobby = Lobby(engine or Engine(), files or [], bots, None, prepare)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        lobby.preparer = Preparer(max_states)
        try:
            await run(lobby.start_preparing)
            yield
        finally:
            lobby.preparer.close()  # at once, mid-computation: what it finished stays cached

    def guarded(handler: Callable[..., Any]) -> Callable[[Request], Any]:
        """`handler` with every refusal turned into `{"error": message}` and its status (never a traceback)."""

        async def endpoint(request: Request) -> Response:
            try:
                return JSONResponse(await handler(request))
            except Refused as exc:
                retry = {"Retry-After": str(exc.retry)} if exc.retry else None
                return JSONResponse({"error": str(exc)}, status_code=exc.status, headers=retry)

        return endpoint

    async def variants(request: Request) -> Any:
        return await run(lobby.catalogue)

    async def start(request: Request) -> Any:
        body = await read_json(request)
        return (await run(lambda: lobby.start(body))).view()

    async def show(request: Request) -> Any:
        table = lobby.table(request.path_params["game"])
        return await run(lambda: locked(table, table.view))

    async def move(request: Request) -> Any:
        table = lobby.table(request.path_params["game"])
        body = await read_json(request)
        try:
            action = action_from_json(body.get("move"))
        except ValueError as exc:
            raise Refused(400, f"'move': {exc}") from None

        def play() -> dict[str, Any]:
            if not table.game.state.over and table.kinds[table.game.state.current] != HUMAN:
                raise Refused(409, "it is not a human player's turn")
            try:
                table.play(action)
            except DicecupError as exc:  # IllegalAction, DiceError: the engine's own message, nothing changed
                raise Refused(409, str(exc)) from None
            table.run()
            return table.view()

        return await run(lambda: locked(table, play))

    async def hint(request: Request) -> Any:
        table = lobby.table(request.path_params["game"])

        def advise() -> dict[str, Any]:
            state = table.game.state
            if table.adviser is None:
                raise Refused(409, "this game was started without hints")
            if state.over or state.is_chance or table.kinds[state.current] != HUMAN:
                raise Refused(409, "there is no decision of yours to advise on now")
            return table.adviser.hint(state, move_label, HINT_OPTIONS)

        return await run(lambda: locked(table, advise))

    async def save(request: Request) -> Any:
        table = lobby.table(request.path_params["game"])
        return await run(lambda: locked(table, table.game.state.to_dict))

    async def page(request: Request) -> Response:
        return FileResponse(HERE / "static" / "index.html")

    async def http_error(request: Request, exc: Exception) -> Response:
        """No such page, a method a route does not take, or a failure: one JSON message, never a traceback."""
        status = exc.status_code if isinstance(exc, HTTPException) else 500
        where = f"{request.method} {request.url.path}"
        text = {404: f"nothing at {where}", 405: f"{where}: method not allowed"}.get(status, f"{where} failed")
        return JSONResponse({"error": text}, status_code=status)

    return Starlette(
        routes=[
            Route("/", page),
            Route("/api/variants", guarded(variants)),
            Route("/api/games", guarded(start), methods=["POST"]),
            Route("/api/games/{game}", guarded(show)),
            Route("/api/games/{game}/move", guarded(move), methods=["POST"]),
            Route("/api/games/{game}/hint", guarded(hint)),
            Route("/api/games/{game}/save", guarded(save)),
            Mount("/static", StaticFiles(directory=HERE / "static"), name="static"),
        ],
        exception_handlers={HTTPException: http_error, Exception: http_error},
        lifespan=lifespan,
    )


async def run(work: Callable[[], Any]) -> Any:
    """Run engine work (a bot's turn, loading a prepared table) in a thread, so the server keeps answering."""
    from starlette.concurrency import run_in_threadpool

    return await run_in_threadpool(work)


def locked(table: Table, work: Callable[[], Any]) -> Any:
    """`work()` with the game to itself: two clicks at once are played one after the other."""
    with table.lock:
        return work()


def main() -> None:
    """The command line: serve the game on HOST:PORT."""
    import uvicorn

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default: this machine only)")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument(
        "--variant-file", action="append", type=Path, default=[], help="also offer this variant YAML file (repeatable)"
    )
    parser.add_argument(
        "--bots",
        default=",".join(DEFAULT_BOTS),
        help=f"the bots offered, from {', '.join(PAGE_BOTS)} (default: %(default)s; bot:strong's first fit of a "
        "variant takes many minutes)",
    )
    parser.add_argument(
        "--prepare",
        action="append",
        metavar="VARIANT",
        help="prepare the tables of this variant only (repeatable; default: every variant offered); the others "
        "offer no bot or hints that need tables",
    )
    parser.add_argument(
        "--max-states",
        type=int,
        default=DEFAULT_MAX_STATES,
        help="refuse tables of more states than this (default: %(default)s)",
    )
    args = parser.parse_args()
    bots = tuple(b.strip() for b in args.bots.split(",") if b.strip())
    try:
        if not 1 <= args.max_states <= 10**9:
            raise DicecupError(f"--max-states must be 1 to 1,000,000,000, got {shown(args.max_states)}")
        app = create_app(files=args.variant_file, bots=bots, prepare=args.prepare, max_states=args.max_states)
    except DicecupError as exc:
        parser.exit(2, bounded_line(f"error: {exc}") + "\n")
    print(f"dicecup web game on http://{args.host}:{args.port}/", flush=True)
    # a request never computes for long (tables are prepared by the worker), so shutdown waits a moment at most
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning", timeout_graceful_shutdown=3)


if __name__ == "__main__":
    main()
