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
from collections.abc import Callable, Sequence

from attrs import evolve, frozen

from ..errors import DicecupError, IllegalAction
from ..game.actions import Action, Keep, RuleAction, Score
from ..game.bots import Bot
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
from .view import View

__all__ = [
    "HUMAN",
    "Seat",
    "parse_seats",
    "QuitGame",
    "EndOfInput",
    "Advisor",
    "Session",
]

HUMAN = "human"

#: `advise(state) -> [(action, expected final score), ...]`, e.g. from the solver (the CLI builds one).
Advisor = Callable[[GameState], Sequence[tuple[Action, float]]]


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


def parse_seats(specs: Sequence[str] | None, bots: Sequence[str]) -> tuple[Seat, ...]:
    """Read `--player` values: `NAME` (a human), `bot:KIND` or `bot:KIND:NAME` (a bot of a kind in `bots`)."""
    if not specs:
        return (Seat("you"),)
    seats: list[Seat] = []
    used: set[str] = set()
    for raw in specs:
        text = raw.strip()
        if text.lower().startswith("bot:"):
            kind, _, name = text[4:].partition(":")
            kind = kind.strip().lower()
            if kind not in bots:
                raise DicecupError(
                    f"--player {raw!r}: no bot {kind!r}; bots: {', '.join('bot:' + b for b in bots)} "
                    "(a human player is just a name)"
                )
            name = name.strip()
            if not name:  # unnamed bots of one kind are numbered: greedy, greedy2, ...
                name, n = kind, 1
                while name in used:
                    n += 1
                    name = f"{kind}{n}"
            seat = Seat(name, kind)
        else:
            if not text:
                raise DicecupError("--player needs a name (or bot:random / bot:greedy)")
            seat = Seat(text)
        if seat.name in used:
            raise DicecupError(f"two players are called {seat.name!r}; give each --player a different name")
        used.add(seat.name)
        seats.append(seat)
    return tuple(seats)


# ---------------------------------------------------------------------------- the loop


class Session:
    """Runs a game to its end: rolls the dice, asks humans, lets bots move, narrates."""

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
    ) -> None:
        if len(seats) != len(state.players) or any(s.name != p for s, p in zip(seats, state.players, strict=True)):
            raise DicecupError("the seats do not match the game's players")
        self.state = state
        self.seats = tuple(seats)
        self.rng = rng
        self.view = view
        self.ask = ask or (lambda prompt: input(prompt))
        self.on_change = on_change
        self.advisor = advisor
        self.narrate_bots = narrate_bots
        self.verbs = dict(verbs or {})  # action verbs the variant's rules declare -> their help
        if bots is None:
            if make_bot is None and any(not s.is_human for s in self.seats):
                raise DicecupError("bots need a bot factory (engine.make_bot)")
            bots = {i: make_bot(s.kind, rng) for i, s in enumerate(self.seats) if not s.is_human}  # type: ignore[misc]
        self.bots = bots
        self._log: list[str] = []
        self.any_human = any(s.is_human for s in self.seats)

    # -- driving -------------------------------------------------------------------

    def run(self) -> GameState:
        """Play until the match is over; raises QuitGame or EndOfInput when a human stops."""
        while not self.state.over:
            self.step()
        return self.state

    def step(self) -> None:
        """One transition: a roll at a chance node, else the current player's decision."""
        st = self.state
        if st.is_chance:
            # Draw the dice here and hand them to the engine, so the narration knows them
            # even when the roll ends the game (an instant win clears the table).
            n = st.variant.dice - len(st.held)  # type: ignore[arg-type]
            drawn = tuple(self.rng.randint(1, st.variant.faces) for _ in range(n))
            self._advance(st.roll(dice=drawn), None, rolled=tuple(sorted(st.held + drawn)))  # type: ignore[operator]
            return
        i = st.current
        action = self.bots[i].choose(st) if i in self.bots else self._human(st)
        self._advance(st.apply(action), action)

    def _advance(self, new: GameState, action: Action | None, rolled: tuple[int, ...] = ()) -> None:
        old = self.state
        self.state = new
        seat = self.seats[old.current]
        v = old.variant
        if action is None:  # a roll
            self._log.append(_compact(rolled, v.faces))
        elif isinstance(action, Keep):
            kept = _compact(action.dice, v.faces) if action.dice else "nothing"
            if seat.is_human:
                n = v.dice - len(action.dice)
                self.view.say(f"{seat.name} keeps {kept} and rolls {n} {'die' if n == 1 else 'dice'}.", "dim")
            self._log.append(f"keep {kept}")
        elif isinstance(action, RuleAction):
            said = _action_text(action, v)
            if seat.is_human:
                self.view.say(f"{seat.name}: {said}.", "bold")
            self._log.append(said)
        elif isinstance(action, Score):
            res = old.score_preview(action.box)
            extra = "".join(f", {a.name or a.id} {a.points:+d}" for a in res.awards)
            name = _box_name(old, action.box)
            if seat.is_human:
                self.view.say(f"{seat.name} scores {res.written} in {name}{extra}.", "bold")
            elif self.narrate_bots:
                self.view.say(f"{seat.label}: " + " → ".join([*self._log, f"{name} {res.written}{extra}"]))
            self._log = []
        if self.on_change is not None:
            self.on_change(new)
        if len(new.results) > len(old.results):
            self._round_over(old, new, action)

    def _round_over(self, old: GameState, new: GameState, action: Action | None) -> None:
        result = new.results[-1]
        k = len(new.results)
        v = self.view
        if result.instant_winner is not None:
            who = self.seats[result.instant_winner]
            if self.narrate_bots or self.any_human:
                v.say(f"{who.label}: " + " → ".join(self._log))
            v.instant_win(new, result.instant_winner, result.won_by or "a winning roll")
            self._log = []
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
        head = f"{st.player}: turn {st.turn} of {len(v.boxes)} ({left} {'box' if left == 1 else 'boxes'} to go), "
        head += f"roll {st.rolls_used} of {st.rolls_available}"
        if v.carry_over:
            banked = st.banked[st.current]
            head += f" ({v.rolls} + {banked} banked)" if banked else " (none banked)"
        if st.rounds > 1:
            head = f"Round {st.round} of {st.rounds} · " + head
        return head

    def show(self, st: GameState) -> None:
        """The decision screen: whose turn, the card with what each open box scores now, the rules' notes, the dice."""
        v = self.view
        v.heading(self.heading(st))
        v.console.print(v.scorecard(st))
        v.notes(v.card_notes(st) + v.progress(st), "dim")
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
            v.say(
                f"Unused rolls are banked: scoring now keeps {n} {'roll' if n == 1 else 'rolls'} for later turns.",
                "dim",
            )
        v.console.print(v.dice(sorted(st.dice), st.variant))
        if self.advisor is not None:
            self._hint(st)

    def _hint(self, st: GameState) -> None:
        if self.advisor is None:
            self.view.problem("hints are off; start the game with --hints")
            return
        ranked = sorted(self.advisor(st), key=lambda av: -av[1])
        if not ranked:
            return
        best = ranked[0][1]
        parts = [
            f"{_action_text(a)} ({val:.1f})" if i == 0 else f"{_action_text(a)} -{best - val:.1f}"
            for i, (a, val) in enumerate(ranked[:5])
        ]
        self.view.say("hint: best " + parts[0] + ("; then " + ", ".join(parts[1:]) if parts[1:] else ""), "yellow")

    def _human(self, st: GameState) -> Action:
        # Show dice sorted: positions typed by the player refer to this order.
        st = evolve(st, dice=tuple(sorted(st.dice)))
        self.show(st)
        while True:
            try:
                text = self.ask(self._prompt(st))
            except EOFError:
                raise EndOfInput("input ended before the game did") from None
            try:
                cmd = parse_command(text, st, self.verbs)
                action = self._check(cmd, st)
            except InputProblem as exc:
                self.view.problem(str(exc))
                continue
            if action is not None:
                return action

    def _check(self, cmd: Command, st: GameState) -> Action | None:
        """Turn a command into a legal action, or explain why it cannot be done (InputProblem)."""
        if isinstance(cmd, Say):
            if cmd.what == "help":
                self.view.say(help_text(st.variant, self.verbs, self.view.console.width))
            elif cmd.what == "card":
                self.show(st)
            elif cmd.what == "hint":
                self._hint(st)
            elif cmd.what == "quit":
                raise QuitGame()
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
            dice = " ".join(map(str, st.dice))
            prompt = f"{dice} is not a {v.box(box).name}: it scores {res.points} there. Scratch {box}? [y/N] "
            if not self._ask_yes(prompt):
                self.view.say("Not scored; choose again.", "dim")
                return None
        return Score(box)

    def _ask_yes(self, prompt: str) -> bool:
        try:
            return self.ask(prompt).strip().lower() in ("y", "yes")
        except EOFError:
            raise EndOfInput("input ended before the game did") from None


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
