"""The rule tracer: a rule hook's answers for many cards, learned from a few traced calls and reused soundly.

A hook is a deterministic function of what it reads (`language.tracing`): one call on a traced card records
the card *facts* it read (`box_reads`), and its answer then holds for every card that agrees on those facts.
A fact is 'box j is filled' or 'the score in box j'; a card is a row `vals` of one int per box (`EMPTY`: open).

A *class* is a set of cards the rules cannot tell apart: they agree on every fact the rules read, so one
answer (one table) serves them all. `Traced` tabulates f(card, entry) for entries 0..E-1 (each (first roll?,
roll, box) of the score, say) and keys its classes on the facts the entries were seen to read (`keyed`).
Entries that read the same facts form a *group*, whose answers are kept by those facts' values, so a card's
table is one lookup per group. The solver (`solver.rules`) means the same by a class but must enumerate
them before play: it keys one on every fact the rules may read, as a class code (`numeric.coding`).
What `Traced` learned goes to and from plain arrays (`state`, `restore`), for its caller to keep on disk.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence

import numpy as np

from ..errors import DicecupError
from ..language.model import Card, Variant
from ..language.tracing import VALUE, Reads, traced_card, tracing
from .coding import EMPTY

__all__ = ["WHOLE_TABLES", "CardFacts", "ClassTables", "Grouper", "Traced", "Untabulable", "box_reads", "unique_rows"]

#: Whole tables `Traced.table` keeps for cards whose facts repeat (a few MB each for Yamb's tens of thousands
#: of entries), the oldest forgotten first.
WHOLE_TABLES = 4


class Untabulable(DicecupError):
    """The rules need something the tables cannot hold (the game situation, the awards): the engine plays them."""


def box_reads(reads: Reads, index: Mapping[str, int]) -> dict[int, int]:
    """What one traced call read of each box, by position in `index` (box id -> position): FILLED and/or
    VALUE bits. A read of the card as a whole ("*": iterating it, its size) is a read of every box."""
    if "*" not in reads.boxes:  # (each box read once: no kinds to merge)
        return {index[name]: kind for name, kind in reads.boxes.items() if name in index}
    out: dict[int, int] = {}
    for name, kind in reads.boxes.items():
        for b in index.values() if name == "*" else (index[name],) if name in index else ():
            out[b] = out.get(b, 0) | kind
    return out


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
        # (the score column holds EMPTY for an open box: a value read needs no presence fact)
        return frozenset(self.n + j if kind & VALUE else j for j, kind in box_reads(reads, self.index).items())

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


class _Group:
    """The entries whose calls read the same facts, and their answers by those facts' values.

    `members` only grows (an entry that reads more moves to another group and is marked not `live` here), so
    positions stay put; each answer is (known [capacity], results [capacity, width]), grown by doubling. `full`
    holds, by fact values whose answers are known for every live member, those members and their results as
    compact arrays (what a card's table takes at once); it is cleared as members change."""

    __slots__ = ("answers", "at", "full", "index", "live", "members")

    def __init__(self) -> None:
        self.members: list[int] = []
        self.at: dict[int, int] = {}
        self.index = np.zeros(0, dtype=np.int64)  # members as an array (capacity long)
        self.live = np.zeros(0, dtype=bool)
        self.answers: dict[tuple[int, ...], tuple[np.ndarray, np.ndarray]] = {}
        self.full: dict[tuple[int, ...], tuple[np.ndarray, np.ndarray]] = {}

    def join(self, e: int) -> int:
        self.full.clear()
        at = self.at[e] = len(self.members)
        self.members.append(e)
        if at == len(self.index):
            grow = max(8, at)
            self.index = np.concatenate([self.index, np.zeros(grow, dtype=np.int64)])
            self.live = np.concatenate([self.live, np.zeros(grow, dtype=bool)])
        self.index[at], self.live[at] = e, True
        return at

    def join_all(self, entries: np.ndarray) -> np.ndarray:
        """`join` each of `entries` (none a member yet), at once; their places."""
        self.full.clear()
        start, n = len(self.members), len(entries)
        self.members.extend(entries.tolist())
        self.at.update(zip(self.members[start:], range(start, start + n), strict=True))
        if start + n > len(self.index):
            grow = max(8, start + n) - len(self.index)
            self.index = np.concatenate([self.index, np.zeros(grow, dtype=np.int64)])
            self.live = np.concatenate([self.live, np.zeros(grow, dtype=bool)])
        self.index[start : start + n], self.live[start : start + n] = entries, True
        return np.arange(start, start + n, dtype=np.int64)

    def answer(self, values: tuple[int, ...], width: int) -> tuple[np.ndarray, np.ndarray]:
        """The answers kept for these fact values (made empty, or grown to the members' capacity)."""
        got = self.answers.get(values)
        cap = len(self.index)
        if got is None or len(got[0]) < cap:
            known, results = np.zeros(cap, dtype=bool), np.zeros((cap, width), dtype=np.int64)
            if got is not None:
                known[: len(got[0])], results[: len(got[0])] = got
            got = self.answers[values] = (known, results)
        return got


class ClassTables:
    """Each class's table [entries, width], in class order: made from the answers that `Traced.restore` read on
    first use and kept from then (a kept cache holds hundreds of classes of large tables, and a run reads
    few of them whole), or appended as classes are learned. A table handed out is the same object on every use.
    `into` copies one into a caller's buffer without keeping it (for a reader of every class, once)."""

    def __init__(
        self,
        make: Callable[[int, np.ndarray], None] | None = None,
        n: int = 0,
        shape: tuple = (),
        make_all: Callable[[], np.ndarray] | None = None,
    ) -> None:
        self._made: list[np.ndarray | None] = [None] * n
        self._make, self._shape, self._make_all = make, shape, make_all

    def __len__(self) -> int:
        return len(self._made)

    @property
    def made(self) -> int:
        """How many of the tables are made (learned, or made from restored answers since)."""
        return sum(t is not None for t in self._made)

    def __getitem__(self, c: int) -> np.ndarray:
        got = self._made[c]
        if got is None:
            got = np.empty(self._shape, dtype=np.int64)
            assert self._make is not None  # only restored tables are made later
            self._make(c, got)
            self._made[c] = got
        return got

    def __iter__(self) -> Iterator[np.ndarray]:
        return (self[c] for c in range(len(self)))

    def append(self, table: np.ndarray) -> None:
        self._made.append(table)

    def stacked(self) -> np.ndarray:
        """Every class's table, stacked [classes, entries, width]: made at once (`make_all`) where none was made
        yet, the tables handed out from then on being its rows."""
        if self._make_all is not None and self._made and all(t is None for t in self._made):
            got = self._make_all()
            self._made = list(got)
            return got
        return np.stack(list(self))

    def into(self, c: int, out: np.ndarray) -> None:
        """Class c's table copied into `out` (of its shape), not kept when it was not made yet."""
        got = self._made[c]
        if got is not None:
            out[...] = got
        else:
            assert self._make is not None
            self._make(c, out)


class Traced:
    """f(card, entry) for entries 0..E-1, learned from traced calls and kept by the facts each entry reads.

    `table(vals_row)` gives the whole [E, width] table for one card; `classes(vals)` groups many cards into
    classes that share one table and returns each card's class and the stacked tables. `asked` counts the
    engine calls made (what a table learned from the cache saves)."""

    def __init__(self, facts: CardFacts, entries: int, width: int, evaluate: Callable[[Card, int], np.ndarray]) -> None:
        self.facts = facts
        self.entries = entries
        self.width = width
        self.evaluate = evaluate
        self.asked = 0
        self._forget_entries()
        self.keyed: tuple[int, ...] = ()  # union of all entries' reads: what a class is keyed on
        self.class_of: dict[tuple, int] = {}
        self.tables = ClassTables()
        self._stacked: np.ndarray | None = None

    def _forget_entries(self) -> None:
        # the last few whole tables by their groups' fact values, made with nothing asked (`table`): a card whose
        # facts repeat (Yamb's scores read none) takes its table as it is; forgotten whenever the engine answers
        self._whole: dict[tuple, np.ndarray] = {}
        self.reads: list[tuple[int, ...] | None] = [None] * self.entries
        self._groups: dict[tuple[int, ...], _Group] = {}
        self._fresh: set[int] = set(range(self.entries))  # entries never asked

    def _ask(self, e: int, card: Card, fv: list[int]) -> np.ndarray:
        """One engine call, traced: its answer kept by the facts entry `e` has read so far (this call's too)."""
        with tracing() as seen:  # the one trace of this engine call: what the answer depends on
            result = np.asarray(self.evaluate(card, e), dtype=np.int64)
        self.asked += 1
        self._whole.clear()
        old = self.reads[e]
        merged = tuple(sorted(self.facts.facts_of(seen) | set(old or ())))
        group = self._groups.get(merged)
        if group is None:
            group = self._groups[merged] = _Group()
        if merged != old:
            if old is None:
                self._fresh.discard(e)
            else:
                gone = self._groups[old]
                gone.live[gone.at[e]] = False
                gone.full.clear()
            self.reads[e] = merged
            group.join(e)
        values = tuple(fv[f] for f in merged)
        group.full.pop(values, None)  # (kept only where every live member was known: this one was not)
        known, results = group.answer(values, self.width)
        at = group.at[e]
        known[at], results[at] = True, result
        return result

    def _known(self, key: tuple[tuple[int, ...], ...], out: np.ndarray) -> list[int]:
        """Fill `out` [entries, width] with the answers known for the card whose facts give each group the
        values in `key` (in group order); the entries missing (ascending: the engine is asked in entry order).
        Groups whose every live member is known for these values (`_Group.full`) are filled by one assignment."""
        missing = list(self._fresh)
        whole: list[tuple[np.ndarray, np.ndarray]] = []
        for values, group in zip(key, self._groups.values(), strict=True):
            full = group.full.get(values)
            if full is not None:
                whole.append(full)
                continue
            n = len(group.members)
            got = group.answers.get(values)
            live = group.live[:n]
            if got is None:
                missing.extend(group.index[:n][live].tolist())
                continue
            have = min(n, len(got[0]))  # (members that joined since these answers were kept: not known)
            hit = live[:have] & got[0][:have]
            known = group.index[:have][hit], got[1][:have][hit]
            out[known[0]] = known[1]
            miss = live.copy()
            miss[:have] &= ~got[0][:have]
            if miss.any():
                missing.extend(group.index[:n][miss].tolist())
            else:
                group.full[values] = known
        if whole:
            out[np.concatenate([w[0] for w in whole])] = np.concatenate([w[1] for w in whole])
        return sorted(missing)

    def table(self, row: np.ndarray) -> np.ndarray:
        """The [entries, width] table for the card `row` (exact; read-only: the same table answers every card
        whose facts give its groups the same values, for as long as nothing new is asked)."""
        fv = list(self.facts.key(row.tolist(), range(2 * self.facts.n)))  # (one row: no numpy columns)
        key = tuple(tuple(fv[f] for f in facts) for facts in self._groups)
        got = self._whole.get(key)
        if got is not None:
            return got
        out = np.empty((self.entries, self.width), dtype=np.int64)
        missing = self._known(key, out)
        if missing:
            card = self.facts.traced(row)  # (immutable: its reads go to whoever traces)
            for e in missing:
                out[e] = self._ask(e, card, fv)
        else:
            if len(self._whole) >= WHOLE_TABLES:
                del self._whole[next(iter(self._whole))]
            self._whole[key] = out
        out.flags.writeable = False
        return out

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
        union = tuple(sorted(set().union(*self._groups)))
        if union != self.keyed:
            self.keyed, self.class_of, self.tables, self._stacked = union, {}, ClassTables(), None
            return None
        cid = self.class_of[key] = len(self.tables)
        self.tables.append(table)
        return cid

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
                    self._stacked = self.tables.stacked()
                return ids[inverse.reshape(-1)], self._stacked

    # ------------------------------------------------------------------ what was learned, as arrays

    def _key_values(self, key: Sequence[int]) -> list[int]:
        """Fact values of a class's key, as `table` indexes them (the facts no entry reads: 0)."""
        fv = [0] * (2 * self.facts.n)
        for f, x in zip(self.keyed, key, strict=True):
            fv[f] = int(x)
        return fv

    def state(self) -> dict[str, np.ndarray]:
        """What was learned, as arrays: every entry's reads, its answers by the values of those facts (one row
        each), the facts classes are keyed on and each class's key. `restore` takes it back; the class tables
        are made again from the answers (no engine call)."""
        for key, c in self.class_of.items():  # a class's answers under reads that grew after it was made
            fv = self._key_values(key)
            for facts, group in self._groups.items():
                known, results = group.answer(tuple(fv[f] for f in facts), self.width)
                n = len(group.members)
                fill = group.live[:n] & ~known[:n]
                if fill.any():  # (a class restored from its answers has them all: its table is not made)
                    known[:n][fill], results[:n][fill] = True, self.tables[c][group.index[:n][fill]]
        used = max([len(r) for r in self.reads if r], default=0)  # values padded to the longest reads
        entry, values, answers = (
            [np.zeros(0, dtype=np.int64)],
            [np.zeros((0, used), np.int64)],
            [np.zeros((0, self.width), np.int64)],
        )
        for group in self._groups.values():
            n = len(group.members)
            for vals, (known, results) in group.answers.items():
                at = np.flatnonzero(group.live[:n] & known[:n])
                entry.append(group.index[at])
                answers.append(results[at])
                values.append(np.tile(np.array(vals + (0,) * (used - len(vals)), dtype=np.int64), (len(at), 1)))
        got = np.concatenate(answers)
        if len(got) and np.abs(got).max() < 1 << 31:
            got = got.astype(np.int32)  # half the bytes to read back
        return {
            "reads_len": np.array([-1 if r is None else len(r) for r in self.reads], dtype=np.int64),
            "reads": np.array([f for r in self.reads if r for f in r], dtype=np.int64),
            "entry": np.concatenate(entry),
            "values": np.concatenate(values),
            "answers": got,
            "keyed": np.array(self.keyed, dtype=np.int64),
            "keys": np.array(sorted(self.class_of, key=self.class_of.__getitem__), dtype=np.int64).reshape(
                len(self.class_of), len(self.keyed)
            ),
        }

    def restore(self, arrays: dict[str, np.ndarray]) -> None:
        """Take back what `state` gave (of tables for the same rules); ValueError where the arrays do not fit."""
        lens, flat, entry, values, answers, keyed, keys = (
            arrays[k] for k in ("reads_len", "reads", "entry", "values", "answers", "keyed", "keys")
        )
        m, nf = len(entry), 2 * self.facts.n
        fits = (
            lens.shape == (self.entries,)
            and int(lens[lens > 0].sum()) == len(flat)
            and bool(((flat >= 0) & (flat < nf)).all())
            and entry.shape == (m,)
            and bool(((entry >= 0) & (entry < self.entries)).all())
            and values.ndim == 2
            and len(values) == m
            and values.shape[1] >= max(lens.max(initial=0), 0)
            and answers.shape == (m, self.width)
            and keys.ndim == 2
            and keys.shape[1] == len(keyed)
            and bool(((keyed >= 0) & (keyed < nf)).all())
        )
        if not fits:
            raise ValueError("the learned tables do not fit these rules")
        self._forget_entries()
        at = 0
        gid = np.full(self.entries, -1, dtype=np.int64)  # each entry's group, in the order groups are met
        pos = np.zeros(self.entries, dtype=np.int64)  # and its place in the group
        joining: dict[tuple[int, ...], list[int]] = {}  # each group's entries, groups in the order they are met
        flat_list = flat.tolist()
        for e, k in enumerate(lens.tolist()):
            if k >= 0:
                facts = tuple(flat_list[at : at + k])
                at += k
                self.reads[e] = facts
                got = joining.get(facts)
                if got is None:
                    got = joining[facts] = []
                got.append(e)
        for g, (facts, members) in enumerate(joining.items()):
            self._fresh.difference_update(members)
            self._groups[facts] = group = _Group()
            joined = np.array(members, dtype=np.int64)
            pos[joined] = group.join_all(joined)
            gid[joined] = g
        self._restore_answers(gid, pos, entry, values, answers)
        self.keyed = tuple(keyed.tolist())
        if self.keyed != tuple(sorted(set().union(*self._groups))):
            raise ValueError("the learned tables do not fit these rules")
        self.class_of, self.tables, self._stacked = {}, ClassTables(), None
        key_list = keys.tolist()
        if len(set(map(tuple, key_list))) != len(keys):
            raise ValueError("the learned tables do not fit these rules")
        tables = self._class_tables(keys)
        self.class_of = {tuple(key): c for c, key in enumerate(key_list)}
        self.tables = tables

    def _restore_answers(
        self, gid: np.ndarray, pos: np.ndarray, entry: np.ndarray, values: np.ndarray, answers: np.ndarray
    ) -> None:
        """Put answer i (of `entry[i]`, under the fact values `values[i]`) into its group's answers (`gid`: each
        entry's group, `pos` its place there), a group and a set of values at a time; each group's sets of
        values are added in the order they are first met, as one answer at a time would add them."""
        g = gid[entry]
        if (g < 0).any():
            raise ValueError("the learned tables do not fit these rules")
        by_group = np.argsort(g, kind="stable")
        bounds = np.searchsorted(g[by_group], np.arange(len(self._groups) + 1))
        for n, (facts, group) in enumerate(self._groups.items()):
            mine = by_group[bounds[n] : bounds[n + 1]]  # this group's answers, in file order
            if not len(mine):
                continue
            uniq, first, inverse = unique_rows(values[mine, : len(facts)])
            at, cap = pos[entry[mine]], len(group.index)
            # every set of values's answers in one block (each set's pair a view of its rows: a variant's end
            # bonuses have thousands of sets, each its own pair of arrays would cost more than the answers)
            known = np.zeros((len(uniq), cap), dtype=bool)
            results = np.zeros((len(uniq), cap, self.width), dtype=np.int64)
            known[inverse, at], results[inverse, at] = True, answers[mine]
            order = np.argsort(first, kind="stable")
            for u, vals in zip(order.tolist(), uniq[order].tolist(), strict=True):
                group.answers[tuple(vals)] = (known[u], results[u])

    def _class_tables(self, keys: np.ndarray) -> ClassTables:
        """The tables of classes keyed `keys` (on `keyed`), each made on first use from the answers known (as
        `_known` gives one class's); ValueError, now, where an answer is missing."""
        n_classes = len(keys)
        if n_classes == 0:
            return ClassTables()
        if self._fresh:
            raise ValueError("the learned tables miss answers of their classes")
        fv = np.zeros((n_classes, 2 * self.facts.n), dtype=np.int64)
        fv[:, list(self.keyed)] = keys
        blocks: list[tuple[np.ndarray, np.ndarray]] = []  # per group: each class's answer, the answers [A, m, width]
        members = []
        for facts, group in self._groups.items():
            n = len(group.members)
            live = np.flatnonzero(group.live[:n])
            if not len(live):
                continue
            members.append(group.index[live])
            # the classes' sets of these facts' values, numbered in the order the classes first have them
            uniq, first, inverse = unique_rows(fv[:, list(facts)])
            order = np.argsort(first, kind="stable")
            rank = np.empty(len(order), dtype=np.int64)
            rank[order] = np.arange(len(order))
            which = rank[inverse]
            sets = [tuple(v) for v in uniq[order].tolist()]
            if any(v not in group.answers for v in sets):
                raise ValueError("the learned tables miss answers of their classes")
            # (restored together, a group's answers share one capacity: np.stack refuses them otherwise)
            known = np.stack([group.answers[v][0] for v in sets])[:, live]
            results = np.stack([group.answers[v][1] for v in sets])[:, live]
            if not known.all():
                raise ValueError("the learned tables miss answers of their classes")
            blocks.append((which, results))
        order = np.concatenate(members) if members else np.zeros(0, dtype=np.int64)
        ordered = np.sort(order)  # (np.unique would import numpy.ma: a cost every simulate run would pay)
        if len(order) != self.entries or bool((ordered[1:] == ordered[:-1]).any()):
            raise ValueError("the learned tables miss answers of their classes")
        back = np.empty(self.entries, dtype=np.int64)
        back[order] = np.arange(self.entries)

        def make(c: int, out: np.ndarray) -> None:  # the class's answers in the groups' order, put in entry order
            np.take(np.concatenate([results[which[c]] for which, results in blocks]), back, axis=0, out=out)

        def make_all() -> np.ndarray:  # every class's at once, as `make` makes each
            return np.take(np.concatenate([results[which] for which, results in blocks], axis=1), back, axis=1)

        return ClassTables(make, n_classes, (self.entries, self.width), make_all)
