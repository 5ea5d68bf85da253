"""How the kernels run in this process: built ahead of time, compiled now by numba, or as numpy-level Python.

The kernels (`turn.py`, `lookup.py`, `layer.py`) are plain Python functions over the
records of `records.py`, written once. An install builds them ahead of time into the
extension module `dicecup.numeric._kernels` (`aot.py`, run by setup.py; it needs
numba and a C compiler at build time only), so a process that solves or advises
imports neither numba nor LLVM and compiles nothing. Where that module is missing,
does not load, or was built for a CPU with instructions this one lacks, numba
compiles the same functions on first use (cached on disk); without numba the
numpy reference runs (slower, same values). `MODE` says which, decided once per process
without importing numba; `$DICECUP_KERNELS` (`aot`, `jit` or `numpy`) forces one. It is the one switch:
the solver, advisor, simulator and distributions all follow it. The simulator's player, best-move fill and
score-class hash are built ahead of time for the record dtypes of `records.PLAY_VARIANTS` and `FILL_VARIANTS`;
the distributions' kernels, and the simulator's for other dtypes, are compiled by numba in both compiled modes.
"""

from __future__ import annotations

import collections
import hashlib
import importlib
import importlib.util
import os
import threading
import types
import warnings
from collections.abc import Callable, Mapping, Sequence
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from ..places import CACHE_ENV, user_folder

__all__ = [
    "AOT_MODULE",
    "AVAILABLE",
    "MODE",
    "MODES",
    "NUMBA",
    "NUMBA_KERNELS",
    "aot_fits",
    "aot_kernel",
    "aot_module",
    "cpu_flags",
    "jit",
    "jit_namespace",
    "numba_module",
    "pick_mode",
    "on_threads",
    "threads",
    "Kernel",
    "RecordChecks",
]

MODES = ("aot", "jit", "numpy")
AOT_MODULE = "dicecup.numeric._kernels"
MODE_ENV = "DICECUP_KERNELS"
LEGACY_ENV = "DICECUP_SOLVER_KERNEL"
"""Deprecated: the solver's own switch before `MODE_ENV`; `numpy` still means the numpy mode, `numba` the best
compiled one, where `MODE_ENV` is not set."""


def cpu_flags() -> frozenset[str]:
    """The instruction-set flags this CPU reports (/proc/cpuinfo); empty where the file is not there."""
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith("flags"):
                    return frozenset(line.partition(":")[2].split())
    except OSError:
        pass
    return frozenset()


def sources_digest(names: Sequence[str]) -> str:
    """A digest of the bytes of this folder's modules `names` (file names): what the kernels were compiled from."""
    h = hashlib.sha256()
    here = Path(__file__).parent
    for name in sorted(names):
        h.update(name.encode() + b"\0")
        h.update(hashlib.sha256((here / name).read_bytes()).digest())
    return h.hexdigest()[:16]


@cache
def aot_module() -> ModuleType | None:
    """The ahead-of-time build, when it is installed, loads, was built for the kernels' argument types as they
    are now and from the kernels' sources as they are now (not a build left behind by an edit), and needs no
    instruction this CPU lacks."""
    from .records import signature_digest

    try:
        module = importlib.import_module(AOT_MODULE)
        beside = importlib.import_module(AOT_MODULE + "_cpu")
        built_for = frozenset(beside.FLAGS)  # the build machine's, beside it
        if beside.SIGNATURES != signature_digest():  # built for records of another layout (an older build)
            return None
        if beside.SOURCES != sources_digest(beside.MODULES):  # a kernel edited since the build
            return None
    except (ImportError, OSError, AttributeError, TypeError):
        return None
    have = cpu_flags()
    if built_for and (not have or not built_for <= have):  # built with -march=native elsewhere: not safe to run here
        return None
    return module


def pick_mode(environ: Mapping[str, str], numba: bool, built: Callable[[], object | None]) -> str:
    """`aot`, `jit` or `numpy`: what $DICECUP_KERNELS in `environ` asks for where it can run, else the best
    this install can run (`built()`: the ahead-of-time build, or None; asked only when it matters)."""
    asked = environ.get(MODE_ENV, "")
    legacy = environ.get(LEGACY_ENV, "")
    if legacy and not asked:
        warnings.warn(
            f"${LEGACY_ENV} is deprecated: set ${MODE_ENV}=numpy (or aot, jit) instead", DeprecationWarning, 2
        )
        asked = "numpy" if legacy == "numpy" else ""
    if asked == "numpy" or (asked == "jit" and numba):
        return asked
    if built() is not None:
        return "aot"
    return "jit" if numba else "numpy"


NUMBA = importlib.util.find_spec("numba") is not None
"""Whether numba is installed (asked without importing it)."""
MODE = pick_mode(os.environ, NUMBA, aot_module)
AVAILABLE = MODE != "numpy"
"""Whether compiled kernels run here (ahead of time or by numba)."""
NUMBA_KERNELS = AVAILABLE and NUMBA
"""Whether the simulator's and distributions' kernels run here (some only numba compiles: see above)."""


def threads() -> int:
    """Threads compiled kernels are spread over: $NUMBA_NUM_THREADS (numba's own setting) where set, else the
    cores this process may run on (asked without importing numba)."""
    asked = os.environ.get("NUMBA_NUM_THREADS", "")
    if asked.isdigit() and int(asked) > 0:
        return int(asked)
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)


def on_threads(work: Callable[[], object], count: int) -> None:
    """Run `work` on `count` threads at once (this one among them), and raise again the first exception one
    raised: for a kernel that releases the GIL and takes its share of tasks from a shared counter."""
    failed: list[BaseException] = []

    def run() -> None:
        try:
            work()
        except BaseException as exc:  # raised again in the caller's thread
            failed.append(exc)

    others = [threading.Thread(target=run) for _ in range(count - 1)]
    for thread in others:
        thread.start()
    run()
    for thread in others:
        thread.join()
    if failed:
        raise failed[0]


@cache
def _simulator_built() -> bool:
    """Whether the ahead-of-time build holds the simulator's kernels for its records as they are now."""
    from .records import signature_digest

    beside = importlib.import_module(AOT_MODULE + "_cpu")
    return getattr(beside, "SIMULATOR", None) == signature_digest(simulator=True)


def aot_fits(name: str, args: Sequence[Any], checks: RecordChecks | None = None) -> bool:
    """Whether this process runs the ahead-of-time build (`MODE`) and it holds kernel `name` for arguments
    of these types (a kernel built for some variants only: the others are compiled by numba). `checks`: the
    records known to fit already (the caller's `Kernel.checks`, say), remembered there as they pass."""
    if MODE != "aot" or not _simulator_built():
        return False
    from .records import signatures

    like = signatures().get(name)
    fits = (RecordChecks() if checks is None else checks).fits
    return like is not None and len(args) == len(like) and all(map(fits, args, like))


class RecordChecks:
    """The records that passed a kernel's argument check, by id (each held, so that its id cannot be reused by
    another object), so that a record passed again is not walked field by field again: the small ones that
    passed most recently (`RECORDS_KEPT`; the least recently passed go first, so that records passed on every
    call, such as the dice graph's, outlive a stream of one-off ones), and the ones `pin` checked for as long
    as this object lives (the last `PINNED_KEPT`), whatever their size. Held by whoever calls the kernel."""

    def __init__(self) -> None:
        self._recent: collections.OrderedDict[int, tuple] = collections.OrderedDict()
        self._pinned: collections.OrderedDict[int, tuple] = collections.OrderedDict()

    def fits(self, arg: Any, like: Any) -> bool:
        """Whether `arg` has the kernel type of `like` (the quick test; `_check_like` says what is wrong)."""
        if type(like) is np.ndarray:
            return (
                isinstance(arg, np.ndarray)
                and arg.dtype == like.dtype
                and arg.ndim == like.ndim
                and (arg.flags.c_contiguous or not like.flags.c_contiguous)  # compiled for any layout, or for C's
                and (arg.flags.writeable or not like.flags.writeable)  # a kernel that writes it gets no read-only one
            )
        if type(like) is int:  # most calls are arrays, records and ints: the unions below cost a few times more
            return type(arg) is int or (isinstance(arg, _INTS) and not isinstance(arg, _BOOLS))
        if isinstance(like, tuple):
            recent = self._recent
            if recent.get(id(arg)) is arg:  # a record passed again (dice graph, ...): kept as the most recent
                recent.move_to_end(id(arg))
                return True
            if self._pinned.get(id(arg)) is arg:
                return True
            if type(arg) is not type(like) or not all(map(self.fits, arg, like)):
                return False
            if _nbytes(arg) < 1 << 20:  # small ones only
                recent[id(arg)] = arg
                if len(recent) > RECORDS_KEPT:
                    recent.popitem(last=False)
            return True
        if isinstance(like, bool | np.bool_):
            return isinstance(arg, bool | np.bool_)
        if isinstance(like, float):
            return isinstance(arg, float | np.floating)
        return isinstance(arg, int | np.integer) and not isinstance(arg, bool | np.bool_)

    def pin(self, record: tuple, kernel: str, position: int) -> tuple:
        """`record`, checked now against argument `position` of `kernel` (`records.signatures`; TypeError where
        it does not fit) and let pass unwalked from then on: for a long-lived record its caller keeps anyway
        (the advisor's layer of every class), whatever its size. Returns it."""
        from .records import signatures

        _check_like(record, signatures()[kernel][position], f"{kernel} argument {position}")
        self._pinned[id(record)] = record
        if len(self._pinned) > PINNED_KEPT:
            self._pinned.popitem(last=False)
        return record

    def recent(self) -> int:
        """How many records are remembered as recently passed (at most `RECORDS_KEPT`)."""
        return len(self._recent)

    def remembers(self, record: object) -> bool:
        """Whether `record` itself (not an equal one) is remembered as fitting."""
        return any(kept.get(id(record)) is record for kept in (self._recent, self._pinned))


RECORDS_KEPT = 64
"""Small records a `RecordChecks` remembers as recently passed."""
PINNED_KEPT = 8
"""Records a `RecordChecks` keeps pinned (one per variant advised)."""


class Kernel:
    """The ahead-of-time build's function `name` (only in the `aot` mode), behind a check of its arguments.

    Compiled for one signature (`records.signatures`), it would read an array of another dtype, rank or
    memory layout as if it had that one (numba's dispatcher would compile another version instead):
    the check turns that into a TypeError. `checked`: only that many leading arguments are checked, the
    rest being scratch arrays the caller's wrapper has just allocated itself with the kernel's types.
    `checks` holds the records that passed (`RecordChecks`): the caller that keeps this object keeps them, or
    passes its own with each call.
    """

    def __init__(self, name: str, checked: int | None = None) -> None:
        self.name, self.checked = name, checked
        self.kernel = getattr(aot_module(), name)
        self.checks = RecordChecks()
        self.__doc__ = self.kernel.__doc__
        self._like: tuple[Any, ...] | None = None

    def __call__(self, *args: Any, checks: RecordChecks | None = None) -> Any:
        like = self._like
        if like is None:
            from .records import signatures

            like = self._like = signatures()[self.name]
        checked = self.checked
        fits = (self.checks if checks is None else checks).fits
        if len(args) != len(like) or not all(map(fits, args[:checked], like[:checked])):
            if len(args) != len(like):
                raise TypeError(f"{self.name}: {len(args)} arguments, expected {len(like)}")
            for i, (arg, want) in enumerate(zip(args, like, strict=True)):
                _check_like(arg, want, f"{self.name} argument {i}")
        return self.kernel(*args)

    def pin(self, record: tuple, position: int) -> tuple:
        """`RecordChecks.pin` for argument `position` of this kernel."""
        return self.checks.pin(record, self.name, position)


def aot_kernel(name: str, checked: int | None = None) -> Kernel:
    """The ahead-of-time build's function `name` behind a check of its arguments (`Kernel`)."""
    return Kernel(name, checked)


def _nbytes(record: tuple) -> int:
    """The bytes of the arrays a record holds, in the records nested in it too."""
    return sum(a.nbytes if isinstance(a, np.ndarray) else _nbytes(a) if isinstance(a, tuple) else 0 for a in record)


_INTS = (int, np.integer)
_BOOLS = (bool, np.bool_)


def _check_like(arg: Any, like: Any, where: str) -> None:
    """Raise TypeError unless `arg` has the kernel type of `like` (recursing into records)."""
    if isinstance(like, np.ndarray):
        if not isinstance(arg, np.ndarray) or arg.dtype != like.dtype or arg.ndim != like.ndim:
            got = f"{arg.dtype}, {arg.ndim}-d" if isinstance(arg, np.ndarray) else type(arg).__name__
            raise TypeError(f"{where}: expected a {like.ndim}-d {like.dtype} array, got {got}")
        if not arg.flags.c_contiguous and like.flags.c_contiguous:
            raise TypeError(f"{where}: the array must be C-contiguous (np.ascontiguousarray)")
        if not arg.flags.writeable and like.flags.writeable:
            raise TypeError(f"{where}: the array must be writable")
    elif isinstance(like, tuple):
        if type(arg) is not type(like):
            raise TypeError(f"{where}: expected {type(like).__name__}, got {type(arg).__name__}")
        for field, a, b in zip(getattr(like, "_fields", range(len(like))), arg, like, strict=True):
            _check_like(a, b, f"{where}.{field}")
    elif isinstance(like, bool | np.bool_):
        if not isinstance(arg, bool | np.bool_):
            raise TypeError(f"{where}: expected a bool, got {type(arg).__name__}")
    elif isinstance(like, float):
        if not isinstance(arg, float | np.floating):
            raise TypeError(f"{where}: expected a float, got {type(arg).__name__}")
    elif isinstance(arg, bool | np.bool_) or not isinstance(arg, int | np.integer):
        raise TypeError(f"{where}: expected an integer, got {type(arg).__name__}")


@cache
def numba_module() -> Any:
    """numba, imported on first use (only the `jit` mode and the simulator's own kernels need it), keeping the
    kernels it compiles in `kernel_cache_dir` unless NUMBA_CACHE_DIR says where."""
    numba: Any = importlib.import_module("numba")
    if "NUMBA_SLP_VECTORIZE" not in os.environ:
        # numba leaves LLVM's SLP vectoriser off; the turn recursion spells its W lanes out so that this pass
        # packs them into one vector register. No value changes: the lanes are independent states.
        numba.config.SLP_VECTORIZE = 1
    if not os.environ.get("NUMBA_CACHE_DIR"):
        numba.config.CACHE_DIR = str(kernel_cache_dir(numba.__version__))
    return numba


def kernel_cache_dir(numba_version: str) -> Path:
    """Where numba keeps the kernels it compiled: the user's cache folder, a folder per numba version and state
    of this folder's sources. numba checks a kernel's own source only, so a kernel kept by an older dicecup that
    names a record since renamed would fail to load; a new folder is never read by an older one. (Beside the
    package, in `__pycache__`, a read-only install could keep nothing.)"""
    return user_folder("cache", CACHE_ENV) / "numba" / f"{numba_version}-{_sources_digest()}"


@cache
def _sources_digest() -> str:
    """A digest of the numeric core's sources (its kernels and the records they take)."""
    h = hashlib.sha256()
    for path in sorted(Path(__file__).parent.glob("*.py")):
        h.update(path.name.encode())
        h.update(path.read_bytes())
    return h.hexdigest()[:16]


JIT_LOCK = threading.RLock()
"""Held while a kernel module's functions are compiled (`jit_namespace`): the solver's threads may ask at once."""


def jit_namespace(
    module_globals: Mapping[str, Any],
    names: Sequence[str],
    inline: Sequence[str] = (),
    calls: Mapping[str, Any] | None = None,
) -> Mapping[str, Any]:
    """A module's kernels `names` (and its helpers `inline`, inlined where called) compiled by numba against a
    namespace of their own: copies of the module's globals where each compiled function, and each kernel of
    another module it `calls`, stands in for the plain one. The module itself is left as it is: its plain
    functions stay the numpy reference, and nothing is rebound."""
    space = dict(module_globals)
    space.update(calls or {})
    with JIT_LOCK:
        for name in (*inline, *names):
            fn = module_globals[name]
            copy = types.FunctionType(fn.__code__, space, fn.__name__, fn.__defaults__, fn.__closure__)
            copy.__qualname__, copy.__module__, copy.__doc__ = fn.__qualname__, fn.__module__, fn.__doc__
            space[name] = jit(copy, inline=name in inline)
    return types.MappingProxyType(space)


def jit(fn: Callable[..., Any], inline: bool = False) -> Any:
    """`fn` compiled by numba (cached on disk, releasing the GIL; inlined into its callers when `inline`)."""
    nb = numba_module()
    if inline:
        return nb.njit(inline="always")(fn)
    return nb.njit(cache=True, nogil=True)(fn)
