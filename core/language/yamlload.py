"""`load_yaml`: a variant's YAML text parsed by the bounded loader (`yamlparse`), PyYAML imported on the first
parse only, so that a variant kept parsed (`parsed`) never imports it."""

from __future__ import annotations

from typing import Any

__all__ = ["load_yaml"]


def load_yaml(text: str, source: str, *, libyaml: bool = False) -> Any:
    """Parse YAML text with the bounded safe loader; any problem is a VariantError with a line.

    `libyaml`: text known to parse alike under both parsers (dicecup's own variant files) is read with
    libyaml where PyYAML has it; should that fail, PyYAML reads it again and says what is wrong. PyYAML is
    imported here, on the first parse (`yamlparse`).
    """
    from .yamlparse import parse

    return parse(text, source, libyaml=libyaml)
