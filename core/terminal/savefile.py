"""Saved terminal games: who plays each seat, the moves, and the dice generator, in a journal.

`dicecup play --save F` writes F as a journal (`journal`): a header line (the variant,
the players, the seats, the hints), then one line per move as it is made, with how
far the dice generator has run; a line restating the generator where the count starts
again (the game's start, a new seed, an undo back before the last restatement, every
2**20 words). Saving a move appends one line, whatever the game's length; an undo cuts
lines back off the end. `dicecup resume F` replays the moves through the
rules and continues exactly, the same dice included. A save cut short by a crash is
resumed after its last whole line, and says so; one changed in any other way is refused
with the line at fault. Saves of the single-JSON version 1 are still read.
"""

from __future__ import annotations

import os
import random
from pathlib import Path
from typing import Any

from ..errors import SaveError
from ..fileio import FileError, read_bytes
from ..game.actions import action_to_json
from ..game.history import History
from ..game.saving import VariantArg, variant_json
from ..game.state import GameState
from ..locales import NP_, Phrase
from ..progress import Reporter, task
from .generator import TrackedRandom, generator_state
from .journal import Journal, Writer
from .savereading import FORMAT, RESTATE_AFTER, VERSION, Journaled, SavedGame, read_journaled, read_old

__all__ = ["FORMAT", "VERSION", "Journaled", "Recorder", "SavedGame", "TrackedRandom", "load", "read", "save"]

MAX_SAVE_BYTES = 32 << 20  # the longest match a save may hold, 200,000 moves, is about 13 MB


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
    Recorder.start(path, saved).close()


class Recorder:
    """Keeps a save up to date as a game goes on: each new move appended, an undo taken back."""

    def __init__(self, path: str | os.PathLike, saved: SavedGame, writer: Writer | None = None) -> None:
        self.path = path
        self.writer = writer  # None until the first move is recorded (a version 1 save is rewritten then)
        self.settings = (saved.hints, saved.objectives)  # the hints the header holds
        self._saved = saved
        self._moves = saved.state.history  # the moves the save holds
        self._lines: list[int] = []  # the line count before each move's line (to take moves back)
        self._epoch: object = None  # the generator's epoch and count at its last restatement
        self._base = 0
        self._base_line = 0  # the line of that restatement (from 1)
        self._recorded = False  # whether a line was written since the save was opened
        self._at: tuple[object, int | None] = (None, None)  # the generator's epoch and count the last line gives
        self.rng = saved.rng

    @classmethod
    def start(cls, path: str | os.PathLike, saved: SavedGame) -> Recorder:
        """A new save at `path` holding `saved` (its moves so far and its generator)."""
        rec = cls(path, saved)
        rec._create()
        return rec

    def _create(self) -> Writer:
        """Write the save anew: the header, the generator as it is now, the moves so far."""
        moves = [_move(n, m, 0) for n, m in enumerate(self._moves)]
        self.writer = Writer.create(self.path, _header(self._saved), [_generator(self.rng), *moves])
        self._lines = list(range(2, 2 + len(moves)))
        self._restated(2)
        self._at = (self._epoch, self._base)
        return self.writer

    @classmethod
    def resume(
        cls, path: str | os.PathLike, engine: Any, variant: VariantArg = None, progress: Reporter | None = None
    ) -> tuple[SavedGame, Recorder]:
        """The saved game at `path`, and a recorder appending to it (a cut last line is cut off first; a
        version 1 save is written again as a journal when a move is made); `progress` hears of the moves
        replayed."""
        try:
            writer, data = Writer.reopen(path, MAX_SAVE_BYTES)
        except FileError as exc:
            raise SaveError(str(exc)) from None
        try:
            if not _is_journal(data):
                saved = replayed(read_old(data, Path(path), engine, variant), progress)
                writer.close()
                return saved, cls(path, saved)
            journal = Journal(data, path)
            journaled = read_journaled(journal, path, engine, variant)
            saved = replayed(journaled, progress)
            writer.adopt(journal)
        except BaseException:
            writer.close()
            raise
        rec = cls(path, saved, writer)
        rec._lines = [n - 1 for n in journaled.lines]  # the generator is restated with the first move recorded
        return saved, rec

    def _restated(self, line: int) -> None:
        self._epoch = getattr(self.rng, "epoch", None)
        self._base = getattr(self.rng, "drawn", 0)
        self._base_line = line

    def _restate(self) -> None:
        assert self.writer is not None
        self.writer.append([_generator(self.rng)])
        self._restated(len(self.writer))
        self._at = (self._epoch, self._base)

    def record(self, state: GameState, sync: bool = False) -> None:
        """Bring the save to `state`: take back the moves it no longer has (an undo), append the new ones."""
        writer = self.writer if self.writer is not None else self._create()
        have, now = self._moves, state.history
        common = _common(have, now)
        if common < len(have):  # an undo: cut back to the last move kept (and any generator line after it)
            writer.truncate(self._lines[common - 1] + 1 if common else 1)
            del self._lines[common:]
            self._recorded, self._at = True, (None, None)
        new = now.since(common)
        drawn = getattr(self.rng, "drawn", None)
        records: list[dict[str, Any]] = []
        # counted from the last restatement while it is still in the file and the generator ran on from it (an
        # undo rewinds the generator to a decision after it); written out again otherwise
        counted = self._base_line <= len(writer) and getattr(self.rng, "epoch", None) is self._epoch
        if drawn is None or not counted or not 0 <= drawn - self._base <= RESTATE_AFTER:
            records.append(_generator(self.rng))
            self._restated(len(writer) + 1)
        count = len(writer) + len(records)
        for k, move in enumerate(new):
            records.append(_move(common + k, move, drawn - self._base if drawn is not None else 0))
        if records:
            writer.append(records, sync=sync)
            self._lines.extend(range(count, count + len(new)))
            self._recorded = True
            self._at = (getattr(self.rng, "epoch", None), drawn)
        self._moves = now

    def close(self) -> None:
        """Write the generator as it stands (so resuming needs no counting) and flush the save to disk."""
        if self.writer is not None and self.writer.fd >= 0:
            try:
                now = (getattr(self.rng, "epoch", None), getattr(self.rng, "drawn", None))
                moved = now[0] is not self._at[0] or now[1] != self._at[1] or now[1] is None
                if self._recorded and moved and not self.writer.broken:
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


def replayed(journaled: Journaled, progress: Reporter | None = None) -> SavedGame:
    """`journaled.replay()`, each move told to `progress` (a long save takes seconds to replay)."""
    n = len(journaled.moves)
    label = Phrase(NP_("replaying {count} move", "replaying {count} moves"), n=n, count=f"{n:,}")
    with task(progress, label, n, "moves") as told:
        return journaled.replay(lambda state, move, index: told.advance())


def read(path: str | os.PathLike, engine: Any, variant: VariantArg = None) -> Journaled:
    """Read and check a save without replaying its moves (SaveError for a missing, unreadable, oversized,
    corrupt or foreign file). `variant`: the variant file the game was played with, when it is neither built
    in nor installed (a save never reads the file it names)."""
    p = Path(path)
    try:
        data = read_bytes(p, limit=MAX_SAVE_BYTES, what="saved game")
    except FileError as exc:
        raise SaveError(str(exc)) from None
    if _is_journal(data):
        return read_journaled(Journal(data, p), p, engine, variant)
    return read_old(data, p, engine, variant)


def load(path: str | os.PathLike, engine: Any, variant: VariantArg = None) -> SavedGame:
    """Read a save and replay its moves through the rules (see `read`)."""
    return read(path, engine, variant).replay()
