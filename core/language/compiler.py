"""Check a resolved variant document key by key and compile it into a frozen `Variant`.

The keys, their bounds and defaults are declared in `keys`; every error names the
file, the line and the key path down to the bad value, and unknown keys are errors
(with a did-you-mean), in the spirit of pre-commit's cfgv.
"""

from __future__ import annotations

import difflib
import hashlib
import inspect
import json
from collections.abc import Callable, Mapping
from typing import Any

from attrs import frozen

from ..errors import VariantError
from . import keys
from .contexts import PatternContext
from .declarations import (
    Declared,
    enable_rules,
    plain,
    read_attributes,
    read_bonuses,
    read_columns,
    read_figures,
    read_first_roll,
    read_match,
)
from .frozen import FrozenMap, frozen_params
from .keys import MAX_ID_LENGTH, MAX_ROUNDS, REQUIRED
from .model import (
    Bonus,
    Box,
    Column,
    OptionSpec,
    Spec,
    Variant,
)
from .nodes import Node, check_id, describe_value, key_node, read_bool, read_int, read_str, title
from .parts import rows_to_boxes
from .translations import read_translations

__all__ = ["Node", "Maker", "compile_variant", "REQUIRED", "fingerprint", "MAX_ID_LENGTH", "MAX_ROUNDS"]


# Every key, its bounds and its default are declared once, in `keys` (the docs' reference reads them too).
TOP_KEYS = keys.TOP.names
BOX_KEYS = keys.BOX.names
COLUMN_KEYS = keys.COLUMN.names
BONUS_KEYS = keys.BONUS.names  # what every bonus may say; the rest are its kind's parameters


@frozen
class Maker:
    """A registered pattern or scorer: its factory, an optional plain-words text, the plugin giving it."""

    factory: Callable[..., Any]
    text: Callable[[Mapping[str, Any]], str] | None = None
    plugin: Any = None


def fingerprint(document: Any) -> str:
    """A stable hash of a resolved variant document (cache keys, save-file checks)."""
    text = json.dumps(plain(document, str_keys=True), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _call_factory(
    node: Node, factory: Callable[..., Any], ctx: PatternContext, params: dict[str, Any], what: str
) -> Any:
    """Call a pattern/scorer factory, turning bad parameters into precise errors."""
    sig = inspect.signature(factory)
    accepted = list(sig.parameters.values())[1:]
    names = [p.name for p in accepted if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)]
    takes_any = any(p.kind is p.VAR_KEYWORD for p in accepted)
    for key in params:
        if key not in names and not takes_any:
            hint = f"{what} takes: {', '.join(names)}" if names else f"{what} takes no parameters"
            raise node.child(key).error(f"unknown parameter {key!r} for {what}", hint=hint)
    for p in accepted:
        if p.default is p.empty and p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD) and p.name not in params:
            raise node.error(f"{what} needs parameter {p.name!r}", hint=f"add `{p.name}:` under this {what.split()[0]}")
    try:
        return factory(ctx, **params)
    except VariantError:
        raise  # a nested declaration's own precise error
    except (ValueError, TypeError) as exc:  # ParameterError among them: the parameters' fault, at the key named
        bad = getattr(exc, "key", None)
        target = node.child(bad) if isinstance(bad, str) and bad in params else node
        raise target.error(f"bad parameter for {what}: {_exc_text(exc)}") from None
    except Exception as exc:  # anything else is the factory's own failure: said as such, at the declaration
        raise node.error(
            f"{what} failed to build from these parameters ({type(exc).__name__}: {_exc_text(exc)})",
            hint="a bug in the plugin that provides it (a factory says a parameter is wrong with ParameterError)",
        ) from None


def _exc_text(exc: Exception) -> str:
    try:
        text = str(exc) or type(exc).__name__
    except Exception:  # an exception whose str() fails is still named
        text = type(exc).__name__
    return text if len(text) <= 300 else text[:300] + "..."


class _Compiling:
    """The registries and the state shared while one variant's patterns and scorers compile."""

    def __init__(self, patterns: Mapping[str, Maker], scorers: Mapping[str, Maker]) -> None:
        self.patterns = patterns
        self.scorers = scorers
        self.used: set[tuple[str, str]] = set()  # (what, kind) of every pattern and scorer compiled
        self.current: list[Node] = []  # the declaration being compiled (nested ones push theirs)
        self.ctx: PatternContext | None = None

    def nested(self, what: str, spec: Any, at: tuple[Any, ...]) -> Any:
        """Compile a declaration written inside another one's parameters (`at`: its keys below them)."""
        base = self.current[-1] if self.current else Node(spec, ())
        node = base
        try:
            for key in at:
                node = node.child(key)
        except (KeyError, IndexError, TypeError):
            node = Node(spec, base.path + tuple(at), source=base.source)
        if node.value is not spec and node.value != spec:
            node = Node(spec, base.path + tuple(at), source=base.source)
        return self.spec(node, what).fn

    def spec(self, node: Node, what: str) -> Spec:
        """Compile `pattern:`/`score:` written as a name, an integer (fixed score) or a mapping with `kind`."""
        registry = self.patterns if what == "pattern" else self.scorers
        section = keys.PATTERN if what == "pattern" else keys.SCORER
        value = node.value
        multiply = 1
        if what == "scorer" and isinstance(value, int) and not isinstance(value, bool):
            kind, params = "fixed", {"points": value}
        elif isinstance(value, str):
            kind, params = value, {}
        elif isinstance(value, dict):
            kind = read_str(node, section["kind"])
            if what == "scorer":
                multiply = read_int(node, keys.SCORER["multiply"])
            params = {k: v for k, v in value.items() if k not in section.names}
            for k in params:
                if not isinstance(k, str):
                    raise node.child(k).error(f"a parameter name must be a string, got {describe_value(k)}")
        else:
            raise node.error(
                f"expected a {what} name or a mapping with `kind`, got {describe_value(value)}",
                hint=f"e.g. `{what}: {{kind: {next(iter(registry), 'name')}}}`",
            )
        maker = registry.get(kind)
        if maker is None:
            close = difflib.get_close_matches(kind, list(registry), n=1)
            hint = f"did you mean {close[0]!r}?" if close else f"known {what}s: {', '.join(sorted(registry))}"
            target = node.child("kind") if isinstance(value, dict) else node
            raise target.error(f"unknown {what} {kind!r}", hint=hint)
        self.used.add((what, kind))
        self.current.append(node)
        try:
            fn = _call_factory(node, maker.factory, self.ctx, params, f"{what} {kind!r}")  # type: ignore[arg-type]
        finally:
            self.current.pop()
        if not callable(fn):
            raise node.error(f"the {what} {kind!r} did not compile to a function (a plugin bug)")
        if multiply != 1:
            fn = _multiplied(fn, multiply)
        frozen_p = frozen_params(plain(params, str_keys=True))
        text = ""
        if maker.text is not None:
            try:
                text = str(maker.text(frozen_p))
            except Exception:  # a description is a nicety: fall back to the declared form
                text = ""
        return Spec(kind, frozen_p, fn, text, multiply)


def _multiplied(scorer: Callable[..., Any], factor: int) -> Callable[..., int]:
    """A scorer whose whole-number points are multiplied by `factor` (a scorer's `multiply:`)."""
    return lambda comb, roll: int(scorer(comb, roll)) * factor


def compile_variant(
    doc_node: Node,
    *,
    patterns: Mapping[str, Maker],
    scorers: Mapping[str, Maker],
    rules: Mapping[str, Any],
    options: Mapping[str, Any],
    option_specs: tuple[OptionSpec, ...],
    hooks_for: Callable[[Mapping[str, Any]], Any],
    identity: Callable[[Mapping[str, Any], set[tuple[str, str]]], Any] = lambda enabled, used: None,
    rebuild: Any = None,
    derive: Any = None,
    store: Any = None,
) -> Variant:
    """Check every key of a resolved document and build the frozen Variant (`store`: the engine's, which the
    variant carries: what is learned and built for it is kept there).

    `identity(enabled rules, used (what, kind) pairs)` describes the plugins that
    implement them; it goes into the fingerprint, so two engines whose plugins
    differ never give equal variants (nor share a cached table).
    """
    doc = doc_node.mapping(TOP_KEYS, "a variant mapping")
    vid = check_id(doc.get("id"), "the variant id")
    name = read_str(doc, keys.TOP["name"]) or vid
    description = read_str(doc, keys.TOP["description"])

    dice = _dice_and_turn(doc)
    columns = read_columns(doc, rules)
    figures, rank_by = read_figures(doc)
    comp = _Compiling(patterns, scorers)
    rows = _boxes(doc, comp, dice["dice"], dice["faces"], dice["attributes"])
    declared = read_bonuses(doc, rules, len(columns) >= 2, figures)
    enable_rules(doc, rules, declared.enabled, columns)
    match = read_match(doc)
    plain_doc = plain(doc.value)
    card_columns = columns or (Column("main", "Card"),)
    ident = identity({**declared.sheet_kinds, **declared.enabled}, comp.used)
    translations = read_translations(
        doc,
        {
            "boxes": [r.id for r in rows],
            "bonuses": [b.id for b in declared.card] + [b.id for b, _ in declared.column_scoped],
            "columns": [c.id for c in columns],
            "figures": [f.id for f in figures],
            "sections": [r.section for r in rows],
        },
    )
    played = {k: v for k, v in plain_doc.items() if k != "translations"}  # names players read: not the rules
    fp = fingerprint({"doc": played, "options": {k: options[k] for k in sorted(options)}, "plugins": ident})
    shared = {**dice, "match": match, "source": doc.source, "figures": figures, "rank_by": rank_by, "store": store}
    sheets = _column_sheets(vid, rows, columns, declared, fp, hooks_for, options, shared)
    column_bonuses = tuple(
        Bonus(f"{col.id}.{b.id}", f"{b.name} ({col.name})", b.kind, b.params, "column", b.figure, col.id)
        for col in columns
        for b, _ in declared.column_scoped
    )
    variant = Variant(
        id=vid,
        name=name,
        description=description,
        boxes=rows_to_boxes(rows, card_columns),
        bonuses=tuple(declared.card),
        rules={k: frozen_params(v) for k, v in declared.enabled.items()},
        options=dict(options),
        option_specs=option_specs,
        fingerprint=fp,
        columns=card_columns,
        column_bonuses=column_bonuses,
        sheets=sheets,
        document=plain_doc,
        translations=translations,
        hooks=hooks_for(declared.enabled),
        rebuild=rebuild,
        deriver=derive,
        **shared,
    )
    _check_rules(variant, doc, rules, declared, sheets)
    return variant


def _dice_and_turn(doc: Node) -> dict[str, Any]:
    """The variant's dice (how many, their faces and attributes) and turn (rolls, whether unused ones carry
    over), as the Variant's fields."""
    dice_node = doc.get("dice").mapping(keys.DICE.names)
    count = read_int(dice_node, keys.DICE["count"])
    faces = read_int(dice_node, keys.DICE["faces"])
    attributes = read_attributes(dice_node.get("attributes", None), faces)
    turn_node = doc.get("turn", None)
    if turn_node is not None:
        turn_node.mapping(keys.TURN.names)
    rolls = read_int(turn_node, keys.TURN["rolls"])
    carry = read_bool(turn_node, keys.TURN["carry_over"])
    return {"dice": count, "faces": faces, "attributes": attributes, "rolls": rolls, "carry_over": carry}


def _column_sheets(
    vid: str,
    rows: list[Box],
    columns: tuple[Column, ...],
    declared: Declared,
    fp: str,
    hooks_for: Callable[[Mapping[str, Any]], Any],
    options: Mapping[str, Any],
    shared: Mapping[str, Any],
) -> dict[str, Variant]:
    """One variant per column holding only that column's rows and the column-scope bonuses, which are
    evaluated on it (none when no bonus has column scope)."""
    if not declared.column_scoped:
        return {}
    sheet_hooks = hooks_for(declared.sheet_kinds)
    return {
        col.id: Variant(
            id=f"{vid}:{col.id}",
            name=f"{col.name} column",
            description="",
            boxes=rows_to_boxes(rows, [Column(col.id, col.name)]),
            bonuses=tuple(b for b, _ in declared.column_scoped),
            rules={k: frozen_params(v) for k, v in declared.sheet_kinds.items()},
            options=dict(options),
            option_specs=(),
            fingerprint=f"{fp}:{col.id}",
            columns=(Column(col.id, col.name),),
            hooks=sheet_hooks,
            **shared,
        )
        for col in columns
    }


def _boxes(doc: Node, comp: _Compiling, count: int, faces: int, attributes: FrozenMap) -> list[Box]:
    """The card's rows as declared under `boxes`, their patterns compiled in the order they refer to each
    other (a pattern may name another box's: `none_of`), a loop refused."""
    boxes_node = doc.get("boxes").mapping(what="a mapping of box id to box")
    if not boxes_node.value:
        raise boxes_node.error("a variant needs at least one box")
    raw_boxes: dict[str, Node] = {}
    for bid in boxes_node.value:
        key_node(boxes_node, bid, "a box id")
        raw_boxes[bid] = boxes_node.child(bid)
    compiled_patterns: dict[str, Spec] = {}
    resolving: list[str] = []

    def resolve_pattern(box_id: str) -> Any:
        if box_id in compiled_patterns:
            return compiled_patterns[box_id].fn
        if box_id not in raw_boxes:
            raise ValueError(f"no box {box_id!r}; boxes: {', '.join(raw_boxes)}")
        if box_id in resolving:
            raise ValueError("patterns refer to each other in a loop: " + " -> ".join(resolving + [box_id]))
        resolving.append(box_id)
        try:
            bnode = raw_boxes[box_id].mapping(BOX_KEYS, "a box mapping")
            compiled_patterns[box_id] = comp.spec(bnode.get("pattern"), "pattern")
        finally:
            resolving.pop()
        return compiled_patterns[box_id].fn

    comp.ctx = PatternContext(count, faces, attributes, resolve_pattern, comp.nested)
    rows = []
    for bid, bnode in raw_boxes.items():
        bnode.mapping(BOX_KEYS, "a box mapping")
        resolve_pattern(bid)
        scorer = comp.spec(bnode.get("score"), "scorer")
        fr = bnode.get("first_roll", None)
        rows.append(
            Box(
                id=bid,
                name=read_str(bnode, keys.BOX["name"]) or title(bid),
                section=read_str(bnode, keys.BOX["section"]),
                stage=read_int(bnode, keys.BOX["stage"]),
                pattern=compiled_patterns[bid],
                scorer=scorer,
                first_roll=read_first_roll(fr) if fr else None,
                extra=read_int(bnode, keys.BOX["extra"]),
                help=read_str(bnode, keys.BOX["help"]),
            )
        )
    return rows


def _check_rules(
    variant: Variant, doc: Node, rules: Mapping[str, Any], declared: Declared, sheets: Mapping[str, Variant]
) -> None:
    """Each rule's own check of its parameters, on the compiled variant (a box id it names exists); a fault is
    reported at the rule's or bonus's place in the document."""
    # Rule-specific checks run on the compiled variant (e.g. a box id a rule names exists);
    # a column-scope bonus is checked on a column's sheet, where its box names are row ids.
    checks: list[tuple[Any, Node | None, Mapping[str, Any], Variant]] = []
    for b in variant.bonuses:
        checks.append((rules[b.kind], declared.nodes[b.id], b.params, variant))
    for b, node in declared.column_scoped:
        checks.append((rules[b.kind], node, b.params, next(iter(sheets.values()))))
    for rname in declared.enabled:
        if rules[rname].kind == "rule":
            checks.append((rules[rname], doc.get("rules").child(rname), variant.rules[rname], variant))
        elif rules[rname].kind == "order":
            checks.append((rules[rname], doc.get("columns"), variant.rules[rname], variant))
    for decl, at, rule_params, target in checks:
        if decl.check is None:
            continue
        try:
            decl.check(target, rule_params)
        except VariantError:
            raise
        except Exception as exc:  # a plugin's check: any failure is a fault of these parameters
            bad = getattr(exc, "key", None)
            where_node = at or doc
            if isinstance(where_node.value, dict) and isinstance(bad, str) and bad in where_node.value:
                where_node = where_node.child(bad)
            raise where_node.error(_exc_text(exc)) from None
