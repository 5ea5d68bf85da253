"""What the PettingZoo environments share: a game of several seated agents, their spaces, and its render.

`Seats` is mixed into `DicecupAECEnv` and `DicecupParallelEnv`: agents `player_0`, `player_1`, ... in seat order,
each observing a dict of its observation vector and its action mask (the same space objects every time, as
PettingZoo asks), one `Table` playing the game.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import gymnasium
import numpy as np

from ..errors import DicecupError, shown
from ..game.state import MAX_PLAYERS, GameState
from ..language.engine import Engine
from .encoding import Encoding
from .env import render_text
from .table import EnvUsageError, Table, resolve_variant, whole_number_from

__all__ = ["Seats"]


class Seats:
    """The seats of a PettingZoo environment (a mixin: `seat` makes them)."""

    metadata: dict[str, Any]
    table: Table
    render_mode: str | None
    possible_agents: list[str]

    def seat(
        self,
        variant: Any,
        players: Any,
        options: Mapping[str, Any] | None,
        engine: Engine | None,
        illegal: tuple[str, float],
    ) -> None:
        """The table of `players` agents (`illegal`: how it meets illegal actions, and their penalty); each
        agent's spaces."""
        count = whole_number_from(players, "players", 1, MAX_PLAYERS)
        if self.render_mode is not None and self.render_mode not in self.metadata["render_modes"]:
            raise DicecupError(f"render_mode must be None or 'ansi', got {self.render_mode!r}")
        compiled, engine = resolve_variant(variant, options, engine)
        self.table = Table(compiled, engine, count, *illegal)
        self.possible_agents = [f"player_{i}" for i in range(count)]
        self._seat = {a: i for i, a in enumerate(self.possible_agents)}
        space = gymnasium.spaces.Dict(
            {
                "observation": self.encoding.vector_space,
                "action_mask": gymnasium.spaces.Box(0, 1, shape=(self.encoding.size,), dtype=np.int8),
            }
        )
        self.observation_spaces = dict.fromkeys(self.possible_agents, space)
        self.action_spaces = dict.fromkeys(self.possible_agents, self.encoding.action_space)
        self._seed: int | None = None

    @property
    def encoding(self) -> Encoding:
        return self.table.encoding

    @property
    def game(self) -> GameState:
        """The engine's state of the game."""
        return self.table.state

    def _agent(self, agent: Any) -> int:
        """The seat of `agent`; EnvUsageError naming the agents when the game has no such agent."""
        if not isinstance(agent, str) or agent not in self._seat:
            raise EnvUsageError(f"no agent {shown(agent)} here; the agents are {', '.join(self.possible_agents)}")
        return self._seat[agent]

    def observation_space(self, agent: str) -> gymnasium.spaces.Space[Any]:
        """The agent's observation space (the same object every time, as PettingZoo asks)."""
        return self.observation_spaces[self.possible_agents[self._agent(agent)]]

    def action_space(self, agent: str) -> gymnasium.spaces.Space[Any]:
        """The agent's action space (the same object every time)."""
        return self.action_spaces[self.possible_agents[self._agent(agent)]]

    def render(self) -> str | None:
        """The acting player's card and the dice, as text (render mode "ansi")."""
        if self.render_mode != "ansi":
            return None
        self.table.require_reset("render()")
        return render_text(self.table.state, self.table.state.current)

    def close(self) -> None:
        """Nothing to release."""
