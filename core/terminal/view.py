"""How the terminal game looks: dice drawn with pips, the cards and results laid out to fit the screen,
bonus and rule progress in the rules' own words, the hints.

Rich renderables only, no game logic: every number comes from the state and the
variant, every progress text from the rule plugins (`Variant.progress`).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

from rich.color import Color, ColorParseError
from rich.console import Console
from rich.rule import Rule
from rich.table import Table
from rich.text import Text

from ..game.state import GameState
from ..language.card import Card
from ..language.model import Variant
from ..locales import _, ngettext
from .cards import decision_card, whole_card
from .results import figure_unit, results_lines

__all__ = ["View", "SMALL_FACES", "dice_line", "joined", "ranking_lines", "HINT_OBJECTIVES"]

SMALL_FACES = "⚀⚁⚂⚃⚄⚅"
# Pip grid (3 x 3, row-major) for faces 1..6.
_PIPS = {
    1: (4,),
    2: (0, 8),
    3: (0, 4, 8),
    4: (0, 2, 6, 8),
    5: (0, 2, 4, 6, 8),
    6: (0, 2, 3, 5, 6, 8),
}


def dice_line(dice: Sequence[int], faces: int, unicode: bool = True) -> str:
    """Dice on one line: `⚅6 ⚅6 ⚂3` (digits only for other dice or plain terminals)."""
    if unicode and faces <= 6:
        return " ".join(f"{SMALL_FACES[d - 1]}{d}" for d in dice)
    return " ".join(str(d) for d in dice)


def _big_die(value: int, faces: int, unicode: bool, kept: bool = False) -> list[str]:
    """Five text rows drawing one die with pips (a number for dice with more than six faces).

    A kept die says so in its top edge, so it reads without colour too.
    """
    label = _("kept")[:5]  # what the top edge says, in the language spoken: at most 5 letters fit
    if not unicode:
        return [f"+{label:-<5}+" if kept else "+-----+", "|     |", f"|{value:^5}|", "|     |", "+-----+"]
    if faces > 6:
        return [f"╭{label:─<5}╮" if kept else "╭─────╮", "│     │", f"│{value:^5}│", "│     │", "╰─────╯"]
    cells = ["●" if i in _PIPS[value] else " " for i in range(9)]
    rows = [" ".join(cells[r * 3 : r * 3 + 3]) for r in range(3)]
    return [f"╭─{label:─<6}╮" if kept else "╭───────╮"] + [f"│ {row} │" for row in rows] + ["╰───────╯"]


def _die_style(variant: Variant, face: int) -> str:
    """A die's colour when a face attribute names one (Kismet's red and green); black dice use the text colour."""
    for name, values in variant.attributes.items():
        value = str(values[face]).lower()
        if "colo" in name.lower() and value != "black":
            try:
                Color.parse(value)
            except ColorParseError:
                continue
            return value
    return ""


def joined(lines: Sequence[str], width: int) -> list[str]:
    """Short lines joined with ` · ` while they fit `width` (a long line stays alone and wraps)."""
    out: list[str] = []
    for line in lines:
        if out and len(out[-1]) + 3 + len(line) <= width:
            out[-1] += " · " + line
        else:
            out.append(line)
    return out


class View:
    """Prints the game to a rich Console; `unicode=False` draws dice with ASCII only."""

    def __init__(self, console: Console, unicode: bool | None = None) -> None:
        self.console = console
        enc = (console.encoding or "").lower()
        self.unicode = unicode if unicode is not None else enc.startswith("utf")

    # ------------------------------------------------------------------ pieces

    def say(self, text: str, style: str | None = None, soft_wrap: bool = False) -> None:
        """One message; `soft_wrap` leaves long lines to the terminal (a command to copy stays whole)."""
        self.console.print(Text(text, style=style or ""), soft_wrap=soft_wrap)  # Text: never read as markup

    def problem(self, text: str) -> None:
        self.console.print(Text("✗ " if self.unicode else "! ", style="bold red") + Text(text, style="red"))

    def line(self, dice: Sequence[int], faces: int) -> str:
        return dice_line(dice, faces, self.unicode)

    def dice(self, dice: Sequence[int], variant: Variant, kept: Collection[int] = (), small: bool = False) -> Text:
        """The dice drawn large (or `small`: one line), with their position numbers (and face attributes,
        coloured) underneath.

        `kept` are the positions (0-based) of dice kept from the last roll: marked `kept` (small: in
        brackets) and drawn in another colour. Dice that would not fit the width are drawn in several rows.
        """
        faces = variant.faces
        if small:
            drawn = [[f"[{self.line([d], faces)}]" if i in kept else self.line([d], faces)] for i, d in enumerate(dice)]
        else:
            drawn = [_big_die(d, faces, self.unicode, i in kept) for i, d in enumerate(dice)]
        width = max([len(rows[0]) for rows in drawn] + [len(f"#{len(dice)}")]) + (1 if small else 0)
        per_row = max(1, (self.width + 1) // (width + 1)) if dice else 1
        styles = [
            (_die_style(variant, d) or ("yellow" if i in kept else "cyan")) + (" bold" if i in kept else "")
            for i, d in enumerate(dice)
        ]
        out = Text()
        for start in range(0, len(dice), per_row):
            chunk = range(start, min(start + per_row, len(dice)))
            lines = [[(drawn[i][r].center(width), styles[i]) for i in chunk] for r in range(len(drawn[start]))]
            place = [(f"#{i + 1}" if small else f"#{i + 1}: {dice[i]}").center(width) for i in chunk]
            lines.insert(0 if small else len(lines), [(text, "") for text in place])
            for values in variant.attributes.values():
                lines.append([(str(values[dice[i]]).center(width), styles[i]) for i in chunk])
            for line in lines:
                if out:
                    out.append("\n")
                for k, (cell, style) in enumerate(line):
                    if k:
                        out.append(" ")
                    out.append(cell, style=style)
        return out

    def height(self, text: Text) -> int:
        """How many lines `text` takes on screen, wrapped to the width."""
        return len(self.console.render_lines(text, self.console.options.update_width(self.width), pad=False))

    def notes(self, lines: Sequence[str], style: str | None = None) -> None:
        """Short notes (bonus and rule progress) joined with ` · ` into as few lines as the width allows."""
        for line in joined(lines, self.console.width):
            self.say(line, style)

    @property
    def width(self) -> int:
        """The width the game is laid out to: the terminal's; piped (where nothing is wrapped), 80 columns."""
        return self.console.width if self.console.is_terminal else min(self.console.width, 80)

    def heading(self, text: str) -> None:
        """A rule across the screen, with `text` in it."""
        self.console.print(Rule(Text(text, style="bold")), width=self.width)

    # ------------------------------------------------------------------ compact view

    def standings(self, state: GameState) -> list[Text]:
        """Every player's total on as few lines as fit (the player to move in bold): `ann 45 · bob 60`."""
        out: list[Text] = []
        width = self.console.width
        for i in range(len(state.players)):
            part = Text(self.result_text(state, i), style="bold" if i == state.current else "")
            if out and out[-1].cell_len + 3 + part.cell_len <= width:
                out[-1].append(" · ")
                out[-1].append_text(part)
            else:
                out.append(part)
        return out

    def compact_card(self, state: GameState) -> list[Text]:
        """The player to move's card on the decision screen (see `cards.decision_card`)."""
        return decision_card(state, self.width, self.unicode)

    def whole_card(
        self, state: GameState, player: int | None, lines: int, default: int | None = None
    ) -> tuple[list[Text], int | None]:
        """`c`'s card in `lines` lines, and whose it is (None: everyone's; see `cards.whole_card`)."""
        return whole_card(state, player, self.width, lines, self.unicode, default)

    def result_text(self, state: GameState, player: int) -> str:
        """A player's standing in a few words: `bob 120`, or `bob 120 (3 points)` with other figures."""
        v = state.variant
        card = state.cards[player]
        figures = v.figure_totals(card)
        more = ", ".join(f"{figures[f.id]} {f.name.lower()}" for f in v.figures)
        return f"{state.players[player]} {v.total(card)}" + (f" ({more})" if more else "")

    def progress(self, state: GameState, player: int | None = None) -> list[str]:
        """Bonus and rule progress of a player (the one to move by default), in the plugins' words.

        Per-column bonuses are left out: the column card shows each one in its column.
        """
        card = state.cards[state.current if player is None else player]
        shown = {b.id for b in state.variant.column_bonuses} if len(state.variant.columns) > 1 else set()
        return [p.line for p in state.variant.progress(card) if p.line and p.id not in shown]

    # ------------------------------------------------------------------ results

    def final(self, state: GameState) -> None:
        """The end of the match on one screen: the players ranked with their totals in parts, the winner."""
        games = len(state.results)
        self.heading(
            _("Game over")
            if games <= 1
            else ngettext("Match over after {n} game", "Match over after {n} games", games).format(n=games)
        )
        self._results(state, state.cards if games <= 1 else None)
        self.say(self.winner_text(state), "bold green" if len(state.winners()) == 1 else "bold yellow")

    def round_over(self, state: GameState, cards: Sequence[Card]) -> None:
        """A game of a match is finished: its results, and the match so far."""
        self.heading(_("Game {round} of {rounds} finished").format(round=len(state.results), rounds=state.rounds))
        self._results(state, cards)
        if len(state.results) > 1:
            so_far = zip(state.players, state.match_totals(), strict=True)
            self.notes([_("match so far:"), *(f"{name} {total}" for name, total in so_far)], "bold")

    def _results(self, state: GameState, cards: Sequence[Card] | None) -> None:
        lines, note = results_lines(state, cards, self.width, self.unicode)
        for line in lines:
            self.console.print(line, overflow="crop", no_wrap=True)
        if note:
            self.say(note, "dim")

    def winner_text(self, state: GameState) -> str:
        """Who won, with what (and which ranking key decided a tie on the first), or who tied."""
        winners = state.winners()
        last = state.results[-1] if state.results else None
        v = state.variant
        keys = [state.match_totals(f) for f in v.rank_by]
        units = [figure_unit(v, f) for f in v.rank_by]
        if last is not None and last.instant_winner is not None and state.rounds == 1:
            return _("Winner: {player}, at once (instant win)").format(player=winners[0])
        if len(winners) > 1:
            at = f"{keys[0][state.players.index(winners[0])]}{units[0]}"
            return _("Tie at {total}: {players}").format(total=at, players=", ".join(winners))
        w = state.players.index(winners[0])
        text = _("Winner: {player} with {total}").format(player=winners[0], total=f"{keys[0][w]}{units[0]}")
        tied = [i for i in range(len(state.players)) if i != w and keys[0][i] == keys[0][w]]
        k = next((k for k in range(1, len(keys)) if all(keys[k][i] != keys[k][w] for i in tied)), None)
        if tied and k is not None:  # the first ranking key ties: say which one decided
            name = _("score") if v.rank_by[k] == "score" else units[k].strip()
            text += _(" (tied on{unit}, ahead on {figure}: {value})").format(
                unit=units[0], figure=name, value=keys[k][w]
            )
        return text

    def instant_win(self, state: GameState, winner: int, what: str) -> None:
        """Announce a game won on one roll, with everyone's total at that moment."""
        self.say(
            _("{player} rolled {what}: an instant win!").format(player=state.players[winner], what=what), "bold magenta"
        )
        table = Table()
        table.add_column(_("player"))
        table.add_column(_("total so far"), justify="right")
        table.add_column(_("result"))
        for i, (name, total) in enumerate(zip(state.players, state.results[-1].totals, strict=True)):
            table.add_row(Text(name), str(total), Text(_("wins"), style="bold green") if i == winner else "")
        self.console.print(table)


#: the terminal's width the side-by-side hints fit, its move label's width, and one objective's column
HINT_WIDTH, HINT_LABEL, HINT_COLUMN = 80, 22, 14
#: objectives side by side that fit HINT_WIDTH, and moves shown (each objective's pick is added when below)
HINT_OBJECTIVES = (HINT_WIDTH - HINT_LABEL) // HINT_COLUMN
HINT_MOVES = 4


def _hint_value(value: float, rank: int, unit: str) -> str:
    """One cell: the rank and the value, in points (one decimal) or as a percentage."""
    shown = "-" if value == float("-inf") else f"{100 * value:.1f}%" if unit == "probability" else f"{value:.1f}"
    return f"#{rank} {shown}"


def ranking_lines(ranking: Any, rows: Sequence[tuple[Any, Sequence[tuple[float, int]]]], text: Any) -> list[str]:
    """The side-by-side hint: a header of the objectives, then the first HINT_MOVES moves by the first one and
    any other objective's pick below them, each with its rank and value per objective; lines of at most
    HINT_WIDTH characters. `text(action)` names a move."""
    if not rows:
        return []
    shown = list(rows[:HINT_MOVES])
    for row in rows[HINT_MOVES:]:
        if any(rank == 1 for _, rank in row[1]):
            shown.append(row)
    labels = [lab[: HINT_COLUMN - 1] for lab in ranking.labels]
    lines = [_("hint").ljust(HINT_LABEL) + "".join(lab.ljust(HINT_COLUMN) for lab in labels)]
    for action, places in shown:
        name = text(action)
        most = HINT_LABEL - 3  # two spaces before it, at least one after
        name = name if len(name) <= most else name[: most - 1] + "…"
        cells = [_hint_value(v, r, u).ljust(HINT_COLUMN) for (v, r), u in zip(places, ranking.units, strict=True)]
        lines.append(("  " + name).ljust(HINT_LABEL) + "".join(cells))
    return [line.rstrip()[:HINT_WIDTH] for line in lines]
