"""How the rule hooks are called for one variant: only the plugins it enables take part.

Calls follow pluggy's rules (an implementation may take any subset of a hook's arguments; `wrapper=True`
works), but plain hooks skip pluggy's per-call machinery unless someone watches the calls (`HookManager`).
Every rule hook's answer comes back from its plugin here, so here it is checked against the hook's contract:
a value of the wrong kind is one `ContractError`, and an exception a plugin raises (anything but a
`DicecupError`, SystemExit included) one `PluginError`, each naming the plugin and the hook.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable, Mapping
from types import MappingProxyType
from typing import Any

import pluggy

from ..errors import ContractError, DicecupError, PluginError, shown
from . import hookspecs
from .card import Award, Card
from .contexts import Situation
from .contracts import NUMBER_LIMIT, Contract, contract_of
from .dice import Roll
from .frozen import FrozenMap
from .guard import checked, passed_on, plugin_failure, plugin_label
from .hookcontexts import ScoreContext, TurnContext, score_context, turn_context
from .model import BoxFlag, BoxTotal, Progress, RuleAction, StateUpdate, Variant
from .parts import Box
from .tracing import is_tracing, tracing

__all__ = ["HookManager", "RuleHooks", "RULE_HOOKS", "CONTRACTS", "check_answers", "no_move_error", "plugin_label"]

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

#: What each rule hook must return, as `hookspecs` declares it (a hook without a contract fails here, at import).
CONTRACTS: Mapping[str, Contract] = MappingProxyType(
    {h: contract_of(getattr(hookspecs, f"dicecup_{h}")).result for h in RULE_HOOKS}
)

_LOW, _HIGH = -NUMBER_LIMIT, NUMBER_LIMIT  # a score's bound (`contracts.POINTS`), checked inline on the hot path


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
    arguments it names, the answers that are not None kept (the first alone for a `firstresult` hook), each
    with the plugin that gave it. Without pluggy's per-call argument checks and copies: the rules model asks
    thousands of cards. A hook with wrappers goes through pluggy, and so does every call while the manager's
    calls are watched (`HookManager`); then who answered what is not known (None)."""

    __slots__ = ("caller", "impls", "pm", "first", "hook")

    def __init__(self, caller: Any, pm: pluggy.PluginManager) -> None:
        self.caller = caller
        self.pm = pm
        self.hook = caller.name
        impls = caller.get_hookimpls()
        self.first = bool(caller.spec is not None and caller.spec.opts.get("firstresult", False))
        plain = not any(i.hookwrapper or i.wrapper for i in impls)
        # each implementation with its plugin, the names of its arguments and, where it takes two or more, a getter
        self.impls = (
            [
                (i.plugin, i.function, names, operator.itemgetter(*names) if len(names) > 1 else None)
                for i in reversed(impls)
                for names in [tuple(i.argnames)]
            ]
            if plain
            else None
        )

    def get_hookimpls(self) -> list[Any]:
        return self.caller.get_hookimpls()

    def answers(self, kwargs: dict[str, Any]) -> list[tuple[Any, Any]]:
        """(plugin, answer) of every implementation that answered (not None), in pluggy's order. A plugin's
        exception is a PluginError naming it, except through pluggy (then the exception as it came)."""
        if self.impls is None or getattr(self.pm, "watchers", 1) != 0:
            got = self.caller(**kwargs)
            if self.first:
                return [] if got is None else [(None, got)]
            return [(None, res) for res in got]
        out = []
        for plugin, fn, names, get in self.impls:
            try:
                if get is not None:
                    res = fn(*get(kwargs))
                else:  # (most rule hooks take one argument, the context)
                    res = fn(kwargs[names[0]]) if names else fn()
            except DicecupError as exc:
                raise passed_on(exc, plugin_label(plugin, self.pm), self.hook) from exc
            except KeyboardInterrupt:
                raise
            except BaseException as exc:
                raise plugin_failure(plugin_label(plugin, self.pm), self.hook, exc) from exc
            if res is not None:
                out.append((plugin, res))
                if self.first:
                    break
        return out


class RuleHooks:
    """The rule hooks as one variant sees them: only the plugins it enables take part, and every answer is
    checked against its hook's contract before it is used."""

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

    # ------------------------------------------------------------------ what the hooks are told

    @staticmethod
    def score_context(
        box_id: str,
        variant: Variant,
        card: Card,
        box: Box,
        roll: Roll,
        first_roll: bool,
        combination: tuple[int, ...] | None,
        situation: Situation,
        score: int = 0,
        plain: bool = False,
    ) -> ScoreContext:
        """The ScoreContext of scoring box `box_id`; traced while the rules are learned, unless `plain`."""
        args = (variant, card, box, roll, first_roll, combination, score)
        return ScoreContext(*args, situation=situation) if plain else score_context(box_id, *args, situation=situation)

    @staticmethod
    def turn_context(
        variant: Variant, card: Card, roll: Roll | None, first_roll: bool, situation: Situation
    ) -> TurnContext:
        """The TurnContext of the acting player's turn; traced while the rules are learned."""
        return turn_context(variant, card, roll, first_roll, situation)

    # ------------------------------------------------------------------ calling and checking

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

    def _label(self, plugin: Any) -> str:
        return plugin_label(plugin, self._pm)

    def _raised(self, hook: str, kwargs: dict[str, Any], plugin: Any, exc: BaseException) -> PluginError:
        """The PluginError of an exception that came through pluggy, naming the plugin that raised it (`plugin`,
        or the one that raises when asked alone: hooks are pure)."""
        if plugin is None:
            plugin = self._who_raises(hook, kwargs)
        return plugin_failure(self._label(plugin), f"dicecup_{hook}", exc)

    def _who_raises(self, hook: str, kwargs: dict[str, Any]) -> Any:
        """The plugin that raises when asked `hook` alone (None when none does alone); a PluginError that
        names it already is raised as it is."""
        for plugin, alone in self._per_plugin(hook):
            try:
                alone.answers(kwargs)
            except PluginError:
                raise
            except DicecupError:
                continue
            except KeyboardInterrupt:
                raise
            except BaseException:
                return plugin
        return None

    def _answers(
        self, hook: str, kwargs: dict[str, Any], plugin: Any = None, caller: _Caller | None = None
    ) -> list[Any]:
        """Every answer to `hook` (of `plugin` alone, with its `caller`), each checked against the hook's
        contract and as the contract keeps it."""
        try:
            got = (caller or self._callers[hook]).answers(kwargs)
        except DicecupError:
            raise
        except KeyboardInterrupt:
            raise
        except BaseException as exc:
            raise self._raised(hook, kwargs, plugin, exc) from exc
        if not got:
            return []
        check = CONTRACTS[hook].check
        names = self._rule_names
        try:
            return [check(value, kwargs, names.get(id(plugin if who is None else who), ())) for who, value in got]
        except KeyboardInterrupt:
            raise
        except BaseException:  # (Broken, or the value's own code failed as it was read, SystemExit included)
            return self._refuse(hook, kwargs, got, plugin)

    def _refuse(self, hook: str, kwargs: dict[str, Any], got: list[tuple[Any, Any]], plugin: Any) -> list[Any]:
        """Raise the ContractError of the first answer in `got` that breaks `hook`'s contract, naming the plugin
        that gave it (found by asking each alone where the answers came through pluggy)."""
        contract = CONTRACTS[hook]
        out = []
        for who, value in got:
            who = plugin if who is None else who
            rules = self._rule_names.get(id(who), ())
            try:
                out.append(contract.check(value, kwargs, rules))
                continue
            except KeyboardInterrupt:
                raise
            except BaseException:
                if who is None:
                    who = self._who_breaks(hook, kwargs)
                    rules = self._rule_names.get(id(who), ())
            out.append(checked(contract, value, kwargs, self._label(who), f"dicecup_{hook}", rules))
        return out  # (pragma: no cover) the answers held when checked again: impure, but not against the contract

    def _who_breaks(self, hook: str, kwargs: dict[str, Any]) -> Any:
        """The plugin whose own answer breaks `hook`'s contract (asked alone), or None when none does alone
        (a hook wrapper changed the answer)."""
        contract = CONTRACTS[hook]
        for plugin, alone in self._per_plugin(hook):
            try:
                got = alone.answers(kwargs)
            except KeyboardInterrupt:
                raise
            except BaseException:
                continue
            for _, value in got:
                try:
                    contract.check(value, kwargs, self._rule_names.get(id(plugin), ()))
                except KeyboardInterrupt:
                    raise
                except BaseException:  # Broken, or the value's own code failed
                    return plugin
        return None

    def implements(self, hook: str) -> bool:
        """Whether any plugin taking part implements `dicecup_<hook>`."""
        return bool(self._callers[hook].get_hookimpls())

    # ------------------------------------------------------------------ scoring

    def adjust_score(self, ctx: Any, score: int) -> int:
        for plugin, caller in self._single.get("adjust_score") or self._per_plugin("adjust_score"):
            kwargs = {"ctx": ctx, "score": score}
            try:
                got = caller.answers(kwargs)
            except DicecupError:
                raise
            except KeyboardInterrupt:
                raise
            except BaseException as exc:
                raise self._raised("adjust_score", kwargs, plugin, exc) from exc
            for _, new in got:
                if type(new) is int and _LOW <= new <= _HIGH:  # (the contract's own test, first: the solver
                    score = new  # asks a score on many cards)
                else:
                    score = checked(CONTRACTS["adjust_score"], new, kwargs, self._label(plugin), "dicecup_adjust_score")
        return score

    def extra_points(self, ctx: Any) -> tuple[Award, ...]:
        return _joined(self._answers("extra_points", {"ctx": ctx}))

    def turn_events(self, ctx: Any) -> dict[str, int]:
        """Every enabled plugin's events of this scoring, summed per id."""
        out: dict[str, int] = {}
        for counts in self._answers("turn_events", {"ctx": ctx}):
            for key, count in counts.items():
                if count:
                    out[key] = out.get(key, 0) + count
        return out

    def event_names(self, variant: Any) -> dict[str, str]:
        """The event ids the enabled plugins declare, with their names (the first name given for an id)."""
        out: dict[str, str] = {}
        for names in self._answers("event_names", {"variant": variant}):
            for key, name in names.items():
                out.setdefault(key, name or key)
        return out

    def end_bonuses(self, variant: Any, card: Any) -> tuple[Award, ...]:
        return _joined(self._answers("end_bonuses", {"variant": variant, "card": card}))

    # ------------------------------------------------------------------ legality

    def allowed_boxes(self, ctx: Any) -> frozenset[str] | None:
        """The boxes every legality rule allows (None: no rule restricts), without looking at which are open.

        With no game around the card (the solver's and the simulator's tables ask so), rules that allow no box
        on an empty card after a reroll, whatever the game around it, leave every game stuck at its first turn:
        a ContractError naming them (`_check_an_action_is_left`), unless a rule offers an action there."""
        allowed = self._allowed(ctx)
        if allowed is not None and not allowed and ctx.situation is Situation.unknown():
            first = object.__getattribute__(ctx, "first_roll")  # (not a rule's read)
            if not _filled(ctx.card) and (not first or ctx.variant.rolls == 1):
                with tracing() as reads:  # (asked again: what the answer depends on)
                    self._allowed(ctx)
                if not reads.situation:
                    self._check_an_action_is_left(ctx, "after a reroll on an empty card, whatever the game")
        return allowed

    def _allowed(self, ctx: Any) -> frozenset[str] | None:
        allowed: frozenset[str] | None = None
        for ids in self._answers("legal_boxes", {"ctx": ctx}):
            allowed = ids if allowed is None else allowed & ids
        return allowed

    def legal_boxes(self, ctx: Any) -> tuple[str, ...]:
        """The open boxes the legality rules allow (a game with no legal move at all: `no_move`)."""
        allowed = self.allowed_boxes(ctx)
        if allowed is None:
            return tuple(ctx.open_boxes)
        return tuple(b for b in ctx.open_boxes if b in allowed)

    def _check_an_action_is_left(self, ctx: Any, where: str) -> None:
        if not self.actions(ctx):
            raise self.no_move(ctx, where)

    def no_move(self, ctx: Any, where: str) -> ContractError:
        """The ContractError of rules that leave the acting player no box to score (`where`: when), naming the
        legality rules that allow none of the open boxes: the game cannot go on."""
        opened = tuple(b for b in ctx.variant.box_ids if b not in _filled(ctx.card))
        blockers = [self._label(p) for p, _ in self._per_plugin("legal_boxes") if self._blocks(p, ctx, opened)]
        return ContractError(
            f"{', '.join(blockers) or 'the legality rules'}: dicecup_legal_boxes left no legal box to score "
            f"(open: {shown(opened, 120)}) with the roll {ctx.roll} {where}, and no action either, so the game "
            "cannot go on; a legality rule must leave a box to score once the rolls are used up",
            plugin=blockers[0] if blockers else None,
            hook="dicecup_legal_boxes",
        )

    def _blocks(self, plugin: Any, ctx: Any, opened: tuple[str, ...]) -> bool:
        """Whether `plugin`'s own legality answer allows none of the open boxes `opened`."""
        for ids in self._answers("legal_boxes", {"ctx": ctx}, plugin, self._alone("legal_boxes", plugin)):
            if not any(b in ids for b in opened):
                return True
        return False

    def _alone(self, hook: str, plugin: Any) -> _Caller:
        return next(caller for each, caller in self._per_plugin(hook) if each is plugin)

    def blocking_rules(self, ctx: Any, box: str) -> tuple[str, ...]:
        """The rules (or plugin names) whose `dicecup_legal_boxes` leaves `box` out: why it is illegal."""
        out: list[str] = []
        for plugin, caller in self._per_plugin("legal_boxes"):
            for ids in self._answers("legal_boxes", {"ctx": ctx}, plugin, caller):
                if box not in ids:
                    out.extend(self._rule_names.get(id(plugin)) or (plugin_label(plugin, self._pm),))
        return tuple(dict.fromkeys(out))

    def explain(self, ctx: Any, box: str) -> tuple[str, ...]:
        return tuple(t for t in self._answers("explain", {"ctx": ctx, "box": box}) if t)

    def may_reroll(self, ctx: Any) -> bool:
        return all(self._answers("may_reroll", {"ctx": ctx}))

    # ------------------------------------------------------------------ game

    def instant_win(self, ctx: Any, players: int) -> bool | str | None:
        """The first answer of the instant-win rules (True, False or a phrase), or None."""
        got = self._answers("instant_win", {"ctx": ctx, "players": players})
        return got[0] if got else None

    def settle(self, variant: Any, totals: Mapping[str, int]) -> Mapping[str, Any] | None:
        """The first settlement rule's payments, checked to name every player once and sum to zero, or None."""
        got = self._answers("settle", {"variant": variant, "totals": totals})
        return got[0] if got else None

    def actions(self, ctx: Any) -> tuple[RuleAction, ...]:
        """The actions every enabled plugin offers, checked to name a rule that plugin provides."""
        out: list[RuleAction] = []
        for plugin, caller in self._per_plugin("actions"):
            for offered in self._answers("actions", {"ctx": ctx}, plugin, caller):
                out.extend(offered)
        return tuple(out)

    def apply_action(self, ctx: Any, action: RuleAction) -> StateUpdate:
        """Ask the plugin that provides `action.rule` what the action changes."""
        plugin = self._owners.get(action.rule)
        for owner, caller in self._per_plugin("apply_action"):
            if owner is plugin:
                got = self._answers("apply_action", {"ctx": ctx, "action": action}, owner, caller)
                return got[0] if got else StateUpdate()
        raise PluginError(f"no plugin applies actions of rule {action.rule!r}")

    # ------------------------------------------------------------------ what the solver and the views need

    def state_flags(self, variant: Any) -> tuple[BoxFlag, ...]:
        return tuple(dict.fromkeys(_joined(self._answers("state_flags", {"variant": variant}))))

    def state_totals(self, variant: Any) -> tuple[BoxTotal, ...]:
        return tuple(dict.fromkeys(_joined(self._answers("state_totals", {"variant": variant}))))

    def progress(self, variant: Any, card: Any) -> tuple[Progress, ...]:
        return _joined(self._answers("progress", {"variant": variant, "card": card}))

    def turn_status(self, ctx: Any) -> tuple[str, ...]:
        return _joined(self._answers("turn_status", {"ctx": ctx}))

    def solitaire_notes(self, variant: Any) -> tuple[str, ...]:
        return _joined(self._answers("solitaire_notes", {"variant": variant}))


def no_move_error(variant: Any, card: Card, roll: Any, first_roll: bool, situation: Situation) -> ContractError:
    """The error of a game's decision that offers no legal move (no box, no keep, no rule action): the legality
    rules left the acting player nothing to score where no other roll is allowed."""
    ctx = TurnContext(variant, card, roll, first_roll, situation=situation)
    return variant.hooks.no_move(ctx, "where no other roll is allowed")


def check_answers(variant: Any) -> None:
    """Ask a newly compiled variant's rules every question that needs no game, on an empty card and one roll
    after a reroll: flags, totals, events, notes, the card's bonuses and progress, a tie's settlement, and for
    the roll the legal boxes, each box's score, awards, events and explanation, an instant win, another roll,
    the turn's status and actions. A plugin answering against its contract is so refused as the variant loads,
    before any command starts its work (each answer is checked where it is asked anyway). Asked of the rules
    themselves (`rules_allow`, `turn_events`), not through `Variant.score` and `legal_boxes`, which an advisor
    answering from kept tables never calls. Skipped while reads are traced (nothing of this is the caller's)."""
    if is_tracing():
        return
    card = Card()
    variant.state_flags()
    variant.state_totals()
    variant.event_names()
    variant.solitaire_notes()
    variant.end_bonuses(card)
    variant.progress(card)
    variant.settle({"player 1": 0, "player 2": 0})
    if not variant.box_ids:
        return
    roll = variant.roll_of((variant.faces,) * variant.dice)
    first = variant.rolls == 1  # (a roll after a reroll, where the variant has one)
    variant.rules_allow(card, roll, first)
    for box in variant.boxes:
        variant.turn_events(card, box.id, roll, first)  # (the score's adjustments, then the events)
        comb, points = variant.declared_score(box, roll)
        variant.hooks.extra_points(ScoreContext(variant, card, box, roll, first, comb, points))
        variant.why_illegal(card, roll, first, box.id)
    variant.instant_win(card, roll, first, 2)
    variant.may_reroll(card, roll, first)
    variant.turn_status(card, roll, first)
    for action in variant.actions(card, roll, first)[:1]:
        variant.apply_action(card, roll, first, action)


def _filled(card: Any) -> Any:
    """The filled boxes of a card, read without noting a rule's read (a traced card's own mapping)."""
    scores = card.scores
    return scores._d if isinstance(scores, FrozenMap) else scores


def _joined(found: list[tuple[Any, ...]]) -> tuple[Any, ...]:
    """The items of every plugin's (checked) answer, in order."""
    if not found:
        return ()
    if len(found) == 1:
        return found[0]
    return tuple(item for items in found for item in items)
