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
from .frozen import FrozenMap, frozen_params
from .keys import ANY_ORDER, MAX_ID_LENGTH, MAX_ROUNDS, REQUIRED
from .model import (
    Bonus,
    Box,
    Column,
    Figure,
    FirstRoll,
    MatchSpec,
    OptionSpec,
    Spec,
    Variant,
)
from .nodes import Node, check_id, describe_value, key_node, read_bool, read_int, read_str, title
from .parts import rows_to_boxes

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


def _plain(value: Any, str_keys: bool = False) -> Any:
    """Strip location types so the document can be stored (keys as written: `rounds: {2: 1}` has a number,
    which compiling the stored document again, to pickle or derive a variant, must see) or hashed (`str_keys`)."""
    if isinstance(value, dict):
        return {(str(k) if str_keys else k): _plain(v, str_keys) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v, str_keys) for v in value]
    return value


def fingerprint(document: Any) -> str:
    """A stable hash of a resolved variant document (cache keys, save-file checks)."""
    text = json.dumps(_plain(document, str_keys=True), sort_keys=True, separators=(",", ":"))
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
        frozen_p = frozen_params(_plain(params, str_keys=True))
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


def _first_roll(node: Node) -> FirstRoll:
    node.mapping(keys.FIRST_ROLL.names)
    return FirstRoll(
        multiply=read_int(node, keys.FIRST_ROLL["multiply"]),
        add=read_int(node, keys.FIRST_ROLL["add"]),
        points=read_int(node, keys.FIRST_ROLL["points"]),
    )


def _attributes(node: Node | None, faces: int) -> FrozenMap:
    """`attributes: {colour: {1: black, ...}}` or `{colour: [black, red, ...]}`: a value for every face."""
    if node is None:
        return FrozenMap()
    node.mapping(what="a mapping of attribute name to its value on each face")
    out: dict[str, tuple[Any, ...]] = {}
    for name in node.value:
        key_node(node, name, "an attribute name")
        child = node.child(name)
        raw = child.value
        values: list[Any] = [None] * (faces + 1)
        if isinstance(raw, list):
            if len(raw) != faces:
                raise child.error(f"expected one value per face ({faces}), got {len(raw)}")
            values[1:] = raw
        elif isinstance(raw, dict):
            for face in raw:
                if isinstance(face, bool) or not isinstance(face, int) or not 1 <= face <= faces:
                    raise child.child(face).error(f"expected a face from 1 to {faces}, got {describe_value(face)}")
                values[face] = raw[face]
            missing = [f for f in range(1, faces + 1) if f not in raw]
            if missing:
                raise child.error(f"no value for face{'s' * (len(missing) > 1)} {', '.join(map(str, missing))}")
        else:
            raise child.error(
                f"expected a list of {faces} values or a mapping of face to value, got {describe_value(raw)}"
            )
        for v in values[1:]:
            if isinstance(v, (dict, list)) or v is None:
                raise child.error(
                    f"an attribute value must be a plain value (a name or a number), got {describe_value(v)}"
                )
        out[str(name)] = tuple(values)
    return FrozenMap(out)


def _columns(doc: Node, rules: Mapping[str, Any]) -> tuple[Column, ...]:
    node = doc.get("columns", None)
    if node is None:
        return ()
    node.mapping(what="a mapping of column id to column")
    if not node.value:
        raise node.error("`columns` is empty", hint="declare at least one column, or leave `columns` out")
    orders = sorted(k for k, d in rules.items() if d.kind == "order")
    out = []
    for cid in node.value:
        key_node(node, cid, "a column id")
        c = node.child(cid)
        if c.value is None:
            c = Node({}, c.path, node.value, cid, node.source)
        c.mapping(COLUMN_KEYS, "a column mapping")
        order = c.get("order", None)
        order_name = read_str(c, keys.COLUMN["order"])
        if order_name != ANY_ORDER and order_name not in orders:
            close = difflib.get_close_matches(order_name, [ANY_ORDER, *orders], n=1)
            hint = f"did you mean {close[0]!r}?" if close else f"fill orders: {', '.join([ANY_ORDER, *orders])}"
            raise order.error(f"unknown fill order {order_name!r}", hint=hint)  # type: ignore[union-attr]
        out.append(
            Column(
                id=cid,
                name=read_str(c, keys.COLUMN["name"]) or title(cid),
                multiplier=read_int(c, keys.COLUMN["multiplier"]),
                order=order_name,
            )
        )
    if len(out) == 1 and out[0].multiplier != 1:
        raise (
            node.child(out[0].id)
            .child("multiplier")
            .error("a multiplier needs several columns (with one column every point would be multiplied alike)")
        )
    return tuple(out)


def _figures(doc: Node) -> tuple[tuple[Figure, ...], tuple[str, ...]]:
    figures: list[Figure] = []
    node = doc.get("figures", None)
    if node is not None:
        node.mapping(what="a mapping of figure id to figure (results other than the score)")
        for fid in node.value:
            key_node(node, fid, "a figure id")
            if fid == "score":
                raise node.child(fid).error("`score` is always a figure; declare only the others")
            f = node.child(fid)
            if f.value is None:
                f = Node({}, f.path, node.value, fid, node.source)
            f.mapping(keys.FIGURE.names, "a figure mapping")
            figures.append(Figure(fid, read_str(f, keys.FIGURE["name"]) or title(fid)))
    known = ["score", *(f.id for f in figures)]
    rank = doc.get("rank_by", None)
    if rank is None:
        return tuple(figures), ("score",)
    if not isinstance(rank.value, list) or not rank.value:
        raise rank.error("expected a list of figures, e.g. [points, score]")
    order: list[str] = []
    for i, item in enumerate(rank.value):
        if item not in known:
            raise rank.child(i).error(f"unknown figure {describe_value(item)}", hint=f"figures: {', '.join(known)}")
        if item in order:
            raise rank.child(i).error(f"figure {item!r} is listed twice")
        order.append(item)
    return tuple(figures), tuple(order)


def _match(doc: Node) -> MatchSpec:
    match_node = doc.get("match", None)
    if match_node is None:
        return MatchSpec({0: 1})
    match_node.mapping(keys.MATCH.names)
    rounds = keys.MATCH["rounds"]
    rounds_node = match_node.get("rounds", None)
    table: dict[int, int] = {0: rounds.default}
    if rounds_node is not None:
        if isinstance(rounds_node.value, dict):
            for key in rounds_node.value:
                n = rounds_node.child(key).integer(rounds.low, rounds.high)
                if key == "default":
                    table[0] = n
                elif isinstance(key, int) and not isinstance(key, bool) and key >= 1:
                    table[key] = n
                else:
                    raise rounds_node.child(key).error(
                        f"expected a number of players or 'default', got {describe_value(key)}",
                        hint="e.g. `rounds: {2: 1, default: 13}`",
                    )
        else:
            table[0] = read_int(match_node, rounds)
    return MatchSpec(table, read_bool(match_node, keys.MATCH["replay_ties"]))


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

    dice_node = doc.get("dice").mapping(keys.DICE.names)
    count = read_int(dice_node, keys.DICE["count"])
    faces = read_int(dice_node, keys.DICE["faces"])
    attributes = _attributes(dice_node.get("attributes", None), faces)

    turn_node = doc.get("turn", None)
    if turn_node is not None:
        turn_node.mapping(keys.TURN.names)
    rolls = read_int(turn_node, keys.TURN["rolls"])
    carry = read_bool(turn_node, keys.TURN["carry_over"])

    columns = _columns(doc, rules)
    figures, rank_by = _figures(doc)
    comp = _Compiling(patterns, scorers)

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
                first_roll=_first_roll(fr) if fr else None,
                extra=read_int(bnode, keys.BOX["extra"]),
                help=read_str(bnode, keys.BOX["help"]),
            )
        )
    multi = len(columns) >= 2

    card_bonuses: list[Bonus] = []
    column_scoped: list[tuple[Bonus, Node]] = []
    bonus_nodes: dict[str, Node] = {}
    enabled: dict[str, dict[str, Any]] = {}
    sheet_kinds: dict[str, dict[str, Any]] = {}
    figure_ids = {"score", *(f.id for f in figures)}
    bonus_node = doc.get("bonuses", None)
    if bonus_node is not None:
        bonus_node.mapping(what="a mapping of bonus id to bonus")
        for bid in bonus_node.value:
            key_node(bonus_node, bid, "a bonus id")
            node = bonus_node.child(bid).mapping(what="a bonus mapping")
            bonus_nodes[bid] = node
            kind = read_str(node, keys.BONUS["kind"])
            decl = rules.get(kind)
            if decl is None or decl.kind != "bonus":
                known = sorted(k for k, d in rules.items() if d.kind == "bonus")
                raise node.child("kind").error(
                    f"unknown bonus kind {kind!r}", hint=f"known bonus kinds: {', '.join(known)}"
                )
            scope_node = node.get("scope", None)
            scope = "column" if multi else "card"
            if scope_node is not None:
                scope = scope_node.string()
                if scope not in ("card", "column"):
                    raise scope_node.error(f"scope must be `card` or `column`, got {scope!r}")
                if scope == "column" and not multi:
                    raise scope_node.error("scope `column` needs a variant with several columns")
            fig_node = node.get("figure", None)
            figure = read_str(node, keys.BONUS["figure"])
            if figure not in figure_ids:
                raise fig_node.error(  # type: ignore[union-attr]
                    f"unknown figure {figure!r}",
                    hint=f"figures: {', '.join(sorted(figure_ids))} (declare others under `figures`)",
                )
            raw = {k: v for k, v in node.value.items() if k not in BONUS_KEYS}
            params = _rule_params(node, decl, raw)
            bonus = Bonus(bid, read_str(node, keys.BONUS["name"]) or title(bid), kind, params, scope, figure)
            if scope == "card":
                card_bonuses.append(bonus)
                enabled.setdefault(kind, {})
            else:
                column_scoped.append((bonus, node))
                sheet_kinds.setdefault(kind, {})

    rules_node = doc.get("rules", None)
    if rules_node is not None:
        rules_node.mapping(what="a mapping of rule name to parameters")
        for rname in rules_node.value:
            decl = rules.get(rname)
            node = rules_node.child(rname)
            if decl is None or decl.kind != "rule":
                known = sorted(k for k, d in rules.items() if d.kind == "rule")
                close = difflib.get_close_matches(str(rname), known, n=1)
                hint = f"did you mean {close[0]!r}?" if close else f"known rules: {', '.join(known)}"
                raise node.error(f"unknown rule {rname!r}", hint=hint + " (a plugin may provide it; is it installed?)")
            raw = node.value if node.value is not None else {}
            if not isinstance(raw, dict):
                raise node.error(
                    f"expected a mapping of parameters, got {describe_value(raw)}", hint="write `{}` for none"
                )
            enabled[rname] = _rule_params(node, decl, raw)
    for col in columns:
        if col.order != ANY_ORDER:
            enabled.setdefault(col.order, {})

    match = _match(doc)
    plain_doc = _plain(doc.value)
    card_columns = columns or (Column("main", "Card"),)
    all_enabled = {**sheet_kinds, **enabled}
    ident = identity(all_enabled, comp.used)
    fp = fingerprint({"doc": plain_doc, "options": {k: options[k] for k in sorted(options)}, "plugins": ident})
    sheets: dict[str, Variant] = {}
    if column_scoped:
        sheet_hooks = hooks_for(sheet_kinds)
        for col in columns:
            sheet = Variant(
                id=f"{vid}:{col.id}",
                name=f"{col.name} column",
                description="",
                dice=count,
                faces=faces,
                rolls=rolls,
                carry_over=carry,
                boxes=rows_to_boxes(rows, [Column(col.id, col.name)]),
                bonuses=tuple(b for b, _ in column_scoped),
                rules={k: frozen_params(v) for k, v in sheet_kinds.items()},
                match=match,
                options=dict(options),
                option_specs=(),
                source=doc.source,
                fingerprint=f"{fp}:{col.id}",
                columns=(Column(col.id, col.name),),
                attributes=attributes,
                figures=figures,
                rank_by=rank_by,
                hooks=sheet_hooks,
                store=store,
            )
            sheets[col.id] = sheet
    column_bonuses = tuple(
        Bonus(f"{col.id}.{b.id}", f"{b.name} ({col.name})", b.kind, b.params, "column", b.figure, col.id)
        for col in columns
        for b, _ in column_scoped
    )
    variant = Variant(
        id=vid,
        name=name,
        description=description,
        dice=count,
        faces=faces,
        rolls=rolls,
        carry_over=carry,
        boxes=rows_to_boxes(rows, card_columns),
        bonuses=tuple(card_bonuses),
        rules={k: frozen_params(v) for k, v in enabled.items()},
        match=match,
        options=dict(options),
        option_specs=option_specs,
        source=doc.source,
        fingerprint=fp,
        columns=card_columns,
        column_bonuses=column_bonuses,
        sheets=sheets,
        attributes=attributes,
        figures=figures,
        rank_by=rank_by,
        document=plain_doc,
        hooks=hooks_for(enabled),
        rebuild=rebuild,
        deriver=derive,
        store=store,
    )
    # Rule-specific checks run on the compiled variant (e.g. a box id a rule names exists);
    # a column-scope bonus is checked on a column's sheet, where its box names are row ids.
    checks: list[tuple[Any, Node | None, Mapping[str, Any], Variant]] = []
    for b in variant.bonuses:
        checks.append((rules[b.kind], bonus_nodes[b.id], b.params, variant))
    for b, node in column_scoped:
        checks.append((rules[b.kind], node, b.params, next(iter(sheets.values()))))
    for rname in enabled:
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
    return variant


def _rule_params(node: Node, decl: Any, raw: Mapping[str, Any]) -> dict[str, Any]:
    """Fill a rule's parameters from its declaration: unknown keys and missing required ones are errors."""
    out: dict[str, Any] = {}
    for key, value in raw.items():
        if key not in decl.params:
            close = difflib.get_close_matches(str(key), [str(p) for p in decl.params], n=1)
            takes = ", ".join(decl.params) or "no parameters"
            hint = f"did you mean {close[0]!r}?" if close else f"{decl.name} takes: {takes}"
            raise node.child(key).error(
                f"unknown parameter {describe_value(key) if not isinstance(key, str) else repr(key)} for {decl.name}",
                hint=hint,
            )
        default = decl.params[key]
        if default is not REQUIRED and default is not None and not _same_type(default, value):
            raise node.child(key).error(
                f"expected {_type_name(default)} for {decl.name}.{key}, got {describe_value(value)}"
            )
        out[key] = _plain(value, str_keys=True)
    for key, default in decl.params.items():
        if key in out:
            continue
        if default is REQUIRED:
            raise node.error(f"{decl.name} needs parameter {key!r}", hint=f"add `{key}:` here")
        out[key] = default
    return out


def _type_name(default: Any) -> str:
    if isinstance(default, bool):
        return "true or false"
    if isinstance(default, int):
        return "a whole number"
    if isinstance(default, (list, tuple)):
        return "a list"
    if isinstance(default, Mapping):
        return "a mapping"
    if isinstance(default, str):
        return "a string"
    return type(default).__name__


def _same_type(default: Any, value: Any) -> bool:
    if isinstance(default, bool):
        return isinstance(value, bool)
    if isinstance(default, int):
        return isinstance(value, int) and not isinstance(value, bool)
    if isinstance(default, (list, tuple)):
        return isinstance(value, list)
    if isinstance(default, Mapping):
        return isinstance(value, dict)
    return isinstance(value, type(default))
