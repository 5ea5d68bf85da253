"""The ASGI application: the page, the HTTP API, the WebSocket, and their life from start to shutdown.

Everything the server holds lives on one `Server` object made per app (no module state): the
store, the tables in memory, the bots' processes, the rate limits. On shutdown (SIGTERM, Ctrl-C)
the bots' processes are killed at once, whatever they are computing, and the store is closed.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from importlib import resources
from pathlib import Path
from typing import Any

from jsonschema.exceptions import best_match
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Route, WebSocketRoute
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from starlette.websockets import WebSocket

from .. import __version__
from ..language.engine import Engine
from ..locales import LANGUAGES, catalog_json
from .assets import Assets
from .config import ServerConfig, ServerError
from .hall import Hall
from .limits import Buckets, client_address, read_json
from .lobby import Lobby
from .openapi import openapi
from .opening import open_store
from .protocol import VERSION, Refused, validator
from .reviews import Reviews
from .sockets import serve_socket
from .store import Store
from .training import Training
from .workers import Workers

__all__ = ["Server", "create_app"]

log = logging.getLogger("dicecup.server")
HERE = Path(str(resources.files(__package__ or "dicecup.server")))
SWEEP_SECONDS = 5.0
SECURITY_HEADERS = [
    (
        b"content-security-policy",
        b"default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        b"connect-src 'self' ws: wss:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
    ),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),  # a table's link never leaks to another site
    (b"x-frame-options", b"DENY"),
]


class Server:
    """One server process's state: made by `create_app`, opened by the app's lifespan."""

    def __init__(self, config: ServerConfig, engine: Engine, store: Store | None = None) -> None:
        self.config = config
        self.engine = engine
        self.store = store or open_store(config.db_url)
        self.workers = Workers(engine, config.bot_workers)
        self.hall = Hall(engine, config, self.store, self.workers)
        self.lobby = Lobby(engine, config, self.hall)
        self.reviews = Reviews(self.lobby)
        self.training = Training(self.lobby)
        self.requests = Buckets(config.requests_per_second, config.request_burst)
        self.connections: dict[str, int] = {}
        self._sweeper: asyncio.Task[None] | None = None

    async def open(self) -> None:
        await self.store.open()
        await self.store.listen(self.hall.heard)
        self._sweeper = asyncio.create_task(self._sweep())
        for item in self.config.prepare:
            vid, _, spec = item.partition(":bot:")
            if not spec:
                raise ServerError(f"--prepare takes VARIANT:bot:NAME such as yahtzee:bot:optimal, got {item!r}")
            try:
                await self.lobby.prepare(vid, spec)
            except Refused as exc:
                raise ServerError(f"--prepare {item}: {exc.message}") from None

    async def _sweep(self) -> None:
        """Forget the tables nobody watches, and now and then collect the garbage in reference cycles: the
        collector is tuned to pass rarely over old objects, and a library's cycles (on Python 3.11, asyncio's
        transport of each closed connection) would wait hours for it. A full pass takes milliseconds."""
        collected = time.monotonic()
        while True:
            await asyncio.sleep(SWEEP_SECONDS)
            self.hall.sweep(time.time())
            if time.monotonic() - collected >= self.config.collect_seconds:
                gc.collect()
                collected = time.monotonic()

    async def close(self) -> None:
        if self._sweeper is not None:
            self._sweeper.cancel()
        self.workers.stop()  # first: a bot mid-computation must not hold the shutdown
        await self.hall.stop()
        await self.store.close()


def _error(
    status: int, message: str, code: str, params: dict[str, Any] | None = None, retry_after: int | None = None
) -> JSONResponse:
    """One refusal: the English `error`, and the `code` and `params` a page words it by in its own language."""
    headers = {"retry-after": str(retry_after)} if retry_after else None
    body = {"error": message, "code": code, "params": {k: str(v) for k, v in (params or {}).items()}}
    return JSONResponse(body, status_code=status, headers=headers)


def _checked(body: dict[str, Any], definition: str) -> dict[str, Any]:
    """A request body checked against its schema in http.json; Refused (400) naming what is wrong."""
    problem = best_match(validator("http", definition).iter_errors(body))
    if problem is not None:
        where = "".join(f"[{p!r}]" if isinstance(p, int) else f".{p}" for p in problem.absolute_path)
        raise Refused(400, f"the request body{where}: {problem.message[:300]}", code="malformed")
    return body


def _training_routes(server: Server, api: Callable[[Any], Any]) -> list[Route]:
    """The trainer's two requests (`server.training`): a drill, and a move's grade."""
    config = server.config

    async def drill(request: Request) -> Any:
        _same_origin(request, config)
        return await server.training.drill(_checked(await read_json(request, config.max_body_bytes), "drillAsk"))

    async def grade(request: Request) -> Any:
        _same_origin(request, config)
        return await server.training.grade(_checked(await read_json(request, config.max_body_bytes), "gradeAsk"))

    return [
        Route("/api/train/drill", api(drill), methods=["POST"]),
        Route("/api/train/grade", api(grade), methods=["POST"]),
    ]


def _routes(server: Server) -> list[Any]:
    lobby, config = server.lobby, server.config
    assets = Assets(HERE / "static")
    Handler = Callable[[Request], Awaitable[Any]]

    def api(handler: Handler, status: int = 200) -> Callable[[Request], Awaitable[Response]]:
        """`handler` rate-limited per address, its answer JSON, every refusal one `{"error"}` with its status."""

        async def endpoint(request: Request) -> Response:
            if not server.requests.take(client_address(request.scope)):
                rate = f"{config.requests_per_second:g}"
                return _error(
                    429,
                    f"at most {rate} requests a second from one address; slow down",
                    "rate_limited",
                    {"rate": rate},
                    1,
                )
            try:
                answer = await handler(request)
            except Refused as exc:
                return _error(exc.status, exc.message, exc.code, exc.params, exc.retry_after)
            return answer if isinstance(answer, Response) else JSONResponse(answer, status_code=status)

        return endpoint

    async def variants(request: Request) -> Any:
        return await asyncio.to_thread(lobby.catalogue)

    async def create(request: Request) -> Any:
        _same_origin(request, config)
        body = _checked(await read_json(request, config.max_body_bytes), "newTable")
        return await lobby.create(body, client_address(request.scope))

    async def show(request: Request) -> Any:
        return await lobby.view(_code(request))

    async def claim(request: Request) -> Any:
        _same_origin(request, config)
        body = _checked(await read_json(request, config.max_body_bytes), "claim")
        seat = request.path_params["seat"]
        return await lobby.claim(_code(request), seat, body["name"])

    async def hint(request: Request) -> Any:
        _same_origin(request, config)
        body = _checked(await read_json(request, config.max_body_bytes), "hintAsk")
        return await lobby.hint(_code(request), body["token"], body.get("lang", "en"))

    async def review(request: Request) -> Any:
        return await server.reviews.review(_code(request), _seat(request))

    async def save(request: Request) -> Any:
        code = _code(request)
        data = await lobby.save(code)
        disposition = f'attachment; filename="dicecup-{code}.json"'
        return Response(data, media_type="application/x-ndjson", headers={"content-disposition": disposition})

    async def socket(websocket: WebSocket) -> None:
        await serve_socket(websocket, server.hall, server.connections)

    return [
        Route("/", assets.page),
        Route("/t/{code}", assets.page),
        Route("/t/{code}/review", assets.page),
        Route("/train", assets.page),
        *_described(server, api),
        Route("/api/variants", api(variants)),
        Route("/api/tables", api(create, 201), methods=["POST"]),
        Route("/api/tables/{code}", api(show)),
        Route("/api/tables/{code}/seats/{seat:int}", api(claim), methods=["POST"]),
        Route("/api/tables/{code}/hint", api(hint), methods=["POST"]),
        Route("/api/tables/{code}/review", api(review)),
        Route("/api/tables/{code}/save", api(save)),
        *_training_routes(server, api),
        WebSocketRoute("/ws", socket),
        Route("/static/v/{version}/{name}", assets.file),
        Route("/static/{name}", assets.file),
    ]


def _described(server: Server, api: Callable[[Any], Any]) -> list[Route]:
    """The routes that describe the server: its health, the OpenAPI description, the protocol's schemas and
    the page's messages in each language (`api`: the JSON endpoint of a handler, rate-limited)."""
    catalogs: dict[str, dict[str, Any]] = {}  # the page's messages by language (a handful, read once)

    async def health(request: Request) -> Any:
        return {"status": "ok", "version": __version__, "database": server.store.kind, "protocol": VERSION}

    async def spec(request: Request) -> Any:
        return openapi()

    async def schemas(request: Request) -> Response:
        name = request.path_params["name"]
        if name not in ("client.json", "server.json", "http.json"):
            return _error(404, f"no schema {name[:60]!r}; schemas: client.json, server.json, http.json", "not_found")
        return FileResponse(HERE / "schemas" / f"v{VERSION}" / name, media_type="application/json")

    async def messages(request: Request) -> Any:
        lang = request.path_params["lang"]
        if lang not in LANGUAGES:
            raise Refused(404, f"no language {lang[:20]!r}; languages: {', '.join(LANGUAGES)}", code="not_found")
        if lang not in catalogs:
            catalogs[lang] = await asyncio.to_thread(catalog_json, lang)
        return catalogs[lang]

    return [
        Route("/openapi.json", api(spec)),
        Route("/schemas/v1/{name}", schemas),
        Route("/api/health", api(health)),
        Route("/api/messages/{lang}", api(messages)),
    ]


def _code(request: Request) -> str:
    code = request.path_params["code"]
    if len(code) != 16 or not all(c.isalnum() or c in "-_" for c in code) or not code.isascii():
        raise Refused(
            404, "no such table: a table's code is the 16 characters after /t/ in its link", code="unknown_table"
        )
    return str(code)


def _seat(request: Request) -> int | None:
    """The `seat` a request's query names (none: every seat); Refused (400) for anything but a seat number."""
    seat = request.query_params.get("seat")
    if seat is None:
        return None
    if not (seat.isdigit() and seat.isascii() and len(seat) <= 2):
        raise Refused(400, f"seat is a seat's number from 0, such as ?seat=0; got {seat[:20]!r}", code="malformed")
    return int(seat)


def _same_origin(request: Request, config: ServerConfig) -> None:
    """A browser's request from another site may not create tables or take seats (the WebSocket's rule)."""
    from .sockets import origin_allowed

    if not origin_allowed(request.headers, request.url.scheme, config.allow_origins):
        raise Refused(403, "requests from another site's page are refused (see --allow-origin)", code="cross_site")


class SecurityHeaders:
    """Every HTTP answer says: scripts only from here, no framing, no referrer, no sniffing."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                message.setdefault("headers", [])
                message["headers"] = [*message["headers"], *SECURITY_HEADERS]
            await send(message)

        await self.app(scope, receive, sending)


def create_app(
    config: ServerConfig | None = None, engine: Engine | None = None, store: Store | None = None
) -> Starlette:
    """The ASGI app serving one `Server` (its database opened at startup, closed at shutdown)."""
    config = config or ServerConfig()
    server = Server(config, engine or Engine(), store)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        await server.open()
        try:
            yield
        finally:
            await server.close()

    async def failed(request: Request, exc: Exception) -> Response:
        """No such page, a method a route does not take, or a failure: one JSON message, never a traceback."""
        status = exc.status_code if isinstance(exc, HTTPException) else 500
        where = f"{request.method} {request.url.path[:200]}"
        if status == 500:
            log.error("%s failed", where, exc_info=exc)
        text = {404: f"nothing at {where}", 405: f"{where}: method not allowed"}.get(status, f"{where} failed")
        return _error(status, text, {404: "not_found", 405: "malformed"}.get(status, "internal"))

    app = Starlette(
        routes=_routes(server),
        lifespan=lifespan,
        exception_handlers={HTTPException: failed, Exception: failed},
    )
    app.add_middleware(SecurityHeaders)
    app.state.server = server
    return app
