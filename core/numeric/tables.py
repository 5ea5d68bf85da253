"""Score, legality and end-bonus tables of many cards at once, learned from the variant's own hooks.

Every number here comes from `Variant.score` (with `Variant.turn_events`), `Variant.legal_boxes` and
`Variant.end_bonuses`, called on real `Card`s through the rule tracer (`numeric.tracer`): nothing
re-implements a rule, and a rule's answer is reused for every card that agrees on what it read. `RuleTables`
holds the three for one variant, and turns what they learned into arrays a caller can keep on disk.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..errors import DicecupError
from ..language.dice import Roll
from ..language.model import Card, Variant
from ..language.tracing import traced_roll, tracing
from .coding import EMPTY  # an open box in `vals`
from .tracer import CardFacts, Grouper, Traced, Untabulable, unique_rows

__all__ = [
    "EMPTY",
    "CardFacts",
    "Traced",
    "ScoreTables",
    "LegalTables",
    "EndBonuses",
    "RuleTables",
    "Untabulable",
    "unique_rows",
    "Grouper",
]


class ScoreTables:
    """Box scores and awards (and, when asked, events) of every (first roll?, roll, box) on a card.

    `Variant.score` and `Variant.turn_events`, tabulated: one traced call evaluates both, so one set
    of reads keys the score, the awards and the events alike.
    """

    def __init__(self, variant: Variant, award_ids: list[str], event_ids: list[str] | None = None) -> None:
        self.variant = variant
        self.rolls = variant.all_rolls()
        self.R, self.nb = len(self.rolls), len(variant.box_ids)
        self.award_ids = award_ids  # grows when a plugin awards an undeclared id
        self.max_awards = len(award_ids) + 8
        # with `event_ids`, `Variant.turn_events` fills the last columns, in the same traced call as the score
        self.event_ids = event_ids  # grows when a plugin reports an undeclared event id
        self.max_events = 0 if event_ids is None else len(event_ids) + 8
        self.facts = CardFacts(variant)
        width = 1 + self.max_awards + self.max_events
        self.traced = Traced(self.facts, 2 * self.R * self.nb, width, self._score)
        self._points: tuple[np.ndarray, ...] | None = None
        self._cards: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}  # per class, for `card`

    def _score(self, card: Card, e: int) -> np.ndarray:
        fr, rest = divmod(e, self.R * self.nb)
        r, b = divmod(rest, self.nb)
        box, roll = self.variant.box_ids[b], self.rolls[r]
        res = self.variant.score(card, box, roll, bool(fr))
        out = np.zeros(1 + self.max_awards + self.max_events, dtype=np.int64)
        out[0] = res.score
        for a in res.awards:
            if a.id not in self.award_ids:
                if len(self.award_ids) >= self.max_awards:
                    raise Untabulable("too many distinct award ids for the batched simulator")
                self.award_ids.append(a.id)
            out[1 + self.award_ids.index(a.id)] += a.points
        if self.event_ids is not None:
            for eid, n in self.variant.turn_events(card, box, roll, bool(fr)).items():
                if eid not in self.event_ids:
                    if len(self.event_ids) >= self.max_events:
                        raise Untabulable("too many distinct event ids for the batched simulator")
                    self.event_ids.append(eid)
                out[1 + self.max_awards + self.event_ids.index(eid)] += n
        return out

    def card(self, row: np.ndarray) -> tuple[int, np.ndarray, np.ndarray]:
        """(class, table [2, R, boxes, 1 + awards + events], box scores [2, R, boxes]) of one card row."""
        cid = self.traced.class_of_row(row)
        got = self._cards.get(cid)
        if got is None or got[0] is not self.traced.tables[cid]:  # classes are renumbered when keyed anew
            shaped = self.traced.tables[cid].reshape(2, self.R, self.nb, self.traced.width)
            got = self._cards[cid] = (self.traced.tables[cid], shaped, np.ascontiguousarray(shaped[..., 0]))
        return cid, got[1], got[2]

    def state(self) -> tuple[dict, dict[str, np.ndarray]]:
        """(award and event ids, arrays): what was learned, to keep on disk (`restore` takes it back)."""
        return {"award_ids": list(self.award_ids), "event_ids": self.event_ids}, self.traced.state()

    def restore(self, meta: dict, arrays: dict[str, np.ndarray]) -> None:
        """Take back `state` (made for the same rules); ValueError where it does not fit."""
        ids, events = meta.get("award_ids"), meta.get("event_ids")
        if not _ids_fit(ids, self.award_ids, self.max_awards) or (events is None) != (self.event_ids is None):
            raise ValueError("the learned award or event ids do not fit these rules")
        if self.event_ids is not None and not _ids_fit(events, self.event_ids, self.max_events):
            raise ValueError("the learned event ids do not fit these rules")
        self.traced.restore(arrays)
        self.award_ids[:] = list(ids or ())
        if self.event_ids is not None:
            self.event_ids[:] = list(events or ())
        self._points, self._cards = None, {}

    def known_scores(self, row: np.ndarray, b: int) -> set[int] | None:
        """Every score box position `b` gets on the card `row` (any roll, first roll or not) where the card's
        class is known already, else None (nothing is asked of the rules)."""
        cid = self.traced.known_class(row)
        if cid is None:
            return None
        return set(self.traced.tables[cid].reshape(2, self.R, self.nb, self.traced.width)[:, :, b, 0].ravel().tolist())

    @property
    def nbytes(self) -> int:
        """Bytes the class tables hold (twice: the box scores are kept apart too)."""
        return 2 * sum(t.nbytes for t in self.traced.tables)

    def lookup(self, vals: np.ndarray, group: Grouper | None = None) -> tuple[np.ndarray, ...]:
        """(class per card, tables [C, 2, R, boxes, 1 + awards + events], box scores [C, 2, R, boxes],
        points [C, 2, R, boxes]: box score plus awards)."""
        cls, tables = self.traced.classes(vals, group)
        if self._points is None or self._points[0] is not tables:
            shaped = tables.reshape(len(tables), 2, self.R, self.nb, self.traced.width)
            self._points = (
                tables,
                shaped,
                np.ascontiguousarray(shaped[..., 0]),
                shaped[..., 0] + shaped[..., 1 : 1 + self.max_awards].sum(axis=-1),
            )
        return cls, self._points[1], self._points[2], self._points[3]


def _ids_fit(ids: object, have: list[str], most: int) -> bool:
    """Whether learned ids `ids` extend the ids `have` of these tables, within `most`."""
    return (
        isinstance(ids, list) and all(isinstance(a, str) for a in ids) and len(ids) <= most and ids[: len(have)] == have
    )


class LegalTables:
    """Which boxes `Variant.legal_boxes` allows, per (first roll?, roll), for a card; cached by card.

    Legality reads every box's presence (open boxes), so it is keyed on the whole
    fill mask plus the scores the rules read. When the rules do not look at the
    dice for a card (neither the roll nor a declared pattern of it), two calls
    (first roll or not) cover all rolls; when they do, each (first roll?, roll)
    is asked the first time a game needs it.
    """

    def __init__(self, variant: Variant) -> None:
        self.variant = variant
        self.rolls = variant.all_rolls()
        self.R, self.nb = len(self.rolls), len(variant.box_ids)
        self.facts = CardFacts(variant)
        self._probe = traced_roll(self.rolls[0])  # reports whether the rules look at the dice
        self.reads: tuple[int, ...] = tuple(range(self.nb))
        self._reset()

    def _reset(self) -> None:
        self.class_of: dict[tuple, int] = {}
        self.rows: list[np.ndarray] = []  # a card of each class
        self.simple: list[np.ndarray] = []  # per class [2, boxes]: legal boxes when the roll does not matter
        self.dep_of: list[int] = []  # per class: its row in the per-roll tables, or -1
        self.per_roll = np.zeros((0, 2, self.R, self.nb), dtype=bool)  # rows 0..n_dep-1 in use
        self.known = np.zeros((0, 2, self.R), dtype=bool)  # which per-roll entries were asked already
        self.n_dep = 0
        self._simple: np.ndarray | None = None  # [capacity, 2, boxes]: rows 0.._stacked-1 in use
        self._dep: np.ndarray | None = None
        self._stacked = 0

    def _mask(self, legal: Sequence[str]) -> np.ndarray:
        m = np.zeros(self.nb, dtype=bool)
        m[[self.facts.index[b] for b in legal]] = True
        return m

    def _ask(self, row: np.ndarray, roll: Roll, fr: int) -> tuple[np.ndarray, frozenset[int], bool]:
        """Legal boxes of the card `row` for `roll`, the facts they depend on, and whether they depend on the roll.

        A declared pattern evaluated on the roll (`Reads.patterns`) counts as depending on it: its
        dice reads are excused from `Reads.roll`, yet its answer changes with the roll."""
        card = self.facts.traced(row)
        with tracing() as reads:
            legal = self.variant.legal_boxes(card, roll, bool(fr))
        return self._mask(legal), self.facts.facts_of(reads), reads.roll or bool(reads.patterns)

    def lookup(self, vals: np.ndarray) -> np.ndarray:
        """The legal class of every card row (see `allowed`)."""
        if len(vals) == 1 and self._simple is not None:  # one card of a known class: a dict lookup
            cid = self.class_of.get(self.facts.key(vals[0].tolist(), self.reads))
            if cid is not None and cid < self._stacked:
                return np.array([cid], dtype=np.int64)
        while True:
            reads = self.reads
            if len(vals) == 1:  # one card (the advisor's): its key as it is, no grouping
                key1 = self.facts.key(vals[0].tolist(), reads)
                uniq, first, inverse = (
                    np.array([key1], dtype=np.int64).reshape(1, -1),
                    np.zeros(1, np.int64),
                    np.zeros(1, np.int64),
                )
            else:
                uniq, first, inverse = unique_rows(self.facts.columns(vals, reads))
            ids = np.empty(len(uniq), dtype=np.int64)
            for u in range(len(uniq)):
                key = tuple(uniq[u].tolist())
                cid = self.class_of.get(key)
                if cid is None:
                    row = vals[first[u]]
                    simple = np.zeros((2, self.nb), dtype=bool)
                    seen: set[int] = set()
                    touched = False
                    for fr in (0, 1):
                        simple[fr], got, on_roll = self._ask(row, self._probe, fr)
                        seen |= got
                        touched |= on_roll
                    if not seen <= set(reads):
                        self.reads = tuple(sorted(seen | set(reads)))
                        self._reset()
                        break
                    cid = self.class_of[key] = len(self.simple)
                    self.simple.append(simple)
                    self.rows.append(row.copy())
                    if touched:
                        self.dep_of.append(self.n_dep)
                        self.n_dep += 1
                        if self.n_dep > len(self.per_roll):  # grow by doubling
                            grow = max(16, len(self.per_roll))
                            self.per_roll = np.concatenate(
                                [self.per_roll, np.zeros((grow, 2, self.R, self.nb), dtype=bool)]
                            )
                            self.known = np.concatenate([self.known, np.zeros((grow, 2, self.R), dtype=bool)])
                    else:
                        self.dep_of.append(-1)
                ids[u] = cid
            else:
                self._stack()
                return ids[inverse]

    def _stack(self) -> None:
        """`_simple` and `_dep` as arrays over the classes so far, grown by doubling (cards come one at a time
        to the advisor: restacking every class for each new one would be quadratic)."""
        n, have = len(self.simple), self._stacked
        if self._simple is None or len(self._simple) < n:
            size = max(16, 2 * n)
            simple, dep = np.zeros((size, 2, self.nb), dtype=bool), np.full(size, -1, dtype=np.int64)
            if self._simple is not None and self._dep is not None:
                simple[:have], dep[:have] = self._simple[:have], self._dep[:have]
            self._simple, self._dep = simple, dep
        assert self._dep is not None
        if n > have:
            self._simple[have:n] = self.simple[have:n]
            self._dep[have:n] = self.dep_of[have:n]
            self._stacked = n

    def state(self) -> dict[str, np.ndarray]:
        """What was learned, as arrays: the facts classes are keyed on, each class's key, a card of it, its
        legal boxes where the roll does not matter, and the per-roll answers asked so far. `restore` takes
        it back."""
        keys = sorted(self.class_of.items(), key=lambda kv: kv[1])
        n = len(self.simple)
        return {
            "reads": np.array(self.reads, dtype=np.int64),
            "keys": np.array([k for k, _ in keys], dtype=np.int64).reshape(n, len(self.reads)),
            "rows": np.array(self.rows, dtype=np.int64).reshape(n, self.nb),
            "simple": np.array(self.simple, dtype=bool).reshape(n, 2, self.nb),
            "dep_of": np.array(self.dep_of, dtype=np.int64),
            "per_roll": self.per_roll[: self.n_dep].copy(),
            "known": self.known[: self.n_dep].copy(),
        }

    def restore(self, arrays: dict[str, np.ndarray]) -> None:
        """Take back what `state` gave (for the same rules); ValueError where the arrays do not fit."""
        reads, keys, rows, simple, dep_of, per_roll, known = (
            arrays[k] for k in ("reads", "keys", "rows", "simple", "dep_of", "per_roll", "known")
        )
        n, n_dep = len(keys), len(per_roll)
        fits = (
            keys.shape == (n, len(reads))
            and rows.shape == (n, self.nb)
            and simple.shape == (n, 2, self.nb)
            and dep_of.shape == (n,)
            and per_roll.shape == (n_dep, 2, self.R, self.nb)
            and known.shape == (n_dep, 2, self.R)
            and sorted(dep_of[dep_of >= 0].tolist()) == list(range(n_dep))
            and bool((dep_of >= -1).all())
        )
        if not fits:
            raise ValueError("the learned legal tables do not fit these rules")
        self.reads = tuple(reads.tolist())
        self._reset()
        self.class_of = {tuple(k): c for c, k in enumerate(keys.tolist())}
        self.rows = list(rows)
        self.simple = list(simple.astype(bool))
        self.dep_of = dep_of.tolist()
        self.per_roll, self.known, self.n_dep = per_roll.astype(bool), known.astype(bool), n_dep
        self._stack()

    def depends_on_roll(self, cid: int) -> bool:
        """Whether the legal boxes of cards of class `cid` (from `lookup`) change with the roll."""
        return self.dep_of[cid] >= 0

    def allowed(self, cls: np.ndarray, first: bool, roll: np.ndarray) -> np.ndarray:
        """[rows, boxes] legal boxes of cards of legal classes `cls` holding rolls `roll`."""
        fr = int(first)
        assert self._simple is not None and self._dep is not None  # `lookup` gave the classes
        out = self._simple[cls, fr]
        dep = self._dep[cls]
        sel = np.flatnonzero(dep >= 0)
        if sel.size:
            d, r = dep[sel], roll[sel]
            missing = ~self.known[d, fr, r]
            if missing.any():
                cid_of_dep = {dd: c for c, dd in enumerate(self.dep_of) if dd >= 0}
                for dd, rr in set(zip(d[missing].tolist(), r[missing].tolist(), strict=False)):
                    mask, seen, _ = self._ask(self.rows[cid_of_dep[dd]], self.rolls[rr], fr)
                    if not seen <= set(self.reads):
                        raise DicecupError("internal error: a legality rule read a box only for some rolls")
                    self.per_roll[dd, fr, rr] = mask
                    self.known[dd, fr, rr] = True
            out[sel] = self.per_roll[d, fr, r]
        return out


class EndBonuses:
    """Whole-card bonuses of finished cards (Variant.end_bonuses), memoised on what they read."""

    def __init__(self, variant: Variant, award_ids: list[str], width: int) -> None:
        self.variant = variant
        self.award_ids = award_ids
        self.width = width
        self.facts = CardFacts(variant)
        self._traced = Traced(self.facts, 1, width, self._end)
        self._kept: dict[str, np.ndarray] | None = None  # what `restore` was given, not taken back yet

    @property
    def traced(self) -> Traced:
        """The tables, with what `restore` was given taken back on first use (a run whose end bonuses the
        solver's tables give never reads them); where it does not fit, they start empty and ask the engine."""
        if self._kept is not None:
            arrays, self._kept = self._kept, None
            try:
                self._traced.restore(arrays)
            except (ValueError, KeyError, TypeError, IndexError):
                self._traced = Traced(self.facts, 1, self.width, self._end)
        return self._traced

    @property
    def asked(self) -> int:
        """Engine calls the tables made in this process (taking back what was kept makes none)."""
        return self._traced.asked

    def _end(self, card: Card, e: int) -> np.ndarray:
        out = np.zeros(self.width, dtype=np.int64)
        for a in self.variant.end_bonuses(card):
            if a.id not in self.award_ids:
                if len(self.award_ids) >= self.width:
                    raise Untabulable("too many distinct award ids for the batched simulator")
                self.award_ids.append(a.id)
            out[self.award_ids.index(a.id)] += a.points
        return out

    def points(self, vals: np.ndarray, group: Grouper | None = None) -> np.ndarray:
        """Award points [rows, width] of the end bonuses of every finished card row."""
        cls, tables = self.traced.classes(vals, group)
        return tables[cls, 0]

    def state(self) -> dict[str, np.ndarray]:
        """What was learned, as arrays (`Traced.state`); the award ids are the score tables' (shared)."""
        return self.traced.state()

    def restore(self, arrays: dict[str, np.ndarray]) -> None:
        """Take back what `state` gave, when the tables are first used (`traced`)."""
        self._kept = dict(arrays)


class RuleTables:
    """A variant's score (with events), legality and end-bonus tables, sharing their award ids: what the
    batched simulator plays from. `state` and `restore` carry all three, for a caller to keep on disk;
    `learned` says how much they hold (it grows as games reach new classes)."""

    def __init__(self, variant: Variant, award_ids: list[str], event_ids: list[str] | None) -> None:
        self.variant = variant
        self.award_ids = award_ids  # grows when a plugin awards an undeclared id (the three share it)
        self.scores = ScoreTables(variant, award_ids, event_ids)
        self.legal = LegalTables(variant)
        self.end = EndBonuses(variant, award_ids, self.scores.max_awards)

    def learned(self) -> tuple[int, ...]:
        """How much the tables hold (engine calls kept, classes, legal classes, per-roll answers): what grows."""
        legal = self.legal
        known = int(legal.known[: legal.n_dep].sum())
        return self.scores.traced.asked, len(self.scores.traced.tables), self.end.asked, len(legal.simple), known

    def state(self) -> tuple[dict, dict[str, np.ndarray]]:
        """(meta, arrays) of all three (`restore` takes them back)."""
        meta, scores = self.scores.state()
        arrays = {f"s_{k}": a for k, a in scores.items()}
        arrays |= {f"l_{k}": a for k, a in self.legal.state().items()}
        arrays |= {f"e_{k}": a for k, a in self.end.state().items()}
        return meta, arrays

    def restore(self, meta: dict, arrays: dict[str, np.ndarray]) -> None:
        """Take back `state` (for the same rules); ValueError, KeyError or TypeError where it does not fit
        (the tables are then partly restored: the caller makes them anew)."""
        part = {p: {k[2:]: a for k, a in arrays.items() if k.startswith(p)} for p in ("s_", "l_", "e_")}
        self.scores.restore(meta, part["s_"])
        self.legal.restore(part["l_"])
        self.end.restore(part["e_"])
