"""The end of a game on one screen: the players ranked, each total in the parts players know (the card's
columns or sections, each bonus), the match's games and the settlement; the full cards stay one `c` away."""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

from rich.text import Text

from ..game.state import GameState
from ..language.card import Card
from ..language.model import Variant
from ..locales import _
from .grid import GridRow, cut, grid

__all__ = ["card_parts", "ranked", "results_lines", "fmt_amount", "figure_unit"]

#: a player's name is cut to this in the results table
NAME = 16


def fmt_amount(value: Fraction) -> str:
    """A settlement amount: `+12`, `-7`, or `+12.33` when it is not whole."""
    if value.denominator == 1:
        return f"{int(value):+d}"
    return f"{float(value):+.2f}"


def figure_unit(variant: Variant, figure: str) -> str:
    """How a figure's amount is written after the number: nothing for the score, ` points` for Balut's points."""
    if figure == "score":
        return ""
    return " " + next(f.name.lower() for f in variant.figures if f.id == figure)


def card_parts(variant: Variant, card: Card) -> list[tuple[str, int]]:
    """A card's score in parts that add up to its total: each card column (or section), then each bonus outside them."""
    v = variant
    awards = [a for a in (*card.awards, *v.end_bonuses(card)) if a.figure == "score"]
    if len(v.columns) > 1:
        totals = v.column_totals(card)
        parts = [(c.id, totals[c.id]) for c in v.columns]
        awards = [a for a in awards if a.column not in totals]
    else:
        sections = list(v.sections())
        parts = [
            (
                v.section_names.get(name, name) if len(sections) > 1 else _("boxes"),
                sum(v.written(b.id, card.scores.get(b.id, 0)) for b in boxes),
            )
            for name, boxes in sections
        ]
    bonus: dict[str, list] = {b.id: [b.name, 0] for b in v.bonuses if b.figure == "score" and len(v.columns) == 1}
    for a in awards:
        bonus.setdefault(a.id, [a.name or a.id, 0])[1] += a.points
    return parts + [(name, points) for name, points in bonus.values()]


def ranked(state: GameState) -> list[tuple[int, int]]:
    """(place, player) best first: an instant winner of a one-game match, then by the variant's ranking keys."""
    keys = [state.match_totals(f) for f in state.variant.rank_by]
    last = state.results[-1] if state.results else None
    first = last.instant_winner if last is not None and state.rounds == 1 else None

    def key(i: int) -> tuple[int, ...]:
        return (i != first, *(-k[i] for k in keys))

    order = sorted(range(len(state.players)), key=key)
    out: list[tuple[int, int]] = []
    for n, i in enumerate(order):
        place = n + 1 if n == 0 or key(i) != key(order[n - 1]) else out[-1][0]
        out.append((place, i))
    return out


def _one_game(state: GameState, cards: Sequence[Card]) -> tuple[list[str], list[list[Text]]]:
    """Heads and each player's cells for one game: its parts, TOTAL, and the other figures."""
    v = state.variant
    parts = [card_parts(v, c) for c in cards]
    heads = [name for name, _points in parts[0]] + [_("TOTAL")] + [f.name for f in v.figures]
    cells = [
        [Text(str(p)) for _name, p in part]
        + [Text(str(v.total(c)), style="bold")]
        + [Text(str(v.figure_totals(c)[f.id])) for f in v.figures]
        for part, c in zip(parts, cards, strict=True)
    ]
    return heads, cells


def _match(state: GameState, width: int) -> tuple[list[str], list[list[Text]], str]:
    """Heads and cells for a match of several games: each game's total (when they fit), the match's figures."""
    v = state.variant
    games = state.results
    shown = games if 8 + 6 * (len(games) + 2 + len(v.figures)) <= width else []
    heads = [f"g{k}" for k in range(1, len(shown) + 1)] + [_("match")] + [f.name for f in v.figures]
    figures = [state.match_totals(f.id) for f in v.figures]
    cells = []
    for i, total in enumerate(state.match_totals()):
        row = [Text(f"{r.totals[i]}" + ("*" if r.instant_winner == i else "")) for r in shown]
        cells.append([*row, Text(str(total), style="bold"), *(Text(str(f[i])) for f in figures)])
    n = len(games)
    note = _("g1 to g{n}: each game's total").format(n=n) if shown else _("{n} games; --json lists each").format(n=n)
    if any(r.instant_winner is not None for r in shown):
        note += _("; * won at once (instant win)")
    return heads, cells, note


def results_lines(
    state: GameState, cards: Sequence[Card] | None, width: int, unicode: bool = True
) -> tuple[list[Text], str]:
    """The results table (players ranked once the match is over) and a note to print under it.

    `cards`: the game just finished (its parts are shown); None for a match's end after several games.
    """
    v = state.variant
    if cards is None:
        heads, cells, note = _match(state, width)
    else:
        (heads, cells), note = _one_game(state, cards), ""
    order = ranked(state) if state.over else [(0, i) for i in range(len(state.players))]
    settle = state.settlement()
    if settle is not None:
        heads.append(_("settles"))
        for i, name in enumerate(state.players):
            amount = settle.get(name, Fraction(0))
            cells[i].append(Text(fmt_amount(amount), style="green" if amount > 0 else ("red" if amount < 0 else "")))
        note = "; ".join(filter(None, [note, _("settles: + receives, - pays")]))
    rows = [GridRow(str(place) if place else "", cut(state.players[i], NAME, unicode), cells[i]) for place, i in order]
    player = _("player")
    lines = grid(("#" if state.over else "", player), heads, rows, width, len(rows) + 1, unicode)
    if lines is None and cards is not None and len(heads) > 2:  # too wide: the parts give way to the totals
        parts = len(card_parts(v, cards[0]))
        keep = [k for k in range(len(heads)) if k >= parts]  # TOTAL, the figures and the settlement
        heads = [heads[k] for k in keep]
        rows = [GridRow(r.number, r.label, [r.cells[k] for k in keep]) for r in rows]
        lines = grid(("#" if state.over else "", player), heads, rows, width, len(rows) + 1, unicode)
    return lines or grid(("", player), heads, rows, width, None, unicode) or [], note
