"""The records compiled kernels take: flat numpy arrays grouped by what they describe (numpy only).

They live apart from the classes that build them (`dice.DiceGraph`, `coding.StateIndex`,
the solver's layer tables) so that the kernels' ahead-of-time build (`aot.py`) can type
them with nothing but numpy and numba installed.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from functools import cache
from types import MappingProxyType
from typing import Any, NamedTuple

import numpy as np

from .pages import zeroed

__all__ = [
    "CLASS_HASH",
    "EMPTY",
    "W",
    "core_signatures",
    "counts_array",
    "simulator_signatures",
    "CardArrays",
    "Classes",
    "Coding",
    "DiceArrays",
    "DuelShape",
    "DuelTurns",
    "Games",
    "HandKeys",
    "MoveRows",
    "Pass",
    "Playing",
    "ScoreArrays",
    "TurnPlay",
    "TurnStates",
    "RollDraws",
    "LayerArrays",
    "LayerStates",
    "Legality",
    "ScoreRows",
    "SlotArrays",
    "StateArrays",
    "PLAY_VARIANTS",
    "FILL_VARIANTS",
    "fill_variant",
    "TurnShape",
    "play_variant",
    "signature_digest",
    "signatures",
]

EMPTY = np.iinfo(np.int32).min
"""An open box in a `vals` row of box scores (no score is this low)."""

CLASS_HASH = "fnv-fmix64"
"""How the score class hash (`scoreclass`) places a class: part of the simulator's build digest, so that a build
placing classes another way (an older install) is not loaded beside a player compiled by numba now."""

W = 8
"""States folded side by side: the last axis of every array `turn.turn_block` takes (one AVX-512 register of
float64; the lanes are spelled out in `turn.py` so that the compiler keeps them in registers, not memory)."""


class DiceArrays(NamedTuple):
    """The dice graph as flat arrays for compiled kernels (one record instead of a wall of arguments).

    Rows are the multisets in `DiceGraph.multisets` order; `levels[s]:levels[s + 1]`
    are the multisets of size s (so `levels[dice]` is the first full roll).
    """

    levels: np.ndarray  # int64 [dice + 2]
    add_edges: np.ndarray  # int64 [rows, faces]: the row of m + face (sizes < dice; zeros past)
    sub_edges: np.ndarray  # int64 [rows, width]: rows of m - d for each distinct die d (zeros past sub_count)
    sub_count: np.ndarray  # int64 [rows]: how many distinct dice m holds
    sub_face: np.ndarray  # int64 [rows, faces]: the row of m minus one die of face f + 1 (-1: none)
    row_counts: np.ndarray  # int64 [rows, faces]: how many of each face m holds
    row_size: np.ndarray  # int64 [rows]: |m|
    roll_probs: np.ndarray  # float64 [full rolls]: probability of each full roll
    faces: int
    dice: int


class TurnArrays(NamedTuple):
    """What the turn recursion (`turn.turn_block`) works in and writes, W lanes each: the roll values and two
    scratch rows per dice multiset, and the per-stage keep values and per-decision roll values it stores
    where they have rows (an empty first axis: not stored)."""

    val: np.ndarray  # float64 [full rolls, W]: each roll's value at the decision after the first roll
    keep: np.ndarray  # float64 [rows, W]: scratch
    best: np.ndarray  # float64 [rows, W]: scratch
    keeps: np.ndarray  # float64 [stages, keeps, W]
    levels: np.ndarray  # float64 [decisions, full rolls, W]


class StateArrays(NamedTuple):
    """A `StateIndex` as flat arrays, for compiled kernels: per class code (and group) where its values start."""

    base: np.ndarray  # int64 [codes]: first value slot of each class, -1 when unreachable
    pmin: np.ndarray  # int64 [G, codes]: smallest clamped total of each group
    dims: np.ndarray  # int64 [G, codes]: how many totals of each group
    strides: np.ndarray  # int64 [G, codes]
    clo: np.ndarray  # int64 [G, masks]: clamp range of each group per box mask
    chi: np.ndarray
    full: int  # the all-filled box mask
    size: int  # number of values (the NaN sentinel's slot)


class SlotArrays(NamedTuple):
    """Per box, the distinct successors its scores lead to (`StateSpace.slot_add` / `slot_inc`), padded."""

    add: np.ndarray  # int64 [boxes, kmax]: class-code increment of each slot
    inc: np.ndarray  # int64 [boxes, kmax, G]: group-total increments
    used: np.ndarray  # int64 [boxes]: slots in use


class LayerStates(NamedTuple):
    """A layer's states: what each one is and where its score rows are."""

    codes: np.ndarray  # int64 [N]: class code of each state (its low bits: the filled boxes)
    prog: np.ndarray  # int64 [N, G]: clamped group totals
    ctxs: np.ndarray  # int64 [N]: dense context of each state (row of `ScoreRows.point_row` / `slot_row`)


class Legality(NamedTuple):
    """Which open boxes each state may score (`advance.legal_boxes` reads it): the same boxes for every roll,
    after the first roll or a later one, or (rd_index >= 0) a table of legal boxes per roll."""

    later_bits: np.ndarray  # int64 [N]: boxes legal after a later roll (when the roll does not matter)
    first_bits: np.ndarray  # int64 [N]: ... after the first roll
    rd_index: np.ndarray  # int64 [N]: row of rd_tables when legality depends on the roll, else -1
    rd_tables: np.ndarray  # int64 [T, rolls, 2]: legal-box bits per roll (and first roll?)


class ScoreRows(NamedTuple):
    """The distinct rows of points and successor slots of a layer's contexts, and which row each box reads."""

    points: np.ndarray  # float64 [P, rolls]: distinct rows of the points of scoring each roll in a box
    slots: np.ndarray  # int32 [S, rolls]: distinct rows of the successor slot each score leads to
    reach: np.ndarray  # int64 [S]: bit k set where the slot row holds slot k
    point_row: np.ndarray  # int32 [contexts, boxes, 2]: the row of points of each box, later/first roll
    slot_row: np.ndarray  # int32 [contexts, boxes, 2]: the row of slots ...


class TurnShape(NamedTuple):
    """How a layer's turn is folded: its decisions' score rows, banked rolls, and the objective's leaf."""

    rolls: int  # rolls a turn
    fs_both: bool  # whether first-roll scoring differs anywhere in the layer
    pick: np.ndarray  # int64 [decisions]: the row of the turn's score table each decision uses
    first_pick: np.ndarray  # int64 [decisions]: ... were that decision the turn's first (banked rolls)
    banked: bool  # unused rolls are banked: a score row per rolls left, a value per bank
    product: bool  # a risk objective: `points` holds exp(theta * points) and a leaf is factor x value


class LayerArrays(NamedTuple):
    """One layer of the solver's states and the score tables of their contexts."""

    states: LayerStates
    legal: Legality
    rows: ScoreRows
    turn: TurnShape


class CardArrays(NamedTuple):
    """One card at a decision, for the advisor's kernel (`card.py`): its state, and the scoring row of
    each decision its turn folds."""

    code: int  # the card's class code (canonical)
    prog: np.ndarray  # int64 [G]: its clamped group totals
    ff: np.ndarray  # int64 [decisions]: decision q scores after the first roll (1) or a later one (0)
    bank: np.ndarray  # int64 [decisions]: ... leaving this many rolls banked (a column of the values)
    state: int  # the card's row in the layer passed with it (the advisor's layer of every class it knows)


# ---------------------------------------------------------------------- the simulator's records


class HandKeys(NamedTuple):
    """Multisets of dice as sums (`hand_keys`): a roll adds each new die's weight to the kept dice's key,
    then one look-up gives the row, instead of a chain of dice graph look-ups, one a die."""

    key_of: np.ndarray  # int64 [rows]: sum over faces f of count(f) * (dice + 1) ** (f - 1); empty: not used
    row_of_key: np.ndarray  # int32 [(dice + 1) ** faces]: the row of each key of a multiset, -1 elsewhere
    weight: np.ndarray  # int64 [faces]: the key of one die of each face


class RollDraws(NamedTuple):
    """How a roll's dice come from a game's stream: in chunks of up to `per` dice, one 32-bit draw each
    (`chunk`), a uniform outcome 0 .. faces ** j - 1 of j dice whose base-faces digits, lowest first, are
    the dice (face digit + 1). `keys` gives the outcome's multiset key at once (`HandKeys`): a roll is one
    draw and one look-up, not one draw and one look-up a die."""

    per: int  # dice a chunk, at most: the most with faces ** per <= CHUNK_OUTCOMES (at least one, at most the dice)
    outcomes: np.ndarray  # uint64 [per + 1]: faces ** j, the outcomes of a chunk of j dice
    low: np.ndarray  # uint64 [per + 1]: 2 ** 32 % faces ** j: a draw whose low half is below it is drawn again
    start: np.ndarray  # int64 [per + 1]: where the keys of chunks of j dice start in `keys`
    keys: np.ndarray  # int32 [sum of faces ** j]: each outcome's multiset key (empty where rolls are not keyed)


class MoveRows(NamedTuple):
    """The best-move rows (`fill_moves` writes them) the games play from, and how a keep leaves the dice."""

    row_of: np.ndarray  # int32/int64 [states]: each state's row of `rows` (by slot, or by position in the states
    # `fill_moves` or the propagation is given), -1 while not written (unread if direct)
    direct: bool  # every state has its row, at its own slot (position)
    rows: np.ndarray  # uint8/16/32 [rows, rolls of the graph, decisions]: a keep mask, or flag | the box to score
    flag: int  # `move_flag`'s bit
    kept: np.ndarray  # int16/int64 [rolls, masks]: the multiset a keep mask leaves (width 0: counted die by die)
    rolls: int  # rolls a turn
    more: np.ndarray  # rows `split` and after, at more[row - split] (the player's: rows kept on disk stay mapped as
    # they are, and the rows a process adds are written apart; `fill_moves` writes `rows` only)
    split: int  # the rows in `rows`: a row number past it is read from `more`


class TurnStates(NamedTuple):
    """Solver states whose best moves are wanted: where they may score and what each successor is worth.

    Its legality fields are `records.Legality`'s, and the score-and-advance step's walk reads it as one (flat:
    `moves.fill_moves`' parallel loop cannot take a record nested in another)."""

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


class TurnPlay(NamedTuple):
    """How `fold_block`'s folded turns are played, besides the states' tables: the rolls a turn, the objective's
    theta (nonzero: a risk objective's rolls folded as utilities) and the keeps chosen among, ties to the first
    (`DiceGraph.keep_order`)."""

    rolls: int
    theta: float
    keep_rows: np.ndarray  # int64 [rolls of the graph, K]: each roll's proper keeps' rows, in the game's order
    keep_n: np.ndarray  # int64 [rolls of the graph]: how many
    keep_masks: np.ndarray  # int64 [rolls of the graph, K]: each keep as a mask of the roll's sorted dice


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


def counts_array(games: int, width: int) -> np.ndarray:
    """Zeroed int64 [games, width] for games' awards, award counts or events, stored column by column on ordinary
    pages (`pages.zeroed`): the system zeroes a page when it is first written, so a column no rule fills (most:
    the width is the score tables' capacity) costs no memory and no page fault. A padding row keeps every view
    of it (a chunk's rows, or all) of one layout, so `play_games` is compiled once for chunked and whole runs."""
    return zeroed((width, games + 1), np.int64).T[:games]


class Playing(NamedTuple):
    """What the games of a pass are played from (one record: `play_games` and its steps take it whole)."""

    coding: Coding
    states: StateArrays  # the solver's state index (`state_slot`), int32 where it fits
    classes: Classes
    moves: MoveRows  # the best-move rows, and how a keep leaves the dice
    dice: DiceArrays
    keys: HandKeys  # `draws.hand_keys` (empty: the dice graph is walked die by die)
    draws: RollDraws  # `draws.roll_draws` with those keys: how a roll's dice are drawn


class DuelTurns(NamedTuple):
    """The exact duel's movers' turns (`duel._duel`): per mover, decision (0: after a later roll, 1: after the
    first), box and roll, the points scored and the successor's row among the next layer's other states (-1:
    not legal there)."""

    pts: np.ndarray  # int64 [movers, 2, boxes, rolls]
    succ: np.ndarray  # int64 [movers, 2, boxes, rolls]
    both: np.ndarray  # bool [movers]: the first roll scores differently from a later one


class DuelShape(NamedTuple):
    """A duel layer's geometry: the other states, this layer's lead bound R and the next layer's Rn, and the next
    layer's other states (its value rows are other * n_next + successor)."""

    others: int
    R: int
    Rn: int
    n_next: int


def _i8(*shape: int) -> np.ndarray:
    return np.zeros(shape, dtype=np.int64)


def _u8(*shape: int) -> np.ndarray:
    return np.zeros(shape, dtype=np.uint64)


def _f8(*shape: int) -> np.ndarray:
    return np.zeros(shape)


def _read_only(a: np.ndarray) -> np.ndarray:
    a = a.copy()
    a.flags.writeable = False
    return a


@cache
def signatures() -> Mapping[str, tuple[Any, ...]]:
    """`core_signatures` and `simulator_signatures` (the simulator's records are imported: call it after import),
    read-only and made once a process: every kernel call through `compiled.aot_fits` reads them (made anew
    they cost about 80 us a call, and a Yahtzee solve makes 45 such calls)."""
    return MappingProxyType({**core_signatures(), **simulator_signatures()})


def core_signatures() -> dict[str, tuple[Any, ...]]:
    """Per kernel built ahead of time (`aot.py`), example arguments of the types its callers pass (C-contiguous
    arrays unless the example is not, writable unless it is read-only; int64 counts): what it is compiled for, and what `compiled.aot_kernel` checks each call against."""
    dice = DiceArrays(
        levels=_i8(3),
        add_edges=_i8(1, 1),
        sub_edges=_i8(1, 1),
        sub_count=_i8(1),
        sub_face=_i8(1, 1),
        row_counts=_i8(1, 1),
        row_size=_i8(1),
        roll_probs=_f8(1),
        faces=1,
        dice=1,
    )
    st = StateArrays(_i8(1), _i8(1, 1), _i8(1, 1), _i8(1, 1), _i8(1, 1), _i8(1, 1), 1, 1)
    i4 = np.zeros((1, 1, 1), dtype=np.int32)
    lay = LayerArrays(
        LayerStates(_i8(1), _i8(1, 1), _i8(1)),
        Legality(_i8(1), _i8(1), _i8(1), _i8(1, 1, 1)),
        ScoreRows(_f8(1, 1), i4[0], _i8(1), i4, i4),
        TurnShape(1, False, _i8(1), _i8(1), False, False),
    )
    slots = SlotArrays(_i8(1, 1), _i8(1, 1, 1), _i8(1))
    w = W
    fold = (_f8(1, 1, w), _i8(1), _i8(1), dice, TurnArrays(_f8(1, w), _f8(1, w), _f8(1, w), _f8(1, 1, w), _f8(1, 1, w)))
    one = np.int64(1)
    card = (CardArrays(1, _i8(1), _i8(1), _i8(1), 0), slots, lay, st, dice)
    scratch = (_f8(1, 1, 1), _f8(1, 1, w), _f8(1, 1, w), _i8(1))
    turns = DuelTurns(_i8(1, 1, 1, 1), _i8(1, 1, 1, 1), np.zeros(1, dtype=np.bool_))
    f4 = np.zeros((1, 1), np.float32)
    duel = (turns, dice, _i8(1))
    shape = DuelShape(1, 1, 1, 1)
    return {
        "turn_block": fold,
        "layer_f8": (lay, slots, st, dice, _f8(1, 1), one, one, _f8(1, 1)),
        "layer_f4": (lay, slots, st, dice, np.zeros((1, 1), np.float32), one, one, _f8(1, 1)),
        "card_f8": (*card, _f8(1, 1), scratch),
        "card_f4": (*card, np.zeros((1, 1), np.float32), scratch),
        "duel_f8": (*duel, _f8(1, 1), shape, _f8(1, 1), one, one),
        "duel_f4": (*duel, f4, shape, f4, one, one),
        "successors_f8": (slots, st, _i8(1), _i8(1, 1), _read_only(_f8(1, 1)), one, _f8(1, 1)),
        "successors_f4": (slots, st, _i8(1), _i8(1, 1), _read_only(f4), one, _f8(1, 1)),
        "reach_step": (_u8(1, 1), _i8(1), _i8(1), _i8(1), _i8(1), _i8(1), _u8(1, 1)),
    }


PLAY_VARIANTS = (("i4", "i2", "i4", "u1", "i2"),)
"""The dtypes of the player's records built ahead of time (`play_variant`: state index, class memo, best-move
row index, best-move rows, kept rows); a run whose records have others compiles its player by numba."""


def play_variant(states: np.ndarray, after: np.ndarray, row_of: np.ndarray, rows: np.ndarray, kept: np.ndarray) -> str:
    """The name of the player's kernel for records of these arrays' dtypes (`PLAY_VARIANTS`)."""
    return "play_worker_" + "_".join(a.dtype.str[1:] for a in (states, after, row_of, rows, kept))


FILL_VARIANTS = ("u1",)
"""The best-move rows' dtypes the fill (`moves._fill_worker`) is built ahead of time for (`fill_variant`); rows of
another (larger dice or cards) are filled by the kernel numba compiles."""


def fill_variant(rows: np.ndarray) -> str:
    """The name of the best-move fill's kernel for rows of this dtype (`FILL_VARIANTS`)."""
    return "fill_worker_" + rows.dtype.str[1:]


def simulator_signatures() -> dict[str, tuple[Any, ...]]:
    """The simulator's kernels: the player (`play._play_worker`, a variant per `PLAY_VARIANTS`), the best-move
    fill (`moves._fill_worker`, a variant per `FILL_VARIANTS`) and the score class hash (`scoreclass`). The award and event counts are column-major views (`play.counts_array`), and
    the best-move rows may be mapped read-only from disk."""

    def a(dtype: str, *shape: int) -> np.ndarray:
        return np.zeros(shape, dtype=dtype)

    dice = core_signatures()["turn_block"][3]
    counts = counts_array(2, 2)
    out: dict[str, tuple[Any, ...]] = {
        "class_slots": (_i8(1, 1), 1),
        "group_facts": (_i8(1, 1), _i8(1), 1, 1, 1),
        "class_scores": (
            a("i4", 1, 1, 1, 1),
            _i8(1, 1),
            1,
            _i8(1, 1),
            _i8(1),
            _f8(1, 1, 1, 1),
            _i8(1, 1, 1, 1),
            a("?", 1),
        ),
    }
    for rows_t in FILL_VARIANTS:
        rows = a(rows_t, 1, 1, 1)
        st = TurnStates(_i8(1), a("?", 1), _i8(1), _i8(1), _i8(1), _i8(1), _i8(1, 1, 1), _f8(1, 1))
        sc = ScoreArrays(_f8(1, 1, 1, 1), _i8(1, 1, 1, 1), _i8(1, 1, 1), _i8(1, 1, 1), a("?", 1))
        pol = TurnPlay(1, 1.0, _i8(1, 1), _i8(1), _i8(1, 1))
        mv = MoveRows(_i8(1), False, rows, 1, _i8(0, 0), 1, rows, 1)
        out[fill_variant(rows)] = (st, sc, dice, pol, mv, _i8(1), _i8(1))
    for st_t, after_t, row_t, rows_t, kept_t in PLAY_VARIANTS:
        rows = a(rows_t, 1, 1, 1)
        rows.setflags(write=False)
        states = StateArrays(a(st_t, 1), *(a(st_t, 1, 1),) * 5, 1, 1)  # (a signature's example: arrays shared)
        classes = Classes(_i8(1), _i8(1, 1), _i8(1), a("i4", 1, 1, 1, 1), _i8(1, 1), a(after_t, 1, 1, 1), 1)
        moves = MoveRows(a(row_t, 1), False, rows, 1, a(kept_t, 1, 1), 1, rows, 1)
        keys = HandKeys(_i8(1), a("i4", 1), _i8(1))
        draws = RollDraws(1, a("u8", 1), a("u8", 1), _i8(1), a("i4", 1))
        playing = Playing(Coding(_i8(1, 1), _i8(1), _i8(1), _i8(1, 1)), states, classes, moves, dice, keys, draws)
        games = Games(_i8(1, 1), counts, counts, counts, a("u8", 1), _i8(1), _i8(1, 1))
        name = play_variant(states.base, classes.after, moves.row_of, rows, moves.kept)
        out[name] = (Pass(_i8(1), _i8(1), _i8(1), _i8(1)), games, playing, _i8(1))
    return out


def signature_digest(simulator: bool = False) -> str:
    """A digest of every kernel's argument types (`core_signatures`, or with `simulator` the simulator's:
    names, record layouts, dtypes, ranks, layouts): the ahead-of-time build records the ones it was compiled
    for, and a build for other types is not loaded (it would read a record of another layout as its own). Two
    digests: the core's is asked while `compiled` is imported, before the simulator's records can be."""

    def kind(a: Any) -> str:
        if isinstance(a, np.ndarray):
            return f"{a.dtype.str}/{a.ndim}{'' if a.flags.c_contiguous else 'A'}{'' if a.flags.writeable else 'r'}"
        if isinstance(a, tuple):
            return f"{type(a).__name__}({','.join(map(kind, a))})"
        return type(a).__name__

    kernels = simulator_signatures() if simulator else core_signatures()
    text = ";".join(f"{name}:{kind(args)}" for name, args in sorted(kernels.items()))
    if simulator:
        text += f";hash:{CLASS_HASH}"
    return hashlib.sha256(text.encode()).hexdigest()[:16]
