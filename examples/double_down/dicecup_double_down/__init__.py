"""Double down: a dicecup rule that adds a move of its own, written only against the public API.

The rule
--------
`double_down` (parameter `times`, default 1): `times` times a game, right after
any roll of a turn, a player may declare **double**. The box that player scores
this turn then counts double if the dice meet its pattern, and scores 0 if they
do not (a joker's points for dice that miss the pattern are not doubled: the box
scores 0). The box holds the doubled score, so it counts double in the upper
bonus too; `yahtzee-double` adds a Yahtzee bonus for a doubled Yahtzee (the box
then holds 100, not the 50 the usual bonus asks for).

The variant `yahtzee-double` is Yahtzee with the rule on; its option `doubles`
(1, 2 or 3) sets `times`.

Install and play
----------------
    pip install ./examples/double_down
    dicecup show -v yahtzee-double
    dicecup play -v yahtzee-double -p you -p bot:greedy

At the prompt, type `double` after a roll (the game lists it under "You may
also"), then score as usual. From Python, the move is one of
`state.legal_actions()`: `RuleAction("double_down", "double")`.

How it works
------------
The plugin declares the rule and its action verb (`dicecup_register_rules`),
offers the action while the player has doubles left (`dicecup_actions`), and
records it (`dicecup_apply_action`) as rule state that is plain JSON data: the
turn state `true` (declared this turn) and the player state, the doubles left
this game. `dicecup_adjust_score` reads the turn state through
`ctx.turn_state`. Saving, replaying, undo and the terminal game need no code
of its own. The exact solver does not model the move (it is a decision the
solver's states do not hold) and says so.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from importlib import resources
from typing import Any

from dicecup import ParameterError, RuleAction, ScoreContext, StateUpdate, TurnContext, Variant, hookimpl

RULE = "double_down"
VERB = "double"


def _check(variant: Variant, params: Mapping[str, Any]) -> None:
    """`times` is a whole number from 1 to the number of boxes (a turn fills one box)."""
    times = params["times"]
    if not 1 <= times <= len(variant.boxes):
        raise ParameterError("times", f"times must be 1 to {len(variant.boxes)} (one a turn), got {times}")


@hookimpl
def dicecup_register_rules(register: Callable[..., None]) -> None:
    """Declare the rule, its parameter and its action verb (for help texts and the terminal game)."""
    register(
        RULE,
        {"times": 1},
        "`times` times a game, right after a roll, a player may declare double: "
        "the box scored that turn counts double if its pattern is met, 0 if not.",
        check=_check,
        actions={VERB: "make the box you score this turn count double (0 if its pattern is not met)"},
    )


@hookimpl
def dicecup_register_variants(register: Callable[..., None]) -> None:
    """Add yahtzee-double, read from the package's data file."""
    text = resources.files(__name__).joinpath("yahtzee-double.yaml").read_text(encoding="utf-8")
    register(text=text, source="dicecup_double_down/yahtzee-double.yaml")


def _declared(ctx: TurnContext | ScoreContext) -> bool:
    """Whether the acting player declared double this turn."""
    return ctx.turn_state.get(RULE) is True


def _left(ctx: TurnContext) -> int:
    """Doubles the acting player may still declare this game (all of them until the first)."""
    left = ctx.player_state.get(RULE)
    return ctx.variant.rule(RULE)["times"] if left is None else int(left)


@hookimpl
def dicecup_actions(ctx: TurnContext) -> list[RuleAction] | None:
    """Offer `double` after any roll, unless declared this turn already or none are left."""
    if ctx.roll is None or _declared(ctx) or _left(ctx) <= 0:
        return None
    return [RuleAction(RULE, VERB)]


@hookimpl
def dicecup_apply_action(ctx: TurnContext, action: RuleAction) -> StateUpdate | None:
    """Declaring: the turn is doubled, and the player has one double fewer this game."""
    if action.name != VERB:
        return None
    return StateUpdate(turn=True, player=_left(ctx) - 1)


@hookimpl(trylast=True)  # after every other rule: the score it doubles is the box's final one
def dicecup_adjust_score(ctx: ScoreContext, score: int) -> int | None:
    """A declared turn's box: twice its score when the dice meet its pattern, else 0."""
    if not _declared(ctx):
        return None
    return 2 * score if ctx.combination is not None else 0


@hookimpl
def dicecup_turn_status(ctx: TurnContext) -> list[str] | None:
    """Say when this turn is doubled, and how many doubles are left."""
    if _declared(ctx):
        return ["Double down: the box you score this turn counts double (0 if its pattern is not met)"]
    left = _left(ctx)
    if ctx.roll is not None and left > 0:
        return [f"Double down: {left} left this game (type {VERB})"]
    return None


@hookimpl
def dicecup_solitaire_notes(variant: Variant) -> list[str]:
    """What the solver and simulator leave out (shown where their results are)."""
    return ["declaring double is a move of its own; the exact solver does not model it"]
