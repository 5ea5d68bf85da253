"""Journals: append-only files of JSON lines, each sealed by a running checksum.

A journal is a header line, then one line per record. Every line is a compact JSON
object ending in `"sum":"<16 hex digits>"}`: a BLAKE2b digest of the previous line's
sum and this line's JSON without its sum, so a line edited, removed, repeated or
moved breaks the chain at that line. Lines are appended with one `write` each, so a
killed process leaves whole lines, and at worst (the machine stopping) one last line
cut short: reading drops that cut tail and says so, and refuses anything else with
the line at fault.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Iterator
from typing import Any

from attrs import frozen

from ..errors import SaveError
from ..fileio import FileError, open_regular, read_open, write_new

__all__ = ["MAX_LINE", "Journal", "Line", "Writer", "lines", "read_journal", "sealed"]

MAX_LINE = 64 << 10  # a record's line; the longest a game writes is a dice generator's state, 7 kB
SYNC_EVERY = 1.0  # seconds: appended lines reach the disk at least this often, whatever else asks
_SUM = b',"sum":"'
_SUM_TAIL = len(_SUM) + 16 + 2  # ,"sum":"<16 hex>"}


def _digest(before: bytes, body: bytes) -> bytes:
    return hashlib.blake2b(before + body, digest_size=8).hexdigest().encode("ascii")


def sealed(record: dict[str, Any], before: bytes) -> tuple[bytes, bytes]:
    """`record` as a journal line after the line whose sum is `before`, and its own sum."""
    body = json.dumps(record, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode("utf-8")
    if not record or not body.endswith(b"}"):
        raise ValueError("a journal record is a non-empty JSON object")
    digest = _digest(before, body)
    return body[:-1] + _SUM + digest + b'"}\n', digest


@frozen
class Line:
    """One whole line of a journal: its number (from 1), where it ends (the next line starts), its record
    and its sum."""

    number: int
    end: int
    record: dict[str, Any]
    sum: bytes


@frozen
class Journal:
    """A journal read back: its lines in order, and the cut tail dropped (its length in bytes, 0 if none)."""

    lines: tuple[Line, ...]
    end: int  # the length of the whole lines: where the next line goes
    torn: int


def lines(data: bytes, path: str | os.PathLike) -> Iterator[Line]:
    """Each whole line of `data`, checked; SaveError naming the first line that is not a journal line."""
    before, start, number = b"", 0, 0
    while start < len(data):
        stop = data.find(b"\n", start, start + MAX_LINE + 1)
        number += 1
        if stop < 0:
            if len(data) - start > MAX_LINE:
                raise SaveError(f"{path}: line {number} is longer than {MAX_LINE:,} bytes: not a dicecup save line")
            return  # a cut tail: the caller reports it
        raw = data[start:stop]
        if len(raw) < _SUM_TAIL + 2 or raw[-_SUM_TAIL:-18] != _SUM or not raw.endswith(b'"}'):
            raise SaveError(f"{path}: line {number} is not a sealed dicecup save line; the file was changed")
        body, digest = raw[:-_SUM_TAIL] + b"}", raw[-18:-2]
        if _digest(before, body) != digest:
            raise SaveError(f"{path}: line {number} does not match its checksum: the file was changed or damaged there")
        try:
            record = json.loads(body)
        except (ValueError, RecursionError):
            raise SaveError(f"{path}: line {number} is not JSON; the file was changed") from None
        if not isinstance(record, dict):
            raise SaveError(f"{path}: line {number} is not a JSON object; the file was changed")
        yield Line(number, stop + 1, record, digest)
        before, start = digest, stop + 1


def read_journal(data: bytes, path: str | os.PathLike) -> Journal:
    """Every whole line of `data` (see `lines`) and the length of a cut last line, if any."""
    found = tuple(lines(data, path))
    end = found[-1].end if found else 0
    return Journal(found, end, len(data) - end)


class Writer:
    """Appends sealed lines to a journal file, and takes lines back from its end (for an undo).

    Each line is one `write` (whole lines survive a killed process). Lines reach the disk
    (fsync) when the caller asks (`sync=True`: before a player is asked to decide), at least
    every `SYNC_EVERY` seconds otherwise, and on `close`: the cost of an fsync is paid about
    once a second, not once a move, and nothing a player saw is lost.
    """

    def __init__(self, fd: int, path: str | os.PathLike, ends: list[int], sums: list[bytes]) -> None:
        self.fd = fd
        self.path = path
        self._ends = ends  # byte offset after each line
        self._sums = sums  # each line's sum
        self._synced = time.monotonic()

    @classmethod
    def create(cls, path: str | os.PathLike, header: dict[str, Any], first: list[dict[str, Any]]) -> Writer:
        """A new journal at `path` (replacing any file, atomically) holding `header` and the records `first`."""
        _check_free(path)
        out, ends, sums, before = bytearray(), [], [], b""
        for record in [header, *first]:
            line, before = sealed(record, before)
            out += line
            ends.append(len(out))
            sums.append(before)
        try:
            fd = write_new(path, lambda fh: fh.write(out))
        except OSError as exc:
            raise FileError(path, f"cannot write the file: {(exc.strerror or type(exc).__name__).lower()}") from None
        try:
            _lock(fd, path)
        except BaseException:
            os.close(fd)
            raise
        return cls(fd, path, ends, sums)

    @classmethod
    def reopen(cls, path: str | os.PathLike, limit: int) -> tuple[Writer, bytes]:
        """An existing file opened to append to (locked against other writers), and its bytes: the caller
        reads them (`read_journal`) and hands the journal to `adopt`."""
        fd = open_regular(path, os.O_RDWR, limit=limit, what="saved game")
        try:
            _lock(fd, path)
            data = read_open(fd, path, limit=limit, what="saved game")
        except BaseException:
            os.close(fd)
            raise
        return cls(fd, path, [], []), data

    def adopt(self, journal: Journal) -> None:
        """Append after `journal`'s whole lines (what `reopen` read): a cut last line is cut off first."""
        self._ends = [line.end for line in journal.lines]
        self._sums = [line.sum for line in journal.lines]
        if journal.torn:
            os.ftruncate(self.fd, journal.end)
        os.lseek(self.fd, 0, os.SEEK_END)

    def __len__(self) -> int:
        """The number of lines."""
        return len(self._ends)

    def append(self, records: list[dict[str, Any]], sync: bool = False) -> None:
        """Seal and append `records`; fsync when `sync` or when the last fsync is `SYNC_EVERY` old."""
        out, before = bytearray(), self._sums[-1]
        end = self._ends[-1]
        for record in records:
            line, before = sealed(record, before)
            if len(line) > MAX_LINE:
                raise SaveError(f"{self.path}: a record of {len(line):,} bytes is too long for a save line")
            out += line
            self._ends.append(end + len(out))
            self._sums.append(before)
        _write_all(self.fd, bytes(out))
        if sync or time.monotonic() - self._synced >= SYNC_EVERY:
            self.sync()

    def truncate(self, keep: int) -> None:
        """Keep only the first `keep` lines (at least the header)."""
        keep = max(1, keep)
        if keep < len(self._ends):
            del self._ends[keep:], self._sums[keep:]
            os.ftruncate(self.fd, self._ends[-1])
            os.lseek(self.fd, self._ends[-1], os.SEEK_SET)  # the next line goes where the kept ones end

    def sync(self) -> None:
        os.fsync(self.fd)
        self._synced = time.monotonic()

    def close(self) -> None:
        """Flush the lines to disk and close the file (once)."""
        if self.fd >= 0:
            try:
                os.fsync(self.fd)
            finally:
                os.close(self.fd)
                self.fd = -1


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _lock(fd: int, path: str | os.PathLike, shared: bool = False) -> None:
    """Refuse a journal that another process is writing (an advisory lock, where the system has one)."""
    try:
        import fcntl
    except ImportError:  # Windows: no advisory locks here
        return
    try:
        fcntl.flock(fd, (fcntl.LOCK_SH if shared else fcntl.LOCK_EX) | fcntl.LOCK_NB)
    except BlockingIOError:
        raise SaveError(f"{path}: another dicecup process is playing this game now; nothing was written") from None
    except OSError:
        pass  # a file system without locks


def _check_free(path: str | os.PathLike) -> None:
    """Refuse to replace a journal another process is writing (a missing or odd file is the writer's concern)."""
    try:
        fd = open_regular(path, limit=1 << 62)
    except FileError:
        return
    try:
        _lock(fd, path, shared=True)
    finally:
        os.close(fd)
