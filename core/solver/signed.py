"""Signed cache files: their signature with the per-user key (`signing`, whose names this module hands on), and
the one safe way to read a signed .npz (`read_signed_npz`).

A signed .npz is what `numpy.savez` writes (a zip of uncompressed .npy members): a `header` member holding
JSON with an HMAC-SHA256 (`mac`) of that JSON and of every array's name, type, shape and bytes, keyed by a
per-user secret (a random file, mode 0600, in the state folder, never in the cache folder). Reading one
never trusts what the file declares before its signature holds: the file is read whole but bounded and
without blocking (`fileio.read_bytes`), its zip directory must be a few members, every member stored (never
compressed: nothing is inflated), every array's declared size the size of its bytes in the file, and the
signature is checked over those bytes in place; only then is anything copied out of the file.
"""

from __future__ import annotations

import hashlib
import hmac
import io
import json
import mmap
import os
import struct
import time
import zipfile
from collections.abc import Callable, Iterable, Mapping
from typing import IO, cast

import numpy as np

from .. import fileio
from ..fileio import FileError
from ..signing import CacheInvalid, state_dir

__all__ = [
    "mac",
    "read_signed_npz",
    "write_npz",
    "HEADER_LIMIT",
]

HEADER_LIMIT = 4 << 20  # the JSON header of a signed file: a few kB (a table's index shape, flags)
MAX_MEMBERS = 64  # members of a signed .npz: the header and a few arrays
_DIRECTORY_LIMIT = 1 << 16  # bytes of zip directory a signed .npz may have (a few hundred are enough)
_NPY_HEADER_LIMIT = 1 << 16  # bytes of one .npy member's own header (shape and type: under 200)
_SIMPLE_KINDS = "biuf"  # the array types a signed file may hold: no objects, records, strings, times


def mac(secret: bytes, header: dict, arrays: Mapping[str, np.ndarray], names: Iterable[str]) -> str:
    """HMAC-SHA256 of the header (without its MAC) and every array's name, type, shape and bytes."""
    h = hmac.new(secret, digestmod=hashlib.sha256)
    h.update(json.dumps({k: v for k, v in header.items() if k != "hmac"}, sort_keys=True).encode())
    for name in names:
        a = np.ascontiguousarray(arrays[name])
        h.update(f"\0{name}\0{a.dtype.str}\0{a.shape}\0".encode())
        h.update(a.reshape(-1).view(np.uint8).data)  # the bytes in place: a large table is not copied
    return h.hexdigest()


# ---------------------------------------------------------------------- writing a signed .npz

ALIGN = 64  # where each array's bytes start in the file: a mapped array is then a view, never a copy
_PAD_FIELD = 0xD935  # the zip extra field that pads a member's header (the id zipalign uses)


def write_npz(fh: IO[bytes], arrays: Mapping[str, np.ndarray]) -> None:
    """Write `arrays` to `fh` as `numpy.savez` would (a zip of stored .npy members, read back by `numpy.load`),
    but with each member's header padded so its array's bytes start at a multiple of ALIGN in the file."""
    with zipfile.ZipFile(fh, mode="w", compression=zipfile.ZIP_STORED, allowZip64=True) as zf:
        for name, array in arrays.items():
            a = np.asanyarray(array)
            info = zipfile.ZipInfo(f"{name}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_STORED
            info.file_size = _npy_size(a)
            bare = fh.tell() + 30 + len(info.filename.encode()) + 4  # local header, name, an empty field
            if info.file_size * 1.05 > zipfile.ZIP64_LIMIT:
                bare += 20  # zipfile adds its zip64 field to a large member's local header
            info.extra = struct.pack("<HH", _PAD_FIELD, -bare % ALIGN) + bytes(-bare % ALIGN)
            with zf.open(info, mode="w", force_zip64=info.file_size * 1.05 > zipfile.ZIP64_LIMIT) as out:
                np.lib.format.write_array(out, a, allow_pickle=False)


def _npy_size(a: np.ndarray) -> int:
    """The bytes `numpy.lib.format.write_array` writes for `a`: its padded header, then its data."""
    buffer = io.BytesIO()
    np.lib.format.write_array_header_1_0(buffer, np.lib.format.header_data_from_array_1_0(a))
    return buffer.tell() + a.nbytes


# ---------------------------------------------------------------------- reading a signed .npz


def read_signed_npz(
    path: str | os.PathLike,
    *,
    secret: bytes,
    fmt: str,
    names: Iterable[str] | None,
    limit: int,
    what: str,
    check: Callable[[dict, Mapping[str, np.ndarray]], None] | None = None,
    mapped: bool = False,
    private: bool = False,
) -> tuple[dict, dict[str, np.ndarray]]:
    """(header, arrays) of the signed .npz at `path`, its header's "format" `fmt`, holding the arrays `names`
    (None: those its header lists under "names") signed with `secret`; `check(header, arrays)` may refuse it
    (CacheInvalid) before the arrays are copied out of the file.

    The file is read bounded by `limit` bytes and without blocking; its zip directory, every member's declared
    size and the signature over the bytes in place are checked before anything is copied, and nothing is ever
    inflated. FileNotFoundError (no file), FileError (not a regular file, too big, unreadable) or CacheInvalid
    (anything wrong inside: not a zip, a compressed or missing member, sizes that do not add up, a bad
    signature) saying why.

    `mapped`: the file is mapped into memory rather than read, and its arrays are read-only views of the map
    where their bytes are aligned (a large table is then neither read twice nor copied: its pages are read as
    the signature is checked, and shared with the page cache). A mapped file checked once is vouched for
    (`_vouch`), and while it is unchanged on disk its later mappings skip hashing its bytes. `private` (with
    `mapped`): vouched for the same way, but every array copied out of the map, as a read file's are, so that
    nothing the caller holds can change under it (arrays whose values index memory, or a table a process keeps).
    """
    raw, st = _mapped(path, limit, what) if mapped else (fileio.read_bytes(path, limit=limit, what=what), None)
    members = _stored_members(raw)
    if "header" not in members:
        raise CacheInvalid("not a signed dicecup file (no header)")
    head = _npy_view(raw, *members["header"], "header")
    if head.dtype != np.uint8 or head.ndim != 1 or head.nbytes > HEADER_LIMIT:
        raise CacheInvalid("not a signed dicecup file (its header is not short text)")
    try:
        header = json.loads(head.tobytes().decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise CacheInvalid("not a signed dicecup file (its header is not JSON)") from None
    if not isinstance(header, dict) or header.get("format") != fmt:
        raise CacheInvalid(f"not a {fmt} file of this dicecup")
    listed = header.get("names") if names is None else list(names)
    if not isinstance(listed, list) or not all(isinstance(n, str) for n in listed) or len(listed) >= MAX_MEMBERS:
        raise CacheInvalid("not a signed dicecup file (its header lists no arrays)")
    member = (lambda n: n) if names is not None else (lambda n: f"a_{n}")
    if set(members) != {"header", *(member(n) for n in listed)} or len(set(listed)) != len(listed):
        raise CacheInvalid("its arrays are not the ones its kind holds")
    views = {n: _npy_view(raw, *members[member(n)], n) for n in listed}
    signature = header.get("hmac")
    if not isinstance(signature, str):
        raise CacheInvalid("not a signed dicecup file (its header holds no signature)")
    stamp = _stamp_text(st, signature) if st is not None else None
    if stamp is None or stamp not in _vouched(secret):
        if not hmac.compare_digest(signature, mac(secret, header, views, listed)):
            raise CacheInvalid("its signature does not match this user's key (damaged, or not written by dicecup here)")
        if stamp is not None and st is not None and time.time_ns() - st.st_ctime_ns > VOUCH_AGE_NS:
            _vouch(secret, stamp)
    if check is not None:
        check(header, views)
    if mapped and not private:
        return header, {n: v if v.flags.aligned else np.array(v) for n, v in views.items()}
    return header, {n: np.array(v) for n, v in views.items()}  # aligned, writable copies


def _mapped(path: str | os.PathLike, limit: int, what: str) -> tuple[mmap.mmap | bytes, os.stat_result]:
    """The regular file `path` (at most `limit` bytes) mapped read-only (an empty file as no bytes), and the
    status of the file mapped."""
    fd = fileio.open_descriptor(path, limit=limit, what=what)
    try:
        st = os.fstat(fd)
        if st.st_size == 0:
            return b"", st
        return mmap.mmap(fd, 0, access=mmap.ACCESS_READ), st
    except OSError as exc:
        raise fileio.FileError(path, f"cannot map the file: {(exc.strerror or type(exc).__name__).lower()}") from None
    finally:
        os.close(fd)


# ---------------------------------------------------------------------- vouched mapped files
# A mapped file whose whole signature was checked is vouched for: a line in the state folder, itself signed,
# holds its device, inode, size, modification and change times and signature. While none of those changed
# (a rewrite is a new inode, an edit in place changes the change time, which no user can set back), the next
# mapping skips hashing every byte, so a large table's second use reads only the pages it needs. As git does
# with its index, a file changed in the last few seconds is not vouched for (see VOUCH_AGE_NS).

VOUCHED_FILE = "vouched-files"
VOUCHED_KEEP = 64  # files remembered (the oldest are forgotten first)
VOUCH_AGE_NS = 3_000_000_000  # a file changed more recently than this is not vouched for: the file system's
# clock is coarse, so an edit made just after it was checked could leave its times as they were


def _stamp_text(st: os.stat_result, signature: str) -> str:
    return f"{st.st_dev} {st.st_ino} {st.st_size} {st.st_mtime_ns} {st.st_ctime_ns} {signature}"


def _line_mac(secret: bytes, text: str) -> str:
    return hmac.new(secret, b"vouched\0" + text.encode(), hashlib.sha256).hexdigest()


def _vouched(secret: bytes) -> list[str]:
    """The stamps of the files vouched for with this user's key; a missing, unreadable, garbled or forged
    line vouches for nothing (the file's signature is then checked in full)."""
    try:
        raw = fileio.read_bytes(state_dir() / VOUCHED_FILE, limit=VOUCHED_KEEP * 256, what="vouched-files record")
    except (OSError, FileError):
        return []
    stamps = []
    for line in raw.decode("ascii", errors="replace").splitlines():
        text, _, line_mac = line.rpartition(" ")
        if text and hmac.compare_digest(line_mac, _line_mac(secret, text)):
            stamps.append(text)
    return stamps


def _vouch(secret: bytes, stamp: str) -> None:
    """Vouch for the file stamped `stamp` (best effort: a record that cannot be written only costs a full
    check next time)."""
    known = [t for t in _vouched(secret) if t != stamp][-(VOUCHED_KEEP - 1) :] + [stamp]
    try:
        fileio.write_atomic(state_dir() / VOUCHED_FILE, "".join(f"{t} {_line_mac(secret, t)}\n" for t in known))
    except (OSError, FileError):
        pass


def _stored_members(raw: bytes | mmap.mmap) -> dict[str, tuple[int, int]]:
    """Each member of the zip `raw` by name without ".npy": (where its bytes start, how many), every member
    stored uncompressed and lying inside `raw`; the directory's size is checked before it is parsed."""
    _check_directory_size(raw)
    try:
        with zipfile.ZipFile(cast(IO[bytes], raw) if isinstance(raw, mmap.mmap) else io.BytesIO(raw)) as zf:
            infos = zf.infolist()
    except Exception:  # zipfile reports a damaged archive with many types (BadZipFile, struct.error, ...)
        raise CacheInvalid("not a table file (not a zip archive)") from None
    out: dict[str, tuple[int, int]] = {}
    for info in infos:
        name = info.filename.removesuffix(".npy")
        if info.compress_type != zipfile.ZIP_STORED or info.flag_bits & 1:
            raise CacheInvalid("a member is compressed or encrypted: dicecup writes its tables uncompressed")
        if name in out or not info.filename.endswith(".npy") or info.file_size != info.compress_size:
            raise CacheInvalid("its members are not the arrays of a table")
        at = info.header_offset
        local = raw[at : at + 30]
        if len(local) != 30 or local[:4] != b"PK\x03\x04":
            raise CacheInvalid("not a table file (a member's header is missing)")
        name_len, extra_len = struct.unpack("<2H", local[26:30])
        start = at + 30 + name_len + extra_len
        if start + info.compress_size > len(raw):
            raise CacheInvalid(f"truncated: member {name} runs past the end of the file")
        out[name] = (start, info.compress_size)
    return out


def _check_directory_size(raw: bytes | mmap.mmap) -> None:
    """Refuse a zip whose directory (found as zipfile finds it: the last end record) lists more than
    MAX_MEMBERS members or is longer than _DIRECTORY_LIMIT bytes, before zipfile builds one object per entry."""
    end = raw.rfind(b"PK\x05\x06", max(0, len(raw) - (1 << 16) - 22))
    if end < 0 or len(raw) - end < 22:
        raise CacheInvalid("not a table file (not a zip archive)")
    entries, size = struct.unpack("<HL", raw[end + 10 : end + 16])
    if entries == 0xFFFF or size == 0xFFFFFFFF:  # a zip64 archive: its own end record says
        locator = raw[end - 20 : end]
        if len(locator) != 20 or locator[:4] != b"PK\x06\x07":
            raise CacheInvalid("not a table file (a zip64 archive without its end record)")
        (record,) = struct.unpack("<Q", locator[8:16])
        body = raw[record : record + 56]
        if len(body) != 56 or body[:4] != b"PK\x06\x06":
            raise CacheInvalid("not a table file (a zip64 archive without its end record)")
        entries, size = struct.unpack("<2Q", body[32:48])
    if entries > MAX_MEMBERS or size > _DIRECTORY_LIMIT:
        raise CacheInvalid(f"not a table file (its zip directory lists {entries:,} members in {size:,} bytes)")


def _npy_view(raw: bytes | mmap.mmap, start: int, length: int, name: str) -> np.ndarray:
    """The array the .npy member at raw[start:start + length] holds, as a read-only view of those bytes: its
    declared type must be a plain number type and its declared shape exactly fill the member."""
    head = io.BytesIO(raw[start : start + min(length, _NPY_HEADER_LIMIT)])
    try:
        version = np.lib.format.read_magic(head)
        reader = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
        shape, fortran, dtype = reader(head, max_header_size=_NPY_HEADER_LIMIT)
    except Exception:  # ValueError mostly; whatever a garbled header raises
        raise CacheInvalid(f"array {name}: not a .npy array") from None
    if dtype.kind not in _SIMPLE_KINDS or dtype.hasobject or dtype.fields is not None or dtype.subdtype is not None:
        raise CacheInvalid(f"array {name}: holds {dtype}, not numbers")
    count = 1
    for n in shape:
        count *= n  # exact: a declared shape of 10**12 x 10**12 is refused, not wrapped around
    body = length - head.tell()
    if fortran or count * dtype.itemsize != body:
        raise CacheInvalid(
            f"array {name}: declares {shape} of {dtype} ({count * dtype.itemsize:,} bytes) in {body:,} bytes"
        )
    try:
        return np.frombuffer(raw, dtype=dtype, count=count, offset=start + head.tell()).reshape(shape)
    except ValueError:  # an empty array declared with a dimension past what numpy indexes (0 x 10**13 x 10**13)
        raise CacheInvalid(f"array {name}: declares the shape {shape}, which no array can have") from None
