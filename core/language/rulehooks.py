"""How the rule hooks are called for one variant: only the plugins it enables take part.

Calls follow pluggy's rules (an implementation may take any subset of a hook's
arguments, `wrapper=True` implementations work); plain hooks skip pluggy's
per-call machinery (`_Caller`) unless someone watches the calls
(`HookManager`: pluggy's tracing and `add_hookcall_monitoring`). Folds
(`adjust_score`) and per-plugin questions (which rule forbids a box, which plugin
answers an action) use one subset caller per plugin. A plugin that raises
anything but a `DicecupError` is reported as a `PluginError` naming it.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import pluggy

from ..errors import DicecupError, PluginError
from .card import Award
from .frozen import freeze_json
from .model import UNCHANGED, BoxFlag, BoxTotal, Progress, RuleAction, StateUpdate

__all__ = ["HookManager", "RuleHooks", "RULE_HOOKS"]

#: The hooks called during play (registration hooks are called by the engine itself).
RULE_HOOKS = (
    "legal_boxes",
    "adjust_score",
    "extra_points",
    "turn_events",
    "event_names",
    "end_bonuses",
    "instant_win",
    "settle",
    "state_flags",
    "state_totals",
    "progress",
    "explain",
    "actions",
    "apply_action",
    "may_reroll",
    "turn_status",
    "solitaire_notes",
)


def plugin_label(pm: pluggy.PluginManager, plugin: Any) -> str:
    """A readable plugin name for messages: its registered name, else its module or class name."""
    name = pm.get_name(plugin)
    if name and not name.isdigit():
        return name
    return getattr(plugin, "__name__", None) or type(plugin).__name__


class HookManager(pluggy.PluginManager):
    """pluggy's plugin manager, counting who watches hook calls (`add_hookcall_monitoring`, which pluggy's
    `enable_tracing` uses too): while anyone does, every rule hook call goes through pluggy, so they see it."""

    watchers = 0

    def add_hookcall_monitoring(self, before: Any, after: Any) -> Callable[[], None]:
        undo = super().add_hookcall_monitoring(before, after)
        self.watchers += 1
        done = False

        def stop() -> None:
            nonlocal done
            undo()
            if not done:
                done = True
                self.watchers -= 1

        return stop


class _Caller:
    """A pluggy hook caller whose implementations are resolved once (the plugins are all registered when a
    variant's hooks are made) and called as pluggy's own loop calls them: in its order, each with the
    arguments it names, the results that are not None in a list. Without pluggy's per-call argument checks
    and copies: the rules model asks thousands of cards. A hook with wrappers or `firstresult` goes through
    pluggy, and so does every call while the manager's calls are watched (`HookManager`)."""

    __slots__ = ("caller", "impls", "pm")

    def __init__(self, caller: Any, pm: pluggy.PluginManager) -> None:
        self.caller = caller
        self.pm = pm
        impls = caller.get_hookimpls()
        first = caller.spec is not None and caller.spec.opts.get("firstresult", False)
        plain = not first and not any(i.hookwrapper or i.wrapper for i in impls)
        # each implementation with the names of its arguments, and where it takes two or more, a getter of them
        self.impls = (
            [
                (i.function, names, operator.itemgetter(*names) if len(names) > 1 else None)
                for i in reversed(impls)
                for names in [tuple(i.argnames)]
            ]
            if plain
            else None
        )

    def get_hookimpls(self) -> list[Any]:
        return self.caller.get_hookimpls()

    def __call__(self, **kwargs: Any) -> Any:
        return self.call(kwargs)

    def call(self, kwargs: dict[str, Any]) -> Any:
        """`self(**kwargs)`, the arguments as they came (the rules model asks thousands of cards)."""
        if self.impls is None or getattr(self.pm, "watchers", 1) != 0:
            return self.caller(**kwargs)
        out = []
        for fn, names, get in self.impls:
            if get is not None:
                res = fn(*get(kwargs))
            else:  # (most rule hooks take one argument, the context)
                res = fn(kwargs[names[0]]) if names else fn()
            if res is not None:
                out.append(res)
        return out


class RuleHooks:
    """The rule hooks as one variant sees them: only the plugins it enables take part."""

    def __init__(
        self,
        pm: pluggy.PluginManager,
        excluded: Iterable[Any],
        rule_names: Mapping[int, tuple[str, ...]] | None = None,
        owners: Mapping[str, Any] | None = None,
    ) -> None:
        self._pm = pm
        self._excluded = list(excluded)
        self._rule_names = dict(rule_names or {})  # id(plugin) -> the enabled rules it provides
        self._owners = dict(owners or {})  # enabled rule name -> the plugin providing it
        self._callers = {n: _Caller(pm.subset_hook_caller(f"dicecup_{n}", self._excluded), pm) for n in RULE_HOOKS}
        self._single: dict[str, list[tuple[Any, Any]]] = {}

    # ------------------------------------------------------------------ calling

    def _per_plugin(self, hook: str) -> list[tuple[Any, Any]]:
        """(plugin, caller of that plugin alone) for every plugin implementing `hook`, in pluggy's call order."""
        got = self._single.get(hook)
        if got is None:
            impls = list(reversed(self._callers[hook].get_hookimpls()))  # pluggy calls the last one first
            plugins = list(dict.fromkeys(impl.plugin for impl in impls))
            everyone = self._pm.get_plugins()
            got = []
            for plugin in plugins:
                others = [p for p in everyone if p is not plugin]
                got.append((plugin, _Caller(self._pm.subset_hook_caller(f"dicecup_{hook}", others), self._pm)))
            self._single[hook] = got
        return got

    def _guard(self, hook: str, plugin: Any, caller: Callable[..., Any], **kwargs: Any) -> Any:
        """Call `caller(**kwargs)`; a plugin's own failure becomes a PluginError that names it and the hook."""
        try:
            return caller(**kwargs)
        except DicecupError:
            raise
        except Exception as exc:
            raise self._failed(hook, plugin, exc) from exc

    def _failed(self, hook: str, plugin: Any, exc: Exception) -> PluginError:
        """The PluginError of a plugin's own failure in `hook`, naming it and the hook."""
        who = plugin_label(self._pm, plugin) if plugin is not None else "a rule plugin"
        return PluginError(f"{who} failed in dicecup_{hook}: {type(exc).__name__}: {exc}")

    def _all(self, hook: str, **kwargs: Any) -> list[Any]:
        try:
            return self._callers[hook].call(kwargs)
        except DicecupError:
            raise
        except Exception:
            # Hooks are pure, so asking each plugin alone again finds the one that failed.
            for plugin, caller in self._per_plugin(hook):
                self._guard(hook, plugin, caller, **kwargs)
            raise

    def implements(self, hook: str) -> bool:
        """Whether any plugin taking part implements `dicecup_<hook>`."""
        return bool(self._callers[hook].get_hookimpls())

    # ------------------------------------------------------------------ scoring

    def adjust_score(self, ctx: Any, score: int) -> int:
        for plugin, caller in self._single.get("adjust_score") or self._per_plugin("adjust_score"):
            try:  # (`_guard` written out: the solver asks a score on many cards)
                results = caller.call({"ctx": ctx, "score": score})
            except DicecupError:
                raise
            except Exception as exc:
                raise self._failed("adjust_score", plugin, exc) from exc
            for new in results:
                if type(new) is int:  # (the label is worked out only for a result to refuse)
                    score = new
                elif new is not None:
                    score = _whole(new, plugin_label(self._pm, plugin), "adjust_score")
        return score

    def extra_points(self, ctx: Any) -> tuple[Award, ...]:
        return _awards(self._all("extra_points", ctx=ctx), "extra_points")

    def turn_events(self, ctx: Any) -> dict[str, int]:
        """Every enabled plugin's events of this scoring, summed per id; a bad result is a PluginError naming it."""
        out: dict[str, int] = {}
        for plugin, caller in self._per_plugin("turn_events"):
            for res in self._guard("turn_events", plugin, caller, ctx=ctx):
                if res is None:
                    continue
                who = plugin_label(self._pm, plugin)
                if not isinstance(res, Mapping):
                    raise PluginError(
                        f"{who}: dicecup_turn_events returned {res!r}, not a mapping of event id to count"
                    )
                for key, value in res.items():
                    if not isinstance(key, str) or not key:
                        raise PluginError(f"{who}: dicecup_turn_events gave event id {key!r}; ids are non-empty text")
                    if isinstance(value, bool):
                        raise PluginError(f"{who}: dicecup_turn_events returned {value!r}, not a whole number")
                    count = _whole(value, who, "turn_events")
                    if count < 0:
                        raise PluginError(f"{who}: dicecup_turn_events counted {key!r} {count} times; counts are >= 0")
                    if count:
                        out[key] = out.get(key, 0) + count
        return out

    def event_names(self, variant: Any) -> dict[str, str]:
        """The event ids the enabled plugins declare, with their names (the first name given for an id)."""
        out: dict[str, str] = {}
        for plugin, caller in self._per_plugin("event_names"):
            for res in self._guard("event_names", plugin, caller, variant=variant):
                if res is None:
                    continue
                if not isinstance(res, Mapping) or not all(isinstance(k, str) and k for k in res):
                    raise PluginError(
                        f"{plugin_label(self._pm, plugin)}: dicecup_event_names must return a mapping of "
                        f"event id (text) to name, got {res!r}"
                    )
                for key, name in res.items():
                    out.setdefault(key, str(name) if name else key)
        return out

    def end_bonuses(self, variant: Any, card: Any) -> tuple[Award, ...]:
        return _awards(self._all("end_bonuses", variant=variant, card=card), "end_bonuses")

    # ------------------------------------------------------------------ legality

    def allowed_boxes(self, ctx: Any) -> frozenset[str] | None:
        """The boxes every legality rule allows (None: no rule restricts), without looking at which are open."""
        allowed: set[str] | None = None
        for res in self._all("legal_boxes", ctx=ctx):
            if res is not None:
                allowed = set(res) if allowed is None else allowed & set(res)
        return None if allowed is None else frozenset(allowed)

    def legal_boxes(self, ctx: Any) -> tuple[str, ...]:
        allowed = self.allowed_boxes(ctx)
        return tuple(b for b in ctx.open_boxes if allowed is None or b in allowed)

    def blocking_rules(self, ctx: Any, box: str) -> tuple[str, ...]:
        """The rules (or plugin names) whose `dicecup_legal_boxes` leaves `box` out: why it is illegal."""
        out: list[str] = []
        for plugin, caller in self._per_plugin("legal_boxes"):
            for res in self._guard("legal_boxes", plugin, caller, ctx=ctx):
                if res is not None and box not in res:
                    out.extend(self._rule_names.get(id(plugin)) or (plugin_label(self._pm, plugin),))
        return tuple(dict.fromkeys(out))

    def explain(self, ctx: Any, box: str) -> tuple[str, ...]:
        return tuple(str(t) for t in self._all("explain", ctx=ctx, box=box) if t)

    def may_reroll(self, ctx: Any) -> bool:
        return all(res is not False for res in self._all("may_reroll", ctx=ctx))

    # ------------------------------------------------------------------ game

    def instant_win(self, ctx: Any, players: int) -> Any:
        return self._all("instant_win", ctx=ctx, players=players)

    def settle(self, variant: Any, totals: Mapping[str, int]) -> Any:
        return self._all("settle", variant=variant, totals=totals)

    def actions(self, ctx: Any) -> tuple[RuleAction, ...]:
        """The actions every enabled plugin offers, checked to name a rule that plugin provides."""
        out: list[RuleAction] = []
        for plugin, caller in self._per_plugin("actions"):
            mine = self._rule_names.get(id(plugin), ())
            for res in self._guard("actions", plugin, caller, ctx=ctx):
                for action in res or ():
                    if not isinstance(action, RuleAction) or action.rule not in mine:
                        raise PluginError(
                            f"{plugin_label(self._pm, plugin)} offered {action!r}: an action must be a "
                            f"RuleAction of one of its enabled rules ({', '.join(mine) or 'none'})"
                        )
                    try:
                        arg = freeze_json(action.arg, f"the argument of action {action.name!r}")
                    except ValueError as exc:
                        raise PluginError(f"{plugin_label(self._pm, plugin)}: {exc}") from None
                    out.append(RuleAction(action.rule, str(action.name), arg))
        return tuple(out)

    def apply_action(self, ctx: Any, action: RuleAction) -> StateUpdate:
        """Ask the plugin that provides `action.rule` what the action changes."""
        plugin = self._owners.get(action.rule)
        for owner, caller in self._per_plugin("apply_action"):
            if owner is plugin:
                results = self._guard("apply_action", owner, caller, ctx=ctx, action=action)
                update = next((r for r in results if r is not None), None)
                if update is None:
                    return StateUpdate()
                if not isinstance(update, StateUpdate):
                    raise PluginError(
                        f"{plugin_label(self._pm, owner)}: dicecup_apply_action must return a StateUpdate"
                    )
                try:
                    return StateUpdate(
                        UNCHANGED if update.turn is UNCHANGED else freeze_json(update.turn, "the turn state"),
                        UNCHANGED if update.player is UNCHANGED else freeze_json(update.player, "the player state"),
                    )
                except ValueError as exc:
                    raise PluginError(f"{plugin_label(self._pm, owner)}: {exc}") from None
        raise PluginError(f"no plugin applies actions of rule {action.rule!r}")

    # ------------------------------------------------------------------ what the solver and the views need

    def state_flags(self, variant: Any) -> tuple[BoxFlag, ...]:
        out: list[BoxFlag] = []
        for res in self._all("state_flags", variant=variant):
            for flag in res or ():
                if flag not in out:
                    out.append(flag)
        return tuple(out)

    def state_totals(self, variant: Any) -> tuple[BoxTotal, ...]:
        out: list[BoxTotal] = []
        for res in self._all("state_totals", variant=variant):
            for group in res or ():
                if group not in out:
                    out.append(group)
        return tuple(out)

    def progress(self, variant: Any, card: Any) -> tuple[Progress, ...]:
        return tuple(p for res in self._all("progress", variant=variant, card=card) if res for p in res)

    def turn_status(self, ctx: Any) -> tuple[str, ...]:
        return tuple(str(t) for res in self._all("turn_status", ctx=ctx) if res for t in res)

    def solitaire_notes(self, variant: Any) -> tuple[str, ...]:
        return tuple(str(t) for res in self._all("solitaire_notes", variant=variant) if res for t in res)


def _whole(value: Any, who: str, hook: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        try:
            import numbers

            if isinstance(value, numbers.Integral):
                return int(value)
        except Exception:  # pragma: no cover
            pass
        raise PluginError(f"{who}: dicecup_{hook} returned {value!r}, not a whole number")
    return value


def _awards(found: list[Any], hook: str) -> tuple[Award, ...]:
    """The awards of every plugin's result (None or empty: none), each checked to be an Award."""
    out = []
    for res in found:
        if res:
            for a in res:
                out.append(_award(a, hook))
    return tuple(out)


def _award(a: Any, hook: str) -> Award:
    if not isinstance(a, Award) or isinstance(a.points, bool) or not isinstance(a.points, int):
        raise PluginError(f"dicecup_{hook} returned {a!r}; it must return Award objects with whole-number points")
    return a
