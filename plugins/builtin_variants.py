"""Registers the variant files bundled in `dicecup.variants`."""

from __future__ import annotations

from collections.abc import Callable
from importlib import resources

from dicecup import hookimpl

#: The five games RULES.md defines first, in its order; other bundled files follow alphabetically.
FIRST = ("yahtzee", "yatzy", "yacht", "generala", "russian")


def _order(name: str) -> tuple[int, str]:
    stem = name.rsplit(".", 1)[0]
    return (FIRST.index(stem) if stem in FIRST else len(FIRST), stem)


@hookimpl
def dicecup_register_variants(register: Callable[..., None]) -> None:
    folder = resources.files("dicecup.variants")
    for item in sorted(folder.iterdir(), key=lambda p: _order(p.name)):
        if item.name.endswith(".yaml"):
            register(text=item.read_text(encoding="utf-8"), source=f"dicecup/variants/{item.name}")
