"""How the rule hooks are called for one variant: only the plugins it enables take part."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import pluggy

from .model import Award, BoxFlag, Variant

__all__ = ["RuleHooks"]


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
