"""Saved states: what a save holds, and the strict checks that refuse a corrupt, foreign or forged one.

A save holds the variant (id, source, options, fingerprint), the players, the
match length and every move since the start; loading replays the moves through
the rules (`GameState.from_dict`), then compares the position the save states
with the one the moves give. A save therefore describes only positions the
rules can reach, and a tampered one is refused with the key path at fault.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from attrs import frozen

from ..errors import DicecupError, SaveError
from ..language.model import Variant
from .actions import Action, action_from_json, shown

__all__ = ["SAVE_FORMAT", "SAVE_VERSION", "MAX_MOVES", "POSITION_KEYS", "Save", "read_save", "check_replay"]

SAVE_FORMAT = "dicecup/state"
SAVE_VERSION = 2
MAX_MOVES = 200_000  # far beyond any real match; bounds the work of loading a hostile save

#: The position keys a save states besides its moves; each must equal what the moves give.
POSITION_KEYS = (
    "cards",
    "current",
    "dice",
    "rolls_used",
    "held",
    "banked",
    "round",
    "rounds",
    "replays",
    "results",
    "over",
    "turn_state",
    "player_state",
)


@frozen
class Save:
    """A save's header, checked: the variant it needs, the players, the match length and the moves."""

    variant: Variant
    players: tuple[str, ...]
    rounds: int
    moves: tuple[Action, ...]


def _get(data: Any, key: str, kind: type | tuple[type, ...], where: str = "") -> Any:
    if not isinstance(data, dict) or key not in data:
        raise SaveError(f"save file is missing {where}{key!r}")
    value = data[key]
    if isinstance(value, bool) and kind in (int, (int, type(None))):
        raise SaveError(f"save file key {where}{key!r} must be a number, not {shown(value)}")
    if not isinstance(value, kind):
        names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise SaveError(f"save file key {where}{key!r} must be {names}, got {type(value).__name__}")
    return value


def read_save(data: Any, engine: Any) -> Save:
    """Check a save's envelope and header against `engine`; the moves are replayed by the caller."""
    if not isinstance(data, dict) or data.get("format") != SAVE_FORMAT:
        raise SaveError(f'not a dicecup save (no "format": "{SAVE_FORMAT}" key)')
    version = data.get("version")
    if version != SAVE_VERSION:
        if version == 1:
            raise SaveError("this save was written by dicecup 0.1 without its moves; it cannot be checked or resumed")
        raise SaveError(
            f"save format version {shown(version)} is not supported (this dicecup reads version {SAVE_VERSION})"
        )
    vid = _get(data, "variant", str)
    options = _get(data, "options", dict)
    if not all(isinstance(k, str) and isinstance(v, (str, int, float, bool)) for k, v in options.items()):
        raise SaveError("save file key 'options' must map option names to plain values")
    try:
        if vid in engine.variant_ids():
            variant = engine.variant(vid, options)
        else:
            source = _get(data, "source", str)
            if not source.endswith((".yaml", ".yml")):
                raise SaveError(f"save file key 'source' must name a variant .yaml file, got {source[:80]!r}")
            variant = engine.load_file(source, options)
    except SaveError:
        raise
    except DicecupError as exc:
        raise SaveError(f"the save's variant {vid!r} cannot be loaded: {exc}") from None
    if variant.fingerprint != data.get("fingerprint"):
        raise SaveError(
            f"the save was made with a different definition of variant {vid!r} "
            "(its rules or plugins changed since); it cannot be resumed safely"
        )
    players = _get(data, "players", list)
    if not players or not all(isinstance(p, str) for p in players):
        raise SaveError("save file key 'players' must be a non-empty list of names")
    if len(set(players)) != len(players):
        raise SaveError("save file key 'players' names a player twice")
    rounds = _get(data, "start_rounds", int)
    raw_moves = _get(data, "history", list)
    if len(raw_moves) > MAX_MOVES:
        raise SaveError(f"save file key 'history' holds {len(raw_moves):,} moves, more than {MAX_MOVES:,}")
    moves = []
    for i, raw in enumerate(raw_moves):
        try:
            moves.append(action_from_json(raw))
        except ValueError as exc:
            raise SaveError(f"save file key 'history[{i}]': {exc}") from None
    return Save(variant, tuple(players), rounds, tuple(moves))


def check_replay(data: Mapping[str, Any], replayed: Mapping[str, Any]) -> None:
    """Refuse a save whose stated position differs from the one its moves give (naming the first key)."""
    for key in POSITION_KEYS:
        if key not in data:
            raise SaveError(f"save file is missing {key!r}")
        where = _first_difference(data[key], replayed[key], key)
        if where is not None:
            raise SaveError(f"save file key {where!r} does not match the game its moves replay; the save was changed")


def _first_difference(a: Any, b: Any, path: str) -> str | None:
    if isinstance(a, dict) and isinstance(b, dict):
        for k in list(a) + [k for k in b if k not in a]:
            if k not in a or k not in b:
                return f"{path}.{k}"
            got = _first_difference(a[k], b[k], f"{path}.{k}")
            if got is not None:
                return got
        return None
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return path
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            got = _first_difference(x, y, f"{path}[{i}]")
            if got is not None:
                return got
        return None
    if type(a) is not type(b) or a != b:
        return path
    return None
