"""Plain-text tables laid out to a size: numbered, labelled rows of right-aligned cells, in one block or
two halves side by side, so that a scorecard or a results table fits the terminal (80 x 24 at least)."""

from __future__ import annotations

from collections.abc import Sequence

from attrs import field, frozen
from rich.text import Text

__all__ = ["SCREEN_LINES", "GridRow", "grid", "cut"]

#: the screen the game is laid out for (80 x 24): one decision's screen fits this many lines
SCREEN_LINES = 24


def _texts(cells: Sequence[Text | str]) -> tuple[Text, ...]:
    return tuple(c if isinstance(c, Text) else Text(c) for c in cells)


@frozen
class GridRow:
    """One line of a table: its number (typed to score a box; blank on bonus and total lines), label and cells."""

    number: str
    label: str
    cells: tuple[Text, ...] = field(converter=_texts)
    style: str = ""


def cut(text: str, width: int, unicode: bool = True) -> str:
    """`text` cut to `width` characters, an ellipsis marking the cut."""
    if len(text) <= width:
        return text
    return text[: max(0, width - 1)] + ("…" if unicode else ".")


def grid(
    corner: tuple[str, str],
    heads: Sequence[str],
    rows: Sequence[GridRow],
    width: int,
    lines: int | None = None,
    unicode: bool = True,
) -> list[Text] | None:
    """`rows` under a head line (`corner`: the number's and the label's heads), within `width` columns.

    With `lines` (the head line included), one block when it fits, else two halves side by side; None
    when neither fits. Without, two halves when the labels keep 10 characters, else one block (cut to fit).
    """
    nw = max([len(corner[0])] + [len(r.number) for r in rows])
    widths = [max([len(h)] + [r.cells[j].cell_len for r in rows]) for j, h in enumerate(heads)]
    fixed = nw + 1 + sum(w + 1 for w in widths)
    natural = max([len(corner[1])] + [len(r.label) for r in rows])
    for halves in (2, 1) if lines is None else (1, 2):
        if lines is not None and -(-len(rows) // halves) + 1 > lines:
            continue
        room = (width - 3 * (halves - 1)) // halves - fixed
        if room < min(natural, 10 if lines is None and halves == 2 else 6):
            continue
        return _draw(corner, heads, rows, (nw, min(natural, room), widths), halves, unicode)
    if lines is None:
        return _draw(corner, heads, rows, (nw, max(4, min(natural, width - fixed)), widths), 1, unicode)
    return None


def _draw(
    corner: tuple[str, str],
    heads: Sequence[str],
    rows: Sequence[GridRow],
    sizes: tuple[int, int, list[int]],
    halves: int,
    unicode: bool,
) -> list[Text]:
    """The head and rows drawn at these sizes (number, label, cells), in `halves` blocks side by side."""
    nw, lw, widths = sizes

    def line(number: str, label: str, cells: Sequence[Text], style: str) -> Text:
        out = Text(f"{number:>{nw}} {cut(label, lw, unicode):<{lw}}", style=style)
        for cell, w in zip(cells, widths, strict=True):
            out.append(" " * (w + 1 - cell.cell_len))
            out.append_text(cell)
        return out

    head = line(corner[0], corner[1], [Text(h) for h in heads], "dim")
    body = [line(r.number, r.label, r.cells, r.style) for r in rows]
    if halves == 1:
        return [head, *body]
    split = -(-len(body) // 2)
    left, right = body[:split], body[split:]
    pad = head.cell_len
    bar = " │ " if unicode else " | "
    out = [Text.assemble(head, bar, head)]
    for k, row in enumerate(left):
        joined = Text.assemble(row, " " * (pad - row.cell_len))
        if k < len(right):
            joined.append(bar)
            joined.append_text(right[k])
        out.append(joined)
    for t in out:
        t.rstrip()
    return out
