"""One table in a server process's memory: its record, its state rebuilt from the stored moves, and who
is watching it.

The state only ever moves forward by moves that are stored: `advance` works out the moves a decision
leads to (the decision, then the server's rolls until the next decision) without changing the room,
the caller stores them, and only then does `commit` make them the room's. An undo is the one way back:
`takeback` says what it would take back (or why not), the caller stores it, and `adopt` puts the room
rebuilt from the moves kept in place. The dice an undo took back are rolled again at their place.
"""

from __future__ import annotations

import asyncio
import random
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Protocol, TypeVar

from ..errors import DicecupError, IllegalAction
from ..game.actions import Action, Keep, action_from_json, action_to_json
from ..game.state import GameState
from ..language.model import Variant
from ..locales import DEFAULT, LANGUAGES, Catalogs
from .store import MoveRecord, TableRecord, Takeback
from .views import move_label, players_view, progress_lines, result_view, reviewable, turn_view, variant_view

__all__ = ["BrokenHistory", "CannotUndo", "Room", "Watcher", "HUMAN", "Step", "RECENT"]

HUMAN = "human"
RECENT = 50  # moves (with their narration) a joining client is shown

T = TypeVar("T")


class BrokenHistory(Exception):
    """Stored moves that do not replay: the database was changed by something other than dicecup."""


class CannotUndo(Exception):
    """Why a seat cannot take back a move now, in words for its player."""


class Watcher(Protocol):
    """A connection at a table: it is handed each message for the table as JSON text."""

    lang: str  # the language it reads (`locales.LANGUAGES`)

    def send(self, text: str) -> None: ...


Step = tuple[MoveRecord, str]  # a stored move and its narration


class Room:
    """A table loaded in this process: the moves stored so far, the state they give, its watchers."""

    def __init__(self, record: TableRecord, variant: Variant, catalogs: Catalogs | None = None) -> None:
        self.code = record.code
        self.record = record
        self.variant = variant
        self.catalogs = catalogs or Catalogs()
        self._named: dict[str, Variant] = {}  # the variant in each language a watcher reads
        self._labels: dict[int, dict[str, str]] = {}  # a recent move's narration in the other languages
        self.state: GameState | None = None
        self.seq = 0
        self.turn_started = record.created_at
        self.recent: deque[dict[str, Any]] = deque(maxlen=RECENT)
        self.lock = asyncio.Lock()
        self.watchers: set[Watcher] = set()
        self.driver: asyncio.Task[None] | None = None
        self.idle_since: float | None = None
        self.failures = 0  # a bot's failed attempts in a row at this position
        self._players: dict[str, tuple[Any, list[dict[str, Any]]]] = {}  # by language
        self._progress: dict[str, tuple[Any, list[str]]] = {}
        self._table: dict[str, Any] | None = None
        self.takebacks: dict[int, Takeback] = {}  # what the undos took back, the latest at each place
        self.undos = 0  # how many undos the table has had
        self.no_reroll_at: int | None = None  # an undo's place whose dice to come were seen: no reroll there

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
        if label:  # in the window clients are shown: said in the other languages too
            action = after.history[-1]
            self._labels[move.seq] = {lang: self.label(lang, before, action) for lang in LANGUAGES if lang != DEFAULT}
            for old in [s for s in self._labels if s <= move.seq - RECENT]:
                del self._labels[old]

    def named(self, lang: str) -> Variant:
        """The room's variant with the names of language `lang` (kept: a handful of languages)."""
        got = self._named.get(lang)
        if got is None:
            got = self._named[lang] = self.variant.in_language(lang)
        return got

    def label(self, lang: str, before: GameState, action: Action) -> str:
        """A move's narration in language `lang` (`views.move_label`)."""
        return self._said(lang, lambda: move_label(before, action, self.named(lang)))

    def _said(self, lang: str, say: Callable[[], T]) -> T:
        with self.catalogs.speaking(lang):
            return say()

    def entries_in(self, entries: Sequence[dict[str, Any]], lang: str) -> list[dict[str, Any]]:
        """Move entries (`recent`, or a commit's) narrated in language `lang`."""
        if lang == DEFAULT:
            return list(entries)
        return [{**e, "label": self._labels.get(e["seq"], {}).get(lang, e["label"])} for e in entries]

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
                actor, after = "dice", self._roll(state, seq + 1, rng)
            elif pending:
                action, actor = pending.pop(0)
                if isinstance(action, Keep) and seq == self.no_reroll_at:
                    raise IllegalAction(
                        "after an undo you cannot reroll here: the dice that would come have been seen; score a box"
                    )
                after = state.apply(action)
            else:
                break
            done = after.history[-1]
            seq += 1
            record = MoveRecord(seq, state.current, action_to_json(done), actor, now)
            steps.append((state, after, record, move_label(state, done)))
            state = after
        return state, steps

    def _roll(self, state: GameState, seq: int, rng: random.Random) -> GameState:
        """The roll at move `seq`: the dice an undo took back from that place when they are the same roll (the
        same seat rolling as many dice), so an undo never gives new dice; else dice from `rng`."""
        was = self.takebacks.get(seq)
        if was is not None and was.move.seat == state.current and was.move.move[0] == "roll":
            dice = was.move.move[1]
            if state.held is not None and len(dice) == state.variant.dice - len(state.held):
                return state.roll(dice=dice)
        return state.roll(rng)

    def commit(self, steps: Sequence[tuple[GameState, GameState, MoveRecord, str]]) -> list[dict[str, Any]]:
        """Make stored steps the room's; their entries for clients."""
        for before, after, record, label in steps:
            self._step(before, after, record, label)
        return list(self.recent)[-len(steps) :] if steps else []

    # ------------------------------------------------------------------ taking back

    def took_back(self, takebacks: Iterable[Takeback]) -> None:
        """Remember moves the table's undos took back (loading, or after an undo): their dice are the dice to
        come, and the latest undo's place allows no reroll when it took back dice that were seen."""
        for t in takebacks:
            self.takebacks[t.move.seq] = t
        if not self.takebacks:
            return
        self.undos = max(t.nth for t in self.takebacks.values())
        latest = [t for t in self.takebacks.values() if t.nth == self.undos]
        base = min(t.move.seq for t in latest) - 1
        seen = any(t.move.actor == "dice" for t in latest)
        self.no_reroll_at = base if seen else None

    def undoable(self) -> tuple[int, list[dict[str, Any]]] | None:
        """The seat that may take back its last move now, and the moves an undo would take back (that move and
        the dice rolled after it); None when nobody may (`takeback` says why)."""
        try:
            return self._takeback()
        except CannotUndo:
            return None

    def takeback(self, seat: int) -> list[dict[str, Any]]:
        """The moves an undo by `seat` takes back (`recent`'s entries); CannotUndo saying why it may not."""
        return self._takeback(seat)[1]

    def _takeback(self, seat: int | None = None) -> tuple[int, list[dict[str, Any]]]:
        state = self.state
        if state is None or state.over:
            raise CannotUndo("the game is over: nothing can be taken back" if state else "the game has not started")
        entries: list[dict[str, Any]] = []
        for entry in reversed(self.recent):
            entries.append(entry)
            if entry["by"] != "dice":
                break
        else:
            raise CannotUndo("you have made no move this game" if seat is not None else "no move yet")
        last = entries[-1]
        who = last["seat"]
        if seat is not None and who != seat:
            name = self.record.seats[who].name or f"seat {who}"
            raise CannotUndo(f"{name} moved since your last move; undo takes back only your own last move")
        if last["by"] != "seat":
            raise CannotUndo(
                "the turn timer played that move, not you: only a move of your own can be taken back"
                if last["by"] == "timer"
                else "a bot played the last move: only a move of your own can be taken back"
            )
        if last["move"][0] == "keep":
            raise CannotUndo(
                "a keep cannot be taken back once its dice are rolled: that would be a free reroll "
                "(undo takes back a score or an announcement)"
            )
        return who, entries[::-1]

    def adopt(self, other: Room) -> None:
        """Take the game of `other` (this table rebuilt from the moves an undo kept): its state, moves and
        narration; the watchers, the lock and the takebacks stay this room's."""
        self.state, self.seq, self.turn_started = other.state, other.seq, other.turn_started
        self.recent, self._labels = other.recent, other._labels
        self._players.clear()
        self._progress.clear()
        self.failures = 0

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
                "reviewable": reviewable(self.variant),
            }
        return self._table

    def game_view(self, lang: str = DEFAULT) -> dict[str, Any]:
        """The whole game now, as every client at the table sees it (the same for all: nothing secret), in
        language `lang`."""
        state = self.state
        seats = [
            {"seat": s.seat, "player": s.player, "name": s.name, "taken": s.player != HUMAN or s.token_hash is not None}
            for s in self.record.seats
        ]
        can = self.undoable()
        head = {
            "status": self.status,
            "seq": self.seq,
            "seats": seats,
            "to_move": self.to_move,
            "deadline": self.deadline,
            "undo": None if can is None else self._undo_view(can[0], can[1][0], lang),
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
        return self._said(lang, lambda: {**head, **self._state_view(state, lang)})

    def _undo_view(self, seat: int, entry: dict[str, Any], lang: str) -> dict[str, Any]:
        return {"seat": seat, "seq": entry["seq"], "label": self.entries_in([entry], lang)[0]["label"]}

    def _state_view(self, state: GameState, lang: str) -> dict[str, Any]:
        names = self.named(lang) if lang != DEFAULT else None
        players = self._players.get(lang)
        if players is None or players[0] is not state.cards:  # the cards change only when scored
            players = self._players[lang] = (state.cards, players_view(state, names))
            self._progress.pop(lang, None)
        progress = self._progress.get(lang)
        if progress is None or progress[0] is not state.card:
            progress = self._progress[lang] = (state.card, progress_lines(state, names))
        previews = self.to_move is None or self.bot(self.to_move) is None
        turn = turn_view(state, progress[1], previews=previews, names=names)
        if self.seq == self.no_reroll_at:  # after an undo whose dice to come were seen: score a box
            turn["may_reroll"] = False
        return {
            **turn,
            "players": players[1],
            "result": result_view(state) if state.over else None,
        }

    def broadcast(self, text: str) -> None:
        for watcher in list(self.watchers):
            watcher.send(text)

    def broadcast_each(self, make: Callable[[str], str]) -> None:
        """Send every watcher `make(lang)` for the language it reads (made once a language)."""
        made: dict[str, str] = {}
        for watcher in list(self.watchers):
            lang = getattr(watcher, "lang", DEFAULT)
            if lang not in made:
                made[lang] = make(lang)
            watcher.send(made[lang])
