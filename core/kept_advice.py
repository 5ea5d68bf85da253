"""Advice kept per card: a card's advice table (every option of every roll, for each number of rolls left,
ranked as `dicecup advise` ranked them), kept signed in the user's cache folder, so that a later question
about the same card is a look-up that needs neither the engine, the solver nor numpy.

The command line learns a card's table the first time it advises on that card (`cli.advise_kept`), and
reads it back here. A table is named by the question that made it (the variant as given, its options, the
card) and the user's key; it is used only when its key is the one asked for (the bytes of the code that
decides an answer, of the variant's text, the installed distributions, the Python) and its signature
holds. Another key is a miss (the table is learned again, over it); a file that fails its signature or does
not hold a table is said (`warn`) and removed. The scoring rules live in the engine alone: a table holds
what the engine and the solver answered, nothing here scores a roll.
"""

from __future__ import annotations

import hashlib
import hmac
import marshal
import os
import sys
from collections.abc import Callable, Iterable
from importlib.util import find_spec
from pathlib import Path
from typing import Any, NamedTuple

from . import fileio
from .fileio import FileError
from .keptfile import KeptFile, files_digest
from .signing import cache_dir

__all__ = ["FOLDER", "FORMAT", "KEEP", "LIMIT", "CardAdvice", "KeptAdvice", "Question", "read_dice"]

FORMAT = b"dicecup-advice-1"
FOLDER = "advice"  # in the cache folder
LIMIT = 16 << 20  # bytes of one card's table (Yahtzee's: about 300 kB)
KEEP = 256  # tables kept at most: past it, the least recently written go first
VARIANT_LIMIT = 1 << 20  # bytes of a variant file (the engine reads at most this much too)
AUTOLOAD_ENV = "DICECUP_DISABLE_PLUGIN_AUTOLOAD"  # (the engine's switch: which plugins load is in the key)

#: the code an answer depends on, by folder of the package: the rules, the numeric core, the solver, the
#: rankings and the command's own modules (this one with them)
_CODE_FOLDERS = ("language", "numeric", "solver")
_CODE_FILES = ("__init__.py", "kept_advice.py", "rankings.py", "cli/advising.py", "cli/advise_kept.py")


class Question(NamedTuple):
    """What names a card's table: the variant as the command line gave it (an id, or a file's path), its
    `--option` flags in order, the `--card` text (stripped; "" an empty card), the `--strategy` asked for."""

    variant: str
    options: tuple[str, ...]
    card: str
    strategy: str


class Move(NamedTuple):
    """One ranked option: the action (a box's id, or the kept dice), its value, what the box scores now."""

    action: str | tuple[int, ...]
    value: float
    points: int | None


class CardAdvice(NamedTuple):
    """A card's advice table. `head`: what an answer says besides its moves (variant id, options, strategy,
    objective, notes, the card as read), and the variant's dice, faces and most rolls left; `actions`: every
    move's action (a box's id, or the kept dice); `turns[left][roll]`: the ranked moves with `left` rolls left
    and the sorted roll `roll`, as (action numbers, values, points now)."""

    head: dict[str, Any]
    actions: tuple[str | tuple[int, ...], ...]
    turns: tuple[dict[tuple[int, ...], tuple[tuple[int, ...], tuple[float, ...], tuple[int | None, ...]]], ...]

    def moves(self, roll: tuple[int, ...], left: int) -> list[Move]:
        """The ranked moves of sorted roll `roll` with `left` rolls left (LookupError where the table has none)."""
        numbers, values, points = self.turns[left][roll]
        return [Move(self.actions[n], v, p) for n, v, p in zip(numbers, values, points, strict=True)]


class KeptAdvice:
    """Cards' advice tables kept signed in the cache folder (`FOLDER`), one file per question; kept only where
    the user has a signing key already (the solver makes it). `warn` says why a kept file is not used."""

    def __init__(self, warn: Callable[[str], None] | None = None) -> None:
        self._file = KeptFile(FORMAT, "kept advice table", LIMIT, "made again", warn, most=KEEP)

    def get(self, question: Question) -> CardAdvice | None:
        """The table kept for `question`, or None (none, another key, no key, a bad file: removed)."""
        return self._file.load(
            lambda secret: self.path(secret, question),
            lambda: question_key(question),
            lambda payload: _decode(marshal.loads(payload)),
        )

    def put(self, question: Question, table: CardAdvice) -> None:
        """Keep `table` for the next process (nothing where it cannot be kept: it only saves time), and at most
        `KEEP` tables."""
        self._file.keep(
            lambda secret: self.path(secret, question),
            lambda: question_key(question),
            lambda: marshal.dumps((table.head, table.actions, table.turns)),
        )

    @staticmethod
    def path(secret: bytes, question: Question) -> Path:
        """The file of `question`'s table: named by the question (a file variant by its absolute path) and the
        user's key, so that users sharing a cache folder keep theirs apart."""
        variant = _variant_path(question.variant) or question.variant
        what = "\0".join((variant, *question.options, "", question.card, question.strategy)).encode(
            "utf-8", "surrogatepass"
        )
        return cache_dir() / FOLDER / f"{hmac.new(secret, what, hashlib.sha256).hexdigest()[:32]}.advice"


def read_dice(text: str, count: int, faces: int) -> tuple[int, ...] | None:
    """The dice of a plain `--dice` text (`11256`, or `1,1,2,5,6`), each die within 1..faces, `count` of them;
    None for anything else (the engine reads it, and says what is wrong)."""
    raw = text.strip()
    parts = raw.replace(" ", ",").split(",") if ("," in raw or " " in raw) else list(raw) if faces < 10 else [raw]
    parts = [p for p in parts if p]
    if len(parts) != count or not all(p.isascii() and p.isdigit() and len(p) <= 3 for p in parts):
        return None
    values = tuple(int(p) for p in parts)
    return values if all(1 <= d <= faces for d in values) else None


def question_key(question: Question) -> bytes | None:
    """What a table must have been learned with for `question`: the code (`_code_digest`), the variant's
    text, the installed distributions, the Python; None where the variant's file cannot be read."""
    h = hashlib.sha256(_code_digest())
    path = _variant_path(question.variant)
    if path is not None:
        try:
            h.update(b"file\0" + fileio.read_bytes(path, limit=VARIANT_LIMIT, what="variant file"))
        except (OSError, FileError):
            return None
    h.update(_installed())
    h.update(f"\0{os.environ.get(AUTOLOAD_ENV, '')}\0{sys.version_info[:2]}".encode())
    return h.hexdigest().encode()


def _variant_path(variant: str) -> str | None:
    """The absolute path of a variant given as a file (as the engine reads it: by its suffix), else None."""
    return os.path.abspath(variant) if variant.endswith((".yaml", ".yml")) else None


def _code_digest() -> bytes:
    """The bytes of the code and data an answer depends on (`_CODE_FOLDERS`, `_CODE_FILES`, the built-in
    plugins and variants), hashed: a file edited in place, or copied with its times kept, changes the key."""
    here = Path(__file__).parent
    files = [here / name for name in _CODE_FILES]
    files += [f for name in _CODE_FOLDERS for f in sorted((here / name).glob("*.py"))]
    for package, pattern in (("dicecup.plugins", "*.py"), ("dicecup.variants", "*.yaml")):
        spec = find_spec(package)
        for folder in (spec.submodule_search_locations or []) if spec is not None else []:
            files += sorted(Path(folder).glob(pattern))
    return files_digest(files)


def _installed(paths: Iterable[str] | None = None) -> bytes:
    """The distributions installed on the import path (each metadata folder's name and time, in path order):
    a plugin installed, removed or upgraded since a table was learned changes it; the folders themselves do
    not (a script's folder or the working one first on the path, holding none)."""
    h = hashlib.sha256()
    for entry in sys.path if paths is None else paths:
        folder = entry or "."
        try:
            names = sorted(os.listdir(folder))
        except OSError:
            continue
        for name in names:
            if name.lower().endswith((".dist-info", ".egg-info")):
                try:
                    stamp = os.stat(os.path.join(folder, name)).st_mtime_ns
                except OSError:
                    stamp = -1
                h.update(f"\0{name}\0{stamp}".encode("utf-8", "surrogatepass"))
    return h.digest()


def _decode(data: Any) -> CardAdvice:
    """The table `marshal` read (ValueError where it is not one a `put` wrote)."""
    head, actions, turns = data
    if not isinstance(head, dict) or not isinstance(actions, tuple) or not isinstance(turns, tuple):
        raise ValueError("not an advice table")
    if not all(isinstance(t, dict) for t in turns) or len(turns) != head["most"] + 1:
        raise ValueError("not an advice table")
    return CardAdvice(head, actions, turns)
