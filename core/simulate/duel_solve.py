"""The exact two-player game at scale: layer by layer over the card pairs that occur, each with its own lead bound.

Player one moves with both cards at k boxes filled, player two with k against k + 1, so a layer is (the
mover's filled boxes, the other's) and its positions are every pair of their states times the leads
|d| <= R of that layer: R is the least of how far the points scored so far can lead and how far the points
still to come can move (past it the lead's sign decides). A layer's values are folded by the compiled duel
kernel (`numeric.duel`) from the next layer's, in chunks of movers; with a work folder every layer is a
memory-mapped file and every finished chunk is recorded with its digest, so a killed run goes on from the
last finished chunk. `plan` sizes the run (values, memory, disk, time) before anything starts.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from attrs import evolve, field, frozen

from ..errors import DicecupError, TooLarge
from ..numeric import compiled
from ..numeric.duel import DuelShape, DuelTurns, duel_block
from ..numeric.reference import plain_pick
from ..progress import Reporter, task
from . import distribution as dist
from .duel import Duel, _Layout
from .turns import TurnOutcomes

if TYPE_CHECKING:
    from ..solver.solve import Solution

__all__ = [
    "COST_NS",
    "MAX_MEMORY",
    "DuelLayer",
    "DuelPlan",
    "ExactDuel",
    "chunk_digest",
    "chunk_rows",
    "compute_chunk",
    "folder_dtype",
    "open_solved",
    "plan",
    "solve",
]

Elsewhere = Callable[["DuelLayer", "DuelLayer", list[int]], Iterator[tuple[int, str]]]
"""Computes a layer's pending chunks into the work folder elsewhere (on a cluster), yielding (chunk, digest)."""

FORMAT = 1
COST_NS = 3000.0
"""The kernel's time per value on one core of the development machine, for the estimate (docs: Performance)."""
MAX_MEMORY = 2 << 30
"""The most memory (bytes) the values may take in memory, without a work folder; past it one is needed."""
CHUNK_VALUES = 1 << 22
"""Values a chunk holds at most (a chunk is whole movers: at least one)."""


@frozen
class DuelLayer:
    """One layer: the mover has `km` boxes filled and the other `ko`; `R` its lead bound; positions are
    movers x others, each with 2R + 1 leads."""

    km: int
    ko: int
    R: int
    movers: int
    others: int
    chunk: int  # movers a chunk

    @property
    def name(self) -> str:
        return f"L{self.km:02d}-{self.ko:02d}"

    @property
    def width(self) -> int:
        return 2 * self.R + 1

    @property
    def values(self) -> int:
        return self.movers * self.others * self.width

    @property
    def chunks(self) -> int:
        return -(-self.movers // self.chunk)


@frozen
class DuelPlan:
    """What a run takes, known before it starts: its layers (solved first to last), values and bytes."""

    variant_id: str
    fingerprint: str
    layers: tuple[DuelLayer, ...]
    itemsize: int

    @property
    def values(self) -> int:
        return sum(layer.values for layer in self.layers)

    @property
    def positions(self) -> int:
        """Card pairs with the mover to play (the states of the two-player game, leads aside)."""
        return sum(layer.movers * layer.others for layer in self.layers)

    @property
    def disk(self) -> int:
        return self.values * self.itemsize

    @property
    def memory(self) -> int:
        """Bytes in flight with a work folder: the largest layer read beside the one written."""
        sizes = [layer.values * self.itemsize for layer in self.layers]
        return max((a + b for a, b in zip(sizes, sizes[1:], strict=False)), default=sizes[0] if sizes else 0)

    def layer(self, km: int, ko: int) -> DuelLayer:
        """The layer where the mover has km boxes filled and the other ko."""
        got = next((x for x in self.layers if (x.km, x.ko) == (km, ko)), None)
        if got is None:
            raise DicecupError(f"{self.variant_id}: the duel has no layer of {km} boxes against {ko}")
        return got

    def seconds(self, threads: int, cost_ns: float = COST_NS) -> float:
        return self.values * cost_ns * 1e-9 / max(1, threads)

    def describe(self, threads: int = 1) -> str:
        return (
            f"{self.variant_id}: {self.positions:,} card pairs, {self.values:,} values in {len(self.layers)} layers: "
            f"{self.disk / 2**30:,.2f} GiB on disk, {self.memory / 2**30:,.2f} GiB in flight, about "
            f"{self.seconds(threads) / 3600:,.2f} h on {threads} thread(s)"
        )


def _sums(x: np.ndarray, k: int, top: bool) -> float:
    s = np.sort(x)
    return float((s[::-1] if top else s)[:k].sum()) if k > 0 else 0.0


def lead_bound(lo: np.ndarray, hi: np.ndarray, spread: float, km: int, ko: int) -> int:
    """The lead bound of layer (km, ko): the least of the lead the boxes filled can make and the lead beyond
    which the boxes still open (and the end bonuses' `spread`) cannot change the winner."""
    nb = len(lo)
    reach = max(_sums(hi, km, True) - _sums(lo, ko, False), _sums(hi, ko, True) - _sums(lo, km, False))
    win = _sums(hi, nb - ko, True) - _sums(lo, nb - km, False) + spread
    lose = _sums(hi, nb - km, True) - _sums(lo, nb - ko, False) + spread
    return max(0, int(np.ceil(min(reach, max(win, lose)))))


def plan(solution: Solution, dtype: Any = np.float32, chunk_values: int = CHUNK_VALUES) -> DuelPlan:
    """The layers of `solution`'s variant's two-player game, solved last turn first, and their sizes."""
    layers = dist.layers_from(solution)
    nb = solution.index.nb
    counts = [len(layer[2]) for layer in layers]
    if len(counts) != nb + 1 or counts[0] != 1:
        raise DicecupError(f"{solution.variant.id}: the exact duel needs one empty card and every number of boxes")
    lo, hi = dist.box_ranges(solution)
    ends = solution.column()[layers[-1][2]]
    spread = float(ends.max() - ends.min()) if len(ends) else 0.0
    out = []
    pairs = [(nb, nb)] + [p for k in range(nb - 1, -1, -1) for p in ((k, k + 1), (k, k))]
    for km, ko in pairs:
        R = lead_bound(lo, hi, spread, km, ko)
        per_mover = counts[ko] * (2 * R + 1)
        out.append(DuelLayer(km, ko, R, counts[km], counts[ko], max(1, min(counts[km], chunk_values // per_mover))))
    itemsize = np.dtype(dtype).itemsize
    return DuelPlan(solution.variant.id, solution.variant.fingerprint, tuple(out), itemsize)


@frozen(eq=False)
class ExactDuel:
    """The solved game: each layer's values [movers * others, 2R + 1] (mover row major), by layer name."""

    plan: DuelPlan
    values: dict[str, np.ndarray] = field(repr=False)
    seconds: float

    @property
    def first_player(self) -> float:
        """Player one's share of the win from the start (a tie half), both playing to win."""
        start = self.plan.layers[-1]
        return float(self.values[start.name][0, start.R])

    def value(self, km: int, ko: int, mover: int, other: int, lead: int) -> float:
        """The mover's share at a turn's start: its state row `mover` among those with km boxes filled, the
        other's `other` among ko, the mover leading by `lead` (past the layer's bound, its sign decides)."""
        layer = self.plan.layer(km, ko)
        if abs(lead) > layer.R:
            return 1.0 if lead > 0 else 0.0
        return float(self.values[layer.name][mover * layer.others + other, lead + layer.R])

    def dense(self, turns: TurnOutcomes) -> Duel:
        """The values as `duel.Duel` holds them (every state pair, the whole game's lead bound), for `duel.evaluate`
        to value fixed policies against this optimum exactly: for small games (refused past `MAX_MEMORY`)."""
        lay = _Layout(turns)
        n = len(lay.slots)
        R = max(x.R for x in self.plan.layers)
        if n * n * (2 * R + 1) * 8 > MAX_MEMORY:
            raise TooLarge(f"{self.plan.variant_id}: {n:,}^2 x {2 * R + 1} values do not fit in memory as one array")
        starts = np.concatenate([[0], np.cumsum([np.count_nonzero(lay.filled == k) for k in range(lay.nb + 1)])])
        V = np.full((n, n, 2 * R + 1), np.nan)
        d = np.arange(-R, R + 1)
        for x in self.plan.layers:
            inside = np.abs(d) <= x.R
            block = np.where(d > 0, 1.0, 0.0) * np.ones((x.movers, x.others, 1))
            block[:, :, inside] = np.asarray(self.values[x.name], dtype=np.float64).reshape(x.movers, x.others, -1)
            m, o = starts[x.km], starts[x.ko]
            V[m : m + x.movers, o : o + x.others] = block
        return Duel(self.plan.variant_id, lay.slots, lay.filled, R, V, self.seconds)


class _Store:
    """Where layers live: in memory, or a work folder of raw memory-mapped files with `progress.json` (every
    finished chunk's SHA-256), rewritten whole after each chunk so that a kill leaves the last one true."""

    def __init__(self, p: DuelPlan, dtype: np.dtype, folder: Path | None) -> None:
        self.plan, self.dtype, self.folder = p, dtype, folder
        self.arrays: dict[str, np.ndarray] = {}
        self.done: dict[str, dict[str, str]] = {}
        if folder is None:
            return
        folder.mkdir(parents=True, exist_ok=True)
        head = _head(p, dtype)
        manifest = folder / "duel.json"
        if manifest.exists():
            try:
                had = json.loads(manifest.read_text(encoding="utf-8"))
                self.done = json.loads((folder / "progress.json").read_text(encoding="utf-8"))
            except (OSError, ValueError) as exc:
                raise DicecupError(f"{folder}: not a readable duel work folder ({exc}); give an empty one") from exc
            if had != head:
                raise DicecupError(
                    f"{folder}: the work folder holds another duel ({had.get('variant')}, "
                    f"{had.get('dtype')}); give an empty folder or the same variant and precision"
                )
        else:
            _atomic(manifest, json.dumps(head))
            _atomic(folder / "progress.json", "{}")

    def layer(self, layer: DuelLayer, write: bool) -> np.ndarray:
        got = self.arrays.get(layer.name)
        if got is not None:
            return got
        shape = (layer.movers * layer.others, layer.width)
        if self.folder is None:
            arr = np.full(shape, np.nan, dtype=self.dtype)
        else:
            path = self.folder / (layer.name + ".bin")
            want = shape[0] * shape[1] * self.dtype.itemsize
            if not path.exists() or path.stat().st_size != want:
                if self.done.get(layer.name):
                    raise DicecupError(f"{path}: the layer's file is missing or cut short; give an empty folder")
                with open(path, "wb") as f:
                    f.truncate(want)
            arr = np.memmap(path, dtype=self.dtype, mode="r+", shape=shape)
        self.arrays[layer.name] = arr
        return arr

    def finished(self, layer: DuelLayer, c: int) -> bool:
        return str(c) in self.done.get(layer.name, {})

    def record(self, layer: DuelLayer, c: int, arr: np.ndarray, digest: str | None = None) -> None:
        """Chunk c is finished (its SHA-256 `digest` where a worker wrote it, else read here)."""
        if self.folder is None:
            self.done.setdefault(layer.name, {})[str(c)] = ""
            return
        if digest is None:
            if isinstance(arr, np.memmap):
                arr.flush()
            digest = chunk_digest(arr, layer, c)
        self.done.setdefault(layer.name, {})[str(c)] = digest
        _atomic(self.folder / "progress.json", json.dumps(self.done))

    def verify(self, layer: DuelLayer, arr: np.ndarray) -> None:
        """Recorded chunks must still hold what was recorded (a tampered or torn file is refused)."""
        if self.folder is None:
            return
        for c, digest in self.done.get(layer.name, {}).items():
            if chunk_digest(arr, layer, int(c)) != digest:
                raise DicecupError(f"{self.folder}: chunk {c} of {layer.name} no longer matches its digest")


def _head(p: DuelPlan, dtype: np.dtype) -> dict[str, Any]:
    """A work folder's manifest: which duel its files hold, and how they are cut."""
    return {
        "format": FORMAT,
        "variant": p.variant_id,
        "fingerprint": p.fingerprint,
        "dtype": dtype.name,
        "layers": [[x.km, x.ko, x.R, x.movers, x.others, x.chunk] for x in p.layers],
    }


def folder_dtype(folder: Path) -> np.dtype | None:
    """The precision of the duel a work folder holds (None: no readable manifest there)."""
    try:
        head = json.loads((folder / "duel.json").read_text(encoding="utf-8"))
        return np.dtype(head["dtype"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def open_solved(solution: Solution, folder: Path, verify: bool = False, progress: Reporter | None = None) -> ExactDuel:
    """A work folder's finished duel of `solution`'s variant, every layer memory-mapped read-only (nothing in
    the folder is written). Refused, saying what is wrong, where the folder holds another duel or an unfinished
    one, or a layer's file is missing or cut short; `verify`: every chunk's SHA-256 is checked too."""
    t0 = time.perf_counter()
    dt = folder_dtype(folder)
    if dt is None:
        raise DicecupError(f"{folder}: no duel work folder here (no readable duel.json)")
    try:
        had = json.loads((folder / "duel.json").read_text(encoding="utf-8"))
        done = json.loads((folder / "progress.json").read_text(encoding="utf-8"))
        cut = [int(row[-1]) for row in had["layers"]]
    except (OSError, ValueError, KeyError, TypeError, IndexError) as exc:
        raise DicecupError(f"{folder}: not a readable duel work folder ({exc})") from exc
    p = plan(solution, dt)
    if len(cut) == len(p.layers):  # the chunks the folder was solved in
        p = evolve(p, layers=tuple(evolve(x, chunk=c) for x, c in zip(p.layers, cut, strict=True)))
    if had != _head(p, dt):
        raise DicecupError(
            f"{folder}: the work folder holds another duel ({had.get('variant')}) or one solved by another "
            f"version; solve {p.variant_id} there again (`dicecup duel -v {p.variant_id} --work-dir {folder}`)"
        )
    left = [x.name for x in p.layers if len(done.get(x.name, {})) < x.chunks]
    if left:
        raise DicecupError(
            f"{folder}: the duel is not finished ({len(left)} of {len(p.layers)} layers to go); run "
            f"`dicecup duel -v {p.variant_id} --work-dir {folder}` again to go on"
        )
    arrays: dict[str, np.ndarray] = {}
    with task(progress, f"checking the duel in {folder}", p.values if verify else None, "values") as rep:
        for x in p.layers:
            path = folder / (x.name + ".bin")
            want = x.values * dt.itemsize
            if not path.is_file() or path.stat().st_size != want:
                raise DicecupError(f"{path}: the layer's file is missing or not {want:,} bytes; solve it again")
            arr = np.memmap(path, dtype=dt, mode="r", shape=(x.movers * x.others, x.width))
            if verify:
                for c in range(x.chunks):
                    if chunk_digest(arr, x, c) != done[x.name].get(str(c)):
                        raise DicecupError(f"{folder}: chunk {c} of {x.name} no longer matches its digest")
                rep.advance(x.values)
            arrays[x.name] = arr
    return ExactDuel(p, arrays, time.perf_counter() - t0)


def chunk_rows(layer: DuelLayer, c: int) -> slice:
    """Chunk c's rows of its layer's values."""
    lo = c * layer.chunk
    return slice(lo * layer.others, min(layer.movers, lo + layer.chunk) * layer.others)


def chunk_digest(arr: np.ndarray, layer: DuelLayer, c: int) -> str:
    """The SHA-256 of chunk c's values."""
    return hashlib.sha256(np.ascontiguousarray(arr[chunk_rows(layer, c)]).data).hexdigest()


def _atomic(path: Path, text: str) -> None:
    tmp = path.with_suffix(path.suffix + ".new")
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def _turns(lay: _Layout, first: int, rows: range, next_first: int) -> DuelTurns:
    """The movers' turns (global layout rows first + i): points and successor rows among the next layer's."""
    n = len(rows)
    nb, n_rolls = lay.nb, lay.planner.solution.graph.n_rolls
    pts = np.zeros((n, 2, nb, n_rolls), dtype=np.int64)
    succ = np.full((n, 2, nb, n_rolls), -1, dtype=np.int64)
    both = np.zeros(n, dtype=np.bool_)
    for k, i in enumerate(rows):
        _, nxt, points, oid, legal = lay.turn(first + i)
        safe = np.clip(oid, 0, len(points) - 1)
        ok = legal & (oid >= 0) & (nxt[safe] >= 0)
        pts[k] = np.where(ok, points[safe], 0)
        succ[k] = np.where(ok, nxt[safe] - next_first, -1)
        both[k] = not (np.array_equal(pts[k, 0], pts[k, 1]) and np.array_equal(succ[k, 0], succ[k, 1]))
    return DuelTurns(pts, succ, both)


def _terminal(lay: _Layout, layer: DuelLayer, out: np.ndarray) -> None:
    """Both cards full: the end bonuses and the lead decide."""
    ends = lay.ends[lay.filled == lay.nb]
    d = np.arange(layer.width) - layer.R
    final = d[None, None, :] + ends[:, None, None] - ends[None, :, None]
    out[:] = np.where(final > 0, 1.0, np.where(final == 0, 0.5, 0.0)).reshape(out.shape)


def _chunks(store: _Store, layer: DuelLayer) -> Iterator[int]:
    return (c for c in range(layer.chunks) if not store.finished(layer, c))


def solve(
    solution: Solution,
    work_dir: str | os.PathLike[str] | None = None,
    dtype: Any = np.float32,
    threads: int | None = None,
    progress: Reporter | None = None,
    max_memory: int = MAX_MEMORY,
    chunk_values: int = CHUNK_VALUES,
    stop_after: int | None = None,
    elsewhere: Elsewhere | None = None,
) -> ExactDuel:
    """Solve the two-player game of `solution`'s variant exactly (each player maximising its chance of winning,
    a tie counting half). Without `work_dir` the values stay in memory (refused past `max_memory`); with it,
    they go to memory-mapped files there, and a run begun again goes on from the last finished chunk (the
    folder must be on a disk with room for them all: refused otherwise). `elsewhere(layer, prev, chunks)`
    computes a layer's pending chunks somewhere else into the work folder, yielding (chunk, digest) as each is
    done (`cluster.duel.solve_on` runs them on Dask workers). `stop_after`: return after that many chunks computed by this
    call (for tests of resuming)."""
    t0 = time.perf_counter()
    dt = np.dtype(dtype)
    if dt not in (np.dtype(np.float32), np.dtype(np.float64)):
        raise DicecupError(f"the duel's values are float32 or float64, not {dt}")
    p = plan(solution, dt, chunk_values)
    threads = threads or compiled.threads()
    folder = None if work_dir is None else Path(work_dir)
    if folder is None and (p.disk > max_memory or elsewhere is not None):
        raise TooLarge(
            f"{p.describe(threads)}; {p.disk / 2**30:,.2f} GiB of values is above the {max_memory / 2**30:.1f} GiB "
            "held in memory: give a work folder (--work-dir) on a disk with room for them"
            if elsewhere is None
            else "a duel on a cluster needs a work folder (--work-dir) every worker reaches"
        )
    store = _Store(p, dt, folder)
    if folder is not None:
        left = sum(x.values for x in p.layers if len(store.done.get(x.name, {})) < x.chunks) * dt.itemsize
        free = shutil.disk_usage(folder).free
        if left > free:
            raise TooLarge(f"{p.describe(threads)}; {left / 2**30:,.2f} GiB still to write, {free / 2**30:,.2f} free")
    lay = _Layout(TurnOutcomes(solution))
    budget = stop_after
    with task(progress, f"the exact duel of {p.variant_id}", p.values, "values", p.seconds(threads)) as rep:
        prev: DuelLayer | None = None
        for layer in p.layers:
            out = store.layer(layer, True)
            store.verify(layer, out)
            rep.advance(sum(layer.values // layer.chunks for c in range(layer.chunks) if store.finished(layer, c)))
            pending = list(_chunks(store, layer))
            if budget is not None:
                pending = pending[: max(0, budget)]
                budget -= len(pending)
            if prev is None:
                for c in pending:
                    _terminal(lay, layer, out)
                    store.record(layer, c, out)
            elif elsewhere is not None:
                for c, digest in elsewhere(layer, prev, pending):
                    store.record(layer, c, out, digest)
                    rep.advance(layer.values // layer.chunks)
            else:
                vn = store.layer(prev, False)
                for c in pending:
                    compute_chunk(lay, layer, prev, c, out, vn, threads)
                    store.record(layer, c, out)
                    rep.advance(layer.values // layer.chunks)
            if any(not store.finished(layer, c) for c in range(layer.chunks)):
                return ExactDuel(p, store.arrays, time.perf_counter() - t0)  # stopped as asked
            prev = layer
    return ExactDuel(p, store.arrays, time.perf_counter() - t0)


def compute_chunk(
    lay: _Layout, layer: DuelLayer, prev: DuelLayer, c: int, out: np.ndarray, vn: np.ndarray, threads: int
) -> None:
    """Chunk c of `layer` (its rows of `out`) from the next layer's values `vn` (`prev`, solved before it)."""
    sol = lay.planner.solution
    starts = np.concatenate([[0], np.cumsum([np.count_nonzero(lay.filled == k) for k in range(lay.nb + 1)])])
    movers = range(c * layer.chunk, min(layer.movers, (c + 1) * layer.chunk))
    turns = _turns(lay, int(starts[layer.km]), movers, int(starts[layer.km + 1]))
    shape = DuelShape(layer.others, layer.R, prev.R, prev.others)
    block = out[movers.start * layer.others : movers.stop * layer.others]
    _run(turns, sol.graph.arrays, plain_pick(sol.variant.rolls), vn, shape, block, threads)


def _run(
    turns: DuelTurns, d: Any, pick: np.ndarray, vn: np.ndarray, shape: DuelShape, block: np.ndarray, n: int
) -> None:
    """A chunk's movers shared among `n` threads (the kernel releases the GIL), each writing its own rows."""
    movers = len(turns.both)
    cuts = np.linspace(0, movers, min(n, movers) + 1).astype(int)
    work = np.empty(block.shape, dtype=block.dtype) if not block.flags.c_contiguous else block
    parts = list(zip(cuts[:-1].tolist(), cuts[1:].tolist(), strict=True))
    counter = iter(parts)

    def one() -> None:
        for lo, hi in counter:
            duel_block(turns, d, pick, vn, shape, work[lo * shape.others : hi * shape.others], lo, hi)

    compiled.on_threads(one, len(parts))
    if work is not block:
        block[:] = work
