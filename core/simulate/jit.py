"""Compiled (numba) kernel for batched optimal play: per state, its turn tables, then whole turns of its games.

Same arithmetic and tie rules as the numpy path in `optimal.py` (which stays the
reference, and the fallback when numba is missing): the value of scoring each
roll is the best, over legal open boxes, of the engine-table points plus the
solver's value after; keeps come from the numeric core's one turn recursion
(`numeric.turn`). Dice come from a per-game splitmix64 stream, so a game's dice
depend only on (seed, game number), not on how games are batched.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..numeric.coding import EMPTY
from ..numeric.compiled import AVAILABLE, numba
from ..numeric.turn import turn_block

__all__ = [
    "AVAILABLE",
    "Games",
    "ScoreArrays",
    "Segments",
    "TurnStates",
    "group_by",
    "group_facts",
    "play_turn",
    "seed_streams",
]

TIE = 1e-9
W = 8  # states whose turn tables are folded together (the recursion's inner loops run over them)
EMPTY_INT = int(EMPTY)  # an open box, as a compile-time constant
MASK64 = (1 << 64) - 1


class TurnStates(NamedTuple):
    """The distinct solver states of a turn's games: where they may score and what each successor is worth."""

    score_class: np.ndarray  # int64 [S]: the state's class of the score tables
    same: np.ndarray  # bool [S]: the first roll scores like a later one
    masks: np.ndarray  # int64 [S]: filled boxes
    later_bits: np.ndarray  # int64 [S]: legal boxes after a later roll (when the roll does not matter)
    first_bits: np.ndarray  # int64 [S]: ... after the first roll
    rd_index: np.ndarray  # int64 [S]: row of rd_tables when legality depends on the roll, else -1
    rd_tables: np.ndarray  # int64 [T, rolls, 2]: legal-box bits per roll and first roll?
    after: np.ndarray  # float64 [S, slots]: solver value after each slot (box * kmax + the box's slot)


class ScoreArrays(NamedTuple):
    """The engine's score tables per score class, with the slot each score leads to."""

    points: np.ndarray  # float64 [C, 2, boxes, rolls]: box score plus awards
    slots: np.ndarray  # int64 [C, 2, boxes, rolls]: the successor slot, -1 for a score the solver never saw
    tables: np.ndarray  # int64 [C, 2, rolls, boxes, 1 + awards + events]: box score, each award's points, events


class Segments(NamedTuple):
    """Work items: a state and a run lo:hi of its games' rows."""

    state: np.ndarray
    lo: np.ndarray
    hi: np.ndarray


class Games(NamedTuple):
    """The games of a batch, row by row (rows grouped by state; `ids` says whose row is where)."""

    ids: np.ndarray  # int64 [N]: game number of each row (its row of `awards`)
    score_class: np.ndarray  # int64 [N]
    vals: np.ndarray  # int64 [N, boxes]: box scores, EMPTY where open
    awards: np.ndarray  # int64 [games, awards]
    earned: np.ndarray  # int64 [games, awards]: times each award was won (scorings giving it nonzero points)
    events: np.ndarray  # int64 [games, events]: times each event happened (the tables' last columns)
    rng: np.ndarray  # uint64 [N]: splitmix64 state


def seed_streams(seed: int, first_game: int, games: int) -> np.ndarray:
    """The initial splitmix64 state of games first_game .. first_game + games - 1 of a run."""
    base = np.uint64((seed * 0x9E3779B97F4A7C15 + 0x632BE59BD9B4E019) & MASK64)
    with np.errstate(over="ignore"):
        return base + np.arange(first_game, first_game + games, dtype=np.uint64) * np.uint64(0xD1B54A32D192ED03)


if AVAILABLE:

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
    def _tables(s, w, st, sc, now, best_box, errors):
        """State s's scoring tables in column w: now[f, r, w] the best value of scoring roll r (f = 1: first
        roll) and best_box[w, f, r] the first box reaching it. The core's turn recursion then folds a block
        of such columns into keeps[i, row, w], the value of keeping multiset `row` after roll i + 1."""
        n_rolls = now.shape[1]
        nb = sc.points.shape[2]
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
                    if rd >= 0 and not (st.rd_tables[rd, r, f] >> b) & 1:
                        continue
                    sl = sc.slots[c, f, b, r]
                    if sl < 0:
                        errors[0] += 1
                        continue
                    v = sc.points[c, f, b, r] + st.after[s, sl]
                    if v > now[f, r, w]:
                        now[f, r, w] = v
                        best_box[w, f, r] = b

    @numba.njit(cache=True, nogil=True)
    def _play(i, w, gm, tables, now, best_box, keeps, d, rolls, counts, pick, opt_val, opt_row, errors):
        """One turn of the game in row i (score class gm.score_class[i]; its state's tables: column w of now/keeps):
        roll, keep optimally, score the best box. Dice are multiset rows of the dice graph."""
        n_events = gm.events.shape[1]
        n_awards = tables.shape[4] - 1 - n_events
        faces, dice = d.faces, d.dice
        lo_roll = d.levels[dice]
        c = gm.score_class[i]
        vals = gm.vals
        hand = 0  # the empty multiset
        for used in range(1, rolls + 1):
            for _ in range(dice - d.row_size[hand]):
                hand = d.add_edges[hand, _die(gm.rng, i, faces) - 1]
            r = hand - lo_roll
            f1 = 1 if used == 1 else 0
            if used < rolls:
                stage = used - 1
                # keeps in GameState.legal_keeps order (an odometer, the last face fastest);
                # the first one within TIE of the best value is taken
                for f in range(faces):
                    counts[f] = d.row_counts[hand, f]
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
                            krow = d.sub_face[krow, f]
                        pick[f] = 0
                        f -= 1
                    if f < 0:
                        break
                    pick[f] += 1
                    krow = d.add_edges[krow, f]
                if top > now[f1, r, w] + TIE:
                    for j in range(n_opt):
                        if opt_val[j] >= top - TIE:
                            hand = opt_row[j]
                            break
                    continue
            bb = best_box[w, f1, r]
            if bb < 0 or vals[i, bb] != EMPTY_INT or not np.isfinite(now[f1, r, w]):
                errors[1] += 1
                return
            vals[i, bb] = tables[c, f1, r, bb, 0]
            game = gm.ids[i]
            for a in range(n_awards):
                x = tables[c, f1, r, bb, 1 + a]
                if x != 0:
                    gm.awards[game, a] += x
                    gm.earned[game, a] += 1
            for e in range(n_events):
                gm.events[game, e] += tables[c, f1, r, bb, 1 + n_awards + e]
            return

    @numba.njit(cache=True, parallel=True)
    def play_turn(st, sc, segs, gm, d, rolls, errors):
        """One turn of every game. Per work segment (a state and a run of its rows), in parallel: the state's
        turn tables, then the turn of each of those games while the tables are in cache. A state with many
        games is split over several segments (its tables recomputed)."""
        n_segs = segs.state.shape[0]
        lo_roll = d.levels[d.dice]
        n_rolls = d.levels[d.dice + 1] - lo_roll
        n_rows = d.add_edges.shape[0]
        per = 2 * W  # segments per parallel task: scratch arrays are allocated once per task
        for task in numba.prange((n_segs + per - 1) // per):
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
            end = min(n_segs, (task + 1) * per)
            for k0 in range(task * per, end, W):
                block = min(W, end - k0)
                for w in range(block):
                    _tables(segs.state[k0 + w], w, st, sc, now, best_box, errors)
                turn_block(now, rows_of, rows_of, d, val, keep, best, keeps, no_levels)
                for w in range(block):
                    k = k0 + w
                    for i in range(segs.lo[k], segs.hi[k]):
                        _play(
                            i, w, gm, sc.tables, now, best_box, keeps, d, rolls, counts, pick, opt_val, opt_row, errors
                        )
