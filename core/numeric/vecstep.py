"""Many one-player games stepped at once, compiled: the learning environments' vector kernel.

Each game is a row of `VecGames`: its card (box scores), the dice on the table as a dice graph row, the rolls
used and its own splitmix64 dice stream (`draws.chunk`, a chunk of dice a draw). A step takes one action index
per game (the encoding of `dicecup.rl.encoding`: keeps as masks of the sorted dice, then the boxes): a keep
rolls the other dice, a box is scored from the learned score tables (`tables.ScoreTables`' classes, keyed as
`scoreclass.class_of` keys them, placed and found by its hash: `scoreclass.add_slots`), then the next turn's dice are
rolled. The legal boxes come from the learned legality tables and the running total's bonuses from the learned
end-bonus tables, each class found the same way.
Where a class or a per-roll legality answer is not learned yet, the game is flagged (`VecOut.missing`) and the
caller asks the rules, then runs the look-up again: no rule is written here.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any, NamedTuple

import numpy as np

from . import compiled
from .draws import _next, chunk
from .intrinsics import fetch_add, prefetch
from .records import EMPTY, RollDraws
from .scoreclass import add_slots, first_slot, probe

__all__ = [
    "MISSING_CLASS",
    "MISSING_LEGAL",
    "Hashed",
    "VecDice",
    "VecGames",
    "VecLayout",
    "VecOut",
    "VecTables",
    "add_slots",
    "compiled_names",
    "new_games",
]

EMPTY_INT = int(EMPTY)
MISSING_CLASS = (1, 2, 4)
"""`VecOut.missing` bits: the card's score, legality or end-bonus class is not learned yet."""
MISSING_LEGAL = 8
BLOCK = 512  # games a thread of `_step_games` takes at a time
"""`VecOut.missing` bit: the legal boxes of this (legality class, first roll?, roll) are not learned yet."""


class Hashed(NamedTuple):
    """One learned table's classes, keyed as `scoreclass.class_of` keys them (`CardFacts`' facts), hashed by
    `scoreclass.add_slots`: the facts, each class's key, the hash."""

    facts: np.ndarray  # int64 [F]
    keys: np.ndarray  # int64 [C, F]
    slots: np.ndarray  # int64 [P]: class at each hash slot, -1 empty


class VecTables(NamedTuple):
    """The learned rules: scores and awards per (class, first roll?, roll, box), legal boxes, end bonuses."""

    score_of: Hashed
    score: np.ndarray  # int64 [C, 2, 2, rolls, boxes]: the box score (0) and the awards' points (1) it wins
    legal_of: Hashed
    legal: np.ndarray  # int64 [L, 3]: legal box bits where the roll does not matter (later roll, first roll),
    # then the class's row of `per_roll` (-1: the roll does not matter)
    per_roll: np.ndarray  # int64 [D, 2, rolls]: legal box bits per roll
    known: np.ndarray  # bool [D, 2, rolls]: which of those were asked
    end_of: Hashed
    bonus: np.ndarray  # int64 [E]: points of the end bonuses a card of the class holds now


class VecDice(NamedTuple):
    """The dice: the graph's edges, what each keep leaves, which keeps are legal, how rolls are drawn."""

    add_edges: np.ndarray  # int64 [rows, faces]: `DiceArrays.add_edges`
    row_size: np.ndarray  # int64 [rows]: the dice each row holds
    kept: np.ndarray  # int64 [rolls, 2 ** dice]: `DiceGraph.kept_rows`
    keep_ok: np.ndarray  # int8 [rolls, keeps]: 1 where a keep index is legal (of equal dice, the leftmost)
    block: np.ndarray  # float32 [rolls, width]: the observation's dice parts of each roll
    draws: RollDraws  # `draws.roll_draws` without keys
    lo_roll: int  # the first full roll's row of the graph
    faces: int
    dice: int
    rolls: int  # rolls a turn


class VecLayout(NamedTuple):
    """Where the observation's parts start, the encoding's blocks, and how illegal actions are met."""

    rolls_at: int  # rolls used, then rolls left
    open_at: int
    scores_at: int
    groups_at: int
    flags_at: int
    total_at: int
    group_bits: np.ndarray  # int64 [G]: the boxes of each bonus group
    flag_box: np.ndarray  # int64 [F]: the box each flag reads
    flag_value: np.ndarray  # int64 [F]: ... and the value it holds
    box0: int  # the first box action (after the keeps)
    penalty: float
    max_illegal: int


class VecGames(NamedTuple):
    """The games, one row each."""

    vals: np.ndarray  # int64 [N, boxes]: box scores, EMPTY where open
    awards: np.ndarray  # int64 [N]: points of the awards won so far
    total: np.ndarray  # int64 [N]: the total shown now (boxes, awards, bonuses)
    filled: np.ndarray  # int64 [N]
    hand: np.ndarray  # int64 [N]: the dice graph row of the dice on the table
    used: np.ndarray  # int64 [N]: rolls used this turn
    cls: np.ndarray  # int64 [N, 3]: score, legality and end-bonus class (-1: not known)
    rng: np.ndarray  # uint64 [N]: the game's dice stream (splitmix64 state)
    buf: np.ndarray  # uint64 [N]: its random bits not used yet
    left: np.ndarray  # int64 [N]: how many 32-bit halves of buf are left
    episodes: np.ndarray  # uint64 [N]: the stream each game's dice stream is drawn from
    done: np.ndarray  # bool [N]: the game ended (terminated or truncated): the next step starts another
    illegal: np.ndarray  # int64 [N]: illegal actions in a row


class VecOut(NamedTuple):
    """What a step gives back, one row per game."""

    obs: np.ndarray  # float32 [N, observation]
    mask: np.ndarray  # int8 [N, actions]
    reward: np.ndarray  # float64 [N]
    terminated: np.ndarray  # bool [N]
    truncated: np.ndarray  # bool [N]
    refused: np.ndarray  # bool [N]: the action was illegal
    changed: np.ndarray  # bool [N]: the card changed: its classes are looked up again
    missing: np.ndarray  # int64 [N]: MISSING_* bits of what is not learned yet


def new_games(n: int, boxes: int) -> VecGames:
    """N games not started yet (every one done: the first step, or a reset, deals them)."""
    u8 = np.zeros(n, dtype=np.uint64)
    i8 = np.zeros(n, dtype=np.int64)
    return VecGames(
        vals=np.full((n, boxes), EMPTY_INT, dtype=np.int64),
        awards=i8.copy(),
        total=i8.copy(),
        filled=i8.copy(),
        hand=i8.copy(),
        used=i8.copy(),
        cls=np.full((n, 3), -1, dtype=np.int64),
        rng=u8.copy(),
        buf=u8.copy(),
        left=i8.copy(),
        episodes=u8.copy(),
        done=np.ones(n, dtype=np.bool_),
        illegal=i8.copy(),
    )


def _draw(rng, g, buf, left, n, per, outcomes, low, faces, out):
    """n dice of game g's stream into out[:n] (faces 1..faces), a chunk of up to `per` dice a draw
    (`draws.chunk`: the base-faces digits of its outcome, lowest first): (buf, left) after."""
    k = 0
    while k < n:
        j = min(n - k, per)
        o, buf, left = chunk(rng, g, buf, left, outcomes[j], low[j])
        for _ in range(j):
            out[k] = o % faces + 1
            o //= faces
            k += 1
    return buf, left


def draw_dice(rng, g, buf, left, n, rd, faces, out):
    """`_draw` with the chunks of `rd` (`RollDraws`): the one way dice are drawn here, for the kernel and for
    the single environment alike."""
    return _draw(rng, g, buf, left, n, rd.per, rd.outcomes, rd.low, faces=faces, out=out)


def next_seed(episodes, g):
    """The next game's dice stream of slot g: 64 bits of its episode stream (splitmix64)."""
    return _next(episodes, g)


def _roll(rng, buf, left, hand, add_edges, i, kept, n, per, outcomes, low, faces, scratch):
    """Roll game i's n dice not kept (`kept`: the kept multiset's row) onto them. The kernels hand every array
    in (an array taken from a record costs two reference counts, atomic, each time: too dear in the loops)."""
    buf[i], left[i] = _draw(rng, i, buf[i], left[i], n, per, outcomes, low, faces=faces, out=scratch)
    h = kept
    for k in range(n):
        h = add_edges[h, scratch[k] - 1]
    hand[i] = h


def _new_game(gm, dk, i, scratch):
    """Game i starts again: an empty card, a new dice stream from its episode stream, the first roll (once a
    game: its arrays are taken from the records here)."""
    gm.rng[i] = next_seed(gm.episodes, i)
    gm.buf[i] = 0
    gm.left[i] = 0
    for b in range(gm.vals.shape[1]):
        gm.vals[i, b] = EMPTY_INT
    gm.awards[i] = 0
    gm.total[i] = 0
    gm.filled[i] = 0
    gm.illegal[i] = 0
    gm.done[i] = False
    gm.used[i] = 1
    rd = dk.draws
    _roll(
        gm.rng,
        gm.buf,
        gm.left,
        gm.hand,
        dk.add_edges,
        i,
        0,
        dk.dice,
        per=rd.per,
        outcomes=rd.outcomes,
        low=rd.low,
        faces=dk.faces,
        scratch=scratch,
    )


def _restart(gm, dk, which, out):
    """Start games `which` again (a reset): their classes are looked up next (`_settle`)."""
    scratch = np.empty(dk.dice, dtype=np.int64)
    for k in range(which.shape[0]):
        i = which[k]
        _new_game(gm, dk, i, scratch)
        out.changed[i] = True
        out.terminated[i] = False
        out.truncated[i] = False
        out.refused[i] = False
        out.reward[i] = 0.0


def _act(gm, dk, tb, lay, actions, out, lo, hi, scratch):
    """Games lo .. hi - 1 take their actions (checked in range by the caller; < 0: no step): a keep rolls the
    other dice, a box is scored (its score and awards from the score tables) and the next turn rolled, an
    illegal action is penalised; a game done at the last step starts another instead (gymnasium's next-step
    autoreset) and its action is not read."""
    vals, awards, filled, hand, used, cls = gm.vals, gm.awards, gm.filled, gm.hand, gm.used, gm.cls
    rng, buf, left, done, illegal = gm.rng, gm.buf, gm.left, gm.done, gm.illegal
    reward, terminated, truncated, refused, changed, mask = (
        out.reward,
        out.terminated,
        out.truncated,
        out.refused,
        out.changed,
        out.mask,
    )
    add_edges, row_size, kept, score = dk.add_edges, dk.row_size, dk.kept, tb.score
    per, outcomes, low, faces, dice, lo_roll = (
        dk.draws.per,
        dk.draws.outcomes,
        dk.draws.low,
        dk.faces,
        dk.dice,
        dk.lo_roll,
    )
    box0, nb = lay.box0, vals.shape[1]
    for i in range(lo, hi):
        a = actions[i]
        if a < 0:
            continue
        reward[i] = 0.0
        terminated[i] = False
        truncated[i] = False
        refused[i] = False
        changed[i] = False
        if done[i]:
            _new_game(gm, dk, i, scratch)
            changed[i] = True
            continue
        if mask[i, a] == 0:
            refused[i] = True
            reward[i] = lay.penalty
            illegal[i] += 1
            if illegal[i] >= lay.max_illegal:
                truncated[i] = True
                done[i] = True
            continue
        illegal[i] = 0
        r = hand[i] - lo_roll
        if a < box0:  # a keep: the other dice are rolled
            k = kept[r, a]
            _roll(rng, buf, left, hand, add_edges, i, k, dice - row_size[k], per=per, outcomes=outcomes, low=low, faces=faces, scratch=scratch)  # fmt: skip
            used[i] += 1
            continue
        changed[i] = True
        b, c, f1 = a - box0, cls[i, 0], 1 if used[i] == 1 else 0
        vals[i, b] = score[c, 0, f1, r, b]
        awards[i] += score[c, 1, f1, r, b]
        filled[i] += 1
        if filled[i] == nb:
            terminated[i] = True
            done[i] = True
        else:
            used[i] = 1
            _roll(rng, buf, left, hand, add_edges, i, 0, dice, per=per, outcomes=outcomes, low=low, faces=faces, scratch=scratch)  # fmt: skip


def _classify(gm, tb, out, which, lo, hi, at):
    """Games which[lo:hi] whose card changed: their three classes, then their total and the step's reward (the
    change of the total); MISSING_CLASS bits where a class is not learned yet (`changed` stays set: the caller
    learns it). BLOCK games at a time: their first slots found and fetched (into `at` [BLOCK, 3]), then the
    classes there fetched, then the probes: so the cache misses of a block's games overlap."""
    vals, awards, total, cls = gm.vals, gm.awards, gm.total, gm.cls
    changed, missing, reward, bonus = out.changed, out.missing, out.reward, tb.bonus
    s_facts, s_keys, s_slots = tb.score_of.facts, tb.score_of.keys, tb.score_of.slots
    l_facts, l_keys, l_slots = tb.legal_of.facts, tb.legal_of.keys, tb.legal_of.slots
    e_facts, e_keys, e_slots = tb.end_of.facts, tb.end_of.keys, tb.end_of.slots
    nb = vals.shape[1]
    for first in range(lo, hi, BLOCK):
        last = min(hi, first + BLOCK)
        for k in range(first, last):
            i = which[k]
            if changed[i]:
                q = k - first
                at[q, 0] = first_slot(vals, i, s_facts, s_slots.shape[0])
                at[q, 1] = first_slot(vals, i, l_facts, l_slots.shape[0])
                at[q, 2] = first_slot(vals, i, e_facts, e_slots.shape[0])
                prefetch(s_slots, at[q, 0])
                prefetch(l_slots, at[q, 1])
                prefetch(e_slots, at[q, 2])
        for k in range(first, last):
            if changed[which[k]]:
                q = k - first
                prefetch(s_keys, max(s_slots[at[q, 0]], 0) * s_keys.shape[1])
                prefetch(l_keys, max(l_slots[at[q, 1]], 0) * l_keys.shape[1])
                prefetch(e_keys, max(e_slots[at[q, 2]], 0) * e_keys.shape[1])
        for k in range(first, last):
            i = which[k]
            if not changed[i]:
                continue
            q = k - first
            c0 = probe(vals, i, s_facts, s_keys, s_slots, at[q, 0])
            c1 = probe(vals, i, l_facts, l_keys, l_slots, at[q, 1])
            c2 = probe(vals, i, e_facts, e_keys, e_slots, at[q, 2])
            cls[i, 0], cls[i, 1], cls[i, 2] = c0, c1, c2
            miss = (1 if c0 < 0 else 0) | (2 if c1 < 0 else 0) | (4 if c2 < 0 else 0)
            missing[i] = miss
            if miss:
                continue
            t = awards[i] + bonus[c2]
            for b in range(nb):
                if vals[i, b] != EMPTY_INT:
                    t += vals[i, b]
            reward[i] += t - total[i]
            total[i] = t
            changed[i] = False


def _observe(gm, dk, tb, lay, out, which, lo, hi):
    """Games which[lo:hi] whose classes are known: their observation vector (the encoding's parts) and action
    mask; MISSING_LEGAL where a game's legal boxes are not learned yet (its mask is then written on the
    caller's next pass)."""
    vals, hand, used, done, filled, total, cls = gm.vals, gm.hand, gm.used, gm.done, gm.filled, gm.total, gm.cls
    ob, mk, changed, missing = out.obs, out.mask, out.changed, out.missing
    block, keep_ok, lo_roll, rolls = dk.block, dk.keep_ok, dk.lo_roll, dk.rolls
    gbits, fbox, fvalue = lay.group_bits, lay.flag_box, lay.flag_value
    rolls_at, open_at, scores_at, groups_at, flags_at, total_at, box0 = (
        lay.rolls_at,
        lay.open_at,
        lay.scores_at,
        lay.groups_at,
        lay.flags_at,
        lay.total_at,
        lay.box0,
    )
    legal, per_roll, known = tb.legal, tb.per_roll, tb.known
    nb = vals.shape[1]
    for k in range(lo, hi):
        i = which[k]
        if changed[i]:
            continue
        missing[i] = 0
        r = hand[i] - lo_roll
        u = used[i]
        over = done[i] and filled[i] == nb
        for j in range(block.shape[1]):  # (a finished game shows no dice)
            ob[i, j] = 0 if over else block[r, j]
        ob[i, rolls_at] = 0 if over else u
        ob[i, rolls_at + 1] = 0 if over else rolls - u
        full_bits = np.int64(0)
        for b in range(nb):
            v = vals[i, b]
            full = v != EMPTY_INT
            full_bits |= np.int64(full) << b
            ob[i, open_at + b] = 0 if full else 1
            ob[i, scores_at + b] = v if full else 0
        for g in range(gbits.shape[0]):
            s = 0
            for b in range(nb):
                if (gbits[g] & full_bits) >> b & 1:
                    s += vals[i, b]
            ob[i, groups_at + g] = s
        for f in range(fbox.shape[0]):
            ob[i, flags_at + f] = 1 if vals[i, fbox[f]] == fvalue[f] else 0
        ob[i, total_at] = total[i]
        for a in range(mk.shape[1]):
            mk[i, a] = 0
        if done[i]:
            continue
        if u < rolls:
            for a in range(box0):
                mk[i, a] = keep_ok[r, a]
        f1 = 1 if u == 1 else 0
        c = cls[i, 1]
        d = legal[c, 2]
        if d < 0:
            bits = legal[c, f1]
        elif known[d, f1, r]:
            bits = per_roll[d, f1, r]
        else:
            missing[i] |= MISSING_LEGAL
            continue
        bits &= ~full_bits
        for b in range(nb):
            mk[i, box0 + b] = (bits >> b) & 1


def _step_games(gm, dk, tb, lay, actions, out, taken):
    """One step of every game (actions[i] < 0: no step, only its look-ups and observation: after a reset or
    learning), blocks of BLOCK games taken from the shared counter `taken` by each thread running it."""
    n = gm.done.shape[0]
    scratch = np.empty(dk.dice, dtype=np.int64)
    every = np.arange(n)
    at = np.empty((BLOCK, 3), dtype=np.int64)
    while True:
        t = fetch_add(taken, 1)
        lo, hi = t * BLOCK, min(n, (t + 1) * BLOCK)
        if lo >= n:
            break
        _act(gm, dk, tb, lay, actions, out, lo, hi, scratch=scratch)
        _classify(gm, tb, out, every, lo, hi, at)
        _observe(gm, dk, tb, lay, out, every, lo, hi)


def _settle_some(gm, dk, tb, lay, out, which):
    """Games `which` again, those the last pass left waiting for what the caller learned: their classes where
    their card changed, then their observation and mask (none while a class is missing)."""
    _classify(gm, tb, out, which, 0, which.shape[0], np.empty((BLOCK, 3), dtype=np.int64))
    _observe(gm, dk, tb, lay, out, which, 0, which.shape[0])


@cache
def compiled_names() -> Mapping[str, Any]:
    """The vector kernels compiled by numba, with the dice draws and the class look-up inlined (and the class
    hash's `add_slots`, by which the learned tables grow)."""
    from . import draws, intrinsics, scoreclass

    calls = {
        "chunk": draws.compiled_names()["chunk"],
        "_next": draws.compiled_names()["_next"],
        "first_slot": scoreclass.compiled_names()["first_slot"],
        "probe": scoreclass.compiled_names()["probe"],
        "add_slots": scoreclass.compiled_names()["add_slots"],
        "fetch_add": intrinsics.compiled_names()["fetch_add"],
        "prefetch": intrinsics.compiled_names()["prefetch"],
    }
    helpers = (
        "_draw",
        "_roll",
        "_new_game",
        "_act",
        "_classify",
        "_observe",
    )
    kernels = ("draw_dice", "next_seed", "_restart", "_step_games", "_settle_some")
    return compiled.jit_namespace(globals(), kernels, inline=helpers, calls=calls)
