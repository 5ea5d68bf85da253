"""A variant's names in other languages: the `translations` key, read and checked, and the variant shown in one.

Translations change only what players read (the variant's name and description, and the names of its rows,
bonuses, columns, figures and sections); ids, rules and the fingerprint stay the same, so a translated
variant shares its solved tables and save files with the original.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from attrs import evolve, frozen

from . import keys
from .frozen import FrozenMap
from .nodes import Node, key_node
from .parts import Bonus

__all__ = ["LANGUAGE_CODE", "Translation", "read_translations", "translated"]

#: A language code as `translations` keys it: ISO 639 letters, optionally a region (`pt-BR`).
LANGUAGE_CODE = re.compile(r"[a-z]{2,3}(-[A-Za-z0-9]{2,8})?")

#: The mappings of a translation that rename things of the variant, and what each renames.
_NAMED = {
    "boxes": "row",
    "bonuses": "bonus",
    "columns": "column",
    "figures": "figure",
    "sections": "section",
}


@frozen
class Translation:
    """One language's names for a variant; what it leaves out keeps the variant's own name."""

    name: str | None = None
    description: str | None = None
    boxes: FrozenMap = FrozenMap()  # row id -> name
    bonuses: FrozenMap = FrozenMap()  # bonus id -> name
    columns: FrozenMap = FrozenMap()  # column id -> name
    figures: FrozenMap = FrozenMap()  # figure id -> name
    sections: FrozenMap = FrozenMap()  # section -> heading


def read_translations(doc: Node, known: dict[str, Iterable[str]]) -> FrozenMap:
    """The document's `translations` (language code -> Translation): each name a non-empty string, and
    kept where `known` (`_NAMED`'s keys -> the ids the variant declares) has its id."""
    node = doc.get("translations", None)
    if node is None:
        return FrozenMap()
    node.mapping(what="a mapping of language code to translation")
    out = {}
    for lang in node.value:
        key_node(node, lang, "a language code")
        if not isinstance(lang, str) or not LANGUAGE_CODE.fullmatch(lang):
            raise node.child(lang).error(
                f"{lang!r} is not a language code", hint="use lower-case ISO 639 letters, such as ru, de or pt-BR"
            )
        entry = node.child(lang).mapping(keys.TRANSLATION.names, f"the {lang!r} translation")
        parts: dict[str, object] = {}
        for field_name in ("name", "description"):
            parts[field_name] = _text(entry, field_name)
        for field_name, what in _NAMED.items():
            parts[field_name] = _names(entry, field_name, what, set(known.get(field_name, ())))
        out[lang] = Translation(**parts)  # type: ignore[arg-type]
    return FrozenMap(out)


def _text(entry: Node, key: str) -> str | None:
    got = entry.get(key, None)
    if got is None:
        return None
    if not isinstance(got.value, str) or not got.value.strip():
        raise got.error(f"`{key}` must be a non-empty string")
    return got.value


def _names(entry: Node, key: str, what: str, known: set[str]) -> FrozenMap:
    got = entry.get(key, None)
    if got is None:
        return FrozenMap()
    got.mapping(what=f"a mapping of {what} id to its name")
    names = {}
    for ident in got.value:
        if what != "section":  # sections are free text (`stage 1`); the rest are ids
            key_node(got, ident, f"a {what} id")
        elif not isinstance(ident, str):
            raise got.error(f"a section is a string, got {ident!r}")
        name = _text(got, ident)
        if ident in known:  # names of what the variant lacks are left unused: one that `extends` another and
            names[ident] = name  # drops a box keeps the translations it inherits
    return FrozenMap(names)


def translated(variant: Any, lang: str) -> Any:
    """`variant` (a `model.Variant`, which calls this: its module is not imported here) with the names of
    language `lang` (`pt-BR` falls back to `pt`); the variant itself when it has no translation to that
    language."""
    tr = variant.translations.get(lang) or variant.translations.get(lang.split("-")[0])
    if tr is None:
        return variant
    columns = tuple(evolve(c, name=tr.columns.get(c.id, c.name)) for c in variant.columns)
    return evolve(
        variant,
        name=tr.name or variant.name,
        description=tr.description or variant.description,
        boxes=tuple(evolve(b, name=tr.boxes.get(b.row or b.id, b.name)) for b in variant.boxes),
        bonuses=tuple(evolve(b, name=tr.bonuses.get(b.id, b.name)) for b in variant.bonuses),
        columns=columns,
        column_bonuses=_column_bonuses(variant, tr, {c.id: c.name for c in columns}),
        figures=tuple(evolve(f, name=tr.figures.get(f.id, f.name)) for f in variant.figures),
        section_names=FrozenMap({**variant.section_names, **tr.sections}),
    )


def _column_bonuses(variant: Any, tr: Translation, column_names: dict[str, str]) -> tuple[Bonus, ...]:
    """The per-column bonuses' names (`NAME (COLUMN)`, as the compiler writes them) in the translation's words."""
    old_columns = {c.id: c.name for c in variant.columns}
    out = []
    for b in variant.column_bonuses:
        column = b.column or ""
        base_id = b.id.split(".", 1)[-1]
        suffix = f" ({old_columns.get(column, column)})"
        base = b.name[: -len(suffix)] if b.name.endswith(suffix) else b.name
        out.append(evolve(b, name=f"{tr.bonuses.get(base_id, base)} ({column_names.get(column, column)})"))
    return tuple(out)
