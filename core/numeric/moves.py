"""Best-move rows, compiled: a state's turn folded once into the move to make for every roll and decision.

Same arithmetic and tie rules as the numpy reference (`simulate.optimal.OptimalPolicy`); keeps come from the
numeric core's one turn recursion (`turn`). `fold_block` folds W states' turns side by side, `choose_keep`
picks each lane's keep in the game's order, `fill_moves` writes the rows the player (`play`) and the score
distribution read. The records (`records.py`) and their builders are numpy; the fill is built ahead of time for
the rows of `records.FILL_VARIANTS`, and compiled by numba otherwise (`compiled.NUMBA_KERNELS`).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any, NamedTuple

import numpy as np

from . import advance, compiled, turn
from .advance import _advance_arg as advance_arg
from .advance import _legal_boxes as legal_boxes
from .intrinsics import fetch_add
from .records import DiceArrays, MoveRows, ScoreArrays, TurnArrays, TurnPlay, TurnStates, fill_variant
from .turn import W, turn_block
from .turn import _lanes as lanes  # a (rows, W) array's row as W values, in registers

__all__ = [
    "DEAD",
    "LIVE",
    "TIE",
    "Fold",
    "ScoreArrays",
    "TurnPlay",
    "TurnStates",
    "choose_keep",
    "class_scores",
    "compiled_names",
    "fill_moves",
    "fold_block",
    "move_flag",
    "move_rows",
    "score_arrays",
    "turn_play",
]

TIE = 1e-9
LIVE = (1.0,) * 8  # `choose_keep`'s lanes: every one chooses (W = 8 lanes)
DEAD = (0.0,) * 8  # none does: each scores


def score_arrays(points: np.ndarray, slots: np.ndarray, same: np.ndarray) -> ScoreArrays:
    """The record for points and slots [C, 2, boxes, rolls] and `same` [C], with each box's range of slots."""
    return ScoreArrays(points, slots, slots.min(axis=3), slots.max(axis=3), np.ascontiguousarray(same, dtype=bool))


def turn_play(keep_order: tuple[np.ndarray, np.ndarray, np.ndarray], rolls: int, theta: float) -> TurnPlay:
    """How a solution's turns are played: its graph's `keep_order`, the variant's rolls, the objective's theta."""
    return TurnPlay(int(rolls), float(theta), *keep_order)


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


def _class_scores(cells, extras, n_awards, bounds, dense, points, slots, same):
    """`class_scores`' kernel: one pass over the cells, no temporary arrays."""
    n_rolls, nb = cells.shape[2], cells.shape[3]
    for c in range(cells.shape[0]):
        alike = True
        for f in range(2):
            for r in range(n_rolls):
                for b in range(nb):
                    cell = np.int64(cells[c, f, r, b])
                    score = cell >> 1
                    gained = score
                    if cell & 1:  # a scoring that wins awards: its row of `extras`
                        score = extras[cell >> 1, 0]
                        gained = score
                        for a in range(n_awards):
                            gained += extras[cell >> 1, 1 + a]
                    slot = -1
                    if bounds[0, b] <= score <= bounds[1, b]:
                        slot = dense[bounds[2, b] + score - bounds[0, b]]
                    points[c, f, b, r] = gained
                    slots[c, f, b, r] = slot
                    if f == 1 and (points[c, 0, b, r] != gained or slots[c, 0, b, r] != slot):
                        alike = False
        same[c] = alike


def class_scores(
    cells: np.ndarray, extras: np.ndarray, n_awards: int, score_slots: tuple[np.ndarray, ...]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Points and successor slots [classes, 2, boxes, rolls] of score classes from the player's arrays (cells
    [classes, 2, rolls, boxes], a score << 1, or the row of `extras` << 1 | 1 whose score and first `n_awards`
    awards it wins), and whether each class's first roll scores like a later one: what `ScoreArrays` holds.
    `score_slots`: each box's lowest and highest score and offset into the dense score -> slot map, and that
    map (`Solution.score_slots`; -1 where the solver never saw the score). Compiled: numpy's version made a
    dozen temporary arrays of every cell."""
    lo, hi, off, dense = score_slots
    n = cells.shape[0]
    points = np.empty((n, 2, cells.shape[3], cells.shape[2]), dtype=np.float64)
    slots = np.empty(points.shape, dtype=np.int64)
    same = np.empty(n, dtype=bool)
    args = (cells, extras, int(n_awards), np.stack([lo, hi, off]).astype(np.int64), dense, points, slots, same)
    if compiled.aot_fits("class_scores", args):
        compiled.aot_kernel("class_scores", checked=0)(*args)
    else:
        compiled_names()["_class_scores"](*args)
    return points, slots, same


def move_rows(rows: np.ndarray, flag: int, rolls: int, at: np.ndarray | None = None) -> MoveRows:
    """Best-move rows by position in a list of states, for `fill_moves` to write: state s's is rows[at[s]], or
    rows[s] where `at` is None (direct); no kept dice (width 0: the caller that reads keeps sets them)."""
    row_of = np.zeros(0, dtype=np.int64) if at is None else np.ascontiguousarray(at, dtype=np.int64)
    return MoveRows(row_of, at is None, rows, flag, np.zeros((0, 0), dtype=np.int64), int(rolls), rows, len(rows))


def move_flag(dice: int, boxes: int) -> tuple[type, int] | None:
    """(dtype, flag bit) of a best-move entry: a keep as a mask of the sorted dice, or flag | box;
    None when the dice or boxes do not fit the widest entry."""
    for dtype, bits in ((np.uint8, 8), (np.uint16, 16), (np.uint32, 32)):
        if dice < bits and boxes < (1 << (bits - 1)) - 1:
            return dtype, 1 << (bits - 1)
    return None


def _tables(st, sc, s, w, fold, errors):
    """State s's scoring tables in column w of the fold: now[f, r, w] the best value of scoring roll r (f = 1:
    first roll) and best_box[w, f, r] the first box reaching it (the score-and-advance step, `advance`, with
    its arg-best box), each built in `fold`'s scratch column. The core's turn recursion then folds a block
    of such columns into keeps[i, row, w], the value of keeping multiset `row` after roll i + 1.
    A box whose legality ignores the roll and whose scores all lead to one successor slot
    (`ScoreArrays.slot_lo` = `slot_hi`) is a broadcast of that slot's value, not a gather per roll;
    errors[0] counts legal scores the solver never saw (slot -1)."""
    now, best_box, row, arg = fold.now, fold.best_box, fold.row, fold.arg  # once: no refcounts per read
    n_rolls = now.shape[1]
    points, slots, after = sc.points, sc.slots, st.after[s]
    nb = points.shape[2]
    c = st.score_class[s]
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
        boxes, rd = legal_boxes(st, s, mask, f)  # st read as its `Legality`
        rule = (st.rd_tables, rd, f, False)
        for b in range(nb):
            if not (boxes >> b) & 1:
                continue
            lo, hi = sc.slot_lo[c, f, b], sc.slot_hi[c, f, b]
            if rd < 0 and lo < 0:
                errors[0] += 1
                continue
            single = lo if rd < 0 and lo == hi else -1
            leaf = (points[c, f, b], slots[c, f, b], after, single, np.int64(0))
            if advance_arg((row, arg), b, leaf, rule):
                errors[0] += 1
        for r in range(n_rolls):
            now[f, r, w] = row[r]
            best_box[w, f, r] = arg[r]


def _bar(top, now, live):
    """A lane's bar: its best keep's value less TIE where that beats scoring by more than TIE and the lane
    is live (nonzero), else inf (it scores: no keep reaches an infinite bar)."""
    return top - TIE if (top > now + TIE) & (live != 0.0) else np.inf


def _reach(j, bar, x, o):
    """One lane's step of the scan: (j, inf) where keep value x reaches the bar (found: no later keep is
    taken), else (o, bar) unchanged."""
    hit = x >= bar
    return (j if hit else o), (np.inf if hit else bar)


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
    turn_block(now, rows_of, no_score, d, TurnArrays(val, keep, best, keeps, tops))
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


def _fill_block(st, sc, d, pol, mv, errors, k0):
    """`fill_moves` for the block of W states from k0."""
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


def _fill_worker(st, sc, d, pol, mv, errors, taken):
    """One thread's share of `fill_moves`: blocks of W states taken from the shared counter `taken` until none
    is left."""
    n_blocks = (st.masks.shape[0] + W - 1) // W
    while True:
        t = fetch_add(taken, 1)
        if t >= n_blocks:
            break
        _fill_block(st, sc, d, pol, mv, errors, t * W)


def fill_moves(st: TurnStates, sc: ScoreArrays, d: DiceArrays, pol: TurnPlay, mv: MoveRows, errors: np.ndarray) -> None:
    """The best-move rows of states st (`TurnStates`, scoring by `sc`) as policy `pol` plays them, into
    `mv.rows` [rows, rolls of the graph, decisions] (state s's at row mv.row_of[s], or s where mv.direct):
    per roll on the table and decision, a keep (a mask of the sorted dice) or flag | the box to score
    (flag | (flag - 1) where no legal box could be valued); errors[0] counts scores the solver never saw.
    Folded W states at a time, blocks shared out between threads (`compiled.threads`). `pol.theta` != 0: a risk objective's policy
    (`numeric.objective`), with st.after its certainty equivalents: scoring adds points to them as for the
    mean, but the rolls are averaged as utilities sign * exp(theta x points), and the keeps compared as
    certainty equivalents again (as `Solution.turn_tables` gives them to the numpy policy)."""
    taken = np.zeros(1, dtype=np.int64)  # blocks handed out
    n_blocks = (st.masks.shape[0] + W - 1) // W
    name = fill_variant(mv.rows)
    if compiled.aot_fits(name, (st, sc, d, pol, mv, errors, taken)):
        kernel = compiled.aot_kernel(name, checked=0)  # (checked just now)
    else:
        kernel = compiled_names()["_fill_worker"]
    compiled.on_threads(lambda: kernel(st, sc, d, pol, mv, errors, taken), max(1, min(compiled.threads(), n_blocks)))


@cache
def compiled_names() -> Mapping[str, Any]:
    """The kernels compiled by numba, calling the compiled turn recursion and score-and-advance step
    (`choose_keep` and its helpers inlined where called)."""
    from . import intrinsics

    step = advance.compiled_names()
    calls = {
        "turn_block": turn.jitted(),
        "lanes": turn.compiled_names()["_lanes"],
        "legal_boxes": step["_legal_boxes"],
        "advance_arg": step["_advance_arg"],
        **intrinsics.compiled_names(),
    }
    names = ("_tables", "fold_block", "_fill_block", "_fill_worker", "_class_scores")
    return compiled.jit_namespace(globals(), names, inline=("_bar", "_reach", "choose_keep"), calls=calls)
