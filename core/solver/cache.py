"""The strategy table on disk: one .npz per (variant, options, plugins, rules code, solver version).

The file holds the state values and the small arrays that rebuild the state
index, with a JSON header carrying the cache key and an HMAC-SHA256 of header
and arrays keyed by a per-user secret (a random file, mode 0600, in the state
folder, never in the cache folder): someone who can write the cache but not
read the key cannot forge a table. On load the value of the start state and of
a random sample of states is recomputed from their successors with the solver's
own turn recursion, and a sample of full cards from their end bonuses. A file that fails any check is deleted and the variant is
solved again; a cache that cannot be used (no key, a folder in the way, a FIFO,
no permission) is reported as a warning and the answer is computed uncached.
Tables are written atomically (dicecup.fileio.write_atomic).
"""

from __future__ import annotations

import hashlib
import hmac
import io
import json
import os
import secrets
import stat
import sys
from collections.abc import Callable, Iterable
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from .. import fileio
from ..fileio import FileError, write_atomic, write_atomic_with
from ..language.model import Card, Variant
from ..numeric.coding import StateIndex
from ..numeric.objective import MEAN, Objective
from ..progress import Reporter
from .card_tables import KIND as CARD_TABLES
from .card_tables import LAYOUT as CARD_LAYOUT
from .card_tables import CardTables
from .dp import LayerBackend
from .errors import StateSpaceTooLarge
from .rules import check_solvable
from .solve import DEFAULT_MAX_STATES, SOLVER_VERSION, Solution, solve
from .space import bank_sizes

__all__ = [
    "cache_dir",
    "state_dir",
    "key_path",
    "cache_key",
    "cache_path",
    "load",
    "save",
    "load_or_solve",
    "verify",
    "CacheInvalid",
    "CacheUnavailable",
    "CACHE_ENV",
    "STATE_ENV",
    "FORMAT",
    "load_record",
    "save_record",
    "record_path",
    "save_arrays",
    "load_arrays",
    "arrays_path",
    "keep_card_tables",
]

CACHE_ENV = "DICECUP_CACHE_DIR"
STATE_ENV = "DICECUP_STATE_DIR"
FORMAT = "dicecup/strategy-table-2"
KEY_FILE = "cache.key"
KEY_BYTES = 32
SAMPLE = 16  # states recomputed on load besides the start state
TOLERANCE = 1e-9
TOLERANCE_FLOAT32 = 2e-7  # a float32 table: the recomputed value, rounded once, is within ~6e-8 of it
MAX_ID_CHARS = 64  # of the variant id in a file name (the compiler caps ids at 64 too)
_ARRAYS = ("values", "codes", "pmin", "dims")


class CacheInvalid(Exception):
    """A cache file that must not be used (says why); it is deleted and rebuilt."""


class CacheUnavailable(Exception):
    """The cache cannot be used at all (no key, a file in the way, no permission); says why."""


# ---------------------------------------------------------------------- places


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


def state_dir() -> Path:
    """$DICECUP_STATE_DIR, else the user's state folder (XDG_STATE_HOME, ~/.local/state, %LOCALAPPDATA%) / dicecup."""
    env = os.environ.get(STATE_ENV)
    if env:
        return Path(env)
    if sys.platform == "win32" and os.environ.get("LOCALAPPDATA"):
        return Path(os.environ["LOCALAPPDATA"]) / "dicecup" / "state"
    return Path(os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state") / "dicecup"


def key_path() -> Path:
    """Where the per-user key that signs the tables lives."""
    return state_dir() / KEY_FILE


VERIFIED_FILE = "verified-tables"
VERIFIED_KEEP = 256  # signatures remembered (the oldest are forgotten first)


def _verified() -> list[str]:
    """Signatures of the tables whose values were already checked against the solver (or came from it).

    Best effort: a missing, unreadable or garbled record is an empty one (the check then runs again).
    """
    try:
        raw = fileio.read_bytes(state_dir() / VERIFIED_FILE, limit=VERIFIED_KEEP * 65, what="verified-tables record")
    except (OSError, FileError):
        return []
    lines = raw.decode("ascii", errors="replace").split()
    return [ln for ln in lines if len(ln) == 64 and all(c in "0123456789abcdef" for c in ln)]


def _note_verified(mac: str) -> None:
    """Remember that the table signed `mac` holds the solver's values, so later loads skip `verify`."""
    known = [m for m in _verified() if m != mac][-(VERIFIED_KEEP - 1) :] + [mac]
    try:
        write_atomic(state_dir() / VERIFIED_FILE, ("\n".join(known) + "\n").encode("ascii"))
    except (OSError, FileError):
        pass  # only a cost: the next load checks the values again


#: the folders of dicecup besides the solver's own whose code decides a table's values: the rules (language) and
#: the numeric core the solver computes with (the turn recursion, the layer kernels' sources, the state coding)
_SCORING_CORE = ("language", "numeric")


@lru_cache(maxsize=1)
def _rules_digest() -> str:
    """What else the values depend on: dicecup's version and the source of the code that scores (the
    engine's language layer, the built-in rule plugins) and of the solver itself, with the numeric core it
    computes with (once per process).

    The bytes of each file are hashed, not its size and time: a file edited in place, copied with its
    time kept (`cp -p`, rsync, a wheel's fixed timestamps) or edited twice within the clock's tick must
    still change the key, and a stale table that matches its key is served without recomputing its values
    (`verify` runs once per signed table). The files are few and small (about 60, 0.7 MB: about 2 ms).

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
    files = [f for name in _SCORING_CORE for f in sorted((core / name).glob("*.py"))]
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


def _secret() -> bytes:
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


def _mac(secret: bytes, header: dict, arrays: dict[str, np.ndarray], names: Iterable[str] = _ARRAYS) -> str:
    """HMAC-SHA256 of the header (without its MAC) and every array's name, type, shape and bytes."""
    h = hmac.new(secret, digestmod=hashlib.sha256)
    h.update(json.dumps({k: v for k, v in header.items() if k != "hmac"}, sort_keys=True).encode())
    for name in names:
        a = np.ascontiguousarray(arrays[name])
        h.update(f"\0{name}\0{a.dtype.str}\0{a.shape}\0".encode())
        h.update(a.reshape(-1).view(np.uint8).data)  # the bytes in place: a large table is not copied
    return h.hexdigest()


# ---------------------------------------------------------------------- files


def _size_limit(max_states: int | None) -> int:
    """The largest table file worth reading: values and index of up to 4x the state limit, and some slack."""
    return (1 << 24) + 64 * (max_states or DEFAULT_MAX_STATES)


def save(solution: Solution, path: Path | None = None, secret: bytes | None = None) -> Path:
    """Write the signed table atomically; returns the path (OSError, FileError or CacheUnavailable when it cannot)."""
    path = path or cache_path(solution.variant, solution.objective)
    _write(solution, path, secret if secret is not None else _secret())
    return path


def _write(solution: Solution, path: Path, secret: bytes) -> str:
    """`save`'s work: the table written atomically, its signature returned."""
    path.parent.mkdir(parents=True, exist_ok=True)
    ix = solution.index
    arrays = {"values": solution.values, "codes": ix.class_codes, "pmin": ix.class_pmin, "dims": ix.class_dims}
    header = {
        "format": FORMAT,
        "key": cache_key(solution.variant, solution.objective),
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
    }
    if ix.symmetric:  # interchangeable boxes counted (absent otherwise: such tables are unchanged)
        header["symmetric"] = [list(g) for g in ix.symmetric]
    if not solution.objective.is_mean:  # absent for the mean: its tables are unchanged
        header["objective"] = solution.objective.id
    header["hmac"] = _mac(secret, header, arrays)
    head = np.frombuffer(json.dumps(header).encode(), dtype=np.uint8)
    write_atomic_with(  # streamed to the file, never held whole in memory
        path,
        lambda fh: np.savez(
            fh, header=head, values=arrays["values"], codes=arrays["codes"], pmin=arrays["pmin"], dims=arrays["dims"]
        ),
    )
    if solution.objective.is_mean:
        _drop_stale(path, solution.variant)
    return str(header["hmac"])


def load(
    variant: Variant,
    path: Path | None = None,
    *,
    secret: bytes | None = None,
    max_states: int | None = None,
    verify_values: bool = False,
    objective: Objective = MEAN,
) -> Solution:
    """The cached table for `variant`, signed with this user's key; with `verify_values` (as
    `load_or_solve` always asks) also checked against the solver (`verify`: one score exploration),
    once per table: a table whose signature is in the user's verified-tables record is not checked again.

    Raises FileNotFoundError (no table), CacheInvalid (a table that must not be used),
    StateSpaceTooLarge (more states than `max_states`), OSError / FileError (the path
    cannot be read: a folder, a FIFO, no permission) or CacheUnavailable (no key).
    """
    path = path or cache_path(variant, objective)
    secret = secret if secret is not None else _secret()
    raw = fileio.read_bytes(path, limit=_size_limit(max_states), what="strategy table")
    try:
        with np.load(io.BytesIO(raw), allow_pickle=False) as data:
            header = json.loads(bytes(data["header"]).decode())
            arrays = {name: data[name] for name in _ARRAYS}
    except Exception as exc:
        raise CacheInvalid(f"unreadable ({type(exc).__name__}: {exc})") from None
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise CacheInvalid("not a dicecup strategy table of this version")
    if not isinstance(header.get("hmac"), str) or not hmac.compare_digest(header["hmac"], _mac(secret, header, arrays)):
        raise CacheInvalid("its signature does not match this user's key (damaged, or not written by dicecup here)")
    if header.get("key") != cache_key(variant, objective) or header.get("fingerprint") != variant.fingerprint:
        raise CacheInvalid("stale: made for other rules, plugins or another solver version")
    if header.get("objective", "mean") != objective.id:
        raise CacheInvalid(f"made for objective {header.get('objective', 'mean')}, not {objective.id}")
    try:
        states = int(header["states"])
        if max_states is not None and states > max_states:
            raise StateSpaceTooLarge(variant.id, states, max_states, complete=True)
        index = StateIndex(
            variant,
            header["groups"],
            header["clamps"],
            header["box_min"],
            header["box_max"],
            arrays["codes"],
            arrays["pmin"],
            arrays["dims"],
            header.get("symmetric", ()),
        )
        if {str(b): list(v) for b, v in index.flag_values.items()} != header["flags"]:
            raise CacheInvalid("stale: the rules declare other state flags")
        values = arrays["values"]
        banks = bank_sizes(variant)
        shape = (index.size + 1,) if banks == 1 else (index.size + 1, banks)
        if values.shape != shape or values.dtype not in (np.float64, np.float32):
            raise CacheInvalid("inconsistent: value array does not match the index")
        if not objective.is_mean and values.dtype != np.float64:
            raise CacheInvalid("inconsistent: a risk table must be float64")
        solution = Solution(variant, index, arrays["values"], states, float(header["seconds"]), objective=objective)
    except (CacheInvalid, StateSpaceTooLarge):
        raise
    except Exception as exc:
        raise CacheInvalid(f"inconsistent ({type(exc).__name__}: {exc})") from None
    if verify_values and header["hmac"] not in _verified():
        verify(solution)
        _note_verified(header["hmac"])
    return solution


# ---------------------------------------------------------------------- small signed records

RECORD_FORMAT = "dicecup/record-1"
RECORD_LIMIT = 4 << 20  # a record is a few kB to a few hundred kB of JSON


def record_path(variant: Variant, kind: str) -> Path:
    """Where a small record of `kind` about `variant` lives: beside its table, `<stem>-<key>.<kind>.json`."""
    safe = "".join(c for c in kind if c.isalnum() or c == "-")[:32] or "record"
    return cache_dir() / f"{_stem(variant)}-{cache_key(variant)}.{safe}.json"


def _record_mac(secret: bytes, record: dict) -> str:
    body = json.dumps({k: v for k, v in record.items() if k != "hmac"}, sort_keys=True).encode()
    return hmac.new(secret, body, hashlib.sha256).hexdigest()


def load_record(variant: Variant, kind: str, warn: Callable[[str], None] | None = None) -> dict | None:
    """The payload of the record of `kind` for `variant` (what `save_record` wrote), or None when there is
    none, or it cannot be used: unsigned, tampered with, stale, not a regular file (a FIFO, a folder),
    too big, garbled. A bad file is deleted; the caller then computes the payload again."""
    path = record_path(variant, kind)
    say = warn or (lambda message: None)
    try:
        secret = _secret()
        raw = fileio.read_bytes(path, limit=RECORD_LIMIT, what=f"{kind} record")
    except FileNotFoundError:
        return None
    except FileError as exc:
        if not path.exists():
            return None
        say(f"the {kind} record is not used: {exc}")
        return None
    except (OSError, CacheUnavailable) as exc:
        say(f"the {kind} record is not used: {exc}")
        return None
    try:
        record = json.loads(raw.decode("utf-8"))
        ok = (
            isinstance(record, dict)
            and record.get("format") == RECORD_FORMAT
            and isinstance(record.get("hmac"), str)
            and hmac.compare_digest(record["hmac"], _record_mac(secret, record))
            and record.get("kind") == kind
            and record.get("key") == cache_key(variant)
            and record.get("fingerprint") == variant.fingerprint
            and isinstance(record.get("payload"), dict)
        )
    except (UnicodeDecodeError, ValueError, RecursionError):
        ok = False
    if not ok:
        _discard(path, say, f"the {kind} record {path} is damaged or not ours; it is removed and made again")
        return None
    payload: dict = record["payload"]
    return payload


def _discard(path: Path, say: Callable[[str], None], why: str) -> None:
    """Say why a cache file is not used and remove it (a regular file only: never what a link points at)."""
    say(why)
    try:
        if path.is_file() and not path.is_symlink():
            path.unlink()
    except OSError:
        pass


def save_record(variant: Variant, kind: str, payload: dict, warn: Callable[[str], None] | None = None) -> None:
    """Sign and write (atomically) a small JSON record about `variant`; where the cache cannot be used,
    a warning, and nothing is kept. Records of the same variant made by other code are removed."""
    path = record_path(variant, kind)
    try:
        secret = _secret()
        record = {
            "format": RECORD_FORMAT,
            "kind": kind,
            "key": cache_key(variant),
            "fingerprint": variant.fingerprint,
            "payload": payload,
        }
        record["hmac"] = _record_mac(secret, record)
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, json.dumps(record).encode("utf-8"))
        for old in path.parent.glob(f"{_stem(variant)}-*.{path.name.rsplit('.', 2)[-2]}.json"):
            if old != path and old.is_file() and not old.is_symlink():
                old.unlink(missing_ok=True)
    except (OSError, FileError, CacheUnavailable) as exc:
        (warn or (lambda message: None))(f"the {kind} record is not kept: {exc}")


# ---------------------------------------------------------------------- signed arrays beside the table

ARRAYS_FORMAT = "dicecup/arrays-1"
ARRAYS_LIMIT = 64 << 20  # what is kept beside a table: the advisor's score tables, a few hundred kB to MBs


def arrays_path(variant: Variant, kind: str) -> Path:
    """Where the arrays of `kind` about `variant` live: beside its table, `<stem>-<key>.<kind>.npz`."""
    safe = "".join(c for c in kind if c.isalnum() or c == "-")[:32] or "arrays"
    return cache_dir() / f"{_stem(variant)}-{cache_key(variant)}.{safe}.npz"


def save_arrays(
    variant: Variant,
    kind: str,
    meta: dict,
    arrays: dict[str, np.ndarray],
    warn: Callable[[str], None] | None = None,
    limit: int = ARRAYS_LIMIT,
) -> None:
    """Sign (as a table is signed: the cache key, the variant's fingerprint, every array's bytes) and write
    atomically named arrays of `kind` about `variant` with a small JSON `meta`; where the cache cannot be used,
    nothing is kept (a warning), nor where they are over `limit` bytes. Older ones of the same variant are
    removed."""
    path = arrays_path(variant, kind)
    say = warn or (lambda message: None)
    names = sorted(arrays)
    if sum(a.nbytes for a in arrays.values()) > limit:
        return  # only a cost (they are made again); not worth a warning on every run
    try:
        secret = _secret()
        header = {
            "format": ARRAYS_FORMAT,
            "kind": kind,
            "key": cache_key(variant),
            "fingerprint": variant.fingerprint,
            "names": names,
            "meta": meta,
        }
        header["hmac"] = _mac(secret, header, arrays, names)
        head = np.frombuffer(json.dumps(header).encode(), dtype=np.uint8)
        path.parent.mkdir(parents=True, exist_ok=True)
        named: dict[str, Any] = {"header": head} | {f"a_{n}": arrays[n] for n in names}
        write_atomic_with(path, lambda fh: np.savez(fh, **named))
        for old in path.parent.glob(f"{_stem(variant)}-*.{path.name.rsplit('.', 2)[-2]}.npz"):
            if old != path and old.is_file() and not old.is_symlink():
                old.unlink(missing_ok=True)
    except (OSError, FileError, CacheUnavailable) as exc:
        say(f"the {kind} arrays are not kept: {_reason(exc)}")


def load_arrays(
    variant: Variant, kind: str, warn: Callable[[str], None] | None = None, limit: int = ARRAYS_LIMIT
) -> tuple[dict, dict[str, np.ndarray]] | None:
    """(meta, arrays) that `save_arrays` wrote for `variant`, or None when there are none or they cannot be
    trusted: not signed with this user's key, tampered with, stale (other rules, plugins or solver version),
    garbled, over `limit` bytes, not a regular file. A bad file is deleted (said through `warn`); the caller
    computes the arrays again."""
    path = arrays_path(variant, kind)
    say = warn or (lambda message: None)
    try:
        raw = fileio.read_bytes(path, limit=limit + (1 << 20), what=f"{kind} arrays")
        secret = _secret()  # after: asking for arrays that are not there makes no key
    except FileNotFoundError:
        return None
    except (OSError, FileError, CacheUnavailable) as exc:
        if isinstance(exc, FileError) and not path.exists():
            return None
        say(f"the {kind} arrays are not used: {_reason(exc)}")
        return None
    try:
        with np.load(io.BytesIO(raw), allow_pickle=False) as data:
            header = json.loads(bytes(data["header"]).decode())
            names = header["names"]
            arrays = {n: data[f"a_{n}"] for n in names}
        ok = (
            isinstance(header, dict)
            and header.get("format") == ARRAYS_FORMAT
            and isinstance(header.get("hmac"), str)
            and hmac.compare_digest(header["hmac"], _mac(secret, header, arrays, names))
            and header.get("kind") == kind
            and header.get("key") == cache_key(variant)
            and header.get("fingerprint") == variant.fingerprint
            and isinstance(header.get("meta"), dict)
        )
    except Exception:  # garbled: not an npz, no header, a missing array, a bad name
        ok = False
    if not ok:
        _discard(path, say, f"the {kind} arrays {path} are damaged, stale or not ours; they are removed and made again")
        return None
    meta: dict = header["meta"]
    return meta, arrays


# ---------------------------------------------------------------------- checking values


def _class_sizes(index: StateIndex) -> np.ndarray:
    """How many value slots each class has (its totals are stored densely)."""
    return index.class_dims.prod(axis=1) if index.G else np.ones(len(index.class_codes), dtype=np.int64)


def _slot_starts(index: StateIndex) -> np.ndarray:
    """The first value slot of each class, in class order."""
    sizes = _class_sizes(index)
    return np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)


def _state_at(index: StateIndex, starts: np.ndarray, slot: int) -> tuple[int, np.ndarray]:
    """(class code, (1, G) clamped totals) of value slot `slot`."""
    c = int(np.searchsorted(starts, slot, side="right") - 1)
    code = int(index.class_codes[c])
    off = slot - int(starts[c])
    prog = np.zeros((1, index.G), dtype=np.int64)
    for g in range(index.G):
        prog[0, g] = int(index.class_pmin[c, g]) + (off // int(index.strides[g, code])) % int(index.class_dims[c, g])
    return code, prog


def verify(solution: Solution, sample: int = SAMPLE, rng: np.random.Generator | None = None) -> None:
    """Check a table against the solver: the start state and `sample` random states recomputed from their
    successors (dp.score_arrays + reference.turn_value), and random full cards against their end bonuses
    (the engine's); CacheInvalid when a value differs by more than 1e-9 (relative for a risk objective,
    whose values may be far below 1)."""
    from .dp import state_values
    from .solve import terminal_values

    ix, values = solution.index, solution.values
    at_start = solution.column(0)  # every reachable state can be reached with nothing banked
    rng = rng or np.random.default_rng()  # fresh entropy: which states are checked cannot be known beforehand
    starts = _slot_starts(ix)
    full_class = (ix.class_codes & ix.full) == ix.full
    inner, ends = [ix.state_of_card(Card())], []
    for slot in rng.integers(0, ix.size, size=8 * sample) if ix.size else []:
        if not np.isfinite(at_start[int(slot)]):
            continue  # a total the class never reaches
        code, prog = _state_at(ix, starts, int(slot))
        if code & ix.full != ix.full and len(inner) <= sample:
            inner.append((code, prog))
    full_slots = np.concatenate(
        [np.arange(a, a + n) for a, n in zip(starts[full_class], _class_sizes(ix)[full_class], strict=False)]
    )
    for slot in rng.choice(full_slots, size=min(len(full_slots), sample), replace=False) if len(full_slots) else []:
        if np.isfinite(at_start[int(slot)]):
            ends.append(_state_at(ix, starts, int(slot)))
    space = solution.space
    model = space.model
    checks: list[tuple[int, np.ndarray]] = []
    for code, prog in inner:
        codes = np.array([code], dtype=np.int64)
        again = state_values(space, values, int(model.context_of(codes)[0]), codes, prog, solution.objective)
        checks.append((int(ix.lookup(codes, prog)[0]), again[0]))
    if ends:
        codes = np.array([c for c, _ in ends], dtype=np.int64)
        prog = np.concatenate([p for _, p in ends]).reshape(len(ends), ix.G)
        bonus = solution.objective.terminal(terminal_values(model, space)(codes, prog))
        checks += [
            (int(at), np.full(values.shape[1:], v)) for at, v in zip(ix.lookup(codes, prog), bonus, strict=False)
        ]
    tolerance = TOLERANCE if values.dtype == np.float64 else TOLERANCE_FLOAT32
    for at, again in checks:
        if at >= ix.size:
            raise CacheInvalid("inconsistent: a state of the game has no value")
        stored = np.asarray(values[at], dtype=np.float64)
        known = np.isfinite(again)  # banks the card cannot carry stay NaN
        scale = np.abs(again) if not solution.objective.is_mean else np.maximum(1.0, np.abs(again))
        bad = ~(np.abs(again - stored) <= tolerance * scale) & known
        if bad.any() or np.isfinite(stored[~known]).any():
            i = int(np.flatnonzero(bad | (np.isfinite(stored) & ~known))[0]) if stored.ndim else 0
            want, got = (float(again), float(stored)) if stored.ndim == 0 else (float(again[i]), float(stored[i]))
            raise CacheInvalid(f"wrong values: a state holds {got!r} where the solver computes {want!r}")


# ---------------------------------------------------------------------- the one entry point

_RECENT: dict[str, tuple[tuple[int, int, int], Solution]] = {}  # path -> (file stamp, checked solution)
RECENT = 8


def _stamp(path: Path) -> tuple[int, int, int] | None:
    """(inode, size, mtime) of a regular file, None otherwise: a file changed on disk is read again."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns) if stat.S_ISREG(st.st_mode) else None


def _remember(path: Path, solution: Solution) -> None:
    """Keep a checked table for the next call in this process (a game asks for it several times);
    it is used again only for a variant with the same rule hooks (the same engine)."""
    stamp = _stamp(path)
    if stamp is not None:
        _RECENT.pop(str(path), None)
        _RECENT[str(path)] = (stamp, solution)
        while len(_RECENT) > RECENT:
            _RECENT.pop(next(iter(_RECENT)))


def load_or_solve(
    variant: Variant,
    max_states: int = DEFAULT_MAX_STATES,
    progress: Reporter | None = None,
    *,
    use_cache: bool = True,
    warn: Callable[[str], None] | None = None,
    workdir: str | os.PathLike | None = None,
    objective: Objective = MEAN,
    backend: LayerBackend | None = None,
) -> tuple[Solution, bool]:
    """(solution, whether it came from the cache), `max_states` enforced either way.

    A variant the solver refuses is refused before the cache is touched. A bad table is
    reported, deleted and rebuilt; a cache that cannot be used is reported and skipped.
    A solve keeps its table in `workdir` while it runs (`solve`), and resumes there.
    `objective`: the table of a risk objective (kept in the cache beside the mean's, one per theta).
    `backend`: where the backward pass of a solve runs (`solve`), the table cached as any other.
    """
    check_solvable(variant)
    say = warn or (lambda message: None)

    def solve_it() -> Solution:
        return solve(
            variant, max_states=max_states, progress=progress, workdir=workdir, objective=objective, backend=backend
        )

    if not use_cache:
        return solve_it(), False
    try:
        secret = _secret()
    except CacheUnavailable as exc:
        say(f"the strategy-table cache is not used: {exc}")
        return solve_it(), False
    path = cache_path(variant, objective)
    if path.parent.exists() and not path.parent.is_dir():
        say(f"the strategy-table cache is not used: {path.parent} is not a folder")
        return solve_it(), False
    recent = _RECENT.get(str(path))
    if recent is not None and recent[0] == _stamp(path) and recent[1].variant.hooks is variant.hooks:
        if recent[1].states > max_states:
            raise StateSpaceTooLarge(variant.id, recent[1].states, max_states, complete=True)
        return recent[1], True
    writable = True
    try:
        solution = load(variant, path, secret=secret, max_states=max_states, verify_values=True, objective=objective)
        _remember(path, solution)
        return solution, True
    except FileNotFoundError:
        pass
    except CacheInvalid as exc:
        say(f"cache file {path} ignored and rebuilt: {exc}")
        try:
            path.unlink()
        except OSError as err:
            say(f"could not delete {path} ({err.strerror or err}); the result is not cached")
            writable = False
    except (OSError, FileError) as exc:
        say(f"the strategy-table cache is not used: {_reason(exc)}")
        writable = False
    solution = solve_it()
    if writable:
        try:
            _note_verified(_write(solution, path, secret))  # the solver's own values: nothing to check on load
            _remember(path, solution)
        except (OSError, FileError) as exc:
            say(f"could not write the cache ({_reason(exc)}); the result is not cached")
        else:
            if objective.is_mean:
                keep_card_tables(solution, warn)
    return solution, False


def keep_card_tables(solution: Solution, warn: Callable[[str], None] | None = None) -> None:
    """Keep the solve's complete scoring tables (`card_tables`) beside its table, signed as it is, for the
    advisor of a later process; nothing where the search is not at hand, its boxes are interchangeable
    (the advisor reads such cards otherwise), or the tables would be over `ARRAYS_LIMIT`."""
    space = solution.searched
    known = space.searched_legality if space is not None else None
    if space is None or known is None or solution.index.symmetric:
        return
    if len(known[0]) * 40 > ARRAYS_LIMIT:  # five words a class at least: refused before it is built
        return
    tables = CardTables.of(space)
    if tables is not None:
        save_arrays(solution.variant, CARD_TABLES, {"layout": CARD_LAYOUT}, tables.arrays(), warn)


def _reason(exc: Exception) -> str:
    """An OSError or FileError in one line, with the path."""
    if isinstance(exc, OSError) and exc.strerror:
        return f"{exc.filename}: {exc.strerror}" if exc.filename else exc.strerror
    return str(exc)
