"""Training positions and their grades: decisions met in real play, drawn more often where players lose points.

A position comes from games walked by a *plausible player*: at each decision it picks an option with a
probability falling off with the points that option gives up (a softmax of the options' expected final scores
at `TEMPERATURE` points). A position's weight is that player's expected loss there, plus `FLOOR`, so clear
positions still come up now and then, and close calls where a good player still errs come up most; a drill's
`importance` undoes that favour when losses are averaged into what a player loses in real play. A move is
graded exactly as a review values it (`review.decision_at`), so a trainer's grade is the review's loss. The
daily puzzle is drawn the same way from a seed made of the variant's rules and the date: everyone with the same
rules gets the same puzzle on the same day.
"""

from __future__ import annotations

import datetime
import hashlib
import math
import random
from collections.abc import Sequence
from typing import TYPE_CHECKING

from attrs import evolve, frozen

from ..errors import DicecupError
from ..game.actions import Action, Keep, Score
from .advice import Option, advise_state
from .policy import SolverPolicy
from .review import Decision, decision_at
from .solve import Solution

if TYPE_CHECKING:
    from ..game.state import GameState

__all__ = ["Drill", "Drills", "FLOOR", "TEMPERATURE", "daily_seed", "expected_slip", "grade"]

#: The plausible player's spread, in expected final points: an option 2 points worse is e^-1 as likely as the best.
TEMPERATURE = 2.0
#: Added to every position's weight, so that positions with nothing to lose are drawn now and then too.
FLOOR = 0.05
#: Games walked for a session's drills (a few hundred decisions in Yahtzee).
SESSION_GAMES = 8
#: Most games walked for one set of drills (each game gives a few dozen decisions).
MOST_GAMES = 1_000


@frozen
class Drill:
    """One training position: the game as it stands at a decision, its options best first, and how much a
    plausible player is expected to lose there (its weight when drills are drawn)."""

    state: GameState
    options: tuple[Option, ...]
    slip: float
    importance: float = 1.0  # the pool's mean weight over this one's: undoes the favour of the draw in averages

    @property
    def best(self) -> Option:
        return self.options[0]


def expected_slip(options: Sequence[Option], temperature: float = TEMPERATURE) -> float:
    """The plausible player's expected loss among `options` (best first): each picked with weight
    exp(-loss / temperature)."""
    best = options[0].value
    losses = [best - o.value for o in options]
    weights = [math.exp(-x / temperature) for x in losses]
    return sum(w * x for w, x in zip(weights, losses, strict=True)) / sum(weights)


def _pick(options: Sequence[Option], rng: random.Random) -> Action:
    """An option drawn as the plausible player draws it."""
    best = options[0].value
    weights = [math.exp(-(best - o.value) / TEMPERATURE) for o in options]
    return rng.choices([o.action for o in options], weights)[0]


class Drills:
    """Positions of `solution`'s variant met by the plausible player in games walked from `seed`
    (the same seed, the same positions), drawn by weight with `draw`."""

    def __init__(self, solution: Solution, seed: int, games: int = SESSION_GAMES) -> None:
        if not isinstance(solution, Solution):
            raise DicecupError(f"drills need the exact solver's Solution, got {type(solution).__name__}")
        if not 1 <= games <= MOST_GAMES:
            raise DicecupError(f"drills are drawn from 1 to {MOST_GAMES:,} games, got {games}")
        self.solution = solution
        self.seed = seed
        self.rng = random.Random(seed)
        self.pool: list[Drill] = []
        self.decisions = 0  # decisions in the games walked (per game: `per_game`)
        self.games = games
        policy = SolverPolicy.of(solution)
        for _ in range(games):
            self._walk(policy)
        mean = sum(d.slip + FLOOR for d in self.pool) / len(self.pool)
        self.pool = [evolve(d, importance=mean / (d.slip + FLOOR)) for d in self.pool]

    @property
    def per_game(self) -> float:
        """Decisions in a game of this variant, as the games walked had them."""
        return self.decisions / self.games

    def _walk(self, policy: SolverPolicy) -> None:
        """One game by the plausible player; every decision the advisor values joins the pool."""
        from ..game.state import GameState

        state = GameState.new(self.solution.variant, 1)
        while not state.over:
            if state.is_chance:
                state = state.roll(self.rng)
                continue
            if state.rule_actions():  # a rule's own action is open (an announcement): the solver's move
                state = state.apply(policy.choose(state))
                continue
            options = tuple(advise_state(self.solution, state))
            self.decisions += 1
            self.pool.append(Drill(state, options, expected_slip(options)))
            state = state.apply(_pick(options, self.rng))

    def draw(self) -> Drill:
        """A position, drawn with probability in proportion to its slip plus `FLOOR`."""
        return self.rng.choices(self.pool, [d.slip + FLOOR for d in self.pool])[0]

    def pick(self, k: int) -> Drill:
        """The `k`th drill of this seed, drawn as `draw` draws but from its own stream: the same (seed, k), the
        same drill, whatever was drawn before (a server answers each without keeping a session)."""
        rng = random.Random(f"{self.seed}:{k}")
        return rng.choices(self.pool, [d.slip + FLOOR for d in self.pool])[0]

    def hardest(self) -> Drill:
        """The position where the plausible player loses most (the first such on a tie)."""
        return max(self.pool, key=lambda d: d.slip)


def grade(solution: Solution, state: GameState, move: Action) -> Decision:
    """`move` at `state` valued as a review values it: its loss is the review's loss for the same move."""
    if not isinstance(move, Keep | Score):
        raise DicecupError(f"a trainer grades keeps and scores, got {type(move).__name__}")
    return decision_at(solution, state, move, len(state.history))


def daily_seed(rules: str, day: datetime.date) -> int:
    """The seed of `day`'s puzzle for the rules with fingerprint `rules`: the same for everyone on that date."""
    digest = hashlib.sha256(f"dicecup daily puzzle\0{rules}\0{day.isoformat()}".encode()).digest()
    return int.from_bytes(digest[:8], "big")
