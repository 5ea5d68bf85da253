"""Reading `dicecup play --save` files: a journal's header and moves checked line by line (version 2),
or the single JSON document of version 1; the moves are replayed through the rules by `Journaled.replay`."""

from __future__ import annotations

import json
import os
import random
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from attrs import frozen

from ..errors import DicecupError, SaveError
from ..fileio import FileError, decode
from ..game.actions import Action, shown
from ..game.saving import MAX_MOVES, VariantArg, VariantFileNeeded, move_from_json, new_game, replay, save_header
from ..game.state import GameState
from .generator import TrackedRandom, restore
from .journal import Journal
from .seats import HUMAN, Seat

__all__ = ["FORMAT", "VERSION", "RESTATE_AFTER", "Journaled", "SavedGame", "read_journaled", "read_old"]

FORMAT = "dicecup/play"
VERSION = 2
RESTATE_AFTER = 1 << 20  # words drawn before the generator is written out again (resuming runs at most this many)


@frozen
class SavedGame:
    """Everything needed to continue a game exactly."""

    state: GameState
    seats: tuple[Seat, ...]
    rng: random.Random
    hints: bool = False
    objectives: tuple[str, ...] = ()  # what the hints rank by (`play --objective`), as written; () the mean
    note: str = ""  # what reading the save repaired (a last line cut short), for the player to be told


@frozen
class Journaled:
    """A save read and checked but its moves not yet replayed: the game's start and its moves, the seats,
    the generator as the last move left it, and where each move was read (its line)."""

    path: str
    start: GameState
    moves: tuple[Action, ...]
    lines: tuple[int, ...]  # the line of each move (from 1); for version 1, 0
    seats: tuple[Seat, ...]
    rng: random.Random
    hints: bool = False
    objectives: tuple[str, ...] = ()
    note: str = ""

    def replay(self, visit: Callable[[GameState, Action, int], object] | None = None) -> SavedGame:
        """The game the moves lead to, each checked by the rules (SaveError naming its line); `visit(state, move,
        i)` sees each move with the position it is made in."""
        where = (lambda i: f"line {self.lines[i]}") if self.lines else (lambda i: f"key 'history[{i}]'")
        try:
            state = replay(self.start, self.moves, where, visit)
        except SaveError as exc:
            raise SaveError(f"{self.path}: {exc}") from None
        return SavedGame(state, self.seats, self.rng, self.hints, self.objectives, self.note)


def _check_header(data: Any, where: str) -> None:
    """Refuse what is not a `dicecup play --save` header (a bare game state is named as such)."""
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        if isinstance(data, dict) and data.get("format") == "dicecup/state":
            raise SaveError("this is a bare game state (GameState.to_json), not a `dicecup play --save` file")
        raise SaveError(f'not a dicecup saved game (no "format": "{FORMAT}" key{where})')


def read_journaled(journal: Journal, path: str | os.PathLike, engine: Any, variant: VariantArg) -> Journaled:
    """The game a journal holds, checked line by line (its moves are replayed by `Journaled.replay`)."""
    records = journal.records()
    number, head = next(records, (0, {}))
    if not number:
        raise SaveError(f"{path}: not a dicecup saved game (no whole line in it)")
    try:
        _check_header(head, " on its first line")
        if head.get("version") != VERSION:
            raise SaveError(
                f"saved-game version {shown(head.get('version'))} is not supported (this dicecup reads 1 and {VERSION})"
            )
        compiled, players, rounds = save_header(head, engine, variant)
        seats, hints, objectives = _seats(head, players, engine)
    except VariantFileNeeded as exc:
        raise exc.at_file(path) from None
    except SaveError as exc:
        raise SaveError(f"{path}: {exc}") from None
    moves: list[Action] = []
    numbers: list[int] = []
    known: dict[Any, Action] = {}  # each distinct move read once: a game repeats a few hundred
    rng: TrackedRandom | None = None
    drawn = 0
    for number, rec in records:
        where = f"save file line {number}"
        try:
            if len(rec) == 1 and "generator" in rec:
                rng, drawn = restore(rec["generator"], f"line {number}"), 0
                continue
            if rec.keys() != {"n", "move", "drawn"}:
                raise SaveError(f"{where} is neither a move nor the dice generator; the file was changed")
            if rec["n"] != len(moves) or isinstance(rec["n"], bool):
                raise SaveError(
                    f"{where} holds move {shown(rec['n'])} where move {len(moves)} belongs: "
                    "moves were removed, repeated or reordered"
                )
            if rng is None:
                raise SaveError(f"{where}: the save holds no dice generator before this move; the file was changed")
            got = rec["drawn"]
            if type(got) is not int or not drawn <= got <= RESTATE_AFTER:
                raise SaveError(f"{where}: 'drawn' {shown(got)} is not where the dice generator can stand")
            if len(moves) >= MAX_MOVES:
                raise SaveError(f"the save holds more than {MAX_MOVES:,} moves")
            drawn = got
            key = _move_key(rec["move"])
            move = known.get(key) if key is not None else None
            if move is None:
                move = move_from_json(rec["move"], f"line {number}")
                if key is not None:
                    known[key] = move
        except SaveError as exc:
            raise SaveError(f"{path}: {exc}") from None
        moves.append(move)
        numbers.append(number)
    if rng is None:
        raise SaveError(f"{path}: the save holds no dice generator; the file was changed")
    rng.run(drawn)
    note = ""
    if journal.torn:
        note = (
            f"the save's last line was cut short ({journal.torn:,} bytes: the game stopped while saving); "
            f"the game continues after its last whole move ({len(moves)} moves)"
        )
    start = new_game(GameState, compiled, players, rounds)
    return Journaled(str(path), start, tuple(moves), tuple(numbers), seats, rng, hints, objectives, note)


def _move_key(raw: Any) -> Any:
    """A move's JSON as a hashable key (None for one that is not a plain roll, keep or score)."""
    if type(raw) is list and len(raw) == 2 and type(raw[0]) is str:
        arg = raw[1]
        if type(arg) is str:
            return (raw[0], arg)
        if type(arg) is list and all(type(x) is int for x in arg):
            return (raw[0], *arg)
    return None


def read_old(data: bytes, path: Path, engine: Any, variant: VariantArg) -> Journaled:
    """A version 1 save: one JSON document holding the engine's state and the generator."""
    try:
        text = decode(path, data, "saved game")
    except FileError as exc:
        raise SaveError(str(exc)) from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SaveError(
            f"{path}: not a dicecup saved game (invalid JSON at line {exc.lineno}, column {exc.colno})"
        ) from None
    except RecursionError:  # `[[[[...` nested deeper than Python's stack
        raise SaveError(f"{path}: not a dicecup saved game (JSON nested too deeply)") from None
    except ValueError:  # an integer of thousands of digits
        raise SaveError(f"{path}: not a dicecup saved game (a number in it is too long)") from None
    try:
        _check_header(doc, "")
        if doc.get("version") != 1:
            raise SaveError(
                f"saved-game version {shown(doc.get('version'))} is not supported (this dicecup reads 1 and {VERSION})"
            )
        state = GameState.from_dict(doc.get("game"), engine, variant)
        seats, hints, objectives = _seats(doc, state.players, engine)
        rng = restore(doc.get("rng"), "key 'rng'")
        start = GameState.new(state.variant, list(state.players), state.rounds - state.replays)
        return Journaled(str(path), start, tuple(state.history), (), seats, rng, hints, objectives)
    except VariantFileNeeded as exc:
        raise exc.at_file(path) from None
    except SaveError as exc:
        raise SaveError(f"{path}: {exc}") from None


def _seats(data: dict[str, Any], players: Sequence[str], engine: Any) -> tuple[tuple[Seat, ...], bool, tuple[str, ...]]:
    """The seats, hints and hint objectives a save's header holds, checked."""
    raw = data.get("seats")
    if not isinstance(raw, list) or len(raw) != len(players):
        raise SaveError("save file key 'seats' must list one seat per player")
    seats = []
    for i, (item, name) in enumerate(zip(raw, players, strict=True)):
        if not isinstance(item, dict) or item.get("name") != name:
            raise SaveError(f'save file seats[{i}] must be {{"name": {shown(name)}, "kind": ...}}')
        kind = item.get("kind")
        if kind == HUMAN:
            seats.append(Seat(name))
        elif isinstance(kind, str) and kind.startswith("bot:") and _known_bot(engine, kind[4:]):
            seats.append(Seat(name, kind[4:]))
        else:
            known = ", ".join([HUMAN] + [f"bot:{b}" for b in engine.bot_usage()])
            raise SaveError(f"save file seats[{i}].kind is {shown(kind)}; expected one of {known}")
    hints = data.get("hints", False)
    if not isinstance(hints, bool):
        raise SaveError("save file key 'hints' must be true or false")
    objectives = data.get("hint_objectives", [])
    if not isinstance(objectives, list) or not all(isinstance(o, str) and o for o in objectives):
        raise SaveError('save file key \'hint_objectives\' must be a list of objectives like "mean", "risk:0.05"')
    return tuple(seats), hints, tuple(objectives)


def _known_bot(engine: Any, spec: str) -> bool:
    """Whether the engine has this bot, its argument (`risk:0.05`) read without error."""
    try:
        engine.bot_spec(spec)
    except DicecupError:
        return False
    return True
