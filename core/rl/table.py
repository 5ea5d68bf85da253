"""One game played by action indices: what the gymnasium and the PettingZoo environments share.

The table rolls the dice itself, so the environments only ever sit at decision states. An episode is one
game. Illegal actions are penalised by default (the state unchanged, the reward `penalty`, the engine's
reason given), because gymnasium's own checker and learners that do not read masks sample the whole space;
`illegal="raise"` raises the engine's `IllegalAction` instead. Misuse is one error type, `EnvUsageError`.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from typing import Any

import numpy as np

from ..errors import DicecupError, IllegalAction, shown
from ..game.actions import Keep
from ..game.state import GameState
from ..language.engine import Engine
from ..language.model import Variant
from ..numeric import vecstep
from ..numeric.draws import roll_draws
from .encoding import Encoding

__all__ = [
    "DiceStream",
    "Table",
    "next_seed",
    "ILLEGAL_MODES",
    "resolve_variant",
    "EnvUsageError",
    "IllegalStep",
    "checked_seed",
    "check_options",
]

ILLEGAL_MODES = ("penalise", "raise")
MAX_SEED = 2**128  # a seed beyond this is a mistake, not entropy


class EnvUsageError(DicecupError):
    """A call the environment cannot take now, saying what to do: a step, an observation, a mask or a render
    before the first reset, a seed that is no seed, an agent the environment does not have, a step after the
    episode."""


class IllegalStep(EnvUsageError, IllegalAction):
    """An action that is no index of the space (a float, a string, out of range), a step after the game, or
    (raise mode) an illegal action: both misuse and an illegal action."""


def check_options(options: Any) -> None:
    """reset's `options`: None or a mapping (the environments take none; a mapping is accepted and unused)."""
    if options is not None and not isinstance(options, Mapping):
        raise EnvUsageError(f"reset(options=...) takes None or a dict, got {type(options).__name__}")


def checked_seed(seed: Any) -> int | None:
    """`seed` when it is None or a whole number from 0 to MAX_SEED (numpy integers too, bool not)."""
    if seed is None:
        return None
    if isinstance(seed, np.ndarray) and seed.shape == ():
        seed = seed.item()
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or not 0 <= int(seed) <= MAX_SEED:
        raise EnvUsageError(f"reset(seed=...) takes None or a whole number from 0 to 2**128, got {shown(seed)}")
    return int(seed)


def resolve_variant(variant: Any, options: Any, engine: Engine | None) -> tuple[Variant, Engine]:
    """The compiled variant an environment plays (an id, a file, or a Variant) and the engine it comes from."""
    if engine is not None and not isinstance(engine, Engine):
        raise DicecupError(f"engine must be a dicecup.Engine, got {type(engine).__name__}")
    engine = engine if engine is not None else Engine()
    if isinstance(variant, Variant):
        if options:
            raise DicecupError("options apply to a variant named by id; a compiled Variant has its options already")
        return variant, engine
    if not isinstance(variant, str):
        raise DicecupError(
            f"variant must be a variant id (such as 'yahtzee') or a Variant, got {type(variant).__name__}"
        )
    return engine.resolve(variant, options), engine


class DiceStream:
    """One game's dice from its 64-bit seed, drawn as the vector kernel draws them (`vecstep.draw_dice`): so a
    game of the vector environment and one of `DicecupEnv` with the same seed roll the same dice."""

    def __init__(self, variant: Variant, seed: int) -> None:
        self.state = np.array([seed % 2**64], dtype=np.uint64)
        self.buf, self.left = np.uint64(0), np.int64(0)
        self.faces = variant.faces
        self.draws = roll_draws(variant.dice, variant.faces, np.zeros(0, dtype=np.int64))
        self.out = np.zeros(variant.dice, dtype=np.int64)
        self.draw = vecstep.compiled_names()["draw_dice"]

    def roll(self, n: int) -> list[int]:
        """The next n dice."""
        buf, left = self.draw(self.state, 0, self.buf, self.left, n, self.draws, self.faces, self.out)
        self.buf, self.left = np.uint64(buf), np.int64(left)  # (numba hands back ints: kept typed as it takes them)
        return [int(x) for x in self.out[:n]]


class Table:
    """A game of `players` played by action indices, its dice drawn from a seeded `DiceStream`.

    After a keep the dice are rolled at once, and after a box is scored the next player's first roll is. The
    state is made with one round; a variant that replays a full tie starts another game, but the episode ends
    all the same with the tied totals (its last observation shows the new game's empty cards)."""

    def __init__(
        self, variant: Variant, engine: Engine, players: int, illegal: str = "penalise", penalty: float = -1.0
    ) -> None:
        if illegal not in ILLEGAL_MODES:
            raise DicecupError(f"illegal must be one of {', '.join(ILLEGAL_MODES)}, got {illegal!r}")
        self.penalty = finite_number(penalty, "penalty")
        self.variant = variant
        self.players = players
        self.encoding = Encoding(variant, engine, players)
        self.illegal = illegal
        self.dice = DiceStream(variant, 0)
        self.state = GameState.new(variant, players, rounds=1)
        self._cards: list[np.ndarray] = []
        self._mask: np.ndarray | None = None
        self.started = False  # whether reset() has dealt a game

    # ------------------------------------------------------------------ queries

    def require_reset(self, doing: str) -> None:
        """EnvUsageError unless reset() has dealt a game (`doing`: what was asked, for the message)."""
        if not self.started:
            raise EnvUsageError(f"{doing} before reset(): call reset() first to deal a game")

    @property
    def ended(self) -> bool:
        """Whether the game is over (every card full, or an instant win)."""
        return bool(self.state.results)

    def totals(self) -> tuple[int, ...]:
        """Each player's total score now (the final totals once the game is over)."""
        if self.state.results:
            return self.state.results[0].totals
        return tuple(self.encoding.total(c) for c in self._cards)

    def mask(self) -> np.ndarray:
        """The action mask of the state on the table (a copy the caller may keep)."""
        self.require_reset("the action mask")
        if self.ended:
            return np.zeros(self.encoding.size, dtype=np.int8)
        if self._mask is None:
            self._mask = self.encoding.mask(self.state)
        return self._mask.copy()

    def observe(self, player: int) -> np.ndarray:
        """Player `player`'s observation vector (see `dicecup.rl.encoding`)."""
        self.require_reset("an observation")
        return self.encoding.vector(self.state, player, self._cards)

    # ------------------------------------------------------------------ moves

    def reset(self, seed: int) -> None:
        """A new game, its dice rolled from `seed`: the first player's first roll is on the table."""
        self.dice = DiceStream(self.variant, seed)
        self.state = GameState.new(self.variant, self.players, rounds=1).roll(dice=self.dice.roll(self.variant.dice))
        self._cards = [self.encoding.card_block(c) for c in self.state.cards]
        self._mask = None
        self.started = True

    def step(self, index: Any) -> tuple[list[float], str | None]:
        """Take action `index` for the player to act: (reward per player, why it was refused or None)."""
        self.require_reset("step()")
        if self.ended:
            raise IllegalStep("the game is over: reset the environment to play another")
        i = _index(index, self.encoding.size)
        if self._mask is None:
            self._mask = self.encoding.mask(self.state)
        if not self._mask[i]:
            why = self._refusal(i)
            if self.illegal == "raise":
                raise IllegalStep(why)
            rewards = [0.0] * self.players
            rewards[self.state.current] = self.penalty
            return rewards, why
        before = self.totals()
        acting = self.state.current
        state = self.state.apply(self.encoding.decode(i, self.state))
        scored = len(state.cards[acting].scores) != len(self.state.cards[acting].scores)
        if state.is_chance:
            state = state.roll(dice=self.dice.roll(self.variant.dice - len(state.held or ())))
        self.state = state
        self._mask = None
        if state.results:  # the game is over (with a full tie replayed, the cards are the next game's)
            self._cards = [self.encoding.card_block(c) for c in state.cards]
        elif scored:
            self._cards[acting] = self.encoding.card_block(state.cards[acting])
        after = self.totals()
        return [float(a - b) for a, b in zip(after, before, strict=True)], None

    def _refusal(self, index: int) -> str:
        """Why index `index` is not legal now, in the engine's words where it has them."""
        what = f"action {index} ({self.encoding.label(index)})"
        try:
            action = self.encoding.decode(index, self.state)
            self.state.apply(action)  # raises IllegalAction with the engine's reason
        except DicecupError as exc:
            return f"{what} is not legal now: {exc}"
        if isinstance(action, Keep):
            same = self.encoding.encode(action, self.state)
            return (
                f"{what} is not legal now: it keeps the same faces as action {same}, the legal index for them "
                "(of equal dice, the leftmost are kept)"
            )
        return f"{what} is not legal now"


def next_seed(seed: int | None) -> int:
    """The seed of the game a multi-player reset deals, from the seed kept (None: fresh entropy); it is kept in
    turn, so that the next unseeded reset plays another game."""
    return int(np.random.default_rng(seed).integers(2**63))


def finite_number(value: object, what: str) -> float:
    """`value` as a float when it is a finite real number (bool not); DicecupError otherwise."""
    try:
        number = float(value) if isinstance(value, numbers.Real) and not isinstance(value, bool) else math.nan
    except OverflowError:  # an int of 400 digits
        number = math.inf
    if not math.isfinite(number):
        raise DicecupError(f"{what} must be a finite number, got {shown(value)}")
    return number


def whole_number_from(value: object, what: str, low: int, high: int) -> int:
    """`value` as an int from `low` to `high` (numpy integers too, bool not); DicecupError otherwise."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or not low <= int(value) <= high:
        raise DicecupError(f"{what} must be a whole number from {low} to {high}, got {shown(value)}")
    return int(value)


def _index(index: Any, size: int) -> int:
    """`index` as an int in 0..size-1 (numpy integers and 0-d arrays too); IllegalStep otherwise."""
    if isinstance(index, np.ndarray) and index.shape == ():
        index = index.item()
    if isinstance(index, bool) or not isinstance(index, numbers.Integral):
        raise IllegalStep(f"an action is an index from 0 to {size - 1}, got {type(index).__name__} {shown(index)}")
    if not 0 <= int(index) < size:
        raise IllegalStep(f"action {shown(index)} is outside the action space: indices run from 0 to {size - 1}")
    return int(index)
