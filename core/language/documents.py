"""From a variant document to the resolved document the compiler checks: `extends`, options
and their overlays, and `${option}` substitution, keeping every key's file and line."""

from __future__ import annotations

import difflib
import itertools
import math
import os
import re
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from attrs import frozen

from ..errors import VariantError, shown
from . import keys
from .model import OptionSpec
from .nodes import Node
from .yamlload import load_yaml
from .yamlsource import MAX_CHARS, NUMBER_HINT, NUMBER_LIMIT, LocDict, LocList, merge, read_variant, where

__all__ = [
    "Resolved",
    "resolve",
    "option_specs",
    "choose_options",
    "option_combinations",
    "MAX_COMBINATIONS",
    "MAX_EXTENDS",
    "check_numbers",
]

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SUBST = re.compile(r"\$\{(" + _NAME.pattern + r")\}")

MAX_EXTENDS = 16  # variants in one `extends` chain
_NONE = object()
MAX_COMBINATIONS = 1024  # option combinations `dicecup validate` compiles

#: What an option overlay may not contain, and why.
_OVERLAY_FORBIDDEN = {
    "extends": "an overlay cannot change what the variant extends",
    "options": "an overlay cannot declare or change options",
    "id": "an overlay cannot change the variant's id",
}


@frozen
class Resolved:
    """A document with `extends` merged, the chosen options' overlays applied and `${...}` replaced."""

    document: Any
    options: dict[str, Any]
    specs: tuple[OptionSpec, ...]


def resolve(doc: Any, source: str, options: Mapping[str, Any], entries: Mapping[str, Any]) -> Resolved:
    """Resolve `doc` (parsed from `source`) with these option values; `entries` are the known variants."""
    resolved = _resolve_extends(doc, source, [os.path.normpath(source)], entries, source)
    specs, overlays = option_specs(resolved, source)
    chosen = choose_options(specs, options, source)
    for spec in specs:
        overlay = overlays.get((spec.name, chosen[spec.name]))
        if overlay:
            resolved = merge(resolved, overlay)
    resolved = _substitute(resolved, chosen, source, (), [MAX_CHARS])
    check_numbers(resolved, (), (source, None))
    for k in ("extends", "options"):
        if isinstance(resolved, dict):
            resolved.pop(k, None)
    return Resolved(resolved, chosen, specs)


def _resolve_extends(doc: Any, source: str, chain: list[str], entries: Mapping[str, Any], root: str) -> Any:
    """`doc` merged onto what it extends: a file parent must lie in the folder of `root` (the file
    the chain of files starts from) or below, symlinks resolved; an id names a registered variant."""
    node = Node(doc, (), source=source).mapping(what="a variant mapping")
    ext = node.get("extends", None)
    if ext is None:
        return doc
    parent_name = ext.string()
    is_file = parent_name.endswith((".yaml", ".yml"))
    # A file parent is known by its normalised path, so `../a.yaml` and `a.yaml` are one file.
    parent_key = os.path.normpath(Path(source).parent / parent_name) if is_file else parent_name
    if parent_key in chain:
        raise ext.error("variants extend each other in a loop: " + " -> ".join(chain + [parent_key]))
    if len(chain) >= MAX_EXTENDS:
        raise ext.error(
            f"an extends chain may hold at most {MAX_EXTENDS} variants", hint="extend a variant that extends less"
        )
    if is_file:
        parent_doc, parent_source = _read_parent(ext, parent_name, Path(parent_key), root), parent_key
    else:
        if parent_name not in entries:
            close = difflib.get_close_matches(parent_name, list(entries), n=1)
            hint = f"did you mean {close[0]!r}?" if close else f"known variants: {', '.join(list(entries))}"
            raise ext.error(f"extends unknown variant {parent_name!r}", hint=hint)
        parent = entries[parent_name]
        parent_doc, parent_source = parent.doc, parent.source
        root = parent.source
    base = _resolve_extends(parent_doc, parent_source, chain + [parent_key], entries, root)
    child = LocDict({k: v for k, v in doc.items() if k != "extends"}, loc=getattr(doc, "loc", None))
    child.key_locs = {k: v for k, v in getattr(doc, "key_locs", {}).items() if k != "extends"}
    return merge(base, child)


def _read_parent(ext: Node, name: str, path: Path, root: str) -> Any:
    """The parsed file an `extends` names, refused (unread) when it resolves outside the folder of `root`."""
    if not Path(os.path.realpath(path)).is_relative_to(os.path.realpath(Path(root).parent)):
        raise ext.error(
            f"extends {name!r}, which is outside the folder of {root}",
            hint="a variant may extend files in its own folder or below it, or a registered variant by id",
        )
    try:
        text = read_variant(path)
    except VariantError as exc:
        if exc.line is not None:  # a bad byte inside the parent: point at it
            source, line = ext.loc()
            raise VariantError(
                exc.message, source=exc.source, line=exc.line, hint=f"{source}:{line} extends it"
            ) from None
        raise ext.error(
            f"cannot extend {name!r}: {exc.message}",
            hint="the path is relative to this file's folder and must name a variant file",
        ) from None
    return load_yaml(text, str(path))


def option_specs(doc: Any, source: str) -> tuple[tuple[OptionSpec, ...], dict[tuple[str, Any], Any]]:
    """The declared options, and the overlay each choice applies to the document."""
    node = Node(doc, (), source=source)
    opts = node.get("options", None)
    overlays: dict[tuple[str, Any], Any] = {}
    if opts is None:
        return (), overlays
    opts.mapping(what="a mapping of option name to its declaration")
    specs = []
    for name in opts.value:
        if not (isinstance(name, str) and _NAME.fullmatch(name)):
            raise opts.child(name).error(
                f"option name {name!r} is not an identifier",
                hint="use letters, digits and _ (not starting with a digit), so that ${name} can name it",
            )
        onode = opts.child(name).mapping(keys.OPTION.names, "an option mapping")
        choices_node = onode.get("choices")
        if isinstance(choices_node.value, list):
            choices = tuple(choices_node.value)
            for i in range(len(choices)):
                _check_choice(choices_node.child(i), choices[i])
        elif isinstance(choices_node.value, dict):
            choices = tuple(choices_node.value)
            for c in choices:
                _check_choice(choices_node.child(c), c)
                ov = choices_node.child(c)
                if ov.value is not None:
                    ov.mapping(what="an overlay mapping (the keys to change for this choice)")
                    for key, message in _OVERLAY_FORBIDDEN.items():
                        if key in ov.value:
                            raise ov.child(key).error(message, hint="move it out of the option's choices")
                    overlays[(name, c)] = ov.value
        else:
            raise choices_node.error("expected a list of values, or a mapping of value to overlay")
        if not choices:
            raise choices_node.error("an option needs at least one choice")
        by_text: dict[str, Any] = {}
        by_value: dict[Any, Any] = {}  # 1 == True: one overlay, one match for both
        for c in choices:  # values are matched by text, without case (`--option joker=FORCED`)
            other = by_text.get(str(c).lower(), by_value.get(c, _NONE))
            if other is not _NONE:
                raise choices_node.error(
                    f"choices {other!r} and {c!r} cannot be told apart", hint="give every choice a different name"
                )
            by_text[str(c).lower()] = by_value[c] = c
        default = onode.get("default")
        if default.value not in choices:
            raise default.error(f"default {default.value!r} is not one of the choices {list(choices)}")
        hp = onode.get("help", None)
        specs.append(OptionSpec(name, default.value, choices, hp.string() if hp else ""))
    return tuple(specs), overlays


def _check_choice(node: Node, choice: Any) -> None:
    """An option choice is a plain string, whole number or boolean (it becomes `${name}`'s value)."""
    if not isinstance(choice, (str, int)):
        raise node.error(
            f"an option choice must be a string, a whole number or true/false, not {_kind(choice)}",
            hint="a choice that changes several keys is a mapping entry `value: {keys to change}`",
        )


def _kind(value: Any) -> str:
    """A value's kind in words, without its content."""
    for kind, name in ((dict, "a mapping"), (list, "a list"), (type(None), "null"), (float, "a fractional number")):
        if isinstance(value, kind):
            return name
    return type(value).__name__


def option_combinations(
    specs: Sequence[OptionSpec], *, limit: int = MAX_COMBINATIONS, source: str | None = None
) -> Iterator[dict[str, Any]]:
    """Every assignment of one choice to each option, all defaults first (what `validate` compiles).

    Refused at once, with the count, when there are more than `limit` combinations.
    """
    count = 1
    for spec in specs:
        count *= len(spec.choices)
        if count > 10**18:
            break
    if count > limit:
        counted = f"{count:,}" if count <= 10**18 else "more than 10^18"
        raise VariantError(
            f"{counted} option combinations; validate checks up to {limit:,}",
            source=source,
            path=("options",),
            hint="split the variant into files that extend a shared one",
        )
    orders = [(s.default, *(c for c in s.choices if c != s.default)) for s in specs]
    names = [s.name for s in specs]
    return (dict(zip(names, values, strict=True)) for values in itertools.product(*orders))


def choose_options(specs: Sequence[OptionSpec], given: Mapping[str, Any], source: str) -> dict[str, Any]:
    """The value of every option: its default, or the given value matched to a choice (case aside)."""
    by_name = {s.name: s for s in specs}
    chosen = {s.name: s.default for s in specs}
    for key, raw in given.items():
        spec = by_name.get(key)
        if spec is None:
            known = ", ".join(by_name) or "none"
            raise VariantError(
                f"unknown option {shown(key)}",
                source=source,
                path=("options",),
                hint=f"this variant's options: {known}",
            )
        match = [c for c in spec.choices if _is_choice(c, raw)]
        if not match:
            raise VariantError(
                f"option {shown(key)} cannot be {shown(raw)}",
                source=source,
                path=("options", key),
                hint=f"choose one of: {', '.join(str(c) for c in spec.choices)}",
            )
        chosen[key] = match[0]
    return chosen


def _is_choice(choice: Any, raw: Any) -> bool:
    """Whether a given option value `raw` names `choice`: text in any case (the command line's "false"), or a
    value of the choice's own kind; never None (str(None) reads 'none'), a list, or 1 for True (1 == True)."""
    if isinstance(raw, str):
        return str(choice).lower() == raw.lower()
    if isinstance(raw, bool) or isinstance(choice, bool):
        return isinstance(raw, bool) and isinstance(choice, bool) and raw == choice
    return isinstance(raw, (int, float)) and (raw == choice or str(choice) == str(raw))


def _substitute(value: Any, options: Mapping[str, Any], source: str, path: tuple, budget: list[int]) -> Any:
    """Replace `${option}` in strings with the chosen option value (whole-string keeps its type).

    `budget` holds the characters substitution may still produce, so that many `${}` of a long
    choice cannot blow the document up.
    """
    if isinstance(value, dict):
        out = LocDict(loc=getattr(value, "loc", None))
        out.key_locs = dict(getattr(value, "key_locs", {}))
        for k, v in value.items():
            try:
                out[k] = _substitute(v, options, source, path + (k,), budget)
            except KeyError as exc:
                loc = out.key_locs.get(k) or (source, None)
                raise VariantError(
                    f"${{{exc.args[0]}}} names no declared option",
                    source=loc[0],
                    line=loc[1],
                    path=path + (k,),
                    hint=f"declared options: {', '.join(options) or 'none'}",
                ) from None
            except _TooLong:
                loc = out.key_locs.get(k) or (source, None)
                raise VariantError(
                    f"substituting options makes the document longer than {MAX_CHARS:,} characters",
                    source=loc[0],
                    line=loc[1],
                    path=path + (k,),
                ) from None
        return out
    if isinstance(value, list):
        items = LocList(
            (_substitute(v, options, source, path + (i,), budget) for i, v in enumerate(value)),
            loc=getattr(value, "loc", None),
        )
        items.item_locs = list(getattr(value, "item_locs", []))
        return items
    if isinstance(value, str) and "${" in value:
        whole = _SUBST.fullmatch(value)
        out_value = options[whole.group(1)] if whole else _SUBST.sub(lambda m: str(options[m.group(1)]), value)
        budget[0] -= len(str(out_value))
        if budget[0] < 0:
            raise _TooLong
        return out_value
    return value


class _TooLong(Exception):
    """Substitution went past its character budget."""


def check_numbers(value: Any, path: tuple, loc: tuple[str | None, int | None]) -> None:
    """Refuse any integer or float beyond ±NUMBER_LIMIT, and infinities and NaN, where it is written."""
    if isinstance(value, dict):
        for k, v in value.items():
            at = where(value, k) or loc
            _check_number(k, path + (k,), at)
            check_numbers(v, path + (k,), at)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            check_numbers(v, path + (i,), where(value, i) or loc)
    else:
        _check_number(value, path, loc)


def _check_number(value: Any, path: tuple, loc: tuple[str | None, int | None]) -> None:
    """One scalar: a bool passes, an int or float must be finite and within ±NUMBER_LIMIT."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return
    if isinstance(value, float) and not math.isfinite(value):
        problem = f"{value} is not a finite number"
    elif abs(value) > NUMBER_LIMIT:
        problem = f"{value:.6g} is out of range" if isinstance(value, float) else f"{value} is out of range"
    else:
        return
    raise VariantError(f"{problem}; {NUMBER_HINT}", source=loc[0], line=loc[1], path=path)
