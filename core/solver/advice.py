"""The advisor and the optimal policy: every option of a decision with its expected final score.

`advise` needs only the state values (a cached table). A card's turn is scored from the best source at hand:
the solve's complete scoring tables (`card_tables`: a few look-ups and one compiled call), score tables memoised
from earlier cards (kept across processes by `keep_tables` and `recall_tables`), or, for a variant's first
cards, the engine itself (`Variant.legal_boxes`, `Variant.score`). Every way gives the same bits. A card's turn
is memoised, so the next decision of the same turn is a look-up. `SolverPolicy` serves bots and simulation from the
rule tables the solver built.
"""

from __future__ import annotations

import random
import weakref
from collections import OrderedDict
from collections.abc import Callable, Sequence
from functools import lru_cache
from types import ModuleType
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

import numpy as np
from attrs import evolve, frozen

from ..errors import DicecupError
from ..game.actions import Action, Keep, Score
from ..language.contexts import Situation
from ..language.dice import Roll, sub_multisets
from ..language.model import Card, Variant
from ..language.tracing import traced_roll, tracing
from ..numeric.coding import EMPTY, ClassCoding
from ..numeric.dice import DiceGraph
from ..numeric.objective import MEAN, Objective
from ..numeric.records import CardArrays, LayerArrays, LayerStates, Legality, ScoreRows, SlotArrays, TurnShape
from ..numeric.reference import fold, turn_value
from ..numeric.tables import LegalTables, ScoreTables, Untabulable
from ..progress import Reporter
from ..store import store_of
from . import card_tables, learned
from .advisor_memory import memory_of
from .card_tables import CardTables
from .errors import SolverError
from .solve import Solution, TurnTables
from .space import most_banked

if TYPE_CHECKING:  # (annotations only: `advise` needs no game state, nor its import's time)
    from ..game.state import GameState

__all__ = [
    "Option",
    "Values",
    "advise",
    "turn_start_value",
    "advise_state",
    "best_action",
    "SolverPolicy",
    "OptimalBot",
    "recall_tables",
    "keep_tables",
    "known_scores",
    "fold_keeps",
    "keep_options",
    "ranked",
    "scored_cached",
]


class Option(NamedTuple):
    """One choice at a decision: keep these dice and reroll the rest, or score a box; and its worth.

    Immutable, compared and hashed by its fields (a named tuple: a decision makes a few dozen, and the
    advice of a known card is a few of these away)."""

    action: Keep | Score
    value: float  # expected final total of the game after this choice, played optimally
    best: bool = False
    points: int | None = None  # for a box: what it scores now (box score + awards)

    @property
    def label(self) -> str:
        if isinstance(self.action, Score):
            return f"score {self.action.box}"
        kept = "".join(map(str, self.action.dice)) if self.action.dice else "nothing"
        return f"keep {kept}"


class Values(Protocol):
    """What the advisor needs of a table of values: an exact `Solution`, or an estimate of one
    (`relax.Relaxation`, the strong strategy's sum of exactly solved parts)."""

    @property
    def variant(self) -> Variant: ...
    @property
    def graph(self) -> DiceGraph: ...
    @property
    def banks(self) -> int: ...
    def bank_after(self, rolls_left: int) -> int: ...
    def futures(self, card: Card, fills: Sequence[tuple[str, int]], bank: int = 0) -> np.ndarray: ...
    def row_of(self, card: Card) -> np.ndarray: ...


def advise(
    solution: Values,
    card: Card,
    dice: Sequence[int],
    rolls_left: int,
    first_roll: bool | None = None,
    situation: Situation | None = None,
) -> list[Option]:
    """Every option (each distinct keep, each legal box) ranked by expected final score, best first.

    `rolls_left` counts banked rolls too where unused rolls are banked (scoring now banks
    them); `first_roll` defaults to rolls_left == rolls - 1, a turn begun with nothing
    banked: pass it for a first roll with rolls banked. `situation` is the game around the
    card when the rules read it (an announcement in the rules' turn state); every later roll
    of the turn is asked with the situation after the next roll.
    """
    v = solution.variant
    roll = v.roll_of(dice)
    memory = memory_of(v)
    if memory.checked is not card:  # (the decisions of a turn pass the same card again)
        v.check_card(card)
        memory.checked = card
    if len(card.scores) >= len(v.boxes):
        raise DicecupError("the card is full: the game is over")
    most = v.rolls - 1 + most_banked(v, len(card.scores))
    if not 0 <= rolls_left <= most:
        banked = f", with up to {most - v.rolls + 1} banked" if solution.banks > 1 else ""
        raise DicecupError(
            f"rolls left must be 0..{most} for {v.id} on this card ({v.rolls} rolls a turn{banked}), got {rolls_left}"
        )
    first = rolls_left == v.rolls - 1 if first_roll is None else first_roll
    so_far = v.points_so_far(card)
    graph = solution.graph
    r = graph.index[roll.dice] - int(graph.roll_rows[0])  # its row among the rolls (the last level)
    actions: list[Keep | Score] = []
    values: list[float] = []
    points: list[int | None] = []
    fast = _card_turn_cached(solution, card, rolls_left, situation)
    if fast is not None:  # the card's turn in one compiled call (`_CardTurn`)
        if rolls_left > 0:
            kept, rows = keep_options(graph, roll.dice)
            actions += kept
            values += [so_far + x for x in fast.keeps[fast.stages - rolls_left][rows, 0].tolist()]
            points += [None] * len(kept)
        for box, now_points, after in fast.own(r, int(first), solution.bank_after(rolls_left)):
            actions.append(Score(box))
            values.append(so_far + now_points + after)
            points.append(now_points)
        return ranked(actions, values, points)
    if rolls_left > 0:  # first: it memoises the turn's later rolls, which a later decision's own roll is
        keeps = _keeps_cached(solution, card, rolls_left, _after_roll(situation))
        kept, rows = keep_options(graph, roll.dice)
        actions += kept
        values += [so_far + x for x in keeps[rows, 0].tolist()]
        points += [None] * len(kept)
    # this roll's boxes: its row of the turn's scoring table
    now = _scored_now(solution, card, r, solution.bank_after(rolls_left), situation, first)
    legal, now_points, after = now.legal[r].tolist(), now.points[r].tolist(), now.after[r].tolist()
    for b, box in enumerate(v.box_ids):
        if legal[b]:
            actions.append(Score(box))
            values.append(so_far + now_points[b] + after[b])
            points.append(now_points[b])
    return ranked(actions, values, points)


def ranked(actions: list[Keep | Score], values: list[float], points: list[int | None]) -> list[Option]:
    """The options best first; on a tie a box before a keep, else as listed (keeps, then boxes in card order)."""
    order = sorted(range(len(values)), key=[p is None for p in points].__getitem__)  # boxes first, stably
    order.sort(key=[-x for x in values].__getitem__)  # then by value, stably: a third of one sort by a lambda
    make = tuple.__new__  # Option's own fields in order: a third of the cost of calling Option(...)
    best = order[0] if order else -1
    return [make(Option, (actions[i], values[i], i == best, points[i])) for i in order]


@lru_cache(maxsize=4096)
def keep_options(graph: DiceGraph, dice: tuple[int, ...]) -> tuple[list[Keep], np.ndarray]:
    """(Keep actions, their keep indices in `graph`) for every distinct proper sub-multiset of a roll's dice."""
    kept = [k for k in sub_multisets(dice) if len(k) < len(dice)]
    return [Keep(k) for k in kept], np.array([graph.index[k] for k in kept], dtype=np.intp)


@frozen(eq=False)  # arrays: compared by identity
class Scored:
    """Every roll of a decision with its legal boxes: what each box adds now, and what follows it.

    `legal`, `points` (box score times its column's multiplier plus score-figure awards) and
    `after` (expected points to come once it is filled, -inf where illegal) are [rolls, boxes].
    """

    legal: np.ndarray
    points: np.ndarray
    after: np.ndarray

    @classmethod
    def empty(cls, rolls: int, boxes: int) -> Scored:
        return cls(
            np.zeros((rolls, boxes), dtype=bool),
            np.zeros((rolls, boxes), dtype=np.int64),
            np.full((rolls, boxes), -np.inf),
        )

    def best(self) -> np.ndarray:
        """(rolls, 1): the best value (points now + points to come) of scoring each roll."""
        return np.max(self.points + self.after, axis=1, initial=-np.inf, keepdims=True)


def _after_roll(situation: Situation | None) -> Situation | None:
    """The situation after one more roll of this turn (what every later roll is asked with)."""
    if situation is None:
        return None
    return evolve(situation, rolls_used=situation.rolls_used + 1, rolls_left=max(0, situation.rolls_left - 1))


def _memo_peek(key: tuple, solution: Values) -> Any:
    """What `_memo` holds for `key` and this `solution`, or None."""
    hit = memory_of(solution.variant).later.get((id(solution), *key))
    return hit[1] if hit is not None and hit[0]() is solution else None


def _memo(key: tuple, solution: Values, make: Callable[[], Any]) -> Any:
    """`make()`, remembered for the last few keys of a live `solution` (a turn's decisions share them: the
    variant's `AdvisorMemory.later`)."""
    got = _memo_peek(key, solution)
    if got is None:
        got = make()
        memory_of(solution.variant).remember((id(solution), *key), (weakref.ref(solution), got))
    return got


def scored_cached(
    solution: Values, card: Card, bank: int, situation: Situation | None = None, first: bool = False
) -> Scored:
    """`_later_scores`, memoised."""
    return _memo(
        ("scored", card, bank, situation, first),
        solution,
        lambda: _later_scores(solution, card, bank, situation, first),
    )


def _scored_now(solution: Values, card: Card, r: int, bank: int, situation: Situation | None, first: bool) -> Scored:
    """The decision's own roll `r` scored (its row of the result): the turn's table when it is memoised
    already, else that roll alone (from the tables or the engine: a single `dicecup advise` scores one roll)."""
    key = ("scored", card, bank, situation, first)
    full = _memo_peek(key, solution)
    if full is not None:
        return full
    return _memo((*key, r), solution, lambda: _later_scores(solution, card, bank, situation, first, only=r))


def _objective(solution: Values) -> Objective:
    """What the table maximises (`Solution.objective`; estimates of the mean's table have none)."""
    return getattr(solution, "objective", MEAN)


def _later_cached(
    solution: Values, card: Card, bank: int, situation: Situation | None = None, first: bool = False
) -> np.ndarray:
    """(rolls, 1): the best value of scoring each roll after a later roll (`first`: the first), memoised;
    as the turn recursion folds it (a risk objective's utility, not points: `Objective.utility`)."""
    return _memo(
        ("best", card, bank, situation, first),
        solution,
        lambda: _objective(solution).utility(scored_cached(solution, card, bank, situation, first).best()),
    )


def _keeps_cached(solution: Values, card: Card, rolls_left: int, later: Situation | None) -> np.ndarray:
    """(keeps, 1): each keep's value with `rolls_left` rolls left on `card`, memoised; `later` is the
    situation every later roll is asked with."""

    def make() -> np.ndarray:
        # every roll from here on scores as a later one, with as many rolls left to bank as it leaves
        rows = [_later_cached(solution, card, solution.bank_after(left), later) for left in range(rolls_left)]
        return _objective(solution).shown(fold_keeps(solution, rows + rows[-1:]))  # as points

    return _memo(("keeps", card, rolls_left, later), solution, make)


def fold_keeps(solution: Values, rows: list[np.ndarray]) -> np.ndarray:
    """(keeps, 1): every keep's value at the decision with len(rows) - 1 rolls left, rows[left] (rolls, 1) the
    best value of scoring each roll with `left` rolls left: the turn recursion, compiled (`_compiled`), else
    its numpy twin (the same sums in the same order: the same values)."""
    v = solution.variant
    if not _compiled(v):
        keeps = fold(solution.graph, rows)[-1][1]
        assert keeps is not None  # a decision with rolls left has keeps
        return keeps
    from ..numeric.turn import W, turn_block

    d = solution.graph.arrays
    n_rows, n_keeps = d.add_edges.shape[0], int(d.levels[d.dice])
    pick = np.arange(len(rows), dtype=np.int64)  # decision `left` scores from rows[left]
    score = np.zeros((len(rows), d.roll_probs.shape[0], W))  # the kernel folds W states: this card is lane 0
    score[:, :, 0] = np.stack(rows)[:, :, 0]
    keeps = np.empty((len(rows) - 1, n_keeps, W))  # per stage: the decision with len(rows) - 1 - stage rolls left
    scratch = np.empty((n_rows, W)), np.empty((n_rows, W))
    no_levels = np.empty((0, 0, W))  # no per-decision roll values for the advisor
    turn_block(score, pick, pick, d, np.empty((d.roll_probs.shape[0], W)), *scratch, keeps, no_levels)
    return keeps[0][:, :1].copy()


def _compiled(v: Variant) -> bool:
    """Whether to fold with the compiled turn recursion: always where it is built ahead of time; where numba
    would compile it, once this process has advised `TABLES_AFTER` cards of `v` (a one-card process does not
    wait for a compiler)."""
    mode = _kernels()[0].MODE
    return mode == "aot" or (mode == "jit" and memory_of(v).asked >= TABLES_AFTER)


@lru_cache(maxsize=1)
def _kernels() -> tuple[ModuleType, ModuleType]:
    """`numeric.compiled` and `numeric.card`, imported at first use (loading the built kernels)."""
    from ..numeric import card, compiled

    return compiled, card


class _ClassArrays(NamedTuple):
    """What every card of one score class and one legal class scores, as the card kernel's records: a layer
    and the class's state in it (its rows of points and successor slots per box and first roll or not, its
    legal boxes) and the successors of each box's scores (`numeric.card`). `_CardTurn.own` reads a roll's
    boxes off it."""

    layer: LayerArrays
    slots: SlotArrays
    state: int = 0  # the class's row of `layer` (the complete tables' layer of every class holds them all)


#: box slots the card kernel takes at most (its layer marks the slots a row reaches in an int64's bits)
MAX_SLOTS = 62


def _class_arrays(v: Variant, solution: Solution, vals: np.ndarray) -> _ClassArrays | None:
    """The `_ClassArrays` of the card row vals[0] from the score and legality tables: what its score class
    scores (memoised per class: the costly part), with what its legal class allows (memoised per legal
    class: every set of filled boxes is one); None where a box has more distinct scores than `MAX_SLOTS`.
    Raises Untabulable as the tables do."""
    scores, legal, mult = _tables_of(v)
    cid, shaped, box_scores = _class_of(v, scores, vals)
    lcid = int(legal.lookup(vals)[0])
    memory = memory_of(v)
    memo = memory.classes
    if memo is None or memo[0] is not scores or memo[1] is not legal:
        memo = memory.classes = (scores, legal, {}, {})
    table = scores.traced.tables[cid]
    hit = memo[2].get(cid)
    if hit is None or hit[0] is not table:
        made = _score_class(v, solution, box_scores, shaped, mult)
        if made is None:
            return None
        hit = memo[2][cid] = (table, made)
    allowed = legal.simple[lcid]
    got = memo[3].get((cid, lcid))
    if got is None or got[0] is not allowed:
        got = memo[3][(cid, lcid)] = (allowed, _with_legal(hit[1], legal, lcid, vals))
    return got[1]


def _score_class(
    v: Variant, solution: Solution, box_scores: np.ndarray, shaped: np.ndarray, mult: np.ndarray
) -> _ClassArrays | None:
    """The `_ClassArrays` of a score class, every box legal (`_with_legal` says which are): rows of points and
    successor slots per (box, first roll?), and where each slot leads; None past `MAX_SLOTS`."""
    nb, n_rolls = len(v.box_ids), box_scores.shape[1]
    distinct = [_sorted_distinct(box_scores[..., b]) for b in range(nb)]
    kmax = max(len(k) for k in distinct)
    if kmax > MAX_SLOTS:
        return None
    slot_of = np.stack([np.searchsorted(distinct[b], box_scores[..., b]) for b in range(nb)], axis=-1)
    ix = solution.index
    add, inc = np.zeros((nb, kmax), dtype=np.int64), np.zeros((nb, kmax, max(ix.G, 1)), dtype=np.int64)
    for b, k in enumerate(distinct):
        add[b, : len(k)] = [(1 << b) + (ix.digit_of(b, int(x)) * ix.radix[b] << nb) for x in k.tolist()]
        inc[b, : len(k), : ix.G] = ix.group_masks[:, b][None, :] * k[:, None]
    points = _box_points(v, box_scores, shaped, mult)
    rows = np.arange(2 * nb).reshape(nb, 2).astype(np.int32)  # box b's row after a later roll, then the first
    point_rows = points.transpose(2, 0, 1).reshape(2 * nb, n_rolls).astype(np.float64)
    slot_rows = slot_of.transpose(2, 0, 1).reshape(2 * nb, n_rolls).astype(np.int32)
    reach = np.array([sum(1 << k for k in set(row)) for row in slot_rows.tolist()], dtype=np.int64)
    one = np.zeros(1, dtype=np.int64)
    layer = LayerArrays(
        LayerStates(one, np.zeros((1, max(ix.G, 1)), dtype=np.int64), one),
        Legality(one, one, one - 1, np.zeros((1, n_rolls, 2), np.int64)),
        ScoreRows(point_rows, slot_rows, reach, rows[None], rows[None].copy()),
        TurnShape(1, False, one, one, False, False),
    )
    used = np.array([len(k) for k in distinct], dtype=np.int64)
    return _ClassArrays(layer, SlotArrays(add, inc, used))


def _with_legal(cls: _ClassArrays, legal: LegalTables, lcid: int, vals: np.ndarray) -> _ClassArrays:
    """A score class's arrays with the boxes legal class `lcid` allows (of card row vals[0]'s open boxes)."""
    n_rolls, nb = cls.layer.rows.points.shape[1], vals.shape[1]
    box_bits = np.int64(1) << np.arange(nb, dtype=np.int64)
    per_roll = legal.depends_on_roll(lcid)
    if per_roll:
        ok = np.stack([legal.allowed(np.full(n_rolls, lcid), bool(fr), np.arange(n_rolls)) for fr in (0, 1)])
        ok &= vals[0] == EMPTY
        bits = ok @ box_bits  # [2, rolls]
    else:  # the same boxes for every roll (most cards): one row per first roll or not
        once = legal.simple[lcid] & (vals[0] == EMPTY)
        ok = np.broadcast_to(once[:, None, :], (2, n_rolls, nb))
        bits = (once @ box_bits)[:, None]  # [2, 1]: the step reads no per-roll bits for such a class
    filled = int(sum(1 << b for b in range(nb) if vals[0, b] != EMPTY))
    layer = cls.layer._replace(
        states=cls.layer.states._replace(codes=np.array([filled], dtype=np.int64)),
        legal=Legality(
            bits[0, :1].copy(),
            bits[1, :1].copy(),
            np.array([0 if per_roll else -1], dtype=np.int64),
            np.ascontiguousarray(bits.T[None, :, :]),
        ),
    )
    return cls._replace(layer=layer)


def _card_tables(solution: Solution) -> tuple[CardTables, LayerArrays] | None:
    """The complete scoring tables of the solution's classes (`card_tables`) and their layer of every class:
    made from its search where this process ran one, else the ones kept beside the cached table (read once per
    variant); None where there are none, or where the card kernel cannot read them as they are (interchangeable
    boxes: a card's open boxes are not its canonical class's)."""
    v = solution.variant
    if solution.index.symmetric or not solution.objective.is_mean:
        return None
    memory = memory_of(v)
    got = memory.card_tables
    space = solution.searched
    if got is None or (got[0] is None and space is not None and got[1] != id(space)):
        tables = CardTables.of(space) if space is not None else None
        if tables is None and got is None:
            recalled, memory.recalled = memory.recalled, None
            tables = recalled[0] if recalled is not None else _recalled_card_tables(v, None)
        made = None
        if tables is not None and _fit(tables, solution):  # its layer checked once as the card kernel's argument
            made = (tables, _kernels()[0].pinned(tables.shared_layer(), "card_f8", 2))
        got = memory.card_tables = (made, id(space) if space is not None else None)
    return got[0]


def _fit(tables: CardTables, solution: Solution) -> bool:
    """Whether `tables` index the solution's state coding (every successor a kernel would look up, a class
    code plus an open box's increment, is a code of its index): tables of the same rules always do; this
    keeps a kernel from reading out of bounds."""
    ix = solution.index
    add = tables.slot_arrays.add
    if not len(tables.codes) or add.shape[0] != ix.nb or int(tables.codes[0]) < 0 or int(add.min()) < 0:
        return False
    open_boxes = (tables.codes[:, None] >> np.arange(ix.nb, dtype=np.int64)) & 1 == 0
    furthest = np.where(open_boxes, add.max(axis=1), 0).max(axis=1)
    return bool((tables.codes + furthest < len(ix.arrays.base)).all())


def _recalled_card_tables(v: Variant, warn: Callable[[str], None] | None) -> CardTables | None:
    """The `card_tables` kept beside the variant's cached table (`cache.load_or_solve` keeps them), or None
    (none there, not signed by this user, stale, or not fitting: a bad file is deleted, said through `warn`)."""
    from . import cache

    got = cache.load_arrays(v, card_tables.KIND, warn)
    if got is None:
        return None
    meta, arrays = got
    try:
        if meta.get("layout") != card_tables.LAYOUT:
            raise ValueError("another layout")
        return CardTables.from_arrays(arrays, len(v.box_ids), len(v.all_rolls()))
    except ValueError as exc:
        (warn or (lambda message: None))(f"the kept {card_tables.KIND} do not fit ({exc}); they are not used")
        try:
            cache.arrays_path(v, card_tables.KIND).unlink(missing_ok=True)
        except OSError:
            pass
        return None


def _solved_class(solution: Solution, code: int) -> _ClassArrays | None:
    """The `_ClassArrays` of class `code` in the complete tables (`_card_tables`): their layer of every class
    (checked once as the kernel's argument) and the class's row in it; None where there are no such tables
    or they lack the class."""
    got = _card_tables(solution)
    if got is None:
        return None
    tables, shared = got
    at = tables.position(code)
    return None if at < 0 else _ClassArrays(shared, tables.slot_arrays, at)


def _sorted_distinct(a: np.ndarray) -> np.ndarray:
    """The distinct values of `a`, ascending (np.unique would import numpy.ma, a cost a one-card process can do without)."""
    flat = np.sort(a, axis=None)
    return flat[np.concatenate([[True], flat[1:] != flat[:-1]])]


_BOXES = np.arange(64)  # box positions, for gathering one value per box (`_CardTurn.own`)


class _CardTurn(NamedTuple):
    """One card's turn from the card kernel: the keeps' values at each decision it folded, and the value of
    where each box's scores lead."""

    cls: _ClassArrays
    sv: np.ndarray  # [boxes, banks, slots]: the value of the state (box, slot) leads to, per bank
    keeps: np.ndarray  # [stages, keeps, W]: lane 0, the keeps' values with stages - stage rolls left
    stages: int
    box_ids: tuple[str, ...]

    def own(self, r: int, ff: int, bank: int) -> list[tuple[str, int, float]]:
        """(box, points now, expected points after) of each legal box for roll `r`, after the first
        roll (ff = 1) or a later one, leaving `bank` rolls banked, read off the class's row of its layer as
        the kernel reads it (`advance._advance`); SolverError where one leads nowhere."""
        lay, at = self.cls.layer, self.cls.state
        nb = len(self.box_ids)
        leg, rows = lay.legal, lay.rows
        rd = leg.rd_index.item(at)
        bits = leg.rd_tables.item(rd, r, ff) if rd >= 0 else (leg.first_bits if ff else leg.later_bits).item(at)
        bits &= ~lay.states.codes.item(at) & ((1 << nb) - 1)  # open boxes only
        ctx = lay.states.ctxs.item(at)
        pts = rows.points[rows.point_row[ctx, :, ff], r].tolist()
        slot = rows.slots[rows.slot_row[ctx, :, ff], r]
        after = self.sv[_BOXES[:nb], bank, slot].tolist()  # each box's, open or not: one gather
        out = []
        for b, box in enumerate(self.box_ids):
            if (bits >> b) & 1:
                if after[b] != after[b]:
                    raise SolverError(_UNREACHABLE)
                out.append((box, int(pts[b]), after[b]))
        return out


def _card_turn_cached(solution: Values, card: Card, rolls_left: int, situation: Situation | None) -> _CardTurn | None:
    """The card's turn from the card kernel with at least `rolls_left` rolls left (memoised: the turn's next
    decisions are lookups); None where it does not serve: no compiled kernels, score tables not answering
    yet, a game situation, an estimate of the values (not a `Solution`), a table of another objective than
    the mean (its values are utilities: the numpy path turns them into points)."""
    v = solution.variant
    if situation is not None or not isinstance(solution, Solution) or not solution.objective.is_mean:
        return None
    if not _compiled(v) or not (_tables_answer(v) or _card_tables(solution) is not None):
        return None
    if not _kernels()[1].AVAILABLE:
        return None
    got = _memo_peek(("turn", card), solution)
    if isinstance(got, _CardTurn) and got.stages >= rolls_left:
        return got
    try:
        made = _card_turn(solution, card, rolls_left)
    except Untabulable:
        memory_of(v).untabulable = True
        return None
    if made is not None:  # (else the path it falls back to counts the card)
        memory = memory_of(v)
        memory.asked += 1
        memory.remember((id(solution), "turn", card), (weakref.ref(solution), made))
    return made


def _card_turn(solution: Solution, card: Card, rolls_left: int) -> _CardTurn | None:
    """`card_turn` for `card`: every keep's value at the decisions with rolls_left, rolls_left - 1, ... 1 rolls
    left (the turn's later rolls scored as `_later_cached` scores them), and its successors' values."""
    card_turn = _kernels()[1].card_turn
    v = solution.variant
    code, prog = solution.index.state_of_card(card)
    cls = _solved_class(solution, code)
    if cls is None:
        cls = _class_arrays(v, solution, solution.row_of(card))
    if cls is None:
        return None
    banks = [solution.bank_after(left) for left in range(rolls_left)]
    banks += banks[-1:]  # the fold's top decision (its own roll is scored apart)
    arrays = CardArrays(code, prog[0], np.zeros(len(banks), dtype=np.int64), np.array(banks, dtype=np.int64), cls.state)
    slots = cls.slots
    ix = solution.index
    if ix.symmetric:  # a group's open box fills where its canonical class fills next: its first open box
        nb = len(v.box_ids)
        nxt = int(ix.first_open(np.array(ix.full & ~code, dtype=np.int64)))
        fill = [1 << b for b in range(nb)]
        for group in ix.symmetric:
            at = [x for x in group if (nxt >> x) & 1]
            for b in group:
                fill[b] = 1 << at[0] if at else 0
        shift = np.array(fill, dtype=np.int64) - (np.int64(1) << np.arange(nb, dtype=np.int64))
        slots = SlotArrays(slots.add + shift[:, None], slots.inc, slots.used)
    values = solution.values.reshape(solution.values.shape[0], -1)
    sv, keeps, ok = card_turn(arrays, slots, cls.layer, ix.arrays, solution.graph.arrays, values)
    if not ok:
        raise SolverError(_UNREACHABLE)
    return _CardTurn(cls, sv, keeps, rolls_left, v.box_ids)


def _futures(solution: Values, card: Card, fills: list[tuple[str, int]], bank: int = 0) -> np.ndarray:
    """`Solution.futures`, refusing a successor the solver never reached (the card cannot arise in play)."""
    out = solution.futures(card, fills, bank) if fills else np.zeros(0)
    if np.isnan(out).any():
        raise SolverError(_UNREACHABLE)
    return out


_UNREACHABLE = "this card cannot arise in play under the variant's rules (its state is not reachable)"


def _later_scores(
    solution: Values,
    card: Card,
    bank: int = 0,
    situation: Situation | None = None,
    first: bool = False,
    only: int | None = None,
) -> Scored:
    """Every roll's legal boxes scored after a later roll (`first`: after the turn's first roll), each
    leaving `bank` rolls banked (`only`: that roll's row alone, the others left illegal).

    The first cards of a variant ask the engine roll by roll (no start-up cost: one
    `dicecup advise` asks one card); from the `TABLES_AFTER`-th on, the variant's score
    and legality tables answer (memoised on what the rules read: a one-off cost of about
    a second for Yahtzee, then a new card costs lookups). Rules the tables cannot hold
    always go to the engine. With a `situation`, legality is the engine's, asked per roll.
    """
    v = solution.variant
    if only is None:
        memory_of(v).asked += 1
    if _tables_answer(v):
        try:
            return _later_from_tables(solution, card, bank, situation, first, only)
        except Untabulable:
            memory_of(v).untabulable = True
    return _later_from_engine(solution, card, bank, situation, first, only)


def _tables_answer(v: Variant) -> bool:
    """Whether the score tables answer for `v` now: built already, or this is the `TABLES_AFTER`-th card."""
    memory = memory_of(v)
    return not memory.untabulable and (memory.tables is not None or memory.asked >= TABLES_AFTER)


TABLES_AFTER = 3
#: Score tables kept per variant at most. Each card class the rules tell apart holds a whole table (Triple
#: Yahtzee's bonus and joker read a dozen boxes, so classes keep coming); past this, the engine answers.
MAX_TABLE_BYTES = 256 << 20


def _later_from_tables(
    solution: Values,
    card: Card,
    bank: int,
    situation: Situation | None = None,
    first: bool = False,
    only: int | None = None,
) -> Scored:
    v = solution.variant
    scores, legal, mult = _tables_of(v)
    vals = solution.row_of(card)
    _, shaped, box_scores = _class_of(v, scores, vals)
    asked = np.arange(scores.R) if only is None else np.array([only])  # the rolls scored: all, or the one
    ok = None
    if situation is None or not memory_of(v).situated:
        try:
            ok = legal.allowed(np.repeat(legal.lookup(vals), len(asked)), first, asked)
        except Untabulable:  # legality reads the game around the card (an announcement)
            if situation is None:
                raise
            memory_of(v).situated = True
    if ok is None:
        assert situation is not None
        ok = _legal_in(v, card, [scores.rolls[r] for r in asked.tolist()], situation, first)
    ok &= vals[0] == EMPTY
    fr = int(first)
    rows = slice(None) if only is None else slice(only, only + 1)
    got_scores = box_scores[fr, rows]  # [asked rolls, boxes], legal or not: dense arrays, few numpy calls
    points = _box_points(v, got_scores, shaped[fr, rows], mult)
    after = np.full(ok.shape, -np.inf)
    if ok.any():
        lo = int(got_scores.min())
        span = int(got_scores.max()) - lo + 1
        distinct, which = _distinct((np.arange(len(v.box_ids)) * span + (got_scores - lo))[ok])  # one per (box, score)
        after[ok] = _after_fills(solution, card, bank, distinct // span, distinct % span + lo)[which]
    if only is None:
        return Scored(ok, np.where(ok, points, 0), after)
    out = Scored.empty(solution.graph.n_rolls, len(v.box_ids))
    out.legal[only], out.points[only], out.after[only] = ok[0], np.where(ok[0], points[0], 0), after[0]
    return out


def _box_points(v: Variant, box_scores: np.ndarray, shaped: np.ndarray, mult: np.ndarray) -> np.ndarray:
    """What scoring a box adds (`box_scores` [..., boxes]; `shaped` the score tables' rows [..., boxes, columns]):
    its score times its column's multiplier, plus the score-figure awards."""
    points = box_scores * mult
    for a, bonus in enumerate(v.declared_bonuses):
        if bonus.figure == "score":
            points += shaped[..., 1 + a]
    return points


def _tables_of(v: Variant) -> tuple[ScoreTables, LegalTables, np.ndarray]:
    """The variant's score and legality tables (made empty at first use) and each box's multiplier."""
    memory = memory_of(v)
    got = memory.tables
    if got is None or got[0].variant.hooks is not v.hooks:
        got = memory.tables = (
            ScoreTables(v, [b.id for b in v.declared_bonuses]),
            LegalTables(v),
            np.array([v.multiplier(b) for b in v.box_ids], dtype=np.int64),
        )
    return got


TABLES_KIND = "advice-tables"
TABLES_LAYOUT = 2  # of what `keep_tables` writes: a file of another layout is refused


def _learned(v: Variant) -> tuple[int, int, int]:
    """How much the variant's tables hold (score classes, legal classes, per-roll answers): what grows."""
    got = memory_of(v).tables
    if got is None:
        return (0, 0, 0)
    scores, legal, _ = got
    return len(scores.traced.tables), len(legal.simple), int(legal.known[: legal.n_dep].sum())


def known_scores(v: Variant, card: Card, box: str) -> set[int] | None:
    """Every score `box` can get on `card` (any roll, first roll or not), from the variant's score tables where
    they know the card's class (kept beside the table and recalled, or learned in this process), else from the
    solve's complete tables (`card_tables`, recalled); None where neither knows it (nothing is learned here:
    the caller asks the engine)."""
    memory = memory_of(v)
    got = memory.tables
    if got is not None and got[0].variant.hooks is v.hooks:
        scores = got[0]
        row = np.full(len(v.box_ids), EMPTY, dtype=np.int64)
        for b, score in card.scores.items():
            row[scores.facts.index[b]] = score
        known = scores.known_scores(row, scores.facts.index[box])
        if known is not None:
            return known
    made = memory.card_tables
    if made is not None and made[0] is not None:
        complete = made[0][0]
    else:
        complete = memory.recalled[0] if memory.recalled is not None else None
    if complete is None:
        return None
    coding = memory.coding
    if coding is None:  # what the complete tables are keyed on (no solve needed; none kept where boxes
        coding = memory.coding = ClassCoding(v)  # are interchangeable)
    if len(complete.point_row[0]) != coding.nb:
        return None
    return complete.scores(coding.class_of_card(card), coding.bidx[box])


def recall_tables(v: Variant, warn: Callable[[str], None] | None = None) -> bool:
    """Read the score and legality tables kept beside the variant's cached table (`keep_tables`), so that the
    process's first card needs no engine call; True when they were there and fit. Where they are not,
    the tables are learned from the first card on (no engine-scored first cards): `keep_tables` then keeps
    them. A file that fails its signature, is stale or does not fit is deleted (`learned.recall`)."""
    memory = memory_of(v)
    if memory.card_tables is None:  # read now, to say what is wrong; checked against a solution at use
        memory.recalled = (_recalled_card_tables(v, warn),)
    scores, legal, _ = _tables_of(v)  # made: the tables answer from the first card (`_tables_answer`)
    if len(scores.traced.tables) or len(legal.simple):
        return False

    def restore(meta: dict, arrays: dict) -> None:
        try:
            scores.restore(meta, {k[2:]: a for k, a in arrays.items() if k.startswith("s_")})
            legal.restore({k[2:]: a for k, a in arrays.items() if k.startswith("l_")})
        except Exception:
            memory.tables = None  # half restored: start empty
            raise

    if not learned.recall(v, TABLES_KIND, TABLES_LAYOUT, restore, warn):
        return False
    memory.kept = _learned(v)
    return True


def keep_tables(v: Variant, warn: Callable[[str], None] | None = None) -> None:
    """Keep the variant's score and legality tables beside its cached table (signed as it is) when they
    learned something since they were read or kept; nothing where the tables do not answer for it."""
    memory = memory_of(v)
    if memory.tables is None or memory.untabulable or _learned(v) == memory.kept:
        return
    scores, legal, _ = memory.tables
    meta, score_arrays = scores.state()
    arrays = {f"s_{k}": a for k, a in score_arrays.items()} | {f"l_{k}": a for k, a in legal.state().items()}
    learned.keep(v, TABLES_KIND, TABLES_LAYOUT, meta, arrays, warn)
    memory.kept = _learned(v)


def _class_of(v: Variant, scores: ScoreTables, vals: np.ndarray) -> tuple[int, np.ndarray, np.ndarray]:
    """`ScoreTables.card` of the card row vals[0]; Untabulable where the tables cannot answer for `v`."""
    got = scores.card(vals[0])
    if scores.nbytes > MAX_TABLE_BYTES:  # the rules read so much of the card that classes keep coming
        memory_of(v).tables = None
        raise Untabulable(f"the score tables grew past {MAX_TABLE_BYTES >> 20} MiB; the engine answers from here on")
    if len(scores.award_ids) > len(v.declared_bonuses):
        raise Untabulable("a rule awards an undeclared id, whose figure the tables do not know: the engine values it")
    return got


def _distinct(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(the distinct values of small non-negative ints `keys`, ascending; each key's place among them)."""
    size = int(keys.max()) + 1
    if size > 1 << 20:
        distinct, which = np.unique(keys, return_inverse=True)
        return distinct, which.reshape(-1)
    seen = np.zeros(size, dtype=bool)
    seen[keys] = True
    return np.flatnonzero(seen), (np.cumsum(seen) - 1)[keys]


def _after_fills(solution: Values, card: Card, bank: int, boxes: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """`_futures_at` of fills (box positions, scores; sorted, distinct) on `card`, memoised per card and bank: a
    decision's own roll, scored after the turn's later rolls were, asks mostly the fills they asked."""
    wanted = (boxes.astype(np.int64) << 32) | (scores.astype(np.int64) + (1 << 31))  # box-major, then score
    memo = _memo_peek(("after", card, bank), solution)
    if memo is None:
        values = _futures_at(solution, card, boxes, scores, bank)
        _memo(("after", card, bank), solution, lambda: (wanted, values))
        return values
    keys, values = memo
    at = np.minimum(np.searchsorted(keys, wanted), len(keys) - 1)
    new = keys[at] != wanted
    if new.any():  # a few fills more: their successors looked up, the memo kept sorted
        keys = np.concatenate([keys, wanted[new]])
        values = np.concatenate([values, _futures_at(solution, card, boxes[new], scores[new], bank)])
        order = np.argsort(keys, kind="stable")
        keys, values = keys[order], values[order]
        memory_of(solution.variant).remember(
            (id(solution), "after", card, bank), (weakref.ref(solution), (keys, values))
        )
        at = np.searchsorted(keys, wanted)
    return values[at]


def _futures_at(solution: Values, card: Card, boxes: np.ndarray, scores: np.ndarray, bank: int) -> np.ndarray:
    """`_futures` of the fills (box position, score) given as arrays (a `Solution` takes them as they are)."""
    at = getattr(solution, "futures_at", None)
    if at is None:
        ids = solution.variant.box_ids
        return _futures(
            solution, card, [(ids[b], s) for b, s in zip(boxes.tolist(), scores.tolist(), strict=True)], bank
        )
    out = at(card, boxes, scores, bank)
    if np.isnan(out).any():
        raise SolverError(_UNREACHABLE)
    return out


def _legal_in(v: Variant, card: Card, rolls: Sequence[Roll], situation: Situation, first: bool) -> np.ndarray:
    """[rolls, boxes] legal boxes from the engine with the game around the card: one call stands for every
    roll when the rules were not seen to look at the dice (neither the roll nor a declared pattern)."""
    index = {b: i for i, b in enumerate(v.box_ids)}
    ok = np.zeros((len(rolls), len(v.box_ids)), dtype=bool)
    with tracing() as reads:
        legal = v.legal_boxes(card, traced_roll(rolls[0]), first, situation)
    if not (reads.roll or reads.patterns):
        ok[:, [index[b] for b in legal]] = True
        return ok
    for r, roll in enumerate(rolls):
        ok[r, [index[b] for b in v.legal_boxes(card, roll, first, situation)]] = True
    return ok


def _later_from_engine(
    solution: Values,
    card: Card,
    bank: int,
    situation: Situation | None = None,
    first: bool = False,
    only: int | None = None,
) -> Scored:
    """`Scored` from the engine, roll by roll (`only`: that roll's row alone, the others left illegal)."""
    v = solution.variant
    index = {b: i for i, b in enumerate(v.box_ids)}
    scored: list[tuple[int, str, int, int]] = []  # (roll, box, score, points)
    rolls = v.all_rolls()
    for i, r in enumerate(rolls) if only is None else [(only, rolls[only])]:
        for box in v.legal_boxes(card, r, first, situation):
            res = v.score(card, box, r, first, situation)
            scored.append((i, box, res.score, res.points))
    fills = sorted({(box, score) for _, box, score, _ in scored})
    after = dict(zip(fills, _futures(solution, card, fills, bank).tolist(), strict=False))
    out = Scored.empty(solution.graph.n_rolls, len(v.box_ids))
    for i, box, score, points in scored:
        b = index[box]
        out.legal[i, b], out.points[i, b], out.after[i, b] = True, points, after[(box, score)]
    return out


def turn_start_value(solution: Values, card: Card) -> float:
    """Expected points still to come from the start of a turn on `card` (nothing banked), this turn played
    best against `solution` as the value of what follows it: one Bellman step over its values."""
    v = solution.variant
    v.check_card(card)
    first = _later_cached(solution, card, 0, None, True)
    later = _later_cached(solution, card, 0) if v.rolls > 1 else first
    return float(_objective(solution).shown(turn_value(solution.graph, first, later, v.rolls))[0])


def advise_state(solution: Solution, state: GameState) -> list[Option]:
    """`advise` for a game state at a decision (dice on the table)."""
    state.require_decision()
    return advise(solution, state.card, state.dice, state.rolls_left, state.first_roll)


def best_action(solution: Solution, state: GameState) -> Action:
    """The optimal action at a decision state (ties: scoring first, then the first listed)."""
    return SolverPolicy.of(solution).choose(state)


POLICIES_KIND = "solver-policies"
POLICIES_KEPT = 8
"""Policies (one per solution) an engine keeps at most; the least recently used goes."""


class SolverPolicy:
    """Optimal play from the solver's rule tables: one turn table per state, memoised (LRU)."""

    def __init__(self, solution: Solution, memo: int = 4096) -> None:
        self.solution = solution
        self.graph = solution.graph
        self.memo: OrderedDict[tuple, TurnTables] = OrderedDict()
        self.limit = memo

    @classmethod
    def of(cls, solution: Solution) -> SolverPolicy:
        """The policy of `solution`, kept by the engine that compiled its variant (bounded, `POLICIES_KEPT`)."""
        key = (solution.variant.fingerprint, solution.objective.id)
        return store_of(solution.variant).get(
            POLICIES_KIND, key, lambda: cls(solution), keep=POLICIES_KEPT, valid=lambda p: p.solution is solution
        )

    def _state(self, card: Card) -> tuple[int, np.ndarray]:
        return self.solution.index.state_of_card(card)

    def _tables(self, code: int, prog: np.ndarray, bank: int) -> TurnTables:
        key = (code, tuple(prog[0].tolist()), bank)
        got = self.memo.get(key)
        if got is not None:
            self.memo.move_to_end(key)
            return got
        ((_, _, _, got),) = self.solution.turn_tables(np.array([code], dtype=np.int64), prog, bank)
        self.memo[key] = got
        if len(self.memo) > self.limit:
            self.memo.popitem(last=False)
        return got

    def choose(self, state: GameState) -> Action:
        state.require_decision()
        v = self.solution.variant
        card = state.card
        code, prog = self._state(card)
        roll = state.roll_now
        assert roll is not None  # dice on the table at a decision
        first = state.first_roll
        best_box, best_val = None, -np.inf
        legal = v.legal_boxes(card, roll, first)
        results = [v.score(card, box, roll, first) for box in legal]
        fills = [(box, res.score) for box, res in zip(legal, results, strict=False)]
        after = self.solution.futures(card, fills, self.solution.bank_after(state.rolls_left))
        for box, res, fut in zip(legal, results, after, strict=False):
            val = res.points + fut
            if val > best_val:
                best_box, best_val = box, val
        if state.rolls_left > 0:
            bank = state.rolls_used + state.rolls_left - v.rolls  # rolls this turn took from the bank
            if not 0 <= bank < self.solution.banks:  # not a turn of the variant's: ask the engine
                return _best(advise_state(self.solution, state))
            keeps = self._tables(code, prog, bank)[state.rolls_used - 1][1]
            assert keeps is not None  # a decision with rolls left has keeps
            best_keep, keep_val = None, -np.inf
            for k in sub_multisets(state.dice):
                if len(k) < len(state.dice):
                    val = keeps[self.graph.index[k], 0]
                    if val > keep_val + 1e-9:
                        best_keep, keep_val = k, val
            if best_keep is not None and keep_val > best_val + 1e-9:
                return Keep(best_keep)
        if best_box is None:
            raise DicecupError("no legal box to score")
        return Score(best_box)


def _best(options: list[Option]) -> Action:
    return options[0].action


class OptimalBot:
    """Plays the solver's optimal solitaire strategy (solves or loads the variant on first use); with a risk
    `objective`, the strategy that maximises it (`bot:risk:THETA`)."""

    name = "optimal"

    def __init__(self, rng: random.Random | None = None, objective: Objective = MEAN) -> None:
        self.rng = rng
        self.objective = objective
        if not objective.is_mean:
            self.name = objective.id
        self._policies: dict[str, SolverPolicy] = {}

    def policy(self, v: Variant, progress: Reporter | None = None) -> SolverPolicy:
        """The policy of `v` (loaded or solved once per variant and engine, telling `progress`)."""
        policy = self._policies.get(v.fingerprint)
        if policy is None or policy.solution.variant.hooks is not v.hooks:  # same code, another engine
            from .cache import load_or_solve

            solution, _ = load_or_solve(v, objective=self.objective, progress=progress)
            policy = self._policies[v.fingerprint] = SolverPolicy.of(solution)
        return policy

    def prepare(self, variant: Variant, progress: Reporter | None = None) -> None:
        """Load or solve the table now (a game asks before it starts), telling `progress`."""
        self.policy(variant, progress)

    def choose(self, state: GameState) -> Action:
        return self.policy(state.variant).choose(state)
