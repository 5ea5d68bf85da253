"""How the terminal game looks: dice drawn with pips, the scorecard (columns drawn as columns),
bonus and rule progress in the rules' own words, round results and the match settlement.

Rich renderables only, no game logic: every number comes from the state and the
variant, every progress text from the rule plugins (`Variant.progress`).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from fractions import Fraction
from typing import Any

from attrs import evolve
from rich import box as boxes
from rich.color import Color, ColorParseError
from rich.console import Console, Group
from rich.markup import escape
from rich.rule import Rule
from rich.table import Table
from rich.text import Text

from ..game.state import GameState
from ..language.card import Card
from ..language.describe import bonus_cells
from ..language.model import Column, Variant

__all__ = ["View", "SMALL_FACES", "dice_line", "card_rows", "fmt_amount", "joined"]

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
    if not unicode:
        return ["+kept-+" if kept else "+-----+", "|     |", f"|{value:^5}|", "|     |", "+-----+"]
    if faces > 6:
        return ["╭kept─╮" if kept else "╭─────╮", "│     │", f"│{value:^5}│", "│     │", "╰─────╯"]
    cells = ["●" if i in _PIPS[value] else " " for i in range(9)]
    rows = [" ".join(cells[r * 3 : r * 3 + 3]) for r in range(3)]
    return ["╭─kept──╮" if kept else "╭───────╮"] + [f"│ {row} │" for row in rows] + ["╰───────╯"]


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


def _row_bonuses(variant: Variant) -> dict[str, str]:
    """Card bonuses that count one row across every column (Balut's `Fours 52+`): row id -> bonus id."""
    out: dict[str, str] = {}
    if len(variant.columns) < 2:
        return out
    for b in variant.bonuses:
        rows = b.params.get("boxes")
        if rows and len(rows) == 1 and rows[0] in variant.rows and rows[0] not in out:
            out[rows[0]] = b.id
    return out


def _ident(name: str) -> str:
    """A box name as an id would spell it (`Two pairs, same colour` -> `two_pairs_same_colour`)."""
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")


def joined(lines: Sequence[str], width: int) -> list[str]:
    """Short lines joined with ` · ` while they fit `width` (a long line stays alone and wraps)."""
    out: list[str] = []
    for line in lines:
        if out and len(out[-1]) + 3 + len(line) <= width:
            out[-1] += " · " + line
        else:
            out.append(line)
    return out


def _unit(variant: Variant, figure: str) -> str:
    """How a figure's amount is written after the number: nothing for the score, ` points` for Balut's points."""
    if figure == "score":
        return ""
    return " " + next(f.name.lower() for f in variant.figures if f.id == figure)


def fmt_amount(value: Fraction) -> str:
    """A settlement amount: `+12`, `-7`, or `+12.33` when it is not whole."""
    if value.denominator == 1:
        return f"{int(value):+d}"
    return f"{float(value):+.2f}"


def card_rows(variant: Variant, card: Card) -> dict[str, Any]:
    """One card as numbers: boxes as written, bonuses by id, totals (what the final scorecard prints)."""
    bonuses = {bid: pts for bid, _, _, pts in bonus_cells(variant, card, final=True)}
    out: dict[str, Any] = {"boxes": variant.written_scores(card), "bonuses": bonuses, "total": variant.total(card)}
    if len(variant.columns) > 1:
        out["columns"] = variant.column_totals(card)
    if variant.figures:
        out["figures"] = variant.figure_totals(card)
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

    def dice(self, dice: Sequence[int], variant: Variant, kept: Collection[int] = ()) -> Text:
        """The dice drawn large, with their position numbers (and face attributes, coloured) underneath.

        `kept` are the positions (0-based) of dice kept from the last roll: marked `kept` and
        drawn in another colour. Dice that would not fit the console's width are drawn in several rows.
        """
        faces = variant.faces
        drawn = [_big_die(d, faces, self.unicode, i in kept) for i, d in enumerate(dice)]
        width = len(drawn[0][0]) if drawn else 0
        per_row = max(1, (self.console.width + 1) // (width + 1)) if width else 1
        styles = [
            (_die_style(variant, d) or ("yellow" if i in kept else "cyan")) + (" bold" if i in kept else "")
            for i, d in enumerate(dice)
        ]
        out = Text()
        for start in range(0, len(dice), per_row):
            chunk = range(start, min(start + per_row, len(dice)))
            lines: list[list[tuple[str, str]]] = [[(drawn[i][r], styles[i]) for i in chunk] for r in range(5)]
            lines.append([(f"#{i + 1}: {dice[i]}".center(width), "") for i in chunk])
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

    def notes(self, lines: Sequence[str], style: str | None = None) -> None:
        """Short notes (bonus and rule progress) joined with ` · ` into as few lines as the width allows."""
        for line in joined(lines, self.console.width):
            self.say(line, style)

    def heading(self, text: str) -> None:
        """A rule across the terminal; piped (where nothing is wrapped, so the width is unbounded), 80 columns."""
        width = self.console.width if self.console.is_terminal else min(self.console.width, 80)
        self.console.print(Rule(Text(text, style="bold")), width=width)

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
        """The player to move's card in few lines: every box with its score, or what it would score now.

        Boxes run in two halves side by side when they fit the width. With one card column a
        box shows its score under `card` and what the dice would score under `now`; with several
        columns each cell holds a score, `(n)` for what the dice would score there, `-` where the
        rules do not allow it now.
        """
        v = state.variant
        card = state.card
        live = not state.over and state.held is None and bool(state.dice)
        legal, best = self._now(state) if live else (set(), None)
        columns = len(v.columns) > 1
        names = [v.row(r).name for r in v.rows] if columns else [b.name for b in v.boxes]
        extra = [(name, text) for _, name, text, _ in bonus_cells(v, card, final=False)]
        if columns:
            extra = []  # the column totals line says more, per column
        name_w = max([len(n) for n in names] + [len(n) for n, _ in extra] + [5])
        widths = [max(6, min(len(c.id), 8) + 1) for c in v.columns]  # a column's id shown whole up to 8 letters
        fixed = 3 + (sum(widths) if columns else 11)
        width = self.console.width
        halves = 2 if 2 * (fixed + min(name_w, 10)) + 3 <= width else 1
        name_w = max(4, min(name_w, (width - 3 * (halves - 1)) // halves - fixed))

        def cut(name: str) -> str:
            return name if len(name) <= name_w else name[: name_w - 1] + ("…" if self.unicode else ".")

        def now(box: str, cw: int) -> Text:
            if box in card.scores or not live:
                return Text(" " * cw)
            cell = self._now_cell(state, box, legal, best)
            text = cell.plain if (not columns or cell.plain in ("", "-")) else f"({cell.plain})"
            return Text(text.rjust(cw), style=cell.style)

        lines: list[Text] = []
        if columns:
            cols = list(zip(v.columns, widths, strict=True))
            head = Text(f"{'':>2} {'row':<{name_w}}" + "".join(f"{c.id[: w - 1]:>{w}}" for c, w in cols))
            for i, row in enumerate(v.rows, 1):
                line = Text(f"{i:>2} {cut(names[i - 1]):<{name_w}}")
                for col, w in cols:
                    box = f"{col.id}.{row}"
                    val = card.scores.get(box)
                    line.append_text(
                        Text(f"{v.written(box, val):>{w}}", style="bold") if val is not None else now(box, w)
                    )
                lines.append(line)
            totals = v.column_totals(card)
            lines.append(
                Text(f"{'':>2} {'total':<{name_w}}" + "".join(f"{totals[c.id]:>{w}}" for c, w in cols), "bold")
            )
        else:
            head = Text(f"{'':>2} {'box':<{name_w}} {'card':>4} {'now':>5}")
            for i, b in enumerate(v.boxes, 1):
                val = card.scores.get(b.id)
                filled = "" if val is None else str(v.written(b.id, val))
                line = Text(f"{i:>2} {cut(b.name):<{name_w}} {filled:>4} ")
                line.append_text(now(b.id, 5))
                lines.append(line)
            for name, text in extra:
                lines.append(Text(f"{'':>2} {cut(name):<{name_w}} {text:>4} {'':>5}", style="dim"))
        lines.append(Text(f"{'':>2} {'TOTAL':<{name_w}} " + f"{v.total(card)}", style="bold"))
        head.stylize("dim")
        if halves == 1:
            return [head, *lines]
        split = (len(lines) + 1) // 2
        left, right = lines[:split], lines[split:]
        pad = max(t.cell_len for t in [head, *left])
        bar = " │ " if self.unicode else " | "
        out = [Text.assemble(head, " " * (pad - head.cell_len), bar, head if right else "")]
        for k, line in enumerate(left):
            joined_line = Text.assemble(line, " " * (pad - line.cell_len))
            if k < len(right):
                joined_line.append(bar)
                joined_line.append_text(right[k])
            out.append(joined_line)
        for t in out:
            t.rstrip()
        return out

    # ------------------------------------------------------------------ scorecard

    def scorecard(self, state: GameState, preview: bool = True, final: bool = False, title: str | None = None) -> Any:
        """The card with what each open box would score now: players side by side, or the
        current player's columns side by side when the card has several columns."""
        if len(state.variant.columns) > 1:
            return self._column_card(state, state.current, preview and not state.over, final, title)
        return self._player_table(state, preview, final, title)

    def final_cards(self, state: GameState, cards: Sequence[Card], title: str) -> Any:
        """Every player's finished card (one table per player when the card has columns)."""
        shown = evolve(state, cards=tuple(cards), over=True, dice=(), held=None)
        if len(state.variant.columns) > 1:
            return Group(
                *[self._column_card(shown, i, False, True, f"{title}: {p}") for i, p in enumerate(state.players)]
            )
        return self._player_table(shown, False, True, title)

    def _now(self, state: GameState) -> tuple[set[str], int | None]:
        legal = set(state.legal_boxes())
        best = max((state.score_preview(b).points for b in legal), default=None)
        return legal, best

    def _player_table(self, state: GameState, preview: bool, final: bool, title: str | None) -> Table:
        v = state.variant
        show_now = preview and not state.over and state.held is None and bool(state.dice)
        legal, best = self._now(state) if show_now else (set(), None)
        staged = len({b.stage for b in v.boxes}) > 1
        table = self._table(title, live=not final)
        # The decision screen leaves out names that only repeat the id, to keep room for players.
        named = final or any(_ident(b.name) != b.id for b in v.boxes)
        table.add_column("#", justify="right", style="dim")
        table.add_column("box", no_wrap=True)
        if named:
            table.add_column("name")
        if staged:
            table.add_column("stage", justify="right")
        for i, name in enumerate(state.players):
            style = "bold" if (i == state.current and not state.over) else None
            table.add_column(escape(name), justify="right", header_style=style)
        if show_now:
            table.add_column(escape(f"now ({state.player})"), justify="right", style="cyan")
        section = None
        for i, box in enumerate(v.boxes, 1):
            if section is not None and box.section != section:
                table.add_section()
            section = box.section
            cells: list[Any] = [str(i), box.id] + ([box.name] if named else []) + ([str(box.stage)] if staged else [])
            for card in state.cards:
                val = card.scores.get(box.id)
                cells.append("" if val is None else str(v.written(box.id, val)))
            if show_now:
                cells.append(self._now_cell(state, box.id, legal, best))
            table.add_row(*cells)
        table.add_section()
        bonus_rows: dict[str, tuple[str, list[str]]] = {}
        for p, card in enumerate(state.cards):
            for bid, name, text, _ in bonus_cells(v, card, final):
                bonus_rows.setdefault(bid, (name, [""] * len(state.cards)))[1][p] = text
        pad = [""] * (1 if staged else 0)
        tail = [""] if show_now else []
        label = (lambda first, second: [first, second]) if named else (lambda first, second: [first])
        for bid, (name, texts) in bonus_rows.items():
            table.add_row("", *label(bid, name), *pad, *texts, *tail)
        for f in v.figures:
            table.add_row(
                "",
                *label(f.id.upper(), f.name),
                *pad,
                *(str(v.figure_totals(c)[f.id]) for c in state.cards),
                *tail,
                style="bold",
            )
        totals = [str(v.total(c)) for c in state.cards]
        table.add_row("", *label(Text("TOTAL", style="bold"), ""), *pad, *totals, *tail, style="bold")
        return table

    def _table(self, title: str | None, live: bool) -> Table:
        """A scorecard table: framed for final cards, lighter (fewer lines) on the decision screen."""
        if live:
            return Table(title=title, title_justify="left", box=boxes.MINIMAL, show_edge=False)
        return Table(title=title, title_justify="left")

    def _column_head(self, col: Column) -> str:
        """A card column's header: its name, multiplier and fill order (`Down ↓`, `x2`), its id when typed differently."""
        head = col.name
        if col.multiplier != 1 and f"x{col.multiplier}" not in head.lower().replace(" ", ""):
            head += f" x{col.multiplier}"
        arrow = {"down": "↓", "up": "↑"}.get(col.order) if self.unicode else None
        name = col.name.lower()
        if arrow:
            head += " " + arrow
        elif col.order != "any" and not (col.order.startswith(name) or name.startswith(col.order)):
            head += f" ({col.order})"
        return f"{col.id}: {head}" if col.id != name else head

    def _column_card(self, state: GameState, player: int, preview: bool, final: bool, title: str | None) -> Table:
        """One player's card as rows x columns; open boxes show what they would score now.

        A card bonus tied to one row (Balut's `Fours 52+`) is shown in an extra column
        at the end of that row, named after the figure it counts in (`Points`).
        """
        v = state.variant
        card = state.cards[player]
        show_now = preview and player == state.current and state.held is None and bool(state.dice)
        legal, best = self._now(state) if show_now else (set(), None)
        table = self._table(title, live=not final)
        table.add_column("#", justify="right", style="dim")
        table.add_column("row", no_wrap=True)
        for col in v.columns:
            table.add_column(escape(self._column_head(col)), justify="right")
        attached = _row_bonuses(v)
        figures = {b.figure for b in v.bonuses if b.id in attached.values()}
        side = next((f.name for f in v.figures if figures == {f.id}), "bonus") if attached else None
        if side is not None:
            table.add_column(escape(side), justify="right", style="magenta")
        extra = [""] if side is not None else []
        cells_of = {bid: text for bid, _, text, _ in bonus_cells(v, card, final)}
        section = None
        for i, row in enumerate(v.rows, 1):
            defn = v.row(row)
            if section is not None and defn.section != section:
                table.add_section()
            section = defn.section
            cells: list[Any] = [str(i), defn.name]
            for col in v.columns:
                box = f"{col.id}.{row}"
                val = card.scores.get(box)
                if val is not None:
                    cells.append(Text(str(v.written(box, val)), style="bold"))
                elif show_now:
                    cells.append(self._now_cell(state, box, legal, best))
                else:
                    cells.append("")
            if side is not None:
                cells.append(cells_of.pop(attached[row], "") if row in attached else "")
            table.add_row(*cells)
        table.add_section()
        per_column: dict[str, dict[str, str]] = {}
        for b in v.column_bonuses:
            short = b.id.split(".", 1)[1]
            per_column.setdefault(short, {})[b.column or ""] = cells_of.pop(b.id, "")
        for short, texts in per_column.items():
            name = next(b.name for b in v.column_bonuses if b.id.endswith("." + short)).rsplit(" (", 1)[0]
            table.add_row("", name, *(texts.get(c.id, "") for c in v.columns), *extra)
        totals = v.column_totals(card)
        table.add_row(
            "", Text("column total", style="bold"), *(str(totals[c.id]) for c in v.columns), *extra, style="bold"
        )
        if final:
            table.add_section()
        pad = [""] * (len(v.columns) - 1)
        in_side = {f.id for f in v.figures if f.name == side}
        figure_of = {b.id: b.figure for b in v.bonuses}

        def place(text: str, figure: str) -> list[str]:
            """Cells putting `text` under the last card column, or in the side column for its figure."""
            if side is not None and figure in in_side:
                return [*pad, "", text]
            return [*pad, text, *extra]

        for bid, text in cells_of.items():
            name = next((b.name for b in v.bonuses if b.id == bid), bid)
            table.add_row("", name, *place(text, figure_of.get(bid, "score")))
        for f in v.figures:
            table.add_row("", f.name, *place(str(v.figure_totals(card)[f.id]), f.id), style="bold")
        table.add_row("", Text("TOTAL", style="bold"), *place(str(v.total(card)), "score"), style="bold")
        return table

    def card_notes(self, state: GameState) -> list[str]:
        """What the decision screen's column card needs said below it: the others' standing, how to read the cells."""
        if len(state.variant.columns) < 2:
            return []
        notes = []
        if len(state.players) > 1:
            notes.append(
                "others: "
                + ", ".join(self.result_text(state, i) for i in range(len(state.players)) if i != state.current)
            )
        if state.held is None and state.dice:
            notes.append("bold = scored, colour = dice now, - = not allowed")
        return notes

    def result_text(self, state: GameState, player: int) -> str:
        """A player's standing in a few words: `bob 120`, or `bob 120 (3 points)` with other figures."""
        v = state.variant
        card = state.cards[player]
        figures = v.figure_totals(card)
        more = ", ".join(f"{figures[f.id]} {f.name.lower()}" for f in v.figures)
        return f"{state.players[player]} {v.total(card)}" + (f" ({more})" if more else "")

    def _now_cell(self, state: GameState, box: str, legal: set[str], best: int | None) -> Text:
        if box in state.card.scores:
            return Text("")
        if box not in legal:
            return Text("-", style="dim")  # open, but the rules do not allow it now
        res = state.score_preview(box)
        text = str(res.written) + "".join(f" {a.points:+d}" for a in res.awards)
        style = "bold green" if res.points == best and res.points > 0 else ("dim" if res.points <= 0 else "cyan")
        return Text(text, style=style)

    def progress(self, state: GameState) -> list[str]:
        """Bonus and rule progress of the player to move, in the plugins' words.

        Per-column bonuses are left out: the column card shows each one in its column.
        """
        shown = {b.id for b in state.variant.column_bonuses} if len(state.variant.columns) > 1 else set()
        return [p.line for p in state.variant.progress(state.card) if p.line and p.id not in shown]

    # ------------------------------------------------------------------ results

    def round_table(self, state: GameState) -> Table:
        """Totals of every finished game of the match (and other figures), and the match total."""
        v = state.variant
        table = Table(title="Match", title_justify="left")
        table.add_column("round", justify="right")
        for name in state.players:
            table.add_column(escape(name), justify="right")
        for k, r in enumerate(state.results, 1):
            mark = ""
            if r.instant_winner is not None:
                mark = f" (instant win: {state.players[r.instant_winner]})"
            cells = [str(t) for t in r.totals]
            if v.figures:
                cells = [
                    f"{t} ({', '.join(f'{r.figure(f.id)[i]} {f.name.lower()}' for f in v.figures)})"
                    for i, t in enumerate(r.totals)
                ]
            table.add_row(f"{k}{mark}", *cells)
        table.add_section()
        table.add_row("match total", *(str(t) for t in state.match_totals()), style="bold")
        for f in v.figures:
            table.add_row(f"match {f.name.lower()}", *(str(t) for t in state.match_totals(f.id)), style="bold")
        return table

    def settlement_table(self, state: GameState) -> Table | None:
        payments = state.settlement()
        if payments is None:
            return None
        table = Table(title="Settlement (+ receives, - pays)", title_justify="left")
        table.add_column("player")
        table.add_column("match total", justify="right")
        table.add_column("amount", justify="right")
        for name, total in zip(state.players, state.match_totals(), strict=True):
            amount = payments.get(name, Fraction(0))
            style = "green" if amount > 0 else ("red" if amount < 0 else None)
            table.add_row(Text(name), str(total), Text(fmt_amount(amount), style=style or ""))
        return table

    def final(self, state: GameState) -> None:
        """The final scorecard, the match table and settlement when there is one, the winner."""
        multi_round = len(state.results) > 1
        title = "Final scorecard" + (f" (round {len(state.results)})" if multi_round else "")
        parts: list[Any] = [self.final_cards(state, state.cards, title)]
        if multi_round:
            parts.append(self.round_table(state))
        settle = self.settlement_table(state)
        if settle is not None:
            parts.append(settle)
        ranking = self.ranking_table(state)
        if ranking is not None:
            parts.append(ranking)
        self.console.print(Group(*parts))
        winners = state.winners()
        last = state.results[-1] if state.results else None
        v = state.variant
        keys = [state.match_totals(f) for f in v.rank_by]
        units = [_unit(v, f) for f in v.rank_by]
        if last is not None and last.instant_winner is not None and state.rounds == 1:
            self.say(f"Winner: {winners[0]}, at once (instant win)", "bold green")
        elif len(winners) == 1:
            w = state.players.index(winners[0])
            text = f"Winner: {winners[0]} with {keys[0][w]}{units[0]}"
            tied = [i for i in range(len(state.players)) if i != w and keys[0][i] == keys[0][w]]
            k = next((k for k in range(1, len(keys)) if all(keys[k][i] != keys[k][w] for i in tied)), None)
            if tied and k is not None:  # the first ranking key ties: say which one decided
                name = "score" if v.rank_by[k] == "score" else units[k].strip()
                text += f" (tied on{units[0]}, ahead on {name}: {keys[k][w]})"
            self.say(text, "bold green")
        else:
            self.say(
                f"Tie at {keys[0][state.players.index(winners[0])]}{units[0]}: " + ", ".join(winners), "bold yellow"
            )

    def ranking_table(self, state: GameState) -> Table | None:
        """Places by the variant's ranking (Balut: points, then score), when the final cards do not already
        show the totals side by side (ranked by more than the score, or one card per player)."""
        v = state.variant
        if len(state.players) < 2 or (len(v.rank_by) < 2 and len(v.columns) < 2):
            return None  # one table already shows every player's total side by side
        keys = [state.match_totals(f) for f in v.rank_by]
        ranked = sorted(range(len(state.players)), key=lambda i: tuple(-k[i] for k in keys))
        names = ["score" if f == "score" else _unit(v, f).strip() for f in v.rank_by]
        table = Table(title=f"Ranking (by {', then '.join(names)})", title_justify="left")
        table.add_column("place", justify="right")
        table.add_column("player")
        for name in names:
            table.add_column(name, justify="right")
        place = 0
        for n, i in enumerate(ranked):
            if n == 0 or any(k[i] != k[ranked[n - 1]] for k in keys):
                place = n + 1
            table.add_row(str(place), Text(state.players[i]), *(str(k[i]) for k in keys))
        return table

    def instant_win(self, state: GameState, winner: int, what: str) -> None:
        """Announce a game won on one roll, with everyone's total at that moment."""
        self.say(f"{state.players[winner]} rolled {what}: an instant win!", "bold magenta")
        table = Table()
        table.add_column("player")
        table.add_column("total so far", justify="right")
        table.add_column("result")
        for i, (name, total) in enumerate(zip(state.players, state.results[-1].totals, strict=True)):
            table.add_row(Text(name), str(total), Text("wins", style="bold green") if i == winner else "")
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
    lines = ["hint".ljust(HINT_LABEL) + "".join(lab.ljust(HINT_COLUMN) for lab in labels)]
    for action, places in shown:
        name = text(action)
        most = HINT_LABEL - 3  # two spaces before it, at least one after
        name = name if len(name) <= most else name[: most - 1] + "…"
        cells = [_hint_value(v, r, u).ljust(HINT_COLUMN) for (v, r), u in zip(places, ranking.units, strict=True)]
        lines.append(("  " + name).ljust(HINT_LABEL) + "".join(cells))
    return [line.rstrip()[:HINT_WIDTH] for line in lines]
