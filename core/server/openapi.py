"""The OpenAPI 3.1 description of the server's HTTP endpoints, served at /openapi.json.

Written out here rather than generated from docstrings, so each body points at the same JSON Schema
the server checks requests with (schemas/v1/http.json) and the WebSocket protocol's shapes
(schemas/v1/server.json); a test holds it to the app's routes.
"""

from __future__ import annotations

import json
from typing import Any

from .. import __version__
from .protocol import schema

__all__ = ["openapi"]

JSON = "application/json"


def _rebased(defs: dict[str, Any], prefix: str) -> dict[str, Any]:
    """`defs` as OpenAPI components named PREFIX + name, their `#/$defs/x` references pointed there too."""
    text = json.dumps(defs).replace('"#/$defs/', f'"#/components/schemas/{prefix}')
    return {f"{prefix}{name}": body for name, body in json.loads(text).items()}


def _ref(name: str) -> dict[str, Any]:
    return {"$ref": f"#/components/schemas/{name}"}


def _answer(what: str, name: str | None = None, kind: str = JSON, body: dict[str, Any] | None = None) -> dict[str, Any]:
    content = body if body is not None else (_ref(name) if name else {})
    return {"description": what, "content": {kind: {"schema": content}}}


def _refusals(*statuses: int) -> dict[str, Any]:
    words = {
        400: "a malformed request, or one the rules refuse (the message says what and how to fix it)",
        403: "the token is of no seat at this table, or the request comes from another site's page",
        404: "no such table, seat or variant",
        409: "the seat is taken, the name is in use, the game is not there yet, or it is not your turn",
        413: "the body is over 16 KiB",
        422: "the variant is beyond the exact solver: its games cannot be reviewed (the message says why)",
        415: "the body is not sent as application/json",
        429: "too many requests, or too many unfinished tables, from this address",
        503: "the database did not answer, or a bot's tables are being prepared (see Retry-After)",
    }
    return {str(s): _answer(words[s], "error") for s in statuses}


def _code(extra: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    code = {
        "name": "code",
        "in": "path",
        "required": True,
        "description": "The table's code (from its link /t/CODE).",
        "schema": {"type": "string", "pattern": "^[A-Za-z0-9_-]{16}$"},
    }
    return [code, *(extra or [])]


def _paths() -> dict[str, Any]:
    """Every route: the page and its files, then the API."""
    return {**_page_paths(), **_api_paths()}


def _page_paths() -> dict[str, Any]:
    unchanged = {"description": "not modified: the copy the browser has (If-None-Match) is this one"}
    page = {"200": _answer("the game's page", kind="text/html", body={"type": "string"}), "304": unchanged}
    name = {"name": "name", "in": "path", "required": True, "schema": {"type": "string"}}
    file = {"200": {"description": "the file"}, "304": unchanged, "404": {"description": "no such file"}}
    return {
        "/": {"get": {"summary": "The game's page: the lobby, where a table is created", "responses": page}},
        "/t/{code}": {"get": {"summary": "The game's page at a table", "parameters": _code(), "responses": page}},
        "/t/{code}/review": {
            "get": {
                "summary": "The game's page: a table's game reviewed move by move (?seat=N: that player's)",
                "parameters": _code(),
                "responses": page,
            }
        },
        "/train": {
            "get": {
                "summary": "The game's page: the trainer, drills from real play graded move by move",
                "responses": page,
            }
        },
        "/static/{name}": {
            "get": {
                "summary": "One of the page's files (scripts, style), by ETag: a browser asks again before each use",
                "parameters": [name],
                "responses": file,
            }
        },
        "/static/v/{version}/{name}": {
            "get": {
                "summary": "One of the page's files under the version of them all that the page names: kept for a year",
                "parameters": [{"name": "version", "in": "path", "required": True, "schema": {"type": "string"}}, name],
                "responses": file,
            }
        },
        "/schemas/v1/{name}": {
            "get": {
                "summary": "A JSON Schema of protocol version 1: client.json, server.json (WebSocket) or http.json",
                "parameters": [
                    {
                        "name": "name",
                        "in": "path",
                        "required": True,
                        "schema": {"enum": ["client.json", "server.json", "http.json"]},
                    }
                ],
                "responses": {"200": _answer("the schema", body={"type": "object"}), **_refusals(404)},
            }
        },
        "/openapi.json": {
            "get": {
                "summary": "This description",
                "responses": {"200": _answer("OpenAPI 3.1", body={"type": "object"})},
            }
        },
    }


def _api_paths() -> dict[str, Any]:
    """The API: what describes the server, then the tables."""
    return {**_described_paths(), **_table_paths(), **_training_paths()}


def _described_paths() -> dict[str, Any]:
    return {
        "/api/health": {
            "get": {
                "summary": "Whether the server is up, and its database",
                "responses": {"200": _answer("up", "health")},
            }
        },
        "/api/variants": {
            "get": {
                "summary": "Every variant on offer, its options and the bots that can play it",
                "responses": {"200": _answer("the variants", "variants"), **_refusals(429)},
            }
        },
        "/api/messages/{lang}": {
            "get": {
                "summary": "The page's messages in a language (en, ru, de, es, sv), from the gettext catalogs",
                "parameters": [
                    {"name": "lang", "in": "path", "required": True, "schema": {"enum": ["en", "ru", "de", "es", "sv"]}}
                ],
                "responses": {"200": _answer("the messages", "messages"), **_refusals(404, 429)},
            }
        },
    }


def _table_paths() -> dict[str, Any]:
    return {
        "/api/tables": {
            "post": {
                "summary": "Create a table: a variant, its options, the seats (humans and bots), a turn timer, the bots' pace",
                "requestBody": {"required": True, "content": {JSON: {"schema": _ref("newTable")}}},
                "responses": {"201": _answer("the table", "created"), **_refusals(400, 404, 413, 415, 429, 503)},
            }
        },
        "/api/tables/{code}": {
            "get": {
                "summary": "A table as a spectator sees it",
                "parameters": _code(),
                "responses": {"200": _answer("the table", "tableView"), **_refusals(404, 429, 503)},
            }
        },
        "/api/tables/{code}/seats/{seat}": {
            "post": {
                "summary": "Take an open human seat: its token is given once, in the answer",
                "parameters": _code(
                    [{"name": "seat", "in": "path", "required": True, "schema": {"type": "integer", "minimum": 0}}]
                ),
                "requestBody": {"required": True, "content": {JSON: {"schema": _ref("claim")}}},
                "responses": {
                    "200": _answer("the seat is yours", "claimed"),
                    **_refusals(400, 404, 409, 413, 415, 429, 503),
                },
            }
        },
        "/api/tables/{code}/hint": {
            "post": {
                "summary": "A hint on your turn: what the best bot ready for the variant would play now",
                "parameters": _code(),
                "requestBody": {"required": True, "content": {JSON: {"schema": _ref("hintAsk")}}},
                "responses": {"200": _answer("the hint", "hint"), **_refusals(400, 403, 404, 409, 413, 415, 429, 503)},
            }
        },
        "/api/tables/{code}/review": {
            "get": {
                "summary": "The game reviewed move by move against the exact solver (as `dicecup review --json`): each "
                "decision, the best move there and the expected points it cost; for variants the solver takes",
                "parameters": _code(
                    [
                        {
                            "name": "seat",
                            "in": "query",
                            "required": False,
                            "description": "Only this seat's decisions (default: every seat's).",
                            "schema": {"type": "integer", "minimum": 0},
                        }
                    ]
                ),
                "responses": {"200": _answer("the review", "review"), **_refusals(400, 404, 409, 422, 429, 503)},
            }
        },
        "/api/tables/{code}/save": {
            "get": {
                "summary": "The game as `dicecup play --save` writes one: `dicecup review FILE` and `dicecup resume FILE` read it",
                "parameters": _code(),
                "responses": {
                    "200": _answer(
                        "the saved game: a journal of JSON lines (a header, the dice generator, one line per move), "
                        "each sealed by a checksum chained to the line before",
                        kind="application/x-ndjson",
                        body={"type": "string"},
                    ),
                    **_refusals(404, 409, 429, 503),
                },
            }
        },
        "/ws": {
            "get": {
                "summary": "The WebSocket protocol: upgrade here, then send `hello` (see /schemas/v1/client.json and server.json)",
                "responses": {
                    "101": {"description": "switching to the WebSocket protocol"},
                    "403": {"description": "the Origin is not allowed, or this address has too many connections"},
                },
            }
        },
    }


def openapi() -> dict[str, Any]:
    """The whole description."""
    schemas = {**_rebased(schema("http")["$defs"], ""), **_rebased(schema("server")["$defs"], "ws.")}
    schemas["tableView"]["properties"] = {
        "table": _ref("ws.table"),
        "game": _ref("ws.game"),
        "recent": {"type": "array", "items": _ref("ws.moveEntry")},
    }
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "dicecup server",
            "version": __version__,
            "description": (
                "Tables of the Yahtzee family's games, over HTTP and a WebSocket. Create a table here, take seats, "
                "then play over /ws with the JSON messages of /schemas/v1/client.json and server.json."
            ),
        },
        "jsonSchemaDialect": "https://json-schema.org/draft/2020-12/schema",
        "paths": _paths(),
        "components": {"schemas": schemas},
    }


def _training_paths() -> dict[str, Any]:
    """The trainer's requests."""
    return {
        "/api/train/drill": {
            "post": {
                "summary": "A trainer's drill: a decision met in real play (or today's puzzle), for the variants the "
                "solver takes",
                "requestBody": {"required": True, "content": {JSON: {"schema": _ref("drillAsk")}}},
                "responses": {"200": _answer("the drill", "drill"), **_refusals(400, 404, 413, 415, 422, 429, 503)},
            }
        },
        "/api/train/grade": {
            "post": {
                "summary": "A move's grade at a drill: the expected points it gives up against the best move",
                "requestBody": {"required": True, "content": {JSON: {"schema": _ref("gradeAsk")}}},
                "responses": {"200": _answer("the grade", "grade"), **_refusals(400, 404, 413, 415, 422, 429, 503)},
            }
        },
    }
