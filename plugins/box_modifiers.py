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
    if ctx.first_roll and box.first_roll is not None:
        score = box.first_roll.apply(score)
    return score + box.extra
