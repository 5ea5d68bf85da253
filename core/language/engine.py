"""The engine: one pluggy manager, the registries it fills, and the variant catalogue.

An application may run several engines side by side, each with its own plugins;
nothing here is global. `Engine()` loads the built-in plugins and, unless told
not to, third-party plugins from the `dicecup` entry-point group.
"""

from __future__ import annotations

import difflib
import importlib
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pluggy
from attrs import frozen

from . import hookspecs
from .compiler import REQUIRED, Node, compile_variant
from ..errors import PluginError, UnknownVariant
from .model import Variant
from .documents import resolve
from .rulehooks import RuleHooks
from .yamlsource import load_yaml, read_variant

__all__ = ["Engine", "RuleDecl", "BUILTIN_PLUGINS", "AUTOLOAD_ENV"]

AUTOLOAD_ENV = "DICECUP_DISABLE_PLUGIN_AUTOLOAD"

BUILTIN_PLUGINS = (
    "dicecup.plugins.patterns",
    "dicecup.plugins.builtin_variants",
    "dicecup.plugins.box_modifiers",
    "dicecup.plugins.bonuses",
    "dicecup.plugins.joker",
    "dicecup.plugins.stage_order",
    "dicecup.plugins.box_requires",
    "dicecup.plugins.instant_win",
    "dicecup.plugins.settlement",
)


@frozen
class RuleDecl:
    """A rule (or bonus kind) a plugin provides, with its parameters and their defaults."""

    name: str
    kind: str  # "rule" or "bonus"
    params: Mapping[str, Any]
    doc: str
    plugin: Any
    check: Callable[[Variant, Mapping[str, Any]], None] | None = None


@frozen
class VariantEntry:
    """A variant document known to the engine: parsed YAML and where it came from."""

    id: str
    doc: Any
    source: str
    origin: str  # "builtin" or the plugin's name


class Engine:
    """A plugin manager, its pattern/scorer/rule registries and its variants."""

    def __init__(
        self,
        plugins: Sequence[Any] = (),
        *,
        entry_points: bool | None = None,
        builtins: bool = True,
    ) -> None:
        self.pm = pluggy.PluginManager(hookspecs.PROJECT)
        self.pm.add_hookspecs(hookspecs)
        if builtins:
            for modname in BUILTIN_PLUGINS:
                self.pm.register(importlib.import_module(modname), name=modname)
        if entry_points is None:
            entry_points = not os.environ.get(AUTOLOAD_ENV)
        try:
            if entry_points:
                self.pm.load_setuptools_entrypoints(hookspecs.PROJECT)
            for plugin in plugins:
                self.pm.register(plugin)
        except (pluggy.PluginValidationError, ValueError) as exc:  # bad hook arguments, registered twice
            raise PluginError(f"cannot register plugin {_plugin_name(getattr(exc, 'plugin', None))}: {exc}") from None
        self._check_hooks()
        self.patterns: dict[str, Callable[..., Any]] = {}
        self.scorers: dict[str, Callable[..., Any]] = {}
        self.rules: dict[str, RuleDecl] = {}
        self._entries: dict[str, VariantEntry] = {}
        self._compiled: dict[tuple, Variant] = {}
        self._hooks: dict[frozenset, RuleHooks] = {}
        self._collect()

    # ------------------------------------------------------------------ registration

    def _check_hooks(self) -> None:
        """Reject a `dicecup_*` function that is no hook (a typo) or lacks `@hookimpl` (never called)."""
        known = sorted(n for n in vars(hookspecs) if n.startswith(f"{hookspecs.PROJECT}_"))
        for plugin in self.pm.get_plugins():
            for attr in dir(plugin):
                if not attr.startswith(f"{hookspecs.PROJECT}_") or not callable(getattr(plugin, attr, None)):
                    continue
                marked = self.pm.parse_hookimpl_opts(plugin, attr) is not None
                if attr not in known:
                    cut = len(hookspecs.PROJECT) + 1  # compare what follows the shared prefix
                    close = difflib.get_close_matches(attr[cut:], [k[cut:] for k in known], n=1)
                    hint = f"did you mean {attr[:cut]}{close[0]}?" if close else f"the hooks are: {', '.join(known)}"
                    raise PluginError(f"plugin {_plugin_name(plugin)} implements {attr}, which is not a dicecup hook; {hint}")
                if not marked:
                    raise PluginError(
                        f"plugin {_plugin_name(plugin)} defines {attr} without @dicecup.hookimpl, so it would never be called"
                    )
        try:
            self.pm.check_pending()
        except pluggy.PluginValidationError as exc:  # pragma: no cover - the loop above catches these first
            raise PluginError(f"plugin {_plugin_name(exc.plugin)} implements a hook dicecup does not have: {exc}") from None

    def _collect(self) -> None:
        def adder(table: dict, what: str) -> Callable[[str, Callable[..., Any]], None]:
            def register(name: str, factory: Callable[..., Any]) -> None:
                if name in table:
                    raise PluginError(f"{what} {name!r} is registered twice")
                table[name] = factory

            return register

        self.pm.hook.dicecup_register_patterns(register=adder(self.patterns, "pattern"))
        self.pm.hook.dicecup_register_scorers(register=adder(self.scorers, "scorer"))
        for impl in self.pm.hook.dicecup_register_rules.get_hookimpls():
            impl.function(register=self._rule_registrar(impl.plugin))
        for impl in self.pm.hook.dicecup_register_variants.get_hookimpls():
            origin = self.pm.get_name(impl.plugin) or "plugin"
            impl.function(register=self._variant_registrar(origin))

    def _rule_registrar(self, plugin: Any) -> Callable[..., None]:
        def register(
            name: str,
            params: Mapping[str, Any] | None = None,
            doc: str = "",
            *,
            kind: str = "rule",
            check: Callable[[Variant, Mapping[str, Any]], None] | None = None,
        ) -> None:
            if name in self.rules:
                raise PluginError(f"rule {name!r} is registered twice")
            if kind not in ("rule", "bonus"):
                raise PluginError(f"rule {name!r}: kind must be 'rule' or 'bonus', not {kind!r}")
            self.rules[name] = RuleDecl(name, kind, dict(params or {}), doc, plugin, check)

        return register

    def _variant_registrar(self, origin: str) -> Callable[..., None]:
        def register(path: str | os.PathLike | None = None, *, text: str | None = None, source: str | None = None) -> None:
            if path is not None:
                text = read_variant(path)
                source = source or str(path)
            if text is None:
                raise PluginError("register a variant with a path or with text=...")
            entry = self._parse_entry(text, source or "<variant>", origin)
            if entry.id in self._entries:
                raise PluginError(f"variant id {entry.id!r} from {entry.source} is already registered by {self._entries[entry.id].source}")
            self._entries[entry.id] = entry

        return register

    @staticmethod
    def _parse_entry(text: str, source: str, origin: str) -> VariantEntry:
        doc = load_yaml(text, source)
        node = Node(doc, (), source=source)
        node.mapping(what="a variant mapping")
        vid = node.get("id").string()
        return VariantEntry(vid, doc, source, origin)

    # ------------------------------------------------------------------ catalogue

    def variant_ids(self) -> list[str]:
        """Ids of every variant known to this engine (built-in and from plugins)."""
        return list(self._entries)

    def entry(self, variant_id: str) -> VariantEntry:
        try:
            return self._entries[variant_id]
        except KeyError:
            raise UnknownVariant(variant_id, self.variant_ids()) from None

    def variant(self, variant_id: str, options: Mapping[str, Any] | None = None) -> Variant:
        """The compiled variant `variant_id` with these option values (cached)."""
        entry = self.entry(variant_id)
        return self._build(entry.doc, entry.source, options or {})

    def load_file(self, path: str | os.PathLike, options: Mapping[str, Any] | None = None) -> Variant:
        """Compile a variant file that is not registered (its `extends` may name registered ones)."""
        path = Path(path)
        text = read_variant(path)  # bounded, regular UTF-8 files only: never a FIFO, device or huge file
        entry = self._parse_entry(text, str(path), "file")
        return self._build(entry.doc, entry.source, options or {})

    def resolve(self, name: str, options: Mapping[str, Any] | None = None) -> Variant:
        """A variant by id, or by path when `name` ends in .yaml/.yml."""
        if name.endswith((".yaml", ".yml")) and name not in self._entries:
            return self.load_file(name, options)
        return self.variant(name, options)

    # ------------------------------------------------------------------ building

    def _build(self, doc: Any, source: str, options: Mapping[str, Any]) -> Variant:
        key = (source, id(doc), tuple(sorted((k, str(v)) for k, v in options.items())))
        cached = self._compiled.get(key)
        if cached is not None:
            return cached
        res = resolve(doc, source, options, self._entries)
        variant = compile_variant(
            Node(res.document, (), source=source),
            patterns=self.patterns,
            scorers=self.scorers,
            rules=self.rules,
            options=res.options,
            option_specs=res.specs,
            hooks_for=self._hooks_for,
        )
        self._compiled[key] = variant
        return variant

    def _hooks_for(self, enabled: Mapping[str, Any]) -> RuleHooks:
        key = frozenset(enabled)
        hooks = self._hooks.get(key)
        if hooks is None:
            by_plugin: dict[int, set[str]] = {}
            plugins: dict[int, Any] = {}
            for decl in self.rules.values():
                by_plugin.setdefault(id(decl.plugin), set()).add(decl.name)
                plugins[id(decl.plugin)] = decl.plugin
            excluded = [plugins[pid] for pid, names in by_plugin.items() if not names & key]
            names = {pid: tuple(sorted(n & key)) for pid, n in by_plugin.items() if n & key}
            hooks = self._hooks[key] = RuleHooks(self.pm, excluded, names)
        return hooks


def _plugin_name(plugin: Any) -> str:
    """A readable plugin name for errors: the module or class name, not an object repr."""
    if plugin is None:
        return "?"
    name = getattr(plugin, "__name__", None) or type(plugin).__name__
    return repr(name)


__all__ += ["REQUIRED"]
