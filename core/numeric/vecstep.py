"""Many one-player games stepped at once, compiled: the learning environments' vector kernel.

Each game is a row of `VecGames`: its card (box scores), the dice on the table as a dice graph row, the rolls
used and its own splitmix64 dice stream (`draws.chunk`, a chunk of dice a draw). A step takes one action index
per game (the encoding of `dicecup.rl.encoding`: keeps as masks of the sorted dice, then the boxes): a keep
rolls the other dice, a box is scored from the learned score tables (`tables.ScoreTables`' classes, found by
`scoreclass.class_of`), then the next turn's dice are rolled. The legal boxes come from the learned legality
tables and the running total's bonuses from the learned end-bonus tables, each class found by the same hash.
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
from .intrinsics import fetch_add
from .records import EMPTY, RollDraws
from .scoreclass import class_of

__all__ = [
    "MISSING_CLASS",
    "MISSING_LEGAL",
    "Hashed",
    "VecDice",
    "VecGames",
    "VecLayout",
    "VecOut",
    "VecTables",
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
    """One learned table's classes, keyed for `scoreclass.class_of`: the facts, each class's key, the hash."""

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


def draw_dice(rng, g, buf, left, n, rd, faces, out):
    """n dice of game g's stream into out[:n] (faces 1..faces), a chunk of dice a draw (`draws.chunk`: the
    base-faces digits of its outcome, lowest first): (buf, left) after. The one way dice are drawn here, for
    the kernel and for the single environment alike."""
    k = 0
    while k < n:
        j = min(n - k, rd.per)
        o, buf, left = chunk(rng, g, buf, left, rd.outcomes[j], rd.low[j])
        for _ in range(j):
            out[k] = o % faces + 1
            o //= faces
            k += 1
    return buf, left


def next_seed(episodes, g):
    """The next game's dice stream of slot g: 64 bits of its episode stream (splitmix64)."""
    return _next(episodes, g)


def _roll(gm, dk, i, kept, scratch):
    """Roll game i's dice not kept (`kept`: the kept multiset's row) onto them."""
    n = dk.dice - dk.row_size[kept]
    gm.buf[i], gm.left[i] = draw_dice(gm.rng, i, gm.buf[i], gm.left[i], n, dk.draws, dk.faces, scratch)
    h = kept
    for k in range(n):
        h = dk.add_edges[h, scratch[k] - 1]
    gm.hand[i] = h


def _new_game(gm, dk, i, scratch):
    """Game i starts again: an empty card, a new dice stream from its episode stream, the first roll."""
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
    _roll(gm, dk, i, 0, scratch)


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


def _score(gm, dk, tb, i, b):
    """Game i scores box b with the dice on the table; True when its card is full."""
    c = gm.cls[i, 0]
    r = gm.hand[i] - dk.lo_roll
    f1 = 1 if gm.used[i] == 1 else 0
    gm.vals[i, b] = tb.score[c, 0, f1, r, b]
    gm.awards[i] += tb.score[c, 1, f1, r, b]
    gm.filled[i] += 1
    return gm.filled[i] == gm.vals.shape[1]


def _step_one(gm, dk, tb, lay, a, out, i, scratch):
    """Game i takes action index a (checked in range by the caller); a game done at the last step starts
    another instead (gymnasium's next-step autoreset) and its action is not read."""
    out.reward[i] = 0.0
    out.terminated[i] = False
    out.truncated[i] = False
    out.refused[i] = False
    out.changed[i] = False
    if gm.done[i]:
        _new_game(gm, dk, i, scratch)
        out.changed[i] = True
        return
    if out.mask[i, a] == 0:
        out.refused[i] = True
        out.reward[i] = lay.penalty
        gm.illegal[i] += 1
        if gm.illegal[i] >= lay.max_illegal:
            out.truncated[i] = True
            gm.done[i] = True
        return
    gm.illegal[i] = 0
    if a < lay.box0:  # a keep: the other dice are rolled
        _roll(gm, dk, i, dk.kept[gm.hand[i] - dk.lo_roll, a], scratch)
        gm.used[i] += 1
        return
    out.changed[i] = True
    if _score(gm, dk, tb, i, a - lay.box0):
        out.terminated[i] = True
        gm.done[i] = True
    else:
        gm.used[i] = 1
        _roll(gm, dk, i, 0, scratch)


def _classify_one(gm, tb, out, i):
    """Game i's card changed: its three classes, then its total and the step's reward (the change of the
    total); MISSING_CLASS bits where a class is not learned yet (`changed` stays set: the caller learns it)."""
    miss = 0
    for t in range(3):
        h = tb.score_of if t == 0 else tb.legal_of if t == 1 else tb.end_of
        c = class_of(gm.vals, i, h.facts, h.keys, h.slots)
        gm.cls[i, t] = c
        if c < 0:
            miss |= 1 << t
    out.missing[i] = miss
    if miss:
        return
    total = gm.awards[i] + tb.bonus[gm.cls[i, 2]]
    for b in range(gm.vals.shape[1]):
        if gm.vals[i, b] != EMPTY_INT:
            total += gm.vals[i, b]
    out.reward[i] += total - gm.total[i]
    gm.total[i] = total
    out.changed[i] = False


def _legal_bits(gm, dk, tb, i):
    """Game i's legal boxes now as bits (-1: the per-roll answer is not learned yet)."""
    c = gm.cls[i, 1]
    f1 = 1 if gm.used[i] == 1 else 0
    d = tb.legal[c, 2]
    if d < 0:
        return tb.legal[c, f1]
    r = gm.hand[i] - dk.lo_roll
    if not tb.known[d, f1, r]:
        return -1
    return tb.per_roll[d, f1, r]


def _observe_one(gm, dk, tb, lay, out, i):
    """Game i's observation vector (the encoding's parts) and action mask; MISSING_LEGAL where its legal
    boxes are not learned yet (its mask is then written on the caller's next pass). Each array is read from
    its record once (an array taken from a record in a loop costs reference counts each time)."""
    vals, ob, mk, block, gbits = gm.vals, out.obs, out.mask, dk.block, lay.group_bits
    nb = vals.shape[1]
    r = gm.hand[i] - dk.lo_roll
    used = gm.used[i]
    done = gm.done[i]
    over = done and gm.filled[i] == nb
    for k in range(block.shape[1]):  # (a finished game shows no dice)
        ob[i, k] = 0 if over else block[r, k]
    ob[i, lay.rolls_at] = 0 if over else used
    ob[i, lay.rolls_at + 1] = 0 if over else dk.rolls - used
    filled = np.int64(0)
    open_at, scores_at = lay.open_at, lay.scores_at
    for b in range(nb):
        v = vals[i, b]
        full = v != EMPTY_INT
        filled |= np.int64(full) << b
        ob[i, open_at + b] = 0 if full else 1
        ob[i, scores_at + b] = v if full else 0
    for g in range(gbits.shape[0]):
        s = 0
        for b in range(nb):
            if (gbits[g] & filled) >> b & 1:
                s += vals[i, b]
        ob[i, lay.groups_at + g] = s
    fbox, fvalue = lay.flag_box, lay.flag_value
    for f in range(fbox.shape[0]):
        ob[i, lay.flags_at + f] = 1 if vals[i, fbox[f]] == fvalue[f] else 0
    ob[i, lay.total_at] = gm.total[i]
    for a in range(mk.shape[1]):
        mk[i, a] = 0
    if done:
        return
    box0 = lay.box0
    if used < dk.rolls:
        keep_ok = dk.keep_ok
        for a in range(box0):
            mk[i, a] = keep_ok[r, a]
    bits = _legal_bits(gm, dk, tb, i)
    if bits < 0:
        out.missing[i] |= MISSING_LEGAL
        return
    bits &= ~filled
    for b in range(nb):
        mk[i, box0 + b] = (bits >> b) & 1


def _settle_one(gm, dk, tb, lay, out, i):
    """Game i's classes where its card changed, then its observation and mask (none while a class is missing)."""
    if out.changed[i]:
        _classify_one(gm, tb, out, i)
        if out.changed[i]:
            return
    out.missing[i] = 0
    _observe_one(gm, dk, tb, lay, out, i)


def _step_games(gm, dk, tb, lay, actions, out, taken):
    """One step of every game (actions[i] < 0: no step, only its look-ups and observation: after a reset or
    learning), blocks of BLOCK games taken from the shared counter `taken` by each thread running it."""
    n = gm.done.shape[0]
    scratch = np.empty(dk.dice, dtype=np.int64)
    while True:
        t = fetch_add(taken, 1)
        if t * BLOCK >= n:
            break
        for i in range(t * BLOCK, min(n, (t + 1) * BLOCK)):
            if actions[i] >= 0:
                _step_one(gm, dk, tb, lay, actions[i], out, i, scratch)
            _settle_one(gm, dk, tb, lay, out, i)


def _settle_some(gm, dk, tb, lay, out, which):
    """`_settle_one` for games `which` (those the last pass left waiting for what the caller learned)."""
    for k in range(which.shape[0]):
        _settle_one(gm, dk, tb, lay, out, which[k])


@cache
def compiled_names() -> Mapping[str, Any]:
    """The vector kernels compiled by numba, with the dice draws and the class look-up inlined."""
    from . import draws, intrinsics, scoreclass

    calls = {
        "chunk": draws.compiled_names()["chunk"],
        "_next": draws.compiled_names()["_next"],
        "class_of": scoreclass.compiled_names()["class_of"],
        "fetch_add": intrinsics.compiled_names()["fetch_add"],
    }
    helpers = (
        "_roll",
        "_new_game",
        "_score",
        "_step_one",
        "_classify_one",
        "_legal_bits",
        "_observe_one",
        "_settle_one",
    )
    kernels = ("draw_dice", "next_seed", "_restart", "_step_games", "_settle_some")
    return compiled.jit_namespace(globals(), kernels, inline=helpers, calls=calls)
