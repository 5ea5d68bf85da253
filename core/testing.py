"""Conformance helpers for variant and plugin authors (public: `dicecup.testing`).

`check_variant(engine, "my-variant")` plays random legal games of a variant through the public API, with
random actions and dice, and checks at every step the invariants every dicecup game keeps and, on states met
along the way, the rule hooks' contract. A broken invariant, a value against a hook's contract or a plugin's
exception is a `ConformanceError` (an AssertionError, so pytest shows it as a failure) with the engine's
message. `turn(state, box, dice, (keep, rolled), ...)` scripts one turn with given dice, for exact games.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence
from fractions import Fraction
from typing import Any

from attrs import evolve, frozen

from .errors import IllegalAction, PluginError
from .game.actions import Keep, RuleAction, Score
from .game.state import GameState
from .language.card import Card
from .language.contexts import Situation
from .language.engine import Engine
from .language.frozen import FrozenMap
from .language.model import Variant
from .language.tracing import VALUE, traced_card, traced_roll, tracing

__all__ = [
    "ConformanceError",
    "Report",
    "card_total",
    "check_hook_contract",
    "check_state",
    "check_variant",
    "play_random",
    "play_solitaire",
    "turn",
]

MAX_RULE_ACTIONS_PER_TURN = 16


class ConformanceError(AssertionError):
    """A variant or plugin broke an invariant of the dicecup API."""


@frozen
class Report:
    """What `check_variant` played: games, rounds, turns, rolls and rule actions, and the totals seen."""

    variant: str
    games: int
    rounds: int
    turns: int
    rolls: int
    lowest_total: int
    highest_total: int
    rule_actions: int = 0
    contract_checks: int = 0


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
    """Boxes (times their column's multiplier) + awards + whole-card bonuses in the score, added up here."""
    boxes = sum(score * variant.column(variant.box(b).column).multiplier for b, score in card.scores.items())
    awards = sum(a.points for a in card.awards if a.figure == "score")
    return boxes + awards + sum(a.points for a in variant.end_bonuses(card) if a.figure == "score")


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
        if not actions:
            raise _fail("a decision node has no legal action (no box to score, no keep, no rule action)", state)
        if not set(state.legal_boxes()) <= set(v.open_boxes(state.card)):
            raise _fail(f"legal boxes {state.legal_boxes()} include a filled box", state)
        if state.rolls_left <= 0 and not state.legal_boxes() and not state.rule_actions():
            raise _fail("no rolls left and no box may be scored", state)
        # what the views ask too (the engine checks each answer against its hook's contract)
        state.turn_status()
        sit = state.situation()
        for box in v.open_boxes(state.card):
            v.why_illegal(state.card, state.roll_now, state.first_roll, box, sit)  # type: ignore[arg-type]
    for card in state.cards:
        if v.total(card) != card_total(v, card):
            raise _fail("a total is not boxes + awards + bonuses", state)
        v.progress(card)
    if engine is not None:
        back = GameState.from_json(state.to_json(), engine)
        if back != state:
            raise _fail("the state changed in a JSON round trip", state)


# ---------------------------------------------------------------------------- the hook contract


def _ask_rules(state: GameState, card: Card, situation: Situation, traced: bool) -> tuple[Any, Any]:
    """Everything the rules say about this decision: legal boxes, every open box's score and events, actions, reroll."""
    v = state.variant
    roll = state.roll_now
    assert roll is not None
    if traced:
        card = traced_card(dict(card.scores), tuple(card.awards))
        roll = traced_roll(roll)
    with tracing() as reads:
        answer = (
            tuple(v.legal_boxes(card, roll, state.first_roll, situation)),
            tuple((b, v.score(card, b, roll, state.first_roll, situation)) for b in v.open_boxes(card)),
            tuple((b, v.turn_events(card, b, roll, state.first_roll, situation)) for b in v.open_boxes(card)),
            v.actions(card, roll, state.first_roll, situation),
            v.may_reroll(card, roll, state.first_roll, situation),
            v.end_bonuses(card),
        )
    return answer, reads


def check_hook_contract(state: GameState, rng: random.Random) -> None:
    """The rule hooks keep the contract of `hookspecs` at this decision state.

    Pure: asked twice, they answer the same. Public accessors only: on a card
    whose filled boxes hold other values where no rule read the value, and in a
    situation that differs where no rule looked, they answer the same too (the
    engine's record of what was read is what the solver and the tables reuse
    answers on).
    """
    if state.over or state.is_chance:
        return
    sit = state.situation()
    first, reads = _ask_rules(state, state.card, sit, traced=True)
    again, _ = _ask_rules(state, state.card, sit, traced=True)
    if first != again:
        raise _fail("the rule hooks gave different answers to the same question (they must be pure)", state)
    unread = [b for b in state.card.scores if not reads.boxes.get(b, 0) & VALUE and "*" not in reads.boxes]
    changed = {b: (s + rng.choice((-7, 1, 13))) if b in unread else s for b, s in state.card.scores.items()}
    card = Card(FrozenMap(changed), state.card.awards)
    other_sit = sit
    if "turn" not in reads.situation:
        other_sit = evolve(other_sit, turn=sit.turn + 5)
    if "rolls_used" not in reads.situation:
        other_sit = evolve(other_sit, rolls_used=sit.rolls_used + 2)
    if "player_state" not in reads.situation:
        other_sit = evolve(other_sit, player_state=FrozenMap())
    if "cards" not in reads.situation and len(sit.cards) > 1:
        other_sit = evolve(other_sit, cards=tuple(Card() if i != sit.player else c for i, c in enumerate(sit.cards)))
    moved, _ = _ask_rules(state, card, other_sit, traced=False)
    if first != moved:
        raise _fail(
            "a rule's answer changed with box values or game facts it was not seen to read "
            f"(unread boxes changed: {', '.join(unread) or 'none'}); rules must read the card through "
            "card.scores and the game through the context's properties",
            state,
        )


# ---------------------------------------------------------------------------- random games


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
    state.settlement()  # (its contract, checked by the engine: every player once, summing to zero)
    if not state.winners():
        raise _fail("a finished match has no winner")


def _try_illegal(state: GameState, rng: random.Random) -> None:
    """An illegal action must raise IllegalAction (the frozen state cannot change)."""
    filled = [b for b in state.variant.box_ids if state.card.is_filled(b)]
    attempts: list[Any] = [lambda: state.score("no such box"), lambda: state.act(RuleAction("no-such-rule", "x"))]
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
    contract_every: float = 0.05,
) -> tuple[GameState, dict[str, int]]:
    """Play `state` to the end with random legal actions and random dice, checking every step."""
    try:
        return _play_random(state, rng, engine, roundtrip_every, max_replays, contract_every)
    except PluginError as exc:  # a plugin's answer against its contract, or its own failure
        raise ConformanceError(str(exc)) from exc


def _play_random(
    state: GameState,
    rng: random.Random,
    engine: Engine | None,
    roundtrip_every: int,
    max_replays: int,
    contract_every: float,
) -> tuple[GameState, dict[str, int]]:
    v = state.variant
    # A turn is at most rolls + keeps + rule actions + one score; carried-over rolls can pile up to every turn's.
    rolls_per_turn = v.rolls * len(v.boxes) if v.carry_over else v.rolls
    per_round = len(state.players) * len(v.boxes) * (2 * rolls_per_turn + 1 + MAX_RULE_ACTIONS_PER_TURN)
    counts = {"turns": 0, "rolls": 0, "rounds": 0, "rule_actions": 0, "contract_checks": 0}
    steps_in_round = 0
    step = 0
    actions_this_turn = 0
    while not state.over:
        check_state(state, engine if engine is not None and step % roundtrip_every == 0 else None)
        if rng.random() < 0.05:
            _try_illegal(state, rng)
        if not state.is_chance and rng.random() < contract_every:
            check_hook_contract(state, rng)
            counts["contract_checks"] += 1
        filled: list[Card] | None = None
        if state.is_chance:
            if rng.random() < 0.5:
                new = state.roll(rng)
            else:  # the host rolled: it gives the values of the rolled dice
                n = v.dice - len(state.held)  # type: ignore[arg-type]
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
                actions_this_turn = 0
            elif isinstance(action, RuleAction):
                counts["rule_actions"] += 1
                actions_this_turn += 1
                if actions_this_turn > MAX_RULE_ACTIONS_PER_TURN:
                    raise _fail(f"more than {MAX_RULE_ACTIONS_PER_TURN} rule actions in one turn", state)
            elif not isinstance(action, Keep):  # pragma: no cover - legal_actions only has these
                raise _fail(f"unexpected action {action!r}", state)
            try:
                new = state.apply(action)
            except IllegalAction as exc:
                raise _fail(
                    f"an action legal_actions() offered was refused ({exc}); are the rules pure?", state
                ) from None
            if isinstance(action, Score) and new.results == state.results:
                assert filled is not None
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


def play_solitaire(variant: Variant, bot: Any, games: int, rng: random.Random) -> list[int]:
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
    roundtrip_every: int = 10,
    contract_every: float = 0.05,
) -> Report:
    """Play `games` random legal games of a variant through the API and check every invariant.

    The invariants: a decision node always has a legal action, chance outcomes sum to 1, a filled box holds
    what `score_preview` said, totals equal boxes + awards + bonuses, the game ends, the settlement sums to
    zero, and a state survives a JSON round trip unchanged (every `roundtrip_every` steps). On a random share
    `contract_every` of decision states, `check_hook_contract` asks the rules again. Players cycle through `players`;
    `rounds=None` plays the variant's own match length (Russian: 13 rounds for three players). Raises
    ConformanceError on the first broken invariant and returns a Report otherwise.
    """
    try:
        variant = engine.variant(variant_id, options)  # (its rules' game-free answers are checked as it loads)
        _check_static(variant)
    except PluginError as exc:
        raise ConformanceError(str(exc)) from exc
    sizes = list(players)
    rng = random.Random(seed)
    played = {"turns": 0, "rolls": 0, "rounds": 0, "rule_actions": 0, "contract_checks": 0}
    lowest: int | None = None
    highest: int | None = None
    for g in range(games):
        state = GameState.new(variant, sizes[g % len(sizes)], rounds)
        final, counts = play_random(
            state, rng, engine=engine, roundtrip_every=roundtrip_every, contract_every=contract_every
        )
        for k in played:
            played[k] += counts[k]
        for r in final.results:
            lowest = min([*r.totals] + ([lowest] if lowest is not None else []))
            highest = max([*r.totals] + ([highest] if highest is not None else []))
    return Report(
        variant.id,
        games,
        played["rounds"],
        played["turns"],
        played["rolls"],
        lowest or 0,
        highest or 0,
        played["rule_actions"],
        played["contract_checks"],
    )


def _check_static(variant: Variant) -> None:
    """Card-free checks: every box scores every roll, and an empty card has a legal move. (What the rules
    return is checked against the hooks' contracts as they answer: a score is a whole number, a state flag
    names a box of the variant.)"""
    card = Card()
    rolls = variant.all_rolls() if variant.roll_count <= 5_000 else ()
    for roll in rolls:
        for first in (False, True):
            if not variant.legal_boxes(card, roll, first) and not variant.actions(card, roll, first):
                raise _fail(f"{variant.id}: no legal box or action for {roll} on an empty card")
            for box in variant.box_ids:
                variant.score(card, box, roll, first)
    variant.state_flags()
    variant.state_totals()
    variant.event_names()
    variant.solitaire_notes()
