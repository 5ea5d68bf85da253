"""Whole simulated games, compiled: each game turn after turn from best-move rows, many games a thread.

A game's card is coded into its solver state (`coding`) as boxes fill, its score class looked up by hash
(`scoreclass`), its dice drawn from its own stream (`draws`), its move read from its state's best-move row
(`moves.fill_moves`). Where a row or a class is missing the game stops, and the caller (`simulate.jitplay`)
adds it and plays on. The kernels are compiled only (`compiled.NUMBA_KERNELS`; `compiled_names`): importing this
module imports no numba; the records are numpy.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any, NamedTuple

import numpy as np

from . import compiled, lookup
from .draws import chunk
from .intrinsics import fetch_add, prefetch
from .records import EMPTY, Games, Pass, Playing, play_variant
from .scoreclass import class_of

__all__ = [
    "GROUP",
    "Group",
    "Hands",
    "Turns",
    "compiled_names",
    "play_games",
    "start_games",
    "state_slot",
    "workers",
]

GROUP = 128  # games a thread of `play_games` plays in step: their table look-ups are in flight together
EMPTY_INT = int(EMPTY)  # an open box, as a compile-time constant
state_slot = lookup.state_slot  # (the kernels compiled by numba inline `lookup.jitted()`)


class Hands(NamedTuple):
    """A group's games (`Group`), one entry each: which game, its class, row, dice and move."""

    live: np.ndarray  # int64: positions (in `Pass.active`) of the group's games still playing
    c_of: np.ndarray  # int64: the game's score class
    row: np.ndarray  # int64: its state's row of best moves
    hand: np.ndarray  # int64: the dice graph row of its dice on the table (or kept)
    move: np.ndarray  # int64: its move at this decision


class Turns(NamedTuple):
    """A group's games' turns (`Group`), one entry each."""

    open_: np.ndarray  # bool: the turn goes on (no box scored yet)
    buf: np.ndarray  # uint64: its random bits not used yet this turn
    left: np.ndarray  # int64: how many 32-bit halves of buf are left
    ok: np.ndarray  # bool: no error in the turn


class Group(NamedTuple):
    """The scratch of the GROUP games a thread plays in step (`_play_worker`)."""

    hands: Hands
    turns: Turns
    prog: np.ndarray  # int64 [groups]: a game's group totals, copied (a view costs reference counts)
    zero: np.ndarray  # int64 [groups]: no increment (the state look-up's)


def start_games(vals: np.ndarray, workers: int | None = None) -> None:
    """Every box of every game open, the rows shared out between `workers` threads (`workers()`; numpy's fill
    releases the GIL): a large run's fresh pages are faulted in by all of them, not by the caller's alone."""
    count = max(1, min(workers or compiled.threads(), len(vals) // GROUP))
    bounds = [len(vals) * i // count for i in range(count + 1)]
    parts = iter([vals[bounds[i] : bounds[i + 1]] for i in range(count)])
    compiled.on_threads(lambda: next(parts).fill(EMPTY_INT), count)


def workers() -> int:
    """The threads `play_games` shares its blocks between (`compiled.threads`)."""
    return compiled.threads()


def _new_group(n_groups):
    """A thread's scratch for its groups of games (`Group`)."""
    hands = Hands(
        np.empty(GROUP, dtype=np.int64),
        np.empty(GROUP, dtype=np.int64),
        np.empty(GROUP, dtype=np.int64),
        np.empty(GROUP, dtype=np.int64),
        np.empty(GROUP, dtype=np.int64),
    )
    turns = Turns(
        np.empty(GROUP, dtype=np.bool_),
        np.zeros(GROUP, dtype=np.uint64),
        np.zeros(GROUP, dtype=np.int64),
        np.empty(GROUP, dtype=np.bool_),
    )
    return Group(hands, turns, np.empty(n_groups, dtype=np.int64), np.zeros(n_groups, dtype=np.int64))


def _start_group(ps, vals, cl, gr, k0):
    """Games k0 .. k0 + GROUP - 1 of the pass (fewer at its end) into the group, each with its score class
    (then from the memo, turn by turn); the number of games."""
    active, pending = ps.active, ps.pending
    facts, keys, slots = cl.facts, cl.keys, cl.slots
    live, c_of = gr.hands.live, gr.hands.c_of
    n_live = min(GROUP, active.shape[0] - k0)
    for q in range(n_live):
        live[q] = k0 + q
        pending[k0 + q] = -1
        c_of[q] = class_of(vals, active[k0 + q], facts, keys, slots)
    return n_live


def _turn_rows(ps, gm, pl, gr, n_live):
    """Each game's class, state and row of best moves at its turn's start; a full game, or one stopped for
    a missing class or row (`Pass.pending`), leaves the group. The games still playing."""
    active, pending, cls, errors = ps
    codes, progs = gm.code, gm.prog
    sa, mv = pl.states, pl.moves
    row_of, direct = mv.row_of, mv.direct
    live, c_of, row, hand, _ = gr.hands
    open_, _, left, ok = gr.turns
    prog, zero = gr.prog, gr.zero
    full, size, n_groups = sa.full, sa.size, prog.shape[0]
    kept = 0
    for q in range(n_live):
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
    return kept


def _roll(active, gm, pl, gr, n_live, used):
    """Roll the dice not kept of each game whose turn goes on (a chunk of dice a draw), and ask for the
    line of its move (and at the last roll its score cells) while the next games roll."""
    cl, mv, d, hk, rd = pl.classes, pl.moves, pl.dice, pl.keys, pl.draws
    live, c_of, row, hand, _ = gr.hands
    open_, buf, left, _ = gr.turns
    moves, more, split = mv.rows, mv.more, mv.split
    cells, rng, nb = cl.cells, gm.rng, gm.vals.shape[1]
    n_moves_rolls, n_decisions, n_cell_rolls = moves.shape[1], moves.shape[2], cells.shape[2]
    add_edges, row_size, faces, dice = d.add_edges, d.row_size, d.faces, d.dice
    lo_roll = d.levels[dice]
    key_of, row_of_key = hk.key_of, hk.row_of_key
    keyed = key_of.shape[0] > 0
    per, outcomes, low, start, chunk_keys = rd
    f1 = 1 if used == 1 else 0
    for q in range(n_live):
        if open_[q]:
            i = active[live[q]]
            h = hand[q]
            bits, n_left = buf[q], left[q]
            k = dice - row_size[h]  # the dice to roll, a chunk a draw (Yahtzee: one chunk)
            if keyed:  # the chunks' keys are summed: one look-up then gives the row
                key = key_of[h]
                while k > 0:
                    j = min(k, per)
                    o, bits, n_left = chunk(rng, i, bits, n_left, outcomes[j], low[j])
                    key += chunk_keys[start[j] + o]
                    k -= j
                h = np.int64(row_of_key[key])
            else:  # the dice graph walked die by die, the digits of each chunk
                while k > 0:
                    j = min(k, per)
                    o, bits, n_left = chunk(rng, i, bits, n_left, outcomes[j], low[j])
                    for _die in range(j):
                        h = add_edges[h, o % faces]
                        o //= faces
                    k -= j
            hand[q] = h
            buf[q], left[q] = bits, n_left
            # the move's line is asked for now: the next games roll while it comes
            r = row[q]
            if r < split:
                prefetch(moves, (r * n_moves_rolls + h - lo_roll) * n_decisions + used - 1)
            else:
                prefetch(more, ((r - split) * n_moves_rolls + h - lo_roll) * n_decisions + used - 1)
            if used == mv.rolls:  # the last roll scores: its cells (every box's) are asked for too
                at = ((c_of[q] * 2 + f1) * n_cell_rolls + h - lo_roll) * nb
                prefetch(cells, at)
                prefetch(cells, at + nb - 1)


def _read_moves(pl, lo_roll, nb, gr, n_live, used):
    """Every game's move (a short loop, its misses in flight at once), then the score cells of the games
    that score and their memo rows of the class after, asked for together."""
    cl, mv = pl.classes, pl.moves
    moves, more, split = mv.rows, mv.more, mv.split
    flag, rolls, cells, nxt = mv.flag, mv.rolls, cl.cells, cl.after
    _, c_of, row, hand, move = gr.hands
    open_ = gr.turns.open_
    n_cell_rolls, n_next = cells.shape[2], nxt.shape[2]
    f1 = 1 if used == 1 else 0
    for q in range(n_live):
        r = row[q]
        if r < split:
            move[q] = np.int64(moves[r, hand[q] - lo_roll, used - 1])
        else:
            move[q] = np.int64(more[r - split, hand[q] - lo_roll, used - 1])
    for q in range(n_live):
        x = move[q]
        if open_[q] and ((x & flag) != 0 or used == rolls) and (x & (flag - 1)) < nb:
            b = x & (flag - 1)
            if used < rolls:
                r = hand[q] - lo_roll
                prefetch(cells, ((c_of[q] * 2 + f1) * n_cell_rolls + r) * nb + b)
            if n_next > 0:
                at = (c_of[q] * nb + b) * n_next
                prefetch(nxt, at)
                prefetch(nxt, at + n_next - 1)


def _kept_row(x, h, faces, row_counts, add_edges):
    """The multiset of roll h's dice that keep mask x keeps (a mask of its sorted dice), by the dice graph."""
    kept_row = 0
    pos = 0
    for f in range(faces):
        for _ in range(row_counts[h, f]):
            if (x >> pos) & 1:
                kept_row = add_edges[kept_row, f]
            pos += 1
    return kept_row


def _make_moves(active, errors, gm, pl, gr, n_live, used):
    """Each game's move: keep the dice of its mask (the rest are rolled next), or score its box. A score is
    the cell of the roll in the box (with the awards and events it wins); then the game's class code and
    group totals move on, and its class after (from the memo, else hashed). Written out here, not in a
    function given the game's records: unpacking those on every scoring costs reference counts."""
    vals, awards, earned, events, _, codes, progs = gm
    cl, mv, d, sa = pl.classes, pl.moves, pl.dice, pl.states
    flag_vals, flag_n, radix, groups = pl.coding
    facts, keys, slots, nxt, nxt_lo = cl.facts, cl.keys, cl.slots, cl.after, cl.after_lo
    cells, extras = cl.cells, cl.extras
    flag, kept_rows, rolls = mv.flag, mv.kept, mv.rolls
    live, c_of, _, hand, move = gr.hands
    open_, _, _, ok = gr.turns
    sa_base, sa_pmin, sa_dims, sa_strides, n_codes = sa.base, sa.pmin, sa.dims, sa.strides, sa.base.shape[0]
    n_awards, n_events, n_groups = awards.shape[1], events.shape[1], groups.shape[0]
    n_next, nb = nxt.shape[2], vals.shape[1]
    lo_roll = d.levels[d.dice]
    f1 = 1 if used == 1 else 0
    for q in range(n_live):
        if not open_[q]:
            continue
        i = active[live[q]]
        h = hand[q]
        x = move[q]
        if (x & flag) == 0 and used < rolls:  # keep the dice of mask x, reroll the rest
            if kept_rows.shape[1] > 0:
                hand[q] = kept_rows[h - lo_roll, x]
            else:
                hand[q] = _kept_row(x, h, d.faces, d.row_counts, d.add_edges)
            continue
        open_[q] = False
        b = x & (flag - 1)
        if (x & flag) == 0 or b >= nb or vals[i, b] != EMPTY_INT:
            errors[1] += 1
            ok[q] = False  # leaves the group
            continue
        c = c_of[q]
        cell = np.int64(cells[c, f1, h - lo_roll, b])
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
            nc = class_of(vals, i, facts, keys, slots)
            if memo and nc >= 0:
                nxt[c, b, v] = nc  # threads may race here: they write the same class
        c_of[q] = nc


def _drop_failed(gr, n_live):
    """The group's games less those that hit an error in the turn (they stop here); how many are left."""
    live, c_of, ok = gr.hands.live, gr.hands.c_of, gr.turns.ok
    kept = 0
    for q in range(n_live):
        if ok[q]:
            live[kept] = live[q]
            c_of[kept] = c_of[q]
            kept += 1
    return kept


def _play_worker(ps, gm, pl, taken):
    """One thread's share of `play_games`: blocks of GROUP games taken from the shared counter `taken` until
    none is left, each played turn after turn, one decision of every game of the block at a time."""
    n_blocks = (ps.active.shape[0] + GROUP - 1) // GROUP
    d, mv = pl.dice, pl.moves
    lo_roll = d.levels[d.dice]
    gr = _new_group(pl.coding.groups.shape[0])
    while True:
        t = fetch_add(taken, 1)
        if t >= n_blocks:
            break
        n_live = _start_group(ps, gm.vals, pl.classes, gr, t * GROUP)
        while n_live > 0:
            n_live = _turn_rows(ps, gm, pl, gr, n_live)
            for used in range(1, mv.rolls + 1):
                _roll(ps.active, gm, pl, gr, n_live, used)
                _read_moves(pl, lo_roll, gm.vals.shape[1], gr, n_live, used)
                _make_moves(ps.active, ps.errors, gm, pl, gr, n_live, used)
            n_live = _drop_failed(gr, n_live)


def play_games(ps: Pass, gm: Games, pl: Playing, workers: int) -> None:
    """Play the games of pass `ps` (`Pass`: rows of gm, `Games`) on `workers` threads, each turn after turn while its
    score class and its state's best-move row (`pl.moves`, `MoveRows`) are known; `ps` says where each
    stopped. `pl` (`Playing`) also holds `hand_keys`, by which a roll's row is one look-up after its dice
    (empty: the dice graph is walked die by die), and `roll_draws` with those keys, how the dice are drawn
    (a chunk of dice a draw).
    `workers`: the threads to share the blocks between (`workers()`), each running the compiled
    `_play_worker` without the GIL.

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
    mv = pl.moves
    name = play_variant(pl.states.base, pl.classes.after, mv.row_of, mv.rows, mv.kept)
    if compiled.aot_fits(name, (ps, gm, pl, taken)):
        kernel = compiled.aot_kernel(name, checked=0)  # (checked just now)
    else:
        kernel = compiled_names()["_play_worker"]
    compiled.on_threads(lambda: kernel(ps, gm, pl, taken), min(workers, n_blocks))


@cache
def compiled_names() -> Mapping[str, Any]:
    """The player compiled by numba: `_play_worker` with its steps, the state look-up, the class look-up and
    the dice draws inlined (numba IR) into it: a call per game and turn passed the whole index record on the
    stack, and a view of the game's group totals cost two reference counts."""
    from . import draws, intrinsics, scoreclass

    calls = {
        "state_slot": compiled.jit(lookup.jitted().py_func, inline=True),
        "chunk": draws.compiled_names()["chunk"],
        "class_of": scoreclass.compiled_names()["class_of"],
        **intrinsics.compiled_names(),
    }
    steps = ("_start_group", "_turn_rows", "_roll", "_read_moves", "_kept_row", "_make_moves", "_drop_failed")
    return compiled.jit_namespace(globals(), ("_new_group", "_play_worker"), inline=steps, calls=calls)
