"""One table in a server process's memory: its record, its state rebuilt from the stored moves, and who
is watching it.

The state only ever moves forward by moves that are stored: `advance` works out the moves a decision
leads to (the decision, then the server's rolls until the next decision) without changing the room,
the caller stores them, and only then does `commit` make them the room's.
"""

from __future__ import annotations

import asyncio
import random
from collections import deque
from collections.abc import Iterable, Sequence
from typing import Any, Protocol

from ..errors import DicecupError
from ..game.actions import Action, action_from_json, action_to_json
from ..game.state import GameState
from ..language.model import Variant
from .store import MoveRecord, TableRecord
from .views import move_label, players_view, progress_lines, result_view, turn_view, variant_view

__all__ = ["BrokenHistory", "Room", "Watcher", "HUMAN", "Step", "RECENT"]

HUMAN = "human"
RECENT = 50  # moves (with their narration) a joining client is shown


class BrokenHistory(Exception):
    """Stored moves that do not replay: the database was changed by something other than dicecup."""


class Watcher(Protocol):
    """A connection at a table: it is handed each message for the table as JSON text."""

    def send(self, text: str) -> None: ...


Step = tuple[MoveRecord, str]  # a stored move and its narration


class Room:
    """A table loaded in this process: the moves stored so far, the state they give, its watchers."""

    def __init__(self, record: TableRecord, variant: Variant) -> None:
        self.code = record.code
        self.record = record
        self.variant = variant
        self.state: GameState | None = None
        self.seq = 0
        self.turn_started = record.created_at
        self.recent: deque[dict[str, Any]] = deque(maxlen=RECENT)
        self.lock = asyncio.Lock()
        self.watchers: set[Watcher] = set()
        self.driver: asyncio.Task[None] | None = None
        self.idle_since: float | None = None
        self.failures = 0  # a bot's failed attempts in a row at this position
        self._players: tuple[Any, list[dict[str, Any]]] | None = None
        self._progress: tuple[Any, list[str]] | None = None
        self._table: dict[str, Any] | None = None

    # ------------------------------------------------------------------ who plays

    def player(self, seat: int) -> str:
        """Who plays `seat`: `human` or `bot:SPEC`."""
        return self.record.seats[seat].player

    def bot(self, seat: int) -> str | None:
        """The bot's spec (`greedy`, `risk:0.05`) when a bot plays `seat`."""
        player = self.player(seat)
        return player[4:] if player.startswith("bot:") else None

    @property
    def status(self) -> str:
        return "waiting" if self.state is None else "over" if self.state.over else "playing"

    @property
    def to_move(self) -> int | None:
        """The seat that decides now (None while waiting, rolling, or once over)."""
        s = self.state
        return None if s is None or s.over or s.is_chance else s.current

    @property
    def deadline(self) -> float | None:
        """When the human to move runs out of time (with a turn timer), as Unix time."""
        seat = self.to_move
        if seat is None or self.record.turn_seconds is None or self.player(seat) != HUMAN:
            return None
        return self.turn_started + self.record.turn_seconds

    # ------------------------------------------------------------------ moving on

    def replay(self, moves: Iterable[MoveRecord]) -> list[dict[str, Any]]:
        """Apply stored moves (loading, or catching up with another process); their entries for clients."""
        moves = list(moves)
        entries = []
        for i, move in enumerate(moves):
            if move.seq != self.seq + 1:
                raise BrokenHistory(f"table {self.code}: its move {move.seq} follows move {self.seq}")
            before = self.state if self.state is not None else self.start_state()
            try:
                action = action_from_json(move.move)
                after = before.apply(action)
            except (DicecupError, ValueError) as exc:
                raise BrokenHistory(
                    f"table {self.code}: its stored move {move.seq} is not a legal move ({exc})"
                ) from None
            self._step(before, after, move, move_label(before, action) if i >= len(moves) - RECENT else "")
            entries.append(self.recent[-1])
        return entries

    def _step(self, before: GameState, after: GameState, move: MoveRecord, label: str) -> None:
        if after.current != before.current or after.round != before.round or self.seq == 0:
            self.turn_started = move.at
        self.state = after
        self.seq = move.seq
        self.recent.append({"seq": move.seq, "seat": move.seat, "move": move.move, "by": move.actor, "label": label})

    def start_state(self) -> GameState:
        """The game at its start, every seat named (the first roll still to come)."""
        return GameState.new(self.variant, [s.name or f"seat {s.seat}" for s in self.record.seats])

    def advance(
        self,
        state: GameState,
        actions: Sequence[tuple[Action, str]],
        rng: random.Random,
        now: float,
        seq: int | None = None,
    ) -> tuple[GameState, list[tuple[GameState, GameState, MoveRecord, str]]]:
        """The moves that `actions` (each with who makes it) lead to from `state`, after move `seq` (the room's
        last by default): the dice are rolled whenever they are due, before and after each action, until a player
        decides. Returns (the state after, [(before, after, record, narration)]); IllegalAction, nothing changed."""
        steps = []
        seq = self.seq if seq is None else seq
        pending = list(actions)
        while True:
            if state.is_chance:
                actor, after = "dice", state.roll(rng)
            elif pending:
                action, actor = pending.pop(0)
                after = state.apply(action)
            else:
                break
            done = after.history[-1]
            seq += 1
            record = MoveRecord(seq, state.current, action_to_json(done), actor, now)
            steps.append((state, after, record, move_label(state, done)))
            state = after
        return state, steps

    def commit(self, steps: Sequence[tuple[GameState, GameState, MoveRecord, str]]) -> list[dict[str, Any]]:
        """Make stored steps the room's; their entries for clients."""
        for before, after, record, label in steps:
            self._step(before, after, record, label)
        return list(self.recent)[-len(steps) :] if steps else []

    def seat_changed(self, record: TableRecord) -> None:
        """Another seat was taken: the room's record is the stored one."""
        self.record = record

    # ------------------------------------------------------------------ what clients see

    def table_view(self) -> dict[str, Any]:
        """What the table was created with (it does not change)."""
        if self._table is None:
            r = self.record
            self._table = {
                "code": r.code,
                "link": f"/t/{r.code}",
                "variant": variant_view(self.variant),
                "options": dict(r.options),
                "turn_seconds": r.turn_seconds,
                "bot_delay": r.bot_delay,
                "created_at": r.created_at,
            }
        return self._table

    def game_view(self) -> dict[str, Any]:
        """The whole game now, as every client at the table sees it (the same for all: nothing secret)."""
        state = self.state
        seats = [
            {"seat": s.seat, "player": s.player, "name": s.name, "taken": s.player != HUMAN or s.token_hash is not None}
            for s in self.record.seats
        ]
        head = {
            "status": self.status,
            "seq": self.seq,
            "seats": seats,
            "to_move": self.to_move,
            "deadline": self.deadline,
        }
        if state is None:
            empty: dict[str, Any] = {
                "current": None,
                "round": 1,
                "rounds": 1,
                "dice": [],
                "rolls_left": 0,
                "may_reroll": False,
            }
            return {
                **head,
                **empty,
                "legal": {},
                "rule_actions": [],
                "notes": [],
                "progress": [],
                "players": [],
                "result": None,
            }
        if self._players is None or self._players[0] is not state.cards:  # the cards change only when scored
            self._players = (state.cards, players_view(state))
            self._progress = None
        if self._progress is None or self._progress[0] is not state.card:
            self._progress = (state.card, progress_lines(state))
        return {
            **head,
            **turn_view(state, self._progress[1], previews=self.to_move is None or self.bot(self.to_move) is None),
            "players": self._players[1],
            "result": result_view(state) if state.over else None,
        }

    def broadcast(self, text: str) -> None:
        for watcher in list(self.watchers):
            watcher.send(text)
