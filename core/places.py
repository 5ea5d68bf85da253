"""Where dicecup keeps its files for this user: one rule for the cache, the state and the data folders."""

from __future__ import annotations

import os
import sys
from pathlib import Path

__all__ = ["CACHE_ENV", "STATE_ENV", "user_folder"]

CACHE_ENV = "DICECUP_CACHE_DIR"  # moves the cache folder (solved tables, compiled kernels)
STATE_ENV = "DICECUP_STATE_DIR"  # moves the state folder (the key that signs the cache)

#: each kind's XDG variable, its default under the home folder, and its macOS folder (None: as on Linux)
_KINDS: dict[str, tuple[str, tuple[str, ...], tuple[str, ...] | None]] = {
    "cache": ("XDG_CACHE_HOME", (".cache",), ("Library", "Caches", "dicecup")),
    "state": ("XDG_STATE_HOME", (".local", "state"), None),
    "data": ("XDG_DATA_HOME", (".local", "share"), ("Library", "Application Support", "dicecup")),
}


def user_folder(kind: str, override: str) -> Path:
    """The folder of `kind` ("cache", "state" or "data"): $`override` when set, else the platform's place for it
    (%LOCALAPPDATA%/dicecup/KIND on Windows, ~/Library/... on macOS, $XDG_..._HOME or its default / dicecup)."""
    env = os.environ.get(override)
    if env:
        return Path(env)
    xdg, default, mac = _KINDS[kind]
    if sys.platform == "win32" and os.environ.get("LOCALAPPDATA"):
        return Path(os.environ["LOCALAPPDATA"]) / "dicecup" / kind
    if sys.platform == "darwin" and mac is not None:
        return Path.home().joinpath(*mac)
    return Path(os.environ.get(xdg) or Path.home().joinpath(*default)) / "dicecup"
