"""What a simulation produces: per-game totals, box scores, bonus points and times earned, events, as arrays."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from attrs import frozen

from ..language.model import Award, Card, Variant

OnGamesDone = Callable[[int], None]
"""Told the number of games a run has finished, as it goes (a simulation's progress callback)."""

__all__ = ["OnGamesDone", "SimResult", "bonus_columns", "card_row", "event_columns"]


@frozen(eq=False)
class SimResult:
    """N finished solitaire games: row g of every array describes game `first_game + g` of the run."""

    variant: Variant
    strategy: str
    seed: int
    method: str  # "batched" (numpy tables) or "engine" (GameState, game by game)
    totals: np.ndarray  # int64 [N]: Variant.total of each final card
    boxes: np.ndarray  # int64 [N, boxes]: the score in each box, in variant.box_ids order
    bonus_ids: tuple[str, ...]
    bonus_names: tuple[str, ...]
    bonus_points: np.ndarray  # int64 [N, bonuses]: points of each award id (summed per game)
    # int64 [N, bonuses]: times each award id was earned, recorded as played: every scoring that gave
    # the id nonzero points counts once, and so does every end bonus of the id with nonzero points
    bonus_counts: np.ndarray
    # events the rules reported at scorings (`Variant.turn_events`): declared ids first, then any other
    event_ids: tuple[str, ...]
    event_names: tuple[str, ...]
    event_counts: np.ndarray  # int64 [N, events]: how many times each event happened in each game
    first_game: int = 0  # row g is game first_game + g of the run (a run's range: `simulate(..., first_game=)`)

    @property
    def games(self) -> int:
        return int(self.totals.shape[0])


def bonus_columns(variant: Variant, extra: Sequence[Award] = ()) -> tuple[list[str], list[str]]:
    """Award ids to report: every declared bonus first, then any other id a plugin awards."""
    ids = [b.id for b in variant.declared_bonuses]
    names = [b.name for b in variant.declared_bonuses]
    for a in extra:
        if a.id not in ids:
            ids.append(a.id)
            names.append(a.name or a.id)
    return ids, names


def event_columns(variant: Variant, seen: Sequence[str] = ()) -> tuple[list[str], list[str]]:
    """Event ids to report: every id the rules declare first, then any other id they reported."""
    declared = variant.event_names()
    ids = list(declared) + [e for e in dict.fromkeys(seen) if e not in declared]
    return ids, [declared.get(e, e) for e in ids]


def card_row(variant: Variant, card: Card) -> tuple[list[int], list[Award]]:
    """A finished card as box scores as written (box_ids order) and every award it holds, end bonuses included."""
    scores = [int(variant.written(b, card.scores[b])) for b in variant.box_ids]
    return scores, list(card.awards) + list(variant.end_bonuses(card))
