"""Making tables and taking seats: what the HTTP API does besides showing a table.

A table is created with a variant, its options and its seats; every bot is checked against the
variant at once, and its tables (a solve, a fit) must be ready: the first time they are prepared
in a background process, and a creation that would wait longer than a few seconds for them is
refused with a message saying so. Codes and tokens come from `secrets`: a code carries 96 random
bits, a token 192, and only a token's hash is stored.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import secrets
import tempfile
import time
from pathlib import Path
from typing import Any

from ..errors import DicecupError, UnknownVariant
from ..game.actions import action_from_json, action_to_json
from ..game.state import MAX_NAME, MAX_PLAYERS
from ..language.engine import Engine
from ..language.model import Variant
from ..locales import DEFAULT
from .config import ServerConfig
from .hall import Hall, UnknownTable, token_hash
from .protocol import Refused
from .rooms import HUMAN, Room
from .store import NameTaken, SeatRecord, StoreUnavailable, TableRecord
from .views import timeout_action, translations_view
from .workers import WorkerFailed

__all__ = ["Lobby", "name_taken", "new_code", "new_token", "no_such_seat"]

log = logging.getLogger("dicecup.server")
DAY = 24 * 3600.0
HINT_BOTS = ("optimal", "strong")  # the bots a hint asks, the first one ready; else bot:greedy
MAX_PREPARING = 8  # different bot tables being prepared at once; more is refused until they are done


def new_code() -> str:
    """A table's code: 96 random bits, URL-safe (16 characters)."""
    return secrets.token_urlsafe(12)


def new_token() -> str:
    """A seat's token: 192 random bits, URL-safe (32 characters)."""
    return secrets.token_urlsafe(24)


def check_name(name: Any, what: str) -> str:
    """A player's name as typed: printable text of 1 to MAX_NAME characters (shown as text wherever it is)."""
    if not isinstance(name, str) or not name.strip() or len(name) > MAX_NAME or not name.isprintable():
        raise Refused(
            400,
            f"{what}: a name is printable text of 1 to {MAX_NAME} characters",
            code="bad_name",
            params={"most": MAX_NAME},
        )
    return name.strip()


def no_such_seat(code: str, seats: int, seat: int) -> Refused:
    """The refusal of a seat number past a table's seats."""
    return Refused(
        404,
        f"table {code} has seats 0 to {seats - 1}, not {seat}",
        code="no_such_seat",
        params={"seat": seat, "last": seats - 1},
    )


def name_taken(name: str) -> Refused:
    """The refusal of a name another seat at the table has."""
    return Refused(
        409, f"the name {name!r} is taken at this table; choose another", code="name_taken", params={"name": name}
    )


class Lobby:
    """Creating tables, taking seats, the variants on offer and the bots' preparation."""

    def __init__(self, engine: Engine, config: ServerConfig, hall: Hall) -> None:
        self.engine = engine
        self.config = config
        self.hall = hall
        self.files: dict[str, str] = {}
        for path in config.variant_files:
            vid = engine.load_file(path).id
            if vid in engine.variant_ids() or vid in self.files:
                raise DicecupError(f"--variant-file {path}: a variant {vid!r} is already offered; give it another id")
            self.files[vid] = str(Path(path).resolve())
        self.prepared: set[tuple[str, str]] = set()
        self.preparing: dict[tuple[str, str], asyncio.Task[None]] = {}
        self._catalogue: list[dict[str, Any]] | None = None

    # ------------------------------------------------------------------ variants

    def ids(self) -> list[str]:
        return [*self.engine.variant_ids(), *self.files]

    def variant(self, vid: str, options: dict[str, Any] | None) -> Variant:
        """The variant a request names, with its options; Refused (4xx) saying what is wrong."""
        if vid not in self.ids():
            raise Refused(
                404, str(UnknownVariant(vid[:64], self.ids())), code="unknown_variant", params={"variant": vid[:64]}
            )
        try:
            if vid in self.files:
                return self.engine.load_file(self.files[vid], options)
            return self.engine.variant(vid, options)
        except DicecupError as exc:
            raise Refused(400, str(exc), code="bad_options", params={"detail": str(exc)}) from None

    def catalogue(self) -> list[dict[str, Any]]:
        """Every variant with its options and the bots that can play it (built once: it compiles them all)."""
        if self._catalogue is None:
            rows = []
            for vid in self.ids():
                try:
                    v = self.variant(vid, None)
                except Refused:
                    continue  # a broken plugin variant is left out, not the whole list
                rows.append(
                    {
                        "id": vid,
                        "name": v.name,
                        "description": v.description,
                        "columns": len(v.columns),
                        "options": [
                            {"name": o.name, "default": o.default, "choices": list(o.choices)} for o in v.option_specs
                        ],
                        "bots": [f"bot:{b}" for b in self._bots_for(v)],
                        "translations": {  # a table's view has them all; the list, the name and description
                            lang: {k: names[k] for k in ("name", "description") if k in names}
                            for lang, names in translations_view(v).items()
                        },
                        "seats": MAX_PLAYERS,
                    }
                )
            self._catalogue = rows
        return self._catalogue

    def _bots_for(self, v: Variant) -> list[str]:
        out = []
        for decl in self.engine.bots.values():
            if decl.argument is not None:
                out.append(decl.usage)  # its check needs the argument: offered, checked when a table asks
                continue
            try:
                self.engine.check_bot(decl.name, v)
            except DicecupError:
                continue
            out.append(decl.name)
        return out

    # ------------------------------------------------------------------ creating

    async def create(self, body: dict[str, Any], creator: str) -> dict[str, Any]:
        """A new table from a checked `newTable` body; its code, link and the tokens of the creator's seats."""
        variant = await asyncio.to_thread(self.variant, body["variant"], body.get("options"))
        seats, tokens = self._seats(body["seats"], variant)
        now = time.time()
        try:
            made = await self.hall.store.open_tables(creator, now - DAY)
        except StoreUnavailable:
            raise Refused(503, "the database did not answer; try again", code="unavailable") from None
        if made >= self.config.max_tables_per_client:
            raise Refused(
                429,
                f"you have {made} unfinished tables (at most {self.config.max_tables_per_client}); "
                "finish or leave some (a table left for a day no longer counts)",
                code="too_many_tables",
                params={"n": made, "most": self.config.max_tables_per_client},
            )
        await self.ready(variant, {s.player[4:] for s in seats if s.player != HUMAN}, len(seats))
        delay = body.get("bot_delay")
        record = TableRecord(
            code=new_code(),
            variant=variant.id,
            source=self.files.get(variant.id),
            options=dict(body.get("options") or {}),
            fingerprint=variant.fingerprint,
            seats=tuple(seats),
            turn_seconds=body.get("turn_seconds"),
            bot_delay=self.config.bot_delay if delay is None else float(delay),
            status="waiting",
            creator=creator,
            created_at=now,
        )
        try:
            await self.hall.store.create(record, now)
        except StoreUnavailable:
            raise Refused(503, "the database did not store the table; try again", code="unavailable") from None
        room = await self.hall.room(record.code)
        await self.hall.start(room)
        return {
            "code": record.code,
            "link": f"/t/{record.code}",
            "tokens": [{"seat": seat, "token": token} for seat, token in tokens],
        }

    def _seats(self, specs: list[dict[str, Any]], variant: Variant) -> tuple[list[SeatRecord], list[tuple[int, str]]]:
        """The seats of a new table, checked (bots against the variant), and the creator's tokens."""
        seats, tokens, names = [], [], set()
        for i, spec in enumerate(specs):
            player, name = spec["player"], spec.get("name")
            where = f"seats[{i}]"
            if player != HUMAN:
                if not player.startswith("bot:"):
                    raise Refused(
                        400,
                        f'{where}.player is "human" or a bot such as "bot:greedy", got {player[:80]!r}',
                        code="malformed",
                    )
                self._check_bot(player[4:], variant, len(specs), where)
                name = name or player[4:]
            elif spec.get("mine") and name is None:
                raise Refused(400, f"{where}: a seat you take needs a name", code="name_needed")
            if name is not None:
                name = check_name(name, where)
                base, n = name, 2
                while name in names and player != HUMAN:
                    name, n = f"{base} {n}", n + 1
                if name in names:
                    raise Refused(
                        400,
                        f"{where}: the name {name!r} is given to another seat; names must differ",
                        code="name_repeated",
                        params={"name": name},
                    )
                names.add(name)
            token = new_token() if player == HUMAN and spec.get("mine") else None
            if token is not None:
                tokens.append((i, token))
            seats.append(SeatRecord(i, player, name, token_hash(token) if token else None))
        return seats, tokens

    def _check_bot(self, spec: str, variant: Variant, seats: int, where: str) -> None:
        try:
            decl, _ = self.engine.bot_spec(spec)
            self.engine.check_bot(spec, variant)
        except DicecupError as exc:
            raise Refused(400, f"{where}: {exc}", code="bad_bot", params={"bot": spec, "detail": str(exc)}) from None
        if not decl.solitaire and seats < 2:
            raise Refused(
                400,
                f"{where}: bot:{decl.name} plays against others: give the table two seats or more",
                code="bot_needs_players",
                params={"bot": decl.name},
            )

    async def ready(self, variant: Variant, specs: set[str], players: int, user: str | None = None) -> None:
        """Wait (a few seconds at most) until every bot's tables for `variant` are prepared; Refused otherwise
        (`user`: who needs them, in the messages, when it is not the bot: "a review")."""
        for spec in sorted(specs):
            who = user or f"bot:{spec}"
            key = (spec, variant.fingerprint)
            if key in self.prepared:
                continue
            task = self.preparing.get(key)
            if task is None:
                if len(self.preparing) >= MAX_PREPARING:
                    raise Refused(
                        503, "the server is preparing other bots' tables; try again in a minute", 60, code="busy"
                    )
                job = {
                    "spec": spec,
                    "variant": (variant.id, self.files.get(variant.id), dict(variant.options)),
                    "players": players,
                }
                task = asyncio.create_task(self.hall.workers.prepare(job))
                self.preparing[key] = task
                task.add_done_callback(functools.partial(self._prepared, key))
            try:
                await asyncio.wait_for(asyncio.shield(task), self.config.prepare_wait)
            except TimeoutError:
                raise Refused(
                    503,
                    f"{who} needs {'its tables' if user is None else f'the tables of bot:{spec}'} for {variant.id}, "
                    "and they are being prepared now (the first time "
                    f"takes long: a minute or many for some bots); try again later, or prepare them before serving "
                    f"with `dicecup serve --prepare {variant.id}:bot:{spec}`",
                    30,
                    code="preparing",
                    params={"bot": spec, "variant": variant.id},
                ) from None
            except Exception as exc:
                raise Refused(
                    400,
                    f"{who}: bot:{spec} cannot play {variant.id}: {exc}"
                    if user
                    else f"{who} cannot play {variant.id}: {exc}",
                    code="bad_bot",
                    params={"bot": spec, "detail": str(exc)},
                ) from None

    def _prepared(self, key: tuple[str, str], task: asyncio.Task[None]) -> None:
        self.preparing.pop(key, None)
        if task.cancelled():
            return
        if task.exception() is None:
            self.prepared.add(key)
            log.info("bot:%s is ready", key[0])
        else:
            log.warning("bot:%s could not be prepared: %s", key[0], task.exception())

    async def prepare(self, vid: str, spec: str) -> None:
        """`--prepare VARIANT:bot:SPEC`: start preparing a bot's tables for a variant's default options."""
        variant = self.variant(vid, None)
        self._check_bot(spec, variant, 2, f"--prepare {vid}:bot:{spec}")
        try:
            await self.ready(variant, {spec}, 2)
        except Refused as exc:
            if exc.status != 503:
                raise DicecupError(exc.message) from None

    # ------------------------------------------------------------------ seats and saves

    async def room(self, code: str) -> Room:
        try:
            return await self.hall.room(code)
        except UnknownTable as exc:
            raise Refused(404, str(exc), code="unknown_table") from None
        except StoreUnavailable:
            raise Refused(503, "the database did not answer; try again", code="unavailable") from None

    async def claim(self, code: str, seat: int, name: Any) -> dict[str, Any]:
        """Take an open human seat with a name; its token (given only now: keep it)."""
        room = await self.room(code)
        if not 0 <= seat < len(room.record.seats):
            raise no_such_seat(code, len(room.record.seats), seat)
        record = room.record.seats[seat]
        if record.player != HUMAN or record.token_hash is not None:
            raise Refused(
                409,
                f"seat {seat} is taken; watch the game, or take another seat",
                code="seat_taken",
                params={"seat": seat},
            )
        name = check_name(name, "name")
        if any(s.name == name for s in room.record.seats if s.seat != seat):
            raise name_taken(name)
        token = new_token()
        try:
            done = await self.hall.store.claim(code, seat, name, token_hash(token), time.time())
        except NameTaken:
            done = None
        except StoreUnavailable:
            raise Refused(503, "the database did not answer; try again", code="unavailable") from None
        await self.hall.catch_up(room, seats=True)
        if done is None:
            raise name_taken(name)
        if not done:
            raise Refused(
                409,
                f"seat {seat} was taken a moment ago; watch the game, or take another seat",
                code="seat_taken",
                params={"seat": seat},
            )
        await self.hall.start(room)
        return {"seat": seat, "token": token}

    async def hint(self, code: str, token: str, lang: str = DEFAULT) -> dict[str, Any]:
        """What the best bot ready for the variant would play now for the seat of `token`, on its turn (its
        label in language `lang`)."""
        room = await self.room(code)
        state, hashed = room.state, token_hash(token)
        seat = next((s.seat for s in room.record.seats if s.token_hash == hashed), None)
        if seat is None:
            raise Refused(403, f"the token is of no seat at table {code}", code="unknown_token")
        if state is None or state.over or room.to_move != seat:
            raise Refused(409, "a hint is given on your turn only", code="hint_off_turn")
        seq, fingerprint = room.seq, room.record.fingerprint
        spec = next((b for b in HINT_BOTS if (b, fingerprint) in self.prepared), "greedy")
        try:
            move = await self.hall.workers.choose(self.hall.bot_job(room, seat, spec))
        except WorkerFailed as exc:
            raise Refused(503, f"no hint now: {exc}", code="busy") from None
        if move[0] == "keep" and seq == room.no_reroll_at:  # after an undo no reroll is allowed: the best box now
            spec, move = "greedy", action_to_json(timeout_action(state))
        hint = {"seq": seq, "seat": seat, "bot": f"bot:{spec}", "move": move}
        hint["label"] = room.label(lang, state, action_from_json(move))
        if spec in HINT_BOTS:  # why, by the same bot's values (a hint without it where they cannot say)
            try:
                hint["explanation"] = await self.hall.workers.explain(
                    {**self.hall.bot_job(room, seat, spec), "lang": lang}
                )
            except WorkerFailed as exc:
                log.info("no explanation of a hint at table %s: %s", code, exc)
        return hint

    async def view(self, code: str) -> dict[str, Any]:
        room = await self.room(code)
        return {"table": room.table_view(), "game": room.game_view(), "recent": list(room.recent)}

    async def saved_game(self, code: str) -> Any:
        """The table as a saved game (`terminal.savefile.SavedGame`): its seats, its moves, and dice of a new
        generator for whoever resumes it (nothing of this server's own generators leaves it)."""
        from ..terminal.savefile import SavedGame, TrackedRandom
        from ..terminal.seats import Seat

        room = await self.room(code)
        if room.state is None:
            raise Refused(409, "the game has not started: seats are still open", code="not_started")
        seats = tuple(Seat(name, room.bot(i) or HUMAN) for i, name in enumerate(room.state.players))
        return SavedGame(room.state, seats, TrackedRandom(secrets.randbits(64)))

    async def save(self, code: str) -> bytes:
        """The table as `dicecup play --save` writes a game (a journal): `dicecup review` and `resume` read it."""
        saved = await self.saved_game(code)
        return await asyncio.to_thread(save_bytes, saved)


def save_bytes(saved: Any) -> bytes:
    """A saved game's file as bytes, written by the CLI's own save writer (in a folder of its own, then read)."""
    from ..terminal.savefile import save

    with tempfile.TemporaryDirectory(prefix="dicecup-export-") as folder:
        path = Path(folder) / "game.json"
        save(path, saved)
        return path.read_bytes()
