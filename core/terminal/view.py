"""How the terminal game looks: dice drawn with pips, the scorecard, bonus and stage
progress, round results and the match settlement (rich renderables, no game logic)."""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import Any

from rich.console import Console, Group
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from ..game.state import GameState
from ..language.model import Card, Variant

__all__ = ["View", "SMALL_FACES", "dice_line", "bonus_cells", "card_rows", "fmt_amount"]

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


def _big_die(value: int, faces: int, unicode: bool) -> list[str]:
    """Five text rows drawing one die with pips (a number for dice with more than six faces)."""
    if not unicode:
        return ["+-----+", "|     |", f"|{value:^5}|", "|     |", "+-----+"]
    if faces > 6:
        return ["╭─────╮", "│     │", f"│{value:^5}│", "│     │", "╰─────╯"]
    cells = ["●" if i in _PIPS[value] else " " for i in range(9)]
    rows = [" ".join(cells[r * 3 : r * 3 + 3]) for r in range(3)]
    return ["╭───────╮"] + [f"│ {row} │" for row in rows] + ["╰───────╯"]


def fmt_amount(value: Fraction) -> str:
    """A settlement amount: `+12`, `-7`, or `+12.33` when it is not whole."""
    if value.denominator == 1:
        return f"{int(value):+d}"
    return f"{float(value):+.2f}"


def bonus_cells(variant: Variant, card: Card, final: bool) -> list[tuple[str, str, str, int]]:
    """Bonus rows of one card: (id, name, shown text, points earned so far).

    Declared bonuses come first, in order; awards a plugin adds under other ids follow.
    Before the end a threshold bonus not yet certain shows its progress (`42/63`).
    """
    end = {a.id: a for a in variant.end_bonuses(card)}
    earned: dict[str, int] = {}
    names: dict[str, str] = {}
    for a in list(card.awards) + list(end.values()):
        earned[a.id] = earned.get(a.id, 0) + a.points
        names.setdefault(a.id, a.name or a.id)
    rows: list[tuple[str, str, str, int]] = []
    for bonus in variant.bonuses:
        pts = earned.pop(bonus.id, 0)
        text = str(pts)
        if bonus.kind == "threshold" and not pts and not final:
            ids = bonus.params.get("boxes") or [b.id for b in variant.boxes if b.section == bonus.params.get("section")]
            text = f"{sum(card.scores.get(b, 0) for b in ids)}/{bonus.params['at_least']}"
        rows.append((bonus.id, bonus.name, text, pts))
    rows.extend((aid, names[aid], str(pts), pts) for aid, pts in earned.items())
    return rows


def card_rows(variant: Variant, card: Card) -> dict[str, Any]:
    """One card as numbers: boxes, bonuses by id, total (what the final scorecard prints)."""
    bonuses = {bid: pts for bid, _, _, pts in bonus_cells(variant, card, final=True)}
    return {"boxes": {b: card.scores.get(b) for b in variant.box_ids}, "bonuses": bonuses, "total": variant.total(card)}


class View:
    """Prints the game to a rich Console; `unicode=False` draws dice with ASCII only."""

    def __init__(self, console: Console, unicode: bool | None = None) -> None:
        self.console = console
        enc = (console.encoding or "").lower()
        self.unicode = unicode if unicode is not None else enc.startswith("utf")

    # ------------------------------------------------------------------ pieces

    def say(self, text: str, style: str | None = None) -> None:
        self.console.print(Text(text, style=style or ""))  # Text: names and input are never read as markup

    def problem(self, text: str) -> None:
        self.console.print(Text("✗ " if self.unicode else "! ", style="bold red") + Text(text, style="red"))

    def line(self, dice: Sequence[int], faces: int) -> str:
        return dice_line(dice, faces, self.unicode)

    def dice(self, dice: Sequence[int], faces: int) -> Text:
        """The dice drawn large, with their position numbers underneath."""
        drawn = [_big_die(d, faces, self.unicode) for d in dice]
        width = len(drawn[0][0]) if drawn else 0
        rows = [" ".join(die[r] for die in drawn) for r in range(5)]
        labels = " ".join(f"#{i}: {d}".center(width) for i, d in enumerate(dice, 1))
        return Text("\n".join(rows + [labels]))

    def heading(self, text: str) -> None:
        self.console.rule(Text(text, style="bold"))

    # ------------------------------------------------------------------ scorecard

    def scorecard(self, state: GameState, preview: bool = True, final: bool = False, title: str | None = None) -> Table:
        """Every player's boxes, bonuses and total; `preview` adds what each open box would score now."""
        v = state.variant
        show_now = preview and not state.over and state.held is None and bool(state.dice)
        legal = set(state.legal_boxes()) if show_now else set()
        staged = len({b.stage for b in v.boxes}) > 1
        table = Table(title=title, title_justify="left", show_lines=False)
        table.add_column("#", justify="right", style="dim")
        table.add_column("box", no_wrap=True)
        table.add_column("name")
        if staged:
            table.add_column("stage", justify="right")
        for i, name in enumerate(state.players):
            style = "bold" if (i == state.current and not state.over) else None
            table.add_column(escape(name), justify="right", header_style=style)
        if show_now:
            table.add_column(escape(f"now ({state.player})"), justify="right", style="cyan")
        best = None
        if show_now and legal:
            best = max(state.score_preview(b).points for b in legal)
        section = None
        for i, box in enumerate(v.boxes, 1):
            if section is not None and box.section != section:
                table.add_section()
            section = box.section
            cells = [str(i), box.id, box.name] + ([str(box.stage)] if staged else [])
            for card in state.cards:
                val = card.scores.get(box.id)
                cells.append("" if val is None else str(val))
            if show_now:
                cells.append(self._now_cell(state, box.id, legal, best))
            table.add_row(*cells)
        table.add_section()
        bonus_rows: dict[str, tuple[str, list[str]]] = {}
        for p, card in enumerate(state.cards):
            for bid, name, text, _ in bonus_cells(v, card, final):
                bonus_rows.setdefault(bid, (name, [""] * len(state.cards)))[1][p] = text
        pad = [""] * (1 if staged else 0)
        for bid, (name, texts) in bonus_rows.items():
            table.add_row("", bid, name, *pad, *texts, *([""] if show_now else []))
        totals = [str(v.total(c)) for c in state.cards]
        table.add_row("", Text("TOTAL", style="bold"), "", *pad, *totals, *([""] if show_now else []), style="bold")
        return table

    def _now_cell(self, state: GameState, box: str, legal: set[str], best: int | None) -> Text:
        if box in state.card.scores:
            return Text("")
        if box not in legal:
            return Text("-", style="dim")  # open, but the rules do not allow it now
        res = state.score_preview(box)
        text = str(res.score) + "".join(f" {a.points:+d}" for a in res.awards)
        style = "bold green" if res.points == best and res.points > 0 else ("dim" if res.points <= 0 else "cyan")
        return Text(text, style=style)

    def progress(self, state: GameState) -> list[str]:
        """Bonus and stage progress of the player to move, in words."""
        v, card = state.variant, state.card
        out = []
        secured = {a.id for a in v.end_bonuses(card)}
        for bonus in v.bonuses:
            if bonus.kind == "threshold":
                ids = bonus.params.get("boxes") or [b.id for b in v.boxes if b.section == bonus.params.get("section")]
                got = sum(card.scores.get(b, 0) for b in ids)
                left = [b for b in ids if b not in card.scores]
                need = bonus.params["at_least"]
                if bonus.id in secured:
                    out.append(f"{bonus.name}: {got}/{need}, +{bonus.params['points']} secured")
                elif not left:
                    out.append(f"{bonus.name}: {got}/{need}, missed")
                else:
                    par = _par(v, ids, need)
                    extra = f", {got - par(card):+d} against three of each" if par else ""
                    out.append(f"{bonus.name}: {got}/{need} for +{bonus.params['points']}, {len(left)} boxes to go{extra}")
            elif bonus.kind == "event":
                count = sum(1 for a in card.awards if a.id == bonus.id)
                if count:
                    out.append(f"{bonus.name}: earned {count} time{'s' * (count > 1)}")
        if "stage_order" in v.rules and v.open_boxes(card):
            stage = min(v.box(b).stage for b in v.open_boxes(card))
            in_stage = [b for b in v.boxes if b.stage == stage]
            filled = sum(1 for b in in_stage if b.id in card.scores)
            out.append(f"Stage {stage}: {filled}/{len(in_stage)} boxes filled" + (
                f"; stage {stage + 1} opens after it" if any(b.stage > stage for b in v.boxes) else ""
            ))
        return out

    # ------------------------------------------------------------------ results

    def round_table(self, state: GameState) -> Table:
        """Totals of every finished game of the match, and the match total."""
        table = Table(title="Match", title_justify="left")
        table.add_column("round", justify="right")
        for name in state.players:
            table.add_column(escape(name), justify="right")
        for k, r in enumerate(state.results, 1):
            mark = ""
            if r.instant_winner is not None:
                mark = f" (instant win: {state.players[r.instant_winner]})"
            table.add_row(f"{k}{mark}", *(str(t) for t in r.totals))
        table.add_section()
        table.add_row("match total", *(str(t) for t in state.match_totals()), style="bold")
        return table

    def settlement_table(self, state: GameState) -> Table | None:
        payments = state.settlement()
        if payments is None:
            return None
        table = Table(title="Settlement (+ receives, - pays)", title_justify="left")
        table.add_column("player")
        table.add_column("match total", justify="right")
        table.add_column("amount", justify="right")
        for name, total in zip(state.players, state.match_totals()):
            amount = payments.get(name, Fraction(0))
            style = "green" if amount > 0 else ("red" if amount < 0 else None)
            table.add_row(Text(name), str(total), Text(fmt_amount(amount), style=style or ""))
        return table

    def final(self, state: GameState) -> None:
        """The final scorecard, the match table and settlement when there is one, the winner."""
        multi_round = len(state.results) > 1
        title = "Final scorecard" + (f" (round {len(state.results)})" if multi_round else "")
        parts: list[Any] = [self.scorecard(state, preview=False, final=True, title=title)]
        if multi_round:
            parts.append(self.round_table(state))
        settle = self.settlement_table(state)
        if settle is not None:
            parts.append(settle)
        self.console.print(Group(*parts))
        winners = state.winners()
        last = state.results[-1] if state.results else None
        totals = dict(zip(state.players, state.match_totals()))
        if last is not None and last.instant_winner is not None and state.rounds == 1:
            self.say(f"Winner: {winners[0]}, at once (instant win)", "bold green")
        elif len(winners) == 1:
            self.say(f"Winner: {winners[0]} with {totals[winners[0]]}", "bold green")
        else:
            self.say(f"Tie at {totals[winners[0]]}: " + ", ".join(winners), "bold yellow")

    def instant_win(self, state: GameState, winner: int, what: str) -> None:
        """Announce a game won on one roll, with everyone's total at that moment."""
        self.say(f"{state.players[winner]} rolled {what}: an instant win!", "bold magenta")
        table = Table()
        table.add_column("player")
        table.add_column("total so far", justify="right")
        table.add_column("result")
        for i, (name, total) in enumerate(zip(state.players, state.results[-1].totals)):
            table.add_row(Text(name), str(total), Text("wins", style="bold green") if i == winner else "")
        self.console.print(table)


def _par(variant: Variant, ids: Sequence[str], need: int) -> Any:
    """For the classic upper bonus (face boxes, 63 = three of each): compare with 3 x face per filled box."""
    faces = {}
    for b in ids:
        box = variant.box(b)
        if box.pattern.kind != "face" or box.scorer.kind != "sum":
            return None
        faces[b] = box.pattern.params["face"]
    if sum(3 * f for f in faces.values()) != need:
        return None

    def par_for(card: Card) -> int:
        return sum(3 * faces[b] for b in ids if b in card.scores)

    return par_for
