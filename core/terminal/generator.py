"""The dice generator of a terminal game, and how a save restores it.

`TrackedRandom` is Python's Mersenne Twister (the same numbers from the same seed)
that counts the 32-bit words drawn since its state was last set, so a save can
restate the generator once and then give, with each move, only how far it has run.
"""

from __future__ import annotations

import random
from typing import Any

from ..errors import SaveError

__all__ = ["TrackedRandom", "generator_state", "restore"]

_MT_WORDS = 624
_CHUNK = 1 << 16  # words drawn at once when a restored generator is run forward


class Position(tuple[Any, ...]):
    """`random.Random.getstate()`'s value, carrying how far the generator had run since its state was set."""

    epoch: object
    drawn: int


class TrackedRandom(random.Random):
    """A `random.Random` that counts the words it draws (`drawn`) since its state was last set (`epoch`)."""

    def __init__(self, x: Any = None) -> None:
        self.epoch: object = object()
        self.drawn = 0
        super().__init__(x)

    def seed(self, a: Any = None, version: int = 2) -> None:
        super().seed(a, version)
        self.epoch, self.drawn = object(), 0

    def random(self) -> float:
        self.drawn += 2  # a double is made of two words
        return super().random()

    def getrandbits(self, k: int) -> int:
        value = super().getrandbits(k)  # raises before drawing for a negative k
        self.drawn += (k + 31) // 32
        return value

    def getstate(self) -> Any:
        state = Position(super().getstate())
        state.epoch, state.drawn = self.epoch, self.drawn
        return state

    def setstate(self, state: Any) -> None:
        super().setstate(tuple(state))
        if isinstance(state, Position):  # a state this generator had: the same count from the same start
            self.epoch, self.drawn = state.epoch, state.drawn
        else:
            self.epoch, self.drawn = object(), 0

    def run(self, words: int) -> None:
        """Draw `words` words and throw them away (to where a save says the generator stood)."""
        while words > 0:
            k = min(words, _CHUNK)
            self.getrandbits(32 * k)
            words -= k


def generator_state(rng: random.Random) -> list[Any]:
    """The generator's state as JSON-ready lists."""
    version, internal, gauss = rng.getstate()
    return [version, list(internal), gauss]


def restore(data: Any, where: str) -> TrackedRandom:
    """A generator restored from `generator_state` output; SaveError naming `where` when it is not one a
    generator can be in."""
    try:
        version, internal, gauss = data
        if version != 3 or not isinstance(internal, list) or len(internal) != _MT_WORDS + 1:
            raise ValueError("not a Mersenne Twister state")
        if not all(isinstance(x, int) and not isinstance(x, bool) and 0 <= x < 2**32 for x in internal):
            raise ValueError("its words must be 32-bit whole numbers")
        if not any(internal[:_MT_WORDS]):
            raise ValueError("an all-zero state would roll the same face forever")
        if not 1 <= internal[_MT_WORDS] <= _MT_WORDS:
            raise ValueError("its position is out of range")
        if gauss is not None and not isinstance(gauss, float):
            raise ValueError("its spare normal value is not a number")
        rng = TrackedRandom()
        rng.setstate((version, tuple(internal), gauss))
    except (TypeError, ValueError) as exc:
        raise SaveError(f"save file {where} is not a dice generator state ({exc})") from None
    return rng
