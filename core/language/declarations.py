"""The document's declarations besides its boxes, each read and checked where it stands: the dice's
attributes, the columns, the figures, the match, the bonuses and the rules with their parameters (the
compiler builds the variant from them)."""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import Any

from attrs import frozen

from . import keys
from .frozen import FrozenMap
from .keys import ANY_ORDER, REQUIRED
from .nodes import Node, describe_value, key_node, read_bool, read_int, read_str, title
from .parts import Bonus, Column, Figure, FirstRoll, MatchSpec

__all__ = [
    "Declared",
    "enable_rules",
    "plain",
    "read_attributes",
    "read_bonuses",
    "read_columns",
    "read_figures",
    "read_first_roll",
    "read_match",
    "rule_params",
]


def plain(value: Any, str_keys: bool = False) -> Any:
    """Strip location types so the document can be stored (keys as written: `rounds: {2: 1}` has a number,
    which compiling the stored document again, to pickle or derive a variant, must see) or hashed (`str_keys`)."""
    if isinstance(value, dict):
        return {(str(k) if str_keys else k): plain(v, str_keys) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v, str_keys) for v in value]
    return value


def read_first_roll(node: Node) -> FirstRoll:
    node.mapping(keys.FIRST_ROLL.names)
    return FirstRoll(
        multiply=read_int(node, keys.FIRST_ROLL["multiply"]),
        add=read_int(node, keys.FIRST_ROLL["add"]),
        points=read_int(node, keys.FIRST_ROLL["points"]),
    )


def read_attributes(node: Node | None, faces: int) -> FrozenMap:
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


def read_columns(doc: Node, rules: Mapping[str, Any]) -> tuple[Column, ...]:
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
        c.mapping(keys.COLUMN.names, "a column mapping")
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


def read_figures(doc: Node) -> tuple[tuple[Figure, ...], tuple[str, ...]]:
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


def read_match(doc: Node) -> MatchSpec:
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


@frozen
class Declared:
    """The bonuses a document declares, by scope, and the rule kinds they and its rules enable."""

    card: list[Bonus]
    column_scoped: list[tuple[Bonus, Node]]
    nodes: dict[str, Node]
    enabled: dict[str, dict[str, Any]]  # card-scope bonus kinds and rules -> their parameters
    sheet_kinds: dict[str, dict[str, Any]]  # the kinds of column-scope bonuses (evaluated on each column)


def read_bonuses(doc: Node, rules: Mapping[str, Any], multi: bool, figures: tuple[Figure, ...]) -> Declared:
    """The document's `bonuses`, each of a known kind, scope and figure, its parameters checked."""
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
            raw = {k: v for k, v in node.value.items() if k not in keys.BONUS.names}
            params = rule_params(node, decl, raw)
            bonus = Bonus(bid, read_str(node, keys.BONUS["name"]) or title(bid), kind, params, scope, figure)
            if scope == "card":
                card_bonuses.append(bonus)
                enabled.setdefault(kind, {})
            else:
                column_scoped.append((bonus, node))
                sheet_kinds.setdefault(kind, {})

    return Declared(card_bonuses, column_scoped, bonus_nodes, enabled, sheet_kinds)


def enable_rules(doc: Node, rules: Mapping[str, Any], enabled: dict[str, dict[str, Any]], columns: Any) -> None:
    """Add the document's `rules` (each a known rule, its parameters checked) and the columns' fill orders to
    `enabled`."""
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
            enabled[rname] = rule_params(node, decl, raw)
    for col in columns:
        if col.order != ANY_ORDER:
            enabled.setdefault(col.order, {})


def rule_params(node: Node, decl: Any, raw: Mapping[str, Any]) -> dict[str, Any]:
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
        out[key] = plain(value, str_keys=True)
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
