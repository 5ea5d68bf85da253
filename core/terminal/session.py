"""The terminal game: seats (humans and bots) and the turn loop.

Input and output are injected (`ask(prompt) -> str` and a `View`), so the same
loop runs in a terminal, under a test runner and in unit tests. Every state
change is reported to `on_change` (the CLI saves the game there). Bots come from
a factory (the engine's `make_bot`) and hints from an advisor passed in (the CLI
builds one from the solver), so neither needs changes here. Actions that rule
plugins add are offered and narrated like any other move.
"""

from __future__ import annotations

import random
import time
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from attrs import evolve, frozen
from rich.text import Text

from ..errors import DicecupError, IllegalAction, shown
from ..game.actions import Action, Keep, RuleAction, Score
from ..game.bots import Bot
from ..game.handle import Game
from ..game.state import GameState
from ..language.model import Variant
from .commands import (
    Command,
    DoAction,
    InputProblem,
    KeepDice,
    Say,
    actions_summary,
    help_text,
    parse_command,
    why_not,
)
from .view import View, ranking_lines

__all__ = [
    "HUMAN",
    "Seat",
    "parse_seats",
    "QuitGame",
    "EndOfInput",
    "Advisor",
    "Ranking",
    "Session",
]

HUMAN = "human"

#: `advise(state) -> [(action, expected final score), ...]`, e.g. from the solver (the CLI builds one).
Advisor = Callable[[GameState], Sequence[tuple[Action, float]]]


class Ranking(NamedTuple):
    """Hints by several objectives side by side: their column labels and units ("points", "probability"),
    and `rank(state)`: every move, ordered by the first objective, with its (value, rank) under each."""

    labels: Sequence[str]
    units: Sequence[str]
    rank: Callable[[GameState], Sequence[tuple[Action, Sequence[tuple[float, int]]]]]


class QuitGame(Exception):
    """The human asked to stop."""


class EndOfInput(DicecupError):
    """Standard input ended before the game did."""


# ---------------------------------------------------------------------------- seats


@frozen
class Seat:
    """A player at the table: a name and who moves for it (`human` or a bot kind)."""

    name: str
    kind: str = HUMAN

    @property
    def is_human(self) -> bool:
        return self.kind == HUMAN

    @property
    def spec(self) -> str:
        """How the seat is written on the command line and in save files."""
        return HUMAN if self.is_human else f"bot:{self.kind}"

    @property
    def label(self) -> str:
        return self.name if self.is_human or self.name == self.kind else f"{self.name} (bot:{self.kind})"


def parse_seats(
    specs: Sequence[str] | None, bots: Sequence[str], check: Callable[[str], object] | None = None
) -> tuple[Seat, ...]:
    """Read `--player` values: `NAME` (a human), `bot:KIND` or `bot:KIND:NAME` (a bot of a kind in `bots`).

    A kind listed with an argument (`risk:THETA`, `Engine.bot_usage`) is written `bot:KIND:ARG` or
    `bot:KIND:ARG:NAME`; `check(kind)` (`Engine.bot_spec`) refuses a bad argument at once.
    """
    if not specs:
        return (Seat("you"),)
    seats: list[Seat] = []
    used: set[str] = set()
    takes = {b.partition(":")[0] for b in bots if ":" in b}
    for raw in specs:
        text = raw.strip()
        if text.lower().startswith("bot:"):
            kind, _, name = text[4:].partition(":")
            kind = kind.strip().lower()
            if kind not in {b.partition(":")[0] for b in bots}:
                raise DicecupError(
                    f"--player {shown(raw, 40)}: no bot {shown(kind, 40)}; bots: {', '.join('bot:' + b for b in bots)} "
                    "(a human player is just a name)"
                )
            if kind in takes:  # bot:KIND:ARG[:NAME]
                arg, _, name = name.partition(":")
                kind = f"{kind}:{arg.strip()}"
                if check is not None:
                    try:
                        check(kind)
                    except DicecupError as exc:
                        raise DicecupError(f"--player {shown(raw, 40)}: {exc}") from None
            name = name.strip()
            if not name:  # unnamed bots of one kind are numbered: greedy, greedy2, ...
                name, n = kind, 1
                while name in used:
                    n += 1
                    name = f"{kind}#{n}" if ":" in kind else f"{kind}{n}"  # risk:0.05#2, not risk:0.052
            seat = Seat(name, kind)
        else:
            if not text:
                raise DicecupError("--player needs a name (or bot:random / bot:greedy)")
            seat = Seat(text)
        if seat.name in used:
            raise DicecupError(f"two players are called {shown(seat.name)}; give each --player a different name")
        used.add(seat.name)
        seats.append(seat)
    return tuple(seats)


# ---------------------------------------------------------------------------- the loop


@frozen
class _Decision:
    """A human's decision as it was taken: where to go back to on `undo` (the undo stack's depth,
    the dice generator, the dice as laid out on the table)."""

    seat: int
    action: Action
    depth: int
    rng: Any
    slots: tuple[int, ...] | None
    kept: frozenset[int]


def _rng_state(rng: Any) -> Any:
    """The dice generator's state, to rewind it on undo (None for a generator that cannot say)."""
    get = getattr(rng, "getstate", None)
    return get() if callable(get) else None


def _plural(n: int, one: str, many: str) -> str:
    """`1 box`, `2 boxes`: a count with its noun in the right number."""
    return f"{n} {one if n == 1 else many}"


def place_dice(
    slots: Sequence[int] | None,
    held: Sequence[int],
    drawn: Sequence[int],
    positions: Sequence[int] | None = None,
) -> tuple[tuple[int, ...], frozenset[int]]:
    """The dice on the table after a roll, and the places (0-based) of the dice kept.

    Kept dice stay where they lay: at `positions` (1-based) when the player named them, else on
    the first places showing their faces; the rolled dice fill the other places, lowest first.
    The first roll of a turn (nothing held, or no layout known) is laid out sorted.
    """
    if not held or slots is None or len(slots) != len(held) + len(drawn) or Counter(held) - Counter(slots):
        return tuple(sorted([*held, *drawn])), frozenset()
    keep: set[int] = set()
    if positions is not None and sorted(slots[p - 1] for p in positions if 0 < p <= len(slots)) == sorted(held):
        keep = {p - 1 for p in positions}
    else:
        for face in held:
            keep.add(next(i for i, d in enumerate(slots) if d == face and i not in keep))
    new = iter(sorted(drawn))
    return tuple(slots[i] if i in keep else next(new) for i in range(len(slots))), frozenset(keep)


class Session:
    """Runs a game to its end: rolls the dice, asks humans, lets bots move, narrates.

    The moves go through a `Game` handle, whose undo stack `undo` uses; the dice generator
    is saved at each human decision, so an undo brings back the same dice to come.
    """

    def __init__(
        self,
        state: GameState,
        seats: Sequence[Seat],
        *,
        rng: random.Random,
        view: View,
        ask: Callable[[str], str] | None = None,
        on_change: Callable[[GameState], None] | None = None,
        advisor: Advisor | None = None,
        narrate_bots: bool = True,
        bots: dict[int, Bot] | None = None,
        make_bot: Callable[[str, random.Random], Bot] | None = None,
        verbs: dict[str, str] | None = None,
        hints: bool | None = None,
        ranking: Ranking | None = None,
        coach: bool = False,
        pace: float = 0.0,
        saved: bool = False,
    ) -> None:
        if len(seats) != len(state.players) or any(s.name != p for s, p in zip(seats, state.players, strict=True)):
            raise DicecupError("the seats do not match the game's players")
        self.game = Game(state)  # its undo stack; the dice come from `rng`, drawn here
        self.seats = tuple(seats)
        self.rng = rng
        self.view = view
        self.ask = ask or (lambda prompt: input(prompt))
        self.on_change = on_change
        self.advisor = advisor
        self.hints = advisor is not None if hints is None else hints  # show the advice at every decision
        self.ranking = ranking  # hints by several objectives side by side (else the advisor's line)
        self.coach = coach and advisor is not None  # after each decision, what it cost
        self.pace = pace  # seconds between bot moves, so a human can follow them
        self.sleep: Callable[[float], None] = time.sleep
        self.saved = saved  # saved after every action: quitting loses nothing
        self.narrate_bots = narrate_bots
        self.verbs = dict(verbs or {})  # action verbs the variant's rules declare -> their help
        if bots is None:
            if make_bot is None and any(not s.is_human for s in self.seats):
                raise DicecupError("bots need a bot factory (engine.make_bot)")
            bots = {i: make_bot(s.kind, rng) for i, s in enumerate(self.seats) if not s.is_human}  # type: ignore[misc]
        self.bots = bots
        self._log: list[str] = []
        self.any_human = any(s.is_human for s in self.seats)
        self._slots: tuple[int, ...] | None = None  # the dice as laid out on the table (positions fixed)
        self._kept: frozenset[int] = frozenset()  # places of the dice kept from the last roll
        self._keep_at: tuple[int, ...] | None = None  # places the human named for the pending roll
        self._decisions: list[_Decision] = []  # the humans' decisions, for undo
        self._no_reroll = -1  # undo depth at which dice already seen forbid a reroll
        self._open_line = False  # a bot's turn is being narrated on the current line
        self._column = 0  # how much of that line is written
        self._advice: tuple[Any, list[tuple[Action, float]]] | None = None
        self._table: tuple[Any, list[str]] | None = None  # the side-by-side hint of the last position

    @property
    def state(self) -> GameState:
        """The position on the table."""
        return self.game.state

    # -- driving -------------------------------------------------------------------

    def run(self) -> GameState:
        """Play until the match is over; raises QuitGame or EndOfInput when a human stops."""
        while not self.state.over:
            self.step()
        self._end_line()
        return self.state

    def step(self) -> None:
        """One transition: a roll at a chance node, else the current player's decision."""
        st = self.state
        if st.is_chance:
            # Draw the dice here and hand them to the engine, so the narration knows them
            # even when the roll ends the game (an instant win clears the table).
            held = st.held or ()
            n = st.variant.dice - len(held)
            drawn = tuple(self.rng.randint(1, st.variant.faces) for _ in range(n))
            self._slots, self._kept = place_dice(self._slots if held else None, held, drawn, self._keep_at)
            self._keep_at = None
            self._advance(self.game.roll(dice=drawn), None, rolled=tuple(sorted(held + drawn)))
            return
        i = st.current
        if i in self.bots:
            action = self.bots[i].choose(st)
            self._advance(self.game.apply(action), action)
            return
        chosen = self._human(st)
        if chosen is None:  # undone: the position changed
            return
        action, shown = chosen
        note = self._coach_note(shown, action)
        self._decisions.append(
            _Decision(i, action, len(self.game.history), _rng_state(self.rng), self._slots, self._kept)
        )
        self._no_reroll = -1
        self._advance(self.game.apply(action), action)
        if note:
            self.view.say(note, "magenta")

    def _advance(self, new: GameState, action: Action | None, rolled: tuple[int, ...] = ()) -> None:
        old = self.game.history[-1]
        seat = self.seats[old.current]
        v = old.variant
        bot = not seat.is_human
        if action is None:  # a roll
            said = _compact(rolled, v.faces)
            self._log.append(said)
            if bot and self.narrate_bots:
                self._bot_says(
                    said if not self._open_line else " → " + said, first=not self._open_line, label=seat.label
                )
        elif isinstance(action, Keep):
            kept = _compact(action.dice, v.faces) if action.dice else "nothing"
            if not bot:
                n = v.dice - len(action.dice)
                self.view.say(f"You keep {kept} and roll {_plural(n, 'die', 'dice')}.", "dim")
            elif self.narrate_bots:
                self._bot_says(f" → keep {kept}" if action.dice else " → reroll all")
            self._log.append(f"keep {kept}")
        elif isinstance(action, RuleAction):
            said = _action_text(action, v)
            if not bot:
                self.view.say(f"You {said}.", "bold")
            elif self.narrate_bots:
                self._bot_says(f" → {said}")
            self._log.append(said)
        elif isinstance(action, Score):
            res = old.score_preview(action.box)
            extra = "".join(f", {a.name or a.id} {a.points:+d}" for a in res.awards)
            name = _box_name(old, action.box)
            if not bot:
                self.view.say(f"You score {res.written} in {name}{extra}.", "bold")
            elif self.narrate_bots:
                self._bot_says(f" → {name} {res.written}{extra}")
                self._end_line()
            self._log = []
        if self.on_change is not None:
            self.on_change(new)
        if len(new.results) > len(old.results):
            self._round_over(old, new, action)

    def _bot_says(self, text: str, first: bool = False, label: str = "") -> None:
        """A bot's move, added to its turn's line as it happens (with `pace` seconds after it)."""
        console = self.view.console
        if first:
            self._end_line()
            text = f"{label}: {text}"
        elif console.is_terminal and self._column + len(text) > console.width:
            console.print()  # a move never breaks across lines on a terminal: the next line takes it
            text = "  " + text.lstrip()
            self._column = 0
        console.print(Text(text), end="", soft_wrap=True)
        self._column += len(text)
        self._open_line = True
        if self.pace > 0:
            self.view.console.file.flush()
            self.sleep(self.pace)

    def _end_line(self) -> None:
        """End a bot's turn line before anything else is printed."""
        if self._open_line:
            self.view.console.print()
            self._open_line = False
        self._column = 0

    def _round_over(self, old: GameState, new: GameState, action: Action | None) -> None:
        self._end_line()
        result = new.results[-1]
        k = len(new.results)
        v = self.view
        if result.instant_winner is not None:
            who = self.seats[result.instant_winner]
            if (self.narrate_bots or self.any_human) and not (not who.is_human and self.narrate_bots):
                v.say(f"{who.label}: " + " → ".join(self._log))
            v.instant_win(new, result.instant_winner, result.won_by or "a winning roll")
            self._log = []
        self._slots, self._kept = None, frozenset()
        if new.over:
            return
        if self.any_human:
            v.console.print(v.final_cards(old, _cards_after(old, action), title=f"Round {k} finished"))
            v.console.print(v.round_table(new))
        elif self.narrate_bots:
            figures = new.variant.figures
            totals = ", ".join(
                f"{n} {t}"
                + (f" ({', '.join(f'{result.figure(f.id)[i]} {f.name.lower()}' for f in figures)})" if figures else "")
                for i, (n, t) in enumerate(zip(new.players, result.totals, strict=True))
            )
            v.say(f"Round {k} of {new.rounds}: {totals}", "bold")
        if new.rounds > old.rounds:
            v.say("Every total is equal: the match is replayed with one more round.", "yellow")

    # -- a human's decision -----------------------------------------------------------

    def _prompt(self, st: GameState) -> str:
        """The line the human answers: what can be typed in this position."""
        v = st.variant
        legal = st.legal_boxes()
        if len(legal) == 1:
            score = f"s scores {v.box(legal[0]).name}"  # `s` alone scores it
        elif len(legal) > 1 and len(v.columns) > 1:
            b = v.box(legal[0])
            score = f"s {v.rows.index(b.row) + 1} {b.column}"
        else:
            score = "s 9"
        if not st.may_reroll():
            if st.rule_actions() and not legal:
                verbs = sorted({a.name for a in st.rule_actions()})
                return f"{st.player}: {' or '.join(verbs)} first, e.g. {_example(st)} (? for help) > "
            what = f"type s to score {v.box(legal[0]).name}" if len(legal) == 1 else f"score a box ({score})"
            if st.rolls_left > 0:
                return f"{st.player}, roll {st.rolls_used} of {st.rolls_available}: {what} > "
            return f"{st.player}, no rolls left: {what} > "
        score += "" if len(legal) == 1 else " score"
        return (
            f"{st.player}, roll {st.rolls_used} of {st.rolls_available} (k 1 3 keep, r reroll all, {score}, ? help) > "
        )

    def heading(self, st: GameState) -> str:
        """Whose turn, which turn, which roll, and the banked rolls where unused rolls carry over."""
        v = st.variant
        left = len(v.boxes) - len(st.card.scores)
        head = f"{st.player}: turn {st.turn} of {len(v.boxes)} ({_plural(left, 'box', 'boxes')} to go), "
        head += f"roll {st.rolls_used} of {st.rolls_available}"
        if v.carry_over:
            banked = st.banked[st.current]
            head += f" ({v.rolls} + {banked} banked)" if banked else " (none banked)"
        if st.rounds > 1:
            head = f"Round {st.round} of {st.rounds} · " + head
        return head

    def show(self, st: GameState, full: bool = False) -> None:
        """The decision screen: whose turn, the card (compact, or `full` with every player), the rules'
        notes, the dice (kept ones marked), and the advice when hints are on.

        The compact screen fits 80 x 24 with several players and card columns.
        """
        v = self.view
        self._end_line()
        v.heading(self.heading(st))
        if full:
            v.console.print(v.scorecard(st))
            v.notes(v.card_notes(st) + v.progress(st), "dim")
        else:
            if len(st.players) > 1:
                for standing in v.standings(st):
                    v.console.print(standing)
            for row in v.compact_card(st):
                v.console.print(row, overflow="crop", no_wrap=True)
            v.notes(v.progress(st) if len(st.variant.columns) == 1 else [], "dim")
        for line in st.turn_status():
            v.say(line, "yellow")
        actions = st.rule_actions()
        if actions:
            must = not st.legal_boxes() and not st.may_reroll()
            v.say(
                ("You must " if must else "You may also ") + "; or ".join(actions_summary(actions, st.variant)),
                "yellow",
            )
        if st.variant.carry_over and st.rolls_left > 0:
            n = st.rolls_left
            v.say(f"Unused rolls are banked: scoring now keeps {_plural(n, 'roll', 'rolls')} for later turns.", "dim")
        v.console.print(v.dice(st.dice, st.variant, self._kept if tuple(st.dice) == self._slots else ()))
        if self.hints:
            self._hint(st)

    def _advise(self, st: GameState) -> list[tuple[Action, float]]:
        """The advisor's options for this decision, best first (asked once per position)."""
        assert self.advisor is not None
        key = (st.round, len(st.history), tuple(sorted(st.dice)))
        if self._advice is None or self._advice[0] != key:
            self._advice = (key, sorted(self.advisor(st), key=lambda av: -av[1]))
        return self._advice[1]

    def _hint(self, st: GameState) -> None:
        if self.advisor is None:
            self.view.problem("hints are off; start the game with --hints")
            return
        if self.ranking is not None and len(self.ranking.labels) > 1:
            key = (st.round, len(st.history), tuple(sorted(st.dice)))
            if self._table is None or self._table[0] != key:
                self._table = (key, ranking_lines(self.ranking, self.ranking.rank(st), _action_text))
            for line in self._table[1]:
                self.view.say(line, "yellow")
            return
        ranked = self._advise(st)
        if not ranked:
            return
        best = ranked[0][1]
        parts = [
            f"{_action_text(a)} ({val:.1f})" if i == 0 else f"{_action_text(a)} -{best - val:.1f}"
            for i, (a, val) in enumerate(ranked[:5])
        ]
        by = f" ({self.ranking.labels[0]})" if self.ranking is not None and self.ranking.labels[0] != "mean" else ""
        self.view.say(f"hint{by}: best " + parts[0] + ("; then " + ", ".join(parts[1:]) if parts[1:] else ""), "yellow")

    def _coach_note(self, st: GameState, action: Action) -> str:
        """With --coach: what a keep or a score cost against the best move, in expected final points."""
        if not self.coach or not isinstance(action, Keep | Score):
            return ""
        ranked = self._advise(st)
        value = next((val for a, val in ranked if a == action), None)
        if not ranked or value is None:
            return ""
        best_action, best = ranked[0]
        lost = max(0.0, best - value)
        if lost < 0.005:
            return f"coach: {_action_text(action)} is optimal (expected {value:.2f}; 0.00 lost)"
        return (
            f"coach: {_action_text(action)} cost {lost:.2f} expected points; "
            f"best was {_action_text(best_action)} (expected {best:.2f}, yours {value:.2f})"
        )

    def _human(self, st: GameState) -> tuple[Action, GameState] | None:
        """The human's next action (and the position as shown), or None when `undo` changed the position."""
        # Dice as laid out on the table: positions typed by the player refer to this order.
        slots = self._slots if self._slots is not None and sorted(self._slots) == sorted(st.dice) else None
        if slots is None:
            slots, self._kept = tuple(sorted(st.dice)), frozenset()
        self._slots = slots
        st = evolve(st, dice=slots)
        self.show(st)
        while True:
            try:
                text = self.ask(self._prompt(st))
            except EOFError:
                raise EndOfInput("input ended before the game did") from None
            try:
                cmd = parse_command(text, st, self.verbs)
                if cmd == Say("undo"):
                    self._undo(st)
                    return None
                action = self._check(cmd, st)
            except InputProblem as exc:
                self.view.problem(str(exc))
                continue
            if action is not None:
                if isinstance(cmd, KeepDice):
                    self._keep_at = cmd.positions
                return action, st

    def _undo(self, st: GameState) -> None:
        """Take back the human's own last score or rule action (see the help for what is fair)."""
        me = st.current
        mine = [k for k, d in enumerate(self._decisions) if d.seat == me]
        if not mine:
            raise InputProblem(
                "nothing to undo: you have made no move this game"
                + ("" if not st.history else " since it was started or resumed here")
            )
        k = mine[-1]
        last = self._decisions[k]
        others = {self.seats[d.seat].name for d in self._decisions[k + 1 :] if d.seat != me}
        if others:
            raise InputProblem(
                f"{', '.join(sorted(others))} moved since your last move; undo takes back only your own moves"
            )
        if isinstance(last.action, Keep):
            raise InputProblem(
                "a keep cannot be taken back once its dice are rolled: that would be a free reroll "
                "(undo takes back a score or an announcement)"
            )
        seen = bots = False
        while len(self.game.history) > last.depth:
            self.game.undo()
            seen = seen or self.game.state.is_chance  # dice were rolled after the decision: they have been seen
            bots = bots or self.game.state.current != me
        if last.rng is not None:
            self.rng.setstate(last.rng)
        self._slots, self._kept, self._keep_at = last.slots, last.kept, None
        self._no_reroll = last.depth if seen else -1
        del self._decisions[k:]
        self._log = []
        back = self.state
        what = _action_text(last.action, back.variant)
        if isinstance(last.action, Score):
            what = f"your {back.score_preview(last.action.box).written} in {_box_name(back, last.action.box)}"
        again = " (the bots' turns since then will be played again as they were)" if bots else ""
        self.view.say(f"Undone: {what}. The dice are as they were{again}.", "yellow")
        if self.on_change is not None:
            self.on_change(back)

    def _check(self, cmd: Command, st: GameState) -> Action | None:
        """Turn a command into a legal action, or explain why it cannot be done (InputProblem)."""
        if isinstance(cmd, Say):
            if cmd.what == "help":
                self.view.say(help_text(st.variant, self.verbs, self.view.console.width))
            elif cmd.what == "card":
                self.show(st, full=True)
            elif cmd.what == "hint":
                self._hint(st)
            elif cmd.what == "quit":
                if self.saved or self._ask_yes("Quit? This game is not saved and cannot be resumed. [y/N] ", True):
                    raise QuitGame()
                self.view.say("Not quit; the game goes on.", "dim")
            return None
        if isinstance(cmd, DoAction):
            return cmd.action
        if isinstance(cmd, KeepDice):
            if st.rolls_left <= 0:
                raise InputProblem(
                    f"no rolls left ({st.rolls_used} of {st.rolls_available} used): score a box, e.g. s 9"
                )
            if len(cmd.dice) == len(st.dice):
                raise InputProblem("that keeps every die, so nothing would be rolled; score a box instead (s ...)")
            if not st.may_reroll():
                status = "; ".join(st.turn_status()) or "the rules allow no other roll now"
                raise InputProblem(f"no reroll now: {status}")
            if self._no_reroll == len(self.game.history):
                raise InputProblem(
                    "after an undo you cannot reroll here: the dice that would come have been seen; score a box"
                )
            try:
                st.keep(cmd.dice)
            except IllegalAction as exc:
                raise InputProblem(str(exc)) from None
            return Keep(cmd.dice)
        box = cmd.box
        v = st.variant
        if st.card.is_filled(box):
            raise InputProblem(
                f"{box} is already filled (with {v.written(box, st.card.scores[box])}); pick an open box"
            )
        if box not in st.legal_boxes():
            raise InputProblem(_why_not_here(st, box))
        res = st.score_preview(box)
        if v.combination(v.box(box), st.roll_now) is None and res.points <= 0:  # type: ignore[arg-type]
            # Short enough for an 80-column line with the longest box names (Kismet's, a column's).
            dice = " ".join(map(str, st.dice))
            where = f" in {v.column(v.box(box).column).name}" if len(v.columns) > 1 else ""
            prompt = f"{dice} is not a {v.box(box).name}. Scratch it{where} for {res.points}? [y/N] "
            if not self._ask_yes(prompt):
                self.view.say("Not scored; choose again.", "dim")
                return None
        return Score(box)

    def _ask_yes(self, prompt: str, at_end: bool | None = None) -> bool:
        """A yes/no question; `at_end` is the answer when input has ended (else EndOfInput)."""
        try:
            return self.ask(prompt).strip().lower() in ("y", "yes")
        except EOFError:
            if at_end is not None:
                return at_end
            raise EndOfInput("input ended before the game did") from None

    def rematch(self) -> bool:
        """After a finished game: whether the human wants another with the same players (no when input ended)."""
        if not self.any_human:
            return False
        return self._ask_yes("Rematch with the same players and new dice? [y/N] ", False)


def _box_name(st: GameState, box: str) -> str:
    b = st.variant.box(box)
    if len(st.variant.columns) > 1:
        return f"{b.name} ({st.variant.column(b.column).name})"
    return b.name


def _compact(dice: Sequence[int], faces: int) -> str:
    """Dice as digits for one-line narration: `11235` (comma-separated above nine faces)."""
    return ("" if faces < 10 else ",").join(map(str, dice))


def _action_text(action: Action, variant: Variant | None = None) -> str:
    """A move in a few words: `keep 566`, `score full_house`, `announce Full (Announce)`."""
    if isinstance(action, Score):
        return f"score {action.box}"
    if isinstance(action, Keep):
        return "reroll all" if not action.dice else "keep " + "".join(map(str, action.dice))
    if isinstance(action, RuleAction):
        if variant is not None and isinstance(action.arg, str) and action.arg in variant.box_ids:
            b = variant.box(action.arg)
            where = f" ({variant.column(b.column).name})" if len(variant.columns) > 1 else ""
            return f"{action.name} {b.name}{where}"
        return action.label
    return str(action)


def _example(st: GameState) -> str:
    """One action the rules offer now, as it is typed (`announce full`)."""
    a = st.rule_actions()[0]
    v = st.variant
    if isinstance(a.arg, str) and a.arg in v.box_ids:
        return f"{a.name} {v.box(a.arg).row}"
    return a.label


def _why_not_here(st: GameState, box: str) -> str:
    """Why an open box cannot take the dice now, in the player's terms (forced card order said plainly)."""
    v = st.variant
    name = _box_name(st, box)
    legal = st.legal_boxes()
    if len(v.columns) == 1 and v.columns[0].order in ("down", "up") and len(legal) == 1:
        nxt = legal[0]
        return (
            f"{name} cannot be scored yet: this game fills the boxes in card order, "
            f"so this turn scores {v.box(nxt).name} (s {v.box_ids.index(nxt) + 1})"
        )
    why = why_not(st, box)
    if not legal:
        allowed = "; ".join(st.turn_status()) or "no box can be scored before another move"
    elif len(legal) <= 4:
        allowed = "now you can score " + ", ".join(legal)
    else:
        allowed = f"{len(legal)} other boxes can be scored now (the card shows them)"
    return f"{name} cannot be scored now: {why}; {allowed}"


def _cards_after(old: GameState, action: Action | None) -> tuple:
    """The cards as they stood when a round ended (the next state already holds fresh cards)."""
    if not isinstance(action, Score):
        return old.cards
    res = old.score_preview(action.box)
    cards = list(old.cards)
    cards[old.current] = old.card.fill(action.box, res.score, res.awards)
    return tuple(cards)
