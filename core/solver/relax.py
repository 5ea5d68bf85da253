"""The strong strategy for games beyond exact reach: the card split into parts, each solved exactly.

A `Relaxation` values the rest of a card as the sum of its parts' exact values: each column of a column game,
or each section of a one-column card, becomes a variant of its own (`Variant.derive`). What a part cannot
hold for the solver (a fill order with announcements, a bonus that reads box values) is left out of it
(`Part.dropped`). Where no rule crosses parts, playing each part alone is a real strategy, so the sum is its
value, and choosing each turn's best move against it (`StrongBot`) does at least as well.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Mapping, Sequence
from functools import cached_property
from typing import Any

import numpy as np
from attrs import frozen

from ..errors import VariantError
from ..game.actions import Action, Keep
from ..game.state import GameState
from ..language.model import Card, Variant
from ..numeric.coding import EMPTY, StateIndex
from ..numeric.dice import DiceGraph, graph_of
from .advice import Option, advise
from .advice_scoring import Values
from .errors import SolverError
from .solve import Solution

__all__ = [
    "Part",
    "Relaxation",
    "PART_MAX_STATES",
    "best_move",
    "check_relaxable",
    "load_part",
    "profile_cells",
    "progress_levels",
]

#: A part is solved only when it is this small (parts are solved on first use, and cached like any table).
PART_MAX_STATES = 4_000_000
#: Threshold progress levels tried (finest first), and the most cells a correction table may have with them.
PROGRESS_STEPS = (12, 8, 4, 2, 1)
PROGRESS_CELLS = 20_000
_MAX_ATTEMPTS = 64  # derivations tried while leaving out what a part cannot hold


@frozen
class Part:
    """One exactly solved piece of a card: `boxes[i]` is the full card's box of the part's box i."""

    name: str
    solution: Solution
    boxes: tuple[int, ...]
    weight: int  # the column's multiplier: the part is solved with multiplier 1
    dropped: tuple[str, ...]  # what of the real rules the part leaves out

    @property
    def variant(self) -> Variant:
        return self.solution.variant


Solver = Callable[[Variant], Solution]


def load_part(variant: Variant) -> Solution:
    from .cache import load_or_solve

    return load_or_solve(variant, max_states=PART_MAX_STATES)[0]


class Relaxation:
    """The value of the rest of a card as the sum of its parts' exact values; `advise` takes it in
    place of a `Solution` (it has the same `futures`, `graph`, `banks` and `row_of`)."""

    banks = 1

    def __init__(self, variant: Variant, parts: Sequence[Part], correction: np.ndarray | None = None) -> None:
        self.variant = variant
        self.parts = tuple(parts)
        self.ids = variant.box_ids
        self.index = {b: i for i, b in enumerate(self.ids)}
        self.profile_shape = tuple(len(p.boxes) + 1 for p in self.parts)  # open boxes per part: 0 .. all
        # each threshold group of each part (the upper total against 63): where it stands, in `steps` levels
        self.tracks = tuple((n, g) for n, p in enumerate(self.parts) for g in range(p.solution.index.G))
        self.steps = progress_steps(profile_cells(self.profile_shape), len(self.tracks))
        self.shape = self.profile_shape + ((self.steps + 2,) * len(self.tracks) if self.steps else ())
        if correction is not None and correction.shape != (profile_cells(self.shape),):
            raise SolverError(f"{variant.id}: a correction of {correction.shape} for {self.shape} cells")
        self.correction = correction  # added by open boxes per part and threshold progress (`correction.fit`), or None

    def corrected(self, correction: np.ndarray | None) -> Relaxation:
        """The same parts with another correction (None: the plain sum)."""
        return Relaxation(self.variant, self.parts, correction)

    def profiles(self, rows: np.ndarray) -> np.ndarray:
        """The profile of each card row: its open boxes counted part by part, as a cell of `profile_shape`."""
        counts = np.stack([(rows[:, p.boxes] == EMPTY).sum(axis=1) for p in self.parts])
        return np.ravel_multi_index(tuple(counts), self.profile_shape)

    def cells(self, rows: np.ndarray) -> np.ndarray:
        """The cell of each card row in the correction's table: its profile, then where each threshold
        group stands (`progress_levels`); a table of profiles alone where `steps` is 0."""
        cell = self.profiles(rows)
        if not self.steps:
            return cell
        for n, g in self.tracks:
            part = self.parts[n]
            cell = cell * (self.steps + 2) + progress_levels(part.solution.index, rows[:, part.boxes], g, self.steps)
        return cell

    @classmethod
    def of(cls, variant: Variant, solver: Solver = load_part) -> Relaxation:
        """Split `variant` into parts (its columns, else its sections) and solve each (`solver`)."""
        check_relaxable(variant)
        made: dict[str, tuple[Solution, tuple[str, ...]]] = {}  # parts alike (columns that differ by name) once
        parts = []
        for name, overlay, boxes, weight in _split(variant):
            key = json.dumps(overlay, sort_keys=True)
            if key not in made:
                made[key] = _part(variant, name, overlay, solver)
            solution, dropped = made[key]
            rows = tuple(variant.boxes[i].row or variant.boxes[i].id for i in boxes)
            if solution.variant.box_ids != rows:  # the part must hold these boxes, in this order
                raise SolverError(f"{variant.id}: its part {name!r} holds {solution.variant.box_ids}, not {rows}")
            parts.append(Part(name, solution, boxes, weight, dropped))
        return cls(variant, parts)

    @cached_property
    def graph(self) -> DiceGraph:
        return graph_of(self.variant)

    def bank_after(self, rolls_left: int) -> int:
        return 0

    def row_of(self, card: Card) -> np.ndarray:
        """A card as a (1, boxes) row of box scores, `EMPTY` where open."""
        row = np.full((1, len(self.ids)), EMPTY, dtype=np.int64)
        for box, score in card.scores.items():
            row[0, self.index[box]] = score
        return row

    def values(self, rows: np.ndarray) -> np.ndarray:
        """The estimated points to come from the start of a turn, for card rows (rows, boxes): the parts'
        values weighted, plus the correction of the rows' cells (open boxes per part, threshold progress).

        A part's state its own rules never reach (a real rule let a box be filled its
        part's rules would not) counts as the worst value that part has among `rows`."""
        total = np.zeros(len(rows)) if self.correction is None else self.correction[self.cells(rows)]
        for part in self.parts:
            sol = part.solution
            got = sol.column(0)[sol.index.locate(rows[:, part.boxes])]
            bad = np.isnan(got)
            if bad.any():
                got[bad] = np.nanmin(got) if not bad.all() else 0.0
            total += part.weight * got
        return total

    def future(self, card: Card, bank: int = 0) -> float:
        """The estimate of the points still to come from the start of a turn on `card` (CardError where the card
        does not fit the variant)."""
        self.variant.check_card(card)
        return float(self.values(self.row_of(card))[0])

    def futures(self, card: Card, fills: Sequence[tuple[str, int]], bank: int = 0) -> np.ndarray:
        """The estimate after filling each (box, score) of `fills` on `card`, at once."""
        rows = np.repeat(self.row_of(card), len(fills), axis=0)
        for i, (box, score) in enumerate(fills):
            rows[i, self.index[box]] = score
        return self.values(rows) if len(fills) else np.zeros(0)

    @property
    def expected_score(self) -> float:
        """The estimate from the empty card (with the correction: what the strong bot expects to score)."""
        return self.future(Card())

    @property
    def floor(self) -> float:
        """What playing the parts one by one is worth from the empty card: a real strategy's mean wherever
        no rule crosses parts, and so a floor under the uncorrected bot's."""
        return self.corrected(None).future(Card())

    def describe(self) -> list[str]:
        """A line per part: its boxes, weight, states, value and what it leaves out."""
        out = []
        for p in self.parts:
            left = f"; leaves out {', '.join(p.dropped)}" if p.dropped else ""
            out.append(
                f"{p.name}: {len(p.boxes)} boxes x{p.weight}, {p.solution.states:,} states, "
                f"worth {p.weight * p.solution.expected_score:.4f}{left}"
            )
        return out


def profile_cells(shape: Sequence[int]) -> int:
    return int(np.prod(np.array(shape, dtype=np.int64)))


def progress_steps(profiles: int, tracks: int) -> int:
    """How finely the correction tells threshold progress apart: the most of PROGRESS_STEPS whose table
    (`profiles` x (steps + 2) per track) stays within PROGRESS_CELLS; 0 (profiles alone) if none does."""
    for steps in PROGRESS_STEPS:
        if tracks and profiles * (steps + 2) ** tracks <= PROGRESS_CELLS:
            return steps
    return 0


def progress_levels(index: StateIndex, rows: np.ndarray, group: int, steps: int) -> np.ndarray:
    """Where threshold `group` stands on the part's card rows, 0 .. steps + 1: 0 where its bonus is out of
    reach or the part is full (nothing left to decide), steps + 1 where it is won, and between, the
    clamped total's place in its undecided range (`coding.clamp_arrays`) in `steps` equal steps."""
    codes, totals = index.encode(rows)
    masks = codes & index.full
    lo, hi, at = index.clo[group][masks], index.chi[group][masks], totals[:, group]
    place = 1 + np.minimum((steps * (at - lo)) // np.maximum(hi - lo, 1), steps - 1)
    level = np.where(at >= hi, steps + 1, np.where(at <= lo, 0, place))
    return np.where(masks == index.full, 0, level)


def check_relaxable(variant: Variant) -> None:
    """Refuse at once a variant the strong strategy cannot split (one part only, or banked rolls)."""
    if variant.carry_over:
        raise SolverError(f"{variant.id}: bot strong does not value banked rolls; the exact solver does (bot optimal)")
    if len(_split(variant)) < 2:
        raise SolverError(
            f"{variant.id}: bot strong splits a card into columns or sections, and this card has one of each"
        )


def _split(variant: Variant) -> list[tuple[str, dict[str, Any], tuple[int, ...], int]]:
    """(name, overlay, full-card box indexes, weight) of each part: a column each, else a section each."""
    ids = variant.box_ids
    if len(variant.columns) > 1:
        out = []
        for col in variant.columns:
            spec: dict[str, Any] = {"name": "one column"}
            if col.order != "any":
                spec["order"] = col.order
            # one column left, named alike in every part: columns that differ only in name share one solve
            overlay = {"columns": {**{c.id: None for c in variant.columns}, "part": spec}}
            boxes = tuple(ids.index(b.id) for b in variant.boxes if b.column == col.id)
            out.append((col.id, overlay, boxes, col.multiplier))
        return out
    sections = list(dict.fromkeys(b.section for b in variant.boxes))
    out = []
    for sec in sections:
        drop: dict[str, Any] = {b.row or b.id: None for b in variant.boxes if b.section != sec}
        boxes = tuple(i for i, b in enumerate(variant.boxes) if b.section == sec)
        out.append((sec, {"boxes": drop}, boxes, 1))
    return out if len(out) > 1 else []


def _part(variant: Variant, name: str, overlay: dict[str, Any], solver: Solver) -> tuple[Solution, tuple[str, ...]]:
    """The part `overlay` describes, solved; what its derivation or its solve refuses is left out, one
    key at a time (a bonus or rule that names a box of another part; then what the solver refuses)."""
    overlay = {**overlay, "id": f"{variant.id}-part", "name": f"{variant.name}: one part"}
    dropped: list[str] = []
    for _ in range(_MAX_ATTEMPTS):
        try:
            part = variant.derive(overlay)
            break
        except VariantError as exc:
            key = tuple(exc.path[:2])
            if len(key) < 2 or key[0] not in ("bonuses", "rules") or f"{key[0]}.{key[1]}" in dropped:
                raise SolverError(f"{variant.id}: its part {name!r} cannot be built: {exc}") from None
            overlay = _without(overlay, key)
            dropped.append(f"{key[0]}.{key[1]}")
    else:
        raise SolverError(f"{variant.id}: its part {name!r} cannot be built")
    solution, more = _solvable(part, overlay, variant, name, solver)
    return solution, tuple(dropped + more)


def _without(overlay: Mapping[str, Any], key: tuple[Any, ...]) -> dict[str, Any]:
    """`overlay` that also deletes `key` (a (section, name) pair such as ('bonuses', 'upper_bonus'))."""
    head, name = key
    inner = dict(overlay.get(head) or {})
    inner[name] = None
    return {**overlay, head: inner}


def _solvable(
    part: Variant, overlay: dict[str, Any], variant: Variant, name: str, solver: Solver
) -> tuple[Solution, list[str]]:
    """The part solved, leaving out what the solver refuses: bonuses first (each dropped in turn until it
    solves, then each put back that it can hold), and only if that is not enough the column's fill order."""
    try:
        return solver(part), []
    except SolverError as exc:
        last: Exception = exc
    cols = overlay.get("columns") or {}
    tries: list[tuple[dict[str, Any], list[str]]] = [(overlay, [])]
    if "order" in (cols.get("part") or {}):
        free = {k: v for k, v in cols["part"].items() if k != "order"}
        tries.append(({**overlay, "columns": {**cols, "part": free}}, ["its fill order"]))
    for n, (base, dropped) in enumerate(tries):
        solution = None
        if n:  # the part as it is was tried above; a later try first goes without bonuses dropped
            try:
                return solver(variant.derive(base)), dropped
            except SolverError as exc:
                last = exc
        bonus_ids = list((variant.derive(base).document or {}).get("bonuses") or {})
        left: list[str] = []
        for bid in bonus_ids:
            left.append(bid)
            try:
                solution = solver(variant.derive(_drop_bonuses(base, left)))
                break
            except SolverError as exc:
                last = exc
        if solution is None:
            continue
        for bid in list(left):  # put back each bonus the part can hold with the others left out
            fewer = [b for b in left if b != bid]
            try:
                solution = solver(variant.derive(_drop_bonuses(base, fewer)))
                left = fewer
            except SolverError:
                pass
        return solution, dropped + [f"bonuses.{b}" for b in left]
    raise SolverError(f"{variant.id}: its part {name!r} cannot be solved even without its bonuses: {last}")


def _drop_bonuses(overlay: dict[str, Any], ids: Sequence[str]) -> dict[str, Any]:
    out = overlay
    for bid in ids:
        out = _without(out, ("bonuses", bid))
    return out


def best_move(
    values: Values,
    state: GameState,
    rng: random.Random | None = None,
    options_at: Callable[[GameState], list[Option]] | None = None,
) -> Action:
    """The move at a decision that is best against `values` as the worth of what follows the turn: the
    advisor's ranking with the game's situation, and each rule action (an announcement) valued by the best
    move after it. With nothing legal to score, any legal move (`rng`). `options_at` ranks a decision's
    options where the caller has them faster (`strong_turn.TurnPlanner`, scoring each turn's card once: what
    bot strong plays with); by default the advisor is asked at each decision."""
    state.require_decision()

    def advised(at: GameState) -> list[Option]:
        return advise(values, at.card, at.dice, at.rolls_left, at.first_roll, at.situation())

    ranks = options_at or advised

    def best(at: GameState) -> tuple[float, Action] | None:
        options = ranks(at)
        if not at.may_reroll():  # the advisor values keeps by the dice alone; the rules forbid a roll now
            options = [o for o in options if not isinstance(o.action, Keep)]
        return (options[0].value, options[0].action) if options else None

    found = best(state)
    for rule_action in state.rule_actions():
        after = state.act(rule_action)
        got = None if after.is_chance or after.over else best(after)
        if got is not None and (found is None or got[0] > found[0] + 1e-9):
            found = (got[0], rule_action)
    if found is None:
        return (rng or random.Random(0)).choice(state.legal_actions())
    return found[1]
