"""A file kept in the cache folder to save time, signed with the user's key: one header line (its format, the
key it was made for, its signature), then its payload.

A kept file is read only when its format is the one asked for, its key the one asked for and its signature
holds; another key is a miss (the caller makes it again, over it), and a file that is not one (a damaged,
forged or unreadable file, or a payload the caller cannot decode: `discard`) is said and removed. Used for the
parsed variant documents (`language.parsed`) and the cards' advice tables (`kept_advice`).
"""

from __future__ import annotations

import hashlib
import hmac
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TypeVar

from . import fileio
from .fileio import FileError
from .signing import CacheUnavailable, existing_key

__all__ = ["KeptFile", "files_digest", "prune"]

T = TypeVar("T")


class KeptFile:
    """Kept files of one format (`fmt`, their first word), named `what` in messages ("kept variant document"),
    at most `limit` bytes; `again` says what happens to a removed one ("parsed again"); `warn` hears why a
    file is not used."""

    def __init__(
        self,
        fmt: bytes,
        what: str,
        limit: int,
        again: str,
        warn: Callable[[str], None] | None = None,
        most: int | None = None,
    ) -> None:
        self.fmt, self.what, self.limit, self.again, self._warn = fmt, what, limit, again, warn
        self.most = most
        """Files of this kind (their folder and suffix) kept at most: past it, the least recently written go."""

    def load(
        self, path_of: Callable[[bytes], Path], key: Callable[[], bytes | None], decode: Callable[[bytes], T]
    ) -> T | None:
        """What `decode` reads of the payload kept at `path_of(secret)` for `key()`, or None: no key yet (a
        user who never solved), no file, another key, or a bad file or payload (said, and removed)."""
        try:
            secret = existing_key()
        except CacheUnavailable:
            return None
        if secret is None:
            return None
        path = path_of(secret)
        payload = self.read(path, secret, key)
        if payload is None:
            return None
        try:
            return decode(payload)
        except Exception:  # signed but not what this code writes: whatever it raises
            self.discard(path, f"it does not hold a {self.what.removeprefix('kept ')}")
            return None

    def keep(
        self, path_of: Callable[[bytes], Path], key: Callable[[], bytes | None], payload: Callable[[], bytes]
    ) -> None:
        """Keep `payload()` at `path_of(secret)` for `key()`, where the user has a key already and both can be
        made (else nothing: a kept file only saves time); then at most `most` files of its kind."""
        try:
            secret = existing_key()
            made = key() if secret is not None else None
            if secret is None or made is None:
                return
            path = path_of(secret)
            self.write(path, secret, made, payload())
        except (CacheUnavailable, OSError, FileError, ValueError):
            return
        if self.most is not None:
            prune(path.parent, path.suffix, self.most)

    def read(self, path: Path, secret: bytes, key: Callable[[], bytes | None]) -> bytes | None:
        """The payload of the file at `path` made for `key()` (asked only where there is a file; None: nothing
        is kept for it) and signed with `secret`, or None: no file, another key, or a bad file (said, and
        removed)."""
        if not os.path.lexists(path):
            return None
        try:
            raw = fileio.read_bytes(path, limit=self.limit, what=self.what)
        except (OSError, FileError) as exc:
            if os.path.lexists(path):
                self._say(f"the {self.what} {path} is not used: {exc}")
            return None
        head, _, payload = raw.partition(b"\n")
        parts = head.split(b" ")
        if len(parts) != 3 or parts[0] != self.fmt:
            self.discard(path, f"not a {self.what}")
            return None
        want = key()
        if want is None or parts[1] != want:
            return None  # made for another key (other code, another text): made again, and kept over it
        if not hmac.compare_digest(parts[2], self.mac(secret, want, payload)):
            self.discard(path, "its signature does not match this user's key")
            return None
        return payload

    def write(self, path: Path, secret: bytes, key: bytes, payload: bytes) -> None:
        """Keep `payload` at `path` for `key`, signed with `secret` (the whole file or nothing; OSError or
        FileError where it cannot be written)."""
        path.parent.mkdir(parents=True, exist_ok=True)
        fileio.write_atomic(path, b" ".join((self.fmt, key, self.mac(secret, key, payload))) + b"\n" + payload)

    def mac(self, secret: bytes, key: bytes, payload: bytes) -> bytes:
        """The signature of `payload` made for `key`, with the user's `secret`."""
        return hmac.new(secret, self.fmt + b"\0" + key + b"\0" + payload, hashlib.sha256).hexdigest().encode()

    def discard(self, path: Path, why: str) -> None:
        """Say why the kept file is not used, and remove it (a regular file only, never a link's target)."""
        self._say(f"the {self.what} {path} is damaged, stale or not ours ({why}); it is removed and {self.again}")
        try:
            if path.is_file() and not path.is_symlink():
                path.unlink()
        except OSError:
            pass

    def _say(self, message: str) -> None:
        if self._warn is not None:
            self._warn(message)


def prune(folder: Path, suffix: str, most: int) -> None:
    """Keep at most `most` files named *`suffix` in `folder`, the least recently written removed first (a
    removed one is only made again): a cache of one file per variant or card stays bounded."""
    try:
        found = [(e.stat().st_mtime_ns, e.path) for e in os.scandir(folder) if e.name.endswith(suffix)]
    except OSError:
        return
    for _, path in sorted(found)[: max(0, len(found) - most)]:
        try:
            os.unlink(path)
        except OSError:
            pass


def files_digest(paths: Iterable[Path], seed: bytes = b"") -> bytes:
    """SHA-256 of `seed` and each file's name and bytes (a missing file as missing): what a kept file's key
    holds of the code or data it depends on (the bytes, not the times: a file copied with its times kept, or
    edited twice within the clock's tick, still changes it)."""
    h = hashlib.sha256(seed)
    for path in paths:
        h.update(path.name.encode() + b"\0")
        try:
            h.update(path.read_bytes())
        except OSError:
            h.update(b"missing")
    return h.digest()
