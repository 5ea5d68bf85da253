"""Saved terminal games: the game state plus who plays each seat and the dice generator.

`dicecup play --save F` rewrites F after every action (dicecup.fileio.write_atomic, so a
killed process leaves the previous save intact); `dicecup resume F` reads it back
and continues exactly, the same dice included. The file wraps the engine's own
versioned state JSON in a versioned envelope of its own.
"""

from __future__ import annotations

import json
import os
import random
from pathlib import Path
from typing import Any

from attrs import frozen

from ..errors import DicecupError, SaveError
from ..fileio import FileError, read_text, write_atomic
from ..game.actions import shown
from ..game.state import GameState
from .seats import HUMAN, Seat

__all__ = [
    "FORMAT",
    "VERSION",
    "SavedGame",
    "to_dict",
    "from_dict",
    "load",
    "save",
    "write_atomic",
    "rng_state",
    "make_rng",
]

FORMAT = "dicecup/play"
VERSION = 1
MAX_SAVE_BYTES = 16 << 20  # a save of a long match is tens of kB


@frozen
class SavedGame:
    """Everything needed to continue a game exactly."""

    state: GameState
    seats: tuple[Seat, ...]
    rng: random.Random
    hints: bool = False
    objectives: tuple[str, ...] = ()  # what the hints rank by (`play --objective`), as written; () the mean


def rng_state(rng: random.Random) -> list[Any]:
    """The generator's state as JSON-ready lists."""
    version, internal, gauss = rng.getstate()
    return [version, list(internal), gauss]


def make_rng(data: Any) -> random.Random:
    """A generator restored from `rng_state` output; SaveError when it is not one a generator can be in."""
    try:
        version, internal, gauss = data
        if version != 3 or not isinstance(internal, list) or len(internal) != 625:
            raise ValueError("not a Mersenne Twister state")
        if not all(isinstance(x, int) and not isinstance(x, bool) and 0 <= x < 2**32 for x in internal):
            raise ValueError("its words must be 32-bit whole numbers")
        if not any(internal[:624]):
            raise ValueError("an all-zero state would roll the same face forever")
        if not 1 <= internal[624] <= 624:
            raise ValueError("its position is out of range")
        if gauss is not None and not isinstance(gauss, float):
            raise ValueError("its spare normal value is not a number")
        rng = random.Random()
        rng.setstate((version, tuple(internal), gauss))
    except (TypeError, ValueError) as exc:
        raise SaveError(f"save file key 'rng' is not a dice generator state ({exc})") from None
    return rng


def to_dict(saved: SavedGame) -> dict[str, Any]:
    """The save file's content."""
    game = saved.state.to_dict()
    src = Path(game.get("source", ""))
    if src.is_file():
        game["source"] = str(src.resolve())  # a variant file: resume from any directory
    return {
        "format": FORMAT,
        "version": VERSION,
        "seats": [{"name": s.name, "kind": s.spec} for s in saved.seats],
        "rng": rng_state(saved.rng),
        "hints": saved.hints,
        **({"hint_objectives": list(saved.objectives)} if saved.objectives else {}),
        "game": game,
    }


def from_dict(data: Any, engine: Any) -> SavedGame:
    """Check a save file's content and rebuild the game; SaveError says what is wrong."""
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        if isinstance(data, dict) and data.get("format") == "dicecup/state":
            raise SaveError("this is a bare game state (GameState.to_json), not a `dicecup play --save` file")
        raise SaveError(f'not a dicecup saved game (no "format": "{FORMAT}" key)')
    if data.get("version") != VERSION:
        raise SaveError(
            f"saved-game version {shown(data.get('version'))} is not supported (this dicecup reads {VERSION})"
        )
    state = GameState.from_dict(data.get("game"), engine)
    raw = data.get("seats")
    if not isinstance(raw, list) or len(raw) != len(state.players):
        raise SaveError("save file key 'seats' must list one seat per player")
    seats = []
    for i, (item, name) in enumerate(zip(raw, state.players, strict=True)):
        if not isinstance(item, dict) or item.get("name") != name:
            raise SaveError(f'save file seats[{i}] must be {{"name": {name!r}, "kind": ...}}')
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
    return SavedGame(state, tuple(seats), make_rng(data.get("rng")), hints, tuple(objectives))


def _known_bot(engine: Any, spec: str) -> bool:
    """Whether the engine has this bot, its argument (`risk:0.05`) read without error."""
    try:
        engine.bot_spec(spec)
    except DicecupError:
        return False
    return True


def load(path: str | os.PathLike, engine: Any) -> SavedGame:
    """Read a save file (SaveError for a missing, unreadable, oversized, corrupt or foreign file)."""
    p = Path(path)
    try:
        text = read_text(p, limit=MAX_SAVE_BYTES, what="saved game")
    except FileError as exc:
        raise SaveError(str(exc)) from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SaveError(
            f"{p}: not a dicecup saved game (invalid JSON at line {exc.lineno}, column {exc.colno})"
        ) from None
    except RecursionError:  # `[[[[...` nested deeper than Python's stack
        raise SaveError(f"{p}: not a dicecup saved game (JSON nested too deeply)") from None
    except ValueError:  # an integer of thousands of digits
        raise SaveError(f"{p}: not a dicecup saved game (a number in it is too long)") from None
    try:
        return from_dict(data, engine)
    except SaveError as exc:
        raise SaveError(f"{p}: {exc}") from None


def save(path: str | os.PathLike, saved: SavedGame) -> None:
    """Write a saved game atomically (dicecup.fileio.write_atomic: the old save or the new, never half)."""
    write_atomic(path, json.dumps(to_dict(saved), indent=1))
