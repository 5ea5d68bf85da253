"""Compiled (numba) kernel for batched optimal play: per state, its turn tables, then whole turns of its games.

Same arithmetic and tie rules as the numpy path in `optimal.py` (which stays the
reference, and the fallback when numba is missing): the value of scoring each
roll is the best, over legal open boxes, of the engine-table points plus the
solver's value after; keeps are the solver kernel's two recursions over dice
multisets. Dice come from a per-game splitmix64 stream, so a game's dice depend
only on (seed, game number), not on how games are batched.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..solver.dp import graph_arrays as solver_graph_arrays
from ..solver.kernel import DiceGraph

numba: Any  # the module, or None where numba is not installed
try:
    import numba
except ImportError:  # pragma: no cover - exercised where numba is absent
    numba = None

__all__ = ["AVAILABLE", "card_codes", "graph_arrays", "group_by", "group_facts", "play_turn", "seed_streams"]

AVAILABLE = numba is not None
TIE = 1e-9
EMPTY_INT = np.iinfo(np.int32).min  # an open box (tables.EMPTY)
MASK64 = (1 << 64) - 1


def graph_arrays(graph: DiceGraph) -> dict[str, np.ndarray | int]:
    """The solver's dice-graph arrays, plus face counts and single-die removal per multiset."""
    base = solver_graph_arrays(graph)
    n = len(graph.multisets)
    counts = np.zeros((n, graph.faces), dtype=np.int64)  # how many of each face every multiset holds
    for i, m in enumerate(graph.multisets):
        for d in m:
            counts[i, d - 1] += 1
    # sub_face[row, f]: the row of the multiset with one die of face f + 1 removed (-1: it has none)
    index = {m: i for i, m in enumerate(graph.multisets)}
    sub_face = np.full((n, graph.faces), -1, dtype=np.int64)
    for i, m in enumerate(graph.multisets):
        for f in set(m):
            rest = list(m)
            rest.remove(f)
            sub_face[i, f - 1] = index[tuple(rest)]
    keep = ("levels", "add_edges", "sub_edges", "sub_count")
    return {**{k: base[k] for k in keep}, "row_counts": counts, "row_size": counts.sum(axis=1), "sub_face": sub_face}


def seed_streams(seed: int, first_game: int, games: int) -> np.ndarray:
    """The initial splitmix64 state of games first_game .. first_game + games - 1 of a run."""
    base = np.uint64((seed * 0x9E3779B97F4A7C15 + 0x632BE59BD9B4E019) & MASK64)
    with np.errstate(over="ignore"):
        return base + np.arange(first_game, first_game + games, dtype=np.uint64) * np.uint64(0xD1B54A32D192ED03)


if AVAILABLE:

    @numba.njit(cache=True, nogil=True)
    def card_codes(vals, empty, flag_box, flag_vals, flag_n, flag_radix, group_masks, nb):
        """Solver class code (filled mask + flag digits << nb) and raw group totals of every card row
        (the compiled twin of optimal._States.of)."""
        n = vals.shape[0]
        G = group_masks.shape[0]
        code = np.zeros(n, dtype=np.int64)
        raw = np.zeros((n, G), dtype=np.int64)
        for i in range(n):
            c = 0
            for b in range(nb):
                x = vals[i, b]
                if x != empty:
                    c |= 1 << b
                    for g in range(G):
                        if group_masks[g, b]:
                            raw[i, g] += x
            digits = 0
            for k in range(flag_box.shape[0]):
                x = vals[i, flag_box[k]]
                if x != empty:
                    for j in range(flag_n[k]):
                        if x == flag_vals[k, j]:
                            digits += (j + 1) * flag_radix[k]
                            break
            code[i] = c + (digits << nb)
        return code, raw

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

    @numba.njit(cache=True, nogil=True)
    def group_by(keys, n_keys):
        """A stable counting sort of keys in 0..n_keys-1: (order, start of each distinct key in order)."""
        count = np.zeros(n_keys + 1, dtype=np.int64)
        for k in keys:
            count[k + 1] += 1
        distinct = 0
        for k in range(n_keys):
            if count[k + 1]:
                distinct += 1
            count[k + 1] += count[k]
        order = np.empty(keys.shape[0], dtype=np.int64)
        at = count[:n_keys].copy()
        for i in range(keys.shape[0]):
            order[at[keys[i]]] = i
            at[keys[i]] += 1
        start = np.empty(distinct + 1, dtype=np.int64)
        j = 0
        for k in range(n_keys):
            if count[k + 1] > count[k]:
                start[j] = count[k]
                j += 1
        start[distinct] = keys.shape[0]
        return order, start

    @numba.njit(cache=True, nogil=True)
    def _next(state, g):
        """splitmix64: advance game g's stream, return 64 random bits."""
        state[g] += np.uint64(0x9E3779B97F4A7C15)
        z = state[g]
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))

    @numba.njit(cache=True, nogil=True)
    def _die(state, g, faces):
        """A uniform face 1..faces (rejection sampling on 32 bits: no modulo bias)."""
        limit = np.uint64((1 << 32) - ((1 << 32) % faces))
        while True:
            x = _next(state, g) >> np.uint64(32)
            if x < limit:
                return int(x % np.uint64(faces)) + 1

    @numba.njit(cache=True, nogil=True)
    def _legal(b, f, r, s, later_bits, first_bits, rd_index, rd_tables):
        rd = rd_index[s]
        if rd >= 0:
            return (rd_tables[rd, r, f] >> b) & 1
        return ((first_bits[s] if f == 1 else later_bits[s]) >> b) & 1

    @numba.njit(cache=True, nogil=True)
    def _tables(
        s,
        c,
        same,
        masks,
        later_bits,
        first_bits,
        rd_index,
        rd_tables,
        points_t,
        slot_t,
        after,
        levels,
        add_edges,
        sub_edges,
        sub_count,
        faces,
        dice,
        rolls,
        now,
        best_box,
        keeps,
        val,
        keep,
        best,
        errors,
    ):
        """State s: now[f, r] best value of scoring roll r (f = 1: first roll) and best_box[f, r] the first box
        reaching it; keeps[i, row] value of keeping multiset `row` at the decision after roll i + 1 (the rest
        rerolled). c: the state's score class."""
        n_rolls = levels[dice + 1] - levels[dice]
        nb = points_t.shape[2]
        lo_roll = levels[dice]
        inv = 1.0 / faces
        rd = rd_index[s]
        for f in range(2):
            if f == 1 and same:
                for r in range(n_rolls):
                    now[1, r] = now[0, r]
                    best_box[1, r] = best_box[0, r]
                break
            for r in range(n_rolls):
                now[f, r] = -np.inf
                best_box[f, r] = -1
            bits = first_bits[s] if f == 1 else later_bits[s]
            for b in range(nb):
                if (masks[s] >> b) & 1:
                    continue
                if rd < 0 and not (bits >> b) & 1:
                    continue
                for r in range(n_rolls):
                    if rd >= 0 and not (rd_tables[rd, r, f] >> b) & 1:
                        continue
                    sl = slot_t[c, f, b, r]
                    if sl < 0:
                        errors[0] += 1
                        continue
                    v = points_t[c, f, b, r] + after[s, sl]
                    if v > now[f, r]:
                        now[f, r] = v
                        best_box[f, r] = b
        for r in range(n_rolls):
            val[r] = now[1, r] if rolls == 1 else now[0, r]
        for left in range(1, rolls):
            fl = 1 if left == rolls - 1 else 0
            for r in range(n_rolls):
                keep[lo_roll + r] = val[r]
            for size in range(dice - 1, -1, -1):
                for row in range(levels[size], levels[size + 1]):
                    acc = 0.0
                    for j in range(faces):
                        acc += keep[add_edges[row, j]]
                    keep[row] = acc * inv
            stage = rolls - 1 - left
            for row in range(lo_roll):
                keeps[stage, row] = keep[row]
            for row in range(levels[0], levels[1]):
                best[row] = keep[row]
            for size in range(1, dice):
                for row in range(levels[size], levels[size + 1]):
                    m = keep[row]
                    for j in range(sub_count[row]):
                        m = max(m, best[sub_edges[row, j]])
                    best[row] = m
            for r in range(n_rolls):
                row = lo_roll + r
                m = now[fl, r]
                for j in range(sub_count[row]):
                    m = max(m, best[sub_edges[row, j]])
                val[r] = m

    @numba.njit(cache=True, nogil=True)
    def _play(
        g,
        game_id,
        c,
        vals,
        awards,
        rng,
        tables,
        now,
        best_box,
        keeps,
        lo_roll,
        add_edges,
        sub_face,
        row_counts,
        row_size,
        faces,
        dice,
        rolls,
        counts,
        pick,
        opt_val,
        opt_row,
        errors,
    ):
        """One turn of the game in row g (game number game_id: its row of `awards`; score class c, its state's
        tables now/best_box/keeps): roll, keep optimally, score the best box. Dice are multiset rows of the
        dice graph."""
        n_awards = tables.shape[4] - 1
        hand = 0  # the empty multiset
        for used in range(1, rolls + 1):
            for _ in range(dice - row_size[hand]):
                hand = add_edges[hand, _die(rng, g, faces) - 1]
            r = hand - lo_roll
            f1 = 1 if used == 1 else 0
            if used < rolls:
                stage = used - 1
                # keeps in GameState.legal_keeps order (an odometer, the last face fastest);
                # the first one within TIE of the best value is taken
                for f in range(faces):
                    counts[f] = row_counts[hand, f]
                    pick[f] = 0
                n_opt = 0
                best = -np.inf
                krow = 0
                while True:
                    if krow < lo_roll:
                        v = keeps[stage, krow]
                        opt_val[n_opt] = v
                        opt_row[n_opt] = krow
                        n_opt += 1
                        if v > best:
                            best = v
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
                if best > now[f1, r] + TIE:
                    for j in range(n_opt):
                        if opt_val[j] >= best - TIE:
                            hand = opt_row[j]
                            break
                    continue
            bb = best_box[f1, r]
            if bb < 0 or vals[g, bb] != EMPTY_INT or not np.isfinite(now[f1, r]):
                errors[1] += 1
                return
            vals[g, bb] = tables[c, f1, r, bb, 0]
            for a in range(n_awards):
                x = tables[c, f1, r, bb, 1 + a]
                if x != 0:
                    awards[game_id, a] += x
            return

    @numba.njit(cache=True, parallel=True)
    def play_turn(
        state_class,
        state_same,
        masks,
        later_bits,
        first_bits,
        rd_index,
        rd_tables,
        points_t,
        slot_t,
        after,
        seg_state,
        seg_lo,
        seg_hi,
        games,
        game_class,
        vals,
        awards,
        rng,
        tables,
        levels,
        add_edges,
        sub_edges,
        sub_count,
        sub_face,
        row_counts,
        row_size,
        faces,
        dice,
        rolls,
        errors,
    ):
        """One turn of every game (row i of vals/rng/game_class; games[i]: its number, its row of awards).
        Work comes in segments (a state and a run of its rows, lo:hi):
        per segment, in parallel, the state's turn tables, then the turn of each of those games while the
        tables are in cache. A state with many games is split over several segments (its tables recomputed)."""
        n_segs = seg_state.shape[0]
        n_rolls = levels[dice + 1] - levels[dice]
        lo_roll = levels[dice]
        n_rows = add_edges.shape[0]
        per = 16  # segments per parallel task: scratch arrays are allocated once per task
        for task in numba.prange((n_segs + per - 1) // per):
            now = np.empty((2, n_rolls))
            best_box = np.empty((2, n_rolls), dtype=np.int64)
            keeps = np.empty((max(rolls - 1, 1), lo_roll))
            val = np.empty(n_rolls)
            keep = np.empty(n_rows)
            best = np.empty(n_rows)
            counts = np.zeros(faces, dtype=np.int64)
            pick = np.zeros(faces, dtype=np.int64)
            opt_val = np.empty(1 << dice)
            opt_row = np.empty(1 << dice, dtype=np.int64)
            for k in range(task * per, min(n_segs, (task + 1) * per)):
                s = seg_state[k]
                _tables(
                    s,
                    state_class[s],
                    state_same[s],
                    masks,
                    later_bits,
                    first_bits,
                    rd_index,
                    rd_tables,
                    points_t,
                    slot_t,
                    after,
                    levels,
                    add_edges,
                    sub_edges,
                    sub_count,
                    faces,
                    dice,
                    rolls,
                    now,
                    best_box,
                    keeps,
                    val,
                    keep,
                    best,
                    errors,
                )
                for i in range(seg_lo[k], seg_hi[k]):
                    _play(
                        i,
                        games[i],
                        game_class[i],
                        vals,
                        awards,
                        rng,
                        tables,
                        now,
                        best_box,
                        keeps,
                        lo_roll,
                        add_edges,
                        sub_face,
                        row_counts,
                        row_size,
                        faces,
                        dice,
                        rolls,
                        counts,
                        pick,
                        opt_val,
                        opt_row,
                        errors,
                    )
