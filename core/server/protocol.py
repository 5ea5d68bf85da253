"""The WebSocket protocol's edge: its versioned JSON Schemas (shipped in `schemas/v1/`), the check of every
message a client sends, and the one error shape every refusal takes.

A client message is read only up to a size limit, parsed, and checked against the schema of its
`type` before anything acts on it; whatever fails gets one typed `error` and the connection goes on.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import cache
from importlib import resources
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match

__all__ = ["VERSION", "ProtocolError", "Refused", "schema", "parse_client", "error", "dumps", "validator"]

VERSION = 1
CLIENT_TYPES = ("hello", "move", "undo", "sync", "ping")


class ProtocolError(Exception):
    """A refused client message: its error code (see server.json's `error`), one message saying why (English, for
    any client), and the figures a page needs to say it in its player's language by the code (`params`)."""

    def __init__(
        self, code: str, message: str, seq: int | None = None, params: Mapping[str, str | int | float] | None = None
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.seq = seq
        self.params = dict(params or {})


class Refused(Exception):
    """A refused HTTP request: its status and one message saying what is wrong and how to fix it."""

    def __init__(
        self,
        status: int,
        message: str,
        retry_after: int | None = None,
        *,
        code: str,
        params: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.retry_after = retry_after
        self.code = code  # what the page words the refusal by (its catalog's `refused.CODE`), with `params`
        self.params = params or {}


@cache
def schema(name: str) -> dict[str, Any]:
    """A schema of protocol version 1 shipped in the package: `client`, `server` or `http`."""
    text = (resources.files(__package__ or "dicecup.server") / "schemas" / f"v{VERSION}" / f"{name}.json").read_text(
        encoding="utf-8"
    )
    loaded: dict[str, Any] = json.loads(text)
    return loaded


@cache
def validator(name: str, definition: str | None = None) -> Draft202012Validator:
    """A validator of schema `name` (of one of its `$defs` when `definition` is given)."""
    whole = schema(name)
    if definition is None:
        return Draft202012Validator(whole)
    return Draft202012Validator({"$ref": f"#/$defs/{definition}", "$defs": whole["$defs"]})


def dumps(message: dict[str, Any]) -> str:
    """A message as the compact JSON text sent on the wire."""
    return json.dumps(message, separators=(",", ":"), ensure_ascii=False)


def parse_client(text: str, limit: int) -> dict[str, Any]:
    """A client's message checked against its schema; ProtocolError (too_large, malformed) otherwise."""
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > limit:
        raise ProtocolError(
            "too_large",
            f"a message is at most {limit:,} bytes; this one is {size:,}",
            params={"limit": limit, "size": size},
        )
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ProtocolError("malformed", f"not JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}") from None
    except (RecursionError, ValueError):
        raise ProtocolError(
            "malformed", "not JSON that can be read (nested too deeply, or a number too long)"
        ) from None
    if not isinstance(data, dict):
        raise ProtocolError("malformed", f'a message is a JSON object with a "type", got {type(data).__name__}')
    kind = data.get("type")
    if kind not in CLIENT_TYPES:
        shown = json.dumps(kind)[:40] if kind is not None else "none"
        raise ProtocolError("malformed", f"unknown message type {shown}; types: {', '.join(CLIENT_TYPES)}")
    problem = best_match(validator("client", kind).iter_errors(data))
    if problem is not None:
        where = "".join(f"[{p!r}]" if isinstance(p, int) else f".{p}" for p in problem.absolute_path)
        raise ProtocolError("malformed", f"{kind}{where}: {_short(problem.message)}")
    return data


def _short(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def error(exc: ProtocolError, msg_id: Any = None) -> dict[str, Any]:
    """The `error` message for a refusal (echoing the client's `id` when it was a valid one)."""
    out: dict[str, Any] = {
        "type": "error",
        "code": exc.code,
        "message": _short(exc.message, 2000),
        "id": msg_id if isinstance(msg_id, str) and len(msg_id) <= 64 else None,
    }
    if exc.seq is not None:
        out["seq"] = exc.seq
    if exc.params:
        out["params"] = {k: v if isinstance(v, int | float) else _short(str(v), 200) for k, v in exc.params.items()}
    return out
