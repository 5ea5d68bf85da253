"""Variant documents kept parsed: a variant's YAML text, once parsed, kept in the user's cache folder, signed
with the user's key, so that the next process reads the document back without PyYAML (its import and parse
are most of what reading a variant costs a short command).

An engine given a `KeptDocuments` (`Engine(documents=...)`, as the command line's is) asks it before parsing a
document and hands it what it parsed. A kept document is used only when its key (the text's bytes, the
parser's code and PyYAML's, the Python) is the one asked for and its signature holds (a file is named by its
source and the user's key: two keys sharing a cache folder never read each other's); anything else (another
text, other code, no key yet, a damaged, forged or unreadable file) is a miss, and the text is parsed as
always. A file that fails its signature or cannot be decoded is said (`warn`) and removed. A document holding
what the encoding does not (an alias's value shared by two places, a value that is not plain) is not kept.
"""

from __future__ import annotations

import hashlib
import hmac
import marshal
import sys
from collections.abc import Callable
from importlib.util import find_spec
from pathlib import Path
from typing import Any, Protocol

from ..keptfile import KeptFile, files_digest
from ..signing import cache_dir
from .yamlsource import LocDict, LocList

__all__ = ["Documents", "KeptDocuments", "FOLDER", "FORMAT", "KEEP", "LIMIT", "encode", "decode"]

FORMAT = b"dicecup-parsed-1"
FOLDER = "documents"  # in the cache folder
LIMIT = 32 << 20  # bytes of a kept document (a variant file has at most 1 MiB; aliases may expand it)
KEEP = 256  # documents kept at most (one a source file): past it, the least recently written go first
_SCALARS = (str, int, float, bool, type(None))


class Documents(Protocol):
    """What an engine asks for a variant's parsed document before it parses the text, and hands what it parsed."""

    def get(self, text: str, source: str, libyaml: bool) -> Any | None: ...
    def put(self, text: str, source: str, libyaml: bool, doc: Any) -> None: ...


class _Unkeepable(Exception):
    """A document the encoding cannot hold as parsed (it is then not kept)."""


class KeptDocuments:
    """Parsed variant documents kept signed in the cache folder (`FOLDER`), one file per source; a document
    is kept only where the user has a signing key already (the solver makes it), so a command that solves
    nothing writes nothing. `warn` says why a kept file is not used (damaged or not signed here)."""

    def __init__(self, warn: Callable[[str], None] | None = None) -> None:
        self._file = KeptFile(FORMAT, "kept variant document", LIMIT, "parsed again", warn, most=KEEP)
        self._code: bytes | None = None

    def get(self, text: str, source: str, libyaml: bool) -> Any | None:
        """The document parsed from `text` (its lines naming `source`) as kept, or None."""
        return self._file.load(
            lambda secret: self._path(secret, source, libyaml),
            lambda: self._key(text, libyaml),
            lambda payload: decode(marshal.loads(payload), source),
        )

    def put(self, text: str, source: str, libyaml: bool, doc: Any) -> None:
        """Keep `doc`, parsed from `text`, for the next process (nothing where it cannot be kept: only time)."""
        try:
            payload = marshal.dumps(encode(doc, source))
        except (_Unkeepable, ValueError):
            return
        self._file.keep(
            lambda secret: self._path(secret, source, libyaml), lambda: self._key(text, libyaml), lambda: payload
        )

    def _path(self, secret: bytes, source: str, libyaml: bool) -> Path:
        """The file of `source`'s document: named by the key too, so that state folders (or users) sharing a
        cache folder keep theirs apart instead of each taking the other's for a forgery."""
        what = b"name\0" + (b"c\0" if libyaml else b"p\0") + source.encode("utf-8", "surrogatepass")
        name = hmac.new(secret, what, hashlib.sha256).hexdigest()[:32]
        return cache_dir() / FOLDER / f"{name}.parsed"

    def _key(self, text: str, libyaml: bool) -> bytes:
        """What a kept document must have been parsed from: the text's bytes, by this code (`_code_digest`)."""
        if self._code is None:
            self._code = _code_digest()
        h = hashlib.sha256(self._code)
        h.update(b"\0c\0" if libyaml else b"\0p\0")
        h.update(text.encode("utf-8", "surrogatepass"))
        return h.hexdigest().encode()


def _code_digest() -> bytes:
    """The code a parsed document depends on: this encoding, the loader, PyYAML (its package, found without
    importing it) and the Python (marshal's format)."""
    here = Path(__file__).parent
    spec = find_spec("yaml")
    files = [here / "parsed.py", here / "yamlsource.py", here / "yamlload.py", here / "yamlparse.py"]
    files += [Path(spec.origin)] if spec is not None and spec.origin else []
    return files_digest(files, repr(sys.version_info[:2]).encode())


def encode(doc: Any, source: str) -> Any:
    """A parsed document as plain tuples, lists and values (marshal's), every line kept; _Unkeepable where it
    holds a shared container (an alias's value), a value that is not plain, or a line from another source."""
    seen: set[int] = set()

    def line(loc: Any) -> int:
        if loc is None:
            return -1
        if type(loc) is not tuple or len(loc) != 2 or loc[0] != source or type(loc[1]) is not int:
            raise _Unkeepable
        return loc[1]

    def walk(value: Any) -> Any:
        kind = type(value)
        if kind in _SCALARS:
            return value
        if id(value) in seen or kind not in (LocDict, LocList):
            raise _Unkeepable
        seen.add(id(value))
        if kind is LocDict:
            for key in value:
                if type(key) not in _SCALARS:
                    raise _Unkeepable
            return ("d", line(value.loc), [(k, line(value.key_locs.get(k)), walk(v)) for k, v in value.items()])
        if None in value.item_locs:
            raise _Unkeepable
        return ("l", line(value.loc), [walk(v) for v in value], [line(loc) for loc in value.item_locs])

    return walk(doc)


def decode(data: Any, source: str) -> Any:
    """The document `encode` made `data` of, its lines naming `source` (ValueError where `data` is not one)."""

    def loc(line: Any) -> tuple[str, int] | None:
        if type(line) is not int:
            raise ValueError("a line is not a number")
        return None if line < 0 else (source, line)

    def own(line: Any) -> tuple[str, int]:
        got = loc(line)
        if got is None:
            raise ValueError("a key or item without its line")
        return got

    def walk(value: Any) -> Any:
        if type(value) in _SCALARS:
            return value
        if type(value) is not tuple or not value:
            raise ValueError("not a document value")
        if value[0] == "d":
            _, at, entries = value
            out = LocDict(loc=loc(at))
            for key, key_at, item in entries:
                if type(key) not in _SCALARS:
                    raise ValueError("a key is not a plain value")
                out[key] = walk(item)
                if key_at != -1:
                    out.key_locs[key] = own(key_at)
            return out
        if value[0] == "l":
            _, at, items, item_lines = value
            seq = LocList([walk(v) for v in items], loc=loc(at))
            seq.item_locs = [own(n) for n in item_lines]
            return seq
        raise ValueError("not a document value")

    return walk(data)
