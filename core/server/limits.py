"""Bounds on what one client may ask of the server: token buckets for rates, counts per address, and
request bodies read no further than their limit."""

from __future__ import annotations

import json
import time
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

from starlette.requests import Request

from .protocol import Refused

__all__ = ["Bucket", "Buckets", "read_json", "client_address"]

MAX_ADDRESSES = 10_000  # addresses whose rates are remembered; the least recent is forgotten


class Bucket:
    """A token bucket: `burst` at once, refilled at `rate` a second."""

    __slots__ = ("rate", "burst", "tokens", "stamp")

    def __init__(self, rate: float, burst: int) -> None:
        self.rate, self.burst = rate, burst
        self.tokens = float(burst)
        self.stamp = time.monotonic()

    def take(self) -> bool:
        """Whether one more message (request) may go through now."""
        now = time.monotonic()
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        if self.tokens >= 1:
            self.tokens -= 1
            return True
        return False


class Buckets:
    """A bucket per client address (at most MAX_ADDRESSES remembered)."""

    def __init__(self, rate: float, burst: int) -> None:
        self.rate, self.burst = rate, burst
        self.buckets: OrderedDict[str, Bucket] = OrderedDict()

    def take(self, address: str) -> bool:
        bucket = self.buckets.pop(address, None) or Bucket(self.rate, self.burst)
        self.buckets[address] = bucket
        while len(self.buckets) > MAX_ADDRESSES:
            self.buckets.popitem(last=False)
        return bucket.take()


def client_address(scope: Mapping[str, Any]) -> str:
    """The client's address (uvicorn puts the proxy's X-Forwarded-For there when the proxy is trusted)."""
    client = scope.get("client")
    return str(client[0]) if client else "unknown"


async def read_json(request: Request, limit: int) -> dict[str, Any]:
    """The request body as a JSON object, reading no more than `limit` bytes of it; Refused (4xx) otherwise."""
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind != "application/json":
        raise Refused(
            415,
            f"send the body as JSON with Content-Type: application/json, not {kind[:60] or 'none'}",
            code="malformed",
        )
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise Refused(
            413,
            f"the request body is {int(declared):,} bytes; at most {limit:,} are accepted",
            code="too_large",
            params={"limit": f"{limit:,}", "size": f"{int(declared):,}"},
        )
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            raise Refused(
                413,
                f"the request body is over {limit:,} bytes; at most {limit:,} are accepted",
                code="too_large",
                params={"limit": f"{limit:,}", "size": f"> {limit:,}"},
            )
    try:
        data = json.loads(body)
    except json.JSONDecodeError as exc:
        raise Refused(
            400, f"the request body is not JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}", code="malformed"
        ) from None
    except (UnicodeDecodeError, RecursionError, ValueError):
        raise Refused(
            400,
            "the request body is not JSON that can be read (not UTF-8, nested too deeply or a number too long)",
            code="malformed",
        ) from None
    if not isinstance(data, dict):
        raise Refused(400, f"the request body must be a JSON object, got {type(data).__name__}", code="malformed")
    return data
