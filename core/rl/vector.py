"""The vector environment: N one-player games stepped together in compiled code (`numeric.vecstep`).

    >>> envs = gymnasium.make_vec("dicecup/Dicecup-v0", num_envs=4096, vectorization_mode="vector_entry_point")
    >>> obs, info = envs.reset(seed=0)
    >>> obs, reward, terminated, truncated, info = envs.step(actions)   # one action index per game

Same encoding as `DicecupEnv` (actions, mask, observation vector), the mask in `info["action_mask"]` and in
`action_masks()`, gymnasium 1.x next-step autoreset: the step after a game ends starts the next one (its action
is not read, its reward is 0). Game i of `reset(seed=s)` plays what `DicecupEnv.reset(seed=s + i)` plays, and
each later game what that environment's next `reset()` plays. A variant the learned tables cannot hold (rule
actions, banked rolls, multiplying columns, rules reading the game around the card) is played by N
`DicecupEnv`s instead (`EngineVectorEnv`), with a warning saying why; `backend` says which one plays.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import gymnasium
import numpy as np
from gymnasium.vector import AutoresetMode, SyncVectorEnv, VectorEnv
from gymnasium.vector.utils import batch_space

from ..errors import DicecupError
from ..language.engine import Engine
from ..numeric import compiled as kernels
from ..numeric import vecstep
from .encoding import Encoding
from .env import DicecupEnv, episode_stream
from .exact import ExactSignal
from .table import EnvUsageError, check_options, checked_seed, resolve_variant, whole_number_from
from .vectables import RuleArrays, tables_for, untabled, vec_dice, vec_layout

__all__ = ["DicecupVectorEnv", "EngineVectorEnv", "make_vector", "MAX_ENVS"]

MAX_ENVS = 1 << 22
LEARN_ROUNDS = 16  # look-ups retried after learning in one step (a class keyed anew asks again)


def make_vector(num_envs: int = 1, variant: Any = "yahtzee", **kwargs: Any) -> VectorEnv:
    """The vector entry point of `dicecup/Dicecup-v0`: the compiled `DicecupVectorEnv` where the learned tables
    hold the variant, else `EngineVectorEnv` (N `DicecupEnv`s) with a warning saying why."""
    count = whole_number_from(num_envs, "num_envs", 1, MAX_ENVS)
    kwargs.pop("max_episode_steps", None)
    options, engine = kwargs.pop("options", None), kwargs.pop("engine", None)
    compiled, engine = resolve_variant(variant, options, engine)
    why = untabled(compiled, Encoding(compiled, engine, 1))
    if why is None:
        arrays = tables_for(compiled)
        if isinstance(arrays, str):
            why = arrays
        else:
            return DicecupVectorEnv(count, compiled, engine=engine, rules=arrays, **kwargs)
    warnings.warn(f"{compiled.id}: stepped by the engine, not the compiled tables: {why}", stacklevel=2)
    return EngineVectorEnv(count, compiled, engine=engine, **kwargs)


class DicecupVectorEnv(VectorEnv[np.ndarray, np.ndarray, np.ndarray]):
    """N one-player games of a variant the learned tables hold, stepped in compiled code.

    `threads`: how many threads step the games (default: the cores this process may use).
    `exact=True` adds the solver's signal to `info`: `action_values` [N, actions] (each legal action's
    expected final total, NaN elsewhere) and `regret` [N] (the best value less the taken action's, NaN where
    no decision was taken)."""

    metadata: dict[str, Any] = {"autoreset_mode": AutoresetMode.NEXT_STEP, "render_modes": []}
    backend = "compiled"

    def __init__(
        self,
        num_envs: int,
        variant: Any = "yahtzee",
        options: Mapping[str, Any] | None = None,
        engine: Engine | None = None,
        illegal: str = "penalise",
        penalty: float = -1.0,
        max_illegal: int = 100,
        exact: bool = False,
        rules: RuleArrays | None = None,
        threads: int | None = None,
        observation: str = "vector",
        render_mode: str | None = None,
    ) -> None:
        if illegal != "penalise":
            raise DicecupError("the vector environment penalises illegal actions (illegal='penalise')")
        if observation != "vector" or render_mode is not None:
            raise DicecupError(
                "the vector environment gives observation vectors and does not render: leave observation and "
                "render_mode out (Encoding.as_dict gives a vector's named parts)"
            )
        self.num_envs = whole_number_from(num_envs, "num_envs", 1, MAX_ENVS)
        compiled, engine = resolve_variant(variant, options, engine)
        self.encoding = enc = Encoding(compiled, engine, 1)
        why = untabled(compiled, enc)
        if why is not None:
            raise DicecupError(f"{compiled.id} cannot be stepped by the compiled tables: {why}")
        self.variant = compiled
        self.rules = rules if rules is not None else RuleArrays(compiled)
        self.single_action_space = enc.action_space
        self.single_observation_space = enc.vector_space
        self.action_space = batch_space(enc.action_space, self.num_envs)
        self.observation_space = batch_space(enc.vector_space, self.num_envs)
        self._dice = vec_dice(compiled, enc)
        max_illegal = whole_number_from(max_illegal, "max_illegal", 1, 2**31)
        self._layout = vec_layout(compiled, enc, _penalty(penalty), max_illegal)
        n = self.num_envs
        self._games = vecstep.new_games(n, len(compiled.box_ids))
        self._out = vecstep.VecOut(
            obs=np.zeros((n, enc.length), dtype=np.float32),
            mask=np.zeros((n, enc.size), dtype=np.int8),
            reward=np.zeros(n),
            terminated=np.zeros(n, dtype=bool),
            truncated=np.zeros(n, dtype=bool),
            refused=np.zeros(n, dtype=bool),
            changed=np.zeros(n, dtype=bool),
            missing=np.zeros(n, dtype=np.int64),
        )
        self._kernels = vecstep.compiled_names()
        self._none = np.full(n, -1, dtype=np.int64)  # no action: a pass of look-ups and observations only
        self._threads = kernels.threads() if threads is None else whole_number_from(threads, "threads", 1, 256)
        self._helpers = min(self._threads, -(-n // vecstep.BLOCK)) - 1  # threads besides the caller's
        self._pool = ThreadPoolExecutor(self._helpers) if self._helpers else None
        self._exact = ExactSignal(compiled, enc) if exact else None
        self._started = False

    # ------------------------------------------------------------------ gymnasium's API

    def reset(
        self, *, seed: int | Sequence[int | None] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Every game starts again. `seed`: an int s (game i seeded s + i, as gymnasium's vector environments
        do), a list of N seeds (None: that game unseeded), or None (each game the next of its own stream)."""
        check_options(options)
        seeds = _seeds(seed, self.num_envs)
        if seed is not None and isinstance(seed, int):
            self._np_random, self._np_random_seed = gymnasium.utils.seeding.np_random(seed)
        gm = self._games
        for i, s in enumerate(seeds):
            if s is not None or not self._started:
                gm.episodes[i] = episode_stream(s, self.np_random if s is None else None)
        self._kernels["_restart"](gm, self._dice, np.arange(self.num_envs, dtype=np.int64), self._out)
        self._started = True
        self._run(self._none)
        self._settle()
        info = self._info()
        return self._out.obs.copy(), info

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """One action index per game; a game that ended at the last step starts the next one instead."""
        if not self._started:
            raise EnvUsageError("step() before reset(): call reset() first to deal the games")
        act = _actions(actions, self.num_envs, self.encoding.size)
        taken = self._exact.values.copy() if self._exact is not None else None
        was_done = self._games.done.copy()
        self._run(act)
        self._settle()
        out = self._out
        info = self._info()
        if out.refused.any():
            info["illegal"], info["_illegal"] = out.refused.copy(), out.refused.copy()
        if taken is not None:
            info["regret"] = _regret(taken, act, was_done | out.refused)
        return out.obs.copy(), out.reward.copy(), out.terminated.copy(), out.truncated.copy(), info

    def action_masks(self) -> np.ndarray:
        """The legal actions of every game now [N, actions] (0/1; all 0 for a game that just ended)."""
        if not self._started:
            raise EnvUsageError("the action mask before reset(): call reset() first to deal the games")
        return self._out.mask.copy()

    def close_extras(self, **kwargs: Any) -> None:
        """Keep what the rule tables learned in the user's cache, for the next process; stop the threads."""
        if self._pool is not None:
            self._pool.shutdown()
        if self._started:
            self.rules.keep()

    # ------------------------------------------------------------------ the kernel's look-ups

    def _run(self, actions: np.ndarray) -> None:
        """One pass of the kernel over every game (`vecstep._step_games`) on the environment's threads."""
        taken = np.zeros(1, dtype=np.int64)
        tables, play = self.rules.arrays(), self._kernels["_step_games"]
        args = (self._games, self._dice, tables, self._layout, actions, self._out, taken)
        helpers = [self._pool.submit(lambda: play(*args)) for _ in range(self._helpers)] if self._pool else []
        play(*args)  # this thread takes blocks too: the kernel releases the GIL
        for done in helpers:
            done.result()

    def _settle(self) -> None:
        """Learn from the rules what the tables did not hold for the last pass (a card's classes, a roll's
        legal boxes), and pass again over the games, until every game is written."""
        gm, out = self._games, self._out
        for _ in range(LEARN_ROUNDS):
            cards = np.flatnonzero(out.changed)
            legal = np.flatnonzero(out.missing & vecstep.MISSING_LEGAL)
            if cards.size == 0 and legal.size == 0:
                break
            rekeyed = self.rules.rekeyed
            if cards.size:
                self.rules.learn(gm.vals[cards], out.missing[cards])
            if legal.size:
                first = (gm.used[legal] == 1).astype(np.int64)
                self.rules.learn_legal(gm.cls[legal, 1], first, gm.hand[legal] - self._dice.lo_roll)
            tables = self.rules.arrays()
            if self.rules.rekeyed == rekeyed:
                which = np.union1d(cards, legal).astype(np.int64)
            else:  # a table's classes were numbered anew: every game's are looked up again
                out.changed[:] = True
                which = np.arange(self.num_envs, dtype=np.int64)
            self._kernels["_settle_some"](gm, self._dice, tables, self._layout, out, which)
        else:
            raise DicecupError("internal error: the learned tables did not settle")
        if self._exact is not None:
            self._exact.update(gm, self._dice, out.mask)

    def _info(self) -> dict[str, Any]:
        mask = self._out.mask.copy()
        info: dict[str, Any] = {"action_mask": mask, "_action_mask": np.ones(self.num_envs, dtype=bool)}
        if self._exact is not None:
            info["action_values"] = self._exact.values.copy()
        return info


class EngineVectorEnv(SyncVectorEnv):
    """N `DicecupEnv`s stepped one after another by the engine: what plays a variant the tables cannot hold
    (with the same seeds, masks and autoreset as `DicecupVectorEnv`)."""

    backend = "engine"

    def __init__(self, num_envs: int, variant: Any = "yahtzee", engine: Engine | None = None, **kwargs: Any) -> None:
        count = whole_number_from(num_envs, "num_envs", 1, MAX_ENVS)
        exact = bool(kwargs.pop("exact", False))
        shared = Engine() if engine is None else engine

        def make() -> DicecupEnv:
            return DicecupEnv(variant, engine=shared, exact=exact, **kwargs)

        super().__init__([make for _ in range(count)], autoreset_mode=AutoresetMode.NEXT_STEP)

    def action_masks(self) -> np.ndarray:
        """The legal actions of every game now [N, actions]."""
        return np.stack([env.unwrapped.action_masks() for env in self.envs])  # type: ignore[attr-defined]


def _seeds(seed: Any, n: int) -> list[int | None]:
    """The seed of each game from reset's `seed` (an int s: s + i; a list of N; None)."""
    if seed is None:
        return [None] * n
    if isinstance(seed, list | tuple):
        if len(seed) != n:
            raise EnvUsageError(f"reset(seed=[...]) takes one seed per game: {n} of them, got {len(seed)}")
        return [checked_seed(s) for s in seed]
    first = checked_seed(seed)
    assert first is not None
    return [first + i for i in range(n)]


def _actions(actions: Any, n: int, size: int) -> np.ndarray:
    """The actions as int64 [N], each an index of the action space; EnvUsageError otherwise."""
    try:
        arr = np.asarray(actions)
    except (TypeError, ValueError) as exc:
        raise EnvUsageError(f"step() takes {n} action indices, got {type(actions).__name__}") from exc
    if arr.shape != (n,) or arr.dtype.kind not in "iu":
        raise EnvUsageError(f"step() takes {n} whole action indices (shape ({n},)), got {arr.dtype} {arr.shape}")
    if n and (arr.min() < 0 or arr.max() >= size):
        raise EnvUsageError(f"an action is outside the action space: indices run from 0 to {size - 1}")
    return np.ascontiguousarray(arr, dtype=np.int64)


def _penalty(penalty: Any) -> float:
    from .table import finite_number

    return finite_number(penalty, "penalty")


def _regret(values: np.ndarray, actions: np.ndarray, skipped: np.ndarray) -> np.ndarray:
    """The best value less the taken action's, per game (NaN where the step took no decision)."""
    rows = np.arange(len(actions))
    best = np.nanmax(np.where(np.isnan(values), -np.inf, values), axis=1)
    out = best - values[rows, actions]
    out[skipped] = np.nan
    return np.where(np.abs(out) < 1e-9, 0.0, out)
