"""Saved terminal games: who plays each seat, the moves, and the dice generator, in a journal.

`dicecup play --save F` writes F as a journal (`journal`): a header line (the variant,
the players, the seats, the hints), then one line per move as it is made, with how
far the dice generator has run; a line restating the generator where the count starts
again (the game's start, after an undo, every 2**20 words). Saving a move appends one
line, whatever the game's length. `dicecup resume F` replays the moves through the
rules and continues exactly, the same dice included. A save cut short by a crash is
resumed after its last whole line, and says so; one changed in any other way is refused
with the line at fault. Saves of the single-JSON version 1 are still read.
"""

from __future__ import annotations

import json
import os
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from attrs import frozen

from ..errors import DicecupError, SaveError
from ..fileio import FileError, decode, read_bytes
from ..game.actions import action_to_json, shown
from ..game.history import History
from ..game.saving import (
    MAX_MOVES,
    VariantArg,
    VariantFileNeeded,
    move_from_json,
    new_game,
    replay,
    save_header,
    variant_json,
)
from ..game.state import GameState
from .generator import TrackedRandom, generator_state, restore
from .journal import Journal, Writer, read_journal
from .session import HUMAN, Seat

__all__ = ["FORMAT", "VERSION", "Recorder", "SavedGame", "TrackedRandom", "load", "save"]

FORMAT = "dicecup/play"
VERSION = 2
MAX_SAVE_BYTES = 32 << 20  # the longest match a save may hold, 200,000 moves, is about 13 MB
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


def _header(saved: SavedGame) -> dict[str, Any]:
    """The first line of a save: the game's variant, players, length and seats, and the hints asked for."""
    state = saved.state
    about = variant_json(state.variant)
    src = Path(about["source"])
    if src.is_file():
        about["source"] = str(src.resolve())  # informative (never read back): which file to pass to resume
    return {
        "format": FORMAT,
        "version": VERSION,
        **about,
        "players": list(state.players),
        "start_rounds": state.rounds - state.replays,
        "seats": [{"name": s.name, "kind": s.spec} for s in saved.seats],
        "hints": saved.hints,
        **({"hint_objectives": list(saved.objectives)} if saved.objectives else {}),
    }


def _move(n: int, move: Any, drawn: int) -> dict[str, Any]:
    return {"n": n, "move": action_to_json(move), "drawn": drawn}


def _generator(rng: random.Random) -> dict[str, Any]:
    return {"generator": generator_state(rng)}


def save(path: str | os.PathLike, saved: SavedGame) -> None:
    """Write a whole saved game at once, atomically (the old file or the new, never half of one)."""
    moves = [_move(n, m, 0) for n, m in enumerate(saved.state.history)]
    Writer.create(path, _header(saved), [_generator(saved.rng), *moves]).close()


class Recorder:
    """Keeps a save up to date as a game goes on: each new move appended, an undo taken back."""

    def __init__(self, writer: Writer, saved: SavedGame) -> None:
        self.writer = writer
        self.settings = (saved.hints, saved.objectives)  # the hints the header holds
        self._moves = saved.state.history  # the moves the save holds
        self._lines: list[int] = []  # the line count before each move's line (to take moves back)
        self._epoch: object = None  # the generator's epoch and count at its last restatement
        self._base = 0
        self._recorded = False  # whether a line was written since the save was opened
        self._at: tuple[object, int | None] = (None, None)  # the generator's epoch and count the last line gives
        self.rng = saved.rng

    @classmethod
    def start(cls, path: str | os.PathLike, saved: SavedGame) -> Recorder:
        """A new save at `path` holding `saved` (its moves so far and its generator)."""
        rng = saved.rng
        moves = [_move(n, m, 0) for n, m in enumerate(saved.state.history)]
        writer = Writer.create(path, _header(saved), [_generator(rng), *moves])  # the generator as it is after them
        rec = cls(writer, saved)
        rec._lines = list(range(2, 2 + len(moves)))
        rec._restated()
        return rec

    @classmethod
    def resume(cls, path: str | os.PathLike, engine: Any, variant: VariantArg = None) -> tuple[SavedGame, Recorder]:
        """The saved game at `path`, and a recorder appending to it (a cut last line is cut off first; a
        version 1 save is written again as a journal)."""
        try:
            writer, data = Writer.reopen(path, MAX_SAVE_BYTES)
        except FileError as exc:
            raise SaveError(str(exc)) from None
        try:
            if not _is_journal(data):  # version 1: read, then written again as a journal
                saved = _from_old(data, Path(path), engine, variant)
                writer.close()
                return saved, cls.start(path, saved)
            journal = read_journal(data, path)
            saved, starts = _from_journal(journal, path, engine, variant)
            writer.adopt(journal)
        except BaseException:
            writer.close()
            raise
        rec = cls(writer, saved)
        rec._lines = starts  # the generator is restated with the first move recorded (counting starts there)
        return saved, rec

    def _restated(self) -> None:
        self._epoch = getattr(self.rng, "epoch", None)
        self._base = getattr(self.rng, "drawn", 0)

    def _restate(self) -> None:
        self.writer.append([_generator(self.rng)])
        self._restated()
        self._at = (self._epoch, self._base)

    def record(self, state: GameState, sync: bool = False) -> None:
        """Bring the save to `state`: take back the moves it no longer has (an undo), append the new ones."""
        have, now = self._moves, state.history
        common = _common(have, now)
        if common < len(have):
            self.writer.truncate(self._lines[common])
            del self._lines[common:]
        new = now.since(common)
        drawn = getattr(self.rng, "drawn", None)
        records: list[dict[str, Any]] = []
        stale = common < len(have) or getattr(self.rng, "epoch", None) is not self._epoch or drawn is None
        if stale or not 0 <= drawn - self._base <= RESTATE_AFTER:  # type: ignore[operator]
            records.append(_generator(self.rng))
            self._restated()
        count = len(self.writer) + len(records)
        for k, move in enumerate(new):
            self._lines.append(count + k)
            records.append(_move(common + k, move, drawn - self._base if drawn is not None else 0))
        if records:
            self.writer.append(records, sync=sync)
            self._recorded = True
            self._at = (getattr(self.rng, "epoch", None), drawn)
        self._moves = now

    def close(self) -> None:
        """Write the generator as it stands (so resuming needs no counting) and flush the save to disk."""
        if self.writer.fd >= 0:
            try:
                now = (getattr(self.rng, "epoch", None), getattr(self.rng, "drawn", None))
                if self._recorded and (now[0] is not self._at[0] or now[1] != self._at[1] or now[1] is None):
                    self._restate()
            finally:
                self.writer.close()


def _common(a: History, b: History) -> int:
    """The number of moves `a` and `b` begin with alike (shared nodes are not compared again)."""
    n = min(len(a), len(b))
    x, y = a.back(n), b.back(n)
    while x is not y and len(x):
        if x[-1] != y[-1]:
            n = len(x) - 1
        x, y = x.before, y.before
    return n


def _is_journal(data: bytes) -> bool:
    """Whether `data` is a journal (version 2; its first line sealed), not a version 1 JSON document."""
    end = data.find(b"\n")
    return end >= 0 and data.rfind(b',"sum":"', 0, end) >= 0


def load(path: str | os.PathLike, engine: Any, variant: VariantArg = None) -> SavedGame:
    """Read a save (SaveError for a missing, unreadable, oversized, corrupt or foreign file). `variant`: the
    variant file the game was played with, when it is neither built in nor installed (never read unasked)."""
    p = Path(path)
    try:
        data = read_bytes(p, limit=MAX_SAVE_BYTES, what="saved game")
    except FileError as exc:
        raise SaveError(str(exc)) from None
    if _is_journal(data):
        return _from_journal(read_journal(data, p), p, engine, variant)[0]
    return _from_old(data, p, engine, variant)


def _check_header(data: Any, where: str) -> None:
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        if isinstance(data, dict) and data.get("format") == "dicecup/state":
            raise SaveError("this is a bare game state (GameState.to_json), not a `dicecup play --save` file")
        raise SaveError(f'not a dicecup saved game (no "format": "{FORMAT}" key{where})')


def _from_journal(
    journal: Journal, path: str | os.PathLike, engine: Any, variant: VariantArg
) -> tuple[SavedGame, list[int]]:
    """The game a journal holds, and the line count before each move's line."""
    if not journal.lines:
        raise SaveError(f"{path}: not a dicecup saved game (no whole line in it)")
    head = journal.lines[0].record
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
    moves, numbers, starts = [], [], []
    rng: TrackedRandom | None = None
    drawn = 0
    for line in journal.lines[1:]:
        rec, where = line.record, f"{path}: line {line.number}"
        if set(rec) == {"generator"}:
            rng, drawn = restore(rec["generator"], f"line {line.number}"), 0
            continue
        if set(rec) != {"n", "move", "drawn"}:
            raise SaveError(f"{where} is neither a move nor the dice generator; the file was changed")
        if rec["n"] != len(moves) or isinstance(rec["n"], bool):
            raise SaveError(
                f"{where} holds move {shown(rec['n'])} where move {len(moves)} belongs: "
                "moves were removed, repeated or reordered"
            )
        got = rec["drawn"]
        if not isinstance(got, int) or isinstance(got, bool) or not drawn <= got <= RESTATE_AFTER or rng is None:
            raise SaveError(f"{where}: 'drawn' {shown(got)} is not where the dice generator can stand")
        if len(moves) >= MAX_MOVES:
            raise SaveError(f"{path}: holds more than {MAX_MOVES:,} moves")
        drawn = got
        moves.append(move_from_json(rec["move"], f"line {line.number}"))
        numbers.append(line.number)
        starts.append(line.number - 1)
    if rng is None:
        raise SaveError(f"{path}: the save holds no dice generator; the file was changed")
    rng.run(drawn)
    try:
        state = replay(new_game(GameState, compiled, players, rounds), moves, lambda i: f"line {numbers[i]}")
    except SaveError as exc:
        raise SaveError(f"{path}: {exc}") from None
    note = ""
    if journal.torn:
        note = (
            f"the save's last line was cut short ({journal.torn:,} bytes: the game stopped while saving); "
            f"the game continues after its last whole move ({len(moves)} moves)"
        )
    return SavedGame(state, seats, rng, hints, objectives, note), starts


def _from_old(data: bytes, path: Path, engine: Any, variant: VariantArg) -> SavedGame:
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
        state = GameState.from_dict(doc.get("game"), engine, variant)  # type: ignore[arg-type]
        seats, hints, objectives = _seats(doc, state.players, engine)
        return SavedGame(state, seats, restore(doc.get("rng"), "key 'rng'"), hints, objectives)
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
