"""Safe file access for the whole package: bounded, non-blocking reading of text files and
atomic writing (the whole file or nothing), with short errors that never quote the file."""

from __future__ import annotations

import os
import re
import secrets
import stat
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

from .errors import DicecupError, shown_path

__all__ = [
    "FileError",
    "MissingFile",
    "decode",
    "kind_of",
    "open_descriptor",
    "open_regular",
    "read_bytes",
    "read_open",
    "read_text",
    "write_atomic",
    "write_atomic_with",
    "write_new",
    "TEMP_SUFFIX",
]

#: Temporary files are named `.PID.TOKEN.dicecup-tmp` in their destination's folder: short, whatever the
#: destination's name, so any name the file system allows can be written.
TEMP_SUFFIX = ".dicecup-tmp"
_TEMP_NAME = re.compile(r"\.(\d+)\.[0-9a-f]{8}" + re.escape(TEMP_SUFFIX))  # .PID.TOKEN.dicecup-tmp

_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
_WRITE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL
for _flag in ("O_BINARY", "O_CLOEXEC"):  # Windows needs O_BINARY; O_CLOEXEC keeps fds from children
    _READ_FLAGS |= getattr(os, _flag, 0)
    _WRITE_FLAGS |= getattr(os, _flag, 0)

_KINDS = (
    (stat.S_ISLNK, "a symbolic link"),
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


class FileError(DicecupError):
    """A file that cannot be read or written safely: which file, what is wrong, where in it."""

    def __init__(
        self, path: str | os.PathLike, message: str, *, line: int | None = None, column: int | None = None
    ) -> None:
        self.path = str(path)
        self.message = message
        self.line = line
        self.column = column
        super().__init__(f"{shown_path(self.path)}: {message}")


def _kind(mode: int) -> str:
    """What a non-regular file is, in words ("a directory", "a named pipe (FIFO)", ...)."""
    for test, name in _KINDS:
        if test(mode):
            return name
    return "not a regular file"


def kind_of(mode: int) -> str:
    """What a file of this `st_mode` is, in words, for a message ("a symbolic link", "a named pipe (FIFO)")."""
    return _kind(mode)


def _size(n: int) -> str:
    """A byte count for messages: `12.0 MiB (12,582,912 bytes)` or `512 bytes`."""
    return f"{n / (1 << 20):.1f} MiB ({n:,} bytes)" if n >= 100_000 else f"{n:,} bytes"


class MissingFile(FileError, FileNotFoundError):
    """The file does not exist (also a FileNotFoundError, for callers to whom that is no error)."""


def _os_error(path: str | os.PathLike, exc: OSError, doing: str) -> FileError:
    """A FileError for an OSError, with the system's reason but no traceback."""
    if isinstance(exc, FileNotFoundError):
        return MissingFile(path, f"cannot {doing} the file: no such file")
    return FileError(path, f"cannot {doing} the file: {(exc.strerror or type(exc).__name__).lower()}")


def read_bytes(path: str | os.PathLike, *, limit: int, what: str = "file", follow_symlinks: bool = True) -> bytes:
    """The bytes of the regular file `path`, at most `limit`, read without blocking.

    Anything else (missing, a directory, a FIFO, a device, too big; a symbolic link where `follow_symlinks` is
    False) is a FileError that names the file.
    """
    fd = open_descriptor(path, limit=limit, what=what, follow_symlinks=follow_symlinks)
    try:
        return read_open(fd, path, limit=limit, what=what)
    finally:
        os.close(fd)


def read_open(fd: int, path: str | os.PathLike, *, limit: int, what: str = "file") -> bytes:
    """The bytes of the open file `fd` (of `path`) from where it stands, at most `limit` (FileError beyond)."""
    chunks: list[bytes] = []
    left = limit + 1
    try:
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
    except OSError as exc:
        raise _os_error(path, exc, "read") from None
    data = b"".join(chunks)
    if len(data) > limit:
        raise FileError(path, f"grew beyond {_size(limit)} while being read; a {what} must be smaller")
    return data


def open_regular(
    path: str | os.PathLike, *, limit: int, what: str = "file", writable: bool = False, follow_symlinks: bool = True
) -> BinaryIO:
    """The regular file `path` of at most `limit` bytes opened in binary (for reading and writing where
    `writable`), checked and opened as `read_bytes` reads: never blocking on a FIFO, never a device."""
    fd = open_descriptor(
        path, os.O_RDWR if writable else os.O_RDONLY, limit=limit, what=what, follow_symlinks=follow_symlinks
    )
    try:
        if getattr(os, "O_NONBLOCK", 0):
            os.set_blocking(fd, True)  # a regular file: reads and writes may wait for the disk again
        return os.fdopen(fd, "r+b" if writable else "rb")
    except OSError as exc:
        os.close(fd)
        raise _os_error(path, exc, "open") from None


def open_descriptor(
    path: str | os.PathLike,
    access: int = os.O_RDONLY,
    *,
    limit: int,
    what: str = "file",
    follow_symlinks: bool = True,
) -> int:
    """A descriptor of the regular file `path` (at most `limit` bytes), opened without blocking; the file is
    checked before it is opened (opening a FIFO or a device can block or have effects) and again after (the
    file opened may not be the one checked)."""
    try:
        st = os.stat(path) if follow_symlinks else os.lstat(path)
    except OSError as exc:
        raise _os_error(path, exc, "read") from None
    _check_regular(path, st, limit, what)
    flags = _READ_FLAGS & ~os.O_RDONLY | access
    if not follow_symlinks:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)  # O_NONBLOCK: a FIFO swapped in after the check cannot hang us
    except OSError as exc:
        raise _os_error(path, exc, "read" if access & (os.O_WRONLY | os.O_RDWR) == 0 else "open for writing") from None
    try:
        _check_regular(path, os.fstat(fd), limit, what)
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_text(path: str | os.PathLike, *, limit: int, what: str = "file", follow_symlinks: bool = True) -> str:
    """The content of the regular UTF-8 text file `path`, at most `limit` bytes, read without blocking.

    Anything else (missing, a directory, a FIFO, a device, too big, binary, not UTF-8; a symbolic link where
    `follow_symlinks` is False) is a FileError that names the file and, for bad bytes, their line and column,
    never the bytes.
    """
    return decode(path, read_bytes(path, limit=limit, what=what, follow_symlinks=follow_symlinks), what)


def _check_regular(path: str | os.PathLike, st: os.stat_result, limit: int, what: str) -> None:
    """Refuse what is not a regular file, or is bigger than `limit` bytes."""
    if not stat.S_ISREG(st.st_mode):
        kind = _kind(st.st_mode)
        if stat.S_ISLNK(st.st_mode):
            try:
                kind += f" (to {shown_path(os.readlink(os.fspath(path)))})"
            except OSError:
                pass
        raise FileError(path, f"is {kind}, not a {what}")
    if st.st_size > limit:
        raise FileError(path, f"is {_size(st.st_size)}; a {what} may be at most {_size(limit)}")


def decode(path: str | os.PathLike, data: bytes, what: str) -> str:
    """`data` read from `path` as strict UTF-8 without NUL; the FileError gives the line and column of the first
    bad byte, never the bytes."""
    nul = data.find(b"\0")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        bad = exc.start
    else:
        if nul < 0:
            return text
        bad = -1
    at = min(p for p in (nul, bad) if p >= 0)
    line = data.count(b"\n", 0, at) + 1
    start = data.rfind(b"\n", 0, at) + 1
    column = len(data[start:at].decode("utf-8", errors="replace")) + 1
    if at == nul:
        message = f"has a NUL byte (line {line}, column {column}): a binary file, not a {what}"
    else:
        message = f"is not UTF-8 text (a bad byte at line {line}, column {column}); save the {what} as UTF-8"
    raise FileError(path, message, line=line, column=column)


def write_atomic(path: str | os.PathLike, data: str | bytes) -> None:
    """Replace `path` with `data` (str is written as UTF-8) all at once (`write_atomic_with`)."""
    payload = data.encode("utf-8") if isinstance(data, str) else data
    write_atomic_with(path, lambda fh: fh.write(payload))


def write_atomic_with(path: str | os.PathLike, write: Callable[[BinaryIO], object]) -> None:
    """Replace `path` with what `write(file)` writes, all at once: readers see the old file or the new.

    The writer streams into a temporary file beside `path` (a large table is never held
    twice in memory).
    A symlink's target is replaced and the symlink kept; the old file's permission bits are
    kept. The temporary file is named after this process, removed on any error, and the stale
    temporary files of dead writers in that folder are removed first. A destination that is not
    a regular file, or lies in no folder, is a FileError; a failed write an OSError.
    """
    os.close(write_new(path, write))


def write_new(path: str | os.PathLike, write: Callable[[BinaryIO], object]) -> int:
    """`write_atomic_with`, returning a descriptor of the new file open for writing, at its end (the caller
    closes it)."""
    target = Path(os.path.realpath(path))
    folder = target.parent
    if not folder.is_dir():
        raise FileError(path, f"cannot write it: the folder {folder} does not exist")
    try:
        st: os.stat_result | None = os.stat(target)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise _os_error(path, exc, "write") from None
    if st is not None and not stat.S_ISREG(st.st_mode):
        raise FileError(path, f"is {_kind(st.st_mode)}; it was not replaced")
    _remove_stale(folder)
    tmp = folder / f".{os.getpid()}.{secrets.token_hex(4)}{TEMP_SUFFIX}"
    mode = stat.S_IMODE(st.st_mode) if st is not None else 0o666  # a new file gets 0o666 less the umask
    fd = -1
    try:
        fd = os.open(tmp, _WRITE_FLAGS, mode)
        with os.fdopen(os.dup(fd), "wb") as fh:
            if st is not None and hasattr(os, "fchmod"):
                os.fchmod(fh.fileno(), mode)  # exactly the old bits, whatever the umask
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
        os.lseek(fd, 0, os.SEEK_END)  # where `write` stopped may not be the end (a zip writer seeks back)
    except BaseException:
        if fd >= 0:
            os.close(fd)
        tmp.unlink(missing_ok=True)
        raise
    _sync_folder(folder)
    return fd


def _remove_stale(folder: Path) -> None:
    """Delete the temporary files in `folder` of writers that no longer run (killed mid-write)."""
    try:
        names = [e.name for e in os.scandir(folder) if e.name.endswith(TEMP_SUFFIX)]
    except OSError:
        return
    for name in names:
        found = _TEMP_NAME.fullmatch(name)
        if found and not _alive(int(found.group(1))):
            (folder / name).unlink(missing_ok=True)


def _alive(pid: int) -> bool:
    """Whether process `pid` runs; when that cannot be known (Windows, no permission), assume it does."""
    if pid == os.getpid() or os.name == "nt":  # on Windows os.kill(pid, 0) would terminate it
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def _sync_folder(folder: Path) -> None:
    """Flush the folder entry of the replaced file to disk where the system allows it (POSIX)."""
    if os.name == "nt":
        return
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
