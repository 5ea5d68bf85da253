"""`dicecup play --save` files read in tests: the records of their lines, and the game they hold."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from dicecup import Engine, GameState
from dicecup.terminal import savefile
from dicecup.terminal.journal import sealed


def records(path: Path) -> list[dict[str, Any]]:
    """The records of the save's whole lines (a line cut short by a crash is left out), their sums dropped."""
    out = []
    for line in path.read_bytes().split(b"\n")[:-1]:
        record = json.loads(line)
        del record["sum"]
        out.append(record)
    return out


def header(path: Path) -> dict[str, Any]:
    """The save's first line: the variant, the players, the seats and the hints."""
    return records(path)[0]


def moves(path: Path) -> list[list[Any]]:
    """Every move the save holds, as JSON (["roll", [...]], ["score", "chance"], ...)."""
    return [r["move"] for r in records(path) if "move" in r]


def state(path: Path, engine: Engine | None = None, **kwargs: Any) -> GameState:
    """The game the save holds, read as `dicecup resume` reads it."""
    return savefile.load(path, engine or Engine(entry_points=False), **kwargs).state


def reseal(path: Path, change: Callable[[list[dict[str, Any]]], list[dict[str, Any]]]) -> None:
    """Rewrite the save with `change(records)`, every line sealed again: a forgery that keeps the checksums."""
    out, before = [], b""
    for record in change(records(path)):
        line, before = sealed(record, before)
        out.append(line)
    path.write_bytes(b"".join(out))
