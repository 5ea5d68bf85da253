"""Target play's tables kept on disk, signed and keyed as the solver's table is, so their second use loads them.

Every layer's vectors (`solve_target(keep="all")`: what `bot:target:T` and the target advisor read) are
written beside the mean's table through `cache.save_arrays` (an HMAC with the user's key over the header and
every array; the key names the variant's fingerprint and the digest of the rules', numeric core's and
solver's code) and read back through `cache.load_arrays`, then checked for shape and sense (windows inside
the vectors, probabilities in [0, 1] falling with the target); a file that fails is removed and made again.
The estimate of making them is kept as a small signed record, so that a caller can refuse work it has no
time for (`play` with a bot that needs them) at once, the second time.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..errors import DicecupError
from ..language.model import Variant
from ..locales import N_, Phrase
from ..numeric.objective import Objective
from ..progress import Reporter, task
from . import cache
from .solve import Solution
from .target import (
    MAX_BYTES,
    TargetEstimate,
    TargetTables,
    _Run,
    check_variant,
    estimate_target,
    solve_target,
    target_options,
)

__all__ = ["KIND", "LAYOUT", "TargetBot", "kept_estimate", "target_estimate", "target_kept", "target_tables"]

KIND = "target"
ESTIMATE_KIND = "target-estimate"
LAYOUT = 1
LIMIT = MAX_BYTES + (64 << 20)  # the vectors at most, and the windows beside them

Warn = Callable[[str], None]


def _estimate_json(e: TargetEstimate) -> dict:
    return {
        "states": e.states,
        "entries": e.entries,
        "peak_entries": e.peak_entries,
        "seconds": e.seconds,
        "threads": e.threads,
    }


def _estimate_of(variant_id: str, got: dict) -> TargetEstimate | None:
    try:
        return TargetEstimate(
            variant_id,
            int(got["states"]),
            int(got["entries"]),
            int(got["peak_entries"]),
            float(got["seconds"]),
            int(got["threads"]),
        )
    except (KeyError, TypeError, ValueError):
        return None


def target_kept(solution: Solution) -> bool:
    """Whether target play's tables of the solution's variant are in the cache (a file is there; whether it is
    sound is known only once read)."""
    try:
        return cache.arrays_path(solution.variant, KIND).is_file()
    except OSError:
        return False


def kept_estimate(solution: Solution, warn: Warn | None = None) -> TargetEstimate | None:
    """The estimate of making the tables, as recorded by an earlier run, or None."""
    got = cache.load_record(solution.variant, ESTIMATE_KIND, warn)
    return None if got is None else _estimate_of(solution.variant.id, got)


def target_estimate(solution: Solution, progress: Reporter | None = None, warn: Warn | None = None) -> TargetEstimate:
    """The estimate of making target play's tables (`estimate_target`: windows bounded, the kernel timed), from
    the record of an earlier run where there is one; recorded for the next."""
    known = kept_estimate(solution, warn)
    if known is not None:
        return known
    got = estimate_target(solution, "all", progress)
    cache.save_record(solution.variant, ESTIMATE_KIND, _estimate_json(got), warn)
    return got


def _arrays(tables: TargetTables) -> dict[str, np.ndarray]:
    """The tables as named arrays: windows (lo, hi, off by value slot), every layer's vectors end to end with
    where each layer starts, and which layers have vectors."""
    run = tables._run
    nb = run.nb
    present = np.array([k in run.vecs for k in range(nb)], dtype=bool)
    parts = [run.vecs[k] if present[k] else np.zeros(0) for k in range(nb)]
    starts = np.zeros(nb + 1, dtype=np.int64)
    np.cumsum([len(p) for p in parts], out=starts[1:])
    return {
        "lo": run.lo,
        "hi": run.hi,
        "off": run.off,
        "vec": np.concatenate(parts) if parts else np.zeros(0),
        "starts": starts,
        "present": present,
    }


def _restore(solution: Solution, meta: dict, arrays: dict[str, np.ndarray]) -> TargetTables | None:
    """The tables read back, or None when they do not fit this solution or make no sense (every window must
    lie inside its layer's vector; the chances themselves the signature vouches for, so the mapped vector's
    pages are read only as play needs them)."""
    run = _Run(solution)
    size, nb = solution.index.size, run.nb
    lo, hi, off, vec = arrays["lo"], arrays["hi"], arrays["off"], arrays["vec"]
    starts, present = arrays["starts"], arrays["present"]
    if any(a.dtype != np.int64 or a.shape != (size + 1,) for a in (lo, hi, off)):
        return None
    if vec.dtype != np.float64 or vec.ndim != 1 or starts.shape != (nb + 1,) or present.shape != (nb,):
        return None
    if starts[0] != 0 or (np.diff(starts) < 0).any() or starts[-1] != len(vec) or present.dtype != bool:
        return None
    vecs: dict[int, np.ndarray] = {nb: np.zeros(0)}
    for k in range(nb):
        if present[k]:
            vecs[k] = vec[starts[k] : starts[k + 1]]
            index = run.layers[k][2]
            width = hi[index] - lo[index]
            if (width < 0).any() or (off[index] < 0).any() or (off[index] + width > len(vecs[k])).any():
                return None
    if not (lo[run.layers[-1][2]] == run.lo[run.layers[-1][2]]).all():
        return None  # the full cards' end bonuses are not this solution's
    run.lo, run.hi, run.off, run.vecs = lo, hi, off, vecs
    estimate = _estimate_of(solution.variant.id, meta.get("estimate", {}))
    if estimate is None:
        return None
    return TargetTables(run, estimate, float(meta.get("seconds", 0.0)), "all")


def _load(solution: Solution, warn: Warn | None) -> TargetTables | None:
    got = cache.load_arrays(solution.variant, KIND, warn, limit=LIMIT, mapped=True)
    if got is None:
        return None
    meta, arrays = got
    try:
        tables = _restore(solution, meta, arrays) if meta.get("layout") == LAYOUT else None
    except (KeyError, TypeError, ValueError, IndexError):
        tables = None
    if tables is None:
        (warn or (lambda message: None))("the kept target tables do not fit this table; they are made again")
        try:
            cache.arrays_path(solution.variant, KIND).unlink(missing_ok=True)
        except OSError:
            pass
    return tables


def target_tables(
    solution: Solution,
    progress: Reporter | None = None,
    warn: Warn | None = None,
    max_bytes: int = MAX_BYTES,
    use_cache: bool = True,
) -> tuple[TargetTables, bool]:
    """(target play's tables of every layer, whether they came from the cache): read back where kept and
    sound, else made (`solve_target`, refused past `max_bytes` with the estimate) and kept."""
    if not solution.objective.is_mean:
        raise DicecupError("target play's tables are made from the mean's table: give the mean's solution")
    if use_cache:
        with task(progress, Phrase(N_("loading target play's tables of {variant}"), variant=solution.variant.id)):
            got = _load(solution, warn)
        if got is not None:
            return got, True
    known = kept_estimate(solution, warn) if use_cache else None  # an earlier run's: the time told up front
    tables = solve_target(solution, "all", max_bytes, progress, seconds=None if known is None else known.seconds)
    if use_cache:
        cache.save_record(solution.variant, ESTIMATE_KIND, _estimate_json(tables.estimate), warn)
        meta = {"layout": LAYOUT, "estimate": _estimate_json(tables.estimate), "seconds": tables.seconds}
        with task(progress, Phrase(N_("keeping target play's tables of {variant}"), variant=solution.variant.id)):
            cache.save_arrays(solution.variant, KIND, meta, _arrays(tables), warn, limit=LIMIT)
    return tables, False


class TargetBot:
    """Plays target play for one target T (`bot:target:T`): at each decision the option with the highest
    P(final score >= T) when played for T afterwards (ties: a box before a keep, else as listed). Solves (or
    loads) the mean's table and then the target tables of every layer on first use of a variant."""

    def __init__(self, rng: Any = None, objective: Objective | None = None) -> None:
        if objective is None or objective.target is None:
            raise DicecupError("bot:target needs its target, e.g. bot:target:300")
        self.rng = rng
        self.objective = objective
        self.target = objective.target
        self.name = objective.id
        self._tables: dict[str, TargetTables] = {}

    def tables(self, variant: Variant, progress: Reporter | None = None) -> TargetTables:
        """The target tables of `variant` (once per variant and engine: from the cache, else made and kept)."""
        got = self._tables.get(variant.fingerprint)
        if got is None or got.variant.hooks is not variant.hooks:
            check_variant(variant)
            solution, _ = cache.load_or_solve(variant, progress=progress)
            got = self._tables[variant.fingerprint] = target_tables(solution, progress)[0]
        return got

    def prepare(self, variant: Variant, progress: Reporter | None = None) -> None:
        """Load or make the tables now (a game asks before it starts), telling `progress`."""
        self.tables(variant, progress)

    def choose(self, state: Any) -> Any:
        state.require_decision()
        options = target_options(self.tables(state.variant), state.card, state.dice, state.rolls_left, self.target)
        return options[0].action
