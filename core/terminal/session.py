"""The terminal game's turn loop: rolls the dice, asks the humans, lets the bots move, narrates.

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
from typing import Any

from attrs import evolve, frozen
from rich.text import Text

from ..errors import DicecupError, IllegalAction
from ..game.actions import Action, Keep, RuleAction, Score
from ..game.bots import Bot
from ..game.handle import Game
from ..game.state import GameState
from ..game.words import action_text, dice_digits
from ..locales import _, ngettext
from .commands import (
    Command,
    DoAction,
    InputProblem,
    KeepDice,
    Say,
    ScoreBox,
    ShowCard,
    find_player,
    help_text,
    parse_command,
)
from .screens import Advisor, Ranking, Screens
from .seats import HUMAN, Seat, parse_seats
from .view import View
from .wording import box_name, score_example, why_not_here

__all__ = [
    "HUMAN",
    "Seat",
    "parse_seats",
    "QuitGame",
    "EndOfInput",
    "Advisor",
    "Ranking",
    "Session",
    "checked_box",
    "checked_keep",
]


class QuitGame(Exception):
    """The human asked to stop."""


class EndOfInput(DicecupError):
    """Standard input ended before the game did."""


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


def checked_keep(cmd: KeepDice, st: GameState) -> Keep:
    """A typed keep as a legal move at `st`, or InputProblem saying why it cannot be made and what to do."""
    if st.rolls_left <= 0:
        raise InputProblem(
            _("no rolls left ({used} of {available} used): score a box, e.g. {example}").format(
                used=st.rolls_used, available=st.rolls_available, example=score_example(st)
            )
        )
    if len(cmd.dice) == len(st.dice):
        raise InputProblem(_("that keeps every die, so nothing would be rolled; score a box instead (s ...)"))
    if not st.may_reroll():
        status = "; ".join(st.turn_status()) or _("the rules allow no other roll now")
        raise InputProblem(_("no reroll now: {why}").format(why=status))
    try:
        st.keep(cmd.dice)
    except IllegalAction as exc:
        raise InputProblem(str(exc)) from None
    return Keep(cmd.dice)


def checked_box(cmd: ScoreBox, st: GameState) -> Score:
    """A typed box as a legal move at `st`, or InputProblem saying why it cannot take the dice now."""
    box = cmd.box
    if st.card.is_filled(box):
        raise InputProblem(
            _("{box} is already filled (with {points}); pick an open box").format(
                box=box_name(st, box), points=st.variant.written(box, st.card.scores[box])
            )
        )
    if box not in st.legal_boxes():
        raise InputProblem(why_not_here(st, box))
    return Score(box)


def _is_yes(answer: str) -> bool:
    """A yes: `y` or `yes`, or the spoken language's (`д`, `да`; `j`, `ja`; `s`, `sí`)."""
    said = answer.strip().lower()
    return said in ("y", "yes", _("y").lower(), _("yes").lower())


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
        pauses: bool = False,
    ) -> None:
        if len(seats) != len(state.players) or any(s.name != p for s, p in zip(seats, state.players, strict=True)):
            raise DicecupError("the seats do not match the game's players")
        self.game = Game(state)  # its undo stack; the dice come from `rng`, drawn here
        self.seats = tuple(seats)
        self.rng = rng
        self.view = view
        self.ask = ask or (lambda prompt: input(prompt))
        self.on_change = on_change
        self.screens = Screens(view, advisor, ranking, advisor is not None if hints is None else hints, coach)
        self.pace = pace  # seconds between bot moves, so a human can follow them
        self.sleep: Callable[[float], None] = time.sleep
        self.saved = saved  # saved after every action: quitting loses nothing
        self.narrate_bots = narrate_bots
        # Players at a terminal: wait for the next human before showing their dice (when two or more
        # share the keyboard), and for the players to have read a game's results before the next game.
        self.pauses = pauses
        self.handover = pauses and sum(s.is_human for s in self.seats) > 1
        self._last_human: int | None = None  # the seat of the last human who saw a decision screen
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
        note = self.screens.coach_note(shown, action)
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
            said = dice_digits(rolled, v.faces)
            self._log.append(said)
            if bot and self.narrate_bots:
                self._bot_says(
                    said if not self._open_line else " → " + said, first=not self._open_line, label=seat.label
                )
        elif isinstance(action, Keep):
            kept = dice_digits(action.dice, v.faces) if action.dice else _("nothing")
            if not bot:
                n = v.dice - len(action.dice)
                said = ngettext("You keep {kept} and roll {n} die.", "You keep {kept} and roll {n} dice.", n)
                self.view.say(said.format(kept=kept, n=n), "dim")
            elif self.narrate_bots:
                self._bot_says(" → " + (_("keep {kept}").format(kept=kept) if action.dice else _("reroll all")))
            self._log.append(_("keep {kept}").format(kept=kept))
        elif isinstance(action, RuleAction):
            said = action_text(action, v)
            if not bot:
                self.view.say(_("You {action}.").format(action=said), "bold")
            elif self.narrate_bots:
                self._bot_says(f" → {said}")
            self._log.append(said)
        elif isinstance(action, Score):
            res = old.score_preview(action.box)
            extra = "".join(f", {a.name or a.id} {a.points:+d}" for a in res.awards)
            name = box_name(old, action.box)
            if not bot:
                self.view.say(
                    _("You score {points} in {box}{awards}.").format(points=res.written, box=name, awards=extra), "bold"
                )
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
        """A game of the match is over: an instant win said, and (before the match's last) its results."""
        self._end_line()
        result = new.results[-1]
        v = self.view
        if result.instant_winner is not None:
            who = self.seats[result.instant_winner]
            if (self.narrate_bots or self.any_human) and not (not who.is_human and self.narrate_bots):
                v.say(f"{who.label}: " + " → ".join(self._log))
            v.instant_win(new, result.instant_winner, result.won_by or _("a winning roll"))
            self._log = []
        self._slots, self._kept = None, frozenset()
        if new.over:
            return
        if self.any_human or self.narrate_bots:
            v.round_over(new, _cards_after(old, action))
        if new.rounds > old.rounds:
            v.say(_("Every total is equal: the match is replayed with one more game."), "yellow")
        if self.pauses and self.any_human:
            self._wait(
                _("Game {round} of {rounds}: press Enter to start it ").format(round=new.round, rounds=new.rounds)
            )
            self._last_human = None  # that was the hand-over too

    # -- a human's decision -----------------------------------------------------------

    def _kept_now(self, st: GameState) -> frozenset[int]:
        """The places of the dice kept from the last roll, when the dice shown are the ones laid out."""
        return self._kept if tuple(st.dice) == self._slots else frozenset()

    def _hand_over(self, st: GameState) -> None:
        """Another human's turn after a human's: wait until they say they are at the keyboard."""
        last, self._last_human = self._last_human, st.current
        if not self.handover or last is None or last == st.current:
            return
        self._end_line()
        self._wait(_("{player}'s turn: press Enter ").format(player=st.player))

    def _wait(self, prompt: str) -> None:
        """A pause: the players press Enter to go on."""
        try:
            self.ask(prompt)
        except EOFError:
            raise EndOfInput("input ended before the game did") from None

    def _human(self, st: GameState) -> tuple[Action, GameState] | None:
        """The human's next action (and the position as shown), or None when `undo` changed the position."""
        # Dice as laid out on the table: positions typed by the player refer to this order.
        slots = self._slots if self._slots is not None and sorted(self._slots) == sorted(st.dice) else None
        if slots is None:
            slots, self._kept = tuple(sorted(st.dice)), frozenset()
        self._slots = slots
        st = evolve(st, dice=slots)
        self._end_line()
        self._hand_over(st)
        self.screens.decision(st, self._kept_now(st))
        while True:
            try:
                text = self.ask(self.screens.prompt(st))
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
                _("nothing to undo: you have made no move this game")
                if not st.history
                else _("nothing to undo: you have made no move this game since it was started or resumed here")
            )
        k = mine[-1]
        last = self._decisions[k]
        others = {self.seats[d.seat].name for d in self._decisions[k + 1 :] if d.seat != me}
        if others:
            raise InputProblem(
                _("{players} moved since your last move; undo takes back only your own moves").format(
                    players=", ".join(sorted(others))
                )
            )
        if isinstance(last.action, Keep):
            raise InputProblem(
                _(
                    "a keep cannot be taken back once its dice are rolled: that would be a free reroll "
                    "(undo takes back a score or an announcement)"
                )
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
        what = action_text(last.action, back.variant)
        if isinstance(last.action, Score):
            what = _("your {points} in {box}").format(
                points=back.score_preview(last.action.box).written, box=box_name(back, last.action.box)
            )
        said = (
            _(
                "Undone: {move}. The dice are as they were (the bots' turns since then will be played again as they were)."
            )
            if bots
            else _("Undone: {move}. The dice are as they were.")
        )
        self.view.say(said.format(move=what), "yellow")
        if self.on_change is not None:
            self.on_change(back)

    def _check(self, cmd: Command, st: GameState) -> Action | None:
        """Turn a command into a legal action, or explain why it cannot be done (InputProblem)."""
        if isinstance(cmd, ShowCard):
            self.screens.card(st, cmd.player)
            return None
        if isinstance(cmd, Say):
            if cmd.what == "help":
                self.view.say(help_text(st.variant, self.verbs, self.view.width, cmd.topic))
            elif cmd.what == "hint":
                self.screens.hint(st)
            elif cmd.what == "quit":
                if self.saved or self._ask_yes(_("Quit? This game is not saved and cannot be resumed. [y/N] "), True):
                    raise QuitGame()
                self.view.say(_("Not quit; the game goes on."), "dim")
            return None
        if isinstance(cmd, DoAction):
            return cmd.action
        if isinstance(cmd, KeepDice):
            keep = checked_keep(cmd, st)
            if self._no_reroll == len(self.game.history):
                raise InputProblem(
                    _("after an undo you cannot reroll here: the dice that would come have been seen; score a box")
                )
            return keep
        box = checked_box(cmd, st).box
        v = st.variant
        res = st.score_preview(box)
        if v.combination(v.box(box), st.roll_now) is None and res.points <= 0:  # type: ignore[arg-type]
            # Short enough for an 80-column line with the longest box names (Kismet's, a column's).
            dice = " ".join(map(str, st.dice))
            if len(v.columns) > 1:
                prompt = _("{dice} is not a {box}. Scratch it in {column} for {points}? [y/N] ").format(
                    dice=dice, box=v.box(box).name, column=v.column(v.box(box).column).name, points=res.points
                )
            else:
                prompt = _("{dice} is not a {box}. Scratch it for {points}? [y/N] ").format(
                    dice=dice, box=v.box(box).name, points=res.points
                )
            if not self._ask_yes(prompt):
                self.view.say(_("Not scored; choose again."), "dim")
                return None
        return Score(box)

    def _ask_yes(self, prompt: str, at_end: bool | None = None) -> bool:
        """A yes/no question; `at_end` is the answer when input has ended (else EndOfInput)."""
        try:
            return _is_yes(self.ask(prompt))
        except EOFError:
            if at_end is not None:
                return at_end
            raise EndOfInput("input ended before the game did") from None

    def rematch(self) -> bool:
        """After a finished game: whether the humans want another with the same players (no when input
        ended); `c` (or `c NAME`) shows the final cards first, one screen at a time."""
        if not self.any_human:
            return False
        st = self.state
        while True:
            try:
                text = self.ask(_("Rematch with the same players and new dice? [y/N; c: the cards] ")).strip()
            except EOFError:
                return False
            head, _sep, rest = text.lower().partition(" ")
            if head not in ("c", "card", "cards"):
                return _is_yes(head)
            first = next(i for i, seat in enumerate(self.seats) if seat.is_human)  # when one card: a human's
            try:
                self.screens.card(st, find_player(rest, st.players) if rest.strip() else None, first)
            except InputProblem as exc:
                self.view.problem(str(exc))


def _cards_after(old: GameState, action: Action | None) -> tuple:
    """The cards as they stood when a round ended (the next state already holds fresh cards)."""
    if not isinstance(action, Score):
        return old.cards
    res = old.score_preview(action.box)
    cards = list(old.cards)
    cards[old.current] = old.card.fill(action.box, res.score, res.awards)
    return tuple(cards)
