"""MkDocs hook: the reference parts of the docs, written at build time from dicecup's own definitions.

A page asks for a part with a line `<!-- generated: NAME -->`; the hook replaces it with
markdown made from the engine's registries (patterns, scorers, rules, bots), the
language's key declarations (`dicecup.language.keys`) and the hook specifications
(`dicecup.language.hookspecs`, its `CONTRACT` included), so those pages cannot drift from the code. An unknown
NAME fails the build.
"""

from __future__ import annotations

import inspect
import re
import sys
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from mkdocs.exceptions import PluginError
from mkdocs.plugins import event_priority

_MARK = re.compile(r"^<!-- generated: ([a-z-]+) -->$", re.M)


@event_priority(100)  # before mkdocstrings makes its module finder from sys.path
def on_config(config: Any) -> Any:
    """Drop the folder of the running `mkdocs` script from the module search path: the `dicecup` console
    script there would otherwise be found by mkdocstrings (griffe) in place of the package."""
    if sys.argv and sys.argv[0]:
        scripts = Path(sys.argv[0]).absolute().parent
        sys.path[:] = [p for p in sys.path if not (p and Path(p).absolute() == scripts)]
    return config


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """Replace each `<!-- generated: NAME -->` line with its generated markdown."""
    if "<!-- generated:" not in markdown:
        return markdown

    def part(match: re.Match[str]) -> str:
        make = GENERATORS.get(match.group(1))
        if make is None:
            raise PluginError(f"{page.file.src_path}: no generated part named {match.group(1)!r}")
        return make().strip()

    return _MARK.sub(part, markdown)


# --------------------------------------------------------------------------- the engine's registries


def _engine() -> Any:
    from dicecup import Engine

    return Engine(entry_points=False)  # the built-in plugins only: what every installation has


def _cell(text: str) -> str:
    """Text safe inside a markdown table cell."""
    return " ".join(str(text).split()).replace("|", "\\|")


def _rst(text: str) -> str:
    """Docstring literals written ``so`` read as `so` in markdown."""
    return text.replace("``", "`")


def _flow(value: Any) -> str:
    """A parameter value written as YAML flow text (`{kind: face, face: 1}`, `[3, 2]`)."""
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{k}: {_flow(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_flow(v) for v in value) + "]"
    if isinstance(value, bool):
        return str(value).lower()
    if value is None:
        return "null"
    return str(value)


def _first_paragraph(fn: Callable[..., Any]) -> str:
    doc = inspect.getdoc(fn) or ""
    return _rst(doc.split("\n\n", 1)[0])


def _parameters(fn: Callable[..., Any]) -> str:
    """A factory's YAML parameters (all but the context), with their defaults."""
    params = list(inspect.signature(fn).parameters.values())[1:]
    words = []
    for p in params:
        if p.kind is p.VAR_KEYWORD:
            words.append("any")
        elif p.default is p.empty:
            words.append(f"`{p.name}`")
        else:
            words.append(f"`{p.name}` ({'none' if p.default is None else _flow(p.default)})")
    return ", ".join(words) or "none"


def _examples(engine: Any) -> dict[tuple[str, str], tuple[str, str, str]]:
    """(what, kind) -> (variant id, the declaration as written, what `dicecup show` says of it): the shortest
    use of each pattern and scorer kind in the bundled variants."""
    found: dict[tuple[str, str], tuple[str, str, str]] = {}
    for vid in engine.variant_ids():
        variant = engine.variant(vid)
        for box in variant.boxes:
            for what, spec in (("pattern", box.pattern), ("scorer", box.scorer)):
                declared = _flow({"kind": spec.kind, **spec.params}) if spec.params else spec.kind
                known = found.get((what, spec.kind))
                if known is None or len(declared) < len(known[1]):  # the shortest use reads best
                    found[(what, spec.kind)] = (vid, declared, spec.describe())
    return found


def _makers(what: str) -> str:
    engine = _engine()
    registry = engine.patterns if what == "pattern" else engine.scorers
    examples = _examples(engine)
    lines = ["| name | parameters | what it does | example (variant: declared, shown as) |", "|---|---|---|---|"]
    for name, maker in registry.items():
        example = examples.get((what, name))
        shown = f'{example[0]}: `{example[1]}`, "{example[2]}"' if example else ""
        lines.append(
            f"| `{name}` | {_parameters(maker.factory)} | {_cell(_first_paragraph(maker.factory))} | {_cell(shown)} |"
        )
    return "\n".join(lines)


def _rule_table(kind: str) -> str:
    from dicecup.language.keys import REQUIRED

    engine = _engine()
    lines = ["| name | parameters (default) | what it does |", "|---|---|---|"]
    for name, decl in engine.rules.items():
        if decl.kind != kind:
            continue
        params = ", ".join(
            f"`{k}`" + ("" if v is REQUIRED else f" ({_flow(v) if v is not None else 'none'})")
            for k, v in decl.params.items()
        )
        doc = _rst(decl.doc)
        if decl.actions:
            doc += " Adds the action" + "s" * (len(decl.actions) > 1) + " "
            doc += "; ".join(f"`{a}`: {text}" for a, text in decl.actions.items()) + "."
        lines.append(f"| `{name}` | {params or 'none'} | {_cell(doc)} |")
    return "\n".join(lines)


def variant_keys() -> str:
    """Every section of a variant document, with its keys (from `dicecup.language.keys`)."""
    from dicecup.language import keys

    out = []
    for section in keys.SECTIONS:
        where = f"`{section.where}`" if section.where else "the top of the file"
        out.append(f"### {section.name}\n\nWritten at {where}. {section.meaning}\n")
        if section.keys:
            out.append("| key | value | default | meaning |\n|---|---|---|---|")
            for key in section:
                bounds = ""
                if key.low is not None and key.high is not None:
                    bounds = f", {key.low} to {key.high}"
                elif key.low is not None:
                    bounds = f", at least {key.low}"
                out.append(
                    f"| `{key.name}` | {_cell(key.written + bounds)} | {_cell(key.describe_default())} | "
                    f"{_cell(key.meaning)} |"
                )
        if section.more:
            out.append(f"\nBeside these keys it takes {section.more}.")
        out.append("")
    return "\n".join(out)


def limits() -> str:
    """The bounds every variant file is held to (dicecup.language.yamlsource, model and the solver)."""
    from dicecup.language import yamlsource
    from dicecup.language.documents import MAX_COMBINATIONS, MAX_EXTENDS
    from dicecup.language.keys import MAX_ID_LENGTH
    from dicecup.language.model import MAX_ROLLS
    from dicecup.solver import DEFAULT_MAX_STATES
    from dicecup.solver.rules import SOLVER_MAX_ROLLS

    rows = [
        ("a variant file", f"at most {yamlsource.MAX_BYTES / 2**20:g} MiB"),
        ("nesting", f"at most {yamlsource.MAX_DEPTH} levels"),
        ("values once aliases are expanded", f"at most {yamlsource.MAX_NODES:,}"),
        ("text once aliases and options are expanded", f"at most {yamlsource.MAX_CHARS:,} characters"),
        ("any number", f"within ±{yamlsource.NUMBER_LIMIT:,}"),
        ("an id", f"at most {MAX_ID_LENGTH} characters"),
        ("an `extends` chain", f"at most {MAX_EXTENDS} variants"),
        ("option combinations `dicecup validate` compiles", f"at most {MAX_COMBINATIONS:,}"),
        ("distinct rolls, for work that looks at each (tables, the greedy bot)", f"at most {MAX_ROLLS:,}"),
        ("distinct rolls, for the exact solver", f"at most {SOLVER_MAX_ROLLS:,}"),
        ("states the exact solver takes by default", f"{DEFAULT_MAX_STATES:,} (`solve --max-states` raises it)"),
    ]
    return "| what | limit |\n|---|---|\n" + "\n".join(f"| {a} | {b} |" for a, b in rows)


def bots() -> str:
    engine = _engine()
    lines = ["| player | what it plays |", "|---|---|"]
    lines += [f"| `bot:{decl.usage}` | {_cell(decl.doc)} |" for decl in engine.bots.values()]
    return "\n".join(lines)


# --------------------------------------------------------------------------- hooks


def _hookspecs() -> Iterable[tuple[str, Callable[..., Any]]]:
    from dicecup.language import hookspecs

    for name, fn in vars(hookspecs).items():
        if name.startswith("dicecup_") and callable(fn):
            yield name, fn


def hook_contract() -> str:
    from dicecup.language import hookspecs

    return _rst(hookspecs.CONTRACT)


def _hook_section(registration: bool) -> str:
    out = []
    for name, fn in _hookspecs():
        if name.startswith("dicecup_register_") != registration:
            continue
        sig = str(inspect.signature(fn)).replace("'", "")
        opts = getattr(fn, "dicecup_spec", {}) or {}
        combine = " The first plugin's answer that is not `None` is the result." if opts.get("firstresult") else ""
        out.append(f"### `{name}`\n\n```python\ndef {name}{sig}\n```\n\n{_rst(inspect.getdoc(fn) or '')}{combine}\n")
    return "\n".join(out)


def registration_hooks() -> str:
    return _hook_section(True)


def rule_hooks() -> str:
    return _hook_section(False)


GENERATORS: dict[str, Callable[[], str]] = {
    "variant-keys": variant_keys,
    "patterns": lambda: _makers("pattern"),
    "scorers": lambda: _makers("scorer"),
    "bonus-kinds": lambda: _rule_table("bonus"),
    "rules": lambda: _rule_table("rule"),
    "fill-orders": lambda: _rule_table("order"),
    "limits": limits,
    "bots": bots,
    "hook-contract": hook_contract,
    "registration-hooks": registration_hooks,
    "rule-hooks": rule_hooks,
}
