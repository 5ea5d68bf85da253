"""The strategy table on disk: one .npz per (variant, options, plugins, rules code, solver version).

The file holds the state values, the small arrays that rebuild the state index, and a JSON header with the
cache key (`tablekeys`), signed with an HMAC keyed by a per-user secret kept in the state folder, never in the
cache folder: someone who can write the cache but not read the key cannot forge a table. A file that fails
any check is deleted and the variant solved again; a cache that cannot be used (no key, a FIFO, no
permission) is reported as a warning and the answer computed uncached. Tables are written atomically.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import stat
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from .. import fileio
from ..errors import shown
from ..fileio import FileError, write_atomic, write_atomic_with
from ..language.model import Variant
from ..numeric.coding import StateIndex
from ..numeric.objective import MEAN, Objective
from ..progress import Reporter
from ..signing import (
    CACHE_ENV,
    KEY_BYTES,
    KEY_FILE,
    STATE_ENV,
    CacheInvalid,
    CacheUnavailable,
    cache_dir,
    key_path,
    state_dir,
)
from ..signing import signing_key as _secret
from ..store import store_of
from . import tablekeys
from .card_tables import KIND as CARD_TABLES
from .card_tables import LAYOUT as CARD_LAYOUT
from .card_tables import CardTables
from .dp import LayerBackend
from .endtables import EndAwards
from .errors import StateSpaceTooLarge
from .rules import RuleModel, check_solvable
from .signed import mac, read_signed_npz, write_npz
from .solve import DEFAULT_MAX_STATES, SOLVER_VERSION, Solution, solve
from .space import bank_sizes
from .spotcheck import SAMPLE, TOLERANCE, TOLERANCE_FLOAT32, check_shapes, verify
from .tablekeys import MAX_ID_CHARS, _drop_stale, _stem, cache_key, cache_path

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
    "read_signed_npz",
    "KEY_FILE",
    "KEY_BYTES",
    "SAMPLE",
    "TOLERANCE",
    "TOLERANCE_FLOAT32",
    "MAX_ID_CHARS",
]

FORMAT = "dicecup/strategy-table-2"
_rules_digest, _rules_files, _digest = tablekeys._rules_digest, tablekeys._rules_files, tablekeys._digest  # as before
_ARRAYS = ("values", "codes", "pmin", "dims")


def _mac(secret: bytes, header: dict, arrays: Mapping[str, np.ndarray], names: Iterable[str] = _ARRAYS) -> str:
    """The signature of a table (`signed.mac` over its arrays, or over `names`)."""
    return mac(secret, header, arrays, names)


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
    end = solution.end_table() if solution.searched is not None else None
    kept_end = end.encode() if end is not None else None
    if kept_end is not None:  # a later process's runs read their end bonuses here (`endtables`)
        header["end_awards"] = kept_end
    header["hmac"] = _mac(secret, header, arrays)
    head = np.frombuffer(json.dumps(header).encode(), dtype=np.uint8)
    write_atomic_with(  # streamed to the file, never held whole in memory
        path,
        lambda fh: write_npz(fh, {"header": head} | {n: arrays[n] for n in _ARRAYS}),
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
    model: RuleModel | None = None,
) -> Solution:
    """The cached table for `variant`, signed with this user's key; with `verify_values` (as
    `load_or_solve` always asks) also checked against the solver (`verify`: one score exploration),
    once per table: a table whose signature is in the user's verified-tables record is not checked again.

    Read as every signed file is (`signed.read_signed_npz`: bounded, nothing trusted before the signature),
    then its declared shapes checked against what the variant allows before any index is built.

    `model`: the variant's rules model where the caller learned it already (the solution's search structures
    are built from it, not from the rules again).

    Raises FileNotFoundError (no table), CacheInvalid (a table that must not be used),
    StateSpaceTooLarge (more states than `max_states`), OSError / FileError (the path
    cannot be read: a folder, a FIFO, no permission) or CacheUnavailable (no key).
    """
    path = path or cache_path(variant, objective)
    secret = secret if secret is not None else _secret()

    def check(header: dict, arrays: Mapping[str, np.ndarray]) -> None:
        if header.get("key") != cache_key(variant, objective) or header.get("fingerprint") != variant.fingerprint:
            raise CacheInvalid("stale: made for other rules, plugins or another solver version")
        if header.get("objective", "mean") != objective.id:
            raise CacheInvalid(f"made for objective {shown(header.get('objective', 'mean'))}, not {objective.id}")
        check_shapes(variant, objective, header, arrays, max_states)

    header, arrays = read_signed_npz(
        path, secret=secret, fmt=FORMAT, names=_ARRAYS, limit=_size_limit(max_states), what="strategy table",
        check=check, mapped=True, private=True,  # vouched for while unchanged: its bytes hashed once, not per process
    )  # fmt: skip
    try:
        index = StateIndex(
            variant,
            groups=header["groups"],
            clamps=header["clamps"],
            box_min=header["box_min"],
            box_max=header["box_max"],
            codes=arrays["codes"],
            pmin=arrays["pmin"],
            dims=arrays["dims"],
            symmetric=header.get("symmetric", ()),
        )
        if {str(b): list(v) for b, v in index.flag_values.items()} != header["flags"]:
            raise CacheInvalid("stale: the rules declare other state flags")
        values = arrays["values"]
        banks = bank_sizes(variant)
        shape = (index.size + 1,) if banks == 1 else (index.size + 1, banks)
        if values.shape != shape:
            raise CacheInvalid("inconsistent: value array does not match the index")
        solution = Solution(
            variant, index, values, int(header["states"]), float(header["seconds"]), objective=objective, model=model
        )
        if "end_awards" in header:
            solution.kept_end = EndAwards.decode(header["end_awards"], index)
    except CacheInvalid:
        raise
    except Exception as exc:
        raise CacheInvalid(f"inconsistent ({type(exc).__name__}: {shown(str(exc))})") from None
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
        write_atomic_with(path, lambda fh: write_npz(fh, named))
        for old in path.parent.glob(f"{_stem(variant)}-*.{path.name.rsplit('.', 2)[-2]}.npz"):
            if old != path and old.is_file() and not old.is_symlink():
                old.unlink(missing_ok=True)
    except (OSError, FileError, CacheUnavailable) as exc:
        say(f"the {kind} arrays are not kept: {_reason(exc)}")


def load_arrays(
    variant: Variant,
    kind: str,
    warn: Callable[[str], None] | None = None,
    limit: int = ARRAYS_LIMIT,
    mapped: bool = False,
    private: bool = False,
) -> tuple[dict, dict[str, np.ndarray]] | None:
    """(meta, arrays) that `save_arrays` wrote for `variant`, or None when there are none or they cannot be
    trusted: not signed with this user's key, tampered with, stale (other rules, plugins or solver version),
    garbled, over `limit` bytes, not a regular file. Read as every signed file is (`signed.read_signed_npz`).
    A bad file is deleted (said through `warn`); the caller computes the arrays again. `mapped`: large
    arrays, mapped and shared read-only rather than read and copied; `private`, mapped (its signature hashed
    once while the file is unchanged) but copied out (`signed.read_signed_npz`)."""
    path = arrays_path(variant, kind)
    say = warn or (lambda message: None)
    if not os.path.lexists(path):
        return None  # asking for arrays that are not there makes no key
    try:
        secret = _secret()
        header, arrays = read_signed_npz(
            path,
            secret=secret,
            fmt=ARRAYS_FORMAT,
            names=None,
            limit=limit + (1 << 20),
            what=f"{kind} arrays",
            mapped=mapped or private,
            private=private,
        )
    except FileNotFoundError:
        return None
    except (OSError, FileError, CacheUnavailable) as exc:
        if isinstance(exc, FileError) and not path.exists():
            return None
        say(f"the {kind} arrays are not used: {_reason(exc)}")
        return None
    except CacheInvalid as exc:
        _discard(
            path,
            say,
            f"the {kind} arrays {path} are damaged, stale or not ours ({exc}); they are removed and made again",
        )
        return None
    ok = (
        header.get("kind") == kind
        and header.get("key") == cache_key(variant)
        and header.get("fingerprint") == variant.fingerprint
        and isinstance(header.get("meta"), dict)
    )
    if not ok:
        _discard(path, say, f"the {kind} arrays {path} are damaged, stale or not ours; they are removed and made again")
        return None
    meta: dict = header["meta"]
    return meta, arrays


# ---------------------------------------------------------------------- the one entry point

RECENT_KIND = "loaded-tables"
RECENT = 8
"""Tables read from the cache that the variant's engine keeps (by path: the file's stamp and the checked solution)."""


def _stamp(path: Path) -> tuple[int, int, int] | None:
    """(inode, size, mtime) of a regular file, None otherwise: a file changed on disk is read again."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns) if stat.S_ISREG(st.st_mode) else None


def _remember(path: Path, solution: Solution) -> None:
    """Keep a checked table for the next call (a game asks for it several times), in the store of the engine
    that compiled its variant; it is used again only for a variant with the same rule hooks."""
    stamp = _stamp(path)
    if stamp is not None:
        store_of(solution.variant).replace(RECENT_KIND, str(path), (stamp, solution), RECENT)


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
    model: RuleModel | None = None,
) -> tuple[Solution, bool]:
    """(solution, whether it came from the cache), `max_states` enforced either way.

    A variant the solver refuses is refused before the cache is touched. A bad table is
    reported, deleted and rebuilt; a cache that cannot be used is reported and skipped.
    A solve keeps its table in `workdir` while it runs (`solve`), and resumes there.
    `objective`: the table of a risk objective (kept in the cache beside the mean's, one per theta).
    `backend`: where the backward pass of a solve runs (`solve`), the table cached as any other.
    `model`: the variant's rules model where the caller learned it already (`check_objective`, say), passed on
    to the solve or the loaded solution: the rules are learned once.
    """
    check_solvable(variant)
    say = warn or (lambda message: None)

    def solve_it() -> Solution:
        return solve(variant, max_states=max_states, progress=progress, workdir=workdir, objective=objective,
                     backend=backend, model=model)  # fmt: skip

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
    recent = store_of(variant).peek(RECENT_KIND, str(path))
    if recent is not None and recent[0] == _stamp(path) and recent[1].variant.hooks is variant.hooks:
        if recent[1].states > max_states:
            raise StateSpaceTooLarge(variant.id, recent[1].states, max_states, complete=True)
        return recent[1], True
    writable = True
    try:
        solution = load(
            variant, path, secret=secret, max_states=max_states, verify_values=True, objective=objective, model=model
        )
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
