"""Compiled (numba) kernels for batched optimal play: best-move rows per state, then whole games.

Same arithmetic and tie rules as the numpy path in `optimal.py` (which stays the
reference, and the fallback when numba is missing): the value of scoring each
roll is the best, over legal open boxes, of the engine-table points plus the
solver's value after; keeps come from the numeric core's one turn recursion
(`numeric.turn`). A state's turn is folded once into a compact row of best moves
(`fill_moves`: per roll on the table and decision, the dice kept or the box
scored); `play_games` then plays each game turn after turn, coding its card into
its solver state as boxes fill (`numeric.lookup`), and stops a game only where a
row or a score class is still missing. Dice come from a per-game splitmix64
stream, so a game's dice depend only on (seed, game number), not on how games
are batched or how many threads play them.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..numeric import compiled, lookup, turn
from ..numeric.coding import EMPTY
from ..numeric.turn import W

__all__ = [
    "AVAILABLE",
    "Classes",
    "Coding",
    "Games",
    "ScoreArrays",
    "TurnStates",
    "class_slots",
    "fill_moves",
    "group_facts",
    "move_flag",
    "play_games",
    "seed_streams",
]

TIE = 1e-9
EMPTY_INT = int(EMPTY)  # an open box, as a compile-time constant
MASK64 = (1 << 64) - 1


class TurnStates(NamedTuple):
    """Solver states whose best moves are wanted: where they may score and what each successor is worth."""

    score_class: np.ndarray  # int64 [S]: the state's class of the score tables
    same: np.ndarray  # bool [S]: the first roll scores like a later one
    masks: np.ndarray  # int64 [S]: filled boxes
    later_bits: np.ndarray  # int64 [S]: legal boxes after a later roll (when the roll does not matter)
    first_bits: np.ndarray  # int64 [S]: ... after the first roll
    rd_index: np.ndarray  # int64 [S]: row of rd_tables when legality depends on the roll, else -1
    rd_tables: np.ndarray  # int64 [T, rolls, 2]: legal-box bits per roll and first roll?
    after: np.ndarray  # float64 [S, slots]: solver value after each slot (box * kmax + the box's slot)


class ScoreArrays(NamedTuple):
    """The engine's points per score class, with the successor slot each score leads to."""

    points: np.ndarray  # float64 [C, 2, boxes, rolls]: box score plus awards
    slots: np.ndarray  # int64 [C, 2, boxes, rolls]: the successor slot, -1 for a score the solver never saw


class Coding(NamedTuple):
    """The solver's state coding (`numeric.coding.StateIndex`) as arrays a kernel updates box by box."""

    flag_vals: np.ndarray  # int64 [boxes, K]: the declared flag values of each box (first flag_n[b] used)
    flag_n: np.ndarray  # int64 [boxes]
    radix: np.ndarray  # int64 [boxes]: the weight of each box's flag digit (above the filled bits)
    groups: np.ndarray  # int64 [G, boxes]: 1 where a box counts towards a threshold group's total


class Classes(NamedTuple):
    """The score classes known so far (`tables.Traced`): their keys in an open-addressing hash, and tables."""

    facts: np.ndarray  # int64 [F]: the facts a class is keyed on (`CardFacts`: f < boxes filled, else a score)
    keys: np.ndarray  # int64 [C, F]: each class's fact values
    slots: np.ndarray  # int64 [P]: class at each hash slot, -1 empty (P a power of two, at least 2C)
    scores: np.ndarray  # int32 [C, 2, rolls, boxes]: the box score (the score tables' first column)
    extra: np.ndarray  # int32 [C, 2, rolls, boxes]: the row of `extras` where awards or events are won, else -1
    extras: np.ndarray  # int64 [E, awards + events]: award points and events (the tables' other columns)


class Games(NamedTuple):
    """The games of a batch, one row each, with their solver state kept up to date as boxes fill."""

    vals: np.ndarray  # int64 [N, boxes]: box scores, EMPTY where open
    awards: np.ndarray  # int64 [N, awards]
    earned: np.ndarray  # int64 [N, awards]: times each award was won (scorings giving it nonzero points)
    events: np.ndarray  # int64 [N, events]: times each event happened (the tables' last columns)
    rng: np.ndarray  # uint64 [N]: splitmix64 state
    code: np.ndarray  # int64 [N]: class code (filled bits, flag digits above)
    prog: np.ndarray  # int64 [N, G]: threshold group totals, not clamped


def move_flag(dice: int, boxes: int) -> tuple[type, int] | None:
    """(dtype, flag bit) of a best-move entry: a keep as a mask of the sorted dice, or flag | box;
    None when the dice or boxes do not fit the widest entry."""
    for dtype, bits in ((np.uint8, 8), (np.uint16, 16), (np.uint32, 32)):
        if dice < bits and boxes < (1 << (bits - 1)) - 1:
            return dtype, 1 << (bits - 1)
    return None


def seed_streams(seed: int, first_game: int, games: int) -> np.ndarray:
    """The initial splitmix64 state of games first_game .. first_game + games - 1 of a run."""
    base = np.uint64((seed * 0x9E3779B97F4A7C15 + 0x632BE59BD9B4E019) & MASK64)
    with np.errstate(over="ignore"):
        return base + np.arange(first_game, first_game + games, dtype=np.uint64) * np.uint64(0xD1B54A32D192ED03)


AVAILABLE = compiled.AVAILABLE and compiled.NUMBA
"""The simulator's kernels are compiled by numba where it is installed (they are not built ahead of time)."""

if AVAILABLE:
    numba = compiled.numba_module()
    turn_block = turn.jitted()
    state_slot = lookup.jitted()

    @numba.njit(cache=True, nogil=True)
    def group_facts(vals, facts, nb, empty, max_size):
        """Group card rows by their values of `facts` (fact f < nb: box f filled; else the score in box
        f - nb): (first row of each group, group of each row), or empty arrays when the packed key range
        exceeds max_size (the caller then groups with numpy)."""
        n = vals.shape[0]
        m = facts.shape[0]
        lo = np.zeros(m, dtype=np.int64)
        span = np.ones(m, dtype=np.int64)
        for k in range(m):
            f = facts[k]
            if f < nb:
                lo[k] = 0
                span[k] = 2
                continue
            mn: np.int64 | int = np.int64(2**62)
            mx: np.int64 | int = -np.int64(2**62)
            for i in range(n):
                x = vals[i, f - nb]
                if x != empty:
                    mn = min(mn, x)
                    mx = max(mx, x)
            if mn > mx:
                mn = 0
                mx = 0
            lo[k] = mn - 1  # code 0: open box
            span[k] = mx - mn + 2
        size = 1
        for k in range(m):
            size *= span[k]
            if size > max_size:
                return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)
        first_of = np.full(size, -1, dtype=np.int64)
        slot = np.empty(size, dtype=np.int64)
        inverse = np.empty(n, dtype=np.int64)
        firsts = np.empty(n, dtype=np.int64)
        groups = 0
        for i in range(n):
            key = 0
            w = 1
            for k in range(m):
                f = facts[k]
                if f < nb:
                    x = 1 if vals[i, f] != empty else 0
                else:
                    x = vals[i, f - nb]
                    x = 0 if x == empty else x - lo[k]
                key += x * w
                w *= span[k]
            if first_of[key] < 0:
                first_of[key] = i
                slot[key] = groups
                firsts[groups] = i
                groups += 1
            inverse[i] = slot[key]
        return firsts[:groups].copy(), inverse

    @numba.njit(cache=True, nogil=True, inline="always")
    def _next(state, g):
        """splitmix64: advance game g's stream, return 64 random bits."""
        state[g] += np.uint64(0x9E3779B97F4A7C15)
        z = state[g]
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))

    @numba.njit(cache=True, nogil=True, inline="always")
    def _die(state, g, faces):
        """A uniform face 1..faces (rejection sampling on 32 bits: no modulo bias)."""
        limit = np.uint64((1 << 32) - ((1 << 32) % faces))
        while True:
            x = _next(state, g) >> np.uint64(32)
            if x < limit:
                return int(x % np.uint64(faces)) + 1

    @numba.njit(cache=True, nogil=True)
    def _tables(s, w, st, sc, now, best_box, errors):
        """State s's scoring tables in column w: now[f, r, w] the best value of scoring roll r (f = 1: first
        roll) and best_box[w, f, r] the first box reaching it. The core's turn recursion then folds a block
        of such columns into keeps[i, row, w], the value of keeping multiset `row` after roll i + 1."""
        n_rolls = now.shape[1]
        points, slots, after, rd_tables = sc.points, sc.slots, st.after, st.rd_tables  # once: no refcounts per read
        nb = points.shape[2]
        c = st.score_class[s]
        rd = st.rd_index[s]
        mask = st.masks[s]
        for f in range(2):
            if f == 1 and st.same[s]:
                for r in range(n_rolls):
                    now[1, r, w] = now[0, r, w]
                    best_box[w, 1, r] = best_box[w, 0, r]
                break
            for r in range(n_rolls):
                now[f, r, w] = -np.inf
                best_box[w, f, r] = -1
            bits = st.first_bits[s] if f == 1 else st.later_bits[s]
            for b in range(nb):
                if (mask >> b) & 1:
                    continue
                if rd < 0 and not (bits >> b) & 1:
                    continue
                for r in range(n_rolls):
                    if rd >= 0 and not (rd_tables[rd, r, f] >> b) & 1:
                        continue
                    sl = slots[c, f, b, r]
                    if sl < 0:
                        errors[0] += 1
                        continue
                    v = points[c, f, b, r] + after[s, sl]
                    if v > now[f, r, w]:
                        now[f, r, w] = v
                        best_box[w, f, r] = b

    @numba.njit(cache=True, nogil=True)
    def _best_keep(
        stage, hand, w, keeps, now, row_counts, sub_face, add_edges, lo_roll, counts, pick, opt_val, opt_row
    ):
        """The keep taken at decision `stage` (after roll stage + 1) with `hand` on the table, or -1 to score:
        keeps in GameState.legal_keeps order (an odometer, the last face fastest), the first within TIE
        of the best, taken when better than scoring (worth `now`) by more than TIE."""
        faces = counts.shape[0]
        for f in range(faces):
            counts[f] = row_counts[hand, f]
            pick[f] = 0
        n_opt = 0
        top = -np.inf
        krow = 0
        while True:
            if krow < lo_roll:
                v = keeps[stage, krow, w]
                opt_val[n_opt] = v
                opt_row[n_opt] = krow
                n_opt += 1
                if v > top:
                    top = v
            f = faces - 1
            while f >= 0 and pick[f] == counts[f]:
                for _ in range(pick[f]):
                    krow = sub_face[krow, f]
                pick[f] = 0
                f -= 1
            if f < 0:
                break
            pick[f] += 1
            krow = add_edges[krow, f]
        if top > now + TIE:
            for j in range(n_opt):
                if opt_val[j] >= top - TIE:
                    return opt_row[j]
        return -1

    @numba.njit(cache=True, nogil=True, inline="always")
    def _mask_of(hand, keep, row_counts):
        """Keep row `keep` of `hand` as a mask over hand's dice in sorted order (each face's first dice)."""
        mask = 0
        pos = 0
        for f in range(row_counts.shape[1]):
            k = row_counts[keep, f]
            for j in range(row_counts[hand, f]):
                if j < k:
                    mask |= 1 << pos
                pos += 1
        return mask

    @numba.njit(cache=True, nogil=True, inline="always")
    def _merge(v, r, top):
        """Fold (value, row) into top = [best value, its row, the best value of another row, that row]."""
        if r == top[1]:
            return
        if v > top[0]:
            top[2], top[3] = top[0], top[1]
            top[0], top[1] = v, r
        elif v > top[2]:
            top[2], top[3] = v, r

    @numba.njit(cache=True, nogil=True)
    def _top_two(stage, w, keeps, sub_edges, sub_count, lo_roll, two):
        """two[row] = the best two distinct keeps within every keep row (itself and its sub-multisets), at
        decision `stage`: [value, row, value, row]. Children come first (rows are ordered by size)."""
        for row in range(lo_roll):
            two[row, 0], two[row, 1], two[row, 2], two[row, 3] = keeps[stage, row, w], row, -np.inf, -1
            for j in range(sub_count[row]):
                ch = sub_edges[row, j]
                _merge(two[ch, 0], two[ch, 1], two[row])
                _merge(two[ch, 2], two[ch, 3], two[row])

    @numba.njit(cache=True, parallel=True)
    def fill_moves(st, sc, rows, moves, flag, d, rolls, errors):
        """The best-move rows of states st (row rows[s] of `moves`, [rows, rolls of the graph, decisions]):
        per roll on the table and decision, a keep (a mask of the sorted dice) or flag | the box to score
        (flag | (flag - 1) where no legal box could be valued). Folded W states at a time, in parallel."""
        n_states = rows.shape[0]
        lo_roll = d.levels[d.dice]
        n_rolls = d.levels[d.dice + 1] - lo_roll
        n_rows = d.add_edges.shape[0]
        invalid = flag | (flag - 1)
        for task in numba.prange((n_states + W - 1) // W):
            now = np.zeros((2, n_rolls, W))  # W states' tables side by side: the turn recursion runs over them
            best_box = np.empty((W, 2, n_rolls), dtype=np.int64)
            keeps = np.empty((max(rolls - 1, 1), lo_roll, W))
            val = np.empty((n_rolls, W))
            keep = np.empty((n_rows, W))
            best = np.empty((n_rows, W))
            counts = np.zeros(d.faces, dtype=np.int64)
            pick = np.zeros(d.faces, dtype=np.int64)
            opt_val = np.empty(1 << d.dice)
            opt_row = np.empty(1 << d.dice, dtype=np.int64)
            rows_of = np.zeros(rolls, dtype=np.int64)  # `reference.plain_pick`: the first roll's row, then later ones'
            rows_of[rolls - 1] = 1
            no_levels = np.empty((0, n_rolls, W))
            two = np.empty((lo_roll, 4))
            top = np.empty(4)
            k0 = task * W
            block = min(W, n_states - k0)
            for w in range(block):
                _tables(k0 + w, w, st, sc, now, best_box, errors)
            turn_block(now, rows_of, rows_of, d, val, keep, best, keeps, no_levels)
            row_counts, sub_face, add_edges = d.row_counts, d.sub_face, d.add_edges
            sub_edges, sub_count = d.sub_edges, d.sub_count
            for w in range(block):
                row = rows[k0 + w]
                for stage in range(rolls):
                    f1 = 1 if stage == 0 else 0
                    if stage < rolls - 1:
                        _top_two(stage, w, keeps, sub_edges, sub_count, lo_roll, two)
                    for r in range(n_rolls):
                        hand = lo_roll + r
                        if stage < rolls - 1:
                            top[0], top[1], top[2], top[3] = -np.inf, -1, -np.inf, -1
                            for j in range(sub_count[hand]):  # the best two proper keeps of the hand
                                ch = sub_edges[hand, j]
                                _merge(two[ch, 0], two[ch, 1], top)
                                _merge(two[ch, 2], two[ch, 3], top)
                            if top[0] > now[f1, r, w] + TIE:
                                krow = np.int64(top[1])
                                if top[2] >= top[0] - TIE:  # a near tie: the first in GameState.legal_keeps order
                                    krow = _best_keep(
                                        stage,
                                        hand,
                                        w,
                                        keeps,
                                        now[f1, r, w],
                                        row_counts,
                                        sub_face,
                                        add_edges,
                                        lo_roll,
                                        counts,
                                        pick,
                                        opt_val,
                                        opt_row,
                                    )
                                moves[row, r, stage] = _mask_of(hand, krow, row_counts)
                                continue
                        bb = best_box[w, f1, r]
                        if bb < 0 or not np.isfinite(now[f1, r, w]):
                            moves[row, r, stage] = invalid
                        else:
                            moves[row, r, stage] = flag | bb

    @numba.njit(cache=True, nogil=True, inline="always")
    def _hash(x, h):
        """One more value into an FNV-style hash."""
        return (h ^ np.uint64(x + (1 << 40))) * np.uint64(0x100000001B3)

    @numba.njit(cache=True, nogil=True)
    def class_slots(keys, size):
        """The hash slots of classes with these keys ([C, F]): class at each slot, -1 empty (size: a power of 2)."""
        slots = np.full(size, -1, dtype=np.int64)
        for c in range(keys.shape[0]):
            h = np.uint64(0xCBF29CE484222325)
            for k in range(keys.shape[1]):
                h = _hash(keys[c, k], h)
            j = np.int64(h & np.uint64(size - 1))
            while slots[j] >= 0:
                j = (j + 1) & (size - 1)
            slots[j] = c
        return slots

    @numba.njit(cache=True, nogil=True, inline="always")
    def _fact(vals, i, f, nb):
        """`CardFacts`' fact f of row i: box f filled (f < nb), else the score in box f - nb."""
        if f < nb:
            return 1 if vals[i, f] != EMPTY_INT else 0
        return vals[i, f - nb]

    @numba.njit(cache=True, nogil=True, inline="always")
    def _class_of(vals, i, facts, keys, slots):
        """The score class of row i's card (`Classes`), -1 when no class with its key is known yet."""
        nb = vals.shape[1]
        nf = facts.shape[0]
        h = np.uint64(0xCBF29CE484222325)
        for k in range(nf):
            h = _hash(_fact(vals, i, facts[k], nb), h)
        size = slots.shape[0]
        j = np.int64(h & np.uint64(size - 1))
        while True:
            c = slots[j]
            if c < 0:
                return -1
            same = True
            for k in range(nf):
                if keys[c, k] != _fact(vals, i, facts[k], nb):
                    same = False
                    break
            if same:
                return c
            j = (j + 1) & (size - 1)

    @numba.njit(cache=True, parallel=True)
    def play_games(active, gm, cod, sa, cl, row_of, moves, flag, d, rolls, pending, cls, errors):
        """Play games `active` (rows of gm) in parallel, each turn after turn while its score class and its
        state's best-move row are known. pending[k]: -1 when the card is full (or on an error, counted in
        `errors`), -2 when the class is unknown, else the slot of the state whose row is missing (cls[k]: the
        game's class)."""
        # every array once into a local: a record's field read in a loop costs a reference count each time
        vals, awards, earned, events, rng, codes, progs = gm
        flag_vals, flag_n, radix, groups = cod
        facts, keys, slots, scores, extra, extras = cl
        add_edges, row_counts, row_size = d.add_edges, d.row_counts, d.row_size
        zero = np.zeros(groups.shape[0], dtype=np.int64)
        full, size = sa.full, sa.size
        nb = vals.shape[1]
        n_groups = groups.shape[0]
        n_events = events.shape[1]
        n_awards = awards.shape[1]
        faces, dice = d.faces, d.dice
        lo_roll = d.levels[dice]
        for k in numba.prange(active.shape[0]):
            i = active[k]
            out = -1
            while True:
                code = codes[i]
                if (code & full) == full:
                    break
                c = _class_of(vals, i, facts, keys, slots)
                if c < 0:
                    out = -2
                    break
                slot = state_slot(sa, code, progs[i], zero)
                if slot >= size:
                    errors[2] += 1
                    break
                row = np.int64(row_of[slot])
                if row < 0:
                    out = slot
                    cls[k] = c
                    break
                hand = 0  # the empty multiset
                b = -1
                for used in range(1, rolls + 1):
                    for _ in range(dice - row_size[hand]):
                        hand = add_edges[hand, _die(rng, i, faces) - 1]
                    r = hand - lo_roll
                    x = np.int64(moves[row, r, used - 1])
                    if (x & flag) == 0 and used < rolls:  # keep the dice of mask x, reroll the rest
                        kept = 0
                        pos = 0
                        for f in range(faces):
                            for _ in range(row_counts[hand, f]):
                                if (x >> pos) & 1:
                                    kept = add_edges[kept, f]
                                pos += 1
                        hand = kept
                        continue
                    b = x & (flag - 1)
                    if (x & flag) == 0 or b >= nb or vals[i, b] != EMPTY_INT:
                        b = -1
                        break
                    f1 = 1 if used == 1 else 0
                    score = np.int64(scores[c, f1, r, b])
                    vals[i, b] = score
                    x = extra[c, f1, r, b]
                    if x >= 0:
                        for a in range(n_awards):
                            y = extras[x, a]
                            if y != 0:
                                awards[i, a] += y
                                earned[i, a] += 1
                        for e in range(n_events):
                            events[i, e] += extras[x, n_awards + e]
                    digit = 0
                    for j in range(flag_n[b]):
                        if flag_vals[b, j] == score:
                            digit = j + 1
                            break
                    codes[i] = code | (1 << b) | ((digit * radix[b]) << nb)
                    for g in range(n_groups):
                        if groups[g, b]:
                            progs[i, g] += score
                    break
                if b < 0:
                    errors[1] += 1
                    break
            pending[k] = out
