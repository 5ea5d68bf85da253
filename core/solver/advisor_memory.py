"""What the advisor remembers of a variant between cards, held by the engine that compiled it.

One `AdvisorMemory` per variant fingerprint, kept in the engine's store (`store.Store`, bounded): the
score and legality tables it learns, the solve's complete tables, how many cards it was asked, and the last
few turns it folded. Nothing lives at module level, so a caller that lets go of its engine lets go of all
of it, and a test that wants a fresh advisor calls `forget`.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from ..store import store_of

__all__ = ["KIND", "LATER_KEPT", "VARIANTS_KEPT", "AdvisorMemory", "forget", "memory_of"]

KIND = "advisor"
VARIANTS_KEPT = 16
"""Variants an engine's advisor remembers at most (the least recently advised is let go of first)."""
LATER_KEPT = 64
"""Turn memos (`AdvisorMemory.later`) kept per variant: one turn's decisions share them."""


class AdvisorMemory:
    """The advisor's memory of one variant (fields are replaced whole, so a thread never reads half of one)."""

    def __init__(self) -> None:
        self.asked = 0
        """Cards advised in this process (the score tables answer from `advice_scoring.TABLES_AFTER` on)."""
        self.untabulable = False
        """The rules read more than the score tables can hold: the engine answers."""
        self.situated = False
        """Legality reads the game around the card: the engine answers it per roll."""
        self.tables: tuple[Any, ...] | None = None
        """(score tables, legal tables, each box's multiplier), made at first use."""
        self.kept: tuple[int, int, int] | None = None
        """How much the tables held when last read from or written to the cache."""
        self.classes: tuple[Any, ...] | None = None
        """(score tables, legal tables, arrays per score class, per pair of classes)."""
        self.card_tables: tuple[Any, int | None] | None = None
        """(the solve's complete tables and their shared layer, or None; the id of the search they came from)."""
        self.recalled: tuple[Any] | None = None
        """(the complete tables read by `recall_tables`, or None), not yet checked against a solution."""
        self.coding: Any = None
        """The class coding of the variant's cards (what the complete tables are keyed on)."""
        self.checked: Any = None
        """The card last checked against the variant (`Variant.check_card`)."""
        self.checks: Any = None
        """The records the card kernel's argument check passed (`numeric.compiled.RecordChecks`), made at first use."""
        self.later: OrderedDict[tuple, tuple] = OrderedDict()
        """Per (what, solution, card, ...): what one turn's decisions ask again (first in, first out)."""

    def remember(self, key: tuple, entry: tuple) -> None:
        """Keep `entry` under `key` in `later`, as the most recent, within `LATER_KEPT`."""
        self.later[key] = entry
        self.later.move_to_end(key)
        while len(self.later) > LATER_KEPT:
            self.later.popitem(last=False)


def memory_of(variant: Any) -> AdvisorMemory:
    """The advisor's memory of `variant`, in the store of the engine that compiled it (made at first use)."""
    return store_of(variant).get(KIND, variant.fingerprint, AdvisorMemory, keep=VARIANTS_KEPT)


def forget(variant: Any) -> None:
    """Let go of all the advisor remembers of `variant` in this process (the disk cache is kept)."""
    store_of(variant).drop(KIND, variant.fingerprint)
