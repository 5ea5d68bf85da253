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
from attrs import frozen

from ..errors import DicecupError, PluginError, UnknownVariant, VariantError, shown
from . import hookspecs
from .compiler import REQUIRED, Maker, Node, compile_variant
from .documents import check_numbers, resolve
from .entry_points import from_importlib as entry_points_from_importlib
from .entry_points import installed as installed_entry_points
from .model import Variant
from .rulehooks import RULE_HOOKS, HookManager, RuleHooks, plugin_label
from .yamlsource import MAX_DEPTH, load_yaml, merge, read_variant

if TYPE_CHECKING:
    import random

__all__ = [
    "Engine",
    "RuleDecl",
    "BotDecl",
    "VariantEntry",
    "BUILTIN_PLUGINS",
    "AUTOLOAD_ENV",
    "REQUIRED",
    "load_plugin_file",
]

AUTOLOAD_ENV = "DICECUP_DISABLE_PLUGIN_AUTOLOAD"

BUILTIN_PLUGINS = (
    "dicecup.plugins.patterns",
    "dicecup.plugins.builtin_variants",
    "dicecup.plugins.box_modifiers",
    "dicecup.plugins.bonuses",
    "dicecup.plugins.joker",
    "dicecup.plugins.stage_order",
    "dicecup.plugins.fill_order",
    "dicecup.plugins.announce",
    "dicecup.plugins.box_requires",
    "dicecup.plugins.instant_win",
    "dicecup.plugins.settlement",
    "dicecup.plugins.bots",
)

RULE_KINDS = ("rule", "bonus", "order")


@frozen
class RuleDecl:
    """A rule (bonus kind or fill order) a plugin provides, with its parameters and their defaults."""

    name: str
    kind: str  # "rule", "bonus" or "order"
    params: Mapping[str, Any]
    doc: str
    plugin: Any
    check: Callable[[Variant, Mapping[str, Any]], None] | None = None
    actions: Mapping[str, str] = {}


@frozen
class BotDecl:
    """A computer player a plugin provides: `factory(rng)` makes one; `check(variant)` refuses what it cannot play.

    A bot with an `argument` (its label, e.g. THETA) is written `bot:NAME:ARG`: `parse(text)` reads the
    argument (a DicecupError saying what is wrong), and `factory(rng, value)` / `check(variant, value)` take it.
    """

    name: str
    factory: Callable[..., Any]
    doc: str
    plugin: Any
    check: Callable[..., None] | None = None
    argument: str | None = None
    parse: Callable[[str], Any] | None = None
    solitaire: bool = True  # False: it plays against the others at the table (solitaire simulation refuses it)

    @property
    def usage(self) -> str:
        """How players write it after `bot:` ("greedy", "risk:THETA")."""
        return self.name if self.argument is None else f"{self.name}:{self.argument}"


class VariantEntry:
    """A variant document known to the engine: its id, where it came from, and its parsed YAML.

    An entry registered with its id (`register(..., id=...)`, as the bundled files are)
    is parsed when first used, so an engine with many variants starts without reading
    them all; the document must then declare that id.
    """

    __slots__ = ("id", "source", "origin", "_doc", "_text")

    def __init__(self, id: str, doc: Any, source: str, origin: str, *, text: str | None = None) -> None:
        self.id, self.source, self.origin = id, source, origin  # origin: the registering plugin's name, or "file"
        self._doc, self._text = doc, text

    @property
    def doc(self) -> Any:
        """The parsed document (parsed now if it was registered unparsed)."""
        if self._text is not None:
            # dicecup's own files (a test parses each with both) are read with libyaml, where PyYAML has it
            vid, doc = _parse_document(self._text, self.source, libyaml=self.origin in BUILTIN_PLUGINS)
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


def _parse_document(text: str, source: str, *, libyaml: bool = False) -> tuple[str, Any]:
    """(declared id, parsed document) of a variant's YAML text (VariantError with a line when it is bad);
    `libyaml`: see `load_yaml`."""
    doc = load_yaml(text, source, libyaml=libyaml)
    node = Node(doc, (), source=source)
    node.mapping(what="a variant mapping")
    return node.get("id").string(), doc


_FILE_ATTR = "__dicecup_plugin_file__"  # set on a module `load_plugin_file` imported: its file's path
_FILE_REF = "file:"  # how `_plugin_ref` names such a module


def load_plugin_file(path: str | os.PathLike[str]) -> Any:
    """Import a plugin module from a `.py` file that is not installed (`Engine(plugin_files=...)`,
    `dicecup --plugin FILE.py`): PluginError when it is missing, does not compile or import, or
    implements no dicecup hook.

    The module is imported under a name made from the file's path, so the same file gives the
    same module again and two files of one name do not clash.
    """
    file = Path(path)
    if file.suffix != ".py":
        raise PluginError(f"plugin file {str(file)!r}: a plugin file is a Python module, its name must end in .py")
    if not file.is_file():
        raise PluginError(f"plugin file {str(file)!r} does not exist (or is not a file)")
    resolved = file.resolve()
    digest = hashlib.sha256(str(resolved).encode()).hexdigest()[:12]
    name = f"dicecup_plugin_file_{''.join(c if c.isalnum() else '_' for c in file.stem)}_{digest}"
    known = sys.modules.get(name)
    if known is not None:
        return known
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, resolved)
    if spec is None or spec.loader is None:  # pragma: no cover - a .py file always has a loader
        raise PluginError(f"plugin file {str(file)!r} cannot be imported")
    module = importlib.util.module_from_spec(spec)
    setattr(module, _FILE_ATTR, str(resolved))
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except SyntaxError as exc:
        del sys.modules[name]
        raise PluginError(f"plugin file {file}:{exc.lineno}: syntax error: {exc.msg}") from None
    except Exception as exc:
        del sys.modules[name]
        where = _traceback_line(exc, str(resolved))
        raise PluginError(f"plugin file {file}{where}: importing it failed: {type(exc).__name__}: {exc}") from None
    if not any(n.startswith(f"{hookspecs.PROJECT}_") and callable(getattr(module, n)) for n in dir(module)):
        del sys.modules[name]
        raise PluginError(
            f"plugin file {file} implements no dicecup hook: define functions such as dicecup_register_variants, "
            "each marked @dicecup.hookimpl"
        )
    return module


def _traceback_line(exc: BaseException, filename: str) -> str:
    """`:LINE` of the innermost frame of `exc` in `filename` ("" when none is)."""
    line = ""
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == filename:
            line = f":{tb.tb_lineno}"
        tb = tb.tb_next
    return line


class Engine:
    """A plugin manager, its pattern/scorer/rule/bot registries and its variants.

    `plugins` are plugin modules or objects registered after the built-in and installed ones;
    `plugin_files` are `.py` files of plugins that are not installed (`load_plugin_file`).
    """

    def __init__(
        self,
        plugins: Sequence[Any] = (),
        *,
        entry_points: bool | None = None,
        builtins: bool = True,
        plugin_files: Sequence[str | os.PathLike[str]] = (),
    ) -> None:
        if isinstance(plugins, (str, bytes)) or not isinstance(plugins, Sequence):
            raise PluginError(f"plugins must be a list of plugin modules or objects, got {type(plugins).__name__}")
        if isinstance(plugin_files, (str, bytes)) or not isinstance(plugin_files, Sequence):
            raise PluginError(f"plugin_files must be a list of paths, got {type(plugin_files).__name__}")
        plugins = [*plugins, *(load_plugin_file(p) for p in plugin_files)]
        self.pm = HookManager(hookspecs.PROJECT)
        self.pm.add_hookspecs(hookspecs)
        if builtins:
            for modname in BUILTIN_PLUGINS:
                self.pm.register(importlib.import_module(modname), name=modname)
        if entry_points is None:
            entry_points = not os.environ.get(AUTOLOAD_ENV)
        self._plugins = tuple(plugins)
        self._spec = (bool(builtins), bool(entry_points), tuple(_plugin_ref(p) for p in plugins))
        try:
            if entry_points:
                _load_installed(self.pm)
            for plugin in plugins:
                self.pm.register(plugin)
        except (pluggy.PluginValidationError, ValueError) as exc:  # bad hook arguments, registered twice
            raise PluginError(f"cannot register plugin {_plugin_name(getattr(exc, 'plugin', None))}: {exc}") from None
        except Exception as exc:  # a broken entry point: its import failed
            raise PluginError(f"cannot load the installed dicecup plugins: {type(exc).__name__}: {exc}") from None
        self._check_hooks()
        self.patterns: dict[str, Maker] = {}
        self.scorers: dict[str, Maker] = {}
        self.rules: dict[str, RuleDecl] = {}
        self.bots: dict[str, BotDecl] = {}
        self._entries: dict[str, VariantEntry] = {}
        self._compiled: dict[tuple[Any, ...], Variant] = {}
        self._hooks: dict[frozenset[str], RuleHooks] = {}
        self._identities: dict[int, list[str]] = {}
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
                f"this engine holds plugin {_plugin_name(unnamed[0])}, which cannot be imported by name, so it "
                "cannot be pickled; put the plugin in an importable module (or a file given as plugin_files)"
            )
        return (_engine_from_spec, (self._spec,))

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
                    import difflib

                    cut = len(hookspecs.PROJECT) + 1  # compare what follows the shared prefix
                    close = difflib.get_close_matches(attr[cut:], [k[cut:] for k in known], n=1)
                    hint = f"did you mean {attr[:cut]}{close[0]}?" if close else f"the hooks are: {', '.join(known)}"
                    raise PluginError(
                        f"plugin {_plugin_name(plugin)} implements {attr}, which is not a dicecup hook; {hint}"
                    )
                if not marked:
                    raise PluginError(
                        f"plugin {_plugin_name(plugin)} defines {attr} without @dicecup.hookimpl, so it would never be called"
                    )
        try:
            self.pm.check_pending()
        except pluggy.PluginValidationError as exc:  # pragma: no cover - the loop above catches these first
            raise PluginError(
                f"plugin {_plugin_name(exc.plugin)} implements a hook dicecup does not have: {exc}"
            ) from None

    def _each_plugin(self, hook: str) -> list[tuple[Any, Any]]:
        """(plugin, a hook caller for that plugin alone) for every plugin implementing `hook`, in registration order."""
        caller = getattr(self.pm.hook, hook)
        everyone = self.pm.get_plugins()
        plugins = list(dict.fromkeys(impl.plugin for impl in caller.get_hookimpls()))
        return [(p, self.pm.subset_hook_caller(hook, [o for o in everyone if o is not p])) for p in plugins]

    def _collect(self) -> None:
        for hook, table, what in (
            ("dicecup_register_patterns", self.patterns, "pattern"),
            ("dicecup_register_scorers", self.scorers, "scorer"),
        ):
            for plugin, call in self._each_plugin(hook):
                self._guard(plugin, hook, call, self._maker_registrar(table, what, plugin))
        for plugin, call in self._each_plugin("dicecup_register_rules"):
            self._guard(plugin, "dicecup_register_rules", call, self._rule_registrar(plugin))
        for plugin, call in self._each_plugin("dicecup_register_bots"):
            self._guard(plugin, "dicecup_register_bots", call, self._bot_registrar(plugin))
        for plugin, call in self._each_plugin("dicecup_register_variants"):
            origin = self.pm.get_name(plugin) or "plugin"
            self._guard(plugin, "dicecup_register_variants", call, self._variant_registrar(origin))

    def _guard(self, plugin: Any, hook: str, call: Callable[..., Any], register: Callable[..., None]) -> None:
        """Call one plugin's registration hook; its own failure becomes a PluginError naming it."""
        try:
            call(register=register)
        except DicecupError:
            raise
        except Exception as exc:
            raise PluginError(f"plugin {_plugin_name(plugin)} failed in {hook}: {type(exc).__name__}: {exc}") from None

    @staticmethod
    def _maker_registrar(table: dict[str, Maker], what: str, plugin: Any) -> Callable[..., None]:
        def register(
            name: str, factory: Callable[..., Any], text: Callable[[Mapping[str, Any]], str] | None = None
        ) -> None:
            if not isinstance(name, str) or not name:
                raise PluginError(f"a {what} name must be a non-empty string, got {name!r}")
            if not callable(factory):
                raise PluginError(f"{what} {name!r}: the factory must be callable")
            if name in table:
                raise PluginError(f"{what} {name!r} is registered twice")
            table[name] = Maker(factory, text, plugin)

        return register

    def _rule_registrar(self, plugin: Any) -> Callable[..., None]:
        def register(
            name: str,
            params: Mapping[str, Any] | None = None,
            doc: str = "",
            *,
            kind: str = "rule",
            check: Callable[[Variant, Mapping[str, Any]], None] | None = None,
            actions: Mapping[str, str] | None = None,
        ) -> None:
            if not isinstance(name, str) or not name:
                raise PluginError(f"a rule name must be a non-empty string, got {name!r}")
            if name in self.rules:
                raise PluginError(f"rule {name!r} is registered twice")
            if kind not in RULE_KINDS:
                raise PluginError(f"rule {name!r}: kind must be one of {', '.join(RULE_KINDS)}, not {kind!r}")
            self.rules[name] = RuleDecl(name, kind, dict(params or {}), doc, plugin, check, dict(actions or {}))

        return register

    def _bot_registrar(self, plugin: Any) -> Callable[..., None]:
        def register(
            name: str,
            factory: Callable[..., Any],
            doc: str = "",
            *,
            check: Callable[..., None] | None = None,
            argument: str | None = None,
            parse: Callable[[str], Any] | None = None,
            solitaire: bool = True,
        ) -> None:
            if not isinstance(name, str) or not name or ":" in name:
                raise PluginError(f"a bot name must be a non-empty string without ':', got {name!r}")
            if name in self.bots:
                raise PluginError(f"bot {name!r} is registered twice")
            if argument is not None and (not isinstance(argument, str) or not argument or ":" in argument):
                raise PluginError(f"bot {name!r}: its argument's label must be a word without ':', got {argument!r}")
            if parse is not None and argument is None:
                raise PluginError(f"bot {name!r}: parse is given but no argument")
            self.bots[name] = BotDecl(name, factory, doc, plugin, check, argument, parse, bool(solitaire))

        return register

    def _variant_registrar(self, origin: str) -> Callable[..., None]:
        def register(
            path: str | os.PathLike[str] | None = None,
            *,
            text: str | None = None,
            source: str | None = None,
            id: str | None = None,
        ) -> None:
            if path is not None:
                text = read_variant(path)
                source = source or str(path)
            if text is None:
                raise PluginError("register a variant with a path or with text=...")
            if id is not None and (not isinstance(id, str) or not id):
                raise PluginError(f"a variant id must be a non-empty string, got {id!r}")
            source = source or "<variant>"
            # with its id given, the document is parsed when first used (then checked to declare that id)
            entry = (
                self._parse_entry(text, source, origin)
                if id is None
                else VariantEntry(id, None, source, origin, text=text)
            )
            if entry.id in self._entries:
                raise PluginError(
                    f"variant id {entry.id!r} from {entry.source} is already registered by {self._entries[entry.id].source}"
                )
            self._entries[entry.id] = entry

        return register

    @staticmethod
    def _parse_entry(text: str, source: str, origin: str) -> VariantEntry:
        vid, doc = _parse_document(text, source)
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
        entry = self._parse_entry(text, str(path), "file")
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

        return compile_variant(
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
        )

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
                plugin_label(self.pm, plugin),
                modname + (":" + qual if qual else ""),
                version,
                digest.hexdigest()[:16],
            ]
        return got


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


def _plugin_ref(plugin: Any) -> str | None:
    """How an explicit plugin is found again by name (for pickling variants), or None."""
    if inspect.ismodule(plugin):
        origin = getattr(plugin, _FILE_ATTR, None)
        if origin is not None:  # a plugin file: imported again from its path
            return f"{_FILE_REF}{origin}"
        return plugin.__name__ if sys.modules.get(plugin.__name__) is plugin and plugin.__name__ != "__main__" else None
    module = getattr(type(plugin), "__module__", None) if not inspect.isclass(plugin) else plugin.__module__
    qual = getattr(plugin if inspect.isclass(plugin) else type(plugin), "__qualname__", "")
    if not module or module == "__main__" or "<" in qual:
        return None
    if not inspect.isclass(plugin) and (getattr(plugin, "__dict__", None) or not _builds_bare(type(plugin))):
        return None  # an object with settings cannot be made again from its class's name alone
    return f"{module}:{qual}" + ("" if inspect.isclass(plugin) else "()")


def _builds_bare(cls: type) -> bool:
    """Whether `cls()` needs no arguments."""
    try:
        params = inspect.signature(cls).parameters.values()
    except (TypeError, ValueError):
        return False
    return all(p.default is not p.empty or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params)


_ENGINES: dict[tuple[Any, ...], Engine] = {}


def _engine_from_spec(spec: tuple[Any, ...]) -> Engine:
    """An engine built like the one described by `spec` (shared within a process)."""
    got = _ENGINES.get(spec)
    if got is None:
        builtins, entry_points, refs = spec
        plugins: list[Any] = []
        for ref in refs:
            if ref.startswith(_FILE_REF):
                plugins.append(load_plugin_file(ref.removeprefix(_FILE_REF)))
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


def _plugin_name(plugin: Any) -> str:
    """A readable plugin name for errors: the module or class name, not an object repr."""
    if plugin is None:
        return "?"
    name = getattr(plugin, "__name__", None) or type(plugin).__name__
    return repr(name)
