"""What the solver maximises: the expected final score (`MEAN`), an exponential utility of it (`risk:THETA`),
or the chance of reaching a score (`target`, `target:T`).

Each objective only changes how a scoring leaf is valued, so every one runs on the solver's one turn recursion.
Objectives are written NAME or NAME:ARG and read through one registry (`register_objective`, `parse_objective`):
a new kind registers here and its advisor in `rankings`, and the CLI names none of them. `ObjectiveView` is what
the views read of any objective.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from ..errors import DicecupError, shown
from ..locales import N_, Phrase

__all__ = [
    "MEAN",
    "TARGET",
    "EXP_LIMIT",
    "KINDS",
    "WIN",
    "Objective",
    "ObjectiveError",
    "ObjectiveKind",
    "ObjectiveView",
    "known_objectives",
    "parse_objective",
    "parse_objectives",
    "register_objective",
    "risk_objective",
    "target_objective",
    "WinObjective",
]

EXP_LIMIT = 700.0
"""|theta| x the widest score a variant can reach must stay below this: exp(709.78) is float64's largest number
(and exp(-708) about its smallest normal one); the margin keeps sums and products of values in range."""
MAX_TARGET = 10**9  # no variant scores near this: a target beyond it is a typo, refused before any work


class ObjectiveError(DicecupError):
    """An objective that cannot be read, or whose values do not fit float64 for a variant (says why)."""


class ObjectiveView(Protocol):
    """What the rankings and figures read of any objective (`Objective` here; later kinds alike)."""

    @property
    def id(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def label(self) -> str: ...
    @property
    def value_key(self) -> str: ...
    @property
    def unit(self) -> str: ...
    def describe(self) -> str: ...


@dataclass(frozen=True)
class Objective:
    """The expected final score (theta == 0), the exponential utility exp(theta * score), or target play:
    P(final score >= t) for every t (`curve`) or for t = `target`.

    Risk: with U(s) = E[exp(theta * points still to come from s)], a turn folds exactly like the mean when
    scoring p points and going on to s' is worth exp(theta * p) * V(s'), V = sign(theta) * U being stored so
    that larger is better for both signs (theta > 0 bold, theta < 0 careful, theta -> 0 the mean): the one
    change is a multiplicative leaf (`product`). A value is shown as its certainty equivalent log(|V|) / theta,
    so the advisor compares points on every objective; risk values need float64 (exp(theta * score) spans
    hundreds of orders of magnitude). Target: a state's value is a vector over the points still needed, with
    its own solve (`solver.target`) on the same states; `target:T` reads that solve at t = T.
    """

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
    def kind(self) -> str:
        """The registered kind it was read as (`KINDS`): "mean", "risk" or "target"."""
        return "target" if self.is_target else "mean" if self.is_mean else "risk"

    @property
    def label(self) -> str:
        """A column header of a few characters: "mean", "risk -0.03", "P(>=300)"."""
        if self.is_target:
            return "P(>=t)" if self.target is None else f"P(>={self.target})"
        return "mean" if self.is_mean else f"risk {self.theta:g}"

    @property
    def value_key(self) -> str:
        """The JSON key of a value: "expected_score", "certainty_equivalent" (risk) or "probability" (target)."""
        if self.is_target:
            return "probability"
        return "expected_score" if self.is_mean else "certainty_equivalent"

    @property
    def unit(self) -> str:
        """What a shown value is measured in: points (the mean, a certainty equivalent) or a probability."""
        return "probability" if self.is_target else "points"

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
        """What a shown value is, in words (English; `said` in the language a front end speaks)."""
        if self.is_target:
            at = "t" if self.target is None else str(self.target)
            return Phrase(N_("probability of a final score of at least {at} (target play)"), at=at)
        if self.is_mean:
            return Phrase(N_("expected final score"))
        if self.theta > 0:
            return Phrase(
                N_("certainty equivalent of the final score (risk theta {theta}, bold)"), theta=f"{self.theta:g}"
            )
        return Phrase(
            N_("certainty equivalent of the final score (risk theta {theta}, careful)"), theta=f"{self.theta:g}"
        )

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
                f"= exp({span:.4g}) does not fit a float64 (limit exp({EXP_LIMIT:.0f})); use |theta| <= {most:.4g}"
            )


MEAN = Objective()
"""The expected final score: what `solve` maximises unless told otherwise."""

TARGET = Objective(curve=True)
"""Target play for every t at once: the whole curve P(final score >= t)."""


@dataclass(frozen=True)
class ObjectiveKind:
    """A kind of objective as players write it: NAME, or NAME:ARG when it takes an `argument` (its label, e.g.
    THETA), or either when the argument is `optional`; `parse(arg, where)` reads the argument (None when none is
    written) into an objective, or raises an ObjectiveError naming `where`."""

    name: str
    parse: Callable[[str | None, str], Any]
    help: str
    argument: str | None = None
    optional: bool = False

    @property
    def usage(self) -> str:
        """How it is written: "mean", "risk:THETA", "target[:T]"."""
        if self.argument is None:
            return self.name
        return f"{self.name}[:{self.argument}]" if self.optional else f"{self.name}:{self.argument}"


#: every objective kind, by name, in the order `--help` lists them
KINDS: dict[str, ObjectiveKind] = {}


def register_objective(kind: ObjectiveKind) -> None:
    """Add an objective kind (`parse_objective` then reads NAME or NAME:ARG); a name is registered once."""
    if not kind.name or ":" in kind.name or kind.name != kind.name.lower():
        raise ValueError(f"an objective's name must be a lower-case word without ':', got {kind.name!r}")
    if kind.name in KINDS:
        raise ValueError(f"objective {kind.name!r} is registered twice")
    KINDS[kind.name] = kind


def known_objectives() -> str:
    """Every kind as written, with its help: what an error about an objective lists."""
    return "; ".join(f"{k.usage} ({k.help})" for k in KINDS.values())


def parse_objective(text: str) -> Any:
    """An objective written NAME or NAME:ARG (`mean`, `risk:0.05`; risk:0 is the mean), read by its kind's
    parser; ObjectiveError saying what is wrong (an unknown name lists the known ones)."""
    if not isinstance(text, str):
        raise ObjectiveError(f"an objective must be text like 'mean' or 'risk:0.05', got {shown(text)}")
    name, colon, arg = text.strip().partition(":")
    kind = KINDS.get(name.strip().lower())
    if kind is None:
        raise ObjectiveError(
            f"unknown objective {shown(text)}; objectives: {', '.join(k.usage for k in KINDS.values())}"
        )
    if kind.argument is None and colon:
        raise ObjectiveError(f"objective {shown(text)}: {kind.name} takes no parameter; write '{kind.name}'")
    if kind.argument is None or (kind.optional and not colon):
        return kind.parse(None, f"objective {shown(text)}")
    if not arg.strip():
        raise ObjectiveError(
            f"objective {shown(text)}: {kind.name} needs its {kind.argument.lower()}, e.g. {kind.help}"
        )
    return kind.parse(arg.strip(), f"objective {shown(text)}")


def parse_objectives(texts: str | Iterable[str]) -> list[Any]:
    """Several objectives, each text a comma-separated list and texts repeatable (`--objective mean,risk:-0.03`
    is `--objective mean --objective risk:-0.03`), in the order given; one twice, or none, is an error."""
    items = [texts] if isinstance(texts, str) else list(texts)
    out: list[Any] = []
    for text in items:
        if not isinstance(text, str):
            raise ObjectiveError(f"an objective must be text like 'mean' or 'risk:0.05', got {shown(text)}")
        for part in text.split(","):
            if not part.strip():
                raise ObjectiveError(f"empty objective in {shown(text)}: separate objectives by single commas")
            got = parse_objective(part)
            if any(o.id == got.id for o in out):
                raise ObjectiveError(f"objective {got.id} is given twice")
            out.append(got)
    if not out:
        raise ObjectiveError("no objective given; objectives: " + ", ".join(k.usage for k in KINDS.values()))
    return out


def risk_objective(theta: str, where: str) -> Objective:
    """The risk objective of a theta written as text (risk:0 is the mean); ObjectiveError naming `where`."""
    arg = theta.strip()
    try:
        value = float(arg)
    except ValueError:
        raise ObjectiveError(f"{where}: theta must be a number (e.g. 0.05 or -0.03), got {shown(arg)}") from None
    if not math.isfinite(value):
        raise ObjectiveError(f"{where}: theta must be a finite number, got {shown(arg)}")
    return Objective(value + 0.0)  # -0.0 is 0.0: the mean


def target_objective(score: str, where: str) -> Objective:
    """Target play for t = a whole number written as text (`target:300`); ObjectiveError naming `where`."""
    arg = score.strip()
    try:
        value = int(arg)  # more than 4,300 digits: ValueError too
    except ValueError:
        if not arg.lstrip("+-").isdigit():
            raise ObjectiveError(
                f"{where}: the target must be a whole number of points (e.g. 300), got {shown(arg)}"
            ) from None
        value = MAX_TARGET + 1
    if not -MAX_TARGET <= value <= MAX_TARGET:
        raise ObjectiveError(
            f"{where}: the target must be from {-MAX_TARGET:,} to {MAX_TARGET:,} points, got {shown(arg)}"
        )
    return Objective(target=value)


def _mean(arg: str | None, where: str) -> Objective:
    return MEAN


def _target(arg: str | None, where: str) -> Objective:
    return TARGET if arg is None else target_objective(arg, where)


def _risk(arg: str | None, where: str) -> Objective:
    assert arg is not None  # the registry hands a kind with an argument its text
    return risk_objective(arg, where)


register_objective(ObjectiveKind("mean", _mean, "the expected final score"))
register_objective(
    ObjectiveKind(
        "risk",
        _risk,
        "risk:0.05 bold, risk:-0.03 careful: the exponential utility E[exp(THETA x score)], shown as its "
        "certainty equivalent",
        "THETA",
    )
)
register_objective(
    ObjectiveKind(
        "target",
        _target,
        "target:300: the probability of a final score of at least 300 (target alone: for every score at once)",
        "T",
        optional=True,
    )
)


@dataclass(frozen=True)
class WinObjective:
    """The chance of finishing first against the other players' cards (a k-way tie counts 1/k, as `bot:win`
    counts it): ranked by `simulate.win`'s planner, not by a solver table, so it has no theta and no table."""

    @property
    def id(self) -> str:
        return "win"

    @property
    def kind(self) -> str:
        return "win"

    @property
    def label(self) -> str:
        return "win"

    @property
    def value_key(self) -> str:
        return "win_probability"

    @property
    def unit(self) -> str:
        return "probability"

    @property
    def is_mean(self) -> bool:
        return False

    @property
    def is_target(self) -> bool:
        return False

    def describe(self) -> str:
        return Phrase(
            N_("chance of finishing first against the opponents' cards (ties shared; later turns played for the mean)")
        )


WIN = WinObjective()
"""Playing to win (`--objective win`): needs the opponents' cards."""


def _win(arg: str | None, where: str) -> WinObjective:
    return WIN


register_objective(
    ObjectiveKind("win", _win, "the chance of finishing first against the opponents' cards (ties shared)")
)
