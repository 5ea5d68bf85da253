"""What the solver maximises: the expected final score (`MEAN`), an exponential utility of it (`risk:THETA`), or
the chance of reaching a score (`target`, `target:T`).

With U(s) = E[exp(theta * points still to come from s)], a turn folds exactly like
the mean (the expectation over rolls, the best over keeps) when scoring p points in
a box and going on to state s' is worth exp(theta * p) * V(s'), with V = sign(theta) * U
stored (so that the larger is the better for both signs) and a full card worth
sign(theta) * exp(theta * its end bonuses). theta > 0 prefers a spread of scores (bold),
theta < 0 a narrow one (careful); theta -> 0 is the mean. The only change to the turn
recursion is a multiplicative leaf (`product`) on a table of factors exp(theta * p).

A value V is shown to people as its certainty equivalent log(|V|) / theta: the sure
number of points worth as much as the gamble (for the mean, the value itself), so the
advisor and bots compare points on both objectives. Risk tables are stored in float64:
exp(theta * score) spans hundreds of orders of magnitude, beyond float32's range.

`target` maximises P(final score >= t) for every t at once: a state's value is a vector over the points still
needed, not a number, so it has its own solve (`solver.target`) on the same states and the same turn recursion;
`target:T` is the same solve read at t = T (its values shown as probabilities, in [0, 1]).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..errors import DicecupError

__all__ = [
    "MEAN",
    "EXP_LIMIT",
    "TARGET",
    "Objective",
    "ObjectiveError",
    "parse_objective",
    "risk_objective",
    "target_objective",
]

EXP_LIMIT = 700.0
"""|theta| x the widest score a variant can reach must stay below this: exp(709.78) is float64's largest number
(and exp(-708) about its smallest normal one); the margin keeps sums and products of values in range."""

KNOWN = "mean, risk:THETA (e.g. risk:0.05 bold, risk:-0.03 careful), target or target:T (e.g. target:300)"


class ObjectiveError(DicecupError):
    """An objective that cannot be read, or whose values do not fit float64 for a variant (says why)."""


@dataclass(frozen=True)
class Objective:
    """The expected final score (theta == 0), the exponential utility exp(theta * score), or target play:
    P(final score >= t) for every t (`curve`) or for t = `target`."""

    theta: float = 0.0
    target: int | None = None
    curve: bool = False

    @property
    def id(self) -> str:
        """How it is written (`--objective`, cache keys, JSON): "mean", "risk:THETA", "target" or "target:T"."""
        if self.is_target:
            return "target" if self.target is None else f"target:{self.target}"
        return "mean" if self.is_mean else f"risk:{self.theta!r}"

    @property
    def is_target(self) -> bool:
        """Target play: values are vectors over the points still needed (`solver.target`), not numbers."""
        return self.curve or self.target is not None

    @property
    def is_mean(self) -> bool:
        return self.theta == 0.0 and not self.is_target

    @property
    def product(self) -> bool:
        """Whether a scoring leaf is factor x successor value (risk) rather than points + successor value."""
        return self.theta != 0.0

    @property
    def sign(self) -> float:
        return 1.0 if self.theta >= 0 else -1.0

    def describe(self) -> str:
        """What a shown value is, in words."""
        if self.is_target:
            at = "t" if self.target is None else str(self.target)
            return f"probability of a final score of at least {at} (target play)"
        if self.is_mean:
            return "expected final score"
        mood = "bold" if self.theta > 0 else "careful"
        return f"certainty equivalent of the final score (risk theta {self.theta:g}, {mood})"

    def factors(self, points: np.ndarray) -> np.ndarray:
        """The leaf table of a row of points: the points themselves (mean), or exp(theta * points) (float64)."""
        if not self.product:
            return points
        return np.exp(self.theta * np.asarray(points, dtype=np.float64))

    def terminal(self, bonus: np.ndarray) -> np.ndarray:
        """The stored value of full cards from their end bonuses: the bonus, or sign * exp(theta * bonus)."""
        if not self.product:
            return bonus
        return self.sign * np.exp(self.theta * np.asarray(bonus, dtype=np.float64))

    def leaf(self, points: np.ndarray, after: np.ndarray) -> np.ndarray:
        """The value of scoring `points` and going on to a state of stored value `after`."""
        if not self.product:
            return points + after
        return self.factors(points) * after

    def shown(self, values: np.ndarray) -> np.ndarray:
        """Stored values as points (the certainty equivalent log(|V|) / theta; -inf, an illegal move, stays)."""
        if not self.product:
            return values
        v = np.asarray(values, dtype=np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            out = np.log(np.abs(v)) / self.theta
        return np.where(v == -np.inf, -np.inf, out)

    def utility(self, points: np.ndarray) -> np.ndarray:
        """`shown`'s inverse: the stored value of a certainty equivalent (-inf stays -inf)."""
        if not self.product:
            return points
        p = np.asarray(points, dtype=np.float64)
        with np.errstate(over="ignore", invalid="ignore"):
            out = self.sign * np.exp(self.theta * p)
        return np.where(p == -np.inf, -np.inf, out)

    def check_range(self, variant_id: str, lowest: float, highest: float) -> None:
        """Refuse, before solving, a theta whose values exp(theta * score) leave float64 for final scores
        between `lowest` and `highest` (an upper bound of the variant's range), with the numbers."""
        if not self.product:
            return
        span = abs(self.theta) * max(abs(lowest), abs(highest))
        if span > EXP_LIMIT:
            most = EXP_LIMIT / max(abs(lowest), abs(highest))
            raise ObjectiveError(
                f"{variant_id}: risk theta {self.theta:g} is too large for this variant: its scores reach "
                f"{highest:g} (lowest {lowest:g}), and exp({self.theta:g} x {max(abs(lowest), abs(highest)):g}) "
                f"= exp({span:.0f}) does not fit a float64 (limit exp({EXP_LIMIT:.0f})); use |theta| <= {most:.4g}"
            )


MEAN = Objective()
"""The expected final score: what `solve` maximises unless told otherwise."""

TARGET = Objective(curve=True)
"""Target play for every t at once: the whole curve P(final score >= t)."""


def parse_objective(text: str) -> Objective:
    """`mean`, `risk:THETA` (a finite number; risk:0 is the mean), `target` (every t) or `target:T` (a whole
    number) as an Objective; ObjectiveError otherwise."""
    if not isinstance(text, str):
        raise ObjectiveError(f"an objective must be text like 'mean', 'risk:0.05' or 'target:300', got {text!r}")
    name, colon, arg = text.strip().partition(":")
    name = name.strip().lower()
    if name == "mean" and not colon:
        return MEAN
    if name == "mean":
        raise ObjectiveError(f"objective {text!r}: mean takes no parameter; write 'mean'")
    if name == "target":
        return TARGET if not colon else target_objective(arg, f"objective {text!r}")
    if name != "risk":
        raise ObjectiveError(f"unknown objective {text!r}; objectives: {KNOWN}")
    if not arg.strip():
        raise ObjectiveError(f"objective {text!r}: risk needs its theta, e.g. risk:0.05 (bold) or risk:-0.03 (careful)")
    return risk_objective(arg, f"objective {text!r}")


def risk_objective(theta: str, where: str) -> Objective:
    """The risk objective of a theta written as text (risk:0 is the mean); ObjectiveError naming `where`."""
    arg = theta.strip()
    try:
        value = float(arg)
    except ValueError:
        raise ObjectiveError(f"{where}: theta must be a number (e.g. 0.05 or -0.03), got {arg!r}") from None
    if not math.isfinite(value):
        raise ObjectiveError(f"{where}: theta must be a finite number, got {arg!r}")
    return Objective(value + 0.0)  # -0.0 is 0.0: the mean


def target_objective(score: str, where: str) -> Objective:
    """Target play for t = a whole number written as text (`target:300`); ObjectiveError naming `where`."""
    arg = score.strip()
    try:
        value = int(arg)
    except ValueError:
        raise ObjectiveError(f"{where}: the target must be a whole number of points (e.g. 300), got {arg!r}") from None
    return Objective(target=value)
