"""Reading saved states back: strict checks so a corrupt or foreign save is refused, not guessed."""

from __future__ import annotations

from typing import Any

from ..errors import DicecupError, SaveError
from ..language.model import Award, Card
from .actions import RoundResult

FORMAT = "dicecup/state"
VERSION = 1


def _get(data: Any, key: str, kind: type | tuple[type, ...], where: str = "") -> Any:
    if not isinstance(data, dict) or key not in data:
        raise SaveError(f"save file is missing {where}{key!r}")
    value = data[key]
    if isinstance(value, bool) and kind in (int, (int, type(None))):
        raise SaveError(f"save file key {where}{key!r} must be a number, not {value!r}")
    if not isinstance(value, kind):
        names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise SaveError(f"save file key {where}{key!r} must be {names}, got {type(value).__name__}")
    return value


def _ints(values: Any, where: str) -> tuple[int, ...]:
    if not isinstance(values, list) or not all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        raise SaveError(f"save file key {where!r} must be a list of whole numbers")
    return tuple(values)


def state_from_dict(cls: Any, data: Any, engine: Any) -> Any:
    """Check every key of a saved state and rebuild it against `engine`'s variant."""
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise SaveError("not a dicecup save (no \"format\": \"dicecup/state\" key)")
    version = data.get("version")
    if version != VERSION:
        raise SaveError(f"save format version {version!r} is not supported (this dicecup reads version {VERSION})")
    vid = _get(data, "variant", str)
    options = _get(data, "options", dict)
    try:
        if vid in engine.variant_ids():
            variant = engine.variant(vid, options)
        else:
            variant = engine.load_file(_get(data, "source", str), options)
    except DicecupError as exc:
        raise SaveError(f"the save's variant {vid!r} cannot be loaded: {exc}") from None
    if variant.fingerprint != data.get("fingerprint"):
        raise SaveError(
            f"the save was made with a different definition of variant {vid!r} "
            "(its rules changed since); it cannot be resumed safely"
        )
    players = _get(data, "players", list)
    if not players or not all(isinstance(p, str) for p in players):
        raise SaveError("save file key 'players' must be a non-empty list of names")
    raw_cards = _get(data, "cards", list)
    if len(raw_cards) != len(players):
        raise SaveError(f"save file has {len(raw_cards)} cards for {len(players)} players")
    cards = []
    for i, rc in enumerate(raw_cards):
        scores = _get(rc, "scores", dict, f"cards[{i}].")
        for box, val in scores.items():
            if box not in variant.box_ids:
                raise SaveError(f"save file cards[{i}] fills unknown box {box!r}")
            if isinstance(val, bool) or not isinstance(val, int):
                raise SaveError(f"save file cards[{i}].scores.{box} must be a whole number")
        awards = []
        for j, a in enumerate(_get(rc, "awards", list, f"cards[{i}].")):
            awards.append(Award(_get(a, "id", str, f"cards[{i}].awards[{j}]."), _get(a, "points", int, f"cards[{i}].awards[{j}]."), a.get("name", "") if isinstance(a, dict) else ""))
        ordered = {b: scores[b] for b in scores}  # keep the fill order the save recorded
        cards.append(Card(ordered, tuple(awards)))
    held_raw = data.get("held")
    held = None if held_raw is None else _ints(held_raw, "held")
    results = []
    for k, r in enumerate(_get(data, "results", list)):
        winner = _get(r, "instant_winner", (int, type(None)), f"results[{k}].")
        results.append(RoundResult(_ints(_get(r, "totals", list, f"results[{k}]."), f"results[{k}].totals"), winner))
    state = cls(
        variant=variant,
        players=tuple(players),
        cards=tuple(cards),
        current=_get(data, "current", int),
        dice=_ints(_get(data, "dice", list), "dice"),
        rolls_used=_get(data, "rolls_used", int),
        held=held,
        banked=_ints(_get(data, "banked", list), "banked"),
        round=_get(data, "round", int),
        rounds=_get(data, "rounds", int),
        results=tuple(results),
        over=_get(data, "over", bool),
    )
    _check_consistent(state)
    return state


def _check_consistent(state: Any) -> None:
    v = state.variant
    n = len(state.players)
    if not 0 <= state.current < n:
        raise SaveError(f"save file 'current' is {state.current}, but there are {n} players")
    if len(state.banked) != n:
        raise SaveError("save file 'banked' must have one entry per player")
    if any(d < 1 or d > v.faces for d in state.dice) or len(state.dice) not in (0, v.dice):
        raise SaveError(f"save file 'dice' must be empty or {v.dice} dice from 1 to {v.faces}")
    if state.held is not None and (len(state.held) >= v.dice + (1 if not state.dice else 0) or any(d < 1 or d > v.faces for d in state.held)):
        raise SaveError("save file 'held' is not a valid set of held dice")
    if state.held is None and not state.over and not state.dice:
        raise SaveError("save file has no dice on the table and no pending roll")
    if not 0 <= state.rolls_used <= state.rolls_available:
        raise SaveError(f"save file 'rolls_used' {state.rolls_used} is out of range")
    if not 1 <= state.round <= state.rounds:
        raise SaveError(f"save file 'round' {state.round} is not within 1..{state.rounds}")
    if any(len(r.totals) != n for r in state.results):
        raise SaveError("save file 'results' must give a total for every player")
