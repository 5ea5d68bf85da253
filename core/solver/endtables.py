"""The end bonuses of full cards as the solver knows them, by state: read off the rules model once, kept in the
strategy table's file (`solver.cache`), so that a later process plays a run's end bonuses from them without
learning the rules again.

A kept table is read back only from a signed file, and even then checked against the variant's state coding
before use (`EndAwards.decode`): its shapes, its axes and its points bounded, anything else refused.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from ..numeric.coding import StateIndex
    from .rules import RuleModel
    from .space import StateSpace

__all__ = ["EndAwards", "TerminalAxes", "MAX_CELLS"]

MAX_CELLS = 1 << 16
"""The most cells (flag codes x group totals, all awards together) a table file keeps (more: not kept)."""
_MAX_POINTS = 1 << 40


class EndAwards:
    """The end bonuses of full cards per award id, each a table by flag code and each threshold group's total
    (`RuleModel.terminal_awards`), and where a state's cell is in them (`TerminalAxes`). Read off the rules
    model once and kept in the strategy table's file, so that a later process reads a run's end bonuses
    without learning the rules again."""

    def __init__(self, tables: dict[str, np.ndarray], axes: TerminalAxes) -> None:
        self.tables, self.axes = tables, axes

    def of(self, codes: np.ndarray, progress: np.ndarray) -> dict[str, np.ndarray] | None:
        """Each award's points [states] of full-card states (codes, clamped group totals); None where a state
        falls outside the tables (they were not made for this coding: the caller asks the engine's tables)."""
        if not self.tables:
            return {}
        at = self.axes.index(codes, progress)
        shape = next(iter(self.tables.values())).shape
        if len(codes) and any(int(a.min()) < 0 or int(a.max()) >= n for a, n in zip(at, shape, strict=True)):
            return None
        return {aid: t[at].astype(np.int64) for aid, t in self.tables.items()}

    def encode(self) -> dict[str, Any] | None:
        """The table as a JSON value for a file's header, or None when it has more than MAX_CELLS cells."""
        shape = next(iter(self.tables.values())).shape if self.tables else (1,) * (1 + len(self.axes.lows))
        if sum(t.size for t in self.tables.values()) > MAX_CELLS:
            return None
        return {
            "nb": self.axes.nb,
            "lows": list(self.axes.lows),
            "tracked": list(self.axes.tracked),
            "shape": list(shape),
            "awards": {aid: t.astype(np.int64).reshape(-1).tolist() for aid, t in self.tables.items()},
        }

    @classmethod
    def decode(cls, doc: object, index: StateIndex) -> EndAwards:
        """The table `encode` gave, checked against the state coding `index` it is used with (its boxes and
        tracked groups) and bounded; ValueError where it does not fit. (A state outside its cells is caught
        where it is looked up: `of`.)"""
        if not isinstance(doc, dict) or set(doc) != {"nb", "lows", "tracked", "shape", "awards"}:
            raise ValueError("the end bonuses are not a table")
        nb, lows, tracked, shape, awards = (doc[k] for k in ("nb", "lows", "tracked", "shape", "awards"))
        ints = (lows, tracked, shape)
        if not all(isinstance(x, list) and all(type(v) is int for v in x) for x in ints) or type(nb) is not int:
            raise ValueError("the end bonuses' axes are not whole numbers")
        if any(abs(lo) >= _MAX_POINTS for lo in lows) or any(not 1 <= n <= MAX_CELLS for n in shape):
            raise ValueError("the end bonuses' axes are out of range")
        if not isinstance(awards, dict):
            raise ValueError("the end bonuses are not a table by award")
        groups = len(index.groups)
        if nb != index.nb or len(lows) != len(tracked) or len(shape) != 1 + len(lows):
            raise ValueError("the end bonuses' axes do not fit the state coding")
        if sorted(c for c in tracked if c >= 0) != list(range(groups)) or any(c < -1 for c in tracked):
            raise ValueError("the end bonuses' groups do not fit the state coding")
        cells = 1
        for n in shape:  # (bounded at each step: a long list of large sizes cannot grow the product far)
            cells *= n
            if cells * max(1, len(awards)) > MAX_CELLS:
                raise ValueError("the end bonuses' table has too many cells")
        tables = {}
        for aid, flat in awards.items():
            ok = isinstance(flat, list) and all(type(v) is int and abs(v) < _MAX_POINTS for v in flat)
            if not ok or len(flat) != cells:
                raise ValueError("an end bonus's points are not a table of whole numbers")
            tables[aid] = np.array(flat, dtype=np.int64).reshape(shape)
        return cls(tables, TerminalAxes(nb, tuple(lows), tuple(tracked)))


class TerminalAxes:
    """Where full-card states (codes, clamped totals) sit in the end-of-game tables' axes: the flag code, then
    each threshold group's total less its lowest (`lows`), read from the state's tracked totals at column
    `tracked` (-1: a group the space does not track changes no end bonus, and its first total stands for all)."""

    def __init__(self, nb: int, lows: tuple[int, ...], tracked: tuple[int, ...]) -> None:
        self.nb, self.lows, self.tracked = nb, lows, tracked

    @classmethod
    def of_model(cls, model: RuleModel, space: StateSpace) -> TerminalAxes:
        """The axes of the rules model's end-of-game tables, for the states of `space`."""
        ids = space.group_ids
        tracked = tuple(ids.index(gi) if gi in ids else -1 for gi in range(len(model.all_groups)))
        return cls(model.nb, tuple(lo for lo, _ in model.group_ranges), tracked)

    def index(self, codes: np.ndarray, progress: np.ndarray) -> tuple:
        """The cell of each state, as a tuple of index arrays (one per axis)."""
        at: list[np.ndarray] = [codes >> self.nb]
        for lo, col in zip(self.lows, self.tracked, strict=True):
            at.append(progress[:, col] - lo if col >= 0 else np.zeros(len(codes), dtype=np.int64))
        return tuple(at)
