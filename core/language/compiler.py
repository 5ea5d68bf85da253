"""Check a resolved variant document key by key and compile it into a frozen `Variant`.

Every error names the file, the line and the key path down to the bad value, and
unknown keys are errors (with a did-you-mean), in the spirit of pre-commit's cfgv.
"""

from __future__ import annotations

import difflib
import hashlib
import inspect
import json
from collections.abc import Callable, Mapping
from typing import Any

from ..errors import VariantError
from .model import Bonus, Box, FirstRoll, MatchSpec, OptionSpec, PatternContext, Spec, Variant, frozen_params
from .yamlsource import where

__all__ = ["Node", "compile_variant", "REQUIRED", "fingerprint"]


class _Required:
    def __repr__(self) -> str:
        return "REQUIRED"


REQUIRED: Any = _Required()

TOP_KEYS = ("id", "name", "description", "extends", "dice", "turn", "options", "boxes", "bonuses", "rules", "match")
BOX_KEYS = ("name", "section", "stage", "pattern", "score", "first_roll", "extra", "help")


class Node:
    """A value in the document with the key path that leads to it, for precise errors."""

    def __init__(self, value: Any, path: tuple[Any, ...], parent: Any = None, key: Any = None, source: str = "") -> None:
        self.value = value
        self.path = path
        self._parent = parent
        self._key = key
        self.source = source

    def loc(self) -> tuple[str | None, int | None]:
        found = where(self._parent, self._key) if self._parent is not None else where(self.value)
        if found is None:
            found = where(self.value)
        if found is None:
            return self.source, None
        return found

    def error(self, message: str, hint: str | None = None) -> VariantError:
        source, line = self.loc()
        return VariantError(message, source=source, line=line, path=self.path, hint=hint)

    def child(self, key: Any) -> Node:
        return Node(self.value[key], self.path + (key,), self.value, key, self.source)

    # -- typed accessors ---------------------------------------------------------

    def mapping(self, allowed: tuple[str, ...] | None = None, what: str = "a mapping") -> Node:
        if not isinstance(self.value, dict):
            raise self.error(f"expected {what}, got {_describe(self.value)}")
        if allowed is not None:
            for key in self.value:
                if key not in allowed:
                    close = difflib.get_close_matches(str(key), allowed, n=1)
                    hint = f"did you mean {close[0]!r}?" if close else f"allowed keys: {', '.join(allowed)}"
                    raise self.child(key).error(f"unknown key {key!r}", hint=hint)
        return self

    def get(self, key: str, default: Any = REQUIRED) -> Node | None:
        if key in self.value:
            return self.child(key)
        if default is REQUIRED:
            raise self.error(f"missing required key {key!r}", hint=f"add `{key}:` to this mapping")
        return None

    def integer(self, low: int | None = None, high: int | None = None) -> int:
        v = self.value
        if isinstance(v, bool) or not isinstance(v, int):
            raise self.error(f"expected an integer, got {_describe(v)}")
        if low is not None and v < low:
            raise self.error(f"expected an integer >= {low}, got {v}")
        if high is not None and v > high:
            raise self.error(f"expected an integer <= {high}, got {v}")
        return v

    def string(self) -> str:
        if not isinstance(self.value, str):
            raise self.error(f"expected a string, got {_describe(self.value)}")
        return self.value

    def boolean(self) -> bool:
        if not isinstance(self.value, bool):
            raise self.error(f"expected true or false, got {_describe(self.value)}")
        return self.value


def _describe(v: Any) -> str:
    if v is None:
        return "nothing (null)"
    if isinstance(v, bool):
        return f"the boolean {str(v).lower()}"
    if isinstance(v, dict):
        return "a mapping"
    if isinstance(v, list):
        return "a list"
    return f"{type(v).__name__} {v!r}"


def _plain(value: Any) -> Any:
    """Strip location types so the document can be hashed and stored."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def fingerprint(document: Any) -> str:
    """A stable hash of a resolved variant document (cache keys, save-file checks)."""
    text = json.dumps(_plain(document), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _ident(node: Node, what: str) -> str:
    name = node.value
    if not isinstance(name, str) or not name.replace("_", "").replace("-", "").isalnum():
        raise node.error(f"{what} must be a name of letters, digits, '_' or '-', got {_describe(name)}")
    return name


def _call_factory(node: Node, factory: Callable[..., Any], ctx: PatternContext, params: dict, what: str) -> Any:
    """Call a pattern/scorer factory, turning bad parameters into precise errors."""
    sig = inspect.signature(factory)
    accepted = [p for p in list(sig.parameters.values())[1:]]
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
    except (ValueError, TypeError) as exc:
        bad = getattr(exc, "key", None)
        target = node.child(bad) if bad in params else node
        raise target.error(f"bad parameter for {what}: {exc}") from None


def _spec(node: Node, registry: Mapping[str, Callable[..., Any]], ctx: PatternContext, what: str) -> Spec:
    """Compile `pattern:`/`score:` written as a name, an integer (fixed score) or a mapping with `kind`."""
    value = node.value
    if what == "scorer" and isinstance(value, int) and not isinstance(value, bool):
        kind, params = "fixed", {"points": value}
    elif isinstance(value, str):
        kind, params = value, {}
    elif isinstance(value, dict):
        kind_node = node.get("kind")
        kind = kind_node.string()
        params = {k: _plain(v) for k, v in value.items() if k != "kind"}
    else:
        raise node.error(
            f"expected a {what} name or a mapping with `kind`, got {_describe(value)}",
            hint=f"e.g. `{what}: {{kind: {next(iter(registry), 'name')}}}`",
        )
    factory = registry.get(kind)
    if factory is None:
        close = difflib.get_close_matches(kind, list(registry), n=1)
        hint = f"did you mean {close[0]!r}?" if close else f"known {what}s: {', '.join(sorted(registry))}"
        target = node.child("kind") if isinstance(value, dict) else node
        raise target.error(f"unknown {what} {kind!r}", hint=hint)
    fn = _call_factory(node, factory, ctx, params, f"{what} {kind!r}")
    return Spec(kind, params, fn)


def _first_roll(node: Node) -> FirstRoll:
    node.mapping(("multiply", "add", "points"))
    multiply = node.get("multiply", None)
    add = node.get("add", None)
    points = node.get("points", None)
    return FirstRoll(
        multiply=multiply.integer(0) if multiply else 1,
        add=add.integer() if add else 0,
        points=points.integer() if points else None,
    )


def compile_variant(
    doc_node: Node,
    *,
    patterns: Mapping[str, Callable[..., Any]],
    scorers: Mapping[str, Callable[..., Any]],
    rules: Mapping[str, Any],
    options: Mapping[str, Any],
    option_specs: tuple[OptionSpec, ...],
    hooks_for: Callable[[Mapping[str, Any]], Any],
) -> Variant:
    """Check every key of a resolved document and build the frozen Variant."""
    doc = doc_node.mapping(TOP_KEYS, "a variant mapping")
    vid = _ident(doc.get("id"), "the variant id")
    name_node = doc.get("name", None)
    desc_node = doc.get("description", None)

    dice_node = doc.get("dice").mapping(("count", "faces"))
    count = dice_node.get("count").integer(1, 10)
    faces_node = dice_node.get("faces", None)
    faces = faces_node.integer(2, 20) if faces_node else 6

    turn_node = doc.get("turn", None)
    rolls, carry = 3, False
    if turn_node is not None:
        turn_node.mapping(("rolls", "carry_over"))
        r = turn_node.get("rolls", None)
        rolls = r.integer(1, 20) if r else 3
        c = turn_node.get("carry_over", None)
        carry = c.boolean() if c else False

    boxes_node = doc.get("boxes").mapping(what="a mapping of box id to box")
    if not boxes_node.value:
        raise boxes_node.error("a variant needs at least one box")
    raw_boxes = {bid: boxes_node.child(bid) for bid in boxes_node.value}
    compiled_patterns: dict[str, Spec] = {}
    resolving: list[str] = []

    def resolve_pattern(box_id: str):
        if box_id in compiled_patterns:
            return compiled_patterns[box_id].fn
        if box_id not in raw_boxes:
            raise ValueError(f"no box {box_id!r}; boxes: {', '.join(raw_boxes)}")
        if box_id in resolving:
            raise ValueError("patterns refer to each other in a loop: " + " -> ".join(resolving + [box_id]))
        resolving.append(box_id)
        try:
            bnode = raw_boxes[box_id].mapping(BOX_KEYS, "a box mapping")
            compiled_patterns[box_id] = _spec(bnode.get("pattern"), patterns, ctx, "pattern")
        finally:
            resolving.pop()
        return compiled_patterns[box_id].fn

    ctx = PatternContext(count, faces, resolve_pattern)
    boxes = []
    for bid, bnode in raw_boxes.items():
        _ident(Node(bid, bnode.path, boxes_node.value, bid, doc.source), "a box id")
        bnode.mapping(BOX_KEYS, "a box mapping")
        resolve_pattern(bid)
        scorer = _spec(bnode.get("score"), scorers, ctx, "scorer")
        nm = bnode.get("name", None)
        sec = bnode.get("section", None)
        stg = bnode.get("stage", None)
        fr = bnode.get("first_roll", None)
        ex = bnode.get("extra", None)
        hp = bnode.get("help", None)
        boxes.append(
            Box(
                id=bid,
                name=nm.string() if nm else bid.replace("_", " ").title(),
                section=sec.string() if sec else "main",
                stage=stg.integer(1) if stg else 1,
                pattern=compiled_patterns[bid],
                scorer=scorer,
                first_roll=_first_roll(fr) if fr else None,
                extra=ex.integer() if ex else 0,
                help=hp.string() if hp else "",
            )
        )

    bonuses = []
    enabled: dict[str, dict[str, Any]] = {}
    bonus_node = doc.get("bonuses", None)
    if bonus_node is not None:
        bonus_node.mapping(what="a mapping of bonus id to bonus")
        for bid in bonus_node.value:
            node = bonus_node.child(bid).mapping(what="a bonus mapping")
            kind = node.get("kind").string()
            decl = rules.get(kind)
            if decl is None or decl.kind != "bonus":
                known = sorted(k for k, d in rules.items() if d.kind == "bonus")
                raise node.child("kind").error(f"unknown bonus kind {kind!r}", hint=f"known bonus kinds: {', '.join(known)}")
            nm = node.get("name", None)
            raw = {k: v for k, v in node.value.items() if k not in ("kind", "name")}
            params = _rule_params(node, decl, raw, skip=("kind", "name"))
            bonuses.append(Bonus(bid, nm.string() if nm else str(bid).replace("_", " ").title(), kind, params))
            enabled.setdefault(kind, {})

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
                raise node.error(f"expected a mapping of parameters, got {_describe(raw)}", hint="write `{}` for none")
            enabled[rname] = _rule_params(node, decl, raw)

    match_node = doc.get("match", None)
    match = MatchSpec({0: 1})
    if match_node is not None:
        match_node.mapping(("rounds", "replay_ties"))
        rounds_node = match_node.get("rounds", None)
        table: dict[int, int] = {0: 1}
        if rounds_node is not None:
            if isinstance(rounds_node.value, dict):
                for key in rounds_node.value:
                    n = rounds_node.child(key).integer(1)
                    if key == "default":
                        table[0] = n
                    elif isinstance(key, int) and not isinstance(key, bool) and key >= 1:
                        table[key] = n
                    else:
                        raise rounds_node.child(key).error(
                            f"expected a number of players or 'default', got {key!r}",
                            hint="e.g. `rounds: {2: 1, default: 13}`",
                        )
            else:
                table[0] = rounds_node.integer(1)
        rt = match_node.get("replay_ties", None)
        match = MatchSpec(table, rt.boolean() if rt else False)

    plain_doc = _plain(doc.value)
    variant = Variant(
        id=vid,
        name=name_node.string() if name_node else vid,
        description=desc_node.string() if desc_node else "",
        dice=count,
        faces=faces,
        rolls=rolls,
        carry_over=carry,
        boxes=tuple(boxes),
        bonuses=tuple(bonuses),
        rules={k: frozen_params(v) for k, v in enabled.items()},
        match=match,
        options=dict(options),
        option_specs=option_specs,
        source=doc.source,
        fingerprint=fingerprint({"doc": plain_doc, "options": {k: options[k] for k in sorted(options)}}),
        document=plain_doc,
        hooks=None,
    )
    object.__setattr__(variant, "hooks", hooks_for(enabled))
    # Rule-specific checks run on the compiled variant (e.g. a box id a rule names exists).
    for rname in enabled:
        decl = rules[rname]
        if decl.check is None:
            continue
        if decl.kind == "bonus":
            targets = [(doc.get("bonuses").child(b.id), b.params) for b in variant.bonuses if b.kind == rname]
        else:
            targets = [(doc.get("rules").child(rname), variant.rules[rname])]
        for node, params in targets:
            try:
                decl.check(variant, params)
            except ValueError as exc:
                bad = getattr(exc, "key", None)  # a check may name the parameter at fault
                target = node.child(bad) if isinstance(node.value, dict) and bad in node.value else node
                raise target.error(str(exc)) from None
    return variant


def _rule_params(node: Node, decl: Any, raw: Mapping[str, Any], skip: tuple[str, ...] = ()) -> dict[str, Any]:
    """Fill a rule's parameters from its declaration: unknown keys and missing required ones are errors."""
    out: dict[str, Any] = {}
    for key, value in raw.items():
        if key in skip:
            continue
        if key not in decl.params:
            close = difflib.get_close_matches(str(key), list(decl.params), n=1)
            hint = f"did you mean {close[0]!r}?" if close else f"{decl.name} takes: {', '.join(decl.params) or 'no parameters'}"
            raise node.child(key).error(f"unknown parameter {key!r} for {decl.name}", hint=hint)
        default = decl.params[key]
        if default is not REQUIRED and default is not None and not _same_type(default, value):
            raise node.child(key).error(
                f"expected {type(default).__name__} for {decl.name}.{key}, got {_describe(value)}"
            )
        out[key] = _plain(value)
    for key, default in decl.params.items():
        if key in out:
            continue
        if default is REQUIRED:
            raise node.error(f"{decl.name} needs parameter {key!r}", hint=f"add `{key}:` here")
        out[key] = default
    return out


def _same_type(default: Any, value: Any) -> bool:
    if isinstance(default, bool):
        return isinstance(value, bool)
    if isinstance(default, int):
        return isinstance(value, int) and not isinstance(value, bool)
    if isinstance(default, (list, tuple)):
        return isinstance(value, list)
    if isinstance(default, dict):
        return isinstance(value, dict)
    return isinstance(value, type(default))
