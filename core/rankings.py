"""The options of a decision ranked by several objectives side by side (`advise --objective A,B`, play's hints).

Each objective kind (`numeric.objective.KINDS`) registers an advisor factory here (`register_advisor`) that
loads what it ranks from and ranks a decision's options in that objective's units; `side_by_side` lines the
rankings up by move. The CLI and the terminal call `make_advisor` and never name an objective kind. It sits
above the solver and the simulator: winning is ranked from the simulator's `win` distributions (imported only
when asked for), the others from the solver's tables, so `advise` never imports the simulator.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from attrs import frozen

from .errors import DicecupError
from .game.actions import Keep, Score
from .language.model import Card, Variant
from .numeric.objective import ObjectiveView
from .progress import Reporter
from .solver.advice import Option, advise
from .solver.advice_scoring import Values

if TYPE_CHECKING:  # (annotations only: ranking a card's options needs no game state)
    from .game.state import GameState

__all__ = [
    "ADVISORS",
    "Advisor",
    "Asking",
    "Ranked",
    "Row",
    "TableAdvisor",
    "make_advisor",
    "register_advisor",
    "side_by_side",
]


@frozen
class Asking:
    """How a command wants tables made: the strategy (`optimal`, the exact table; `strong`, bot strong's
    estimate of the mean's), a state limit, and where progress, warnings and one-off notices go."""

    strategy: str = "optimal"
    max_states: int | None = None
    progress: Reporter | None = None
    warn: Callable[[str], None] | None = None
    say: Callable[[str], None] | None = None
    opponents: tuple[Card, ...] = ()  # the other players' cards (`advise --opponent`), for the win objective


class Advisor(Protocol):
    """Ranks a decision's options by one objective (values in its units), best first."""

    @property
    def objective(self) -> ObjectiveView: ...
    @property
    def strategy(self) -> str: ...
    def options(self, card: Card, dice: Sequence[int], rolls_left: int, first_roll: bool) -> list[Option]: ...
    def options_at(self, state: GameState) -> list[Option]: ...


Factory = Callable[[Variant, Any, Asking], Advisor]

#: objective kind -> what makes its advisor
ADVISORS: dict[str, Factory] = {}


def register_advisor(kind: str, factory: Factory) -> None:
    """Rank objectives of `kind` with `factory(variant, objective, asking)` (once per kind)."""
    if kind in ADVISORS:
        raise ValueError(f"an advisor for objective {kind!r} is registered twice")
    ADVISORS[kind] = factory


def make_advisor(variant: Variant, objective: Any, asking: Asking | None = None) -> Advisor:
    """The advisor of `objective` on `variant` (its tables loaded or made now); a DicecupError where none can."""
    factory = ADVISORS.get(objective.kind)
    if factory is None:
        raise DicecupError(f"objective {objective.id} cannot rank moves yet (no advisor for {objective.kind!r})")
    return factory(variant, objective, asking or Asking())


@frozen
class TableAdvisor:
    """Ranks from a table of state values (an exact `Solution` for the mean or a risk objective, or bot
    strong's estimate of the mean's): the advisor's own `advise`."""

    objective: ObjectiveView
    values: Values
    strategy: str = "optimal"

    def options(self, card: Card, dice: Sequence[int], rolls_left: int, first_roll: bool) -> list[Option]:
        return advise(self.values, card, dice, rolls_left, first_roll)

    def options_at(self, state: GameState) -> list[Option]:
        state.require_decision()
        return self.options(state.card, state.dice, state.rolls_left, state.first_roll)


def _exact(variant: Variant, objective: Any, asking: Asking) -> Advisor:
    """The mean's or a risk objective's exact table (cached; solved with progress when missing), or for the
    mean with strategy `strong`, bot strong's estimate."""
    from .solver.rules import check_solvable

    if asking.strategy == "strong":
        if not objective.is_mean:
            raise DicecupError(
                f"objective {objective.id} needs the exact solver's table (--strategy optimal); "
                "bot strong's estimate values the mean only"
            )
        from .solver.relax import check_relaxable
        from .solver.strong import strong_values

        check_relaxable(variant)
        return TableAdvisor(objective, strong_values(variant, progress=asking.progress, warn=asking.warn), "strong")
    if asking.strategy != "optimal":
        raise DicecupError(f"unknown strategy {asking.strategy!r}; strategies: optimal, strong")
    from .solver import DEFAULT_MAX_STATES
    from .solver.cache import load_or_solve
    from .solver.solve import check_objective

    check_solvable(variant)
    check_objective(variant, objective)  # before the cache or a progress bar
    solution, _ = load_or_solve(
        variant, asking.max_states or DEFAULT_MAX_STATES, asking.progress, warn=asking.warn, objective=objective
    )
    return TableAdvisor(objective, solution)


def _win(variant: Variant, objective: Any, asking: Asking) -> Advisor:
    """The chance of finishing first against `asking.opponents` (or, in a game, the other players' cards):
    `simulate.win`'s planner (its mean table and remaining-score table, cached beside the solver's)."""
    if asking.strategy != "optimal":
        raise DicecupError(
            f"objective {objective.id} needs the exact solver's table (--strategy optimal); "
            "bot strong's estimate values the mean only"
        )
    from .simulate.win import WinAdvisor, planner_for  # the planner lives with bot:win, imported on use

    advisor: Advisor = WinAdvisor(objective, planner_for(variant, asking.progress, asking.warn), asking.opponents)
    return advisor


register_advisor("mean", _exact)
register_advisor("risk", _exact)
register_advisor("win", _win)


@frozen
class TargetAdvisor:
    """Ranks by P(final score >= t) played for that target (`solver.target`'s vectors for every state)."""

    objective: ObjectiveView
    tables: Any  # solver.target.TargetTables
    t: int
    strategy: str = "optimal"

    def options(self, card: Card, dice: Sequence[int], rolls_left: int, first_roll: bool) -> list[Option]:
        from .solver.target import target_options

        return target_options(self.tables, card, dice, rolls_left, self.t)

    def options_at(self, state: GameState) -> list[Option]:
        state.require_decision()
        return self.options(state.card, state.dice, state.rolls_left, state.first_roll)


def _target(variant: Variant, objective: Any, asking: Asking) -> Advisor:
    """Target play's vectors for every state (the mean's table loaded or solved first); one t ranks moves."""
    if objective.target is None:
        raise DicecupError("moves are ranked for one target: write target:T, e.g. target:300")
    if asking.strategy != "optimal":
        raise DicecupError(f"objective {objective.id} needs the exact solver's table (--strategy optimal)")
    from .solver import DEFAULT_MAX_STATES
    from .solver.cache import load_or_solve
    from .solver.rules import check_solvable
    from .solver.target import check_variant
    from .solver.target_store import target_tables

    check_variant(variant)
    check_solvable(variant)
    solution, _ = load_or_solve(variant, asking.max_states or DEFAULT_MAX_STATES, asking.progress, warn=asking.warn)
    tables, _ = target_tables(solution, asking.progress, asking.warn)
    return TargetAdvisor(objective, tables, objective.target)


register_advisor("target", _target)


class Ranked(NamedTuple):
    """One move's place under one objective: its value (the objective's units), rank (1 = its pick)."""

    value: float
    rank: int

    @property
    def best(self) -> bool:
        return self.rank == 1


class Row(NamedTuple):
    """A move with its place under every objective, in the order the objectives were given."""

    action: Keep | Score
    label: str
    points: int | None
    places: tuple[Ranked, ...]


def side_by_side(rankings: Sequence[list[Option]]) -> list[Row]:
    """The moves of one decision ranked by several objectives (each list best first, as `advise` gives it),
    ordered as the first ranks them; every list must hold the same moves."""
    if not rankings:
        return []
    places: list[dict[Keep | Score, Ranked]] = [
        {o.action: Ranked(o.value, n + 1) for n, o in enumerate(options)} for options in rankings
    ]
    moves = [o.action for o in rankings[0]]
    for got in places[1:]:
        if set(got) != set(moves):
            raise DicecupError("internal error: two objectives rank different moves of the same decision")
    return [Row(o.action, o.label, o.points, tuple(p[o.action] for p in places)) for o in rankings[0]]
