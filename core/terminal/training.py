"""The trainer at the terminal: a position from real play, the player's move, its grade, and a running score.

Each drill shows a decision as the game shows it; the player keeps or scores as in a game, and hears what the
move cost in expected final points against the best (the review's loss), the best few options, and the
running accuracy and points lost. Every graded move is added to the player's history (`TrainingLog`), kept
across sessions in the state folder.
"""

from __future__ import annotations

import datetime
import json
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from attrs import frozen

from ..fileio import FileError, MissingFile, read_text, write_atomic
from ..game.actions import Action, Score
from ..game.state import GameState
from ..game.words import action_text
from ..locales import _, ngettext
from ..solver.explain import explain_options
from ..solver.review import Decision
from ..solver.solve import Solution
from ..solver.training import Drill, Drills, grade
from .commands import DoAction, InputProblem, KeepDice, Say, ScoreBox, ShowCard, help_text, parse_command
from .screens import Screens
from .session import EndOfInput, checked_box, checked_keep
from .view import View

__all__ = ["HISTORY_KEPT", "Tally", "TrainingLog", "Trainer", "history_path"]

#: The most graded moves a history keeps (the oldest go first).
HISTORY_KEPT = 20_000
#: The largest history file read (a longer one is not ours: it is set aside).
HISTORY_BYTES = 8 * 1024 * 1024
#: Options listed after a grade.
SHOWN = 3


def history_path(state_folder: Path) -> Path:
    """Where the trainer's history lives in the state folder."""
    return state_folder / "training.json"


@frozen
class Tally:
    """A run of graded moves: how many, how many were best, the points they gave away, and the same losses
    weighted by their drills' importance (`weighted`), whose mean estimates a move's loss in real play, where
    hard positions are not favoured."""

    moves: int = 0
    best: int = 0
    lost: float = 0.0
    weighted: float = 0.0

    def add(self, loss: float, best: bool, importance: float) -> Tally:
        return Tally(self.moves + 1, self.best + best, self.lost + loss, self.weighted + importance * loss)

    def line(self, per_game: float) -> str:
        """`7 of 10 moves best (70%); 0.42 points lost a move, about 5.5 a game in real play`."""
        if not self.moves:
            return _("no move graded yet")
        share = round(100 * self.best / self.moves)
        of = ngettext("{best} of {n} move best ({share}%)", "{best} of {n} moves best ({share}%)", self.moves)
        real = self.weighted / self.moves  # (unbiased: a drill's importance is its inverse odds of a draw)
        lost = _("{a_move} points lost a move, about {a_game} a game in real play").format(
            a_move=f"{self.lost / self.moves:.2f}", a_game=f"{real * per_game:.1f}"
        )
        return f"{of.format(best=self.best, n=self.moves, share=share)}; {lost}"


class TrainingLog:
    """The graded moves of every session, by variant: one JSON file, replaced whole after each move, so a
    move is never half written. A file that is not a history (hand-edited, cut short) is set aside as
    `NAME.bad` with a warning, and a new history starts: nothing is lost."""

    def __init__(self, path: Path, warn: Callable[[str], None]) -> None:
        self.path = path
        self.moves: list[dict[str, Any]] = []
        try:
            text = read_text(path, limit=HISTORY_BYTES, what="training history")
        except MissingFile:
            return
        except FileError as exc:
            if path.exists():
                warn(_("{problem}; the trainer starts a new history").format(problem=exc))
                self._set_aside()
            return
        try:
            self.moves = _moves(json.loads(text))
        except (ValueError, TypeError, KeyError) as exc:
            warn(
                _("{path} is not a training history ({problem}): set aside as {bad}; a new history starts").format(
                    path=path, problem=exc, bad=path.name + ".bad"
                )
            )
            self._set_aside()

    def _set_aside(self) -> None:
        try:
            os.replace(self.path, self.path.with_name(self.path.name + ".bad"))
        except OSError:
            pass

    def add(self, rules: str, variant: str, d: Decision, drill: Drill, daily: bool, day: datetime.date) -> None:
        """Keep one graded move and write the history."""
        self.moves.append(
            {"variant": variant, "rules": rules, "day": day.isoformat(), "loss": d.loss, "best": d.optimal,
             "importance": drill.importance, "daily": daily}
        )  # fmt: skip
        del self.moves[:-HISTORY_KEPT]
        self.path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(self.path, json.dumps({"version": 1, "moves": self.moves}, separators=(",", ":")))

    def score(self, rules: str) -> Tally:
        """Every kept move of the rules with fingerprint `rules`."""
        s = Tally()
        for m in self.moves:
            if m["rules"] == rules:
                s = s.add(float(m["loss"]), m["best"], float(m["importance"]))
        return s

    def did_daily(self, rules: str, day: datetime.date) -> bool:
        return any(m["daily"] and m["rules"] == rules and m["day"] == day.isoformat() for m in self.moves)


def _moves(data: Any) -> list[dict[str, Any]]:
    """The history's moves, each checked for its fields' types (a KeyError, TypeError or ValueError else)."""
    if not isinstance(data, Mapping) or data.get("version") != 1 or not isinstance(data.get("moves"), list):
        raise ValueError("no version 1 list of moves")
    number: tuple[type, ...] = (float, int)
    kinds: dict[str, type | tuple[type, ...]] = {
        "variant": str, "rules": str, "day": str, "loss": number, "best": bool, "importance": number, "daily": bool,
    }  # fmt: skip
    for i, m in enumerate(data["moves"]):
        if not isinstance(m, Mapping) or any(not isinstance(m[k], t) for k, t in kinds.items()):
            raise ValueError(f"move {i} is not a graded move")
        if not (0 <= m["loss"] < float("inf") and 0 < m["importance"] < float("inf")):
            raise ValueError(f"move {i} has a loss of {m['loss']} and an importance of {m['importance']}")
        datetime.date.fromisoformat(m["day"])
    return [dict(m) for m in data["moves"][-HISTORY_KEPT:]]


class Trainer:
    """Drills at a terminal: `run` asks for moves, grades them, and keeps them in `log` (None: no history)."""

    def __init__(
        self,
        view: View,
        solution: Solution,
        drills: Drills,
        ask: Callable[[str], str],
        log: TrainingLog | None = None,
        verbs: Mapping[str, str] | None = None,
        today: datetime.date | None = None,
    ) -> None:
        self.view = view
        self.screens = Screens(view)
        self.solution = solution
        self.drills = drills
        self.ask = ask
        self.log = log
        self.verbs = dict(verbs or {})  # the rules' action verbs -> their help
        self.today = today or datetime.date.today()
        self.session = Tally()

    @property
    def rules(self) -> str:
        return self.solution.variant.fingerprint

    def run(self, count: int, daily: Drill | None = None) -> Tally:
        """Up to `count` drills (after `daily`'s puzzle, when given), until they are done or the player quits."""
        drills = [daily] if daily is not None else []
        for i in range(count + len(drills)):
            drill = drills[i] if i < len(drills) else self.drills.draw()
            if daily is not None and i == 0:
                self.view.heading(_("Today's puzzle ({day})").format(day=self.today.isoformat()))
            else:
                self.view.heading(_("Drill {n} of {count}").format(n=i + 1 - len(drills), count=count))
            d = self.drill(drill)
            if d is None:
                break
            self.session = self.session.add(d.loss, d.optimal, drill.importance)
            if self.log is not None:
                self.log.add(self.rules, self.solution.variant.id, d, drill, daily is not None and i == 0, self.today)
            self.view.say(_("this session: {line}").format(line=self.session.line(self.drills.per_game)), "dim")
        return self.session

    def drill(self, drill: Drill) -> Decision | None:
        """One drill: the position, the player's move, its grade shown; None when the player quits."""
        st = drill.state
        self.screens.decision(st, frozenset())
        move = self._move(st)
        if move is None:
            return None
        d = grade(self.solution, st, move)
        for line in self.grade_lines(st, drill, d):
            self.view.say(line, "green" if d.optimal else "yellow")
        return d

    def grade_lines(self, st: GameState, drill: Drill, d: Decision) -> list[str]:
        """What the move cost, and the best few options with what each gives up."""
        name = lambda a: action_text(a, st.variant)  # noqa: E731
        if d.optimal:
            head = _("Best move: {move} (expected final score {value}).").format(
                move=name(d.chosen.action), value=f"{d.chosen.value:.2f}"
            )
        else:
            head = _("{move} gives up {loss} points; best was {best} (expected {value}).").format(
                move=name(d.chosen.action), loss=f"{d.loss:.2f}", best=name(d.best.action), value=f"{d.best.value:.2f}"
            )
        top = [
            f"{name(o.action)} ({o.value:.2f})" if k == 0 else f"{name(o.action)} -{drill.best.value - o.value:.2f}"
            for k, o in enumerate(drill.options[:SHOWN])
        ]
        why = explain_options(
            st.variant, st.card, st.dice, st.rolls_left, list(drill.options), self.solution.graph, st.first_roll
        )
        return [head, _("the best options: {moves}").format(moves=", ".join(top)), why.text]

    def _move(self, st: GameState) -> Action | None:
        """The player's keep or score, asked until it is legal; None on quit."""
        while True:
            try:
                text = self.ask(self.screens.prompt(st))
            except EOFError:
                raise EndOfInput("input ended before the drill did") from None
            try:
                cmd = parse_command(text, st, self.verbs)
                if isinstance(cmd, KeepDice):
                    return checked_keep(cmd, st)
                if isinstance(cmd, ScoreBox):
                    return Score(checked_box(cmd, st).box)
                if cmd == Say("quit"):
                    return None
                self._aside(cmd, st)
            except InputProblem as exc:
                self.view.problem(str(exc))

    def _aside(self, cmd: Any, st: GameState) -> None:
        """A command that is not a move: the card, help; a hint or an undo has no place in a drill."""
        if isinstance(cmd, ShowCard):
            self.screens.card(st, cmd.player)
        elif isinstance(cmd, DoAction):
            raise InputProblem(_("the trainer drills keeps and scores; keep dice or score a box"))
        elif cmd.what == "help":
            self.view.say(help_text(st.variant, self.verbs, self.view.width, cmd.topic))
        elif cmd.what == "hint":
            raise InputProblem(_("no hints in a drill: choose, and the grade shows the best move"))
        else:
            raise InputProblem(_("each drill is one move: there is nothing to undo"))
