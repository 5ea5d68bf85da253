"""Safe YAML loading that remembers where every key came from, and the merge used by
`extends` and option overlays (so errors can name file and line after merging)."""

from __future__ import annotations

from typing import Any

import yaml

from ..errors import VariantError

__all__ = ["Located", "LocDict", "LocList", "load_yaml", "merge", "where"]

Located = tuple[str, int]  # (source, 1-based line)


class LocDict(dict):
    """A mapping that knows the source line of itself and of each of its keys."""

    loc: Located | None
    key_locs: dict[Any, Located]

    def __init__(self, *args: Any, loc: Located | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.loc = loc
        self.key_locs = {}


class LocList(list):
    """A sequence that knows the source line of itself and of each item."""

    loc: Located | None
    item_locs: list[Located]

    def __init__(self, *args: Any, loc: Located | None = None) -> None:
        super().__init__(*args)
        self.loc = loc
        self.item_locs = []


class _Loader(yaml.SafeLoader):
    """SafeLoader that builds LocDict/LocList and rejects duplicate keys."""

    source = "<string>"

    def __init__(self, stream: Any) -> None:
        super().__init__(stream)
        self._path: list[Any] = []  # keys from the document root to the value being built

    def _loc(self, node: yaml.Node) -> Located:
        return (self.source, node.start_mark.line + 1)

    def construct_yaml_map(self, node: yaml.MappingNode):  # type: ignore[override]
        data = LocDict(loc=self._loc(node))
        yield data
        self.flatten_mapping(node)
        for key_node, value_node in node.value:
            key = self.construct_object(key_node, deep=True)
            if not isinstance(key, (str, int, float, bool)) and key is not None:
                raise VariantError(
                    "a mapping key must be a plain value",
                    source=self.source,
                    line=key_node.start_mark.line + 1,
                    path=self._path,
                )
            if key in data:
                raise VariantError(
                    f"duplicate key {key!r}",
                    source=self.source,
                    line=key_node.start_mark.line + 1,
                    path=[*self._path, key],
                    hint=f"each key may appear once per mapping; {key!r} is first given on line {data.key_locs[key][1]}",
                )
            self._path.append(key)
            data[key] = self.construct_object(value_node, deep=True)
            self._path.pop()
            # The key's own line: for a nested block mapping that is the line naming it, not its first entry.
            data.key_locs[key] = self._loc(key_node)

    def construct_yaml_seq(self, node: yaml.SequenceNode):  # type: ignore[override]
        data = LocList(loc=self._loc(node))
        yield data
        for i, item in enumerate(node.value):
            self._path.append(i)
            data.append(self.construct_object(item, deep=True))
            self._path.pop()
            data.item_locs.append(self._loc(item))


_Loader.add_constructor("tag:yaml.org,2002:map", _Loader.construct_yaml_map)
_Loader.add_constructor("tag:yaml.org,2002:seq", _Loader.construct_yaml_seq)


def load_yaml(text: str, source: str) -> Any:
    """Parse YAML text with the safe loader; syntax errors become VariantError with a line."""
    loader_cls = type("_BoundLoader", (_Loader,), {"source": source})
    try:
        return yaml.load(text, Loader=loader_cls)  # noqa: S506 - a SafeLoader subclass
    except VariantError:
        raise
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else None
        problem = exc.problem or str(exc)
        if exc.context and exc.context_mark and exc.problem_mark and exc.context_mark.line != exc.problem_mark.line:
            problem += f" ({exc.context} that starts on line {exc.context_mark.line + 1})"
        raise VariantError(
            f"not valid YAML: {problem}",
            source=source,
            line=line,
            hint="check indentation and quoting near this line",
        ) from None
    except yaml.YAMLError as exc:
        raise VariantError(f"not valid YAML: {exc}", source=source) from None


def where(container: Any, key: Any = None) -> Located | None:
    """The (source, line) of `container[key]`, or of the container itself."""
    if key is not None:
        if isinstance(container, LocDict) and key in container.key_locs:
            return container.key_locs[key]
        if isinstance(container, LocList) and isinstance(key, int) and key < len(container.item_locs):
            return container.item_locs[key]
    return getattr(container, "loc", None)


def merge(base: Any, over: Any) -> Any:
    """Deep-merge `over` onto `base` for `extends` and option overlays.

    Mappings merge key by key; a `null` value deletes the key; a mapping whose
    `kind` differs from the one it overrides replaces it whole (a new pattern is
    not a patch of the old one); any other value replaces the old one.
    """
    if not (isinstance(base, dict) and isinstance(over, dict)):
        return over
    if "kind" in over and "kind" in base and over["kind"] != base["kind"]:
        return over
    out = LocDict(loc=getattr(over, "loc", None) or getattr(base, "loc", None))
    base_locs = getattr(base, "key_locs", {})
    over_locs = getattr(over, "key_locs", {})
    for key, value in base.items():
        out[key] = value
        if key in base_locs:
            out.key_locs[key] = base_locs[key]
    for key, value in over.items():
        if value is None:
            out.pop(key, None)
            out.key_locs.pop(key, None)
            continue
        out[key] = merge(out[key], value) if key in out else value
        if key in over_locs:
            out.key_locs[key] = over_locs[key]
    return out
