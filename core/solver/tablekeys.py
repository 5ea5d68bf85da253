"""What names a strategy table in the cache: its key (the compiled variant, the code that decides its values,
the solver version, the objective) and its file's name."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path

from ..language.model import Variant
from ..numeric.objective import MEAN, Objective
from ..signing import cache_dir
from .solve import SOLVER_VERSION

__all__ = ["cache_key", "cache_path", "MAX_ID_CHARS"]

MAX_ID_CHARS = 64  # of the variant id in a file name (the compiler caps ids at 64 too)


#: the folders of dicecup besides the solver's own whose code decides a table's values: the rules (language) and
#: the numeric core the solver computes with (the turn recursion, the layer kernels' sources, the state coding)
_SCORING_CORE = ("language", "numeric")
#: modules of the numeric core the solver never computes with (the simulator's, the distributions', the
#: learning environments', `bot:win`'s and the duel's kernels): editing them leaves every solved table as it was
_NOT_SOLVING = frozenset(
    {
        "moves.py",
        "play.py",
        "draws.py",
        "scoreclass.py",
        "intrinsics.py",
        "propagate.py",
        "curves.py",
        "vecstep.py",
        "duel.py",
    }
)


@lru_cache(maxsize=1)
def _rules_digest() -> str:
    """What else the values depend on: dicecup's version and the source of the code that scores (the
    engine's language layer, the built-in rule plugins) and of the solver itself, with the numeric core it
    computes with (once per process).

    The bytes of each file are hashed, not its size and time: a file edited in place, copied with its
    time kept (`cp -p`, rsync, a wheel's fixed timestamps) or edited twice within the clock's tick must
    still change the key, and a stale table that matches its key is served without recomputing its values
    (`verify` runs once per signed table). The files are few and small, so hashing them is cheap.

    Third-party plugins are not listed here: each variant's fingerprint already names every plugin that
    implements it (its rules, patterns and scorers, and any plugin whose rule hooks apply to all
    variants) with its distribution's version and a hash of its source (`Engine._identity`), so a plugin
    that can change a table's values changes its key, and one that cannot (an unrelated package
    installed) no longer makes every table stale. Listing the installed entry points here too cost
    every process a second scan of every installed package's metadata after the engine's own.
    """
    from .. import __version__

    return _digest(__version__, _rules_files())


def _rules_files() -> list[Path]:
    """The source files `_rules_digest` hashes: the engine's language layer, the numeric core, the built-in
    rule plugins, the solver."""
    from .. import plugins

    core = Path(__file__).parent.parent
    files = [f for name in _SCORING_CORE for f in sorted((core / name).glob("*.py")) if f.name not in _NOT_SOLVING]
    return files + sorted(Path(plugins.__file__).parent.glob("*.py")) + sorted(Path(__file__).parent.glob("*.py"))


def _digest(version: str, files: Iterable[Path]) -> str:
    """SHA-256 of `version` and each file's name and bytes (a file gone since it was listed is skipped)."""
    h = hashlib.sha256()
    h.update(version.encode())
    for path in files:
        if path.exists():
            h.update(path.name.encode())
            h.update(path.read_bytes())
    return h.hexdigest()


def cache_key(variant: Variant, objective: Objective = MEAN) -> str:
    """Hash of the compiled variant (options and the plugins implementing it: its fingerprint),
    the rules' code, the solver version and the objective (a risk table is another table than the mean's;
    the mean's key is the one it had before objectives)."""
    parts = [variant.id, variant.fingerprint, SOLVER_VERSION, _rules_digest()]
    text = json.dumps(parts if objective.is_mean else [*parts, objective.id])
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def _stem(variant: Variant) -> str:
    """File name prefix of one variant with its options: `<id>-<fingerprint>` (at most 81 characters)."""
    safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in variant.id[:MAX_ID_CHARS])
    return f"{safe}-{variant.fingerprint[:16]}"


def cache_path(variant: Variant, objective: Objective = MEAN) -> Path:
    """The table's file: `<id>-<fingerprint>-<key>.npz` in the cache folder (under 120 characters); a risk
    objective's `<id>-<fingerprint>-risk-<key>.npz`."""
    kind = "" if objective.is_mean else "risk-"
    return cache_dir() / f"{_stem(variant)}-{kind}{cache_key(variant, objective)}.npz"


def _drop_stale(path: Path, variant: Variant) -> None:
    """Delete tables of the same variant and options made by other code (their key differs); risk tables
    (one per theta) are left alone."""
    try:
        for old in path.parent.glob(f"{_stem(variant)}-*.npz"):
            if old.name.startswith(f"{_stem(variant)}-risk-"):
                continue
            if old != path and old.is_file() and not old.is_symlink():
                old.unlink(missing_ok=True)
    except OSError:
        pass  # another process may be cleaning too; stale files only cost space
