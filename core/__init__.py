"""dicecup: one engine for the Yahtzee family of dice games.

Variants are YAML files compiled into frozen objects; rules YAML cannot say are
pluggy plugins; games are immutable states with explicit chance.

    >>> from dicecup import Engine, Game
    >>> engine = Engine()
    >>> game = Game.new(engine.variant("yahtzee"), ["ann", "bob"], seed=1)
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the names below, for type checkers; at run time each module loads on first use
    from .errors import (
        CardError,
        ContractError,
        DicecupError,
        DiceError,
        IllegalAction,
        ParameterError,
        PluginError,
        SaveError,
        TooLarge,
        UnknownVariant,
        VariantError,
    )
    from .game.actions import Action, Keep, RollDice, RoundResult, Score
    from .game.bots import Bot, GreedyBot, RandomBot
    from .game.handle import Game
    from .game.saving import VariantFileNeeded
    from .game.state import GameState
    from .language.card import Award, Card
    from .language.compiler import REQUIRED
    from .language.contexts import PatternContext, PatternFn, ScorerFn, Situation
    from .language.dice import Roll, all_rolls, parse_dice, reroll_outcomes, sub_multisets
    from .language.engine import Engine, RuleDecl
    from .language.frozen import FrozenMap
    from .language.hookcontexts import ScoreContext, TurnContext
    from .language.hookspecs import hookimpl, hookspec
    from .language.model import (
        UNCHANGED,
        Bonus,
        Box,
        BoxFlag,
        BoxTotal,
        Column,
        Figure,
        FirstRoll,
        MatchSpec,
        OptionSpec,
        Progress,
        RuleAction,
        ScoreResult,
        Spec,
        StateUpdate,
        Variant,
    )

#: where each public name lives: `import dicecup` loads none of them, so a command that needs
#: the rules alone does not pay for the game, the solver or the simulator
_WHERE: dict[str, str] = {
    **dict.fromkeys(
        (
            "CardError",
            "ContractError",
            "DicecupError",
            "DiceError",
            "IllegalAction",
            "ParameterError",
            "PluginError",
            "SaveError",
            "TooLarge",
            "UnknownVariant",
            "VariantError",
        ),
        ".errors",
    ),
    **dict.fromkeys(("Action", "Keep", "RollDice", "RoundResult", "Score"), ".game.actions"),
    **dict.fromkeys(("Bot", "GreedyBot", "RandomBot"), ".game.bots"),
    **dict.fromkeys(("Game",), ".game.handle"),
    **dict.fromkeys(("GameState",), ".game.state"),
    **dict.fromkeys(("VariantFileNeeded",), ".game.saving"),
    **dict.fromkeys(("Award", "Card"), ".language.card"),
    **dict.fromkeys(("REQUIRED",), ".language.compiler"),
    **dict.fromkeys(("PatternContext", "PatternFn", "ScorerFn", "Situation"), ".language.contexts"),
    **dict.fromkeys(("ScoreContext", "TurnContext"), ".language.hookcontexts"),
    **dict.fromkeys(("Roll", "all_rolls", "parse_dice", "reroll_outcomes", "sub_multisets"), ".language.dice"),
    **dict.fromkeys(("Engine", "RuleDecl"), ".language.engine"),
    **dict.fromkeys(("FrozenMap",), ".language.frozen"),
    **dict.fromkeys(("hookimpl", "hookspec"), ".language.hookspecs"),
    **dict.fromkeys(
        (
            "UNCHANGED",
            "Bonus",
            "Box",
            "BoxFlag",
            "BoxTotal",
            "Column",
            "Figure",
            "FirstRoll",
            "MatchSpec",
            "OptionSpec",
            "Progress",
            "RuleAction",
            "ScoreResult",
            "Spec",
            "StateUpdate",
            "Variant",
        ),
        ".language.model",
    ),
}


def __getattr__(name: str) -> Any:
    """Load a public name's module on first use (PEP 562)."""
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module 'dicecup' has no attribute {name!r}")
    value = getattr(importlib.import_module(where, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)


__version__ = "0.2.0"

__all__ = [
    "REQUIRED",
    "UNCHANGED",
    "Action",
    "Award",
    "Bonus",
    "Bot",
    "Box",
    "BoxFlag",
    "BoxTotal",
    "Card",
    "CardError",
    "Column",
    "DiceError",
    "DicecupError",
    "Engine",
    "Figure",
    "FirstRoll",
    "FrozenMap",
    "Game",
    "GameState",
    "GreedyBot",
    "IllegalAction",
    "Keep",
    "MatchSpec",
    "OptionSpec",
    "ParameterError",
    "PatternContext",
    "PatternFn",
    "PluginError",
    "ContractError",
    "Progress",
    "RandomBot",
    "Roll",
    "RollDice",
    "RoundResult",
    "RuleAction",
    "RuleDecl",
    "SaveError",
    "VariantFileNeeded",
    "Score",
    "ScoreContext",
    "ScoreResult",
    "ScorerFn",
    "Situation",
    "Spec",
    "StateUpdate",
    "TooLarge",
    "TurnContext",
    "UnknownVariant",
    "Variant",
    "VariantError",
    "all_rolls",
    "hookimpl",
    "hookspec",
    "parse_dice",
    "reroll_outcomes",
    "sub_multisets",
]
