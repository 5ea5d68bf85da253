"""dicecup: one engine for the Yahtzee family of dice games.

Variants are YAML files compiled into frozen objects; rules YAML cannot say are
pluggy plugins; games are immutable states with explicit chance.

    >>> from dicecup import Engine, Game
    >>> engine = Engine()
    >>> game = Game.new(engine.variant("yahtzee"), ["ann", "bob"], seed=1)
"""

from .errors import (
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
from .game.state import GameState
from .language.card import Award, Card
from .language.compiler import REQUIRED
from .language.contexts import PatternContext, PatternFn, ScorerFn, Situation
from .language.dice import Roll, all_rolls, parse_dice, reroll_outcomes, sub_multisets
from .language.engine import Engine, RuleDecl
from .language.frozen import FrozenMap
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
    ScoreContext,
    ScoreResult,
    Spec,
    StateUpdate,
    TurnContext,
    Variant,
)

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
    "Progress",
    "RandomBot",
    "Roll",
    "RollDice",
    "RoundResult",
    "RuleAction",
    "RuleDecl",
    "SaveError",
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
