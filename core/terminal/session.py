"""The terminal game: seats (humans and bots), human commands, and the turn loop.

Input and output are injected (`ask(prompt) -> str` and a `View`), so the same
loop runs in a terminal, under a test runner and in unit tests. Every state
change is reported to `on_change` (the CLI saves the game there). Bots come from
`bots.make_bot(kind)` and hints from an advisor passed in (the CLI builds one
from the solver), so neither needs changes here.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Sequence

from attrs import evolve, frozen

from ..game.bots import BOTS, Bot, make_bot
from ..errors import DicecupError, IllegalAction
from ..game.actions import Action, Keep, Score
from ..game.state import GameState
from ..language.model import Variant
from .view import View

__all__ = [
    "HUMAN",
    "Seat",
    "parse_seats",
    "KeepDice",
    "ScoreBox",
    "Say",
    "InputProblem",
    "QuitGame",
    "EndOfInput",
    "parse_command",
    "resolve_box",
    "Advisor",
    "Session",
    "HELP",
]

HUMAN = "human"


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


def parse_seats(specs: Sequence[str] | None) -> tuple[Seat, ...]:
    """Read `--player` values: `NAME` (a human), `bot:KIND` or `bot:KIND:NAME` (a bot)."""
    if not specs:
        return (Seat("you"),)
    seats: list[Seat] = []
    used: set[str] = set()
    for raw in specs:
        text = raw.strip()
        if text.lower().startswith("bot:"):
            kind, _, name = text[4:].partition(":")
            kind = kind.strip().lower()
            if kind not in BOTS:
                raise DicecupError(
                    f"--player {raw!r}: no bot {kind!r}; bots: {', '.join('bot:' + b for b in sorted(BOTS))} "
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


# ---------------------------------------------------------------------------- commands


@frozen
class KeepDice:
    """Keep these dice (face values) and reroll the others."""

    dice: tuple[int, ...]


@frozen
class ScoreBox:
    """Score the dice in this box."""

    box: str


@frozen
class Say:
    """A command that changes nothing: help, card, hint or quit."""

    what: str


Command = KeepDice | ScoreBox | Say


class InputProblem(DicecupError):
    """Input the prompt cannot use; the message says why and the prompt asks again."""


class QuitGame(Exception):
    """The human asked to stop."""


class EndOfInput(DicecupError):
    """Standard input ended before the game did."""


HELP = """\
Commands (dice positions are the numbers under the dice, #1 at the left):
  k 1 3 4       keep the dice at positions 1, 3 and 4, reroll the rest (or k134)
  keep 6 6      keep dice by their faces: here two sixes (or keep 66)
  r             reroll every die
  r 2 5         reroll only the dice at positions 2 and 5
  s 9           score box number 9 of the card
  s full_house  score a box by id; the start of an id or name also works (s full)
  c             show the scorecard again
  hint          the advisor's best move (games started with --hints)
  q             quit (a game played with --save FILE can be resumed later)
  ?             this help"""

_SAY = {"?": "help", "h": "help", "help": "help", "c": "card", "card": "card", "q": "quit", "quit": "quit",
        "exit": "quit", "hint": "hint", "hints": "hint"}


def _numbers(args: list[str], what: str) -> list[int]:
    """`1 3 4`, `134` or `1,3,4` as numbers (single digits may run together)."""
    out: list[int] = []
    for tok in args:
        for part in tok.replace(",", " ").split():
            if not part.isdigit():
                raise InputProblem(f"{part!r} is not a {what}; write numbers, e.g. k 1 3 or keep 6 6")
            out.extend(int(c) for c in part) if len(part) > 1 else out.append(int(part))
    return out


def _positions(args: list[str], dice: Sequence[int]) -> list[int]:
    picks = _numbers(args, "die position")
    n = len(dice)
    for p in picks:
        if not 1 <= p <= n:
            raise InputProblem(f"there is no die at position {p}: the dice are numbered 1 to {n}")
    dup = [p for p, c in Counter(picks).items() if c > 1]
    if dup:
        raise InputProblem(f"position {dup[0]} is given twice; each die can be picked once")
    return picks


def resolve_box(token: str, variant: Variant) -> str:
    """A box by number (as in the card), id, name, or unique start of an id or name."""
    t = token.strip().lower().replace(" ", "_")
    ids = variant.box_ids
    if t.isdigit():
        k = int(t)
        if 1 <= k <= len(ids):
            return ids[k - 1]
        raise InputProblem(f"there is no box {k}: boxes are numbered 1 to {len(ids)}")
    names = {b.name.lower().replace(" ", "_"): b.id for b in variant.boxes}
    if t in ids:
        return t
    if t in names:
        return names[t]
    found = sorted({b for b in ids if b.startswith(t)} | {i for n, i in names.items() if n.startswith(t)})
    if len(found) == 1:
        return found[0]
    if found:
        raise InputProblem(f"{token!r} could be {', '.join(found)}; type more of the name")
    raise InputProblem(f"no box {token!r}; the boxes are {', '.join(ids)} (or their numbers 1 to {len(ids)})")


def parse_command(text: str, state: GameState) -> Command:
    """Read one line typed at the prompt; InputProblem says what is wrong and how to write it."""
    words = text.strip().split()
    if not words:
        raise InputProblem("type a command: k 1 3 to keep dice, s 9 to score, ? for help")
    head, args = words[0].lower(), words[1:]
    dice = state.dice
    if head in _SAY and not args:
        return Say(_SAY[head])
    if head[0] == "k" and head[1:].isdigit() and head != "keep":  # k134
        head, args = "k", [head[1:]] + args
    if head == "k":
        if not args:
            raise InputProblem("say which dice to keep, e.g. k 1 3 (positions), or r to reroll them all")
        return KeepDice(tuple(sorted(dice[p - 1] for p in _positions(args, dice))))
    if head == "keep":
        if not args:
            raise InputProblem("say which faces to keep, e.g. keep 6 6, or r to reroll every die")
        want = Counter(_numbers(args, "face"))
        have = Counter(dice)
        for face, n in sorted(want.items()):
            if have[face] < n:
                showing = " ".join(map(str, sorted(dice)))
                count = "no" if not have[face] else f"only {have[face]}"
                raise InputProblem(f"you have {count} {face}{'s' if have[face] != 1 else ''} (the dice are {showing})")
        return KeepDice(tuple(sorted(want.elements())))
    if head in ("r", "roll", "reroll"):
        if not args:
            return KeepDice(())
        drop = set(_positions(args, dice))
        return KeepDice(tuple(sorted(d for i, d in enumerate(dice, 1) if i not in drop)))
    if head in ("s", "score"):
        if not args:
            raise InputProblem("say which box to score, e.g. s 9 or s full_house")
        return ScoreBox(resolve_box(" ".join(args), state.variant))
    if head.isdigit():
        raise InputProblem(f"to score box {head} type s {head}; to keep dice type k followed by their positions")
    # A bare box id or full name scores it (no abbreviations here: a stray `y` must not score).
    wanted = text.strip().lower().replace(" ", "_")
    for box in state.variant.boxes:
        if wanted in (box.id, box.name.lower().replace(" ", "_")):
            return ScoreBox(box.id)
    raise InputProblem(f"I don't understand {text.strip()!r}; type ? for the commands")


# ---------------------------------------------------------------------------- advisor (hints)

#: `advise(state) -> [(action, expected final score), ...]`, e.g. from the solver (the CLI builds one).
Advisor = Callable[[GameState], Sequence[tuple[Action, float]]]


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
    ) -> None:
        if len(seats) != len(state.players) or any(s.name != p for s, p in zip(seats, state.players)):
            raise DicecupError("the seats do not match the game's players")
        self.state = state
        self.seats = tuple(seats)
        self.rng = rng
        self.view = view
        self.ask = ask or (lambda prompt: input(prompt))
        self.on_change = on_change
        self.advisor = advisor
        self.narrate_bots = narrate_bots
        self.bots = bots if bots is not None else {
            i: make_bot(s.kind, rng) for i, s in enumerate(self.seats) if not s.is_human
        }
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
            n = st.variant.dice - len(st.held)
            drawn = tuple(self.rng.randint(1, st.variant.faces) for _ in range(n))
            self._advance(st.roll(dice=drawn), None, rolled=tuple(sorted(st.held + drawn)))
            return
        i = st.current
        if i in self.bots:
            action = self.bots[i].choose(st)
        else:
            action = self._human(st)
        self._advance(st.apply(action), action)

    def _advance(self, new: GameState, action: Action | None, rolled: tuple[int, ...] = ()) -> None:
        old = self.state
        self.state = new
        seat = self.seats[old.current]
        if action is None:  # a roll
            self._log.append(_compact(rolled, old.variant.faces))
        elif isinstance(action, Keep):
            kept = _compact(action.dice, old.variant.faces) if action.dice else "nothing"
            if seat.is_human:
                n = old.variant.dice - len(action.dice)
                self.view.say(f"{seat.name} keeps {kept} and rolls {n} {'die' if n == 1 else 'dice'}.", "dim")
            self._log.append(f"keep {kept}")
        else:
            res = old.score_preview(action.box)
            extra = "".join(f", {a.name or a.id} {a.points:+d}" for a in res.awards)
            what = f"{old.variant.box(action.box).name} {res.score}{extra}"
            if seat.is_human:
                self.view.say(f"{seat.name} scores {res.score} in {old.variant.box(action.box).name}{extra}.", "bold")
            elif self.narrate_bots:
                self.view.say(f"{seat.label}: " + " → ".join(self._log + [what]))
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
            v.instant_win(new, result.instant_winner, _instant_phrase(old))
            self._log = []
        if new.over:
            return
        if self.any_human:
            cards = _cards_after(old, action)
            shown = evolve(old, cards=cards, over=True, results=new.results, dice=(), held=None)
            v.console.print(v.scorecard(shown, preview=False, final=True, title=f"Round {k} finished"))
            v.console.print(v.round_table(new))
        elif self.narrate_bots:
            totals = ", ".join(f"{n} {t}" for n, t in zip(new.players, result.totals))
            v.say(f"Round {k} of {new.rounds}: {totals}", "bold")
        if new.rounds > old.rounds:
            v.say("Every total is equal: the match is replayed with one more round.", "yellow")

    # -- a human's decision -----------------------------------------------------------

    def _prompt(self, st: GameState) -> str:
        if st.rolls_left <= 0:
            return f"{st.player}, no rolls left: score a box (s 9 or s full_house) > "
        return f"{st.player}, roll {st.rolls_used} of {st.rolls_available} (k 1 3 keep, r reroll all, s 9 score, ? help) > "

    def show(self, st: GameState) -> None:
        """The decision screen: whose turn, the card with what each open box scores now, the dice."""
        v = self.view
        turn = len(st.card.scores) + 1
        head = f"{st.player}: turn {turn} of {len(st.variant.boxes)}, roll {st.rolls_used} of {st.rolls_available}"
        if st.rounds > 1:
            head = f"Round {st.round} of {st.rounds} · " + head
        v.heading(head)
        v.console.print(v.scorecard(st))
        for line in v.progress(st):
            v.say(line, "dim")
        v.console.print(v.dice(sorted(st.dice), st.variant.faces))
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
        parts = [f"{_action_text(a, st)} ({val:.1f})" if i == 0 else f"{_action_text(a, st)} -{best - val:.1f}"
                 for i, (a, val) in enumerate(ranked[:5])]
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
                cmd = parse_command(text, st)
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
                self.view.say(HELP)
            elif cmd.what == "card":
                self.show(st)
            elif cmd.what == "hint":
                self._hint(st)
            elif cmd.what == "quit":
                raise QuitGame()
            return None
        if isinstance(cmd, KeepDice):
            if st.rolls_left <= 0:
                raise InputProblem(f"no rolls left ({st.rolls_used} of {st.rolls_available} used): score a box, e.g. s 9")
            if len(cmd.dice) == len(st.dice):
                raise InputProblem("that keeps every die, so nothing would be rolled; score a box instead (s ...)")
            try:
                st.keep(cmd.dice)
            except IllegalAction as exc:
                raise InputProblem(str(exc)) from None
            return Keep(cmd.dice)
        box = cmd.box
        if st.card.is_filled(box):
            raise InputProblem(f"{box} is already filled (with {st.card.value(box)}); pick an open box")
        legal = st.legal_boxes()
        if box not in legal:
            raise InputProblem(_why_not(st, box, legal))
        res = st.score_preview(box)
        v = st.variant
        if v.combination(v.box(box), st.roll_now) is None and res.points <= 0:
            answer = self._ask_yes(f"{' '.join(map(str, st.dice))} is not a {v.box(box).name}: it scores {res.points} there. Scratch {box}? [y/N] ")
            if not answer:
                self.view.say("Not scored; choose again.", "dim")
                return None
        return Score(box)

    def _ask_yes(self, prompt: str) -> bool:
        try:
            return self.ask(prompt).strip().lower() in ("y", "yes")
        except EOFError:
            raise EndOfInput("input ended before the game did") from None


def _compact(dice: Sequence[int], faces: int) -> str:
    """Dice as digits for one-line narration: `11235` (comma-separated above nine faces)."""
    return ("" if faces < 10 else ",").join(map(str, dice))


def _why_not(st: GameState, box: str, legal: Sequence[str]) -> str:
    v = st.variant
    if "stage_order" in v.rules:
        stage = v.box(box).stage
        first = min(v.box(b).stage for b in v.open_boxes(st.card))
        if stage > first:
            return f"{box} is a stage-{stage} box: fill every stage-{first} box first (open now: {', '.join(legal)})"
    return f"{box} may not be used with these dice now; you may score: {', '.join(legal)}"


def _action_text(action: Action, st: GameState) -> str:
    if isinstance(action, Score):
        return f"score {action.box}"
    if isinstance(action, Keep):
        return "reroll all" if not action.dice else "keep " + "".join(map(str, action.dice))
    return str(action)


def _instant_phrase(old: GameState) -> str:
    rule = old.variant.rule("instant_win")
    name = old.variant.box(rule["pattern_of"]).name if rule else "a winning roll"
    return f"a {name}" + (" on the first roll" if rule and rule.get("first_roll") else "")


def _cards_after(old: GameState, action: Action | None) -> tuple:
    """The cards as they stood when a round ended (the next state already holds fresh cards)."""
    if not isinstance(action, Score):
        return old.cards
    res = old.score_preview(action.box)
    cards = list(old.cards)
    cards[old.current] = old.card.fill(action.box, res.score, res.awards)
    return tuple(cards)
