"""The compiled variant: frozen objects built once from YAML, and the scoring they drive.

Everything that decides a score lives behind `Variant.score`, `Variant.legal_boxes`
and `Variant.end_bonuses` (and what a scoring counts besides points behind
`Variant.turn_events`): the game, the bots and the solver all call these, so
there is one source of truth for the rules.

A card is rows x columns: with several columns a box id is `column.row` (`x2.yahtzee`). A box holds its own
score; the column's multiplier applies when points are counted (`ScoreResult.points`, `Variant.total`). A
column-scope bonus is evaluated on each column's *sheet* and multiplied by the column's multiplier.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Iterator, Mapping
from fractions import Fraction
from functools import cached_property
from typing import Any

from attrs import evolve, field, frozen

from ..errors import CardError, DicecupError, IllegalAction, TooLarge
from .card import Award, Card, column_card
from .contexts import PatternContext, Situation
from .dice import Roll, all_rolls, check_dice
from .frozen import FrozenMap, frozen_params
from .parts import (
    UNCHANGED,
    Bonus,
    Box,
    BoxFlag,
    BoxTotal,
    Column,
    Figure,
    FirstRoll,
    MatchSpec,
    OptionSpec,
    Progress,
    RuleAction,
    ScoreResult,
    Spec,
    StateUpdate,
)
from .tracing import open_boxes as traced_open
from .tracing import pattern_read

__all__ = [
    "MAX_ROLLS",
    "Award",
    "Bonus",
    "Box",
    "BoxFlag",
    "BoxTotal",
    "Card",
    "Column",
    "Figure",
    "FirstRoll",
    "FrozenMap",
    "MatchSpec",
    "OptionSpec",
    "PatternContext",
    "Progress",
    "RuleAction",
    "ScoreResult",
    "Situation",
    "Spec",
    "StateUpdate",
    "UNCHANGED",
    "Variant",
    "frozen_params",
]

#: Operations that look at every distinct roll (solving, greedy look-ahead, tables) refuse more than this.
MAX_ROLLS = 100_000


@frozen(cache_hash=True)
class Variant:
    """A compiled variant: immutable rules plus the engine hooks that apply them."""

    id: str
    name: str
    description: str
    dice: int
    faces: int
    rolls: int
    carry_over: bool
    boxes: tuple[Box, ...]
    bonuses: tuple[Bonus, ...]  # the card-scope bonuses: what rule plugins see in `variant.bonuses`
    rules: FrozenMap = field(converter=FrozenMap)  # rule name -> FrozenMap of params
    match: MatchSpec
    options: FrozenMap = field(converter=FrozenMap)  # option name -> chosen value
    option_specs: tuple[OptionSpec, ...]
    source: str
    fingerprint: str
    columns: tuple[Column, ...] = ()
    column_bonuses: tuple[Bonus, ...] = ()  # per-column copies (`x2.upper_bonus`), for display
    sheets: FrozenMap = field(converter=FrozenMap, factory=FrozenMap, eq=False, repr=False)
    attributes: FrozenMap = field(converter=FrozenMap, factory=FrozenMap)  # name -> value per face
    figures: tuple[Figure, ...] = ()
    rank_by: tuple[str, ...] = ("score",)
    document: Any = field(default=None, eq=False, repr=False)  # the resolved YAML, for hashing/showing
    translations: FrozenMap = field(converter=FrozenMap, factory=FrozenMap, eq=False, repr=False)  # lang -> names
    section_names: FrozenMap = field(converter=FrozenMap, factory=FrozenMap, eq=False, repr=False)  # shown headings
    hooks: Any = field(default=None, eq=False, repr=False)  # rulehooks.RuleHooks
    rebuild: Any = field(default=None, eq=False, repr=False)  # how to compile it again (pickling)
    deriver: Any = field(default=None, eq=False, repr=False)  # (variant, overlay) -> Variant, from the engine
    store: Any = field(default=None, eq=False, repr=False)  # store.Store: the engine's, what is kept for it

    # ------------------------------------------------------------------ copying and pickling

    def __copy__(self) -> Variant:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> Variant:
        return self  # immutable: a copy is the same variant

    def __reduce__(self) -> tuple[Any, ...]:
        if self.rebuild is None:
            import pickle

            raise pickle.PicklingError(f"variant {self.id!r} was not compiled by an Engine; it cannot be pickled")
        return self.rebuild(self)

    def derive(self, overlay: Mapping[str, Any]) -> Variant:
        """A variant compiled from this one's resolved document with `overlay` merged on, as `extends`
        merges (a `null` value deletes a key): how a relaxed or partial game is built from a real one."""
        if self.deriver is None:
            raise DicecupError(f"variant {self.id!r} was not compiled by an Engine; it cannot be derived from")
        if not isinstance(overlay, Mapping):
            raise DicecupError(f"an overlay must be a mapping of variant keys, got {type(overlay).__name__}")
        return self.deriver(self, overlay)

    def in_language(self, lang: str) -> Variant:
        """This variant with the names of language `lang` from its `translations` (itself when it has none):
        the same rules, ids and fingerprint, so solved tables and saves are shared."""
        from .translations import translated

        return translated(self, lang)

    # ------------------------------------------------------------------ lookups

    @cached_property
    def box_ids(self) -> tuple[str, ...]:
        return tuple(b.id for b in self.boxes)

    @cached_property
    def _box_by_id(self) -> dict[str, Box]:
        return {b.id: b for b in self.boxes}

    def box(self, box_id: str) -> Box:
        """The box with this id (IllegalAction listing the boxes when there is none)."""
        try:
            return self._box_by_id[box_id]
        except (KeyError, TypeError):
            shown = box_id if isinstance(box_id, str) else repr(box_id)
            raise IllegalAction(f"no box {shown!r} in {self.id}; boxes: {', '.join(self.box_ids)}") from None

    @cached_property
    def rows(self) -> tuple[str, ...]:
        """The row ids, in card order."""
        return tuple(dict.fromkeys(b.row for b in self.boxes))

    @cached_property
    def _row_boxes(self) -> dict[str, tuple[str, ...]]:
        out: dict[str, list[str]] = {}
        for b in self.boxes:
            out.setdefault(b.row, []).append(b.id)
        return {r: tuple(ids) for r, ids in out.items()}

    def row(self, row_id: str) -> Box:
        """A row's definition (its box in the first column: pattern and scorer are the same in every column)."""
        ids = self._row_boxes.get(row_id) if isinstance(row_id, str) else None
        if not ids:
            raise IllegalAction(f"no row {row_id!r} in {self.id}; rows: {', '.join(self.rows)}")
        return self._box_by_id[ids[0]]

    def boxes_of(self, ref: str) -> tuple[str, ...]:
        """The boxes a rule parameter means: a box id itself, or every column's box of a row id."""
        if isinstance(ref, str):
            if ref in self._box_by_id:
                return (ref,)
            if ref in self._row_boxes:
                return self._row_boxes[ref]
        raise IllegalAction(f"no box or row {ref!r} in {self.id}; rows: {', '.join(self.rows)}")

    def has_ref(self, ref: Any) -> bool:
        """Whether `ref` names a box or a row of this variant."""
        return isinstance(ref, str) and (ref in self._box_by_id or ref in self._row_boxes)

    @cached_property
    def _columns(self) -> dict[str, Column]:
        return {c.id: c for c in self.columns}

    def column(self, column_id: str) -> Column:
        try:
            return self._columns[column_id]
        except KeyError:
            raise IllegalAction(f"no column {column_id!r} in {self.id}") from None

    @cached_property
    def _multiplier(self) -> dict[str, int]:
        return {b.id: self._columns[b.column].multiplier if b.column in self._columns else 1 for b in self.boxes}

    @cached_property
    def _unit_multipliers(self) -> bool:
        """Whether every box is written as scored (no column multiplies)."""
        return all(m == 1 for m in self._multiplier.values())

    def multiplier(self, box_id: str) -> int:
        """The multiplier of the column `box_id` is in (1 without columns)."""
        return self._multiplier.get(box_id, 1)

    def written(self, box_id: str, score: int) -> int:
        """A box score as written on the card (its column's multiplier applied)."""
        return score * self._multiplier.get(box_id, 1)

    def sections(self) -> Iterator[tuple[str, tuple[Box, ...]]]:
        seen: dict[str, list[Box]] = {}
        for b in self.boxes:
            seen.setdefault(b.section, []).append(b)
        for name, boxes in seen.items():
            yield name, tuple(boxes)

    def rule(self, name: str) -> Mapping[str, Any] | None:
        """The parameters of an enabled rule, or None when the variant does not use it."""
        got: Mapping[str, Any] | None = self.rules.get(name)
        return got

    def params(self, name: str) -> Mapping[str, Any]:
        """The parameters of an enabled rule (its hooks run only when it is enabled, so they may rely on it)."""
        got: Mapping[str, Any] | None = self.rules.get(name)
        if got is None:
            raise IllegalAction(f"{self.id} does not enable rule {name!r}")
        return got

    @property
    def declared_bonuses(self) -> tuple[Bonus, ...]:
        """Every bonus as the card shows it: card-scope ones, then each column's (`x2.upper_bonus`)."""
        return self.bonuses + self.column_bonuses

    # ------------------------------------------------------------------ rolls

    @cached_property
    def roll_count(self) -> int:
        """How many distinct rolls (multisets) the dice can show."""
        return math.comb(self.dice + self.faces - 1, self.dice)

    def check_roll_count(self, what: str) -> None:
        """Refuse work that enumerates every roll when there are more than MAX_ROLLS of them."""
        if self.roll_count > MAX_ROLLS:
            raise TooLarge(
                f"{what} needs every distinct roll of {self.dice} dice with {self.faces} faces: "
                f"{self.roll_count:,} of them, above the limit of {MAX_ROLLS:,}"
            )

    @cached_property
    def _all_rolls(self) -> tuple[Roll, ...]:
        self.check_roll_count(f"{self.id}: listing the rolls")
        return tuple(Roll.of(d, self.faces) for d in all_rolls(self.dice, self.faces))

    def all_rolls(self) -> tuple[Roll, ...]:
        """Every distinct roll of this variant's dice, sorted (TooLarge beyond MAX_ROLLS)."""
        return self._all_rolls

    def roll_of(self, dice: Iterable[int]) -> Roll:
        """The Roll for these dice (any order); raises DiceError when they don't fit."""
        key = check_dice(tuple(dice), self.dice, self.faces)
        return Roll.of(key, self.faces)

    # ------------------------------------------------------------------ scoring

    def combination(self, box: Box, roll: Roll) -> tuple[int, ...] | None:
        """The dice forming `box`'s pattern in `roll`, or None if not met."""
        return pattern_read("combination", box.id, box.pattern.fn, roll)

    def declared_score(self, box: Box, roll: Roll) -> tuple[tuple[int, ...] | None, int]:
        """The pattern result and the declared scorer's points, before any rule plugin."""
        return pattern_read("declared", box.id, _declared, box, roll)

    def declared_scores(self, box: Box, rolls: Iterable[Roll]) -> list[tuple[tuple[int, ...] | None, int]]:
        """`declared_score` for each of many rolls (the solver's signatures of a box), its pattern and scorer
        called directly: not for a rule, so no read is noted (call it outside `tracing`)."""
        match, points = box.pattern.fn, box.scorer.fn
        return [(None, 0) if (comb := match(roll)) is None else (comb, int(points(comb, roll))) for roll in rolls]

    def score(
        self, card: Card, box_id: str, roll: Roll, first_roll: bool = False, situation: Situation | None = None
    ) -> ScoreResult:
        """What filling `box_id` with `roll` gives on `card`: rule plugins applied."""
        box = self.box(box_id)
        sit = situation if situation is not None else Situation.unknown()
        # read as whether met and the declared points; the dice of the combination are noted when a rule reads them
        comb, base = pattern_read("points", box.id, _declared, box, roll)
        hooks = self.hooks
        score = hooks.adjust_score(hooks.score_context(box_id, self, card, box, roll, first_roll, comb, sit), base)
        found = list(
            hooks.extra_points(hooks.score_context(box_id, self, card, box, roll, first_roll, comb, sit, score))
        )
        sheet = self.sheets.get(box.column)
        if sheet is not None:
            view = column_card(card, box.column, sheet.box_ids)
            row = sheet.box(box.row)
            sctx = sheet.hooks.score_context(box_id, sheet, view, row, roll, first_roll, comb, sit, score)
            found.extend(self._tag(sheet, a, box.column, qualify=True) for a in sheet.hooks.extra_points(sctx))
        mult = self._multiplier.get(box_id, 1)
        awards = tuple(self._count(self._tag(self, a, box.column or None), mult) for a in found)
        return ScoreResult(box_id, score, awards, mult)

    def turn_events(
        self, card: Card, box_id: str, roll: Roll, first_roll: bool = False, situation: Situation | None = None
    ) -> dict[str, int]:
        """What the rules say happens when `box_id` is filled with `roll` on `card`, besides points: {event id: count}.

        Asked apart from `score` so that the solver's many score calls never pay for it; the box's
        score is worked out again for `ctx.score`. A column sheet's events carry the column (`x2.id`).
        """
        box = self.box(box_id)
        sit = situation if situation is not None else Situation.unknown()
        comb, base = self.declared_score(box, roll)
        hooks = self.hooks
        score = hooks.adjust_score(
            hooks.score_context(box.id, self, card, box, roll, first_roll, comb, sit, plain=True), base
        )
        out = hooks.turn_events(
            hooks.score_context(box.id, self, card, box, roll, first_roll, comb, sit, score, plain=True)
        )
        sheet = self.sheets.get(box.column)
        if sheet is not None:
            view = column_card(card, box.column, sheet.box_ids)
            sctx = sheet.hooks.score_context(
                box.id, sheet, view, sheet.box(box.row), roll, first_roll, comb, sit, score, plain=True
            )
            for eid, n in sheet.hooks.turn_events(sctx).items():
                out[f"{box.column}.{eid}"] = out.get(f"{box.column}.{eid}", 0) + n
        return out

    def event_names(self) -> dict[str, str]:
        """Every event id the enabled rules declare, with its name, in order (sheets' ids qualified)."""
        out = dict(self.hooks.event_names(self))
        for col, sheet in self.sheets.items():
            for eid, name in sheet.hooks.event_names(sheet).items():
                out.setdefault(f"{col}.{eid}", f"{name} ({self._columns[col].name})")
        return out

    def _tag(self, owner: Variant, award: Award, column: str | None, qualify: bool = False) -> Award:
        """An award with its figure (from the bonus that declares its id) and its column."""
        figure = award.figure
        if figure == "score":
            for b in owner.bonuses:
                if b.id == award.id:
                    figure = b.figure
                    break
        aid = f"{column}.{award.id}" if qualify and column else award.id
        col = award.column if award.column is not None else (column or None)
        if len(self.columns) < 2:
            col = None
        return Award(aid, int(award.points), award.name, figure, col)

    @staticmethod
    def _count(award: Award, mult: int) -> Award:
        return award if mult == 1 else evolve(award, points=award.points * mult)

    def open_boxes(self, card: Card) -> tuple[str, ...]:
        """The card's open boxes in card order (of a traced card: a tuple that reports which boxes a rule asks
        about, `tracing.open_boxes`)."""
        return traced_open(self.box_ids, card.scores)

    def _turn(self, card: Card, roll: Roll | None, first_roll: bool, situation: Situation | None) -> Any:
        """The TurnContext the per-turn rule hooks are told (`hookcontexts`), made by the variant's hooks."""
        return self.hooks.turn_context(
            self, card, roll, first_roll, situation if situation is not None else Situation.unknown()
        )

    def legal_boxes(
        self, card: Card, roll: Roll, first_roll: bool = False, situation: Situation | None = None
    ) -> tuple[str, ...]:
        """The open boxes this roll may be scored in now (joker, order and stage rules applied)."""
        return self.hooks.legal_boxes(self._turn(card, roll, first_roll, situation))

    def rules_allow(
        self, card: Card, roll: Roll, first_roll: bool = False, situation: Situation | None = None
    ) -> frozenset[str] | None:
        """What the legality rules allow, before open boxes are taken into account (None: no rule restricts).

        `legal_boxes` is the open boxes among these. Asking this instead lets a caller that
        knows which boxes are open (the solver) trace only what the rules themselves read.
        """
        return self.hooks.allowed_boxes(self._turn(card, roll, first_roll, situation))

    def blocking_rules(
        self, card: Card, roll: Roll, first_roll: bool, box_id: str, situation: Situation | None = None
    ) -> tuple[str, ...]:
        """The enabled rules that make open box `box_id` illegal for this roll (for error messages)."""
        return self.hooks.blocking_rules(self._turn(card, roll, first_roll, situation), box_id)

    def why_illegal(
        self, card: Card, roll: Roll, first_roll: bool, box_id: str, situation: Situation | None = None
    ) -> str:
        """Why open box `box_id` may not take this roll now, in the rules' own words ("" if it may)."""
        ctx = self._turn(card, roll, first_roll, situation)
        said = [t for t in self.hooks.explain(ctx, box_id) if t]
        if said:
            return "; ".join(said)
        rules = self.hooks.blocking_rules(ctx, box_id)
        if not rules:
            return ""
        many = len(rules) > 1
        return f"the {' and '.join(rules)} rule{'s' if many else ''} forbid{'' if many else 's'} it"

    def end_bonuses(self, card: Card) -> tuple[Award, ...]:
        """Whole-card bonuses the card holds now (final once every box is filled)."""
        out = [self._tag(self, a, None) for a in self.hooks.end_bonuses(self, card)]
        if not self.sheets:  # (the solver asks thousands of cards: no walk over an empty mapping's items)
            return tuple(out)
        for col, sheet in self.sheets.items():
            view = column_card(card, col, sheet.box_ids)
            mult = self._columns[col].multiplier
            out.extend(
                self._count(self._tag(sheet, a, col, qualify=True), mult) for a in sheet.hooks.end_bonuses(sheet, view)
            )
        return tuple(out)

    def written_scores(self, card: Card) -> dict[str, int | None]:
        """Every box as written on the card (None while open)."""
        return {b: (None if b not in card.scores else self.written(b, card.scores[b])) for b in self.box_ids}

    def figure_totals(self, card: Card) -> dict[str, int]:
        """Each figure's total on this card: `score` (boxes + awards + bonuses) and any declared other."""
        out = {"score": sum(self.written(b, v) for b, v in card.scores.items())}
        for f in self.figures:
            out.setdefault(f.id, 0)
        for a in card.awards + self.end_bonuses(card):
            out[a.figure] = out.get(a.figure, 0) + a.points
        return out

    def check_card(self, card: Card) -> None:
        """Raise CardError unless `card` is a Card of this variant's boxes holding whole-number scores (what an
        embedder passes to the advisor; the engine's own cards always are)."""
        if not isinstance(card, Card):
            raise CardError(f"expected a dicecup Card, got {type(card).__name__}")
        scores = card.scores
        if not self._box_by_id.keys() >= set(scores):
            box = next(b for b in scores if b not in self._box_by_id)
            raise CardError(
                f"the card fills box {box!r}, which {self.id} does not have (its boxes: {', '.join(self.box_ids)})"
            )
        for box in scores:
            score = scores[box]
            if type(score) is not int and (isinstance(score, bool) or not isinstance(score, numbers.Integral)):
                raise CardError(f"box {box!r} holds {score!r}: a score is a whole number")

    def points_so_far(self, card: Card) -> int:
        """What the filled boxes (as written) and the awards earned count in the score, end bonuses left out."""
        scores = card.scores
        if self._unit_multipliers:  # (the advisor asks on every decision: a third of the general sum's cost)
            boxes = sum(map(scores.__getitem__, scores))
        else:
            boxes = sum(self.written(b, v) for b, v in scores.items())
        return boxes + sum(a.points for a in card.awards if a.figure == "score") if card.awards else boxes

    def total(self, card: Card) -> int:
        """The total score: boxes as written + awards + whole-card bonuses."""
        return self.figure_totals(card)["score"]

    def column_totals(self, card: Card) -> dict[str, int]:
        """Each column's score: its boxes as written plus the awards and bonuses that belong to it."""
        out = {c.id: 0 for c in self.columns}
        for b, v in card.scores.items():
            col = self._box_by_id[b].column
            if col in out:
                out[col] += self.written(b, v)
        for a in card.awards + self.end_bonuses(card):
            if a.column in out and a.figure == "score":
                out[a.column] += a.points
        return out

    def instant_win(
        self, card: Card, roll: Roll, first_roll: bool, players: int, situation: Situation | None = None
    ) -> str | bool:
        """Whether this roll wins a game of `players` at once: False, or True / a phrase saying what won."""
        result = self.hooks.instant_win(self._turn(card, roll, first_roll, situation), players)
        return result if isinstance(result, str) and result else bool(result)

    def settle(self, totals: Mapping[str, int]) -> Mapping[str, Fraction] | None:
        """Payments at the end of a match (None when the variant declares no settlement)."""
        return self.hooks.settle(self, totals)

    def state_flags(self) -> tuple[BoxFlag, ...]:
        """Card facts the enabled rules depend on (for the solver's state), sheets' included."""
        out = list(self.hooks.state_flags(self))
        for col, sheet in self.sheets.items():
            for flag in sheet.hooks.state_flags(sheet):
                qualified = BoxFlag(f"{col}.{flag.box}", flag.value)
                if qualified not in out:
                    out.append(qualified)
        return tuple(out)

    def state_totals(self) -> tuple[BoxTotal, ...]:
        """Groups of boxes whose running totals the whole-card bonuses depend on, sheets' included."""
        out = list(self.hooks.state_totals(self))
        for col, sheet in self.sheets.items():
            for group in sheet.hooks.state_totals(sheet):
                out.append(BoxTotal(f"{col}.{group.name}", tuple(f"{col}.{b}" for b in group.boxes)))
        return tuple(out)

    def progress(self, card: Card) -> tuple[Progress, ...]:
        """How each bonus and rule stands on this card, in the plugins' words (sheets' ids qualified)."""
        out = list(self.hooks.progress(self, card))
        for col, sheet in self.sheets.items():
            view = column_card(card, col, sheet.box_ids)
            column = self._columns[col]
            times = f" (points x{column.multiplier})" if column.multiplier != 1 else ""
            for p in sheet.hooks.progress(sheet, view):
                out.append(Progress(f"{col}.{p.id}", p.cell, f"{column.name}{times}: {p.line}" if p.line else ""))
        return tuple(out)

    # ------------------------------------------------------------------ actions rules add

    def actions(
        self, card: Card, roll: Roll | None, first_roll: bool, situation: Situation | None = None
    ) -> tuple[RuleAction, ...]:
        """The actions rule plugins offer the acting player now (besides keeping and scoring)."""
        return self.hooks.actions(self._turn(card, roll, first_roll, situation))

    def apply_action(
        self, card: Card, roll: Roll | None, first_roll: bool, action: RuleAction, situation: Situation | None = None
    ) -> StateUpdate:
        """What `action` changes in its rule's state (asked of the plugin that offers it)."""
        return self.hooks.apply_action(self._turn(card, roll, first_roll, situation), action)

    def may_reroll(self, card: Card, roll: Roll | None, first_roll: bool, situation: Situation | None = None) -> bool:
        """Whether the rules let the acting player keep dice and roll again now."""
        return self.hooks.may_reroll(self._turn(card, roll, first_roll, situation))

    def turn_status(
        self, card: Card, roll: Roll | None, first_roll: bool, situation: Situation | None = None
    ) -> tuple[str, ...]:
        """Lines the rules want shown about the acting player's turn (an announcement made, ...)."""
        return self.hooks.turn_status(self._turn(card, roll, first_roll, situation))

    def solitaire_notes(self) -> tuple[str, ...]:
        """What solitaire play (solver, simulation) leaves out of this variant's rules, in words."""
        return self.hooks.solitaire_notes(self)

    def implements(self, hook: str) -> bool:
        """Whether a plugin taking part in this variant implements rule hook `dicecup_<hook>`."""
        return bool(self.hooks.implements(hook))

    def empty_card(self) -> Card:
        return Card()


def _declared(box: Box, roll: Roll) -> tuple[tuple[int, ...] | None, int]:
    comb = box.pattern.fn(roll)
    if comb is None:
        return None, 0
    return comb, int(box.scorer.fn(comb, roll))
