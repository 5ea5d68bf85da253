"""The game state machine: immutable states, explicit chance, typed illegal actions.

A `GameState` is either a *chance node* (dice must be rolled: `roll()`, or
`chance_outcomes()` to enumerate them) or a *decision node* (the current player
keeps dice, scores a box, or takes an action a rule plugin offers). Every
transition returns a new state; an illegal action raises `IllegalAction` and the
old state is untouched. Rule plugins keep their own state in `turn_state` and
`player_state` (JSON data), so saving and replaying need no code of theirs.

A state remembers the moves that led to it (`history`); a save holds them and
loading replays them, so a save describes only positions the rules can reach.
"""

from __future__ import annotations

import json
import math
import numbers
import random
from collections import Counter
from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any

from attrs import evolve, field, fields, frozen

from ..errors import DicecupError, DiceError, IllegalAction, TooLarge
from ..language.card import Card
from ..language.compiler import MAX_ROUNDS
from ..language.contexts import Situation
from ..language.dice import check_dice, reroll_outcomes, sub_multisets
from ..language.frozen import FrozenMap, freeze_json
from ..language.model import MAX_ROLLS, UNCHANGED, Roll, RuleAction, ScoreResult, Variant
from ..language.rulehooks import no_move_error
from .actions import Action, Keep, RollDice, RoundResult, Score, dice_values, shown, whole_number
from .history import EMPTY, History, as_history
from .saving import SAVE_FORMAT, SAVE_VERSION, VariantArg, award_json, state_from_dict, state_from_json, state_to_dict

__all__ = ["GameState", "SAVE_FORMAT", "SAVE_VERSION", "MAX_PLAYERS", "MAX_NAME"]

MAX_PLAYERS = 16
MAX_NAME = 64


def _players(players: Any) -> tuple[str, ...]:
    """Player names: a count (P1, P2, ...) or a list (or tuple) of distinct non-empty strings."""
    if isinstance(players, bool):
        raise IllegalAction(f"players must be a number of players or a list of names, got {shown(players)}")
    if isinstance(players, numbers.Integral):
        if not 1 <= int(players) <= MAX_PLAYERS:
            raise IllegalAction(f"a game has 1 to {MAX_PLAYERS} players, got {shown(players)}")
        return tuple(f"P{i + 1}" for i in range(int(players)))
    if isinstance(players, (str, bytes, bytearray)) or not isinstance(players, Sequence):
        raise IllegalAction(f"players must be a number of players or a list of names, got {type(players).__name__}")
    names = list(players)
    if not names:
        raise IllegalAction("a game needs at least one player")
    if len(names) > MAX_PLAYERS:
        raise IllegalAction(f"a game has at most {MAX_PLAYERS} players, got {len(names)}")
    for n in names:
        if not isinstance(n, str) or not n.strip() or len(n) > MAX_NAME or not n.isprintable():
            raise IllegalAction(
                f"each player name must be printable text of 1 to {MAX_NAME} characters, got {shown(n)}"
            )
    if len(set(names)) != len(names):
        raise IllegalAction(f"player names must differ, got {names}")
    return tuple(names)


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
    replays: int = 0  # rounds added to replay a full tie (included in `rounds`)
    results: tuple[RoundResult, ...] = ()
    over: bool = False
    turn_state: FrozenMap = field(converter=FrozenMap, factory=FrozenMap)  # rule -> its state this turn
    player_state: tuple[FrozenMap, ...] = ()  # per player: rule -> its state this game
    history: History = field(default=EMPTY, converter=as_history, eq=False, repr=False)  # the moves since `new`

    # ------------------------------------------------------------------ creation

    @classmethod
    def new(cls, variant: Variant, players: Sequence[str] | int = 1, rounds: int | None = None) -> GameState:
        """A match at its start: the first player's first roll is pending."""
        if not isinstance(variant, Variant):
            raise IllegalAction(
                f"GameState.new needs a compiled Variant (engine.variant(...)), got {type(variant).__name__}"
            )
        names = _players(players)
        n_rounds = whole_number(rounds, "rounds") if rounds is not None else variant.match.rounds_for(len(names))
        if not 1 <= n_rounds <= MAX_ROUNDS:
            raise IllegalAction(f"a match has 1 to {MAX_ROUNDS} rounds, got {shown(n_rounds)}")
        return cls(
            variant=variant,
            players=names,
            cards=tuple(Card() for _ in names),
            banked=tuple(0 for _ in names),
            rounds=n_rounds,
            player_state=tuple(FrozenMap() for _ in names),
        )

    # ------------------------------------------------------------------ queries

    @property
    def is_chance(self) -> bool:
        """True when dice must be rolled next (start of a turn, or after a keep)."""
        return not self.over and self.held is not None

    def require_decision(self) -> None:
        """A DicecupError unless a player decides now (dice on the table, the game not over): what every
        advisor and bot checks before it ranks or chooses."""
        if self.is_chance or self.over:
            raise DicecupError(
                "no decision now: the dice must be rolled first" if not self.over else "the game is over"
            )

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
        """Rolls this turn may have: the variant's, plus banked ones where unused rolls carry over."""
        extra = self.banked[self.current] if self.variant.carry_over and self.banked else 0
        return self.variant.rolls + extra

    @property
    def rolls_left(self) -> int:
        return self.rolls_available - self.rolls_used

    @property
    def turn(self) -> int:
        """The current player's turn number in this game, from 1 (one box is filled per turn)."""
        return len(self.card.scores) + 1

    @property
    def roll_now(self) -> Roll | None:
        """The dice on the table as a Roll, or None before the turn's first roll."""
        return self.variant.roll_of(self.dice) if self.dice and self.held is None else None

    def situation(self) -> Situation:
        """The game around the current player's card, as the rule hooks see it."""
        ps = self.player_state[self.current] if self.player_state else FrozenMap()
        return Situation(
            player=self.current,
            players=self.players,
            turn=self.turn,
            rolls_used=self.rolls_used,
            rolls_left=self.rolls_left,
            cards=self.cards,
            turn_state=self.turn_state,
            player_state=ps,
        )

    def legal_boxes(self) -> tuple[str, ...]:
        if self.over or self.held is not None:
            return ()
        return self.variant.legal_boxes(self.card, self.roll_now, self.first_roll, self.situation())  # type: ignore[arg-type]

    def may_reroll(self) -> bool:
        """Whether the current player may keep dice and roll again now (rolls left, rules allow)."""
        if self.over or self.held is not None or self.rolls_left <= 0:
            return False
        return self.variant.may_reroll(self.card, self.roll_now, self.first_roll, self.situation())

    def legal_keeps(self) -> tuple[tuple[int, ...], ...]:
        """Every distinct proper sub-multiset of the dice that may be kept (the rest rerolled)."""
        if not self.may_reroll():
            return ()
        return tuple(k for k in sub_multisets(self.dice) if len(k) < len(self.dice))

    def rule_actions(self) -> tuple[RuleAction, ...]:
        """The actions rule plugins offer now (e.g. an announcement), besides keeping and scoring."""
        if self.over or self.held is not None:
            return ()
        return self.variant.actions(self.card, self.roll_now, self.first_roll, self.situation())

    def legal_actions(self) -> list[Action]:
        """Every legal decision now (empty at a chance node: see `chance_outcomes`). A decision with none (the
        rules left no box, no roll and no action) is the rules' ContractError, naming them."""
        actions: list[Action] = [Score(b) for b in self.legal_boxes()]
        actions.extend(Keep(k) for k in self.legal_keeps())
        actions.extend(self.rule_actions())
        if not actions and not self.over and self.held is None:
            raise no_move_error(self.variant, self.card, self.roll_now, self.first_roll, self.situation())
        return actions

    def turn_status(self) -> tuple[str, ...]:
        """What the rules say about the current turn (an announcement made, ...), for display."""
        if self.over:
            return ()
        return self.variant.turn_status(self.card, self.roll_now, self.first_roll, self.situation())

    def chance_outcomes(self) -> list[tuple[RollDice, Fraction]]:
        """The possible results of the pending roll (values of the rolled dice) with probabilities."""
        if not self.is_chance:
            return []
        n = self.variant.dice - len(self.held)  # type: ignore[arg-type]
        count = math.comb(n + self.variant.faces - 1, n)
        if count > MAX_ROLLS:
            raise TooLarge(
                f"the pending roll of {n} dice with {self.variant.faces} faces has {count:,} outcomes, above {MAX_ROLLS:,}"
            )
        return [(RollDice(d), p) for d, p in reroll_outcomes(n, self.variant.faces)]

    def score_preview(self, box: str) -> ScoreResult:
        """What scoring `box` now would give (no state change)."""
        self._known_box(box)
        roll = self._need_decision()
        return self.variant.score(self.card, box, roll, self.first_roll, self.situation())

    def totals(self) -> tuple[int, ...]:
        """Each player's total score in the current (or last) game of the match."""
        if self.over and self.results:
            return self.results[-1].totals
        return tuple(self.variant.total(c) for c in self.cards)

    def match_totals(self, figure: str = "score") -> tuple[int, ...]:
        """Totals of a figure summed over finished games (and the game in progress, unless over)."""
        known = ["score", *(f.id for f in self.variant.figures)]
        if not isinstance(figure, str) or figure not in known:
            raise IllegalAction(f"{self.variant.id} has no figure {shown(figure)}; its figures are {', '.join(known)}")
        done = [sum(r.figure(figure)[i] for r in self.results) for i in range(len(self.players))]
        if self.over:
            return tuple(done)
        now = [self.variant.figure_totals(c).get(figure, 0) for c in self.cards]
        return tuple(d + t for d, t in zip(done, now, strict=True))

    def winners(self) -> tuple[str, ...]:
        """The winner(s): an instant winner of the last game, else the best by the variant's ranking."""
        if self.results and self.results[-1].instant_winner is not None and self.rounds == 1:
            return (self.players[self.results[-1].instant_winner],)
        keys = [self.match_totals(f) for f in self.variant.rank_by]
        ranked = [tuple(k[i] for k in keys) for i in range(len(self.players))]
        best = max(ranked)
        return tuple(p for p, r in zip(self.players, ranked, strict=True) if r == best)

    def settlement(self) -> Mapping[str, Fraction] | None:
        """Payments at the end of the match, if the variant settles; None before the end."""
        if not self.over:
            return None
        return self.variant.settle(dict(zip(self.players, self.match_totals(), strict=True)))

    def breakdown(self, player: int | None = None) -> dict[str, Any]:
        """One player's card for display: boxes as written, awards, whole-card bonuses, totals."""
        i = self.current if player is None else player
        if isinstance(i, bool) or not isinstance(i, numbers.Integral) or not 0 <= i < len(self.players):
            raise IllegalAction(
                f"there is no player {shown(player)}; players are numbered 0 to {len(self.players) - 1}"
            )
        i = int(i)
        card = self.cards[i]
        v = self.variant
        figures = v.figure_totals(card)
        out: dict[str, Any] = {
            "player": self.players[i],
            "boxes": v.written_scores(card),
            "awards": [award_json(a) for a in card.awards],
            "bonuses": [award_json(a) for a in v.end_bonuses(card)],
            "total": figures["score"],
        }
        if len(v.columns) > 1:
            out["columns"] = v.column_totals(card)
        if v.figures:
            out["figures"] = figures
        return out

    # ------------------------------------------------------------------ transitions

    def _known_box(self, box: Any) -> str:
        """`box` when it is the id of one of the variant's boxes; IllegalAction listing them otherwise."""
        if not isinstance(box, str):
            raise IllegalAction(
                f"a box id is a string such as {self.variant.box_ids[0]!r}, got {type(box).__name__} {shown(box)}"
            )
        if box not in self.variant.box_ids:
            raise IllegalAction(f"no box {shown(box)} in {self.variant.id}; boxes: {', '.join(self.variant.box_ids)}")
        return box

    def _need_decision(self) -> Roll:
        if self.over:
            raise IllegalAction("the game is over")
        if self.held is not None:
            raise IllegalAction("roll the dice first")
        return self.roll_now  # type: ignore[return-value]

    def _moved(self, action: Action, **changes: Any) -> GameState:
        """This state after `action`, with `changes`: a field-by-field copy (attrs' `evolve` would run every
        field through `__init__` again, a third of a brute-force search's time)."""
        new = object.__new__(GameState)
        for name in _FIELDS:
            object.__setattr__(new, name, changes[name] if name in changes else getattr(self, name))
        if "turn_state" in changes and not isinstance(new.turn_state, FrozenMap):
            object.__setattr__(new, "turn_state", FrozenMap(new.turn_state))
        object.__setattr__(new, "history", self.history.then(action))
        return new

    def roll(self, rng: random.Random | None = None, dice: Sequence[int] | None = None) -> GameState:
        """Resolve the pending roll with `dice` (the rolled dice's values) or with `rng`.

        `rng` is a `random.Random` (or anything whose `randint(a, b)` includes both ends);
        `dice` a list of whole numbers (numpy integers too). Give one of them, not both.
        """
        if rng is not None and dice is not None:
            raise IllegalAction("give either the dice rolled or a random generator to roll them, not both")
        if self.over:
            raise IllegalAction("the game is over")
        if self.held is None:
            raise IllegalAction(
                "no roll is pending: keep some dice first (Keep) or score a box"
                if self.rolls_left > 0
                else f"no rolls left this turn ({self.rolls_used} used); score a box"
            )
        v = self.variant
        n = v.dice - len(self.held)
        if dice is None:
            if rng is None:
                raise IllegalAction("give the dice rolled, or a random generator to roll them")
            new = check_dice(_draw(rng, n, v.faces), n, v.faces, what="rolled dice")
        else:
            given = dice_values(dice, "the rolled dice")
            if len(given) == v.dice and n != len(given):
                # the host gave all the dice: they must include the held ones
                check_dice(given, v.dice, v.faces)
                rest = Counter(given) - Counter(self.held)
                if sum(rest.values()) != n:
                    raise DiceError(f"the dice {list(given)} do not include the held dice {list(self.held)}")
                new = tuple(rest.elements())
            else:
                new = check_dice(given, n, v.faces, what="rolled dice" if self.held else "dice")
        state = self._moved(RollDice(new), dice=self.held + new, rolls_used=self.rolls_used + 1, held=None)
        if len(self.players) > 1:
            won = v.instant_win(state.card, state.roll_now, state.first_roll, len(self.players), state.situation())  # type: ignore[arg-type]
            if won:
                return state._end_round(instant_winner=self.current, reason=won if isinstance(won, str) else "")
        return state

    def keep(self, dice: Sequence[int]) -> GameState:
        """Set aside `dice` (values) and make the others the pending roll."""
        keep = tuple(sorted(dice_values(dice, "the dice to keep")))
        self._need_decision()
        if self.rolls_left <= 0:
            raise IllegalAction(f"no rolls left this turn ({self.rolls_used} used); score a box")
        missing = Counter(keep) - Counter(self.dice)
        if missing:
            raise IllegalAction(f"cannot keep {list(keep)}: the dice are {list(self.dice)}")
        if len(keep) == len(self.dice):
            raise IllegalAction("keeping every die rerolls nothing; score a box instead")
        if not self.may_reroll():
            why = [t for t in self.turn_status() if t]
            raise IllegalAction("the rules do not allow another roll now" + (f" ({'; '.join(why)})" if why else ""))
        return self._moved(Keep(keep), held=keep)

    def score(self, box: str) -> GameState:
        """Fill `box` with the dice on the table and pass the turn."""
        self._known_box(box)
        roll = self._need_decision()
        v = self.variant
        if self.card.is_filled(box):
            raise IllegalAction(f"box {box!r} is already filled (with {v.written(box, self.card.scores[box])})")
        legal = self.legal_boxes()
        sit = self.situation()
        if box not in legal:
            why = v.why_illegal(self.card, roll, self.first_roll, box, sit)
            allowed = ", ".join(legal) or "none until another move (see the legal actions)"
            raise IllegalAction(
                f"box {box!r} may not be used with {roll} now" + (f": {why}" if why else "") + f"; allowed: {allowed}"
            )
        result = v.score(self.card, box, roll, self.first_roll, sit)
        cards = list(self.cards)
        cards[self.current] = self.card.fill(box, result.score, result.awards)
        banked = list(self.banked)
        if v.carry_over:
            banked[self.current] = self.rolls_available - self.rolls_used
        state = self._moved(Score(box), cards=tuple(cards), banked=tuple(banked))
        return state._next_turn()

    def act(self, action: RuleAction) -> GameState:
        """Take an action a rule plugin offers now (see `rule_actions`)."""
        wanted = _rule_action(action)
        self._need_decision()
        offered = self.rule_actions()
        if wanted not in offered:
            labels = ", ".join(a.label for a in offered) or "none"
            raise IllegalAction(f"{_label(wanted)} is not possible now; rule actions now: {labels}")
        action = offered[offered.index(wanted)]  # the rule's own (frozen) value is what the history keeps
        update = self.variant.apply_action(self.card, self.roll_now, self.first_roll, action, self.situation())
        turn_state = self.turn_state
        if update.turn is not UNCHANGED:
            turn_state = (
                turn_state.without(action.rule) if update.turn is None else turn_state.set(action.rule, update.turn)
            )
        player_state = list(self.player_state)
        if update.player is not UNCHANGED:
            mine = player_state[self.current]
            player_state[self.current] = (
                mine.without(action.rule) if update.player is None else mine.set(action.rule, update.player)
            )
        return self._moved(action, turn_state=turn_state, player_state=tuple(player_state))

    def apply(self, action: Action) -> GameState:
        """Apply a Keep, Score, RollDice or RuleAction."""
        if isinstance(action, Keep):
            return self.keep(action.dice)
        if isinstance(action, Score):
            return self.score(action.box)
        if isinstance(action, RollDice):
            return self.roll(dice=action.dice)
        if isinstance(action, RuleAction):
            return self.act(action)
        raise IllegalAction(
            f"not an action (Keep, Score, RollDice or RuleAction): {type(action).__name__} {shown(action)}"
        )

    def _next_turn(self) -> GameState:
        nxt = (self.current + 1) % len(self.players)
        boxes = len(self.variant.boxes)
        if nxt == 0 and all(len(c.scores) == boxes for c in self.cards):
            return self._end_round(None)
        return evolve(self, current=nxt, dice=(), rolls_used=0, held=(), turn_state=FrozenMap())

    def _end_round(self, instant_winner: int | None, reason: str = "") -> GameState:
        v = self.variant
        figures = [v.figure_totals(c) for c in self.cards]
        totals = tuple(f["score"] for f in figures)
        others = {f.id: tuple(fig.get(f.id, 0) for fig in figures) for f in v.figures}
        results = self.results + (RoundResult(totals, instant_winner, others, reason),)
        rounds, replays = self.rounds, self.replays
        if self.round >= rounds and v.match.replay_ties and len(self.players) > 1 and rounds < MAX_ROUNDS:
            match = [sum(r.totals[i] for r in results) for i in range(len(self.players))]
            if len(set(match)) == 1 and instant_winner is None:
                rounds, replays = rounds + 1, replays + 1  # every total identical: the match is replayed
        if self.round < rounds:
            return evolve(
                self,
                cards=tuple(Card() for _ in self.players),
                current=0,
                held=(),
                banked=tuple(0 for _ in self.players),
                round=self.round + 1,
                rounds=rounds,
                replays=replays,
                results=results,
                player_state=tuple(FrozenMap() for _ in self.players),
                turn_state=FrozenMap(),
                dice=(),
                rolls_used=0,
            )
        return evolve(
            self,
            results=results,
            rounds=rounds,
            replays=replays,
            over=True,
            held=None,
            turn_state=FrozenMap(),
            dice=(),
            rolls_used=0,
        )

    # ------------------------------------------------------------------ saving

    def to_dict(self) -> dict[str, Any]:
        """A versioned, JSON-ready description: the moves since the start, and the position they give."""
        return state_to_dict(self)

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=1, sort_keys=True)

    @classmethod
    def from_dict(cls, data: Any, engine: Any, variant: VariantArg = None) -> GameState:
        """Rebuild a saved state by replaying its moves; SaveError names the key that is wrong. A variant
        defined by a file is never read because a save names it: pass it (`variant=` its path, or compiled)."""
        return state_from_dict(cls, data, engine, variant)

    @classmethod
    def from_json(cls, text: str | bytes, engine: Any, variant: VariantArg = None) -> GameState:
        """Rebuild a state from `to_json` text (str, or UTF-8 bytes) with `engine`; SaveError for anything else."""
        return state_from_json(cls, text, engine, variant)


_FIELDS = tuple(a.name for a in fields(GameState) if a.name != "history")  # what `_moved` copies


def _draw(rng: Any, n: int, faces: int) -> tuple[int, ...]:
    """`n` dice drawn with `rng.randint(1, faces)`; IllegalAction when `rng` is no such generator."""
    randint = getattr(rng, "randint", None)
    numpy_rng = type(rng).__module__.partition(".")[0] == "numpy" or getattr(rng, "__name__", "") == "numpy.random"
    if not callable(randint) or numpy_rng:
        why = " (a numpy generator's randint leaves out its upper end: give the dice it rolled)" if numpy_rng else ""
        raise IllegalAction(f"rng must be a random.Random, or give the dice rolled{why}; got {type(rng).__name__}")
    try:
        drawn = [randint(1, faces) for _ in range(n)]
    except Exception as exc:
        raise IllegalAction(f"rng.randint(1, {faces}) failed: {type(exc).__name__}: {shown(exc, 120)}") from exc
    return dice_values(drawn, "rolled dice")


def _rule_action(action: Any) -> RuleAction:
    """`action` with its argument frozen (as offered actions are), or IllegalAction when it is no RuleAction."""
    if not isinstance(action, RuleAction):
        raise IllegalAction(f"act takes a RuleAction from rule_actions(), got {type(action).__name__} {shown(action)}")
    if not isinstance(action.rule, str) or not isinstance(action.name, str):
        raise IllegalAction(f"a RuleAction's rule and name are strings, got {shown(action)}")
    try:
        return RuleAction(action.rule, action.name, freeze_json(action.arg, "a rule action's argument"))
    except ValueError as exc:
        raise IllegalAction(str(exc)) from None


def _label(action: RuleAction) -> str:
    """An action's label, quoted and bounded, for messages (its argument may be anything a host passed)."""
    try:
        return shown(action.label, 80)
    except Exception:  # the label could not be written (an int too long to print)
        return shown(action, 80)
