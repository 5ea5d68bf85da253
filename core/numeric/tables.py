"""Score and legality tables of many cards at once, learned from the variant's own hooks (simulator, advisor).

Every number here comes from `Variant.score` (with `Variant.turn_events`), `Variant.legal_boxes` and
`Variant.end_bonuses`, called on real `Card`s: nothing re-implements a rule.
What makes tables affordable is that a rule usually looks at very little of the
card (the joker asks whether the yahtzee box is filled, the Yahtzee bonus
whether it holds 50). The card handed to the rules records which boxes were
looked at; a result is then reused for every card that agrees on exactly those
boxes, which is sound because the rule's code saw the same values. The watching
is `language.tracing`'s, the solver's own: each engine call is traced once. A card
is described by `vals`: one int per box, `EMPTY` for an open box.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from ..errors import DicecupError
from ..language.dice import Roll
from ..language.model import Card, Variant
from ..language.tracing import VALUE, Reads, traced_card, traced_roll, tracing
from .coding import EMPTY  # an open box in `vals`

__all__ = ["EMPTY", "CardFacts", "Traced", "ScoreTables", "LegalTables", "EndBonuses", "Untabulable"]


class Untabulable(DicecupError):
    """The rules need something the tables cannot hold (the game situation, the awards): the engine plays them."""


class CardFacts:
    """Card facts as columns: fact j < n is 'box j is filled', fact n + j is 'the score in box j'."""

    def __init__(self, variant: Variant) -> None:
        self.variant = variant
        self.ids = variant.box_ids
        self.n = len(self.ids)
        self.index = {b: i for i, b in enumerate(self.ids)}

    def card(self, row: Sequence[int]) -> Card:
        """The real card whose boxes hold `row` (EMPTY: open)."""
        return Card({b: int(v) for b, v in zip(self.ids, row, strict=False) if v != EMPTY})

    def traced(self, row: Sequence[int] | np.ndarray) -> Card:
        """The card of `row` as a traced card: what the rules read of it goes to the active `tracing()`."""
        return traced_card({b: int(v) for b, v in zip(self.ids, row, strict=False) if v != EMPTY})

    def facts_of(self, reads: Reads) -> frozenset[int]:
        """The fact columns one traced engine call depends on; Untabulable if it read the situation or awards."""
        if reads.situation:  # the tables hold cards only, no game around them
            fields = ", ".join(sorted(reads.situation))
            raise Untabulable(f"a rule reads the game around the card ({fields}), which the batched tables do not hold")
        if reads.awards:
            raise Untabulable(
                "a rule plugin reads the card's awards, which the batched simulator cannot tabulate; "
                "use --method engine"
            )
        if "*" in reads.boxes:  # the set of filled boxes as a whole (iteration, len, hash, ==)
            return frozenset(range(2 * self.n))
        out: set[int] = set()
        for box, kind in reads.boxes.items():
            j = self.index.get(box)
            if j is not None:  # the score column holds EMPTY for an open box: a value read needs no presence fact
                out.add(self.n + j if kind & VALUE else j)
        return frozenset(out)

    def key(self, row: Sequence[int], facts: Sequence[int]) -> tuple[int, ...]:
        """The values of `facts` for one card row, as plain ints (what a class is keyed on)."""
        n = self.n
        return tuple(int(row[f] != EMPTY) if f < n else int(row[f - n]) for f in facts)

    def columns(self, vals: np.ndarray, facts: Sequence[int]) -> np.ndarray:
        """The values of `facts` for every card row of `vals` (int64 [rows, len(facts)])."""
        out = np.empty((vals.shape[0], len(facts)), dtype=np.int64)
        for c, f in enumerate(facts):
            if f < self.n:
                out[:, c] = vals[:, f] != EMPTY
            else:
                out[:, c] = vals[:, f - self.n]
        return out


Grouper = Callable[[np.ndarray, tuple[int, ...]], tuple[np.ndarray, np.ndarray, np.ndarray]]


def unique_rows(cols: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """np.unique(cols, axis=0, return_index, return_inverse), fast when the rows pack into one int64.

    Each column is replaced by its value's rank among the column's distinct
    values, and the ranks are packed mixed-radix into one int64 per row.
    """
    if cols.shape[1] == 0:
        return cols[:1], np.zeros(min(1, len(cols)), dtype=np.int64), np.zeros(len(cols), dtype=np.int64)
    ranks = np.empty(cols.shape, dtype=np.int64)
    spans = []
    for c in range(cols.shape[1]):
        col = cols[:, c]
        empty = col == EMPTY
        if empty.any() and not empty.all():
            col = np.where(empty, col[~empty].min() - 1, col)  # an open box ranks below every score
        lo, hi = int(col.min()), int(col.max())
        if hi - lo < 1 << 20:  # small range: the offset is a rank (gaps are harmless)
            ranks[:, c] = col - lo
            spans.append(hi - lo + 1)
        else:
            distinct, ranks[:, c] = np.unique(col, return_inverse=True)
            spans.append(len(distinct))
    size = float(np.prod(np.array(spans, dtype=float)))
    if size < 2.0**62:
        weights = np.concatenate([[1], np.cumprod(spans[:-1])]).astype(np.int64)
        packed = ranks @ weights
        if size <= 1 << 22:  # small key range: group without sorting
            first_at = np.full(int(size), len(packed), dtype=np.int64)
            np.minimum.at(first_at, packed, np.arange(len(packed)))
            keys = np.flatnonzero(first_at < len(packed))
            slot = np.empty(int(size), dtype=np.int64)
            slot[keys] = np.arange(len(keys))
            first = first_at[keys]
            return cols[first], first, slot[packed]
        _, first, inverse = np.unique(packed, return_index=True, return_inverse=True)
        return cols[first], first, inverse.reshape(-1)
    uniq, first, inverse = np.unique(cols, axis=0, return_index=True, return_inverse=True)
    return uniq, first, inverse.reshape(-1)


class Traced:
    """f(card, entry) for entries 0..E-1, memoised on the card facts each entry was seen to read.

    `table(vals_row)` gives the whole [E, width] table for one card; `classes(vals)`
    groups many cards into classes that share one table (they agree on every fact
    any entry reads) and returns each card's class and the stacked tables.
    """

    def __init__(self, facts: CardFacts, entries: int, width: int, evaluate: Callable[[Card, int], np.ndarray]) -> None:
        self.facts = facts
        self.entries = entries
        self.width = width
        self.evaluate = evaluate
        self.reads: list[tuple[int, ...] | None] = [None] * entries
        self.memo: dict[tuple, np.ndarray] = {}
        self.keyed: tuple[int, ...] = ()  # union of all entries' reads: what a class is keyed on
        self.class_of: dict[tuple, int] = {}
        self.tables: list[np.ndarray] = []
        self._stacked: np.ndarray | None = None

    def _entry(self, e: int, row: np.ndarray, fv: list[int]) -> np.ndarray:
        reads = self.reads[e]
        if reads is not None:
            hit = self.memo.get((e, reads, *[fv[f] for f in reads]))
            if hit is not None:
                return hit
        card = self.facts.traced(row)
        with tracing() as seen:  # the one trace of this engine call: what the answer depends on
            result = np.asarray(self.evaluate(card, e), dtype=np.int64)
        merged = tuple(sorted(self.facts.facts_of(seen) | set(reads or ())))
        self.reads[e] = merged
        self.memo[(e, merged, *[fv[f] for f in merged])] = result
        return result

    def table(self, row: np.ndarray) -> np.ndarray:
        """The [entries, width] table for the card `row` (exact)."""
        fv = self.facts.columns(row[None, :], range(2 * self.facts.n))[0].tolist()
        return np.stack([self._entry(e, row, fv) for e in range(self.entries)])

    def class_of_row(self, row: np.ndarray) -> int:
        """The class of one card row (its table is `tables[class]`): a dict lookup once the class is known,
        with no grouping and no stacking (the advisor asks one card at a time)."""
        while True:
            key = self.facts.key(row.tolist(), self.keyed)
            cid = self.class_of.get(key)
            if cid is None:
                cid = self._new_class(key, row)
            if cid is not None:
                return cid

    def known_class(self, row: np.ndarray) -> int | None:
        """The class of one card row where it is known already, else None (nothing is asked of the rules)."""
        return self.class_of.get(self.facts.key(row.tolist(), self.keyed))

    def _new_class(self, key: tuple, row: np.ndarray) -> int | None:
        """Add the class of card `row` (keyed `key`) with its table; None when a rule read something new:
        the classes so far were keyed too coarsely, and are dropped to be keyed on it."""
        table = self.table(row)
        union = tuple(sorted(set().union(*(r for r in self.reads if r))))
        if union != self.keyed:
            self.keyed, self.class_of, self.tables, self._stacked = union, {}, [], None
            return None
        cid = self.class_of[key] = len(self.tables)
        self.tables.append(table)
        return cid

    def state(self, width: int) -> dict[str, np.ndarray]:
        """What was learned, as arrays (the first `width` columns of each table): every entry's reads, the
        facts classes are keyed on, each class's key and table. `restore` takes it back (the memo of single
        entries is not kept: a class met later asks the engine again, entry by entry)."""
        lens = np.array([-1 if r is None else len(r) for r in self.reads], dtype=np.int64)
        flat = np.array([f for r in self.reads if r for f in r], dtype=np.int64)
        keys = sorted(self.class_of.items(), key=lambda kv: kv[1])
        n = len(self.tables)
        stacked = np.stack([t[:, :width] for t in self.tables]) if n else np.zeros((0, self.entries, width), int)
        if n and np.abs(stacked).max() < 1 << 31:
            stacked = stacked.astype(np.int32)  # half the bytes to read back
        return {
            "reads_len": lens,
            "reads": flat,
            "keyed": np.array(self.keyed, dtype=np.int64),
            "keys": np.array([k for k, _ in keys], dtype=np.int64).reshape(n, len(self.keyed)),
            "tables": stacked,
        }

    def restore(self, arrays: dict[str, np.ndarray]) -> None:
        """Take back what `state` gave (of tables for the same rules); ValueError where the arrays do not fit."""
        lens, flat, keyed, keys, tables = (arrays[k] for k in ("reads_len", "reads", "keyed", "keys", "tables"))
        n = len(tables)
        if lens.shape != (self.entries,) or int(lens[lens > 0].sum()) != len(flat) or keys.shape != (n, len(keyed)):
            raise ValueError("the learned tables do not fit these rules")
        if tables.ndim != 3 or tables.shape[1] != self.entries or tables.shape[2] > self.width:
            raise ValueError("the learned tables do not fit these rules")
        at, reads = 0, []
        for k in lens.tolist():
            reads.append(None if k < 0 else tuple(flat[at : at + k].tolist()))
            at += max(k, 0)
        full = np.zeros((n, self.entries, self.width), dtype=np.int64)
        full[:, :, : tables.shape[2]] = tables
        self.reads, self.memo, self.keyed = reads, {}, tuple(keyed.tolist())
        self.class_of = {tuple(k): c for c, k in enumerate(keys.tolist())}
        self.tables, self._stacked = list(full), None

    def classes(self, vals: np.ndarray, group: Grouper | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(class id per card row, tables [classes, entries, width]) for many cards.

        `group(vals, facts)` may replace the numpy grouping of rows by fact values (same result)."""
        while True:
            keyed = self.keyed
            if group is None:
                uniq, first, inverse = unique_rows(self.facts.columns(vals, keyed))
            else:
                uniq, first, inverse = group(vals, keyed)
            ids = np.empty(len(uniq), dtype=np.int64)
            for u in range(len(uniq)):
                key = tuple(uniq[u].tolist())
                cid = self.class_of.get(key)
                if cid is None:
                    cid = self._new_class(key, vals[first[u]])
                    if cid is None:  # keyed anew: group again
                        break
                ids[u] = cid
            else:
                if self._stacked is None or len(self._stacked) != len(self.tables):
                    self._stacked = np.stack(self.tables)
                return ids[inverse.reshape(-1)], self._stacked


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
        """(award ids, arrays): what was learned, to keep beside the solver's table (`restore` takes it
        back). Only the score and award columns in use are kept; tables with events are not kept."""
        if self.event_ids is not None:
            raise Untabulable("score tables with events are not kept")
        return {"award_ids": list(self.award_ids)}, self.traced.state(1 + len(self.award_ids))

    def restore(self, meta: dict, arrays: dict[str, np.ndarray]) -> None:
        """Take back `state` (made for the same rules); ValueError where it does not fit."""
        ids = meta.get("award_ids")
        if not isinstance(ids, list) or not all(isinstance(a, str) for a in ids) or len(ids) > self.max_awards:
            raise ValueError("the learned award ids do not fit these rules")
        if ids[: len(self.award_ids)] != self.award_ids or arrays["tables"].shape[-1:] != (1 + len(ids),):
            raise ValueError("the learned award ids do not fit these rules")
        self.traced.restore(arrays)
        self.award_ids[:] = ids
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
        self.traced = Traced(self.facts, 1, width, self._end)

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
