"""A house rule for dicecup, written only against its public API.

`scratch_penalty`: a box filled with a score of 0 scores `-points` instead (only
the boxes of `section`, when given). The variant `yahtzee-house` turns it on.
"""

from __future__ import annotations

from collections.abc import Mapping
from importlib import resources
from typing import Any

from dicecup import ScoreContext, Variant, hookimpl

RULE = "scratch_penalty"


def _check(variant: Variant, params: Mapping[str, Any]) -> None:
    """Reject parameters that cannot work (dicecup reports them with file, line and key)."""
    if params["points"] < 0:
        raise ValueError(f"points is what a scratch costs, so it cannot be negative (got {params['points']})")
    section = params["section"]
    if section is not None and not isinstance(section, str):
        raise ValueError(f"section must be a section name, got {section!r}")
    if section is not None and not any(b.section == section for b in variant.boxes):
        sections = sorted({b.section for b in variant.boxes})
        raise ValueError(f"section {section!r} has no boxes; sections are {', '.join(sections)}")


@hookimpl
def dicecup_register_rules(register):
    register(
        RULE,
        {"points": 5, "section": None},
        "A box filled with 0 scores -points instead (only boxes of `section` when it is given).",
        check=_check,
    )


@hookimpl
def dicecup_register_variants(register):
    text = resources.files(__name__).joinpath("yahtzee-house.yaml").read_text(encoding="utf-8")
    register(text=text, source="dicecup_house_rules/yahtzee-house.yaml")


@hookimpl(trylast=True)  # after every other rule (a joker may still turn the 0 into points)
def dicecup_adjust_score(ctx: ScoreContext, score: int) -> int | None:
    params = ctx.variant.rule(RULE)
    if score != 0 or (params["section"] is not None and ctx.box.section != params["section"]):
        return None
    return -params["points"]
