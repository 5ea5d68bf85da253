"""Registers the variant files bundled in `dicecup.variants`."""

from __future__ import annotations

from importlib import resources

from dicecup import hookimpl


@hookimpl
def dicecup_register_variants(register):
    folder = resources.files("dicecup.variants")
    for item in sorted(folder.iterdir(), key=lambda p: p.name):
        if item.name.endswith(".yaml"):
            register(text=item.read_text(encoding="utf-8"), source=f"dicecup/variants/{item.name}")
