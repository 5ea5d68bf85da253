"""The user's signing key and the folders it guards: where dicecup's cache and state live, and the per-user
secret (a random file, mode 0600, in the state folder, never in the cache folder) that signs every file
dicecup keeps in its cache, so that no file there is trusted unless this user's dicecup wrote it.

Imports nothing heavy (no numpy): the language layer signs the variant documents it keeps with it, and the
solver its tables (`solver.signed`).
"""

from __future__ import annotations

import os
import secrets
import stat
from pathlib import Path

from . import fileio
from .fileio import FileError
from .places import CACHE_ENV, STATE_ENV, user_folder

__all__ = [
    "CACHE_ENV",
    "STATE_ENV",
    "KEY_FILE",
    "KEY_BYTES",
    "CacheInvalid",
    "CacheUnavailable",
    "cache_dir",
    "state_dir",
    "key_path",
    "existing_key",
    "signing_key",
]

KEY_FILE = "cache.key"
KEY_BYTES = 32


class CacheInvalid(Exception):
    """A cache file that must not be used (says why); it is deleted and rebuilt."""


class CacheUnavailable(Exception):
    """The cache cannot be used at all (no key, a file in the way, no permission); says why."""


# ---------------------------------------------------------------------- places


def cache_dir() -> Path:
    """$DICECUP_CACHE_DIR, else the user's cache folder (XDG_CACHE_HOME, ~/.cache, %LOCALAPPDATA%) / dicecup."""
    return user_folder("cache", CACHE_ENV)


def state_dir() -> Path:
    """$DICECUP_STATE_DIR, else the user's state folder (XDG_STATE_HOME, ~/.local/state, %LOCALAPPDATA%) / dicecup."""
    return user_folder("state", STATE_ENV)


def key_path() -> Path:
    """Where the per-user key that signs the tables lives."""
    return state_dir() / KEY_FILE


# ---------------------------------------------------------------------- the key


def _inside(path: Path, folder: Path) -> bool:
    """Whether `path` lies in `folder` (symlinks resolved)."""
    real, top = os.path.realpath(path), os.path.realpath(folder)
    try:
        return os.path.commonpath([real, top]) == top
    except ValueError:  # different drives (Windows)
        return False


def _read_key(path: Path) -> bytes:
    """The key file's bytes, if it is a regular file of ours, private, of the right size."""
    st = os.stat(path)
    if not stat.S_ISREG(st.st_mode) or st.st_size != KEY_BYTES:
        raise CacheUnavailable(f"the key file {path} is not a {KEY_BYTES}-byte file; remove it to make a new key")
    if os.name == "posix" and (st.st_uid != os.getuid() or st.st_mode & 0o077):
        raise CacheUnavailable(
            f"the key file {path} is not private to this user (mode {stat.S_IMODE(st.st_mode):o}); "
            "remove it to make a new key"
        )
    return fileio.read_bytes(path, limit=KEY_BYTES, what="key file")


def signing_key() -> bytes:
    """The per-user key that signs tables, created at first use (random, mode 0600) outside the cache folder."""
    path = key_path()
    if _inside(path, cache_dir()):
        raise CacheUnavailable(
            f"the key file {path} would be inside the cache folder {cache_dir()}; set {STATE_ENV} elsewhere"
        )
    try:
        return _read_key(path)
    except FileNotFoundError:
        pass
    except (OSError, FileError) as exc:
        raise CacheUnavailable(f"cannot read the key file {path}: {exc}") from None
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        tmp = path.with_name(f".{KEY_FILE}.{os.getpid()}.{secrets.token_hex(4)}")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o600)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(secrets.token_bytes(KEY_BYTES))
                fh.flush()
                os.fsync(fh.fileno())
            try:
                os.link(tmp, path)  # all or nothing, and never over a key another process made first
            except FileExistsError:
                pass
        finally:
            tmp.unlink(missing_ok=True)
        return _read_key(path)
    except (OSError, FileError) as exc:
        raise CacheUnavailable(f"cannot create the key file {path}: {exc}") from None


def existing_key() -> bytes | None:
    """The per-user key where this user has one already, else None (nothing is created): what keeps a cache
    that only saves time, so that a command that solves nothing writes no key nor folder."""
    path = key_path()
    if _inside(path, cache_dir()):
        return None
    try:
        return _read_key(path)
    except FileNotFoundError:
        return None
    except (OSError, FileError) as exc:
        raise CacheUnavailable(f"cannot read the key file {path}: {exc}") from None
