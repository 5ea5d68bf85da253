"""A played game reviewed move by move against the exact solver: what each decision cost in expected points.

A decision's loss is the best option's expected final score minus the chosen one's: 0 for an optimal move,
and otherwise the points a player gives away on average. Values are those of solitaire play on the player's
own card (the solver's game), so a match of several players is reviewed one card at a time.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from attrs import frozen

from ..errors import DicecupError
from ..game.actions import Action, Keep, RollDice, Score
from ..language.model import Variant
from ..locales import NP_, Phrase
from ..progress import Reporter, task
from .advice import Option, advise_state, option_json
from .errors import SolverError
from .explain import Explanation, explain_options
from .rules import check_solvable
from .solve import Solution

if TYPE_CHECKING:
    from ..game.state import GameState

__all__ = [
    "Decision",
    "Review",
    "Reviewer",
    "ReviewNeedsSolver",
    "WORST",
    "check_reviewable",
    "decision_at",
    "decision_json",
    "review",
    "review_json",
]

#: Losses below this are rounding, not a mistake (the values are sums of thousands of products).
TOLERANCE = 1e-9
#: How many of the costliest moves a review singles out.
WORST = 3


class ReviewNeedsSolver(SolverError):
    """A review asked of a variant the exact solver does not take: a review compares moves with its table."""


def check_reviewable(variant: Variant) -> None:
    """Refuse, before any work, a variant whose games cannot be reviewed (the exact solver refuses it), saying why."""
    try:
        check_solvable(variant)
    except SolverError as exc:
        raise needs_solver(variant, exc) from None


def needs_solver(variant: Variant, exc: DicecupError) -> ReviewNeedsSolver:
    """The refusal of a review of `variant`, given the solver's own refusal `exc` (its reason)."""
    return ReviewNeedsSolver(
        f"a review of a {variant.id} game needs the exact solver's table of every position's value, "
        f"and the solver does not take {variant.id}: {exc}"
    )


@frozen
class Decision:
    """One decision of the game: where it was taken, what was chosen, what was best, and the difference."""

    move: int  # its place in the game's history (GameState.history), from 0
    player: int  # the seat, from 0
    name: str  # the player's name
    round: int  # the game of the match, from 1
    turn: int  # the player's turn in that game, from 1
    dice: tuple[int, ...]  # the dice on the table, sorted
    rolls_left: int  # rolls still allowed this turn (banked ones included)
    chosen: Option  # the move made, with its expected final score
    best: Option  # the advisor's best move at that position
    explanation: Explanation | None = None  # why the best move is best (`solver.explain`)

    @property
    def loss(self) -> float:
        """Expected points given away by this move against the best (0 for an optimal move)."""
        loss = self.best.value - self.chosen.value
        return 0.0 if loss < TOLERANCE else loss

    @property
    def expected_before(self) -> float:
        """The player's expected final score at this decision, played optimally from here."""
        return self.best.value

    @property
    def expected_after(self) -> float:
        """The player's expected final score once this move is made, played optimally afterwards."""
        return self.chosen.value

    @property
    def optimal(self) -> bool:
        return self.loss == 0.0


@frozen
class Review:
    """Every decision of a game (in play order) with its loss, and the sums and rankings made of them."""

    variant: Variant
    players: tuple[str, ...]
    decisions: tuple[Decision, ...]
    start: float  # the expected final score of a game's start under optimal play (the same for every card)
    over: bool  # whether the game reviewed is finished (else: reviewed up to its last move)

    def total_loss(self, player: int) -> float:
        """The expected points seat `player` gave away over the whole match."""
        return sum(d.loss for d in self.decisions if d.player == player)

    def totals(self) -> dict[str, float]:
        """Every player's total loss, by name, in seat order."""
        return {name: self.total_loss(i) for i, name in enumerate(self.players)}

    def of(self, player: int) -> tuple[Decision, ...]:
        """Seat `player`'s decisions, in order."""
        return tuple(d for d in self.decisions if d.player == player)

    def worst(self, n: int = 3) -> tuple[Decision, ...]:
        """The `n` costliest moves, costliest first (earlier first on a tie); optimal moves are left out."""
        lost = [d for d in self.decisions if d.loss > 0]
        return tuple(sorted(lost, key=lambda d: -d.loss)[:n])


class Reviewer:
    """Values each decision as a game's moves are replayed (`visit`, a `replay` visitor), then gives the Review:
    a front end that replays a save anyway reviews it in the same pass."""

    def __init__(self, solution: Solution, variant: Variant) -> None:
        if not isinstance(solution, Solution):  # an estimate (bot strong's) would make its own errors look like losses
            raise ReviewNeedsSolver(
                "a review needs the exact solver's Solution (dicecup.solver.load_or_solve), "
                f"got {type(solution).__name__}"
            )
        if solution.variant.fingerprint != variant.fingerprint:
            raise DicecupError(
                f"the solution is of {solution.variant.id}, the game of {variant.id} (or of other rules under that "
                "id): review it against its own variant's solution"
            )
        check_reviewable(variant)
        self.solution = solution
        self.decisions: list[Decision] = []

    def visit(self, state: GameState, move: Action, index: int) -> None:
        """Value `move`, the game's move `index`, made at `state` (a roll is no decision)."""
        if not isinstance(move, RollDice):
            self.decisions.append(decision_at(self.solution, state, move, index))

    def result(self, final: GameState) -> Review:
        """The review of the game that ended (or stands) at `final`."""
        v = final.variant
        return Review(v, final.players, tuple(self.decisions), self.solution.expected_score, final.over)


def review(solution: Solution, state: GameState, progress: Reporter | None = None) -> Review:
    """Replay `state`'s moves and value every decision with the advisor (`advise_state`) against `solution`
    (`progress` hears of the moves replayed). Every roll is in the history as a chance move, so each decision
    is met again with its own dice.

    >>> from dicecup import Engine, GameState
    >>> from dicecup.solver import load_or_solve, review
    >>> state = GameState.new(Engine().variant("yahtzee"), 1).roll(dice=[6, 6, 6, 6, 6]).score("chance")
    >>> solution, _ = load_or_solve(state.variant)
    >>> (move,) = review(solution, state).decisions  # 30 points in chance, where the yahtzee box gave 50
    >>> move.best.label, move.loss > 20
    ('score yahtzee', True)
    """
    from ..game.saving import replay
    from ..game.state import GameState  # (here: importing the solver, as `advise` does, needs no game state)

    if not isinstance(state, GameState):
        raise DicecupError(f"review takes a GameState, got {type(state).__name__}")
    reviewer = Reviewer(solution, state.variant)
    start = GameState.new(state.variant, list(state.players), state.rounds - state.replays)
    n = len(state.history)
    label = Phrase(NP_("reviewing {count} move", "reviewing {count} moves"), n=n, count=f"{n:,}")
    with task(progress, label, n, "moves") as told:

        def visit(now: GameState, move: Action, index: int) -> None:
            reviewer.visit(now, move, index)
            told.advance()

        final = replay(start, state.history, lambda i: f"move {i}", visit)
    if final != state:
        raise DicecupError("the state's moves do not lead to it (it was changed without a move); nothing to review")
    return reviewer.result(state)


def decision_json(d: Decision) -> dict[str, Any]:
    """One reviewed decision as JSON-ready data (`dicecup review --json`'s, the server's review)."""
    return {
        "move": d.move,
        "player": d.name,
        "seat": d.player,
        "round": d.round,
        "turn": d.turn,
        "dice": list(d.dice),
        "rolls_left": d.rolls_left,
        "played": option_json(d.chosen),
        "best": option_json(d.best),
        "loss": d.loss,
        "expected_before": d.expected_before,
        "expected_after": d.expected_after,
        **({"explanation": d.explanation.to_json()} if d.explanation is not None else {}),
    }


def review_json(result: Review, kinds: Sequence[str], scores: Sequence[int]) -> dict[str, Any]:
    """The review as JSON-ready data (its schema: the CLI's review.json): `kinds` is who played each seat
    (`human`, `bot:greedy`), `scores` each seat's match total."""
    v = result.variant
    players = []
    for i, (name, kind) in enumerate(zip(result.players, kinds, strict=True)):
        mine = result.of(i)
        players.append(
            {
                "name": name,
                "kind": kind,
                "decisions": len(mine),
                "optimal": sum(d.optimal for d in mine),
                "total_loss": result.total_loss(i),
                "score": scores[i],
            }
        )
    return {
        "variant": v.id,
        "options": dict(v.options),
        "over": result.over,
        "start_expected_score": result.start,
        "players": players,
        "decisions": [decision_json(d) for d in result.decisions],
        "worst": [decision_json(d) for d in result.worst(WORST)],
        "notes": list(v.solitaire_notes()),
    }


def decision_at(solution: Solution, state: GameState, move: Action, index: int) -> Decision:
    """The decision `move` taken at `state`, valued against every option the advisor lists there."""
    if not isinstance(move, Keep | Score):
        raise SolverError(f"move {index} ({move!r}) is a rule's own action, which the solver does not value")
    options = advise_state(solution, state)
    chosen = next((o for o in options if o.action == move), None)
    if chosen is None:  # the rules allowed it, so the solver's model of them must list it
        raise SolverError(f"move {index} ({move!r}) is not among the solver's options at that position")
    return Decision(
        move=index,
        player=state.current,
        name=state.player,
        round=state.round,
        turn=state.turn,
        dice=tuple(sorted(state.dice)),
        rolls_left=state.rolls_left,
        chosen=chosen,
        best=options[0],
        explanation=explain_options(
            state.variant, state.card, state.dice, state.rolls_left, options, solution.graph, state.first_roll
        ),
    )
