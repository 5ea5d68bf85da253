"""Why a move is best: what it aims at, what the next moves give up, what the card keeps open, how clear it is.

An `Explanation` is read off an advisor's own ranking (`advice.Option`: the exact solver's, or bot strong's
estimate beyond it) and the chances `odds` computes; its `text` (`explain_text`) says the same figures in
the language spoken (`locales`), so every number in it is one of the structure's.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from attrs import frozen

from ..errors import DicecupError
from ..game.actions import Keep, Score
from ..game.words import action_text, variant_box_name
from ..language.card import Card
from ..language.model import Variant
from ..numeric.dice import DiceGraph, graph_of
from ..numeric.reference import fold
from .advice import Option, advise
from .advice_scoring import Values
from .explain_text import Aim, Alternative, Condition, Outlook, Stage, explain_text
from .odds import meets_table

if TYPE_CHECKING:
    from ..game.state import GameState

__all__ = [
    "LABELS",
    "TOSS_UP",
    "MAX_AIMS",
    "MAX_ALTERNATIVES",
    "Aim",
    "Alternative",
    "Condition",
    "Explanation",
    "Outlook",
    "Stage",
    "explain",
    "explain_options",
    "explain_state",
    "label_of",
]

#: How clear a decision is, from the gap in expected final points between the best and the second-best
#: option: the first label whose threshold the gap reaches; below them all, "toss-up". A lone option is clear.
LABELS: tuple[tuple[str, float], ...] = (("clear", 2.0), ("solid", 0.5), ("close", 0.1))
TOSS_UP = "toss-up"
#: The alternatives an explanation weighs: the next best moves (and the best box to score now, after a keep).
MAX_ALTERNATIVES = 3
#: The boxes a keep is said to aim at, at most.
MAX_AIMS = 4
#: Chances this close are the same (sums of products of probabilities).
SAME = 1e-9


@frozen
class Explanation:
    """One decision explained: `label` (`LABELS`) from `gap`, the `best` move and its `aims`, the
    `alternatives` (least given up first), the `outlook`, and all of it as `text`."""

    label: str
    gap: float | None  # best minus second-best expected final score; None with one option
    best: Alternative
    aims: tuple[Aim, ...]
    alternatives: tuple[Alternative, ...]
    outlook: Outlook
    text: str

    def to_json(self) -> dict[str, Any]:
        """JSON-ready data (the CLI's, the review's, the server's hint)."""
        return {
            "label": self.label,
            "gap": self.gap,
            "best": _move_json(self.best),
            "aims": [{"box": a.box, "name": a.name, "chance": a.chance, "points": a.points} for a in self.aims],
            "alternatives": [_move_json(a) for a in self.alternatives],
            "open": {
                "boxes": self.outlook.open_boxes,
                "progress": [{"id": i, "cell": c, "line": line} for i, c, line in self.outlook.progress],
                "conditions": [
                    {"box": c.box, "name": c.name, "value": c.value, "state": c.state} for c in self.outlook.conditions
                ],
                "stage": None
                if self.outlook.stage is None
                else {
                    "number": self.outlook.stage.number,
                    "open": self.outlook.stage.open,
                    "later": self.outlook.stage.later,
                },
            },
            "text": self.text,
        }


def _move_json(a: Alternative) -> dict[str, Any]:
    what: dict[str, Any] = (
        {"action": "score", "box": a.move.box, "points": a.points}
        if isinstance(a.move, Score)
        else {"action": "keep", "keep": list(a.move.dice)}
    )
    return {**what, "words": a.words, "expected_score": a.value, "loss": a.loss}


def label_of(gap: float | None) -> str:
    """The label of a decision whose best option leads the second by `gap` expected points (None: one option)."""
    if gap is None:
        return LABELS[0][0]
    return next((name for name, at in LABELS if gap >= at), TOSS_UP)


def explain(
    values: Values,
    card: Card,
    dice: Sequence[int],
    rolls_left: int,
    first_roll: bool | None = None,
    graph: DiceGraph | None = None,
) -> Explanation:
    """The decision `advise` ranks (the same arguments) explained from its own values.

    >>> from dicecup import Engine, Card
    >>> from dicecup.solver import load_or_solve, explain
    >>> solution, _ = load_or_solve(Engine().variant("yacht"))
    >>> explain(solution, Card(), (6, 6, 6, 6, 6), 2).best.words
    'score Yacht'
    """
    options = advise(values, card, dice, rolls_left, first_roll)
    return explain_options(values.variant, card, dice, rolls_left, options, graph or values.graph, first_roll)


def explain_state(values: Values, state: GameState) -> Explanation:
    """`explain` for a game state at a decision (dice on the table)."""
    state.require_decision()
    return explain(values, state.card, state.dice, state.rolls_left, state.first_roll)


def explain_options(
    variant: Variant,
    card: Card,
    dice: Sequence[int],
    rolls_left: int,
    options: Sequence[Option],
    graph: DiceGraph | None = None,
    first_roll: bool | None = None,
) -> Explanation:
    """The explanation of a decision ranked already: `options` best first, valued in expected final points
    (the mean's; a risk or target ranking is not in points). `first_roll` as in `advise`."""
    if not options:
        raise DicecupError("no move to explain: the advisor listed no option")
    ranked = sorted(options, key=lambda o: -o.value)
    top = ranked[0]
    gap = top.value - ranked[1].value if len(ranked) > 1 else None
    best = _alternative(top, top.value, variant)
    alternatives = tuple(_alternative(o, top.value, variant) for o in _serious(ranked))
    g = graph if graph is not None else graph_of(variant)
    aims = _aims(variant, card, tuple(sorted(dice)), rolls_left, top, g)
    first = rolls_left == variant.rolls - 1 if first_roll is None else first_roll
    after = _after(variant, card, tuple(dice), top, first)
    outlook = _outlook(variant, after)
    label = label_of(gap)
    text = explain_text(label, best, aims, alternatives, outlook, rolls_left)
    return Explanation(label, gap, best, aims, alternatives, outlook, text)


def _alternative(o: Option, best: float, variant: Variant) -> Alternative:
    return Alternative(o.action, action_text(o.action, variant), o.value, max(0.0, best - o.value), o.points)


def _serious(ranked: Sequence[Option]) -> list[Option]:
    """The next `MAX_ALTERNATIVES` moves after the best, and after a best keep the best box to score now."""
    out = list(ranked[1 : 1 + MAX_ALTERNATIVES])
    if isinstance(ranked[0].action, Keep) and not any(isinstance(o.action, Score) for o in out):
        score = next((o for o in ranked[1:] if isinstance(o.action, Score)), None)
        if score is not None:
            out.append(score)
    return out


def _keep_table(variant: Variant, graph: DiceGraph, rolls_left: int) -> np.ndarray:
    """(keeps, rows): every keep's chance of making each row by the end of the turn with `rolls_left` rolls, each
    later keep chosen for that row alone (`odds`' fold: a row's best keep gives its `turn` chance)."""
    meets = meets_table(variant)
    keeps = fold(graph, [meets] * (rolls_left + 1))[rolls_left][1]
    assert keeps is not None  # a decision with rolls left has keeps
    return keeps


def _aims(
    variant: Variant, card: Card, dice: tuple[int, ...], rolls_left: int, top: Option, graph: DiceGraph
) -> tuple[Aim, ...]:
    """A box scored now: that box (chance 1 where the dice make it, else 0). A keep: the open rows it plays for,
    likeliest first: rows every kept die helps (a row the kept dice make whatever is rerolled is not played for)
    and no other keep of these dice makes likelier (where there are none, the rows every kept die helps); rows
    every roll makes left out."""
    meets = meets_table(variant)
    at = graph.index[dice] - int(graph.roll_rows[0])
    if isinstance(top.action, Score):
        b = variant.box(top.action.box)
        row = variant.rows.index(b.row or b.id)
        return (Aim(b.id, variant_box_name(variant, b.id), float(meets[at, row]), top.points),)
    keeps = _keep_table(variant, graph, rolls_left)
    kept = top.action.dice
    mine = keeps[graph.index[kept]]
    most = keeps[[graph.index[k] for k in graph.proper_keeps(dice)[0]]].max(axis=0)
    fewer = [keeps[graph.index[kept[:i] + kept[i + 1 :]]] for i in range(len(kept)) if i == 0 or kept[i] != kept[i - 1]]
    open_rows = {variant.box(b).row or b for b in variant.open_boxes(card)}
    helped = [
        j
        for j, r in enumerate(variant.rows)
        if r in open_rows and meets[:, j].min() < 1.0 and mine[j] > 0 and all(mine[j] > f[j] + SAME for f in fewer)
    ]
    aimed = [j for j in helped if mine[j] >= most[j] - SAME] or helped  # (a keep that hedges: what it helps)
    aimed.sort(key=lambda j: -mine[j])
    return tuple(Aim(variant.rows[j], variant.row(variant.rows[j]).name, float(mine[j])) for j in aimed[:MAX_AIMS])


def _after(variant: Variant, card: Card, dice: tuple[int, ...], top: Option, first: bool) -> Card:
    """The card once the best move is made (a keep leaves it as it is)."""
    if not isinstance(top.action, Score):
        return card
    result = variant.score(card, top.action.box, variant.roll_of(dice), first)
    return card.fill(top.action.box, result.score, result.awards)


def _outlook(variant: Variant, card: Card) -> Outlook:
    """What `card` keeps open: see `Outlook`."""
    open_boxes = variant.open_boxes(card) if len(card.scores) < len(variant.boxes) else ()
    progress = tuple((p.id, p.cell, p.line) for p in variant.progress(card) if p.line or p.cell)
    conditions = []
    for flag in variant.state_flags():
        held = card.scores.get(flag.box)
        state = "open" if held is None else "kept" if held == flag.value else "lost"
        conditions.append(Condition(flag.box, variant_box_name(variant, flag.box), flag.value, state))
    stages = sorted({b.stage for b in variant.boxes})
    stage = None
    if len(stages) > 1 and open_boxes:
        now = min(variant.box(b).stage for b in open_boxes)
        count = sum(1 for b in open_boxes if variant.box(b).stage == now)
        stage = Stage(now, count, now < stages[-1])
    return Outlook(len(open_boxes), progress, tuple(conditions), stage)
