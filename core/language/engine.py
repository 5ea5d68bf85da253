"""The engine: one pluggy manager, the registries it fills, and the variant catalogue.

An application may run several engines side by side, each with its own plugins;
nothing here is global. `Engine()` loads the built-in plugins and, unless told
not to, third-party plugins from the `dicecup` entry-point group.
"""

from __future__ import annotations

import difflib
import importlib
import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pluggy
from attrs import frozen

from . import hookspecs
from .compiler import REQUIRED, Node, compile_variant
from ..errors import PluginError, UnknownVariant, VariantError
from .model import Award, BoxFlag, OptionSpec, Variant
from .yamlsource import LocDict, load_yaml, merge

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

_SUBST = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


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


class RuleHooks:
    """The rule hooks as one variant sees them: only the plugins it enables take part."""

    def __init__(self, pm: pluggy.PluginManager, excluded: Iterable[Any], rule_names: Mapping[int, tuple[str, ...]] | None = None) -> None:
        excluded = list(excluded)
        self._pm = pm
        self._rule_names = dict(rule_names or {})  # id(plugin) -> the enabled rules it provides
        names = (
            "dicecup_legal_boxes",
            "dicecup_adjust_score",
            "dicecup_extra_points",
            "dicecup_end_bonuses",
            "dicecup_instant_win",
            "dicecup_settle",
            "dicecup_state_flags",
        )
        self._callers = {n: pm.subset_hook_caller(n, excluded) for n in names}
        # Fold order: pluggy calls the last implementation in this list first.
        self._adjusters = [impl.function for impl in reversed(self._callers["dicecup_adjust_score"].get_hookimpls())]

    def adjust_score(self, ctx: Any, score: int) -> int:
        for fn in self._adjusters:
            new = fn(ctx=ctx, score=score)
            if new is not None:
                score = int(new)
        return score

    def extra_points(self, ctx: Any) -> tuple[Award, ...]:
        return tuple(a for res in self._callers["dicecup_extra_points"](ctx=ctx) if res for a in res)

    def legal_boxes(self, ctx: Any) -> tuple[str, ...]:
        allowed = set(ctx.open_boxes)
        for res in self._callers["dicecup_legal_boxes"](ctx=ctx):
            if res is not None:
                allowed &= set(res)
        return tuple(b for b in ctx.open_boxes if b in allowed)

    def blocking_rules(self, ctx: Any, box: str) -> tuple[str, ...]:
        """The rules (or plugin names) whose `dicecup_legal_boxes` leaves `box` out: why it is illegal."""
        out: list[str] = []
        for impl in self._callers["dicecup_legal_boxes"].get_hookimpls():
            res = impl.function(ctx=ctx)
            if res is not None and box not in res:
                out.extend(self._rule_names.get(id(impl.plugin)) or (self._pm.get_name(impl.plugin) or "a plugin",))
        return tuple(out)

    def end_bonuses(self, variant: Variant, card: Any) -> tuple[Award, ...]:
        return tuple(a for res in self._callers["dicecup_end_bonuses"](variant=variant, card=card) if res for a in res)

    def instant_win(self, ctx: Any, players: int) -> bool:
        return bool(self._callers["dicecup_instant_win"](ctx=ctx, players=players))

    def settle(self, variant: Variant, totals: Mapping[str, int]) -> Any:
        return self._callers["dicecup_settle"](variant=variant, totals=totals)

    def state_flags(self, variant: Variant) -> tuple[BoxFlag, ...]:
        out: list[BoxFlag] = []
        for res in self._callers["dicecup_state_flags"](variant=variant):
            for flag in res or ():
                if flag not in out:
                    out.append(flag)
        return tuple(out)


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
                text = Path(path).read_text(encoding="utf-8")
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
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise VariantError(f"cannot read the file: {exc.strerror}", source=str(path)) from None
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
        resolved = self._resolve_extends(doc, source, [os.path.normpath(source)])
        specs, overlays = self._option_specs(resolved, source)
        chosen = self._choose_options(specs, options, source)
        for spec in specs:
            overlay = overlays.get((spec.name, chosen[spec.name]))
            if overlay:
                resolved = merge(resolved, overlay)
        resolved = _substitute(resolved, chosen, source, ())
        for k in ("extends", "options"):
            if isinstance(resolved, dict):
                resolved.pop(k, None)
        variant = compile_variant(
            Node(resolved, (), source=source),
            patterns=self.patterns,
            scorers=self.scorers,
            rules=self.rules,
            options=chosen,
            option_specs=specs,
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

    def _resolve_extends(self, doc: Any, source: str, chain: list[str]) -> Any:
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
            if parent_name not in self._entries:
                close = difflib.get_close_matches(parent_name, self.variant_ids(), n=1)
                hint = f"did you mean {close[0]!r}?" if close else f"known variants: {', '.join(self.variant_ids())}"
                raise ext.error(f"extends unknown variant {parent_name!r}", hint=hint)
            parent = self._entries[parent_name]
            parent_doc, parent_source = parent.doc, parent.source
        base = self._resolve_extends(parent_doc, parent_source, chain + [parent_key])
        child = LocDict({k: v for k, v in doc.items() if k != "extends"}, loc=getattr(doc, "loc", None))
        child.key_locs = {k: v for k, v in getattr(doc, "key_locs", {}).items() if k != "extends"}
        return merge(base, child)

    @staticmethod
    def _option_specs(doc: Any, source: str) -> tuple[tuple[OptionSpec, ...], dict[tuple[str, Any], Any]]:
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

    @staticmethod
    def _choose_options(
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


def _plugin_name(plugin: Any) -> str:
    """A readable plugin name for errors: the module or class name, not an object repr."""
    if plugin is None:
        return "?"
    name = getattr(plugin, "__name__", None) or type(plugin).__name__
    return repr(name)


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


__all__ += ["REQUIRED"]
