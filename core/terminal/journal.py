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
from array import array
from collections.abc import Iterator
from typing import Any

from ..errors import SaveError
from ..fileio import FileError, open_descriptor, read_open, write_new

__all__ = ["MAX_LINE", "Journal", "Writer", "sealed"]

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


class Journal:
    """A journal's whole lines, checked: where each ends and its sum (compact arrays), and the length of a
    cut last line dropped (0 if none). `records()` parses the lines."""

    def __init__(self, data: bytes, path: str | os.PathLike) -> None:
        self.data = data
        self.path = path
        self.ends = array("q")  # the byte offset after each line
        self.sums = bytearray()  # each line's 16-digit sum, one after another
        before, start = b"", 0
        while start < len(data):
            stop = data.find(b"\n", start, start + MAX_LINE + 1)
            number = len(self.ends) + 1
            if stop < 0:
                if len(data) - start > MAX_LINE:
                    raise SaveError(f"{path}: line {number} is longer than {MAX_LINE:,} bytes: not a dicecup save line")
                break  # a cut tail: reported by the caller
            if (
                stop - start < _SUM_TAIL + 2
                or data[stop - _SUM_TAIL : stop - 18] != _SUM
                or data[stop - 2 : stop] != b'"}'
            ):
                raise SaveError(f"{path}: line {number} is not a sealed dicecup save line; the file was changed")
            digest = data[stop - 18 : stop - 2]
            if _digest(before, data[start : stop - _SUM_TAIL] + b"}") != digest:
                raise SaveError(
                    f"{path}: line {number} does not match its checksum: the file was changed or damaged there"
                )
            self.ends.append(stop + 1)
            self.sums += digest
            before, start = digest, stop + 1
        self.end = self.ends[-1] if self.ends else 0  # where the next line goes
        self.torn = len(data) - self.end

    def __len__(self) -> int:
        return len(self.ends)

    def sum(self, line: int) -> bytes:
        """The sum of line `line` (from 1)."""
        return bytes(self.sums[16 * (line - 1) : 16 * line])

    def records(self, chunk: int = 4096) -> Iterator[tuple[int, dict[str, Any]]]:
        """(number, record) of each line in order, `chunk` lines parsed by one call; SaveError at a line that is
        not a JSON object."""
        for first in range(0, len(self.ends), chunk):
            bodies = [self._body(i) for i in range(first, min(first + chunk, len(self.ends)))]
            try:
                parsed = json.loads(b"[" + b",".join(bodies) + b"]")
            except (ValueError, RecursionError):
                parsed = None
            if not isinstance(parsed, list) or len(parsed) != len(bodies):
                parsed = [self._parse(first + k, body) for k, body in enumerate(bodies)]
            for k, record in enumerate(parsed):
                if not isinstance(record, dict):
                    raise SaveError(f"{self.path}: line {first + k + 1} is not a JSON object; the file was changed")
                yield first + k + 1, record

    def _body(self, i: int) -> bytes:
        start = self.ends[i - 1] if i else 0
        return self.data[start : self.ends[i] - 1 - _SUM_TAIL] + b"}"

    def _parse(self, i: int, body: bytes) -> Any:
        try:
            return json.loads(body)
        except (ValueError, RecursionError):
            raise SaveError(f"{self.path}: line {i + 1} is not JSON; the file was changed") from None


class Writer:
    """Appends sealed lines to a journal file, and takes lines back from its end (for an undo).

    Each line is one `write` (whole lines survive a killed process). Lines reach the disk
    (fsync) when the caller asks (`sync=True`: before a player is asked to decide), at least
    every `SYNC_EVERY` seconds otherwise, and on `close`: the cost of an fsync is paid about
    once a second, not once a move, and nothing a player saw is lost.
    """

    def __init__(self, fd: int, path: str | os.PathLike, ends: array[int], sums: bytearray) -> None:
        self.fd = fd
        self.path = path
        self._ends = ends  # the byte offset after each line
        self._sums = sums  # each line's 16-digit sum, one after another
        self._synced = time.monotonic()
        self.broken = False  # a failed write could not be taken back: nothing more is written

    @classmethod
    def create(cls, path: str | os.PathLike, header: dict[str, Any], first: list[dict[str, Any]]) -> Writer:
        """A new journal at `path` (replacing any file, atomically) holding `header` and the records `first`."""
        _check_free(path)
        out, ends, sums, before = bytearray(), array("q"), bytearray(), b""
        for record in [header, *first]:
            line, before = sealed(record, before)
            out += line
            ends.append(len(out))
            sums += before
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
        fd = open_descriptor(path, os.O_RDWR, limit=limit, what="saved game")
        try:
            _lock(fd, path)
            data = read_open(fd, path, limit=limit, what="saved game")
        except BaseException:
            os.close(fd)
            raise
        return cls(fd, path, array("q"), bytearray()), data

    def adopt(self, journal: Journal) -> None:
        """Append after `journal`'s whole lines (what `reopen` read): a cut last line is cut off first."""
        self._ends, self._sums = array("q", journal.ends), bytearray(journal.sums)
        if journal.torn:
            os.ftruncate(self.fd, journal.end)
        os.lseek(self.fd, 0, os.SEEK_END)

    def __len__(self) -> int:
        """The number of lines."""
        return len(self._ends)

    def append(self, records: list[dict[str, Any]], sync: bool = False) -> None:
        """Seal and append `records`; fsync when `sync` or when the last fsync is `SYNC_EVERY` old. A write that
        fails (a full disk) is taken back off the file, so that a later line never follows half of one."""
        if self.broken:
            raise OSError(f"{self.path}: an earlier write failed; nothing more is written")
        out, before, ends, sums = bytearray(), bytes(self._sums[-16:]), [], bytearray()
        end = self._ends[-1]
        for record in records:
            line, before = sealed(record, before)
            if len(line) > MAX_LINE:
                raise SaveError(f"{self.path}: a record of {len(line):,} bytes is too long for a save line")
            out += line
            ends.append(end + len(out))
            sums += before
        try:
            _write_all(self.fd, bytes(out))
        except OSError:
            self._cut(end)
            raise
        self._ends.extend(ends)
        self._sums += sums
        if sync or time.monotonic() - self._synced >= SYNC_EVERY:
            self.sync()

    def _cut(self, end: int) -> None:
        """Take the file back to `end` bytes after a failed write (or refuse every later write if that fails)."""
        try:
            os.ftruncate(self.fd, end)
            os.lseek(self.fd, end, os.SEEK_SET)
        except OSError:
            self.broken = True

    def truncate(self, keep: int) -> None:
        """Keep only the first `keep` lines (at least the header)."""
        keep = max(1, keep)
        if keep < len(self._ends):
            del self._ends[keep:], self._sums[16 * keep :]
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
        fd = open_descriptor(path, limit=1 << 62)
    except FileError:
        return
    try:
        _lock(fd, path, shared=True)
    finally:
        os.close(fd)
