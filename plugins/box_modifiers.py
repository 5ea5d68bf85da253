"""Per-box modifiers declared in YAML: `first_roll` (served / doubled) and `extra` points.

Applies to every variant (it declares no rule), and runs before other rules
adjust a score, so they see the served or doubled value.
"""

from __future__ import annotations

from dicecup import ScoreContext, hookimpl


@hookimpl(tryfirst=True)
def dicecup_adjust_score(ctx: ScoreContext, score: int) -> int | None:
    if not ctx.met:
        return None
    box = ctx.box
    if box.first_roll is not None and ctx.first_roll:  # (a box without the modifier does not ask)
        score = box.first_roll.apply(score)
    return score + box.extra
