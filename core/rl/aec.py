"""The PettingZoo AEC environment: several players share one game, each acting in turn.

    >>> env = DicecupAECEnv(variant="yahtzee", players=2)
    >>> env.reset(seed=1)
    >>> for agent in env.agent_iter():
    ...     obs, reward, terminated, truncated, info = env.last()
    ...     env.step(None if terminated or truncated else env.action_space(agent).sample(obs["action_mask"]))

Actions are the gymnasium environment's; at each step every player receives the points their total changed
by, so an agent's return over the episode is its final total. One episode is one game.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from pettingzoo import AECEnv

from ..language.engine import Engine
from .seats import Seats
from .table import EnvUsageError, check_options, checked_seed, next_seed

__all__ = ["DicecupAECEnv"]


class DicecupAECEnv(Seats, AECEnv[str, dict[str, np.ndarray], int]):
    """A game of a dicecup variant between `players` agents, `player_0`, `player_1`, ... in seat order.

    Each observation is a dict of the `observation` vector (`dicecup.rl.encoding`, from that player's seat: their
    card, the other players' totals, whether they are to act) and the `action_mask` (all 0 for a player not to
    act; the acting agent's info holds it too). All agents terminate when the game ends (every card full, or an
    instant win). Misuse (a step or an observation before reset, an agent the game does not have, an action for
    a terminated agent) is `EnvUsageError`."""

    metadata: dict[str, Any] = {
        "render_modes": ["ansi"],
        "render_fps": 4,
        "name": "dicecup_v0",
        "is_parallelizable": False,
    }

    def __init__(
        self,
        variant: Any = "yahtzee",
        players: int = 2,
        options: Mapping[str, Any] | None = None,
        engine: Engine | None = None,
        illegal: str = "penalise",
        penalty: float = -1.0,
        render_mode: str | None = None,
    ) -> None:
        super().__init__()
        self.render_mode = render_mode
        self.seat(variant, players, options, engine, (illegal, penalty))
        self.agents: list[str] = []

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """The agent's observation vector and its action mask (0s unless it is to act)."""
        seat = self._agent(agent)
        self.table.require_reset("observe()")
        acting = not self.table.ended and self.table.state.current == seat
        mask = self.table.mask() if acting else np.zeros(self.encoding.size, dtype=np.int8)
        return {"observation": self.table.observe(seat), "action_mask": mask}

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """A new game; its rolls come from a generator seeded from `seed`."""
        check_options(options)
        seed = checked_seed(seed)
        if seed is not None:
            self._seed = seed
        self._seed = next_seed(self._seed)  # the next unseeded reset plays another game
        self.table.reset(self._seed)
        self.agents = list(self.possible_agents)
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}
        self._select()

    def _select(self) -> None:
        """Point `agent_selection` at the player to act, with the mask in its info."""
        self.agent_selection = self.possible_agents[self.table.state.current]
        self.infos = {a: {} for a in self.agents}
        self.infos[self.agent_selection] = {"action_mask": self.table.mask()}

    def step(self, action: Any) -> None:
        """The selected agent takes action index `action` (None once it is terminated)."""
        self.table.require_reset("step()")
        if not self.agents:
            raise EnvUsageError("the game is over and every agent is done: reset() to play another")
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            if action is not None:
                raise EnvUsageError(f"{agent} is done: step(None) for each agent after the game, then reset()")
            self._was_dead_step(action)
            return
        self._cumulative_rewards[agent] = 0.0
        rewards, refused = self.table.step(action)
        self.rewards = {a: rewards[self._seat[a]] for a in self.agents}
        if self.table.ended:
            self.terminations = dict.fromkeys(self.agents, True)
            self.infos = {a: {"totals": list(self.table.totals())} for a in self.agents}
        else:
            self._select()
            if refused is not None:
                self.infos[agent]["illegal"] = refused
        self._accumulate_rewards()

    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """(observation, cumulative reward, terminated, truncated, info) of the selected agent (PettingZoo's)."""
        self.table.require_reset("last()")
        if not self.agents:
            raise EnvUsageError("the game is over and every agent is done: reset() to play another")
        return super().last(observe)
