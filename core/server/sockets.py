"""The WebSocket endpoint (/ws): one connection, one table; each message checked at the edge.

A browser's connection from another site is refused at the handshake (its Origin must be this
server's, or one given with --allow-origin); programs that send no Origin are let in, as a seat
is only ever played with its token. Then every message is bounded in size and rate, checked
against the protocol's schema, and answered; a refusal is one `error` and the connection goes on.
A client too slow to read its messages, or that keeps sending junk, is closed.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

from starlette.websockets import WebSocket, WebSocketDisconnect

from ..locales import DEFAULT
from .config import ServerConfig
from .hall import Hall
from .limits import Bucket, client_address
from .protocol import VERSION, ProtocolError, dumps, error, parse_client
from .rooms import Room

__all__ = ["Client", "serve_socket", "origin_allowed"]

log = logging.getLogger("dicecup.server")
POLICY = 1008  # close codes: a client that broke the rules
TRY_AGAIN = 1013  # ... the server is too busy for it (too many connections, or it reads too slowly)


def origin_allowed(headers: Any, scheme: str, allowed: tuple[str, ...]) -> bool:
    """Whether a handshake's Origin may connect: none (not a browser), this server's own, or an allowed one."""
    origin = headers.get("origin")
    if origin is None:
        return True
    origin = origin.rstrip("/").lower()
    host = headers.get("host", "").lower()
    own = {f"http://{host}", f"https://{host}"} if scheme in ("ws", "wss", "http", "https") else set()
    return origin in own or origin in allowed or "*" in allowed


class Client:
    """One WebSocket connection: its table and seats, its outbox and its rate."""

    def __init__(self, socket: WebSocket, address: str, config: ServerConfig) -> None:
        self.socket = socket
        self.address = address
        self.config = config
        self.room: Room | None = None
        self.seats: frozenset[int] = frozenset()
        self.outbox: asyncio.Queue[str | None] = asyncio.Queue(maxsize=config.outbox)
        self.bucket = Bucket(config.messages_per_second, config.message_burst)
        self.refusals = Bucket(1.0, config.max_refusals)  # one refusal a second is forgiven
        self.closing: int | None = None
        self.lang = DEFAULT  # the language its `hello` asked for

    def send(self, text: str) -> None:
        """Queue a message; a client whose outbox is full reads too slowly and is closed."""
        if self.closing is not None:
            return
        try:
            self.outbox.put_nowait(text)
        except asyncio.QueueFull:
            self.close(TRY_AGAIN)

    def close(self, code: int) -> None:
        if self.closing is None:
            self.closing = code
            with contextlib.suppress(asyncio.QueueFull):
                self.outbox.put_nowait(None)

    async def write(self) -> None:
        """Send the outbox in order until the connection closes; a client gone meanwhile ends it quietly."""
        try:
            while True:
                text = await self.outbox.get()
                if text is None:
                    await self.socket.close(self.closing or 1000)
                    return
                await self.socket.send_text(text)
        except (WebSocketDisconnect, RuntimeError):  # gone (Starlette: RuntimeError once the socket is closed)
            return


async def serve_socket(socket: WebSocket, hall: Hall, connections: dict[str, int]) -> None:
    """Serve one connection from its handshake to its end (nothing it sends can take the server down)."""
    config = hall.config
    if not origin_allowed(socket.headers, socket.url.scheme, config.allow_origins):
        await socket.close(POLICY)  # before accepting: the browser sees the handshake refused
        return
    address = client_address(socket.scope)
    if connections.get(address, 0) >= config.max_connections_per_client:
        await socket.close(TRY_AGAIN)
        return
    connections[address] = connections.get(address, 0) + 1
    client = Client(socket, address, config)
    try:
        await socket.accept()
        writer = asyncio.create_task(client.write())
        try:
            await _receive(client, hall)
        finally:
            client.close(1000)
            await _drain(writer)
    except WebSocketDisconnect:
        pass
    finally:
        if client.room is not None:
            hall.leave(client, client.room)
            client.room = None
        connections[address] -= 1
        if not connections[address]:
            del connections[address]


async def _drain(writer: asyncio.Task[None]) -> None:
    """Give the writer a few seconds to send what is queued, then stop it. Its failure is logged, never re-raised
    here: raised through this frame, the exception (kept by the task this frame holds) would make a cycle that
    keeps the connection and its table alive until a full garbage collection, rare in a server."""
    try:
        await asyncio.wait({writer}, timeout=5)
    finally:
        writer.cancel()
    if writer.done() and not writer.cancelled() and writer.exception() is not None:
        log.error("a connection's writer failed", exc_info=writer.exception())


async def _receive(client: Client, hall: Hall) -> None:
    config = hall.config
    while client.closing is None:
        message = await client.socket.receive()
        if message["type"] == "websocket.disconnect":
            return
        msg_id, refused = None, False
        try:
            if not client.bucket.take():
                rate = config.messages_per_second
                raise ProtocolError(
                    "rate_limited", f"at most {rate:g} messages a second; slow down", params={"rate": f"{rate:g}"}
                )
            text = message.get("text")
            if text is None:
                raise ProtocolError("malformed", "messages are JSON text frames, not binary ones")
            data = parse_client(text, config.max_message_bytes)
            msg_id = data.get("id")
            await _dispatch(client, hall, data)
        except ProtocolError as exc:
            client.send(dumps(error(exc, msg_id)))
            refused = True
        except Exception:  # a fault of ours: logged, answered, and the connection (and every table) goes on
            log.exception("a message from %s failed", client.address)
            client.send(
                dumps(error(ProtocolError("internal", "the server failed on this message; it is logged"), msg_id))
            )
            refused = True
        if refused and not client.refusals.take():  # refused again and again: a flood, or a broken client
            client.close(POLICY)


async def _dispatch(client: Client, hall: Hall, data: dict[str, Any]) -> None:
    kind, msg_id = data["type"], data.get("id")
    if kind == "ping":
        client.send(dumps({"type": "pong", "id": msg_id}))
        return
    if kind == "hello":
        if client.room is not None:
            raise ProtocolError(
                "already_joined", "this connection is at a table already; open another for another table"
            )
        if data["v"] != VERSION:
            raise ProtocolError(
                "unsupported_version", f"this server speaks protocol version {VERSION}", params={"version": VERSION}
            )
        client.lang = data.get("lang", DEFAULT)
        joined, seats = await hall.join(client, data["table"], data.get("tokens", []))
        client.room, client.seats = joined, frozenset(seats)
        client.send(hall.welcome(joined, seats, msg_id, client.lang))
        return
    room = client.room
    if room is None:
        raise ProtocolError("not_joined", 'send "hello" with the table\'s code first')
    if kind == "sync":
        client.send(hall.snapshot(room, msg_id, client.lang))
        return
    seat = data["seat"]
    if seat not in client.seats:
        raise ProtocolError(
            "not_your_seat", f"this connection does not hold seat {seat}'s token", seq=room.seq, params={"seat": seat}
        )

    def ack(seq: int) -> None:
        client.send(dumps({"type": "ack", "id": msg_id, "seq": seq}))

    if kind == "undo":
        await hall.undo(room, seat, data["at"], ack)
    else:
        await hall.move(room, seat, data["at"], data["move"], ack)
