"""dicecup: one engine for the Yahtzee family of dice games.

Variants are YAML files compiled into frozen objects; rules YAML cannot say are
pluggy plugins; games are immutable states with explicit chance.

    >>> from dicecup import Engine
    >>> engine = Engine()
    >>> game = Game.new(engine.variant("yahtzee"), ["ann", "bob"], seed=1)
"""

from .language.compiler import REQUIRED
from .language.dice import Roll, all_rolls, parse_dice, reroll_outcomes, sub_multisets
from .errors import (
    DiceError,
    DicecupError,
    IllegalAction,
    ParameterError,
    PluginError,
    SaveError,
    UnknownVariant,
    VariantError,
)
from .language.hookspecs import hookimpl, hookspec
from .language.model import (
    Award,
    Bonus,
    Box,
    BoxFlag,
    Card,
    FirstRoll,
    MatchSpec,
    OptionSpec,
    PatternContext,
    ScoreContext,
    ScoreResult,
    Spec,
    TurnContext,
    Variant,
)
from .language.engine import Engine, RuleDecl
from .game.actions import Action, Keep, RollDice, RoundResult, Score
from .game.handle import Game
from .game.state import GameState

__version__ = "0.1.0"

__all__ = [
    "REQUIRED",
    "Action",
    "Award",
    "Bonus",
    "Box",
    "BoxFlag",
    "Card",
    "DiceError",
    "DicecupError",
    "Engine",
    "FirstRoll",
    "Game",
    "GameState",
    "IllegalAction",
    "Keep",
    "MatchSpec",
    "OptionSpec",
    "ParameterError",
    "PatternContext",
    "PluginError",
    "Roll",
    "RollDice",
    "RoundResult",
    "RuleDecl",
    "SaveError",
    "Score",
    "ScoreContext",
    "ScoreResult",
    "Spec",
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
