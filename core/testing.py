"""Conformance helpers for variant and plugin authors (public: `dicecup.testing`).

`check_variant(engine, "my-variant")` plays random legal games of a variant through
the public API, with random actions and random dice, and checks at every step the
invariants every dicecup game must keep: a decision node always has a legal
action, chance outcomes sum to 1, a filled box holds what `score_preview` said,
totals equal boxes + awards + bonuses, the game ends, the settlement sums to zero,
and a state survives a JSON round trip unchanged. A broken invariant raises
`ConformanceError` (an AssertionError, so pytest shows it as a failure).

`turn(state, box, dice, (keep, rolled), ...)` scripts one turn with host-supplied
dice, for tests that need exact games.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence
from fractions import Fraction
from typing import Any

from attrs import frozen

from .language.engine import Engine
from .errors import IllegalAction
from .game.actions import Keep, Score
from .game.state import GameState
from .language.model import Card, Variant

__all__ = ["ConformanceError", "Report", "card_total", "check_state", "check_variant", "play_random", "play_solitaire", "turn"]


class ConformanceError(AssertionError):
    """A variant or plugin broke an invariant of the dicecup API."""


@frozen
class Report:
    """What `check_variant` played: games, rounds, turns and rolls, and the totals seen."""

    variant: str
    games: int
    rounds: int
    turns: int
    rolls: int
    lowest_total: int
    highest_total: int


def _fail(message: str, state: GameState | None = None) -> ConformanceError:
    if state is not None:
        message += f" [{state.variant.id}, player {state.player!r}, round {state.round}, dice {list(state.dice)}]"
    return ConformanceError(message)


def turn(state: GameState, box: str, dice: Sequence[int], *rerolls: tuple[Sequence[int], Sequence[int]]) -> GameState:
    """Play one turn with host dice: roll `dice`, then each `(keep, rolled)`, then score `box`."""
    state = state.roll(dice=dice)
    for keep, rolled in rerolls:
        state = state.keep(keep).roll(dice=rolled)
    return state.score(box)


def card_total(variant: Variant, card: Card) -> int:
    """Boxes + awards + whole-card bonuses, added up here rather than by `Variant.total`."""
    return sum(card.scores.values()) + sum(a.points for a in card.awards) + sum(a.points for a in variant.end_bonuses(card))


def check_state(state: GameState, engine: Engine | None = None) -> None:
    """Check one state: its actions, chance outcomes, totals and (given an engine) its JSON round trip."""
    v = state.variant
    actions = state.legal_actions()
    outcomes = state.chance_outcomes()
    if state.over:
        if actions or outcomes:
            raise _fail("a finished game still offers actions or chance outcomes", state)
    elif state.is_chance:
        if actions:
            raise _fail("a chance node offers decisions", state)
        if sum((p for _, p in outcomes), Fraction(0)) != 1:
            raise _fail("chance outcome probabilities do not sum to 1", state)
        rolled = v.dice - len(state.held or ())
        if any(len(o.dice) != rolled for o, _ in outcomes):
            raise _fail(f"a chance outcome does not roll {rolled} dice", state)
    else:
        boxes = state.legal_boxes()
        if not boxes:
            raise _fail("a decision node has no legal box to score", state)
        if not set(boxes) <= set(v.open_boxes(state.card)):
            raise _fail(f"legal boxes {boxes} include a filled box", state)
    for card in state.cards:
        if v.total(card) != card_total(v, card):
            raise _fail("a total is not boxes + awards + bonuses", state)
    if engine is not None:
        back = GameState.from_json(state.to_json(), engine)
        if back != state:
            raise _fail("the state changed in a JSON round trip", state)


def _check_round(prev: GameState, new: GameState, filled: Sequence[Card]) -> None:
    """A round just ended: its result holds each card's total, and every card is full (unless won at once)."""
    result = new.results[-1]
    v = prev.variant
    expected = tuple(card_total(v, c) for c in filled)
    if result.totals != expected:
        raise _fail(f"round result {result.totals} is not the cards' totals {expected}", prev)
    if result.instant_winner is None and any(len(c.scores) != len(v.boxes) for c in filled):
        raise _fail("a round ended with open boxes and no instant winner", prev)


def _check_end(state: GameState) -> None:
    match = tuple(sum(r.totals[i] for r in state.results) for i in range(len(state.players)))
    if state.match_totals() != match:
        raise _fail(f"match totals {state.match_totals()} are not the sum of the rounds {match}")
    if len(state.results) != state.rounds:
        raise _fail(f"the match ended after {len(state.results)} of {state.rounds} rounds")
    pay = state.settlement()
    if pay is not None:
        if set(pay) != set(state.players):
            raise _fail("the settlement does not name every player")
        if sum(pay.values()) != 0:
            raise _fail(f"settlement payments sum to {sum(pay.values())}, not 0")
    if not state.winners():
        raise _fail("a finished match has no winner")


def _try_illegal(state: GameState, rng: random.Random) -> None:
    """An illegal action must raise IllegalAction (the frozen state cannot change)."""
    filled = [b for b in state.variant.box_ids if state.card.is_filled(b)]
    attempts: list[Any] = [lambda: state.score("no such box")]
    if state.is_chance:
        attempts.append(lambda: state.score(state.variant.box_ids[0]))
        attempts.append(lambda: state.keep(()))
    else:
        attempts.append(lambda: state.roll(rng))
        if filled:
            attempts.append(lambda: state.score(rng.choice(filled)))
        if state.rolls_left <= 0:
            attempts.append(lambda: state.keep(()))
    before = state.to_dict()
    for attempt in attempts:
        try:
            attempt()
        except IllegalAction:
            pass
        else:
            raise _fail("an illegal action was accepted", state)
    if state.to_dict() != before:
        raise _fail("an illegal action changed the state", state)


def play_random(
    state: GameState,
    rng: random.Random,
    *,
    engine: Engine | None = None,
    roundtrip_every: int = 1,
    max_replays: int = 50,
) -> tuple[GameState, dict[str, int]]:
    """Play `state` to the end with random legal actions and random dice, checking every step."""
    v = state.variant
    # A turn is at most rolls + keeps + one score; carried-over rolls can pile up to every turn's.
    rolls_per_turn = v.rolls * len(v.boxes) if v.carry_over else v.rolls
    per_round = len(state.players) * len(v.boxes) * (2 * rolls_per_turn + 1)
    counts = {"turns": 0, "rolls": 0, "rounds": 0}
    steps_in_round = 0
    step = 0
    while not state.over:
        check_state(state, engine if engine is not None and step % roundtrip_every == 0 else None)
        if rng.random() < 0.05:
            _try_illegal(state, rng)
        filled: list[Card] | None = None
        if state.is_chance:
            if rng.random() < 0.5:
                new = state.roll(rng)
            else:  # the host rolled: it gives the values of the rolled dice
                n = v.dice - len(state.held)
                new = state.roll(dice=[rng.randint(1, v.faces) for _ in range(n)])
            counts["rolls"] += 1
            if new.results != state.results:
                filled = list(state.cards)
        else:
            action = rng.choice(state.legal_actions())
            if isinstance(action, Score):
                preview = state.score_preview(action.box)
                filled = list(state.cards)
                filled[state.current] = state.card.fill(action.box, preview.score, preview.awards)
                counts["turns"] += 1
            elif not isinstance(action, Keep):  # pragma: no cover - legal_actions only has these
                raise _fail(f"unexpected action {action!r}", state)
            new = state.apply(action)
            if isinstance(action, Score) and new.results == state.results:
                if new.cards[state.current] != filled[state.current]:
                    raise _fail(f"box {action.box!r} was not filled as score_preview said", state)
                filled = None
        if filled is not None and new.results != state.results:
            _check_round(state, new, filled)
            counts["rounds"] += 1
            steps_in_round = 0
            if len(new.results) > state.rounds + max_replays:
                raise _fail(f"the match does not end: {len(new.results)} rounds played", state)
        steps_in_round += 1
        step += 1
        if steps_in_round > per_round:
            raise _fail(f"a round does not end within {per_round} steps", state)
        state = new
    check_state(state, engine)
    _check_end(state)
    return state, counts


def play_solitaire(variant: Variant, bot, games: int, rng: random.Random) -> list[int]:
    """Final totals of `games` solitaire games: every decision by `bot.choose`, every roll by the engine."""
    totals = []
    for _ in range(games):
        state = GameState.new(variant, 1)
        while not state.over:
            state = state.roll(rng) if state.is_chance else state.apply(bot.choose(state))
        totals.append(state.totals()[0])
    return totals


def check_variant(
    engine: Engine,
    variant_id: str,
    *,
    games: int = 20,
    seed: int = 0,
    players: Iterable[int] = (1, 2, 3),
    options: Mapping[str, Any] | None = None,
    rounds: int | None = 1,
    roundtrip_every: int = 1,
) -> Report:
    """Play `games` random legal games of a variant through the API and check every invariant.

    Players cycle through `players`; `rounds=None` plays the variant's own match
    length (Russian: 13 rounds for three players, so slower). Raises
    ConformanceError on the first broken invariant and returns a Report otherwise.
    """
    variant = engine.variant(variant_id, options)
    _check_static(variant)
    sizes = list(players)
    rng = random.Random(seed)
    played = {"turns": 0, "rolls": 0, "rounds": 0}
    lowest, highest = None, None
    for g in range(games):
        state = GameState.new(variant, sizes[g % len(sizes)], rounds)
        final, counts = play_random(state, rng, engine=engine, roundtrip_every=roundtrip_every)
        for k in played:
            played[k] += counts[k]
        for r in final.results:
            lowest = min([*r.totals] + ([lowest] if lowest is not None else []))
            highest = max([*r.totals] + ([highest] if highest is not None else []))
    return Report(variant.id, games, played["rounds"], played["turns"], played["rolls"], lowest or 0, highest or 0)


def _check_static(variant: Variant) -> None:
    """Card-free checks: every box scores every roll with an int, and an empty card has a legal box."""
    card = Card()
    for roll in variant.all_rolls():
        for first in (False, True):
            if not variant.legal_boxes(card, roll, first):
                raise _fail(f"{variant.id}: no legal box for {roll} on an empty card")
            for box in variant.box_ids:
                result = variant.score(card, box, roll, first)
                if isinstance(result.score, bool) or not isinstance(result.score, int):
                    raise _fail(f"{variant.id}: box {box!r} scores {result.score!r} for {roll}, not a whole number")
    for flag in variant.state_flags():
        if flag.box not in variant.box_ids:
            raise _fail(f"{variant.id}: state flag names unknown box {flag.box!r}")
