"""What a server process keeps of a table once its players have left: nothing, after the sweep. The server is run
in this process (uvicorn on a thread) so that its objects can be counted; real WebSocket clients play.

The garbage collector is off while the tables are played, so what is asserted is what reference counting alone
frees: the server runs with a collector tuned to pass rarely, and anything a finished connection keeps in a
reference cycle (its table, its socket, its messages) would pile up between passes."""

from __future__ import annotations

import asyncio
import gc
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from _server_helpers import TINY, Player, best_box, create, free_port, play_out

from dicecup import Engine

uvicorn = pytest.importorskip("uvicorn", reason="the server needs the web extra")

from dicecup.server.app import SWEEP_SECONDS, Server, create_app  # noqa: E402  (after the web extra's check)
from dicecup.server.config import ServerConfig  # noqa: E402
from dicecup.server.rooms import Room  # noqa: E402
from dicecup.server.sockets import Client  # noqa: E402


class Here:
    """A server run on a thread of this process: its address (as `Serve` has it), its state and its loop."""

    def __init__(self, folder: Path, engine: Engine, collect_seconds: float) -> None:
        (folder / "tiny.yaml").write_text(TINY)
        config = ServerConfig(
            db_url=f"sqlite:///{folder}/tables.sqlite3",
            variant_files=(str(folder / "tiny.yaml"),),
            idle_seconds=3600.0,
            collect_seconds=collect_seconds,
        )
        self.app = create_app(config, engine)
        self.server: Server = self.app.state.server
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.uvicorn = uvicorn.Server(
            uvicorn.Config(self.app, host="127.0.0.1", port=self.port, log_level="warning", lifespan="on")
        )
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_until_complete, args=(self.uvicorn.serve(),), daemon=True)

    def ws_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/ws"

    def call(self, work: Any) -> Any:
        """Run `work()` on the server's loop (its state is the loop's alone); what it returns."""

        async def run() -> Any:
            return work()

        return asyncio.run_coroutine_threadsafe(run(), self.loop).result(30)

    def wait_for(self, condition: Any, what: str, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while not self.call(condition):
            assert time.monotonic() < deadline, f"the server did not get to: {what}"
            time.sleep(0.05)


@contextmanager
def served_here(folder: Path, engine: Engine, collect_seconds: float = 3600.0) -> Iterator[Here]:
    """A server on a thread, whose own garbage collections (`collect_seconds` apart) are left out by default."""
    here = Here(folder, engine, collect_seconds)
    here.thread.start()
    deadline = time.monotonic() + 60
    while not here.uvicorn.started:
        assert here.thread.is_alive() and time.monotonic() < deadline, "the server did not start"
        time.sleep(0.05)
    try:
        yield here
    finally:
        here.uvicorn.should_exit = True
        here.thread.join(30)
        here.loop.close()


def alive(kind: type) -> int:
    """How many objects of `kind` exist now, reachable or not (uncollected garbage counts)."""
    return sum(1 for o in gc.get_objects() if type(o) is kind)


def test_a_left_table_and_its_connections_are_freed_without_the_garbage_collector(tmp_path, engine):
    with served_here(tmp_path, engine) as here:
        gc.collect()
        gc.disable()
        try:
            rooms, clients = alive(Room), alive(Client)
            for round_ in range(3):
                # a game played to its end, on one connection (hot seat), then the connection closed
                made = create(
                    here,
                    {"player": "human", "name": "ann", "mine": True},
                    {"player": "human", "mine": True, "name": "bob"},
                )
                done = Player(here)
                done.hello(made["code"], *[t["token"] for t in made["tokens"]])
                assert play_out({0: done, 1: done})["status"] == "over"
                # a game left in the middle by both of its players, each on a connection of their own
                made = create(
                    here,
                    {"player": "human", "name": "cy", "mine": True},
                    {"player": "human", "mine": True, "name": "di"},
                )
                cy, di = Player(here), Player(here)
                cy.hello(made["code"], made["tokens"][0]["token"])
                di.hello(made["code"], made["tokens"][1]["token"])
                assert cy.move(0, best_box(cy.game))["type"] == "ack"
                for p in (done, cy, di):
                    p.close()
                here.wait_for(lambda: not here.server.connections, f"round {round_}: every connection ended")
                assert here.call(lambda: len(here.server.hall.rooms)) == 2  # both tables kept until the sweep
                here.call(lambda: here.server.hall.sweep(time.time() + 7200))
                assert here.call(lambda: len(here.server.hall.rooms)) == 0
                # nothing of the tables or their connections is left, not even as garbage
                assert (alive(Room), alive(Client)) == (rooms, clients), f"round {round_}"
        finally:
            gc.enable()


def closed_transports(port: int) -> int:
    """This server's connections' transports (those accepted on `port`) that are closed but not freed yet:
    nothing keeps a closed one but a cycle. Other tests' servers in this process are not counted."""

    def ours(o: object) -> bool:
        if not (issubclass(type(o), asyncio.Transport) and o.is_closing()):  # type: ignore[attr-defined]
            return False
        sockname = o.get_extra_info("sockname")  # type: ignore[attr-defined]
        return isinstance(sockname, tuple) and len(sockname) >= 2 and sockname[1] == port

    return sum(1 for o in gc.get_objects() if ours(o))


def test_the_cycles_closed_connections_leave_are_collected_by_the_server_itself(tmp_path, engine):
    with served_here(tmp_path, engine, collect_seconds=0.0) as here:
        gc.collect()
        gc.disable()  # the server's own collections run all the same (an explicit collection is never off)
        try:
            made = create(here, {"player": "human", "name": "ann", "mine": True}, {"player": "human"})
            for _ in range(3):
                p = Player(here)
                p.hello(made["code"], made["tokens"][0]["token"])
                p.close()
            here.wait_for(lambda: not here.server.connections, "every connection ended")
            deadline = time.monotonic() + 3 * SWEEP_SECONDS
            while closed_transports(here.port) and time.monotonic() < deadline:
                time.sleep(0.1)
            assert closed_transports(here.port) == 0
        finally:
            gc.enable()
