"""A move and a box in the player's words, as the card names them (ids are for JSON and the API): what the
terminal, the coach's explanations and the command line's tables all say."""

from __future__ import annotations

from collections.abc import Sequence

from ..language.model import Variant
from ..locales import _
from .actions import Action, Keep, RuleAction, Score

__all__ = ["action_text", "dice_digits", "variant_box_name"]


def variant_box_name(variant: Variant, box: str) -> str:
    """A box as the card names it: `Full house`, or `Full (Down)` on a card with several columns."""
    b = variant.box(box)
    if len(variant.columns) > 1:
        return f"{b.name} ({variant.column(b.column).name})"
    return b.name


def dice_digits(dice: Sequence[int], faces: int) -> str:
    """Dice as digits for one-line narration: `11235` (comma-separated above nine faces)."""
    return ("" if faces < 10 else ",").join(map(str, dice))


def action_text(action: Action, variant: Variant) -> str:
    """A move in a few words: `keep 566`, `score Full house`, `announce Full (Announce)`."""
    if isinstance(action, Score):
        return _("score {box}").format(box=variant_box_name(variant, action.box))
    if isinstance(action, Keep):
        return (
            _("reroll all")
            if not action.dice
            else _("keep {kept}").format(kept=dice_digits(action.dice, variant.faces))
        )
    if isinstance(action, RuleAction):
        if isinstance(action.arg, str) and action.arg in variant.box_ids:
            return f"{action.name} {variant_box_name(variant, action.arg)}"
        return action.label
    return str(action)
