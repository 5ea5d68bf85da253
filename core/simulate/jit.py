"""Compiled (numba) kernels for batched optimal play: best-move rows per state, then whole games.

Same arithmetic and tie rules as the numpy reference in `optimal.py`; keeps come from the numeric core's one
turn recursion (`numeric.turn`). A state's turn is folded once into a row of best moves (`fill_moves`);
`play_games` then plays each game turn after turn, coding its card into its solver state as boxes fill.
Dice come from a per-game splitmix64 stream, so a game's dice depend only on (seed, game number), not on how
games are batched or how many threads play them.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from ..numeric import compiled, lookup, turn
from ..numeric.coding import EMPTY
from ..numeric.turn import W

__all__ = [
    "AVAILABLE",
    "Classes",
    "Coding",
    "DiceStreams",
    "Fold",
    "Games",
    "HandKeys",
    "MoveRows",
    "Pass",
    "Policy",
    "RollDraws",
    "ScoreArrays",
    "score_arrays",
    "TurnStates",
    "class_slots",
    "counts_array",
    "fill_moves",
    "group_facts",
    "hand_keys",
    "move_flag",
    "move_rows",
    "play_games",
    "policy",
    "roll_draws",
    "seed_streams",
    "start_games",
    "workers",
]

TIE = 1e-9
LIVE = (1.0,) * 8  # `choose_keep`'s lanes: every one chooses (W = 8 lanes)
DEAD = (0.0,) * 8  # none does: each scores
GROUP = 128  # games a thread of `play_games` plays in step: their table look-ups are in flight together
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
    slot_lo: np.ndarray  # int64 [C, 2, boxes]: the lowest slot over the rolls (-1 when some score has none)
    slot_hi: np.ndarray  # int64 [C, 2, boxes]: the highest
    same: np.ndarray  # bool [C]: the class's first roll scores like a later one


def score_arrays(points: np.ndarray, slots: np.ndarray, same: np.ndarray) -> ScoreArrays:
    """The record for points and slots [C, 2, boxes, rolls] and `same` [C], with each box's range of slots."""
    return ScoreArrays(points, slots, slots.min(axis=3), slots.max(axis=3), np.ascontiguousarray(same, dtype=bool))


class Policy(NamedTuple):
    """How `fold_block`'s folded turns are played, besides the states' tables: the rolls a turn, the objective's
    theta (nonzero: a risk objective's rolls folded as utilities) and the keeps chosen among, ties to the first
    (`DiceGraph.keep_order`)."""

    rolls: int
    theta: float
    keep_rows: np.ndarray  # int64 [rolls of the graph, K]: each roll's proper keeps' rows, in the game's order
    keep_n: np.ndarray  # int64 [rolls of the graph]: how many
    keep_masks: np.ndarray  # int64 [rolls of the graph, K]: each keep as a mask of the roll's sorted dice


def policy(keep_order: tuple[np.ndarray, np.ndarray, np.ndarray], rolls: int, theta: float) -> Policy:
    """The record of a solution's policy: its graph's `keep_order`, the variant's rolls, the objective's theta."""
    return Policy(int(rolls), float(theta), *keep_order)


class Fold(NamedTuple):
    """A block of W states' turns folded side by side (`fold_block`), with the scratch a state's scoring
    column is built in (`_tables`)."""

    now: np.ndarray  # float64 [3, rolls of the graph, W]: rows 0 and 1 the best value of scoring each roll after a
    # later roll and the first (row 2, never scored from, makes the recursion's roll values its best keeps')
    best_box: np.ndarray  # int64 [W, 2, rolls of the graph]: the first box reaching it
    keeps: np.ndarray  # float64 [decisions, kept multisets, W]: the value of each keep after roll i + 1
    tops: np.ndarray  # float64 [rolls, rolls of the graph, W]: each roll's best proper keep with `left` rolls left
    row: np.ndarray  # float64 [rolls of the graph]: scratch, a column of `now` while it is built
    arg: np.ndarray  # int64 [rolls of the graph]: scratch, its column of `best_box`


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
    cells: np.ndarray  # int32 [C, 2, rolls, boxes]: the box score << 1 (the score tables' first column), or where
    # awards or events are won, the row of `extras` << 1 | 1 (one int32 a box: a roll's boxes share a cache line)
    extras: np.ndarray  # int64 [E, 1 + awards + events]: the box score, award points and events (the tables' columns)
    after: np.ndarray  # int16/int32 [C, boxes, V]: the class after box b scores after_lo + v; -1 not known yet (a memo)
    after_lo: int


class Games(NamedTuple):
    """The games of a batch, one row each, with their solver state kept up to date as boxes fill."""

    vals: np.ndarray  # int64 [N, boxes]: box scores, EMPTY where open
    awards: np.ndarray  # int64 [N, awards]
    earned: np.ndarray  # int64 [N, awards]: times each award was won (scorings giving it nonzero points)
    events: np.ndarray  # int64 [N, events]: times each event happened (the tables' last columns)
    rng: np.ndarray  # uint64 [N]: splitmix64 state
    code: np.ndarray  # int64 [N]: class code (filled bits, flag digits above)
    prog: np.ndarray  # int64 [N, G]: threshold group totals, not clamped


class Pass(NamedTuple):
    """One pass of `play_games` over some games of a batch: which games, and where each one stopped."""

    active: np.ndarray  # int64 [K]: the games (rows of `Games`) to play
    pending: np.ndarray  # int64 [K], out: -1 when the card is full (or on an error, counted in `errors`), -2 when
    # the game's score class is not known yet, else the slot of the state whose best-move row is missing
    cls: np.ndarray  # int64 [K], out: the game's score class where its state's row is missing
    errors: np.ndarray  # int64 [3], out: counts of [(unused), a move scoring no open box, an unreachable card]


class MoveRows(NamedTuple):
    """The best-move rows (`fill_moves` writes them) the games play from, and how a keep leaves the dice."""

    row_of: np.ndarray  # int32/int64 [states]: each state's row of `rows` (by slot, or by position in the states
    # `fill_moves` or the propagation is given), -1 while not written (unread if direct)
    direct: bool  # every state has its row, at its own slot (position)
    rows: np.ndarray  # uint8/16/32 [rows, rolls of the graph, decisions]: a keep mask, or flag | the box to score
    flag: int  # `move_flag`'s bit
    kept: np.ndarray  # int16/int64 [rolls, masks]: the multiset a keep mask leaves (width 0: counted die by die)
    rolls: int  # rolls a turn


def move_rows(rows: np.ndarray, flag: int, rolls: int, at: np.ndarray | None = None) -> MoveRows:
    """Best-move rows by position in a list of states, for `fill_moves` to write: state s's is rows[at[s]], or
    rows[s] where `at` is None (direct); no kept dice (width 0: the caller that reads keeps sets them)."""
    row_of = np.zeros(0, dtype=np.int64) if at is None else np.ascontiguousarray(at, dtype=np.int64)
    return MoveRows(row_of, at is None, rows, flag, np.zeros((0, 0), dtype=np.int64), int(rolls))


class HandKeys(NamedTuple):
    """Multisets of dice as sums (`hand_keys`): a roll adds each new die's weight to the kept dice's key,
    then one look-up gives the row, instead of a chain of dice graph look-ups, one a die."""

    key_of: np.ndarray  # int64 [rows]: sum over faces f of count(f) * (dice + 1) ** (f - 1); empty: not used
    row_of_key: np.ndarray  # int32 [(dice + 1) ** faces]: the row of each key of a multiset, -1 elsewhere
    weight: np.ndarray  # int64 [faces]: the key of one die of each face


HAND_KEYS = 1 << 20  # keys at most (the table's size): past this, rolls walk the dice graph


def hand_keys(row_counts: np.ndarray, dice: int, faces: int) -> HandKeys:
    """The key of each dice graph row (its counts [rows, faces] in base dice + 1) and the row of each key;
    empty arrays where the table would pass HAND_KEYS keys."""
    base = dice + 1
    if base**faces > HAND_KEYS:
        empty = np.zeros(0, dtype=np.int64)
        return HandKeys(empty, np.zeros(0, dtype=np.int32), empty)
    weight = base ** np.arange(faces, dtype=np.int64)
    key_of = np.ascontiguousarray(row_counts @ weight, dtype=np.int64)
    row_of_key = np.full(base**faces, -1, dtype=np.int32)
    row_of_key[key_of] = np.arange(len(key_of), dtype=np.int32)
    return HandKeys(key_of, row_of_key, weight)


CHUNK_OUTCOMES = 1 << 13  # outcomes of a chunk of dice drawn at once, at most: its table of keys stays in L1


class RollDraws(NamedTuple):
    """How a roll's dice come from a game's stream: in chunks of up to `per` dice, one 32-bit draw each
    (`_chunk`), a uniform outcome 0 .. faces ** j - 1 of j dice whose base-faces digits, lowest first, are
    the dice (face digit + 1). `keys` gives the outcome's multiset key at once (`HandKeys`): a roll is one
    draw and one look-up, not one draw and one look-up a die."""

    per: int  # dice a chunk, at most: the most with faces ** per <= CHUNK_OUTCOMES (at least one, at most the dice)
    outcomes: np.ndarray  # uint64 [per + 1]: faces ** j, the outcomes of a chunk of j dice
    low: np.ndarray  # uint64 [per + 1]: 2 ** 32 % faces ** j: a draw whose low half is below it is drawn again
    start: np.ndarray  # int64 [per + 1]: where the keys of chunks of j dice start in `keys`
    keys: np.ndarray  # int32 [sum of faces ** j]: each outcome's multiset key (empty where rolls are not keyed)


def roll_draws(dice: int, faces: int, weight: np.ndarray) -> RollDraws:
    """The chunks of a roll of up to `dice` dice with `faces` faces, with keys summing `weight`
    (`HandKeys.weight`; empty: no keys, the player decodes the dice)."""
    per = 1
    while per < dice and faces ** (per + 1) <= CHUNK_OUTCOMES:
        per += 1
    outcomes = np.array([faces**j for j in range(per + 1)], dtype=np.uint64)
    low = np.array([(1 << 32) % faces**j for j in range(per + 1)], dtype=np.uint64)
    start = np.zeros(per + 1, dtype=np.int64)
    start[1:] = np.cumsum(outcomes[:-1].astype(np.int64))
    parts = [np.zeros(1, dtype=np.int64)]
    if len(weight):
        for j in range(1, per + 1):  # outcome o of j dice: die i is digit i of o in base faces
            digits = np.arange(faces**j, dtype=np.int64)[:, None] // faces ** np.arange(j, dtype=np.int64) % faces
            parts.append(weight[digits].sum(axis=1))
        keys = np.concatenate(parts).astype(np.int32)
    else:
        keys = np.zeros(0, dtype=np.int32)
    return RollDraws(per, outcomes, low, start, keys)


def chunk_faces(outcome: np.ndarray, j: int, faces: int) -> np.ndarray:
    """The j dice of a chunk's outcomes [n] as faces [n, j] (digits in base faces, lowest first, plus one)."""
    return np.asarray(outcome, dtype=np.int64)[:, None] // faces ** np.arange(j, dtype=np.int64) % faces + 1


def move_flag(dice: int, boxes: int) -> tuple[type, int] | None:
    """(dtype, flag bit) of a best-move entry: a keep as a mask of the sorted dice, or flag | box;
    None when the dice or boxes do not fit the widest entry."""
    for dtype, bits in ((np.uint8, 8), (np.uint16, 16), (np.uint32, 32)):
        if dice < bits and boxes < (1 << (bits - 1)) - 1:
            return dtype, 1 << (bits - 1)
    return None


def counts_array(games: int, width: int) -> np.ndarray:
    """Zeroed int64 [games, width] for games' awards, award counts or events, stored column by column: the
    system zeroes a page when it is first written, so a column no rule fills (most: the width is the score
    tables' capacity) costs no memory and no page fault. A padding row keeps every view of it (a chunk's
    rows, or all) of one layout, so `play_games` is compiled once for chunked and whole runs."""
    return np.zeros((width, games + 1), dtype=np.int64).T[:games]


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
    # the state coding's compiled look-up, inlined (numba IR) into the player: a call per game and turn passed
    # the whole index record on the stack, and a view of the game's group totals cost two reference counts
    state_slot = compiled.jit(lookup.jitted().py_func, inline=True)

    from llvmlite import ir as llvm_ir
    from numba.core import cgutils
    from numba.core import types as nb_types
    from numba.extending import intrinsic

    def _prefetch(typingctx, arr, offset):
        """Ask the processor to bring arr's element at flat position `offset` (C order) into its caches,
        without waiting for it (LLVM's prefetch: a read, keep in all levels): the loop goes on while the
        line comes. A hint only: nothing is read, so any offset is safe."""
        if not isinstance(arr, nb_types.Array) or not isinstance(offset, nb_types.Integer):
            return None

        def codegen(context, builder, sig, args):
            ary = context.make_array(sig.args[0])(context, builder, args[0])
            at = builder.gep(ary.data, [context.cast(builder, args[1], sig.args[1], nb_types.intp)])
            byte_ptr = llvm_ir.IntType(8).as_pointer()
            i32 = llvm_ir.IntType(32)
            fnty = llvm_ir.FunctionType(llvm_ir.VoidType(), [byte_ptr, i32, i32, i32])
            fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.prefetch.p0")
            builder.call(fn, [builder.bitcast(at, byte_ptr), i32(0), i32(3), i32(1)])
            return context.get_dummy_value()

        return nb_types.void(arr, offset), codegen

    prefetch: Any = intrinsic(_prefetch)

    def _fetch_add(typingctx, arr, value):
        """arr[0] += value as one atomic step (LLVM atomicrmw): the value before. Threads of a parallel loop
        share work through it (a counter of blocks handed out) without a lock."""
        if not isinstance(arr, nb_types.Array) or arr.dtype != nb_types.int64:
            return None
        if not isinstance(value, nb_types.Integer):
            return None

        def codegen(context, builder, sig, args):
            ary = context.make_array(sig.args[0])(context, builder, args[0])
            add = context.cast(builder, args[1], sig.args[1], nb_types.int64)
            return builder.atomic_rmw("add", ary.data, add, "monotonic")

        return nb_types.int64(arr, value), codegen

    fetch_add: Any = intrinsic(_fetch_add)

    @numba.njit(cache=True, parallel=True)
    def start_games(vals):
        """Every box of every game open, rows shared out between threads: a large run's fresh pages are
        touched (and faulted in) by all of them, not by the caller's thread alone."""
        for i in numba.prange(vals.shape[0]):
            for b in range(vals.shape[1]):
                vals[i, b] = EMPTY_INT

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
    def _chunk(state, g, buf, left, n, low):
        """(outcome, buf, left): a uniform integer 0 .. n - 1 from the next 32 bits of game g's stream (`buf` holds
        `left` such halves of a word; a new word when none): the high half of the 32 bits times n, drawn again
        where the low half is below low = 2**32 % n (Lemire's multiply: no modulo, no bias). Held in locals,
        not arrays, so that a roll's draws stay in registers."""
        while True:
            if left == 0:
                buf = _next(state, g)
                left = 2
            left -= 1
            m = (buf & np.uint64(0xFFFFFFFF)) * n
            buf >>= np.uint64(32)
            if (m & np.uint64(0xFFFFFFFF)) >= low:
                return np.int64(m >> np.uint64(32)), buf, left

    class DiceStreams:
        """The dice `play_games` draws, game by game, for a reference player to replay the compiled
        player's games on the same dice (tests): a turn's dice start from a fresh word of the stream."""

        def __init__(self, seed: int, games: int, faces: int, dice: int) -> None:
            self.state = seed_streams(seed, 0, games)
            self.buf = np.zeros(games, dtype=np.uint64)
            self.left = np.zeros(games, dtype=np.int64)
            self.faces, self.draws = faces, roll_draws(dice, faces, np.zeros(0, dtype=np.int64))

        def new_turn(self) -> None:
            self.left[:] = 0

        def roll(self, g: int, n: int) -> tuple[int, ...]:
            """n dice of game g: a chunk of dice at a time."""
            out: list[int] = []
            rd = self.draws
            while len(out) < n:
                j = min(n - len(out), rd.per)
                o, buf, left = _chunk(self.state, g, self.buf[g], self.left[g], rd.outcomes[j], rd.low[j])
                self.buf[g], self.left[g] = buf, left
                out.extend(chunk_faces(np.array([o]), j, self.faces)[0].tolist())
            return tuple(out)

    @numba.njit(cache=True, nogil=True)
    def _tables(st, sc, s, w, fold, errors):
        """State s's scoring tables in column w of the fold: now[f, r, w] the best value of scoring roll r (f = 1:
        first roll) and best_box[w, f, r] the first box reaching it, each built in `fold`'s scratch column. The
        core's turn recursion then folds a block of such columns into keeps[i, row, w], the value of keeping
        multiset `row` after roll i + 1.
        A box whose legality ignores the roll is one vector pass per successor slot its scores reach
        (`ScoreArrays.slot_lo`/`slot_hi`): the slot is a broadcast, not a gather per roll."""
        now, best_box, row, arg = fold.now, fold.best_box, fold.row, fold.arg  # once: no refcounts per read
        n_rolls = now.shape[1]
        points, slots, after, rd_tables = sc.points, sc.slots, st.after, st.rd_tables
        slot_lo, slot_hi = sc.slot_lo, sc.slot_hi
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
                row[r] = -np.inf
                arg[r] = -1
            bits = st.first_bits[s] if f == 1 else st.later_bits[s]
            for b in range(nb):
                if (mask >> b) & 1:
                    continue
                pts = points[c, f, b]
                sls = slots[c, f, b]
                if rd < 0:
                    if not (bits >> b) & 1:
                        continue
                    lo = slot_lo[c, f, b]
                    if lo < 0:
                        errors[0] += 1
                        continue
                    for k in range(lo, slot_hi[c, f, b] + 1):
                        a = after[s, k]
                        for r in range(n_rolls):
                            v = pts[r] + a
                            better = (sls[r] == k) & (v > row[r])
                            row[r] = v if better else row[r]
                            arg[r] = b if better else arg[r]
                    continue
                for r in range(n_rolls):
                    if not (rd_tables[rd, r, f] >> b) & 1:
                        continue
                    sl = sls[r]
                    if sl < 0:
                        errors[0] += 1
                        continue
                    v = pts[r] + after[s, sl]
                    if v > row[r]:
                        row[r] = v
                        arg[r] = b
            for r in range(n_rolls):
                now[f, r, w] = row[r]
                best_box[w, f, r] = arg[r]

    lanes = turn._lanes  # compiled by `turn.jitted()` above: a (rows, W) array's row as W values, in registers

    @numba.njit(cache=True, nogil=True, inline="always")
    def _bar(top, now, live):
        """A lane's bar: its best keep's value less TIE where that beats scoring by more than TIE and the lane
        is live (nonzero), else inf (it scores: no keep reaches an infinite bar)."""
        return top - TIE if (top > now + TIE) & (live != 0.0) else np.inf

    @numba.njit(cache=True, nogil=True, inline="always")
    def _reach(j, bar, x, o):
        """One lane's step of the scan: (j, inf) where keep value x reaches the bar (found: no later keep is
        taken), else (o, bar) unchanged."""
        hit = x >= bar
        return (j if hit else o), (np.inf if hit else bar)

    @numba.njit(cache=True, nogil=True, inline="always")
    def choose_keep(ko, tops, now, r, live, rows_k, n_k):
        """The keep of each of the W lanes with roll r on the table (values of the keeps ko[row, w], of scoring
        now[r, w]): the position in `DiceGraph.keep_order` (the game's order) of the first proper keep within
        TIE of the best, when that is better than scoring by more than TIE, else -1 (score the best box); -1
        too for a lane whose `live` (W values) is 0. The best keep's value comes with the turn recursion
        (tops[r, w]: the best proper keep it folds). The lanes scan the keeps together, branch-free in
        registers (a lane that found its keep stops matching), until every lane has found its own."""
        t = lanes(tops, r)
        c = lanes(now, r)
        b0, b1 = _bar(t[0], c[0], live[0]), _bar(t[1], c[1], live[1])
        b2, b3 = _bar(t[2], c[2], live[2]), _bar(t[3], c[3], live[3])
        b4, b5 = _bar(t[4], c[4], live[4]), _bar(t[5], c[5], live[5])
        b6, b7 = _bar(t[6], c[6], live[6]), _bar(t[7], c[7], live[7])
        o0 = o1 = o2 = o3 = o4 = o5 = o6 = o7 = -1
        for j in range(n_k[r]):
            if (j & 3) == 0 and min(min(min(b0, b1), min(b2, b3)), min(min(b4, b5), min(b6, b7))) == np.inf:
                break  # every lane found (tested every 4 keeps: the test costs about as much as a step)
            x = lanes(ko, rows_k[r, j])
            o0, b0 = _reach(j, b0, x[0], o0)
            o1, b1 = _reach(j, b1, x[1], o1)
            o2, b2 = _reach(j, b2, x[2], o2)
            o3, b3 = _reach(j, b3, x[3], o3)
            o4, b4 = _reach(j, b4, x[4], o4)
            o5, b5 = _reach(j, b5, x[5], o5)
            o6, b6 = _reach(j, b6, x[6], o6)
            o7, b7 = _reach(j, b7, x[7], o7)
        return (o0, o1, o2, o3, o4, o5, o6, o7)

    @numba.njit(cache=True, nogil=True)
    def fold_block(st, sc, d, pol, k0, errors):
        """States k0 .. k0 + W - 1 of st (fewer at its end) folded side by side, as `fill_moves` chooses from them
        (`Fold`: the best value of scoring each roll after a later roll and the first, the first box reaching
        it, the value of each keep after roll i + 1, each roll's best proper keep with `left` rolls left).
        The core's one turn recursion (`turn_block`); `pol.theta` != 0 folds the rolls as utilities, the keeps
        then compared as certainty equivalents again (a monotone map: the same keep stays the best)."""
        rolls, theta = pol.rolls, pol.theta
        block = min(W, st.masks.shape[0] - k0)
        lo_roll = d.levels[d.dice]
        n_rolls = d.levels[d.dice + 1] - lo_roll
        n_rows = d.add_edges.shape[0]
        # row 2, never scored from, makes the recursion's roll values with a turn's rolls left (`turn_block`'s
        # levels_out) its best keeps'
        now = np.full((3, n_rolls, W), -np.inf)
        now[:2] = 0.0
        fold = Fold(
            now,
            np.empty((W, 2, n_rolls), dtype=np.int64),
            np.empty((max(rolls - 1, 1), lo_roll, W)),
            np.empty((rolls, n_rolls, W)),
            np.empty(n_rolls),
            np.empty(n_rolls, dtype=np.int64),
        )
        keeps, tops = fold.keeps, fold.tops
        val = np.empty((n_rolls, W))
        keep = np.empty((n_rows, W))
        best = np.empty((n_rows, W))
        rows_of = np.zeros(rolls, dtype=np.int64)  # `reference.plain_pick`: the first roll's row, then later ones'
        rows_of[rolls - 1] = 1
        no_score = np.full(rolls, 2, dtype=np.int64)
        for w in range(block):
            _tables(st, sc, k0 + w, w, fold, errors)
        if theta != 0.0:
            points = now.copy()
            sign = 1.0 if theta > 0.0 else -1.0
            for f in range(2):
                for r in range(n_rolls):
                    for w in range(W):
                        x = now[f, r, w]
                        now[f, r, w] = -np.inf if x == -np.inf else sign * np.exp(theta * x)
        turn_block(now, rows_of, no_score, d, val, keep, best, keeps, tops)
        if theta != 0.0:  # back to certainty equivalents
            now[:] = points
            for i in range(keeps.shape[0]):
                for kr in range(keeps.shape[1]):
                    for w in range(W):
                        x = keeps[i, kr, w]
                        keeps[i, kr, w] = -np.inf if x == -np.inf else np.log(abs(x)) / theta
            for i in range(1, rolls):
                for r in range(n_rolls):
                    for w in range(W):
                        x = tops[i, r, w]
                        tops[i, r, w] = -np.inf if x == -np.inf else np.log(abs(x)) / theta
        return fold

    @numba.njit(cache=True, nogil=True)
    def _fill_block(st, sc, d, pol, mv, errors, k0):
        """`fill_moves` for the block of W states from k0: its body, a function of its own so that the parallel
        loop around it stays small (numba's parallel passes on a large body cost tens of seconds of compile)."""
        rolls, rows_k, n_k, masks_k = pol.rolls, pol.keep_rows, pol.keep_n, pol.keep_masks
        row_of, direct, moves, flag = mv.row_of, mv.direct, mv.rows, mv.flag
        n_rolls = d.levels[d.dice + 1] - d.levels[d.dice]
        invalid = flag | (flag - 1)
        block = min(W, st.masks.shape[0] - k0)
        fold = fold_block(st, sc, d, pol, k0, errors)
        now, best_box, keeps, tops = fold.now, fold.best_box, fold.keeps, fold.tops
        for stage in range(rolls):
            f1 = 1 if stage == 0 else 0
            keeping = stage < rolls - 1
            ko = keeps[min(stage, keeps.shape[0] - 1)]
            tp = tops[rolls - 1 - stage]
            nw = now[f1]
            for r in range(n_rolls):
                js = choose_keep(ko, tp, nw, r, LIVE if keeping else DEAD, rows_k, n_k)
                for w in range(block):
                    row = k0 + w if direct else row_of[k0 + w]
                    j = js[w]
                    if j >= 0:
                        moves[row, r, stage] = masks_k[r, j]
                        continue
                    bb = best_box[w, f1, r]
                    if bb < 0 or not np.isfinite(now[f1, r, w]):
                        moves[row, r, stage] = invalid
                    else:
                        moves[row, r, stage] = flag | bb

    @numba.njit(cache=True, parallel=True)
    def fill_moves(st, sc, d, pol, mv, errors):
        """The best-move rows of states st (`TurnStates`, scoring by `sc`) as policy `pol` plays them, into
        `mv.rows` [rows, rolls of the graph, decisions] (state s's at row mv.row_of[s], or s where mv.direct):
        per roll on the table and decision, a keep (a mask of the sorted dice) or flag | the box to score
        (flag | (flag - 1) where no legal box could be valued); errors[0] counts scores the solver never saw.
        Folded W states at a time, in parallel. `pol.theta` != 0: a risk objective's policy
        (`numeric.objective`), with st.after its certainty equivalents: scoring adds points to them as for the
        mean, but the rolls are averaged as utilities sign * exp(theta x points), and the keeps compared as
        certainty equivalents again (as `Solution.turn_tables` gives them to the numpy policy)."""
        for task in numba.prange((st.masks.shape[0] + W - 1) // W):
            _fill_block(st, sc, d, pol, mv, errors, task * W)

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

    def workers() -> int:
        """The threads `play_games` shares its blocks between: numba's for parallel loops now (asked here, in
        Python: a kernel asking for them could not be cached)."""
        return int(numba.get_num_threads())

    @numba.njit(cache=True, nogil=True)
    def _play_worker(ps, gm, cod, sa, cl, mv, d, hk, rd, taken):
        """One thread's share of `play_games`: blocks of GROUP games taken from the shared counter `taken` until
        none is left (a function of its own so that the parallel loop around it stays small: numba's parallel
        passes on a large body cost tens of seconds of compile)."""
        # every array once into a local: a record's field read in a loop costs a reference count each time
        active, pending, cls, errors = ps
        row_of, direct, moves, flag, kept_rows, rolls = mv
        vals, awards, earned, events, rng, codes, progs = gm
        facts, keys, slots, nxt, nxt_lo, cells = cl.facts, cl.keys, cl.slots, cl.after, cl.after_lo, cl.cells
        flag_vals, flag_n, radix, groups = cod
        extras = cl.extras
        n_awards, n_events, n_groups = awards.shape[1], events.shape[1], groups.shape[0]
        n_moves_rolls, n_decisions, n_cell_rolls = moves.shape[1], moves.shape[2], cells.shape[2]
        n_next = nxt.shape[2]
        add_edges, row_counts, row_size = d.add_edges, d.row_counts, d.row_size
        zero = np.zeros(cod.groups.shape[0], dtype=np.int64)
        full, size = sa.full, sa.size
        sa_base, sa_pmin, sa_dims, sa_strides, n_codes = sa.base, sa.pmin, sa.dims, sa.strides, sa.base.shape[0]
        nb = vals.shape[1]
        faces, dice = d.faces, d.dice
        lo_roll = d.levels[dice]
        key_of, row_of_key = hk.key_of, hk.row_of_key
        keyed = key_of.shape[0] > 0
        per, outcomes, low, start, chunk_keys = rd
        n = active.shape[0]
        n_blocks = (n + GROUP - 1) // GROUP
        live = np.empty(GROUP, dtype=np.int64)  # positions (in `active`) of the group's games still playing
        c_of = np.empty(GROUP, dtype=np.int64)
        row = np.empty(GROUP, dtype=np.int64)
        hand = np.empty(GROUP, dtype=np.int64)
        move = np.empty(GROUP, dtype=np.int64)
        open_ = np.empty(GROUP, dtype=np.bool_)  # the turn goes on (no box scored yet)
        buf = np.zeros(GROUP, dtype=np.uint64)  # each game's random bits not used yet this turn
        left = np.zeros(GROUP, dtype=np.int64)
        ok = np.empty(GROUP, dtype=np.bool_)  # no error in the turn
        prog = np.empty(n_groups, dtype=np.int64)  # a game's group totals, copied: a view costs reference counts
        while True:
            t = fetch_add(taken, 1)
            if t >= n_blocks:
                break
            k0 = t * GROUP
            n_live = min(GROUP, n - k0)
            for q in range(n_live):
                live[q] = k0 + q
                pending[k0 + q] = -1
                c_of[q] = _class_of(vals, active[k0 + q], facts, keys, slots)  # then from the memo, turn by turn
            while n_live > 0:
                kept = 0
                for q in range(n_live):  # each game's class, state and row; a full or stopped game leaves
                    k = live[q]
                    i = active[k]
                    code = codes[i]
                    if (code & full) == full:
                        continue
                    c = c_of[q]
                    if c < 0:
                        pending[k] = -2
                        continue
                    for g in range(n_groups):
                        prog[g] = progs[i, g]
                    slot = state_slot(sa, code, prog, zero)
                    if slot >= size:
                        errors[2] += 1
                        continue
                    r0 = slot if direct else np.int64(row_of[slot])
                    if r0 < 0:
                        pending[k] = slot
                        cls[k] = c
                        continue
                    live[kept] = k
                    c_of[kept] = c
                    row[kept] = r0
                    hand[kept] = 0  # the empty multiset
                    ok[kept] = True
                    left[kept] = 0  # a turn's dice start from a fresh word of the stream
                    open_[kept] = True
                    kept += 1
                n_live = kept
                for used in range(1, rolls + 1):
                    f1 = 1 if used == 1 else 0
                    for q in range(n_live):  # roll the dice not kept
                        if open_[q]:
                            i = active[live[q]]
                            h = hand[q]
                            bits, n_left = buf[q], left[q]
                            k = dice - row_size[h]  # the dice to roll, a chunk a draw (Yahtzee: one chunk)
                            if keyed:  # the chunks' keys are summed: one look-up then gives the row
                                key = key_of[h]
                                while k > 0:
                                    j = min(k, per)
                                    o, bits, n_left = _chunk(rng, i, bits, n_left, outcomes[j], low[j])
                                    key += chunk_keys[start[j] + o]
                                    k -= j
                                h = np.int64(row_of_key[key])
                            else:  # the dice graph walked die by die, the digits of each chunk
                                while k > 0:
                                    j = min(k, per)
                                    o, bits, n_left = _chunk(rng, i, bits, n_left, outcomes[j], low[j])
                                    for _ in range(j):
                                        h = add_edges[h, o % faces]
                                        o //= faces
                                    k -= j
                            hand[q] = h
                            buf[q], left[q] = bits, n_left
                            # the move's line is asked for now: the next games roll while it comes
                            prefetch(moves, (row[q] * n_moves_rolls + h - lo_roll) * n_decisions + used - 1)
                            if used == rolls:  # the last roll scores: its cells (every box's) are asked for too
                                at = ((c_of[q] * 2 + f1) * n_cell_rolls + h - lo_roll) * nb
                                prefetch(cells, at)
                                prefetch(cells, at + nb - 1)
                    for q in range(n_live):  # then every game's move: a short loop, its misses in flight at once
                        move[q] = np.int64(moves[row[q], hand[q] - lo_roll, used - 1])
                    for q in range(n_live):  # the score cells of the games that score, and their memo rows of the
                        x = move[q]  # class after, asked for together
                        if open_[q] and ((x & flag) != 0 or used == rolls) and (x & (flag - 1)) < nb:
                            b = x & (flag - 1)
                            if used < rolls:
                                r = hand[q] - lo_roll
                                prefetch(cells, ((c_of[q] * 2 + f1) * n_cell_rolls + r) * nb + b)
                            if n_next > 0:
                                at = (c_of[q] * nb + b) * n_next
                                prefetch(nxt, at)
                                prefetch(nxt, at + n_next - 1)
                    for q in range(n_live):
                        if not open_[q]:
                            continue
                        i = active[live[q]]
                        h = hand[q]
                        x = move[q]
                        if (x & flag) == 0 and used < rolls:  # keep the dice of mask x, reroll the rest
                            if kept_rows.shape[1] > 0:
                                hand[q] = kept_rows[h - lo_roll, x]
                                continue
                            kept_row = 0
                            pos = 0
                            for f in range(faces):
                                for _ in range(row_counts[h, f]):
                                    if (x >> pos) & 1:
                                        kept_row = add_edges[kept_row, f]
                                    pos += 1
                            hand[q] = kept_row
                            continue
                        open_[q] = False
                        b = x & (flag - 1)
                        if (x & flag) == 0 or b >= nb or vals[i, b] != EMPTY_INT:
                            errors[1] += 1
                            ok[q] = False  # leaves the group below
                            continue
                        c = c_of[q]
                        # the score of roll r in box b of game i's card (class c), with the awards and events it
                        # wins; then the game's class code and group totals move on (written out here, not in a
                        # function given the game's records: unpacking those on every scoring costs reference counts)
                        r = h - lo_roll
                        cell = np.int64(cells[c, f1, r, b])
                        score = cell >> 1
                        if cell & 1:  # a scoring that wins awards or events: its row of `extras`
                            x = score
                            score = extras[x, 0]
                            for a in range(n_awards):
                                y = extras[x, 1 + a]
                                if y != 0:
                                    awards[i, a] += y
                                    earned[i, a] += 1
                            for e in range(n_events):
                                events[i, e] += extras[x, 1 + n_awards + e]
                        vals[i, b] = score
                        digit = 0
                        for j in range(flag_n[b]):
                            if flag_vals[b, j] == score:
                                digit = j + 1
                                break
                        code = codes[i] | (1 << b) | ((digit * radix[b]) << nb)
                        codes[i] = code
                        if 0 <= code < n_codes:  # the next turn's state look-up, asked for while the others score
                            prefetch(sa_base, code)
                            for g in range(n_groups):
                                prefetch(sa_pmin, g * n_codes + code)
                                prefetch(sa_dims, g * n_codes + code)
                                prefetch(sa_strides, g * n_codes + code)
                        for g in range(n_groups):
                            if groups[g, b]:
                                progs[i, g] += score
                        v = vals[i, b] - nxt_lo
                        memo = 0 <= v < n_next
                        nc = np.int64(nxt[c, b, v]) if memo else -1
                        if nc < 0:
                            nc = _class_of(vals, i, facts, keys, slots)
                            if memo and nc >= 0:
                                nxt[c, b, v] = nc  # threads may race here: they write the same class
                        c_of[q] = nc
                kept = 0
                for q in range(n_live):  # games that hit an error stop here
                    if ok[q]:
                        live[kept] = live[q]
                        c_of[kept] = c_of[q]
                        kept += 1
                n_live = kept

    @numba.njit(cache=True, parallel=True)
    def play_games(ps, gm, cod, sa, cl, mv, d, hk, rd, workers):
        """Play the games of pass `ps` (`Pass`: rows of gm, `Games`) in parallel, each turn after turn while its
        score class and its state's best-move row (`mv`, `MoveRows`) are known; `ps` says where each stopped.
        `hk`: `hand_keys`, by which a roll's row is one look-up after its dice (empty: the dice graph is walked
        die by die); `rd`: `roll_draws` with those keys, how the dice are drawn (a chunk of dice a draw).
        `workers`: the threads to share the blocks between (`workers()`).

        Each thread takes the next block of GROUP games as it finishes one (a shared counter, not a fixed half
        of the games: a thread the system holds up does not leave the other idle at the end), and plays the
        block's games in step, one decision of every game at a time: their look-ups (class,
        state, best move) do not depend on each other, so the processor has them in flight together
        instead of waiting for each miss in turn; the best move's line (a random byte of a table of
        hundreds of MB) and the score cells are prefetched as soon as their place is known (at the last roll,
        with the dice: the cells of every box for that roll, a line or two), so that the other games' dice and
        moves are worked on while they come. Each game's dice come from its own
        stream, in the order a game played alone draws them."""
        n_blocks = (ps.active.shape[0] + GROUP - 1) // GROUP
        taken = np.zeros(1, dtype=np.int64)  # blocks handed out: a thread takes the next one as it finishes one
        for _worker in numba.prange(min(workers, n_blocks)):  # one worker a thread
            _play_worker(ps, gm, cod, sa, cl, mv, d, hk, rd, taken)
