"""From a variant document to the resolved document the compiler checks: `extends`, options
and their overlays, and `${option}` substitution, keeping every key's file and line."""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from attrs import frozen

from ..errors import VariantError
from .compiler import Node
from .model import OptionSpec
from .yamlsource import LocDict, load_yaml, merge

__all__ = ["Resolved", "resolve", "option_specs", "choose_options"]

_SUBST = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


@frozen
class Resolved:
    """A document with `extends` merged, the chosen options' overlays applied and `${...}` replaced."""

    document: Any
    options: dict[str, Any]
    specs: tuple[OptionSpec, ...]


def resolve(doc: Any, source: str, options: Mapping[str, Any], entries: Mapping[str, Any]) -> Resolved:
    """Resolve `doc` (parsed from `source`) with these option values; `entries` are the known variants."""
    resolved = _resolve_extends(doc, source, [os.path.normpath(source)], entries)
    specs, overlays = option_specs(resolved, source)
    chosen = choose_options(specs, options, source)
    for spec in specs:
        overlay = overlays.get((spec.name, chosen[spec.name]))
        if overlay:
            resolved = merge(resolved, overlay)
    resolved = _substitute(resolved, chosen, source, ())
    for k in ("extends", "options"):
        if isinstance(resolved, dict):
            resolved.pop(k, None)
    return Resolved(resolved, chosen, specs)


def _resolve_extends(doc: Any, source: str, chain: list[str], entries: Mapping[str, Any]) -> Any:
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
    if is_file:
        ppath = Path(parent_key)
        try:
            text = ppath.read_text(encoding="utf-8")
        except OSError:
            raise ext.error(f"cannot read {ppath}", hint="the path is relative to this file") from None
        parent_doc, parent_source = load_yaml(text, str(ppath)), str(ppath)
    else:
        if parent_name not in entries:
            close = difflib.get_close_matches(parent_name, list(entries), n=1)
            hint = f"did you mean {close[0]!r}?" if close else f"known variants: {', '.join(list(entries))}"
            raise ext.error(f"extends unknown variant {parent_name!r}", hint=hint)
        parent = entries[parent_name]
        parent_doc, parent_source = parent.doc, parent.source
    base = _resolve_extends(parent_doc, parent_source, chain + [parent_key], entries)
    child = LocDict({k: v for k, v in doc.items() if k != "extends"}, loc=getattr(doc, "loc", None))
    child.key_locs = {k: v for k, v in getattr(doc, "key_locs", {}).items() if k != "extends"}
    return merge(base, child)

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
        onode = opts.child(name).mapping(("default", "choices", "help"), "an option mapping")
        choices_node = onode.get("choices")
        if isinstance(choices_node.value, list):
            choices = tuple(choices_node.value)
        elif isinstance(choices_node.value, dict):
            choices = tuple(choices_node.value)
            for c in choices:
                ov = choices_node.child(c)
                if ov.value is not None:
                    ov.mapping(what="an overlay mapping (the keys to change for this choice)")
                    overlays[(str(name), c)] = ov.value
        else:
            raise choices_node.error("expected a list of values, or a mapping of value to overlay")
        if not choices:
            raise choices_node.error("an option needs at least one choice")
        default = onode.get("default")
        if default.value not in choices:
            raise default.error(f"default {default.value!r} is not one of the choices {list(choices)}")
        hp = onode.get("help", None)
        specs.append(OptionSpec(str(name), default.value, choices, hp.string() if hp else ""))
    return tuple(specs), overlays

def choose_options(
    specs: Sequence[OptionSpec], given: Mapping[str, Any], source: str
) -> dict[str, Any]:
    by_name = {s.name: s for s in specs}
    chosen = {s.name: s.default for s in specs}
    for key, raw in given.items():
        spec = by_name.get(key)
        if spec is None:
            known = ", ".join(by_name) or "none"
            raise VariantError(
                f"unknown option {key!r}",
                source=source,
                path=("options",),
                hint=f"this variant's options: {known}",
            )
        match = [c for c in spec.choices if c == raw or str(c).lower() == str(raw).lower()]
        if not match:
            raise VariantError(
                f"option {key!r} cannot be {raw!r}",
                source=source,
                path=("options", key),
                hint=f"choose one of: {', '.join(str(c) for c in spec.choices)}",
            )
        chosen[key] = match[0]
    return chosen


def _substitute(value: Any, options: Mapping[str, Any], source: str, path: tuple) -> Any:
    """Replace `${option}` in strings with the chosen option value (whole-string keeps its type)."""
    if isinstance(value, dict):
        out = LocDict(loc=getattr(value, "loc", None))
        out.key_locs = dict(getattr(value, "key_locs", {}))
        for k, v in value.items():
            try:
                out[k] = _substitute(v, options, source, path + (k,))
            except KeyError as exc:
                loc = out.key_locs.get(k) or (source, None)
                raise VariantError(
                    f"${{{exc.args[0]}}} names no declared option",
                    source=loc[0],
                    line=loc[1],
                    path=path + (k,),
                    hint=f"declared options: {', '.join(options) or 'none'}",
                ) from None
        return out
    if isinstance(value, list):
        return type(value)(_substitute(v, options, source, path + (i,)) for i, v in enumerate(value))
    if isinstance(value, str) and "${" in value:
        whole = _SUBST.fullmatch(value)
        if whole:
            return options[whole.group(1)]
        return _SUBST.sub(lambda m: str(options[m.group(1)]), value)
    return value
