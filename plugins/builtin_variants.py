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
            # each file's name is its id: parsed when that variant is first asked for
            text = item.read_text(encoding="utf-8")
            register(text=text, source=f"dicecup/variants/{item.name}", id=item.name.rsplit(".", 1)[0])
