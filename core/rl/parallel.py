"""The PettingZoo parallel environment: several players share one game; each step, the player to act acts.

    >>> env = DicecupParallelEnv(variant="yahtzee", players=2)
    >>> obs, infos = env.reset(seed=1)
    >>> while env.agents:
    ...     actions = {a: env.action_space(a).sample(obs[a]["action_mask"]) for a in env.agents}
    ...     obs, rewards, terminations, truncations, infos = env.step(actions)

Every live agent sends an action each step (PettingZoo's parallel API), but the game is played in turns: only
the acting agent's action is taken (its mask is the only one with legal actions; the others' actions are not
read and may be any index). Observations, masks and rewards are the AEC environment's (`DicecupAECEnv`), which
plays the same game for the same seed; for many one-player games at once see `DicecupVectorEnv`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from pettingzoo import ParallelEnv

from ..language.engine import Engine
from .seats import Seats
from .table import EnvUsageError, check_options, checked_seed, next_seed, whole_number_from

__all__ = ["DicecupParallelEnv"]


class DicecupParallelEnv(Seats, ParallelEnv[str, dict[str, np.ndarray], int]):
    """A game of a dicecup variant between `players` agents, `player_0`, `player_1`, ... in seat order.

    Each observation is a dict of the `observation` vector (from that player's seat) and the `action_mask`
    (all 0 for a player not to act; the acting agent's info holds it too). All agents terminate when the game
    ends; after `max_illegal` illegal actions in a row all are truncated. Misuse is `EnvUsageError`."""

    metadata: dict[str, Any] = {"render_modes": ["ansi"], "render_fps": 4, "name": "dicecup_parallel_v0"}

    def __init__(
        self,
        variant: Any = "yahtzee",
        players: int = 2,
        options: Mapping[str, Any] | None = None,
        engine: Engine | None = None,
        illegal: str = "penalise",
        penalty: float = -1.0,
        max_illegal: int = 100,
        render_mode: str | None = None,
    ) -> None:
        self.render_mode = render_mode
        self.seat(variant, players, options, engine, (illegal, penalty))
        self.max_illegal = whole_number_from(max_illegal, "max_illegal", 1, 2**31)
        self.agents: list[str] = []
        self._illegal_run = 0

    def _observations(self) -> dict[str, dict[str, np.ndarray]]:
        acting = -1 if self.table.ended else self.table.state.current
        mask = self.table.mask()
        none = np.zeros(self.encoding.size, dtype=np.int8)
        return {
            a: {"observation": self.table.observe(i), "action_mask": mask if i == acting else none}
            for i, a in enumerate(self.possible_agents)
        }

    def _infos(self) -> dict[str, dict[str, Any]]:
        infos: dict[str, dict[str, Any]] = {a: {} for a in self.possible_agents}
        if not self.table.ended:
            infos[self.possible_agents[self.table.state.current]]["action_mask"] = self.table.mask()
        return infos

    def reset(
        self, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, dict[str, np.ndarray]], dict[str, dict[str, Any]]]:
        """A new game; its rolls come from a stream seeded from `seed` (as the AEC environment's)."""
        check_options(options)
        seed = checked_seed(seed)
        if seed is not None:
            self._seed = seed
        self._seed = next_seed(self._seed)  # the next unseeded reset plays another game
        self.table.reset(self._seed)
        self.agents = list(self.possible_agents)
        self._illegal_run = 0
        return self._observations(), self._infos()

    def step(self, actions: Mapping[str, Any]) -> tuple[dict[str, Any], ...]:
        """The acting agent's action is taken (the others' are not read)."""
        self.table.require_reset("step()")
        if not self.agents:
            raise EnvUsageError("the game is over and every agent is done: reset() to play another")
        if not isinstance(actions, Mapping):
            raise EnvUsageError(f"step() takes a dict of actions by agent, got {type(actions).__name__}")
        acting = self.possible_agents[self.table.state.current]
        if acting not in actions:
            raise EnvUsageError(f"{acting} is to act: step() needs its action")
        rewards, refused = self.table.step(actions[acting])
        self._illegal_run = self._illegal_run + 1 if refused is not None else 0
        ended, cut = self.table.ended, self._illegal_run >= self.max_illegal
        agents = self.agents
        obs, infos = self._observations(), self._infos()
        if refused is not None:
            infos[acting]["illegal"] = refused
        if ended:
            infos = {a: {"totals": list(self.table.totals())} for a in agents}
        self.agents = [] if ended or cut else agents
        return (
            {a: obs[a] for a in agents},
            {a: rewards[self._seat[a]] for a in agents},
            dict.fromkeys(agents, ended),
            dict.fromkeys(agents, cut and not ended),
            {a: infos[a] for a in agents},
        )
