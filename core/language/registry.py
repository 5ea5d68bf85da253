"""The registration hooks: what plugins add to an engine (patterns, scorers, rules, bots), each
registration checked, and each function registered wrapped so that the engine only ever calls it
through `guard`, its result checked against the contract `hookspecs` writes for it.

A registered function's failure or bad result is one PluginError naming the plugin and the function
("pattern 'face'", "the factory of bot 'mybot'"). A pattern or scorer factory, and a rule's check, may
raise an ordinary exception (a `ParameterError`) to say that a parameter is wrong: that passes to the
compiler, which points at the parameter in the variant file.
"""

from __future__ import annotations

import difflib
import functools
from collections.abc import Callable, Mapping
from typing import Any

import pluggy
from attrs import frozen

from ..errors import PluginError, shown
from . import hookspecs
from .compiler import Maker
from .contracts import contract_of
from .guard import CheckedBot, call_plugin, checked, guarded_function, plugin_label
from .model import Variant

__all__ = [
    "BUILTIN_PLUGINS",
    "RULE_KINDS",
    "RuleDecl",
    "BotDecl",
    "check_hook_names",
    "each_plugin",
    "run_registration",
    "maker_registrar",
    "rule_registrar",
    "bot_registrar",
]

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
    The three are the plugin's own, wrapped (`guard`): a failure or a bad result is a PluginError naming it.
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


def _registered(hook: str) -> Mapping[str, Any]:
    """The contracts of the functions registration hook `hook` registers (`returns(..., name=...)`)."""
    return contract_of(getattr(hookspecs, hook)).registered


# ---------------------------------------------------------------------------- running the registration hooks


def check_hook_names(pm: pluggy.PluginManager) -> None:
    """Reject a `dicecup_*` function that is no hook (a typo) or lacks `@hookimpl` (never called)."""
    prefix = f"{hookspecs.PROJECT}_"
    known = sorted(n for n in vars(hookspecs) if n.startswith(prefix))
    for plugin in pm.get_plugins():
        for attr in dir(plugin):
            if not attr.startswith(prefix) or not callable(getattr(plugin, attr, None)):
                continue
            if attr not in known:
                close = difflib.get_close_matches(attr[len(prefix) :], [k[len(prefix) :] for k in known], n=1)
                hint = f"did you mean {prefix}{close[0]}?" if close else f"the hooks are: {', '.join(known)}"
                raise PluginError(f"{plugin_label(plugin, pm)} implements {attr}, which is not a dicecup hook; {hint}")
            if pm.parse_hookimpl_opts(plugin, attr) is None:
                raise PluginError(
                    f"{plugin_label(plugin, pm)} defines {attr} without @dicecup.hookimpl, so it would never be called"
                )
    try:
        pm.check_pending()
    except pluggy.PluginValidationError as exc:  # pragma: no cover - the loop above catches these first
        raise PluginError(f"{plugin_label(exc.plugin, pm)} implements a hook dicecup does not have: {exc}") from None


def each_plugin(pm: pluggy.PluginManager, hook: str) -> list[tuple[Any, Any]]:
    """(plugin, a hook caller for that plugin alone) for every plugin implementing `hook`, in registration order."""
    caller = getattr(pm.hook, hook)
    everyone = pm.get_plugins()
    plugins = list(dict.fromkeys(impl.plugin for impl in caller.get_hookimpls()))
    return [(p, pm.subset_hook_caller(hook, [o for o in everyone if o is not p])) for p in plugins]


def run_registration(
    pm: pluggy.PluginManager, hook: str, plugin: Any, call: Any, register: Callable[..., None]
) -> None:
    """Call one plugin's registration hook `hook` with `register`: its failure, or a result (the hook returns
    nothing), is a PluginError naming it."""
    label = plugin_label(plugin, pm)
    result = contract_of(getattr(hookspecs, hook)).result
    for value in call_plugin(call, label, hook, register=register):
        checked(result, value, {}, label, hook)


# ---------------------------------------------------------------------------- what registration adds


def _callable_or_none(value: Any, label: str, what: str) -> None:
    if value is not None and not callable(value):
        raise PluginError(f"{label}: {what} must be a function or None, got {shown(value)}")


def _text(value: Any, label: str, what: str) -> str:
    if not isinstance(value, str):
        raise PluginError(f"{label}: {what} must be text, got {shown(value)}")
    return value


def maker_registrar(table: dict[str, Maker], what: str, plugin: Any, label: str, builtin: bool) -> Callable[..., None]:
    """`register(name, factory, text=None)` of patterns (`what` "pattern") or scorers ("scorer"). The
    functions of a plugin that is not built in are wrapped (`guarded_function`); the built-in plugins'
    own, called for every roll of every box, are checked against their contracts by the test suite."""
    contracts = _registered(f"dicecup_register_{what}s")
    arg_names = ("roll",) if what == "pattern" else ("combination", "roll")

    def register(
        name: str, factory: Callable[..., Any], text: Callable[[Mapping[str, Any]], str] | None = None
    ) -> None:
        if not isinstance(name, str) or not name:
            raise PluginError(f"{label}: a {what} name must be a non-empty string, got {shown(name)}")
        if not callable(factory):
            raise PluginError(f"{label}: {what} {name!r}: the factory must be callable, got {shown(factory)}")
        _callable_or_none(text, label, f"{what} {name!r}: text")
        if name in table:
            raise PluginError(f"{label}: {what} {name!r} is registered twice")
        if builtin:
            table[name] = Maker(factory, text, plugin)
            return
        made = guarded_function(
            factory, label, f"the factory of {what} {name!r}", contracts[f"{what} factory"], (), passes=True
        )

        @functools.wraps(factory)  # (its signature: the compiler reads the parameters it takes)
        def compile_one(*args: Any, **kwargs: Any) -> Any:
            fn = made(*args, **kwargs)
            return guarded_function(fn, label, f"{what} {name!r}", contracts[what], arg_names)

        words = (
            None
            if text is None
            else guarded_function(text, label, f"the text of {what} {name!r}", contracts[f"{what} text"], ())
        )
        table[name] = Maker(compile_one, words, plugin)

    return register


def rule_registrar(rules: dict[str, RuleDecl], plugin: Any, label: str) -> Callable[..., None]:
    """`register(name, params, doc, kind=, check=, actions=)` of rules."""
    check_contract = _registered("dicecup_register_rules")["rule check"]

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
            raise PluginError(f"{label}: a rule name must be a non-empty string, got {shown(name)}")
        if name in rules:
            raise PluginError(f"{label}: rule {name!r} is registered twice")
        if kind not in RULE_KINDS:
            raise PluginError(f"{label}: rule {name!r}: kind must be one of {', '.join(RULE_KINDS)}, not {shown(kind)}")
        if params is not None and (not isinstance(params, Mapping) or not all(isinstance(k, str) for k in params)):
            raise PluginError(
                f"{label}: rule {name!r}: params must map parameter names to defaults, got {shown(params)}"
            )
        if actions is not None and (
            not isinstance(actions, Mapping)
            or not all(isinstance(k, str) and isinstance(v, str) for k, v in actions.items())
        ):
            raise PluginError(f"{label}: rule {name!r}: actions must map verbs to help texts, got {shown(actions)}")
        _callable_or_none(check, label, f"rule {name!r}: check")
        guarded = (
            None
            if check is None
            else guarded_function(check, label, f"the check of rule {name!r}", check_contract, (), passes=True)
        )
        doc = _text(doc, label, f"rule {name!r}: doc")
        rules[name] = RuleDecl(name, kind, dict(params or {}), doc, plugin, guarded, dict(actions or {}))

    return register


def bot_registrar(bots: dict[str, BotDecl], plugin: Any, label: str, builtin: bool) -> Callable[..., None]:
    """`register(name, factory, doc, check=, argument=, parse=, solitaire=)` of bots. A bot of a plugin that
    is not built in is handed out as a `CheckedBot` (its moves checked to be legal)."""
    contracts = _registered("dicecup_register_bots")

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
            raise PluginError(f"{label}: a bot name must be a non-empty string without ':', got {shown(name)}")
        if name in bots:
            raise PluginError(f"{label}: bot {name!r} is registered twice")
        if not callable(factory):
            raise PluginError(f"{label}: bot {name!r}: the factory must be callable, got {shown(factory)}")
        if argument is not None and (not isinstance(argument, str) or not argument or ":" in argument):
            raise PluginError(
                f"{label}: bot {name!r}: its argument's label must be a word without ':', got {shown(argument)}"
            )
        if parse is not None and argument is None:
            raise PluginError(f"{label}: bot {name!r}: parse is given but no argument")
        _callable_or_none(check, label, f"bot {name!r}: check")
        _callable_or_none(parse, label, f"bot {name!r}: parse")
        doc = _text(doc, label, f"bot {name!r}: doc")
        made = guarded_function(factory, label, f"the factory of bot {name!r}", contracts["bot factory"], ())
        choose = f"the choose of bot {name!r}"

        @functools.wraps(factory)
        def make(*args: Any) -> Any:
            bot = made(*args)
            return bot if builtin else CheckedBot(bot, label, choose, contracts["bot choose"])

        bots[name] = BotDecl(
            name,
            make,
            doc,
            plugin,
            None
            if check is None
            else guarded_function(check, label, f"the check of bot {name!r}", contracts["bot check"], ()),
            argument,
            None
            if parse is None
            else guarded_function(parse, label, f"the parse of bot {name!r}", contracts["bot parse"], ()),
            bool(solitaire),
        )

    return register
