"""Saved states: what a save holds, the strict checks that refuse a corrupt, foreign or forged one, and
which variant a save may name.

A save holds the variant, the players, the match length and every move since the start; loading replays the
moves through the rules and compares the position the save states with the one they give. So a save can only
describe positions the rules reach, and a tampered one is refused with the key path at fault.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Protocol, TypeVar

from attrs import frozen

from ..errors import DicecupError, DiceError, IllegalAction, SaveError
from ..language.engine import Engine
from ..language.frozen import thaw_json
from ..language.model import Variant
from .actions import Action, action_from_json, action_to_json, shown

__all__ = [
    "SAVE_FORMAT",
    "SAVE_VERSION",
    "MAX_MOVES",
    "POSITION_KEYS",
    "Save",
    "SavedGame",
    "VariantArg",
    "VariantFileNeeded",
    "award_json",
    "check_replay",
    "move_from_json",
    "read_save",
    "replay",
    "save_header",
    "save_variant",
    "state_from_dict",
    "state_from_json",
    "state_to_dict",
]

SAVE_FORMAT = "dicecup/state"
SAVE_VERSION = 2
MAX_MOVES = 200_000  # far beyond any real match; bounds the work of loading a hostile save
MAX_SAVED_BITS = 64  # no number in a real save comes near this; a longer one is refused before it is printed
SHOWN_SOURCE = 300  # characters of a save's variant source shown in a message

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


class SavedGame(Protocol):
    """What saving reads of a game state and does with one (`GameState` is the one there is): named here so
    this module, which the state module imports, needs nothing of it."""

    @classmethod
    def new(cls, variant: Variant, players: Sequence[str] | int = 1, rounds: int | None = None) -> Any: ...

    def apply(self, action: Action) -> Any: ...

    @property
    def variant(self) -> Variant: ...
    @property
    def players(self) -> tuple[str, ...]: ...
    @property
    def history(self) -> Iterable[Action]: ...
    @property
    def cards(self) -> tuple[Any, ...]: ...
    @property
    def results(self) -> tuple[Any, ...]: ...
    @property
    def current(self) -> int: ...
    @property
    def dice(self) -> tuple[int, ...]: ...
    @property
    def rolls_used(self) -> int: ...
    @property
    def held(self) -> tuple[int, ...] | None: ...
    @property
    def banked(self) -> tuple[int, ...]: ...
    @property
    def round(self) -> int: ...
    @property
    def rounds(self) -> int: ...
    @property
    def replays(self) -> int: ...
    @property
    def over(self) -> bool: ...
    @property
    def turn_state(self) -> Any: ...
    @property
    def player_state(self) -> tuple[Any, ...]: ...


S = TypeVar("S", bound=SavedGame)
#: The variant a caller passes for a save: compiled, or a variant file's path; None: the save's own id.
VariantArg = Variant | str | os.PathLike[str] | None


class VariantFileNeeded(SaveError):
    """A save of a variant defined by a file that was not passed: the file is named, never read."""

    def __init__(self, variant_id: str, source: str | None, at: str = "") -> None:
        self.variant_id = variant_id
        self.source = source
        self.at = at  # the save file, when known
        where = f" (the save names the file {shown(source, SHOWN_SOURCE)})" if source else ""
        super().__init__(
            f"{at}{': ' if at else ''}the save's variant {shown(variant_id, 80)} is neither built in nor "
            f"installed{where}; a save never reads a variant file by itself, so pass that file to load it "
            "(the CLI's --variant FILE, or variant=FILE)"
        )

    def at_file(self, path: str | os.PathLike[str]) -> VariantFileNeeded:
        """The same refusal, naming the save file it is about."""
        return VariantFileNeeded(self.variant_id, self.source, str(path))


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


def save_variant(data: Any, engine: Engine, variant: VariantArg = None) -> Variant:
    """The variant a save's header names: `variant` when the caller passes it (a Variant, or a variant file's
    path, compiled with the save's options; it must be that variant), else the engine's built-in or installed
    one. A variant file the save names is refused unread: a save from elsewhere could name any file, and errors
    would quote it, so the caller passes such a variant (`variant=`, the CLI's `--variant FILE`)."""
    vid = _get(data, "variant", str)
    options = _get(data, "options", dict)
    if not all(isinstance(k, str) and isinstance(v, (str, int, float, bool)) for k, v in options.items()):
        raise SaveError("save file key 'options' must map option names to plain values")
    if isinstance(variant, (str, os.PathLike)):  # a variant file the caller names: compiled with the save's options
        variant = engine.load_file(variant, options)
    if variant is not None:
        if not isinstance(variant, Variant):
            raise IllegalAction(f"variant must be a Variant or a variant file's path, got {shown(variant)}")
        if variant.id != vid:
            raise SaveError(f"the save is a game of {shown(vid, 80)}, not of {variant.id!r}; nothing was loaded")
    elif vid in engine.variant_ids():
        try:
            variant = engine.variant(vid, options)
        except DicecupError as exc:
            raise SaveError(f"the save's variant {vid!r} cannot be loaded: {exc}") from None
    else:
        source = data.get("source")
        raise VariantFileNeeded(vid, source if isinstance(source, str) else None)
    if variant.fingerprint != data.get("fingerprint"):
        raise SaveError(
            f"the save was made with a different definition of variant {vid!r} "
            "(its rules or plugins changed since); it cannot be resumed safely"
        )
    return variant


def save_header(data: Any, engine: Engine, variant: VariantArg = None) -> tuple[Variant, tuple[str, ...], int]:
    """A save's variant (see `save_variant`), players and match length at the start, checked."""
    compiled = save_variant(data, engine, variant)
    players = _get(data, "players", list)
    if not players or not all(isinstance(p, str) for p in players):
        raise SaveError("save file key 'players' must be a non-empty list of names")
    if len(set(players)) != len(players):
        raise SaveError("save file key 'players' names a player twice")
    return compiled, tuple(players), _get(data, "start_rounds", int)


def move_from_json(raw: Any, where: str) -> Action:
    """One saved move; SaveError naming `where` (a key or a line) when it is no move."""
    try:
        return action_from_json(raw)
    except ValueError as exc:
        raise SaveError(f"save file {where}: {exc}") from None


def read_save(data: Any, engine: Engine, variant: VariantArg = None) -> Save:
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
    compiled, players, rounds = save_header(data, engine, variant)
    raw_moves = _get(data, "history", list)
    if len(raw_moves) > MAX_MOVES:
        raise SaveError(f"save file key 'history' holds {len(raw_moves):,} moves, more than {MAX_MOVES:,}")
    moves = tuple(move_from_json(raw, f"key 'history[{i}]'") for i, raw in enumerate(raw_moves))
    return Save(compiled, players, rounds, moves)


def replay(
    start: S,
    moves: Iterable[Action],
    where: Callable[[int], str],
    visit: Callable[[S, Action, int], object] | None = None,
) -> S:
    """`start` after `moves`, each checked by the rules; SaveError naming `where(i)` for an illegal one.
    `visit(state, move, i)` sees each move with the position it is made in, before it is made."""
    state = start
    for i, move in enumerate(moves):
        if visit is not None:
            visit(state, move, i)
        try:
            state = state.apply(move)
        except (IllegalAction, DiceError) as exc:
            raise SaveError(f"save file {where(i)} is not a legal move in that position: {exc}") from None
    return state


def new_game(cls: type[S], variant: Variant, players: tuple[str, ...], rounds: int) -> S:
    """The saved match's first position (SaveError when its players or length are impossible)."""
    try:
        return cls.new(variant, list(players), rounds)
    except IllegalAction as exc:
        raise SaveError(f"save file: {exc}") from None


def state_from_dict(cls: type[S], data: Any, engine: Any, variant: VariantArg = None) -> S:
    """`GameState.from_dict`: rebuild a saved state by replaying its moves; SaveError names the key at fault."""
    need_engine(engine, "from_dict")
    refuse_unplain(data)
    save = read_save(data, engine, variant)
    state = replay(new_game(cls, save.variant, save.players, save.rounds), save.moves, lambda i: f"key 'history[{i}]'")
    check_replay(data, state_to_dict(state))
    return state


def state_from_json(cls: type[S], text: Any, engine: Any, variant: VariantArg = None) -> S:
    """`GameState.from_json`: the state `to_json` wrote (str, or UTF-8 bytes); SaveError for anything else."""
    if not isinstance(text, (str, bytes, bytearray)):
        raise SaveError(f"from_json needs the saved text, got {type(text).__name__}")
    need_engine(engine, "from_json")
    return state_from_dict(cls, parse_json(text, "not a dicecup save"), engine, variant)


def parse_json(text: str | bytes | bytearray, what: str) -> Any:
    """JSON text as data; SaveError `what (why)` for anything JSON cannot read."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise SaveError(f"{what} (invalid JSON at line {exc.lineno}, column {exc.colno})") from None
    except UnicodeDecodeError:
        raise SaveError(f"{what} (the bytes are not UTF-8 text)") from None
    except RecursionError:
        raise SaveError(f"{what} (invalid JSON: nested too deeply)") from None
    except ValueError:  # a number of more than 4,300 digits
        raise SaveError(f"{what} (invalid JSON: a number too long to read)") from None


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


def need_engine(engine: Any, what: str) -> None:
    """Refuse a load without an Engine to compile the save's variant with."""
    if not isinstance(engine, Engine):
        raise IllegalAction(
            f"{what} needs the Engine to load the variant with (dicecup.Engine()), got {type(engine).__name__}"
        )


_PLAIN = (dict, list, tuple, str, int, float, bool, type(None))


def refuse_unplain(data: Any) -> None:
    """SaveError naming the first key that holds what JSON cannot: a whole number no game has (it
    could not even be printed), an object of another type (a numpy array), a key that is not text."""
    stack: list[tuple[Any, str]] = [(data, "")]
    seen: set[int] = set()
    while stack:
        value, path = stack.pop()
        where = path or "(top)"
        if not isinstance(value, _PLAIN):
            raise SaveError(f"save file key {where!r} holds a {type(value).__name__}, not a JSON value")
        if isinstance(value, int) and value.bit_length() > MAX_SAVED_BITS:
            bits = value.bit_length()
            raise SaveError(f"save file key {where!r} holds a number far too large for a game ({bits} bits)")
        if isinstance(value, (dict, list, tuple)) and id(value) not in seen:  # tuples: a host's dict, not JSON
            seen.add(id(value))
            if isinstance(value, dict):
                bad = next((k for k in value if not isinstance(k, str)), None)
                if bad is not None:
                    raise SaveError(f"save file key {where!r} has a key {shown(bad, 20)} that is not text")
            items = value.items() if isinstance(value, dict) else enumerate(value)
            stack.extend((v, _key_path(path, k)) for k, v in reversed(list(items)))


def _key_path(path: str, key: Any) -> str:
    """The key path of `key` inside `path`, as SaveError messages write it (`cards[0].scores`)."""
    if not isinstance(key, str):
        return f"{path}[{shown(key, 20)}]"
    return f"{path}.{key}" if path else key


def award_json(a: Any) -> dict[str, Any]:
    """An award as JSON (figure and column only when they are not the defaults)."""
    out = {"id": a.id, "name": a.name, "points": a.points}
    if a.figure != "score":
        out["figure"] = a.figure
    if a.column is not None:
        out["column"] = a.column
    return out


def variant_json(variant: Variant) -> dict[str, Any]:
    """The keys that name a save's variant: id, source (informative: never read back), options, fingerprint."""
    return {
        "variant": variant.id,
        "source": variant.source,
        "options": dict(variant.options),
        "fingerprint": variant.fingerprint,
    }


def state_to_dict(state: SavedGame) -> dict[str, Any]:
    """A versioned, JSON-ready description from which `GameState.from_dict` rebuilds this exact state."""
    return {
        "format": SAVE_FORMAT,
        "version": SAVE_VERSION,
        **variant_json(state.variant),
        "players": list(state.players),
        "start_rounds": state.rounds - state.replays,  # the match length at the start (ties add rounds)
        "history": [action_to_json(a) for a in state.history],
        "cards": [{"scores": dict(c.scores), "awards": [award_json(a) for a in c.awards]} for c in state.cards],
        "current": state.current,
        "dice": list(state.dice),
        "rolls_used": state.rolls_used,
        "held": None if state.held is None else list(state.held),
        "banked": list(state.banked),
        "round": state.round,
        "rounds": state.rounds,
        "replays": state.replays,
        "results": [
            {
                "totals": list(r.totals),
                "instant_winner": r.instant_winner,
                **({"figures": {k: list(t) for k, t in r.figures.items()}} if r.figures else {}),
                **({"won_by": r.won_by} if r.won_by else {}),
            }
            for r in state.results
        ],
        "over": state.over,
        "turn_state": thaw_json(state.turn_state),
        "player_state": [thaw_json(p) for p in state.player_state],
    }
