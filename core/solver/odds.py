"""Odds: the chance that one roll, or the rest of a turn played for it, meets each row's pattern.

A roll meets a row when the row's declared pattern (`Variant.combination`) finds a combination holding at
least one die, so the answer comes from the variant itself; scoring rules (bonuses, jokers, served points)
never change it. A turn played for a row is the solver's own turn recursion (`numeric.reference.fold`) with
"these dice meet the pattern" (1 or 0) as the value of scoring: no second recursion.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np
from attrs import frozen

from ..errors import DicecupError
from ..language.dice import check_dice
from ..language.model import Variant
from ..locales import N_, Phrase
from ..numeric.dice import DiceGraph, graph_of
from ..numeric.reference import fold
from ..store import store_of
from .space import most_banked

__all__ = ["RowOdds", "Odds", "meets_table", "most_rolls", "odds"]


@frozen
class RowOdds:
    """One row's chances: `roll` after one more roll, `turn` by the end of the turn (played for it)."""

    row: str
    name: str
    served: bool  # the row scores differently when made on the turn's first roll
    met_now: bool | None  # the dice on the table meet it (None when there are none yet)
    roll: (
        float | None
    )  # one roll (from no dice: every die rolled; from dice: the best keep, one roll); None: no roll left
    turn: float  # the rest of the turn, each keep chosen for this row alone
    keep: tuple[int, ...] | None  # the dice to keep for it (from dice with rolls left; all of them once met)


@frozen
class Odds:
    """Every row's chances from one position: `dice` on the table (None: before the first roll), `rolls_left`."""

    variant: Variant
    dice: tuple[int, ...] | None
    rolls_left: int
    rows: tuple[RowOdds, ...]


def meets_table(variant: Variant) -> np.ndarray:
    """(full rolls in `DiceGraph` order, rows) of 1.0 where the roll meets the row's declared pattern, else 0.0.

    A row whose pattern every roll meets (`always`: chance) is met by every roll, an upper row (`face`) by any
    roll with a die of its face, and a served (first-roll) row as on any roll: its one-roll chance from a turn's
    start is the chance of serving it."""
    return _meets(variant).copy()


MEETS_KIND = "meets"
MEETS_KEPT = 16
"""Variants whose `meets_table` their engine keeps at most."""


def _meets(variant: Variant) -> np.ndarray:
    """`meets_table`, read-only, made once and kept by the variant's engine."""
    got: np.ndarray = store_of(variant).get(MEETS_KIND, variant.fingerprint, lambda: _meets_now(variant), MEETS_KEPT)
    return got


def _meets_now(variant: Variant) -> np.ndarray:
    rolls = variant.all_rolls()  # sorted, as the graph's full rolls are (TooLarge past MAX_ROLLS)
    boxes = [variant.row(r) for r in variant.rows]
    out = np.zeros((len(rolls), len(boxes)))
    for i, roll in enumerate(rolls):
        for j, box in enumerate(boxes):
            comb = variant.combination(box, roll)
            out[i, j] = 1.0 if comb else 0.0  # None (not met) and () (no die of it) both miss
    out.setflags(write=False)
    return out


def most_rolls(variant: Variant, from_dice: bool) -> int:
    """The most rolls a turn can still make: all of them before the first roll, one fewer after it,
    more where unused rolls are banked (as many as a card can have banked by its last turn)."""
    bank = most_banked(variant, len(variant.box_ids) - 1)
    return variant.rolls - (1 if from_dice else 0) + bank


def odds(
    variant: Variant, dice: Sequence[int] | None = None, rolls_left: int | None = None, graph: DiceGraph | None = None
) -> Odds:
    """Each row's chance of being met from a position.

    Without `dice`, the position is the start of a turn: `rolls_left` rolls to make (default the
    variant's rolls), `roll` is one roll of every die (the chance of serving the row) and `turn`
    the whole turn. With `dice` on the table, `rolls_left` rolls are still allowed (default: the
    turn's first roll was just made), `roll` is one more roll after the best keep for the row and
    `turn` is the rest of the turn. `graph`: the variant's dice graph, where the caller keeps one for many
    positions (its edges take a moment to build). DiceError for dice that do not fit, DicecupError for a bad
    number of rolls, TooLarge for dice with too many distinct rolls.
    """
    from_dice = dice is not None
    most = most_rolls(variant, from_dice)
    least = 0 if from_dice else 1
    left = (variant.rolls - 1 if from_dice else variant.rolls) if rolls_left is None else rolls_left
    if isinstance(left, bool) or not isinstance(left, int) or not least <= left <= most:
        what = N_("rolls left after these dice") if from_dice else N_("rolls to make (the turn's first included)")
        said = (
            N_("rolls_left must be {least}..{most} for {variant} (unused rolls are banked): {what}; got {got}")
            if variant.carry_over
            else N_("rolls_left must be {least}..{most} for {variant}: {what}; got {got}")
        )
        raise DicecupError(
            Phrase(said, least=least, most=most, variant=variant.id, what=Phrase(what), got=repr(rolls_left))
        )
    table = tuple(sorted(check_dice(tuple(dice), variant.dice, variant.faces))) if dice is not None else None
    meets = _meets(variant)
    if graph is None:
        graph = graph_of(variant)
    elif (graph.dice, graph.faces) != (variant.dice, variant.faces):
        raise DicecupError(
            f"the dice graph is of {graph.dice} dice with {graph.faces} faces; {variant.id} rolls "
            f"{variant.dice} with {variant.faces}: pass DiceGraph({variant.dice}, {variant.faces}) or none"
        )
    decisions = fold(graph, [meets] * (max(left, 1) + 1))  # entry k: k rolls left; each roll's value, each keep's
    probs = graph.roll_probs
    out = []
    for j, row in enumerate(variant.rows):
        box = variant.row(row)
        served = box.first_roll is not None
        if table is None:
            out.append(
                RowOdds(
                    row,
                    box.name,
                    served,
                    None,
                    float(probs @ meets[:, j]),
                    float(probs @ decisions[left - 1][0][:, j]),
                    None,
                )
            )
            continue
        at = graph.index[table] - int(graph.roll_rows[0])  # the full rolls are the graph's last rows, in order
        met = bool(meets[at, j])
        turn = float(decisions[left][0][at, j])
        one = float(decisions[1][0][at, j]) if left >= 1 else None
        keep = table if met or left == 0 else _best_keep(graph, decisions[left][1], table, j)
        out.append(RowOdds(row, box.name, served, met, one, turn, keep))
    return Odds(variant, table, left, tuple(out))


def _best_keep(graph: DiceGraph, keeps: np.ndarray | None, dice: tuple[int, ...], column: int) -> tuple[int, ...]:
    """The proper keep of `dice` worth most for this row (ties: more dice kept, then higher faces)."""
    assert keeps is not None  # a decision with rolls left has keeps
    best: tuple[float, int, tuple[int, ...]] | None = None
    for size in range(len(dice)):
        for kept in set(_sub_multisets(dice, size)):
            key = (round(float(keeps[graph.index[kept], column]), 12), size, kept)
            if best is None or key > best:
                best = key
    assert best is not None
    return best[2]


def _sub_multisets(dice: tuple[int, ...], size: int) -> list[tuple[int, ...]]:
    """Every sorted sub-multiset of `dice` with `size` dice (repeats allowed; the caller dedupes)."""
    return [tuple(sorted(c)) for c in itertools.combinations(dice, size)]
