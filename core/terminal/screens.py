"""What a human sees at a decision: whose turn, the card, the rules' notes, the dice, the hints, and a prompt
saying what can be typed; `c`'s whole card; each within one 80 x 24 screen. The coach's verdict too."""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from typing import Any, NamedTuple

from rich.text import Text

from ..game.actions import Action, Keep, Score
from ..game.state import GameState
from ..game.words import action_text
from ..locales import _, ngettext
from .cards import live
from .commands import actions_summary
from .grid import SCREEN_LINES, cut
from .view import View, joined, ranking_lines
from .wording import box_name, example_action, score_example

__all__ = ["Advisor", "Ranking", "Screens"]

#: columns a prompt leaves free on its line, to start typing the answer
PROMPT_ROOM = 6

#: `advise(state) -> [(action, expected final score), ...]`, e.g. from the solver (the CLI builds one); where the
#: items are the solver's `Option`s and the values expected final points, `hint` and the coach explain the best move.
Advisor = Callable[[GameState], Sequence[Any]]


class Ranking(NamedTuple):
    """Hints by several objectives side by side: their column labels and units ("points", "probability"),
    and `rank(state)`: every move, ordered by the first objective, with its (value, rank) under each."""

    labels: Sequence[str]
    units: Sequence[str]
    rank: Callable[[GameState], Sequence[tuple[Action, Sequence[tuple[float, int]]]]]


def _roll(st: GameState) -> str:
    """`roll 2 of 3`: which roll of the turn this is."""
    return _("roll {used} of {available}").format(used=st.rolls_used, available=st.rolls_available)


class Screens:
    """Draws a human's decision screens on a View, with the advisor's hints (asked once per position)."""

    def __init__(
        self,
        view: View,
        advisor: Advisor | None = None,
        ranking: Ranking | None = None,
        hints: bool = False,
        coach: bool = False,
    ) -> None:
        self.view = view
        self.advisor = advisor
        self.ranking = ranking  # hints by several objectives side by side (else the advisor's line)
        self.hints = hints  # show the advice at every decision
        self.coach = coach and advisor is not None  # after each decision, what it cost
        self._advice: tuple[Any, list[Any]] | None = None  # the last position's options, best first
        self._table: tuple[Any, list[str]] | None = None  # the side-by-side hint of the last position

    def heading(self, st: GameState) -> str:
        """Whose turn, which turn, which roll, and the banked rolls where unused rolls carry over."""
        v = st.variant
        left = len(v.boxes) - len(st.card.scores)
        to_go = ngettext("{n} box to go", "{n} boxes to go", left).format(n=left)
        head = _("{player}: turn {turn} of {turns} ({to_go}), ").format(
            player=st.player, turn=st.turn, turns=len(v.boxes), to_go=to_go
        )
        head += _roll(st)
        if v.carry_over:
            banked = st.banked[st.current]
            head += (
                _(" ({rolls} + {banked} banked)").format(rolls=v.rolls, banked=banked)
                if banked
                else _(" (none banked)")
            )
        if st.rounds > 1:
            head = _("Game {round} of {rounds}").format(round=st.round, rounds=st.rounds) + " · " + head
        return head

    def prompt(self, st: GameState) -> str:
        """The line the human answers: what can be typed in this position (its example names a box the dice
        can go in), in the longest wording that leaves room to type on an 80-column line."""
        legal = st.legal_boxes()
        one = box_name(st, legal[0]) if len(legal) == 1 else ""
        score = "s" if one else score_example(st)  # `s` alone scores the one box allowed
        p, roll = cut(st.player, 20, self.view.unicode), _roll(st)
        if not st.may_reroll():
            if st.rule_actions() and not legal:
                verbs = _(" or ").join(sorted({a.name for a in st.rule_actions()}))
                wordings = [
                    _("{player}: {verbs} first, e.g. {example} (? for help) > ").format(
                        player=p, verbs=verbs, example=example_action(st)
                    )
                ]
            else:
                when = roll if st.rolls_left > 0 else _("no rolls left")
                wordings = [
                    _("{player}, {when}: type s to score {box} > ").format(player=p, when=when, box=one),
                    _("{player}, {when}: s scores {box} > ").format(player=p, when=when, box=one),
                ]
                if not one:
                    wordings = [
                        _("{player}, {when}: score a box ({example}) > ").format(player=p, when=when, example=score)
                    ]
        else:
            what = _("s scores {box}").format(box=one) if one else _("{example} score").format(example=score)
            wordings = [
                _("{player}, {roll} (k 1 3 keep, r reroll all, {what}, ? help) > ").format(
                    player=p, roll=roll, what=what
                ),
                _("{player}, {roll} (k 1 3 keep, r reroll, {what}) > ").format(player=p, roll=roll, what=what),
                _("{player}, {roll} (k 1 3, r, {example}, ? help) > ").format(player=p, roll=roll, example=score),
            ]
        return next((w for w in wordings if len(w) <= self.view.width - PROMPT_ROOM), wordings[-1])

    def decision(self, st: GameState, kept: Collection[int]) -> None:
        """The decision screen: whose turn, everyone's total, the player's card, the rules' notes, the dice
        (`kept`: the places of dice kept from the last roll), and the advice when hints are on.

        It fits one screen with the prompt: when the hints would not, the dice are drawn small, and the
        hints' table then keeps the moves that fit.
        """
        v = self.view
        top = [*(v.standings(st) if len(st.players) > 1 else []), *v.compact_card(st)]
        said = [
            Text(line, style="dim") for line in joined(v.progress(st) if len(st.variant.columns) == 1 else [], v.width)
        ]
        said += [Text(line, style="yellow") for line in st.turn_status()]
        actions = st.rule_actions()
        if actions:
            must = not st.legal_boxes() and not st.may_reroll()
            listed = _("; or ").join(actions_summary(actions, st.variant))
            offer = (_("You must {actions}") if must else _("You may also {actions}")).format(actions=listed)
            said.append(Text(offer, style="yellow"))
        if st.variant.carry_over and st.rolls_left > 0:
            n = st.rolls_left
            banked = ngettext(
                "Unused rolls are banked: scoring now keeps {n} roll for later turns.",
                "Unused rolls are banked: scoring now keeps {n} rolls for later turns.",
                n,
            ).format(n=n)
            said.append(Text(banked, style="dim"))
        hints = [Text(line, style="yellow") for line in self.hint_lines(st)] if self.hints else []
        dice = v.dice(st.dice, st.variant, kept)
        room = SCREEN_LINES - 2 - len(top) - sum(v.height(t) for t in said)  # the heading and the prompt
        if v.height(dice) + sum(v.height(t) for t in hints) > room:
            dice = v.dice(st.dice, st.variant, kept, small=True)
            while len(hints) > 2 and v.height(dice) + sum(v.height(t) for t in hints) > room:
                hints.pop()  # the table's last moves give way (its head and best move stay)
        v.heading(self.heading(st))
        for line in top:
            v.console.print(line, overflow="crop", no_wrap=True)
        for text in [*said, dice, *hints]:
            v.console.print(text)

    def card(self, st: GameState, player: int | None, default: int | None = None) -> None:
        """`c`: the whole card on one screen (everyone's side by side when it fits, else `player`'s: by
        default the player to move, or `default`), the dice in its heading, the notes on it under it."""
        v = self.view
        names = st.players
        if default is None:
            default = st.current
        who = default if player is None else player
        notes = v.progress(st, who) if len(st.variant.columns) > 1 else []
        now = len(st.variant.columns) > 1 and who == st.current and live(st)
        tips = [_("(n): score now, -: not allowed now")] if now else []
        if len(names) > 1:
            tips.append(_("c NAME or c 1-{n}: a player's card").format(n=len(names)))
        lines = joined([*notes, " · ".join(tips)] if tips else notes, v.width)
        standings = v.standings(st) if len(names) > 1 else []
        rows, shown = v.whole_card(st, player, SCREEN_LINES - 2 - len(standings) - len(lines), default)
        title = _("Scorecards") if shown is None else _("{player}'s card").format(player=names[shown])
        if not st.over and st.dice:
            title += f" · {st.player}, {_roll(st)}: {v.line(st.dice, st.variant.faces)}"
        v.heading(title)
        for standing in standings if shown is not None else []:  # everyone's card shows every total
            v.console.print(standing)
        for row in rows:
            v.console.print(row, overflow="crop", no_wrap=True)
        for line in lines:
            v.say(line, "dim")

    def _advise(self, st: GameState) -> list[tuple[Action, float]]:
        """The advisor's options for this decision, best first, as (action, value) (asked once per position)."""
        return [(o[0], o[1]) for o in self._options(st)]

    def _options(self, st: GameState) -> list[Any]:
        assert self.advisor is not None
        key = (st.round, len(st.history), tuple(sorted(st.dice)))
        if self._advice is None or self._advice[0] != key:
            self._advice = (key, sorted(self.advisor(st), key=lambda av: -av[1]))
        return self._advice[1]

    def explanation(self, st: GameState) -> str:
        """Why the best move is best (`solver.explain`), where the advisor ranks the solver's options by expected
        final points; else nothing."""
        if self.advisor is None or (self.ranking is not None and self.ranking.labels[0] != "mean"):
            return ""
        options = self._options(st)
        if not options or not all(hasattr(o, "points") for o in options):
            return ""
        from ..solver.explain import explain_options

        return explain_options(st.variant, st.card, st.dice, st.rolls_left, options, None, st.first_roll).text

    def hint(self, st: GameState) -> None:
        """`hint`: the advisor's best moves now (or why there are none)."""
        if self.advisor is None:
            self.view.problem(_("hints are off; start the game with --hints"))
            return
        for line in self.hint_lines(st):
            self.view.say(line, "yellow")
        why = self.explanation(st)
        if why:
            self.view.say(why, "yellow")

    def hint_lines(self, st: GameState) -> list[str]:
        """The advisor's best moves now, named as the card names them: one line, or a table of several
        objectives side by side."""
        if self.advisor is None:
            return []
        name = lambda a: action_text(a, st.variant)  # noqa: E731
        if self.ranking is not None and len(self.ranking.labels) > 1:
            key = (st.round, len(st.history), tuple(sorted(st.dice)))
            if self._table is None or self._table[0] != key:
                self._table = (key, ranking_lines(self.ranking, self.ranking.rank(st), name))
            return list(self._table[1])
        ranked = self._advise(st)
        if not ranked:
            return []
        best = ranked[0][1]
        parts = [
            f"{name(a)} ({val:.1f})" if i == 0 else f"{name(a)} -{best - val:.1f}"
            for i, (a, val) in enumerate(ranked[:5])
        ]
        by = f" ({self.ranking.labels[0]})" if self.ranking is not None and self.ranking.labels[0] != "mean" else ""
        then = _("; then {moves}").format(moves=", ".join(parts[1:])) if parts[1:] else ""
        return [_("hint{objective}: best {move}").format(objective=by, move=parts[0]) + then]

    def coach_note(self, st: GameState, action: Action) -> str:
        """With --coach: what a keep or a score cost against the best move, in expected final points."""
        if not self.coach or not isinstance(action, Keep | Score):
            return ""
        ranked = self._advise(st)
        value = next((val for a, val in ranked if a == action), None)
        if not ranked or value is None:
            return ""
        best_action, best = ranked[0]
        lost = max(0.0, best - value)
        mine = action_text(action, st.variant)
        if lost < 0.005:
            return _("coach: {move} is optimal (expected {value:.2f}; 0.00 lost)").format(move=mine, value=value)
        said = _(
            "coach: {move} cost {lost:.2f} expected points; best was {best_move} (expected {best:.2f}, yours {value:.2f})"
        ).format(move=mine, lost=lost, best_move=action_text(best_action, st.variant), best=best, value=value)
        why = self.explanation(st)
        return f"{said} {why}" if why else said
