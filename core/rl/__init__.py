"""Environments for learning agents: gymnasium environments for one player (one game, or many stepped together
in compiled code) and PettingZoo ones for several (AEC and parallel).

Both play any variant through the engine's `GameState` (legal actions, apply, seeded rolls) and share
one encoding (`Encoding`): a fixed discrete action space of keeps, boxes and rule actions with an
action mask, and an observation as a documented vector or a dict of named parts. Needs the optional
extra: `.venv/bin/pip install -e '.[rl]'` in the checkout (gymnasium and pettingzoo); nothing in the engine imports this package.

    >>> import gymnasium, dicecup.rl
    >>> env = gymnasium.make("dicecup/Dicecup-v0", variant="yatzy")
    >>> envs = gymnasium.make_vec("dicecup/Dicecup-v0", num_envs=4096, vectorization_mode="vector_entry_point")
"""

from __future__ import annotations

import importlib.util

from ..errors import DicecupError, install_extra

__all__ = [
    "MissingExtra",
    "DicecupEnv",
    "DicecupAECEnv",
    "DicecupParallelEnv",
    "DicecupVectorEnv",
    "EngineVectorEnv",
    "Encoding",
    "EncodingError",
    "ENV_ID",
    "EnvUsageError",
    "IllegalStep",
]


class MissingExtra(DicecupError, ImportError):
    """`dicecup.rl` imported without the packages of its extra (gymnasium, pettingzoo)."""


_missing = [name for name in ("gymnasium", "pettingzoo") if importlib.util.find_spec(name) is None]
if _missing:
    raise MissingExtra(
        f"dicecup.rl needs {' and '.join(_missing)}, which {'is' if len(_missing) == 1 else 'are'} not installed; "
        + install_extra("rl")
    )

from .aec import DicecupAECEnv  # noqa: E402  (after the check, so a missing extra gives the one error above)
from .encoding import Encoding, EncodingError  # noqa: E402
from .env import ENV_ID, DicecupEnv  # noqa: E402
from .parallel import DicecupParallelEnv  # noqa: E402
from .table import EnvUsageError, IllegalStep  # noqa: E402
from .vector import DicecupVectorEnv, EngineVectorEnv  # noqa: E402
