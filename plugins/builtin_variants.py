"""Registers the variant files bundled in `dicecup.variants`."""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Iterator

from dicecup import hookimpl

#: The five main games, listed first in this order; other bundled files follow alphabetically.
FIRST = ("yahtzee", "yatzy", "yacht", "generala", "russian")


def _order(name: str) -> tuple[int, str]:
    stem = name.rsplit(".", 1)[0]
    return (FIRST.index(stem) if stem in FIRST else len(FIRST), stem)


def _bundled() -> Iterator[tuple[str, str]]:
    """(file name, text) of each `.yaml` file of `dicecup.variants`: read from its folder where the package is
    one on disk (importing `importlib.resources` would cost every engine about 7 ms), else through
    `importlib.resources` (a package inside an archive)."""
    package = importlib.import_module("dicecup.variants")  # (data only: no module for the type checker)
    folder = next((p for p in package.__path__ if os.path.isdir(p)), None)
    if folder is not None:
        with os.scandir(folder) as entries:
            names = [e.name for e in entries if e.name.endswith(".yaml") and e.is_file()]
        for name in names:
            with open(os.path.join(folder, name), encoding="utf-8") as f:
                yield name, f.read()
        return
    from importlib import resources

    for item in resources.files(package).iterdir():
        if item.name.endswith(".yaml"):
            yield item.name, item.read_text(encoding="utf-8")


@hookimpl
def dicecup_register_variants(register: Callable[..., None]) -> None:
    for name, text in sorted(_bundled(), key=lambda item: _order(item[0])):
        # each file's name is its id: parsed when that variant is first asked for
        register(text=text, source=f"dicecup/variants/{name}", id=name.rsplit(".", 1)[0])
