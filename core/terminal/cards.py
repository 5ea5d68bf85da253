"""Scorecards drawn to fit the screen: the decision screen's card of the player to move, and the whole card
(`c`): everyone's side by side, or one player's; rows x columns where the card has columns.

Open boxes show what the dice would score there now (in brackets where scores share the cell), `-`
where the rules do not allow them now.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.text import Text

from ..game.state import GameState
from ..language.card import Card
from ..language.describe import bonus_cells
from ..language.model import Variant
from ..locales import _
from .grid import GridRow, cut, grid

__all__ = ["live", "now_cell", "decision_card", "whole_card", "card_rows"]

#: a player's name as a column head is cut to this
HEAD = 8


def card_rows(variant: Variant, card: Card) -> dict[str, Any]:
    """One card as numbers: boxes as written, bonuses by id, totals (what `play --json` reports)."""
    bonuses = {bid: pts for bid, _name, _text, pts in bonus_cells(variant, card, final=True)}
    out: dict[str, Any] = {"boxes": variant.written_scores(card), "bonuses": bonuses, "total": variant.total(card)}
    if len(variant.columns) > 1:
        out["columns"] = variant.column_totals(card)
    if variant.figures:
        out["figures"] = variant.figure_totals(card)
    return out


def live(state: GameState) -> bool:
    """Whether the dice on the table can be scored now (so the card shows what they would score)."""
    return not state.over and state.held is None and bool(state.dice)


def _now(state: GameState) -> tuple[set[str], int | None]:
    legal = set(state.legal_boxes())
    return legal, max((state.score_preview(b).points for b in legal), default=None)


def now_cell(state: GameState, box: str, legal: set[str], best: int | None, bracket: bool = False) -> Text:
    """What the dice would score in open `box` now (the best in green), `-` where the rules forbid it now."""
    if box in state.card.scores:
        return Text("")
    if box not in legal:
        return Text("-", style="dim")
    res = state.score_preview(box)
    text = str(res.written) + "".join(f" {a.points:+d}" for a in res.awards)
    style = "bold green" if res.points == best and res.points > 0 else ("dim" if res.points <= 0 else "cyan")
    return Text(f"({text})" if bracket else text, style=style)


def _written(variant: Variant, card: Card, box: str) -> str:
    val = card.scores.get(box)
    return "" if val is None else str(variant.written(box, val))


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


def _player_rows(state: GameState, players: Sequence[int], now: bool) -> tuple[list[str], list[GridRow]]:
    """A one-column card of these players side by side (and what the dice score now, with `now`)."""
    v = state.variant
    legal, best = _now(state) if now else (set(), None)
    tail = [Text("")] if now else []
    rows = []
    for i, b in enumerate(v.boxes, 1):
        cells = [Text(_written(v, state.cards[p], b.id)) for p in players]
        rows.append(GridRow(str(i), b.name, cells + ([now_cell(state, b.id, legal, best)] if now else [])))
    bonus: dict[str, tuple[str, list[str]]] = {}
    for k, p in enumerate(players):
        for bid, name, text, _points in bonus_cells(v, state.cards[p], final=state.over):
            bonus.setdefault(bid, (name, [""] * len(players)))[1][k] = text
    style = "" if state.over else "dim"
    rows += [GridRow("", name, [*map(Text, texts), *tail], style) for name, texts in bonus.values()]
    for f in v.figures:
        rows.append(GridRow("", f.name, [Text(str(v.figure_totals(state.cards[p])[f.id])) for p in players] + tail))
    rows.append(GridRow("", _("TOTAL"), [Text(str(v.total(state.cards[p]))) for p in players] + tail, "bold"))
    heads = [cut(state.players[p], HEAD) for p in players] + ([_("now")] if now else [])
    return heads, rows


def _column_rows(state: GameState, player: int, now: bool, whole: bool) -> tuple[list[str], list[GridRow]]:
    """One player's card as rows x columns; `whole` adds every bonus and figure (else the totals only).

    A bonus counting one row across the columns (Balut's `Fours 52+`) goes in a side column at the end of
    its row, named after the figure it counts in (`Points`).
    """
    v = state.variant
    card = state.cards[player]
    legal, best = _now(state) if now else (set(), None)
    attached = _row_bonuses(v) if whole else {}
    texts = {bid: text for bid, _name, text, _points in bonus_cells(v, card, final=state.over)}
    figures = {b.figure for b in v.bonuses if b.id in attached.values()}
    side = next((f.name for f in v.figures if figures == {f.id}), _("bonus")) if attached else None
    extra = [""] if side is not None else []
    rows = []
    for i, row in enumerate(v.rows, 1):
        cells = []
        for col in v.columns:
            box = f"{col.id}.{row}"
            if box in card.scores:
                cells.append(Text(_written(v, card, box), style="bold"))
            else:
                cells.append(now_cell(state, box, legal, best, bracket=True) if now else Text(""))
        if side is not None:
            cells.append(Text(texts.pop(attached[row], "") if row in attached else "", style="magenta"))
        rows.append(GridRow(str(i), v.row(row).name, cells))
    per_column: dict[str, tuple[str, dict[str, str]]] = {}
    for b in v.column_bonuses if whole else ():
        name = b.name.rsplit(" (", 1)[0]
        per_column.setdefault(b.id.split(".", 1)[1], (name, {}))[1][b.column or ""] = texts.pop(b.id, "")
    for name, by_column in per_column.values():
        rows.append(GridRow("", name, [by_column.get(c.id, "") for c in v.columns] + extra, "dim"))
    totals = v.column_totals(card)
    rows.append(GridRow("", _("column total"), [str(totals[c.id]) for c in v.columns] + extra, "bold"))
    in_side = {f.id for f in v.figures if f.name == side}

    def place(text: str, figure: str) -> list[str]:
        """Cells putting `text` under the last card column, or in the side column for its figure."""
        pad = [""] * (len(v.columns) - 1)
        return [*pad, "", text] if side is not None and figure in in_side else [*pad, text, *extra]

    if whole:
        figure_of = {b.id: b.figure for b in v.bonuses}
        for bid, text in texts.items():
            if bid not in {b.id for b in v.column_bonuses}:
                name = next((b.name for b in v.bonuses if b.id == bid), bid)
                rows.append(GridRow("", name, place(text, figure_of.get(bid, "score"))))
        for f in v.figures:
            rows.append(GridRow("", f.name, place(str(v.figure_totals(card)[f.id]), f.id), "bold"))
    rows.append(GridRow("", _("TOTAL"), place(str(v.total(card)), "score"), "bold"))
    return [f"{c.id:>3}" for c in v.columns] + ([side] if side is not None else []), rows


def decision_card(state: GameState, width: int, unicode: bool = True) -> list[Text]:
    """The player to move's card in few lines: every box with its score, or what the dice would score now.

    Boxes run in two halves side by side when they fit the width. One card column shows each box's score
    under `card` and what the dice would score under `now`; several columns hold scores and `(n)` previews.
    """
    v = state.variant
    if len(v.columns) > 1:
        heads, rows = _column_rows(state, state.current, live(state), whole=False)
        return grid(("", _("row")), heads, rows, width, None, unicode) or []
    card, now = state.card, live(state)
    legal, best = _now(state) if now else (set(), None)
    rows = [
        GridRow(str(i), b.name, [_written(v, card, b.id), now_cell(state, b.id, legal, best) if now else ""])
        for i, b in enumerate(v.boxes, 1)
    ]
    rows += [GridRow("", name, [text, ""], "dim") for _bid, name, text, _points in bonus_cells(v, card, final=False)]
    rows.append(GridRow("", _("TOTAL"), [str(v.total(card)), ""], "bold"))
    return grid(("", _("box")), [_("card"), _("now")], rows, width, None, unicode) or []


def whole_card(
    state: GameState, player: int | None, width: int, lines: int, unicode: bool = True, default: int | None = None
) -> tuple[list[Text], int | None]:
    """`c`: the whole card within `width` x `lines`, and whose it is (None: everyone's side by side, when the
    card has one column, fits, and no `player` is asked; else `player`'s, by default `default`'s or the
    player to move's)."""
    v = state.variant
    columns = len(v.columns) > 1
    if not columns and player is None and len(state.players) > 1:
        heads, rows = _player_rows(state, range(len(state.players)), live(state))
        fit = grid(("", _("box")), heads, rows, width, lines, unicode)
        if fit is not None:
            return fit, None
    p = player if player is not None else state.current if default is None else default
    now = live(state) and p == state.current
    heads, rows = _column_rows(state, p, now, whole=True) if columns else _player_rows(state, [p], now)
    corner = ("", _("row") if columns else _("box"))
    return grid(corner, heads, rows, width, lines, unicode) or grid(corner, heads, rows, width, None, unicode) or [], p
