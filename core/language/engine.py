"""The engine: one pluggy manager, the registries it fills, and the variant catalogue.

An application may run several engines side by side, each with its own plugins;
nothing here is global. `Engine()` loads the built-in plugins and, unless told
not to, third-party plugins from the `dicecup` entry-point group.
"""

from __future__ import annotations

import hashlib
import importlib
import inspect
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pluggy

from ..errors import DicecupError, PluginError, UnknownVariant, VariantError, described, shown
from ..store import Store
from . import hookspecs
from .compiler import REQUIRED, Maker, Node, compile_variant
from .documents import check_numbers, resolve
from .entry_points import from_importlib as entry_points_from_importlib
from .entry_points import installed as installed_entry_points
from .guard import plugin_label, registered_name
from .model import Variant
from .plugin_files import FILE_REF, load_plugin_file, plugin_ref
from .registry import (
    BUILTIN_PLUGINS,
    RULE_KINDS,
    BotDecl,
    RuleDecl,
    bot_registrar,
    check_hook_names,
    each_plugin,
    maker_registrar,
    rule_registrar,
    run_registration,
)
from .rulehooks import RULE_HOOKS, HookManager, RuleHooks, check_answers
from .yamlload import load_yaml
from .yamlsource import MAX_DEPTH, merge, read_variant

if TYPE_CHECKING:
    import random

    from .parsed import Documents

__all__ = [
    "Engine",
    "RuleDecl",
    "BotDecl",
    "VariantEntry",
    "BUILTIN_PLUGINS",
    "AUTOLOAD_ENV",
    "REQUIRED",
    "load_plugin_file",
    "RULE_KINDS",
]

AUTOLOAD_ENV = "DICECUP_DISABLE_PLUGIN_AUTOLOAD"


class VariantEntry:
    """A variant document known to the engine: its id, where it came from, and its parsed YAML.

    An entry registered with its id (`register(..., id=...)`, as the bundled files are)
    is parsed when first used, so an engine with many variants starts without reading
    them all; the document must then declare that id.
    """

    __slots__ = ("id", "source", "origin", "_doc", "_text", "_documents")

    def __init__(
        self,
        id: str,
        doc: Any,
        source: str,
        origin: str,
        *,
        text: str | None = None,
        documents: Documents | None = None,
    ) -> None:
        self.id, self.source, self.origin = id, source, origin  # origin: the registering plugin's name, or "file"
        self._doc, self._text, self._documents = doc, text, documents

    @property
    def doc(self) -> Any:
        """The parsed document (parsed now if it was registered unparsed)."""
        if self._text is not None:
            # dicecup's own files (a test parses each with both) are read with libyaml, where PyYAML has it
            libyaml = self.origin in BUILTIN_PLUGINS
            vid, doc = _parse_document(self._text, self.source, libyaml=libyaml, documents=self._documents)
            if vid != self.id:
                raise VariantError(
                    f"the file declares id {vid!r} but was registered as {self.id!r}",
                    source=self.source,
                    hint="make the id in the file and the one its plugin registers the same",
                )
            self._doc, self._text = doc, None
        return self._doc

    def __repr__(self) -> str:
        return f"VariantEntry({self.id!r}, source={self.source!r}, origin={self.origin!r})"


def _parse_document(
    text: str, source: str, *, libyaml: bool = False, documents: Documents | None = None
) -> tuple[str, Any]:
    """(declared id, parsed document) of a variant's YAML text (VariantError with a line when it is bad);
    `libyaml`: see `load_yaml`. `documents`: where parsed documents are kept (`parsed`), asked first."""
    doc = documents.get(text, source, libyaml) if documents is not None else None
    parsed = doc is None
    if parsed:
        doc = load_yaml(text, source, libyaml=libyaml)
    node = Node(doc, (), source=source)
    node.mapping(what="a variant mapping")
    vid = node.get("id").string()
    if parsed and documents is not None:
        documents.put(text, source, libyaml, doc)
    return vid, doc


class Engine:
    """A plugin manager, its pattern/scorer/rule/bot registries and its variants.

    `plugins` are plugin modules or objects registered after the built-in and installed ones;
    `plugin_files` are `.py` files of plugins that are not installed (`load_plugin_file`); `documents` keeps
    the variant documents it parses, for the next engine (`parsed.KeptDocuments`).
    """

    def __init__(
        self,
        plugins: Sequence[Any] = (),
        *,
        entry_points: bool | None = None,
        builtins: bool = True,
        plugin_files: Sequence[str | os.PathLike[str]] = (),
        documents: Documents | None = None,
    ) -> None:
        if isinstance(plugins, (str, bytes)) or not isinstance(plugins, Sequence):
            raise PluginError(f"plugins must be a list of plugin modules or objects, got {type(plugins).__name__}")
        if isinstance(plugin_files, (str, bytes)) or not isinstance(plugin_files, Sequence):
            raise PluginError(f"plugin_files must be a list of paths, got {type(plugin_files).__name__}")
        plugins = [*plugins, *(load_plugin_file(p) for p in plugin_files)]
        self._documents = documents
        self.pm = HookManager(hookspecs.PROJECT)
        self.pm.add_hookspecs(hookspecs)
        if builtins:
            for modname in BUILTIN_PLUGINS:
                self.pm.register(importlib.import_module(modname), name=modname)
        if entry_points is None:
            entry_points = not os.environ.get(AUTOLOAD_ENV)
        self._plugins = tuple(plugins)
        self._spec = (bool(builtins), bool(entry_points), tuple(plugin_ref(p) for p in plugins))
        try:
            if entry_points:
                _load_installed(self.pm)
            for plugin in plugins:
                self.pm.register(plugin)
        except (pluggy.PluginValidationError, ValueError) as exc:  # bad hook arguments, registered twice
            who = plugin_label(getattr(exc, "plugin", None), self.pm)
            raise PluginError(f"cannot register {who}: {described(exc).partition(': ')[2]}") from None
        except (PluginError, KeyboardInterrupt):
            raise
        except BaseException as exc:  # a broken entry point: its import failed (or it raised SystemExit)
            raise PluginError(f"cannot load the installed dicecup plugins: {described(exc)}") from None
        check_hook_names(self.pm)
        self.patterns: dict[str, Maker] = {}
        self.scorers: dict[str, Maker] = {}
        self.rules: dict[str, RuleDecl] = {}
        self.bots: dict[str, BotDecl] = {}
        self._entries: dict[str, VariantEntry] = {}
        self._compiled: dict[tuple[Any, ...], Variant] = {}
        self._hooks: dict[frozenset[str], RuleHooks] = {}
        self._identities: dict[int, list[str]] = {}
        self.store = Store()
        """What is kept for this engine's variants (the advisor's memory of each), bounded (`store.Store`)."""
        self._collect()

    # ------------------------------------------------------------------ copying and pickling

    def __copy__(self) -> Engine:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> Engine:
        return self  # its registries are fixed when it is built; what it caches is shared safely

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as how it was built (built-ins, entry points, each plugin's import name): loading builds
        an engine the same way, so that an embedder can ship one to a worker process."""
        unnamed = [p for p, ref in zip(self._plugins, self._spec[2], strict=True) if ref is None]
        if unnamed:
            import pickle

            raise pickle.PicklingError(
                f"this engine holds {plugin_label(unnamed[0], self.pm)}, which cannot be imported by name, so it "
                "cannot be pickled; put the plugin in an importable module (or a file given as plugin_files)"
            )
        return (_engine_from_spec, (self._spec,))

    # ------------------------------------------------------------------ registration

    def _collect(self) -> None:
        """Run every plugin's registration hooks, in order: patterns, scorers, rules, bots, variants."""
        pm = self.pm
        for hook, table, what in (
            ("dicecup_register_patterns", self.patterns, "pattern"),
            ("dicecup_register_scorers", self.scorers, "scorer"),
        ):
            for plugin, call in each_plugin(pm, hook):
                register = maker_registrar(table, what, plugin, plugin_label(plugin, pm), _builtin(pm, plugin))
                run_registration(pm, hook, plugin, call, register)
        for plugin, call in each_plugin(pm, "dicecup_register_rules"):
            register = rule_registrar(self.rules, plugin, plugin_label(plugin, pm))
            run_registration(pm, "dicecup_register_rules", plugin, call, register)
        for plugin, call in each_plugin(pm, "dicecup_register_bots"):
            register = bot_registrar(self.bots, plugin, plugin_label(plugin, pm), _builtin(pm, plugin))
            run_registration(pm, "dicecup_register_bots", plugin, call, register)
        for plugin, call in each_plugin(pm, "dicecup_register_variants"):
            origin = pm.get_name(plugin) or "plugin"
            register = self._variant_registrar(origin, plugin_label(plugin, pm))
            run_registration(pm, "dicecup_register_variants", plugin, call, register)

    def _variant_registrar(self, origin: str, label: str) -> Callable[..., None]:
        def register(
            path: str | os.PathLike[str] | None = None,
            *,
            text: str | None = None,
            source: str | None = None,
            id: str | None = None,
        ) -> None:
            if source is not None and not isinstance(source, str):
                raise PluginError(f"{label}: a variant's source must be text, got {shown(source)}")
            if path is not None:
                if not isinstance(path, (str, os.PathLike)):
                    raise PluginError(f"{label}: a variant's path must be a path, got {shown(path)}")
                text = read_variant(path)
                source = source or str(path)
            if text is None:
                raise PluginError(f"{label}: register a variant with a path or with text=...")
            if not isinstance(text, str):
                raise PluginError(f"{label}: a variant's text must be a str, got {shown(text)}")
            if id is not None and (not isinstance(id, str) or not id):
                raise PluginError(f"{label}: a variant id must be a non-empty string, got {shown(id)}")
            source = source or "<variant>"
            # with its id given, the document is parsed when first used (then checked to declare that id)
            entry = (
                self._parse_entry(text, source, origin, self._documents)
                if id is None
                else VariantEntry(id, None, source, origin, text=text, documents=self._documents)
            )
            if entry.id in self._entries:
                raise PluginError(
                    f"{label}: variant id {entry.id!r} from {entry.source} is already registered by "
                    f"{self._entries[entry.id].source}"
                )
            self._entries[entry.id] = entry

        return register

    @staticmethod
    def _parse_entry(text: str, source: str, origin: str, documents: Documents | None = None) -> VariantEntry:
        vid, doc = _parse_document(text, source, documents=documents)
        return VariantEntry(vid, doc, source, origin)

    # ------------------------------------------------------------------ catalogue

    def variant_ids(self) -> list[str]:
        """Ids of every variant known to this engine (built-in and from plugins)."""
        return list(self._entries)

    def entry(self, variant_id: str) -> VariantEntry:
        try:
            return self._entries[variant_id]
        except (KeyError, TypeError):
            raise UnknownVariant(str(variant_id), self.variant_ids()) from None

    def variant(self, variant_id: str, options: Mapping[str, Any] | None = None) -> Variant:
        """The compiled variant `variant_id` with these option values (cached)."""
        entry = self.entry(variant_id)
        return self._build(entry.doc, entry.source, _options(options))

    def load_file(self, path: str | os.PathLike[str], options: Mapping[str, Any] | None = None) -> Variant:
        """Compile a variant file that is not registered (its `extends` may name registered ones)."""
        path = Path(path)
        text = read_variant(path)  # bounded, regular UTF-8 files only: never a FIFO, device or huge file
        entry = self._parse_entry(text, str(path), "file", self._documents)
        return self._build(entry.doc, entry.source, _options(options))

    def resolve(self, name: str, options: Mapping[str, Any] | None = None) -> Variant:
        """A variant by id, or by path when `name` ends in .yaml/.yml."""
        if not isinstance(name, str):
            raise UnknownVariant(repr(name), self.variant_ids())
        if name.endswith((".yaml", ".yml")) and name not in self._entries:
            return self.load_file(name, options)
        return self.variant(name, options)

    # ------------------------------------------------------------------ bots

    def bot_names(self) -> list[str]:
        """Every registered bot's name (a bot with an argument is written `NAME:ARG` after `bot:`)."""
        return list(self.bots)

    def bot_usage(self) -> list[str]:
        """Every registered bot as players write it after `bot:`, its argument named ("risk:THETA")."""
        return [d.usage for d in self.bots.values()]

    def bot_spec(self, spec: str) -> tuple[BotDecl, Any]:
        """(declaration, parsed argument or None) of a bot as written after `bot:` ("greedy", "risk:0.05");
        a DicecupError saying what is wrong (unknown bot, a missing, unexpected or bad argument)."""
        name, colon, arg = spec.partition(":") if isinstance(spec, str) else ("", "", "")
        decl = self.bots.get(name)
        if decl is None:
            raise DicecupError(f"unknown bot {shown(spec)}; bots: {', '.join(self.bot_usage())}")
        if decl.argument is None:
            if colon:
                raise DicecupError(f"bot {decl.name} takes no argument, got {shown(spec)}; write bot:{decl.name}")
            return decl, None
        if not arg.strip():
            raise DicecupError(f"bot {decl.name} needs its {decl.argument}: write bot:{decl.usage}")
        return decl, (decl.parse(arg.strip()) if decl.parse is not None else arg.strip())

    def check_bot(self, name: str, variant: Variant) -> None:
        """Refuse at once (a DicecupError with the reason) a bot that cannot play this variant."""
        decl, arg = self.bot_spec(name)
        if decl.check is not None:
            decl.check(variant) if decl.argument is None else decl.check(variant, arg)

    def make_bot(self, name: str, rng: random.Random | None = None) -> Any:
        """A new bot of this kind (DicecupError listing the bots when there is none)."""
        decl, arg = self.bot_spec(name)
        if rng is None:
            import random

            rng = random.Random()
        return decl.factory(rng) if decl.argument is None else decl.factory(rng, arg)

    def action_verbs(self, variant: Variant) -> dict[str, str]:
        """The actions the variant's rules add (verb -> help), as their plugins declared them."""
        out: dict[str, str] = {}
        for name in [*variant.rules, *(k for s in variant.sheets.values() for k in s.rules)]:
            decl = self.rules.get(name)
            if decl is not None:
                out.update(decl.actions)
        return out

    # ------------------------------------------------------------------ building

    def _build(self, doc: Any, source: str, options: Mapping[str, Any]) -> Variant:
        key = (source, id(doc), tuple(sorted((k, repr(v)) for k, v in options.items())))
        cached = self._compiled.get(key)
        if cached is not None:
            return cached
        res = resolve(doc, source, options, self._entries)
        variant = self._compile(res.document, source, res.options, res.specs)
        self._compiled[key] = variant
        return variant

    def _compile(self, document: Any, source: str, options: Mapping[str, Any], specs: Any) -> Variant:
        """Compile a resolved document (extends, options and substitutions applied)."""
        spec = self._spec

        def rebuild(variant: Variant) -> tuple[Any, ...]:
            if spec is None or any(ref is None for ref in spec[2]):
                import pickle

                raise pickle.PicklingError(
                    f"variant {variant.id!r} uses a plugin that cannot be imported by name, so it cannot be pickled"
                )
            return (
                _unpickle_variant,
                (spec, variant.document, source, dict(variant.options), specs, variant.fingerprint),
            )

        variant = compile_variant(
            Node(document, (), source=source),
            patterns=self.patterns,
            scorers=self.scorers,
            rules=self.rules,
            options=options,
            option_specs=specs,
            hooks_for=self._hooks_for,
            identity=self._identity,
            rebuild=rebuild,
            derive=self._derive,
            store=self.store,
        )
        check_answers(variant)  # a plugin answering against its contract is refused now, before any work
        return variant

    def _derive(self, variant: Variant, overlay: Mapping[str, Any]) -> Variant:
        """`Variant.derive`: the variant's resolved document with `overlay` merged on, compiled here
        (the overlay held to what a YAML file may hold: plain values, numbers within the limit)."""
        source = f"{variant.source} (derived)"
        plain = _plain(overlay, (), source)
        check_numbers(plain, (), (source, None))
        return self._compile(merge(variant.document, plain), source, dict(variant.options), variant.option_specs)

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
            owners = {name: self.rules[name].plugin for name in key if name in self.rules}
            hooks = self._hooks[key] = RuleHooks(self.pm, excluded, names, owners)
        return hooks

    def _identity(self, enabled: Mapping[str, Any], used: set[tuple[str, str]]) -> list[list[str]]:
        """Who implements a variant: the plugins of its rules, patterns and scorers, and every plugin that
        applies to all variants (it declares no rule but implements rule hooks), each as
        [name, module, version, hash of its source]."""
        plugins: dict[int, Any] = {}
        for name in enabled:
            if name in self.rules:
                plugins[id(self.rules[name].plugin)] = self.rules[name].plugin
        for what, kind in used:
            maker = (self.patterns if what == "pattern" else self.scorers).get(kind)
            if maker is not None and maker.plugin is not None:
                plugins[id(maker.plugin)] = maker.plugin
        declaring = {id(d.plugin) for d in self.rules.values()}
        rule_hooks = {f"dicecup_{h}" for h in RULE_HOOKS}
        for plugin in self.pm.get_plugins():
            if id(plugin) in declaring:
                continue
            if any(impl.plugin is plugin for h in rule_hooks for impl in getattr(self.pm.hook, h).get_hookimpls()):
                plugins[id(plugin)] = plugin
        return sorted(self._plugin_identity(p) for p in plugins.values())

    def _plugin_identity(self, plugin: Any) -> list[str]:
        got = self._identities.get(id(plugin))
        if got is None:
            module = inspect.getmodule(plugin) if not inspect.ismodule(plugin) else plugin
            modname = getattr(module, "__name__", "") or type(plugin).__module__
            version = _distribution_version(modname)
            digest = hashlib.sha256()
            try:
                digest.update(inspect.getsource(module if module is not None else type(plugin)).encode())
            except (OSError, TypeError):
                digest.update(repr(sorted(n for n in dir(plugin) if n.startswith("dicecup_"))).encode())
            if not inspect.ismodule(plugin) and not inspect.isclass(plugin):
                digest.update(repr(_settings(plugin)).encode())  # Points(10) and Points(20) differ
            qual = "" if inspect.ismodule(plugin) else getattr(type(plugin), "__qualname__", "")
            got = self._identities[id(plugin)] = [
                registered_name(plugin, self.pm),
                modname + (":" + qual if qual else ""),
                version,
                digest.hexdigest()[:16],
            ]
        return got


def _builtin(pm: pluggy.PluginManager, plugin: Any) -> bool:
    """Whether `plugin` is one of dicecup's own (`BUILTIN_PLUGINS`, registered under its module's name)."""
    name = pm.get_name(plugin)
    return name in BUILTIN_PLUGINS and plugin is sys.modules.get(name or "")


def _load_installed(pm: pluggy.PluginManager) -> None:
    """Register the installed packages' plugins (the `dicecup` entry points), as pluggy's
    `load_setuptools_entrypoints` would: in the order found, a name already registered or blocked skipped. Found
    by reading their metadata files (`language.entry_points`), or through `importlib.metadata` where that search
    would look further; loaded alike either way (so a broken one is told alike)."""
    found = installed_entry_points(hookspecs.PROJECT)
    if found is None:
        found = entry_points_from_importlib(hookspecs.PROJECT)
    for ep in found:
        if not pm.has_plugin(ep.name) and not pm.is_blocked(ep.name):
            pm.register(ep.load(), name=ep.name)


def _settings(plugin: Any) -> list[tuple[str, Any]]:
    """A plugin object's plain settings (numbers, strings, tuples of them): part of what it computes."""
    plain = (int, float, str, bool, type(None))
    out = []
    for name, value in sorted(getattr(plugin, "__dict__", {}).items()):
        if isinstance(value, plain) or (isinstance(value, tuple) and all(isinstance(v, plain) for v in value)):
            out.append((name, value))
    return out


def _options(options: Any) -> Mapping[str, Any]:
    if options is None:
        return {}
    if not isinstance(options, Mapping):
        raise VariantError(f"options must be a mapping of option name to value, got {type(options).__name__}")
    for key in options:
        if not isinstance(key, str):
            raise VariantError(f"option names are text such as 'joker', got {type(key).__name__} {shown(key)}")
    return options


_OWN = __name__.split(".", 1)[0]


@lru_cache(maxsize=1)
def _distributions() -> Mapping[str, list[str]]:
    """Top-level module -> installed distributions: one scan of every installed package per process."""
    from importlib import metadata

    return metadata.packages_distributions()


def _distribution_version(modname: str) -> str:
    """`dist==version` of the distribution that installs `modname` ("?" when none does)."""
    return _package_version(modname.split(".", 1)[0])


@lru_cache(maxsize=64)
def _package_version(top: str) -> str:
    """`dist==version` of the distribution that installs the top-level package `top` (once per package)."""
    if top == _OWN:
        # the built-in plugins: dicecup's own version, the one its distribution is built with (pyproject's
        # dynamic version), without reading installed metadata (the README in it: milliseconds per command)
        return f"{_OWN}=={sys.modules[_OWN].__version__}"  # (the package above: imported before this module)
    from importlib import metadata

    try:
        for dist in _distributions().get(top, []):
            return f"{dist}=={metadata.version(dist)}"
    except Exception:  # pragma: no cover - broken metadata: the source hash still identifies it
        pass
    return "?"


_ENGINES: dict[tuple[Any, ...], Engine] = {}


def _engine_from_spec(spec: tuple[Any, ...]) -> Engine:
    """An engine built like the one described by `spec` (shared within a process)."""
    got = _ENGINES.get(spec)
    if got is None:
        builtins, entry_points, refs = spec
        plugins: list[Any] = []
        for ref in refs:
            if ref.startswith(FILE_REF):
                plugins.append(load_plugin_file(ref.removeprefix(FILE_REF)))
                continue
            modname, _, qual = ref.partition(":")
            obj: Any = importlib.import_module(modname)
            if qual:
                call = qual.endswith("()")
                for part in qual.removesuffix("()").split("."):
                    obj = getattr(obj, part)
                obj = obj() if call else obj
            plugins.append(obj)
        got = _ENGINES[spec] = Engine(plugins, entry_points=entry_points, builtins=builtins)
    return got


def _unpickle_variant(
    spec: tuple[Any, ...], document: Any, source: str, options: dict[str, Any], specs: Any, fp: str
) -> Variant:
    """Compile a pickled variant again with an engine built the same way; its fingerprint must match."""
    engine = _engine_from_spec(spec)
    variant = engine._compile(document, source, options, specs)
    if variant.fingerprint != fp:
        raise DicecupError(f"variant {variant.id!r} cannot be unpickled: its rules or plugins differ in this process")
    return variant


def _plain(value: Any, path: tuple[Any, ...], source: str) -> Any:
    """An overlay as the plain dicts and lists `merge` and the compiler read; a value YAML cannot
    write (an object, a set, bytes) is refused where it is, and so is nesting past MAX_DEPTH."""
    if len(path) > MAX_DEPTH:
        raise VariantError(f"nested more than {MAX_DEPTH} levels", source=source, path=path[:8])
    if isinstance(value, Mapping):
        out = {}
        for k, v in value.items():
            if not isinstance(k, (str, int, float, bool)):
                raise VariantError(f"a key must be a plain value, got {type(k).__name__}", source=source, path=path)
            out[k] = _plain(v, (*path, k), source)
        return out
    if isinstance(value, (list, tuple)):
        return [_plain(v, (*path, i), source) for i, v in enumerate(value)]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    raise VariantError(
        f"a value must be what YAML can write (text, a number, true/false, null, a list or a mapping), "
        f"got {type(value).__name__}",
        source=source,
        path=path,
    )
