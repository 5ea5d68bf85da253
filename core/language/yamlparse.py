"""The bounded YAML loader behind `yamlload.load_yaml`: PyYAML's safe composing and constructing, with the
document's size and depth bounded while it is composed, and every mapping and list built as a `LocDict` or
`LocList` that remembers its lines. Imported on the first parse only (PyYAML takes a while to import).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import yaml

from ..errors import VariantError
from .yamlsource import MAX_CHARS, MAX_DEPTH, MAX_NODES, NUMBER_HINT, Located, LocDict, LocList

__all__ = ["parse"]

_MERGE_TAG = "tag:yaml.org,2002:merge"
_LONG_QUOTE = re.compile(r"'[^'\n]{40,}'|\"[^\"\n]{40,}\"")

if TYPE_CHECKING:
    _Base = yaml.SafeLoader  # what `_Bounded`'s methods call is a loader's
else:
    _Base = object


def _token(value: Any) -> str:
    """`value` as a short quoted token for messages (long keys and names are cut)."""
    text = repr(value)
    return text if len(text) <= 40 else text[:36] + "..." + text[0]


def _short(text: str) -> str:
    """PyYAML's problem text on one line, with any long quoted piece of the file cut short."""
    text = " ".join(str(text).split())
    return _LONG_QUOTE.sub(lambda m: m.group(0)[:36] + "..." + m.group(0)[0], text)[:200]


class _Bounded(_Base):
    """What a variant's loader adds to PyYAML's safe composing and constructing, on either parser: it builds
    LocDict/LocList, bounds depth and expanded size while composing, merges `<<` keys itself (explicit keys win,
    no duplicate error) and rejects duplicate keys."""

    source = "<string>"

    def _bound(self) -> None:
        self._path: list[Any] = []  # keys from the document root to the value being built
        self._compose_path: list[Any] = []  # the same while composing (raw key text)
        self._frames: list[list[int]] = [[0, 0, 0]]  # per open node: expanded values, characters, height
        self._anchored: dict[int, tuple[int, int, int]] = {}  # id(anchored node) -> its expanded totals

    def _loc(self, node: yaml.Node) -> Located:
        """Where `node` starts: (source, 1-based line)."""
        return (self.source, node.start_mark.line + 1)

    def _error(self, message: str, mark: Any, hint: str | None = None) -> VariantError:
        """A VariantError at `mark`, with the key path composed so far (cut short when very deep)."""
        path = [p for p in self._compose_path if p is not None]
        if len(path) > 8:  # a too-deep value: where it starts is enough
            path = [*path[:4], f"... {len(path) - 4} levels more"]
        return VariantError(message, source=self.source, line=mark.line + 1, path=path, hint=hint)

    # -- composing: bound the document before anything walks it --------------------------

    def compose_node(self, parent: yaml.Node | None, index: Any) -> Any:
        """Compose one node as PyYAML does, refusing it past MAX_DEPTH, and add its expanded size up."""
        event = self.peek_event()
        key = index.value if isinstance(index, yaml.ScalarNode) else index if isinstance(index, int) else None
        self._compose_path.append(key)
        try:
            if isinstance(event, yaml.AliasEvent):
                node = super().compose_node(parent, index)  # the node its anchor names
                totals = self._anchored.get(id(node))
                if totals is None:  # the anchor is still open: the alias is inside what it repeats
                    raise self._error(
                        f"alias *{_token(event.anchor)[1:-1]} is inside the value it repeats", event.start_mark
                    )
            else:
                if len(self._frames) > MAX_DEPTH:
                    raise self._error(
                        f"nested more than {MAX_DEPTH} levels",
                        event.start_mark,
                        hint="a variant needs only a few levels of mappings and lists",
                    )
                self._frames.append([0, 0, 0])
                node = super().compose_node(parent, index)
                values, chars, height = self._frames.pop()
                own = len(node.value) if isinstance(node, yaml.ScalarNode) else 0
                totals = (values + 1, chars + own, height + 1)
                if event.anchor is not None:
                    self._anchored[id(node)] = totals
            self._count(totals, event)
            return node
        finally:
            self._compose_path.pop()

    def _count(self, totals: tuple[int, int, int], event: yaml.Event) -> None:
        """Add a finished node (or an alias's expansion) to its parent; refuse past the bounds."""
        values, chars, height = totals
        frame = self._frames[-1]
        frame[0] += values
        frame[1] += chars
        frame[2] = max(frame[2], height)
        alias = isinstance(event, yaml.AliasEvent)
        what = "an alias here" if alias else "the value here"
        hint = (
            "an alias repeats everything its anchor holds; use fewer or smaller aliases"
            if alias
            else "a variant needs far less; is this the right file?"
        )
        if len(self._frames) - 1 + height > MAX_DEPTH:
            raise self._error(f"{what} nests the document more than {MAX_DEPTH} levels", event.start_mark, hint=hint)
        if frame[0] > MAX_NODES:
            raise self._error(
                f"{what} makes the document more than {MAX_NODES:,} values (aliases expanded)",
                event.start_mark,
                hint=hint,
            )
        if frame[1] > MAX_CHARS:
            raise self._error(
                f"{what} makes the document more than {MAX_CHARS:,} characters of text (aliases expanded)",
                event.start_mark,
                hint=hint,
            )

    # -- constructing ----------------------------------------------------------------------

    def construct_yaml_int(self, node: yaml.ScalarNode) -> int:
        """An integer, refused before int() when its text is far longer than any allowed number."""
        if len(node.value) > 32:  # int() of thousands of digits is slow, and no variant needs it
            raise VariantError(
                f"the number {node.value[:12]}... is too long",
                source=self.source,
                line=node.start_mark.line + 1,
                path=self._path,
                hint=NUMBER_HINT,
            )
        return super().construct_yaml_int(node)

    def construct_yaml_map(self, node: yaml.MappingNode) -> Iterator[LocDict]:  # type: ignore[override]
        """A LocDict with each key's line; `<<` keys merged in place, a key written twice refused."""
        data = LocDict(loc=self._loc(node))
        yield data
        entries: list[tuple[Any, yaml.Node, yaml.Node]] = []  # (key, key node, value node); key None for `<<`
        explicit: dict[Any, int] = {}  # explicit key -> its line
        for key_node, value_node in node.value:
            if key_node.tag == _MERGE_TAG:
                entries.append((None, key_node, value_node))
                continue
            if key_node.tag == "tag:yaml.org,2002:value":  # a plain `=` key is the string "="
                key_node.tag = "tag:yaml.org,2002:str"
            key = self.construct_object(key_node, deep=True)
            if not isinstance(key, (str, int, float, bool)) and key is not None:
                raise VariantError(
                    "a mapping key must be a plain value",
                    source=self.source,
                    line=key_node.start_mark.line + 1,
                    path=self._path,
                )
            if key in explicit:
                raise VariantError(
                    f"duplicate key {_token(key)}",
                    source=self.source,
                    line=key_node.start_mark.line + 1,
                    path=[*self._path, key],
                    hint=f"each key may appear once per mapping; {_token(key)} is first given on line {explicit[key]}",
                )
            explicit[key] = key_node.start_mark.line + 1
            entries.append((key, key_node, value_node))
        for key, key_node, value_node in entries:
            if key_node.tag == _MERGE_TAG:
                self._merge_into(data, explicit, key_node, value_node)
                continue
            self._path.append(key)
            data[key] = self.construct_object(value_node, deep=True)
            self._path.pop()
            # The key's own line: for a nested block mapping that is the line naming it, not its first entry.
            data.key_locs[key] = self._loc(key_node)

    def _merge_into(self, data: LocDict, explicit: dict[Any, int], key_node: yaml.Node, value_node: yaml.Node) -> None:
        """YAML's `<<: *a` or `<<: [*a, *b]`: add the keys not given explicitly nor by an earlier merge."""
        sources = value_node.value if isinstance(value_node, yaml.SequenceNode) else [value_node]
        for src in sources:
            if not (isinstance(src, yaml.MappingNode) and src.tag == "tag:yaml.org,2002:map"):  # not a !!set
                raise VariantError(
                    "`<<` merges a mapping, or a list of mappings, into this one",
                    source=self.source,
                    line=key_node.start_mark.line + 1,
                    path=self._path,
                    hint="write `<<: *name` where `&name` marks a mapping",
                )
            merged = self.construct_object(src, deep=True)
            for key, value in merged.items():
                if key not in explicit and key not in data:
                    data[key] = value
                    data.key_locs[key] = merged.key_locs.get(key, merged.loc)

    def construct_yaml_seq(self, node: yaml.SequenceNode) -> Iterator[LocList]:  # type: ignore[override]
        """A LocList with each item's line."""
        data = LocList(loc=self._loc(node))
        yield data
        for i, item in enumerate(node.value):
            self._path.append(i)
            data.append(self.construct_object(item, deep=True))
            self._path.pop()
            data.item_locs.append(self._loc(item))


class _Loader(_Bounded, yaml.SafeLoader):
    """PyYAML's own parser, in Python: the judge of every file, and the one whose errors say what is wrong."""

    def __init__(self, stream: Any) -> None:
        yaml.SafeLoader.__init__(self, stream)
        self._bound()


def _libyaml_loader() -> type[_Bounded] | None:
    """The loader on libyaml's parser (C), where PyYAML was built with it.

    The same composing and constructing, several times faster; but libyaml accepts some text PyYAML
    refuses (a tab after `key:`, a `?` inside a plain word), so only dicecup's own variant files,
    which a test parses both ways, are read with it.
    """
    if not yaml.__with_libyaml__:
        return None
    from yaml._yaml import CParser

    class _LibyamlLoader(
        _Bounded, yaml.composer.Composer, CParser, yaml.constructor.SafeConstructor, yaml.resolver.Resolver
    ):
        def __init__(self, stream: Any) -> None:
            CParser.__init__(self, stream)
            yaml.constructor.SafeConstructor.__init__(self)
            yaml.resolver.Resolver.__init__(self)
            yaml.composer.Composer.__init__(self)
            self._bound()

    return _LibyamlLoader


_LIBYAML = _libyaml_loader()
for _loader in (_Loader, _LIBYAML):
    if _loader is not None:
        _loader.add_constructor("tag:yaml.org,2002:map", _Bounded.construct_yaml_map)
        _loader.add_constructor("tag:yaml.org,2002:seq", _Bounded.construct_yaml_seq)
        _loader.add_constructor("tag:yaml.org,2002:int", _Bounded.construct_yaml_int)


def parse(text: str, source: str, *, libyaml: bool = False) -> Any:
    """Parse YAML text with the bounded safe loader; any problem is a VariantError with a line.

    `libyaml`: text known to parse alike under both parsers (dicecup's own variant files) is read with
    libyaml where PyYAML has it; should that fail, PyYAML reads it again and says what is wrong.
    """
    bad = yaml.reader.Reader.NON_PRINTABLE.search(text)
    if bad:  # NUL and other control characters: say where, not what the text around is
        line = text.count("\n", 0, bad.start()) + 1
        column = bad.start() - text.rfind("\n", 0, bad.start())
        name = "NUL" if bad.group() == "\0" else "control"
        raise VariantError(
            f"a {name} character (U+{ord(bad.group()):04X}) at column {column}: YAML allows only text",
            source=source,
            line=line,
            hint="is this a binary file? a variant is a UTF-8 text file",
        )
    if libyaml and _LIBYAML is not None:
        try:
            return yaml.load(text, Loader=type("_BoundLoader", (_LIBYAML,), {"source": source}))
        except Exception:  # PyYAML below reads it again, to raise its own error
            pass
    loader_cls = type("_BoundLoader", (_Loader,), {"source": source})
    try:
        return yaml.load(text, Loader=loader_cls)
    except VariantError:
        raise
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = mark.line + 1 if mark else None
        problem = _short(exc.problem or "unreadable")
        if exc.context and exc.context_mark and exc.problem_mark and exc.context_mark.line != exc.problem_mark.line:
            problem += f" ({_short(exc.context)} that starts on line {exc.context_mark.line + 1})"
        raise VariantError(
            f"not valid YAML: {problem}",
            source=source,
            line=where,
            hint="check indentation and quoting near this line",
        ) from None
    except yaml.YAMLError as exc:
        raise VariantError(f"not valid YAML: {_short(type(exc).__name__)}", source=source) from None
