"""The strategy table on disk: one .npz per (variant, options, rules code, solver version).

The file holds the state values and the small arrays that rebuild the state
index, with a JSON header carrying the cache key and a SHA-256 of the arrays.
It is written atomically (dicecup.fileio.write_atomic). A file that does not
load, has another key, or fails its checksum is deleted and the variant is
solved again: a cache is never trusted blindly.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import sys
from collections.abc import Callable
from importlib import metadata
from pathlib import Path

import numpy as np

from ..fileio import write_atomic
from ..language.model import Variant
from .index import StateIndex
from .solve import DEFAULT_MAX_STATES, SOLVER_VERSION, Solution, solve

__all__ = ["cache_dir", "cache_key", "cache_path", "load", "save", "load_or_solve", "CACHE_ENV", "FORMAT"]

CACHE_ENV = "DICECUP_CACHE_DIR"
FORMAT = "dicecup/strategy-table"
_ARRAYS = ("values", "codes", "pmin", "dims")


def cache_dir() -> Path:
    """$DICECUP_CACHE_DIR, else the user's cache folder (XDG_CACHE_HOME, ~/.cache, %LOCALAPPDATA%) / dicecup."""
    env = os.environ.get(CACHE_ENV)
    if env:
        return Path(env)
    if sys.platform == "win32" and os.environ.get("LOCALAPPDATA"):
        return Path(os.environ["LOCALAPPDATA"]) / "dicecup" / "cache"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches" / "dicecup"
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "dicecup"


_SCORING_CORE = ("language",)  # the folders of the engine that decide scores


def _rules_digest() -> str:
    """What else the values depend on: the code that scores (engine core, rule plugins), the
    solver's own code, and the installed third-party plugin packages."""
    h = hashlib.sha256()
    from .. import __version__, plugins

    h.update(__version__.encode())
    core = Path(__file__).parent.parent
    files = [f for name in _SCORING_CORE for f in sorted((core / name).glob("*.py"))]
    files += sorted(Path(plugins.__file__).parent.glob("*.py")) + sorted(Path(__file__).parent.glob("*.py"))
    for path in files:
        if path.exists():
            h.update(path.name.encode())
            h.update(path.read_bytes())
    try:
        eps = metadata.entry_points(group="dicecup")
    except Exception:  # pragma: no cover - broken metadata: still a usable key
        eps = ()
    for ep in sorted(eps, key=lambda e: e.name):
        dist = getattr(ep, "dist", None)
        h.update(f"{ep.name}={ep.value}@{getattr(dist, 'version', '?')}".encode())
    return h.hexdigest()


def cache_key(variant: Variant) -> str:
    """Hash of the compiled variant (with options), the rules' code and the solver version."""
    text = json.dumps([variant.id, variant.fingerprint, SOLVER_VERSION, _rules_digest()])
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def _stem(variant: Variant) -> str:
    """File name prefix of one variant with its options: `<id>-<fingerprint>`."""
    safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in variant.id)
    return f"{safe}-{variant.fingerprint[:16]}"


def cache_path(variant: Variant) -> Path:
    return cache_dir() / f"{_stem(variant)}-{cache_key(variant)}.npz"


def _drop_stale(path: Path, variant: Variant) -> None:
    """Delete tables of the same variant and options made by other code (their key differs)."""
    for old in path.parent.glob(f"{_stem(variant)}-*.npz"):
        if old != path:
            old.unlink(missing_ok=True)


def _checksum(arrays: dict[str, np.ndarray]) -> str:
    h = hashlib.sha256()
    for name in _ARRAYS:
        a = np.ascontiguousarray(arrays[name])
        h.update(name.encode())
        h.update(str(a.dtype).encode())
        h.update(str(a.shape).encode())
        h.update(a.tobytes())
    return h.hexdigest()


def save(solution: Solution, path: Path | None = None) -> Path:
    """Write the table atomically; returns the path."""
    path = path or cache_path(solution.variant)
    path.parent.mkdir(parents=True, exist_ok=True)
    ix = solution.index
    arrays = {"values": solution.values, "codes": ix.class_codes, "pmin": ix.class_pmin, "dims": ix.class_dims}
    header = {
        "format": FORMAT,
        "key": cache_key(solution.variant),
        "variant": solution.variant.id,
        "fingerprint": solution.variant.fingerprint,
        "solver_version": SOLVER_VERSION,
        "states": solution.states,
        "seconds": solution.seconds,
        "groups": [list(g) for g in ix.groups],
        "clamps": [list(c) for c in ix.clamp_bounds],
        "box_min": ix.box_min,
        "box_max": ix.box_max,
        "flags": {str(b): list(v) for b, v in ix.flag_values.items()},
        "sha256": _checksum(arrays),
    }
    buf = io.BytesIO()
    np.savez(buf, header=np.frombuffer(json.dumps(header).encode(), dtype=np.uint8), **arrays)
    write_atomic(path, buf.getvalue())
    _drop_stale(path, solution.variant)
    return path


class CacheInvalid(Exception):
    """A cache file that must not be used (says why)."""


def load(variant: Variant, path: Path | None = None) -> Solution:
    """The cached table for `variant`; raises CacheInvalid (or FileNotFoundError) when unusable."""
    path = path or cache_path(variant)
    try:
        with np.load(path, allow_pickle=False) as data:
            header = json.loads(bytes(data["header"]).decode())
            arrays = {name: data[name] for name in _ARRAYS}
    except FileNotFoundError:
        raise
    except Exception as exc:
        raise CacheInvalid(f"unreadable ({type(exc).__name__}: {exc})") from None
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise CacheInvalid("not a dicecup strategy table")
    if header.get("key") != cache_key(variant):
        raise CacheInvalid("stale: made for other rules or another solver version")
    if header.get("sha256") != _checksum(arrays):
        raise CacheInvalid("checksum mismatch (the file is damaged)")
    try:
        index = StateIndex(variant, header["groups"], header["clamps"], header["box_min"], header["box_max"],
                           arrays["codes"], arrays["pmin"], arrays["dims"])
        if {str(b): list(v) for b, v in index.flag_values.items()} != header["flags"]:
            raise CacheInvalid("stale: the rules declare other state flags")
        if index.size + 1 != len(arrays["values"]):
            raise CacheInvalid("inconsistent: value array does not match the index")
        return Solution(variant, index, arrays["values"], int(header["states"]), float(header["seconds"]))
    except CacheInvalid:
        raise
    except Exception as exc:
        raise CacheInvalid(f"inconsistent ({type(exc).__name__}: {exc})") from None


def load_or_solve(
    variant: Variant,
    max_states: int = DEFAULT_MAX_STATES,
    progress: Callable[[str, int, int], None] | None = None,
    *,
    use_cache: bool = True,
    warn: Callable[[str], None] | None = None,
) -> tuple[Solution, bool]:
    """(solution, whether it came from the cache). A bad cache file is reported, deleted and rebuilt."""
    if use_cache:
        path = cache_path(variant)
        try:
            return load(variant, path), True
        except FileNotFoundError:
            pass
        except CacheInvalid as exc:
            if warn:
                warn(f"cache file {path} ignored and rebuilt: {exc}")
            path.unlink(missing_ok=True)
    solution = solve(variant, max_states=max_states, progress=progress)
    if use_cache:
        try:
            save(solution)
        except OSError as exc:
            if warn:
                warn(f"could not write the cache ({exc}); the result is not cached")
    return solution, False
