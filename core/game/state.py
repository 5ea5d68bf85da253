"""The game state machine: immutable states, explicit chance, typed illegal actions.

A `GameState` is either a *chance node* (dice must be rolled: `roll()`, or
`chance_outcomes()` to enumerate them) or a *decision node* (the current player
keeps dice or scores a box). Every transition returns a new state; an illegal
action raises `IllegalAction` and the old state is untouched. `Game` is a small
mutable convenience around it for hosts: a seeded generator and undo.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any

from attrs import evolve, frozen

from ..language.dice import check_dice, reroll_outcomes, sub_multisets
from ..errors import DiceError, IllegalAction, SaveError
from ..language.model import Card, Roll, ScoreResult, Variant
from .actions import Action, Keep, RollDice, RoundResult, Score
from .saving import state_from_dict

__all__ = ["GameState", "SAVE_FORMAT", "SAVE_VERSION"]

SAVE_FORMAT = "dicecup/state"
SAVE_VERSION = 1


@frozen
class GameState:
    """A whole match at one instant. Immutable: every action returns a new state."""

    variant: Variant
    players: tuple[str, ...]
    cards: tuple[Card, ...]
    current: int = 0
    dice: tuple[int, ...] = ()
    rolls_used: int = 0
    held: tuple[int, ...] | None = ()  # dice set aside for the pending roll; None: player decides
    banked: tuple[int, ...] = ()  # unused rolls carried over, per player (variants with carry_over)
    round: int = 1
    rounds: int = 1
    results: tuple[RoundResult, ...] = ()
    over: bool = False

    # ------------------------------------------------------------------ creation

    @classmethod
    def new(cls, variant: Variant, players: Sequence[str] | int = 1, rounds: int | None = None) -> GameState:
        names = [f"P{i + 1}" for i in range(players)] if isinstance(players, int) else list(players)
        if not names:
            raise IllegalAction("a game needs at least one player")
        if len(set(names)) != len(names):
            raise IllegalAction(f"player names must differ, got {names}")
        n_rounds = rounds if rounds is not None else variant.match.rounds_for(len(names))
        if n_rounds < 1:
            raise IllegalAction(f"a match needs at least one round, got {n_rounds}")
        return cls(
            variant=variant,
            players=tuple(names),
            cards=tuple(Card() for _ in names),
            banked=tuple(0 for _ in names),
            rounds=n_rounds,
        )

    # ------------------------------------------------------------------ queries

    @property
    def is_chance(self) -> bool:
        """True when dice must be rolled next (start of a turn, or after a keep)."""
        return not self.over and self.held is not None

    @property
    def player(self) -> str:
        return self.players[self.current]

    @property
    def card(self) -> Card:
        return self.cards[self.current]

    @property
    def first_roll(self) -> bool:
        """Whether the dice on the table are the turn's first roll ("served")."""
        return self.rolls_used == 1

    @property
    def rolls_available(self) -> int:
        extra = self.banked[self.current] if self.variant.carry_over else 0
        return self.variant.rolls + extra

    @property
    def rolls_left(self) -> int:
        return self.rolls_available - self.rolls_used

    @property
    def roll_now(self) -> Roll | None:
        """The dice on the table as a Roll, or None before the turn's first roll."""
        return self.variant.roll_of(self.dice) if self.dice and self.held is None else None

    def legal_boxes(self) -> tuple[str, ...]:
        if self.over or self.held is not None:
            return ()
        return self.variant.legal_boxes(self.card, self.roll_now, self.first_roll)

    def legal_keeps(self) -> tuple[tuple[int, ...], ...]:
        if self.over or self.held is not None or self.rolls_left <= 0:
            return ()
        return tuple(k for k in sub_multisets(self.dice) if len(k) < len(self.dice))

    def legal_actions(self) -> list[Action]:
        """Every legal decision now (empty at a chance node: see `chance_outcomes`)."""
        return [Score(b) for b in self.legal_boxes()] + [Keep(k) for k in self.legal_keeps()]

    def chance_outcomes(self) -> list[tuple[RollDice, Fraction]]:
        """The possible results of the pending roll (values of the rolled dice) with probabilities."""
        if not self.is_chance:
            return []
        n = self.variant.dice - len(self.held)
        return [(RollDice(d), p) for d, p in reroll_outcomes(n, self.variant.faces)]

    def score_preview(self, box: str) -> ScoreResult:
        """What scoring `box` now would give (no state change)."""
        roll = self._need_decision()
        return self.variant.score(self.card, box, roll, self.first_roll)

    def totals(self) -> tuple[int, ...]:
        """Each player's total in the current (or last) game of the match."""
        if self.over and self.results:
            return self.results[-1].totals
        return tuple(self.variant.total(c) for c in self.cards)

    def match_totals(self) -> tuple[int, ...]:
        """Totals summed over finished games (and the game in progress, unless over)."""
        done = [sum(r.totals[i] for r in self.results) for i in range(len(self.players))]
        if self.over:
            return tuple(done)
        return tuple(d + t for d, t in zip(done, (self.variant.total(c) for c in self.cards)))

    def winners(self) -> tuple[str, ...]:
        """The winner(s): an instant winner of the last game, else the highest match total."""
        if self.results and self.results[-1].instant_winner is not None and self.rounds == 1:
            return (self.players[self.results[-1].instant_winner],)
        totals = self.match_totals()
        best = max(totals)
        return tuple(p for p, t in zip(self.players, totals) if t == best)

    def settlement(self) -> Mapping[str, Fraction] | None:
        """Payments at the end of the match, if the variant settles; None before the end."""
        if not self.over:
            return None
        return self.variant.settle(dict(zip(self.players, self.match_totals())))

    def breakdown(self, player: int | None = None) -> dict[str, Any]:
        """One player's card for display: boxes, awards, whole-card bonuses, total."""
        i = self.current if player is None else player
        card = self.cards[i]
        v = self.variant
        return {
            "player": self.players[i],
            "boxes": {b: card.scores.get(b) for b in v.box_ids},
            "awards": [{"id": a.id, "name": a.name, "points": a.points} for a in card.awards],
            "bonuses": [{"id": a.id, "name": a.name, "points": a.points} for a in v.end_bonuses(card)],
            "total": v.total(card),
        }

    # ------------------------------------------------------------------ transitions

    def _need_decision(self) -> Roll:
        if self.over:
            raise IllegalAction("the game is over")
        if self.held is not None:
            raise IllegalAction("roll the dice first")
        return self.roll_now  # type: ignore[return-value]

    def roll(self, rng: random.Random | None = None, dice: Sequence[int] | None = None) -> GameState:
        """Resolve the pending roll with `dice` (the rolled dice's values) or with `rng`."""
        if self.over:
            raise IllegalAction("the game is over")
        if self.held is None:
            raise IllegalAction(
                "no roll is pending: keep some dice first (Keep) or score a box"
                if self.rolls_left > 0
                else f"no rolls left this turn ({self.rolls_used} used); score a box"
            )
        n = self.variant.dice - len(self.held)
        if dice is None:
            if rng is None:
                raise IllegalAction("give the dice rolled, or a random generator to roll them")
            new = tuple(rng.randint(1, self.variant.faces) for _ in range(n))
        else:
            dice = tuple(dice)
            if len(dice) == self.variant.dice and n != len(dice):
                # the host gave all the dice: they must include the held ones
                check_dice(dice, self.variant.dice, self.variant.faces)
                rest = Counter(dice) - Counter(self.held)
                if sum(rest.values()) != n:
                    raise DiceError(f"the dice {list(dice)} do not include the held dice {list(self.held)}")
                new = tuple(rest.elements())
            else:
                new = check_dice(dice, n, self.variant.faces, what="rolled dice" if self.held else "dice")
        state = evolve(self, dice=self.held + new, rolls_used=self.rolls_used + 1, held=None)
        if len(self.players) > 1 and self.variant.instant_win(state.card, state.roll_now, state.first_roll, len(self.players)):
            return state._end_round(instant_winner=self.current)
        return state

    def keep(self, dice: Sequence[int]) -> GameState:
        """Set aside `dice` (values) and make the others the pending roll."""
        self._need_decision()
        if self.rolls_left <= 0:
            raise IllegalAction(f"no rolls left this turn ({self.rolls_used} used); score a box")
        keep = tuple(sorted(dice))
        missing = Counter(keep) - Counter(self.dice)
        if missing:
            raise IllegalAction(f"cannot keep {list(keep)}: the dice are {list(self.dice)}")
        if len(keep) == len(self.dice):
            raise IllegalAction("keeping every die rerolls nothing; score a box instead")
        return evolve(self, held=keep)

    def score(self, box: str) -> GameState:
        """Fill `box` with the dice on the table and pass the turn."""
        roll = self._need_decision()
        v = self.variant
        v.box(box)  # unknown box -> IllegalAction listing the boxes
        if self.card.is_filled(box):
            raise IllegalAction(f"box {box!r} is already filled (with {self.card.value(box)})")
        legal = self.legal_boxes()
        if box not in legal:
            rules = v.blocking_rules(self.card, roll, self.first_roll, box)
            why = f" (the {' and '.join(rules)} rule{'s' if len(rules) > 1 else ''} forbid{'' if len(rules) > 1 else 's'} it)" if rules else ""
            raise IllegalAction(f"box {box!r} may not be used with {roll} now{why}; allowed: {', '.join(legal)}")
        result = v.score(self.card, box, roll, self.first_roll)
        cards = list(self.cards)
        cards[self.current] = self.card.fill(box, result.score, result.awards)
        banked = list(self.banked)
        if v.carry_over:
            banked[self.current] = self.rolls_available - self.rolls_used
        state = evolve(self, cards=tuple(cards), banked=tuple(banked))
        return state._next_turn()

    def apply(self, action: Action) -> GameState:
        """Apply a Keep, Score or RollDice action."""
        if isinstance(action, Keep):
            return self.keep(action.dice)
        if isinstance(action, Score):
            return self.score(action.box)
        if isinstance(action, RollDice):
            return self.roll(dice=action.dice)
        raise IllegalAction(f"not an action: {action!r}")

    def _next_turn(self) -> GameState:
        nxt = (self.current + 1) % len(self.players)
        boxes = len(self.variant.boxes)
        if nxt == 0 and all(len(c.scores) == boxes for c in self.cards):
            return self._end_round(None)
        return evolve(self, current=nxt, dice=(), rolls_used=0, held=())

    def _end_round(self, instant_winner: int | None) -> GameState:
        totals = tuple(self.variant.total(c) for c in self.cards)
        results = self.results + (RoundResult(totals, instant_winner),)
        rounds = self.rounds
        if self.round >= rounds and self.variant.match.replay_ties and len(self.players) > 1:
            match = [sum(r.totals[i] for r in results) for i in range(len(self.players))]
            if len(set(match)) == 1 and instant_winner is None:
                rounds += 1  # every total identical: the match is replayed
        if self.round < rounds:
            return evolve(
                self,
                cards=tuple(Card() for _ in self.players),
                current=0,
                dice=(),
                rolls_used=0,
                held=(),
                banked=tuple(0 for _ in self.players),
                round=self.round + 1,
                rounds=rounds,
                results=results,
            )
        return evolve(self, results=results, rounds=rounds, over=True, dice=(), rolls_used=0, held=None)

    # ------------------------------------------------------------------ saving

    def to_dict(self) -> dict[str, Any]:
        """A versioned, JSON-ready description from which `from_dict` rebuilds this exact state."""
        v = self.variant
        return {
            "format": SAVE_FORMAT,
            "version": SAVE_VERSION,
            "variant": v.id,
            "source": v.source,
            "options": dict(v.options),
            "fingerprint": v.fingerprint,
            "players": list(self.players),
            "cards": [
                {
                    "scores": dict(c.scores),
                    "awards": [{"id": a.id, "points": a.points, "name": a.name} for a in c.awards],
                }
                for c in self.cards
            ],
            "current": self.current,
            "dice": list(self.dice),
            "rolls_used": self.rolls_used,
            "held": None if self.held is None else list(self.held),
            "banked": list(self.banked),
            "round": self.round,
            "rounds": self.rounds,
            "results": [{"totals": list(r.totals), "instant_winner": r.instant_winner} for r in self.results],
            "over": self.over,
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=1, sort_keys=True)

    @classmethod
    def from_dict(cls, data: Any, engine: Any) -> GameState:
        """Rebuild a state saved by `to_dict`; SaveError names the bad key."""
        return state_from_dict(cls, data, engine)

    @classmethod
    def from_json(cls, text: str, engine: Any) -> GameState:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise SaveError(f"not a dicecup save (invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg})") from None
        return cls.from_dict(data, engine)


