"""Where plugin code runs, one way to call it: a failure or a value against the contract becomes one
PluginError naming the plugin, the hook (or registered function) and what went wrong.

A plugin is any Python code, so it may raise anything (SystemExit included), raise an exception whose
own `str()` fails, or return a value of any kind. The engine calls plugin code only through these
helpers (`rulehooks` for the rule hooks, `registry` for registration and the functions it registers),
so none of that reaches the engine's own code: a `DicecupError` a plugin raises on purpose (a refusal,
IllegalAction) passes as it is; KeyboardInterrupt still interrupts.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any

import pluggy

from ..errors import ContractError, DicecupError, PluginError, described, one_line, shown
from .contracts import Broken, Contract, Maybe, Whole

__all__ = [
    "FILE_ATTR",
    "plugin_label",
    "registered_name",
    "plugin_failure",
    "passed_on",
    "checked",
    "call_plugin",
    "guarded_function",
    "CheckedBot",
]

FILE_ATTR = "__dicecup_plugin_file__"  # set on a module imported from a plugin file: the file's path


def registered_name(plugin: Any, pm: pluggy.PluginManager | None = None) -> str:
    """A plugin's name: the one it is registered under, else its module's or its class's name."""
    name = pm.get_name(plugin) if pm is not None else None
    if name and not name.isdigit():  # (pluggy names an unnamed object by its id)
        return name
    own = getattr(plugin, "__name__", None)
    return own if isinstance(own, str) else type(plugin).__name__


def plugin_label(plugin: Any, pm: pluggy.PluginManager | None = None) -> str:
    """How messages name a plugin: `plugin file PATH` for a plugin file, else `plugin 'NAME'`."""
    if plugin is None:
        return "a plugin"
    path = getattr(plugin, FILE_ATTR, None) if isinstance(getattr(plugin, "__dict__", None), dict) else None
    if isinstance(path, str):
        return f"plugin file {one_line(path)}"
    return f"plugin {one_line(repr(registered_name(plugin, pm)))}"


def plugin_failure(label: str, hook: str, exc: BaseException) -> PluginError:
    """The PluginError of an exception raised by plugin code (`hook`: the hook or the registered function)."""
    return PluginError(f"{label} failed in {hook}: {described(exc)}", plugin=label, hook=hook)


def passed_on(exc: DicecupError, label: str, hook: str) -> DicecupError:
    """A DicecupError a plugin raised, to pass on as it is, unless its message cannot be written (then a
    PluginError that says so)."""
    try:
        str(exc)
    except KeyboardInterrupt:
        raise
    except BaseException:
        return plugin_failure(label, hook, exc)
    return exc


def checked(
    contract: Contract, value: Any, args: Mapping[str, Any], label: str, hook: str, rules: tuple[str, ...] = ()
) -> Any:
    """`value` as `contract` keeps it, or one ContractError naming the plugin, the hook and the value."""
    try:
        return contract.check(value, args, rules)
    except Broken as exc:
        why, path = exc.why, exc.path
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # the value's own code failed while it was read (an __iter__ that raises)
        why, path = f"{shown(value, 80)}, which failed when read: {described(exc)}", ()
    said = f"{shown(value, 80)}, whose {' → '.join(path)} is {why}" if path else why
    raise ContractError(f"{label}: {hook} returned {said}; it must return {contract.text}", plugin=label, hook=hook)


def call_plugin(fn: Callable[..., Any], label: str, hook: str, *args: Any, **kwargs: Any) -> Any:
    """`fn(*args, **kwargs)`, plugin code: any exception but a DicecupError (or KeyboardInterrupt) becomes a
    PluginError naming the plugin and `hook`."""
    try:
        return fn(*args, **kwargs)
    except DicecupError as exc:
        raise passed_on(exc, label, hook) from exc
    except KeyboardInterrupt:
        raise
    except BaseException as exc:
        raise plugin_failure(label, hook, exc) from exc


def guarded_function(
    fn: Callable[..., Any],
    label: str,
    hook: str,
    contract: Contract,
    arg_names: tuple[str, ...],
    *,
    passes: bool = False,
) -> Callable[..., Any]:
    """`fn` as the engine calls it: its result checked against `contract` (the call's arguments named by
    `arg_names` for the check), its failures PluginErrors naming the plugin.

    With `passes`, an ordinary exception passes as it is (a factory's or a check's ValueError is what says
    that a parameter is wrong, and the compiler points at it); only one whose message cannot be written,
    or a BaseException such as SystemExit, becomes a PluginError. Keeps `fn`'s signature (`__wrapped__`).
    """
    fast_int = isinstance(contract, Whole)  # (a scorer: its int checked here, on the hot path)
    maybe = isinstance(contract, Maybe)
    check = contract.check
    low, high = (contract.low, contract.high) if isinstance(contract, Whole) else (0, 0)

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            got = fn(*args, **kwargs)
        except DicecupError as exc:
            raise passed_on(exc, label, hook) from exc
        except KeyboardInterrupt:
            raise
        except Exception as exc:
            if not passes:
                raise plugin_failure(label, hook, exc) from exc
            try:
                str(exc)
            except KeyboardInterrupt:
                raise
            except BaseException:
                raise plugin_failure(label, hook, exc) from exc
            raise
        except BaseException as exc:
            raise plugin_failure(label, hook, exc) from exc
        if fast_int and type(got) is int and low <= got <= high:
            return got
        if maybe and got is None:
            return None
        named = dict(zip(arg_names, args, strict=False))
        try:
            return check(got, named)
        except KeyboardInterrupt:
            raise
        except BaseException:  # (the message, with the plugin's name, is made only for a value to refuse)
            return checked(contract, got, named, label, hook)

    return call


class CheckedBot:
    """A plugin's bot as the engine hands it out: `choose` checked to return one of the state's legal
    actions, its failures PluginErrors naming the plugin and the bot; anything else is the bot's own."""

    __slots__ = ("bot", "_label", "_hook", "_contract")

    def __init__(self, bot: Any, label: str, hook: str, contract: Contract) -> None:
        self.bot = bot
        self._label, self._hook, self._contract = label, hook, contract

    def choose(self, state: Any) -> Any:
        action = call_plugin(self.bot.choose, self._label, self._hook, state)
        return checked(self._contract, action, {"state": state}, self._label, self._hook)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.bot, name)

    def __repr__(self) -> str:
        return f"CheckedBot({shown(self.bot)})"
