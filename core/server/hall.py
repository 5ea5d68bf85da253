"""The tables a server process has in memory, and how they move: a decision is checked, stored, and only
then acknowledged and shown to everyone at the table; bots and turn timers move at their pace.

Several processes may hold the same table (on one PostgreSQL database). The store's (table, seq) key
lets only one of them write a given move; the others hear of it (LISTEN/NOTIFY) and catch up. The
process that stored the last move drives the bots and the timer; the others wait a while longer
and take over only if nothing comes, so a table goes on even if that process dies.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import logging
import random
import time
from collections.abc import Callable, Coroutine, Sequence
from typing import Any, TypeVar

from ..errors import DicecupError
from ..game.actions import Action, Score, action_from_json, action_to_json
from ..game.state import GameState
from ..language.engine import Engine
from ..locales import DEFAULT, Catalogs
from .config import ServerConfig
from .protocol import ProtocolError, dumps
from .rooms import HUMAN, BrokenHistory, CannotUndo, Room, Watcher
from .store import CorruptRecord, MoveRecord, SeqConflict, Store, StoreUnavailable, TableRecord, Takeback
from .views import timeout_action
from .workers import VariantRef, WorkerFailed, Workers, load_variant

__all__ = ["Hall", "UnknownTable", "token_hash"]

log = logging.getLogger("dicecup.server")
BOT_RETRIES = 3  # a bot that fails this often in a row at one position is given up on (everyone is told)
TIMER_MOVES = 64  # at most this many moves finish a timed-out turn

T = TypeVar("T")
Steps = list[tuple[GameState, GameState, MoveRecord, str]]


class UnknownTable(Exception):
    """No table has that code (or its variant cannot be rebuilt here): says which."""


def token_hash(token: str) -> str:
    """What is stored of a seat's token: its SHA-256 (a leaked database gives away no seat)."""
    return hashlib.sha256(token.encode()).hexdigest()


class Hall:
    """This process's tables: loading them, moving them on, and telling their watchers."""

    def __init__(self, engine: Engine, config: ServerConfig, store: Store, workers: Workers) -> None:
        self.engine = engine
        self.config = config
        self.store = store
        self.workers = workers
        self.alone = store.kind == "sqlite"  # no other process can hold our tables
        self.rng = random.SystemRandom()  # the dice: the OS's randomness, nothing to leak or predict
        self.rooms: dict[str, Room] = {}
        self.catalogs = Catalogs()  # the messages of each language its players read
        self._loading: dict[str, asyncio.Future[Room]] = {}
        self._tasks: set[asyncio.Task[Any]] = set()

    def spawn(self, work: Coroutine[Any, Any, Any]) -> None:
        """Run `work` in the background, kept until it ends (its failure is logged, never raised)."""
        task = asyncio.create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._done)

    def _done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("a background task failed", exc_info=task.exception())

    async def stop(self) -> None:
        for room in self.rooms.values():
            self._cancel(room)
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    # ------------------------------------------------------------------ loading

    def variant_ref(self, record: TableRecord) -> VariantRef:
        return (record.variant, record.source, dict(record.options))

    async def room(self, code: str) -> Room:
        """The table `code`, loaded from the store (and replayed) the first time; UnknownTable if none."""
        room = self.rooms.get(code)
        if room is not None:
            return room
        loading = self._loading.get(code)
        if loading is None:
            loading = asyncio.get_running_loop().create_future()
            self._loading[code] = loading
            try:
                room = await self._load(code)
            except BaseException as exc:
                loading.set_exception(exc)
                loading.exception()  # retrieved: no "never retrieved" warning when nobody else waits
                raise
            finally:
                self._loading.pop(code, None)
            self.rooms[code] = room
            room.idle_since = time.time()
            loading.set_result(room)
            self._schedule(room, leader=self.alone)
            return room
        return await asyncio.shield(loading)

    async def _load(self, code: str) -> Room:
        try:
            return await self._replayed(code)
        except (BrokenHistory, CorruptRecord) as exc:
            log.error("%s", exc)
            raise UnknownTable(f"{exc}: the database was changed by something other than dicecup") from None

    async def _replayed(self, code: str) -> Room:
        record = await self.store.table(code)
        if record is None:
            raise UnknownTable(f"no table {code} here: check the link, or create a new table")
        try:
            variant = await asyncio.to_thread(load_variant, self.engine, self.variant_ref(record))
        except DicecupError as exc:
            raise UnknownTable(f"table {code} cannot be replayed here: its variant cannot be built ({exc})") from None
        if variant.fingerprint != record.fingerprint:
            raise UnknownTable(
                f"table {code} was created with another definition of variant {record.variant!r} (its rules or "
                "plugins changed since); it cannot be replayed here"
            )
        room = Room(record, variant, self.catalogs)
        moves = await self.store.moves(code)
        room.took_back(await self.store.takebacks(code))
        await asyncio.to_thread(room.replay, moves)
        return room

    def sweep(self, now: float) -> None:
        """Forget the tables nobody has watched for a while (their moves are stored; a visit reloads them)."""
        for code, room in list(self.rooms.items()):
            if not room.watchers and room.idle_since is not None and now - room.idle_since > self.config.idle_seconds:
                self._cancel(room)
                del self.rooms[code]

    # ------------------------------------------------------------------ watchers

    async def join(self, watcher: Watcher, code: str, tokens: Sequence[str]) -> tuple[Room, list[int]]:
        """Seat `watcher` at table `code` for the seats whose tokens it holds; ProtocolError otherwise."""
        try:
            room = await self.room(code)
        except UnknownTable as exc:
            raise ProtocolError("unknown_table", str(exc)) from None
        except StoreUnavailable:
            raise ProtocolError("unavailable", "the database did not answer; try again") from None
        seats = []
        for token in tokens:
            digest = token_hash(token)
            seat = next(
                (s.seat for s in room.record.seats if s.token_hash and hmac.compare_digest(s.token_hash, digest)), None
            )
            if seat is None:
                raise ProtocolError("bad_token", "a token given is not one of this table's seats; nothing was joined")
            seats.append(seat)
        room.watchers.add(watcher)
        room.idle_since = None
        return room, sorted(seats)

    def leave(self, watcher: Watcher, room: Room) -> None:
        room.watchers.discard(watcher)
        if not room.watchers:
            room.idle_since = time.time()

    def welcome(self, room: Room, seats: list[int], msg_id: Any, lang: str = DEFAULT) -> str:
        return dumps(
            {
                "type": "welcome",
                "v": 1,
                "id": msg_id,
                "table": room.table_view(),
                "seats": seats,
                "game": room.game_view(lang),
                "recent": room.entries_in(room.recent, lang),
            }
        )

    def snapshot(self, room: Room, msg_id: Any, lang: str = DEFAULT) -> str:
        return dumps(
            {"type": "state", "id": msg_id, "game": room.game_view(lang), "recent": room.entries_in(room.recent, lang)}
        )

    def _announce(self, room: Room, entries: list[dict[str, Any]]) -> None:
        room.broadcast_each(
            lambda lang: dumps(
                {"type": "update", "moves": room.entries_in(entries, lang), "game": room.game_view(lang)}
            )
        )

    # ------------------------------------------------------------------ moves

    async def move(self, room: Room, seat: int, at: int, raw: Any, ack: Callable[[int], None]) -> None:
        """A human's decision for `seat`, made at move `at`: checked, stored, acknowledged, then announced."""
        async with room.lock:
            state = self._decision(room, seat, at)
            try:
                action = action_from_json(raw)
            except ValueError as exc:
                raise ProtocolError("malformed", f"move: {exc}") from None
            try:
                _, steps = room.advance(state, [(action, "seat")], self.rng, time.time())
            except DicecupError as exc:  # IllegalAction, DiceError: the engine's own words
                raise ProtocolError("illegal_move", str(exc), seq=room.seq) from None
            await self._store(room, steps)
            entries = room.commit(steps)
            ack(room.seq)
            await asyncio.sleep(0)  # the ack goes out now; the update (a view to build) follows
            self._announce(room, entries)
        self._schedule(room, leader=True)

    async def undo(self, room: Room, seat: int, at: int, ack: Callable[[int], None]) -> None:
        """Take back `seat`'s last score or announcement, asked at move `at` (with the dice rolled after it, no
        other seat having moved since): stored, acknowledged, then announced. The dice taken back come again."""
        async with room.lock:
            if room.state is None:
                raise ProtocolError("not_started", "the game starts when every human seat is taken", seq=room.seq)
            if at != room.seq:
                raise ProtocolError(
                    "stale", f"the undo was asked at move {at}, but the game is at move {room.seq} now", seq=room.seq
                )
            try:
                entries = room.takeback(seat)
            except CannotUndo as exc:
                code = "game_over" if room.state.over else "cannot_undo"
                raise ProtocolError(code, str(exc), seq=room.seq) from None
            base = entries[0]["seq"] - 1
            moves = await self._read(room, self.store.moves(room.code))
            if [m.seq for m in moves[base:]] != [e["seq"] for e in entries]:  # another process moved the table
                await self._reload_locked(room)
                raise ProtocolError("stale", "another move was made first", seq=room.seq)
            rebuilt = Room(room.record, room.variant, room.catalogs)
            await asyncio.to_thread(rebuilt.replay, moves[:base])
            undone = [Takeback(room.undos + 1, m) for m in moves[base:]]
            try:
                await self.store.take_back(room.code, base, undone, "playing", time.time())
            except SeqConflict:
                await self._reload_locked(room)
                raise ProtocolError("stale", "another move was made first", seq=room.seq) from None
            except StoreUnavailable as exc:
                log.warning("table %s: %s", room.code, exc)
                raise ProtocolError(
                    "unavailable", "the database did not store the undo; try again", seq=room.seq
                ) from None
            gone = room.entries_in(entries, DEFAULT)
            room.adopt(rebuilt)
            room.took_back(undone)
            ack(room.seq)
            await asyncio.sleep(0)
            self._announce_undo(room, seat, gone)
        self._schedule(room, leader=True)

    async def _read(self, room: Room, reading: Coroutine[Any, Any, T]) -> T:
        """A read of the store under the room's lock; ProtocolError unavailable when the database does not answer."""
        try:
            return await reading
        except StoreUnavailable as exc:
            log.warning("table %s: %s", room.code, exc)
            raise ProtocolError("unavailable", "the database did not answer; try again", seq=room.seq) from None

    def _announce_undo(self, room: Room, seat: int, entries: list[dict[str, Any]]) -> None:
        room.broadcast_each(
            lambda lang: dumps(
                {
                    "type": "undone",
                    "seat": seat,
                    "moves": room.entries_in(entries, lang),
                    "game": room.game_view(lang),
                    "recent": room.entries_in(room.recent, lang),
                }
            )
        )

    async def _reload_locked(self, room: Room) -> None:
        """Rebuild `room` from the store (another process took moves back), and show its watchers the game."""
        moves = await self.store.moves(room.code)
        takebacks = await self.store.takebacks(room.code)
        rebuilt = Room(room.record, room.variant, room.catalogs)
        await asyncio.to_thread(rebuilt.replay, moves)
        now = {e["seq"]: e["move"] for e in rebuilt.recent}
        gone = [e for e in room.recent if e["seq"] > rebuilt.seq or now.get(e["seq"], e["move"]) != e["move"]]
        room.adopt(rebuilt)
        room.took_back(takebacks)
        if gone:
            self._announce_undo(room, gone[0]["seat"], gone)
        else:
            room.broadcast_each(lambda lang: dumps({"type": "update", "moves": [], "game": room.game_view(lang)}))

    def _decision(self, room: Room, seat: int, at: int) -> GameState:
        """The state `seat` decides in; ProtocolError when the table is not there."""
        state = room.state
        if state is None:
            raise ProtocolError("not_started", "the game starts when every human seat is taken", seq=room.seq)
        if state.over:
            raise ProtocolError("game_over", "the game is over", seq=room.seq)
        if at != room.seq:
            raise ProtocolError(
                "stale", f"the move was made at move {at}, but the game is at move {room.seq} now", seq=room.seq
            )
        if room.to_move != seat:
            who = state.players[state.current]
            raise ProtocolError(
                "not_your_turn",
                f"it is {who}'s turn (seat {state.current}), not seat {seat}'s",
                seq=room.seq,
                params={"name": who, "seat": state.current},
            )
        return state

    async def _store(self, room: Room, steps: Steps) -> None:
        """Commit `steps` (under the room's lock); ProtocolError stale/unavailable when they cannot be."""
        status = "over" if steps[-1][1].over else "playing"
        try:
            await self.store.append(room.code, [s[2] for s in steps], status, time.time())
        except SeqConflict:
            await self._catch_up_locked(room, seats=False)
            raise ProtocolError("stale", "another move was made first", seq=room.seq) from None
        except StoreUnavailable as exc:
            log.warning("table %s: %s", room.code, exc)
            raise ProtocolError("unavailable", "the database did not store the move; try again", seq=room.seq) from None

    async def start(self, room: Room) -> None:
        """Roll the first dice once every human seat is taken (nothing when it was done already)."""
        async with room.lock:
            if room.state is not None or any(s.player == HUMAN and s.token_hash is None for s in room.record.seats):
                return
            _, steps = room.advance(room.start_state(), [], self.rng, time.time())
            try:
                await self._store(room, steps)
            except ProtocolError:
                return  # another process started it (we caught up), or the database failed: a visit retries
            self._announce(room, room.commit(steps))
        self._schedule(room, leader=True)

    # ------------------------------------------------------------------ bots and timers

    def _cancel(self, room: Room) -> None:
        if room.driver is not None:
            room.driver.cancel()
            room.driver = None

    def _schedule(self, room: Room, leader: bool, delay: float | None = None) -> None:
        """Set what moves the table next when no human does: the bot to move, or the turn timer."""
        self._cancel(room)
        seat = room.to_move
        if seat is None:
            if room.state is None and not any(s.token_hash is None and s.player == HUMAN for s in room.record.seats):
                self.spawn(self.start(room))  # every seat taken, the start lost (a crash): start it now
            return
        grace = 0.0 if leader or self.alone else self.config.fallback_seconds
        act: Callable[[Room, int], Coroutine[Any, Any, None]]
        if room.bot(seat) is not None:
            act, wait = self._bot_turn, room.record.bot_delay if delay is None else delay
        elif room.deadline is not None:
            act, wait = self._timer_turn, room.deadline - time.time()
        else:
            return
        room.driver = asyncio.create_task(self._drive(room, room.seq, max(0.0, wait) + grace, act))

    async def _drive(
        self, room: Room, seq: int, wait: float, act: Callable[[Room, int], Coroutine[Any, Any, None]]
    ) -> None:
        """Wait (cancelled by any move meanwhile), then act if the table is still where it was."""
        try:
            await asyncio.sleep(wait)
        except asyncio.CancelledError:
            return
        room.driver = None  # acting now: a move stored meanwhile no longer cancels this, it makes it stale
        if room.seq == seq:
            try:
                await act(room, seq)
            except Exception:
                log.exception("table %s: the bot or timer failed", room.code)

    def bot_job(self, room: Room, seat: int, spec: str) -> dict[str, Any]:
        """What a bot's process needs to choose the move of `seat` now (the table's moves, replayed there)."""
        assert room.state is not None
        return {
            "code": room.code,
            "seat": seat,
            "spec": spec,
            "variant": self.variant_ref(room.record),
            "players": list(room.state.players),
            "moves": [action_to_json(a) for a in room.state.history],
            "undos": room.undos,  # an undo may change moves the process keeps: it replays them then
        }

    async def _bot_turn(self, room: Room, seq: int) -> None:
        state, seat = room.state, room.to_move
        spec = room.bot(seat) if seat is not None else None
        if state is None or seat is None or spec is None:
            return
        try:
            move = await self.workers.choose(self.bot_job(room, seat, spec))
            action = action_from_json(move)
        except (WorkerFailed, ValueError) as exc:
            return self._bot_failed(room, f"bot:{spec} could not move: {exc}")
        await self._act(room, seq, [(action, "bot")])

    async def _timer_turn(self, room: Room, seq: int) -> None:
        """Finish the turn of a seat out of time (`views.timeout_action` until it scores)."""
        await self._act(room, seq, None)

    async def _act(self, room: Room, seq: int, actions: list[tuple[Action, str]] | None) -> None:
        """Store the moves of a bot (`actions`) or of the timer (None) at position `seq`, and announce them."""
        async with room.lock:
            if room.seq != seq or room.state is None:
                return
            try:
                steps = (
                    self._timer_steps(room)
                    if actions is None
                    else room.advance(room.state, actions, self.rng, time.time())[1]
                )
            except DicecupError as exc:
                return self._bot_failed(room, f"the move was refused: {exc}")
            try:
                await self._store(room, steps)
            except ProtocolError as exc:
                if exc.code == "unavailable":
                    self._schedule(room, leader=True, delay=2.0)
                return
            room.failures = 0
            self._announce(room, room.commit(steps))
        self._schedule(room, leader=True)

    def _timer_steps(self, room: Room) -> Steps:
        state, steps = room.state, Steps()
        assert state is not None
        now = time.time()
        while not state.over and len(steps) < TIMER_MOVES:
            action = timeout_action(state)
            state, more = room.advance(state, [(action, "timer")], self.rng, now, seq=room.seq + len(steps))
            steps += more
            if isinstance(action, Score):
                break
        return steps

    def _bot_failed(self, room: Room, why: str) -> None:
        """Tell everyone at the table; try again a few times (a worker may have died), then leave it."""
        room.failures += 1
        log.warning("table %s: %s", room.code, why)
        message = {"type": "error", "code": "bot_failed", "message": why[:2000], "id": None, "seq": room.seq}
        room.broadcast(dumps(message))
        if room.failures < BOT_RETRIES:
            self._schedule(room, leader=True, delay=2.0)

    # ------------------------------------------------------------------ other processes

    def heard(self, code: str, kind: str, seq: int) -> None:
        """Another process changed a table (or the notifications were lost for a while: `resync`)."""
        if kind == "resync":
            for room in list(self.rooms.values()):
                self.spawn(self.catch_up(room, seats=True))
            return
        held = self.rooms.get(code)
        if held is not None and kind == "undo":
            self.spawn(self.reload(held))
        elif held is not None and (kind == "seats" or seq > held.seq):
            self.spawn(self.catch_up(held, seats=kind == "seats"))

    async def reload(self, room: Room) -> None:
        async with room.lock:
            await self._reload_locked(room)
        self._schedule(room, leader=False)

    async def catch_up(self, room: Room, seats: bool) -> None:
        async with room.lock:
            changed = await self._catch_up_locked(room, seats)
        if changed:
            self._schedule(room, leader=False)

    async def _catch_up_locked(self, room: Room, seats: bool) -> bool:
        """Read what other processes stored for `room` and tell its watchers; whether anything changed."""
        if seats:
            record = await self.store.table(room.code)
            if record is not None:
                room.seat_changed(record)
        moves = await self.store.moves(room.code, room.seq)
        entries = room.replay(moves)
        if entries or seats:
            self._announce(room, entries)
        return bool(entries or seats)
