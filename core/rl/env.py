"""The gymnasium environment: one player plays one game of any variant, one decision per step.

    >>> env = DicecupEnv(variant="yahtzee")
    >>> obs, info = env.reset(seed=1)
    >>> obs, reward, terminated, truncated, info = env.step(int(info["action_mask"].nonzero()[0][0]))

The reward is the points a step adds to the player's total (end bonuses once they count), so an episode's
return is the game's final total. Actions, mask and observation are `dicecup.rl.encoding`'s; illegal actions
and misuse are handled by `dicecup.rl.table`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import gymnasium
import numpy as np

from ..errors import DicecupError
from ..game.state import GameState
from ..language.engine import Engine
from ..numeric import vecstep
from .encoding import Encoding
from .exact import ExactSignal, regret_of
from .table import Table, check_options, checked_seed, resolve_variant, whole_number_from

__all__ = ["DicecupEnv", "ENV_ID", "episode_stream", "render_text"]

ENV_ID = "dicecup/Dicecup-v0"
OBSERVATIONS = ("vector", "dict")


class DicecupEnv(gymnasium.Env[Any, np.int64]):
    """One player's game of a dicecup variant as a gymnasium environment.

    Registered as `ENV_ID`: `gymnasium.make("dicecup.rl:dicecup/Dicecup-v0", variant="yamb")` imports and builds
    it. `make` deep-copies its keyword arguments, which an `Engine` does not allow, so through `make` name the
    variant by id or pass a compiled `Variant`, and leave `engine` out. `observation="dict"` gives the
    observation's named parts as a dict. An episode terminates when the card is full and is truncated only
    after `max_illegal` illegal actions in a row (`illegal="penalise"`, the default, with `penalty`; or
    `"raise"`). `exact=True` adds the solver's signal to `info` (`dicecup.rl.exact`): `action_values`, each
    legal action's expected final total, and after a step `regret`, the best value less the taken action's.

    Each game's dice come from a stream of its own (`table.DiceStream`) drawn from the environment's episode
    stream, which `reset(seed=s)` starts from `s`: game k after a reset with seed s is the same in
    `DicecupVectorEnv` (`dicecup.rl.vector`) for the game seeded s."""

    metadata: dict[str, Any] = {"render_modes": ["ansi"], "render_fps": 4}

    def __init__(
        self,
        variant: Any = "yahtzee",
        options: Mapping[str, Any] | None = None,
        engine: Engine | None = None,
        observation: str = "vector",
        illegal: str = "penalise",
        penalty: float = -1.0,
        max_illegal: int = 100,
        render_mode: str | None = None,
        exact: bool = False,
    ) -> None:
        if observation not in OBSERVATIONS:
            raise DicecupError(f"observation must be one of {', '.join(OBSERVATIONS)}, got {observation!r}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise DicecupError(f"render_mode must be None or 'ansi', got {render_mode!r}")
        self.max_illegal = whole_number_from(max_illegal, "max_illegal", 1, 2**31)
        compiled, engine = resolve_variant(variant, options, engine)
        self.table = Table(compiled, engine, 1, illegal, penalty)
        self.observation_kind = observation
        self.render_mode = render_mode
        self.action_space = self.encoding.action_space
        self.observation_space = self.encoding.dict_space if observation == "dict" else self.encoding.vector_space
        self._illegal_run = 0
        self._episodes: np.ndarray | None = None
        self._exact = ExactSignal(compiled, self.encoding) if exact else None
        self._values = np.full(self.encoding.size, np.nan)

    @property
    def encoding(self) -> Encoding:
        return self.table.encoding

    @property
    def state(self) -> GameState:
        """The engine's state of the game (a decision state until the game is over)."""
        return self.table.state

    def action_masks(self) -> np.ndarray:
        """The legal actions now, as a 0/1 array over the action space (what maskable learners ask for)."""
        return self.table.mask()

    def _observation(self) -> Any:
        vector = self.table.observe(0)
        return self.encoding.as_dict(vector) if self.observation_kind == "dict" else vector

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        """A new game; its rolls come from a generator seeded from `seed` (the env's np_random)."""
        check_options(options)
        seed = checked_seed(seed)
        super().reset(seed=seed)
        if seed is not None or self._episodes is None:
            self._episodes = np.array([episode_stream(None, self.np_random)], dtype=np.uint64)
        self.table.reset(int(vecstep.compiled_names()["next_seed"](self._episodes, 0)))
        self._illegal_run = 0
        return self._observation(), self._info()

    def _info(self) -> dict[str, Any]:
        info: dict[str, Any] = {"action_mask": self.table.mask()}
        if self._exact is not None:
            self._values = self._exact.of_state(self.state)
            info["action_values"] = self._values.copy()
        return info

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """Take action index `action`; the reward is the points it adds to the total."""
        before = self._values
        rewards, refused = self.table.step(action)
        info = self._info()
        if self._exact is not None and refused is None:
            info["regret"] = regret_of(before, int(action))
        if refused is not None:
            info["illegal"] = refused
            self._illegal_run += 1
        else:
            self._illegal_run = 0
        truncated = self._illegal_run >= self.max_illegal
        return self._observation(), rewards[0], self.table.ended, truncated, info

    def render(self) -> str | None:
        """The game as text (render mode "ansi"): the dice, the rolls left and the card."""
        if self.render_mode != "ansi":
            return None
        self.table.require_reset("render()")
        return render_text(self.state, 0)


def render_text(state: GameState, player: int) -> str:
    """A player's card and the dice on the table, as a few lines of text."""
    card = state.breakdown(player)
    lines = [f"{state.variant.name}: {card['player']}, total {card['total']}"]
    if not state.over:
        lines.append(f"{state.player} to play: dice {' '.join(map(str, state.dice))}, {state.rolls_left} rolls left")
    lines.extend(f"  {box:<20} {'' if value is None else value}" for box, value in card["boxes"].items())
    lines.extend(f"  {a['name'] or a['id']:<20} {a['points']}" for a in card["awards"] + card["bonuses"])
    return "\n".join(lines) + "\n"


def episode_stream(seed: int | None, rng: np.random.Generator | None) -> np.uint64:
    """The start of an environment's episode stream (each game's dice stream is its next 64 bits): from `seed`
    as gymnasium seeds an environment's `np_random`, else drawn from `rng`."""
    if seed is not None:
        rng = gymnasium.utils.seeding.np_random(seed)[0]
    assert rng is not None
    return np.uint64(rng.integers(0, 2**64, dtype=np.uint64))


gymnasium.register(
    id=ENV_ID, entry_point="dicecup.rl.env:DicecupEnv", vector_entry_point="dicecup.rl.vector:make_vector"
)
