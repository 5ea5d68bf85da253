"""Hook specifications: the whole public surface a dicecup plugin implements.

Two kinds of hook. *Registration* hooks run once when an engine starts and add
patterns, scorers, rules and variants. *Rule* hooks run during play; the engine
calls them only on the plugins a variant enables in its `rules:` section, plus
plugins that declare no rule at all (those apply to every variant).

Plugins mark implementations with ``dicecup.hookimpl``; a function whose name
starts with ``dicecup_`` but matches no specification is rejected at start-up.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import pluggy

if TYPE_CHECKING:  # pragma: no cover
    from .model import Award, BoxFlag, ScoreContext, TurnContext, Variant

PROJECT = "dicecup"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)

__all__ = ["PROJECT", "hookspec", "hookimpl"]


# --------------------------------------------------------------------------- registration


@hookspec
def dicecup_register_patterns(register: Callable[[str, Callable[..., Any]], None]) -> None:
    """Add named patterns. Called once per engine, on every plugin.

    ``register(name, factory)``: ``factory(ctx, **params)`` receives a
    ``PatternContext`` and the YAML parameters and returns a function
    ``(roll: Roll) -> tuple[int, ...] | None``: the dice that form the
    combination, or None when the roll does not meet the pattern. Raise
    ``ValueError`` from the factory for a bad parameter value; give the error a
    ``key`` attribute (the parameter's name) and the message points at that key.
    """


@hookspec
def dicecup_register_scorers(register: Callable[[str, Callable[..., Any]], None]) -> None:
    """Add named scorers. Called once per engine, on every plugin.

    ``register(name, factory)``: ``factory(ctx, **params)`` returns a function
    ``(combination: tuple[int, ...], roll: Roll) -> int``, called only when the
    box's pattern is met (an unmet pattern scores 0 before any rule adjusts it).
    """


@hookspec
def dicecup_register_rules(register: Callable[..., None]) -> None:
    """Declare the rules this plugin provides. Called once per engine, on every plugin.

    ``register(name, params={key: default, ...}, doc="...", kind="rule", check=None)``:
    ``name`` is what a variant writes under ``rules:`` (or, with ``kind="bonus"``,
    as a bonus's ``kind:``); ``params`` lists every accepted parameter with its
    default (``REQUIRED`` for none). ``check(variant, params)``, if given, runs on
    the compiled variant and raises ``ValueError`` for bad parameters (e.g. a box
    that does not exist; a ``key`` attribute on the error points at that
    parameter). A plugin that declares rules receives rule hook calls only for
    variants that enable one of them.
    """


@hookspec
def dicecup_register_variants(register: Callable[..., None]) -> None:
    """Add variant files. Called once per engine, on every plugin.

    ``register(path)`` for a YAML file, or ``register(text=..., source=...)``
    for YAML held in memory. Ids must be unique across all plugins.
    """


# --------------------------------------------------------------------------- rules during play


@hookspec
def dicecup_legal_boxes(ctx: TurnContext) -> Collection[str] | None:
    """Restrict where the current roll may be scored. Called on all enabled plugins.

    ``ctx`` holds the variant, the player's card, the roll, whether it is the
    first roll, and ``open_boxes`` (ids not yet filled). Return the ids this
    rule allows (a subset of the open boxes) or None for no restriction; the
    engine keeps the ids every result allows.
    """


@hookspec
def dicecup_adjust_score(ctx: ScoreContext, score: int) -> int | None:
    """Change what a box scores for a roll. Called as a fold over enabled plugins.

    ``score`` is the score so far: the box's declared scorer (0 when its pattern
    is not met) after earlier plugins' adjustments. Return the new score, or
    None to leave it. Plugins marked ``tryfirst`` see the declared score first.
    """


@hookspec
def dicecup_extra_points(ctx: ScoreContext) -> Iterable[Award] | None:
    """Points earned besides the box score when the box is filled (a Yahtzee bonus).

    Called on all enabled plugins after the score is fixed; every returned
    ``Award`` is added to the player's card. ``ctx.score`` is the box's final score.
    """


@hookspec
def dicecup_end_bonuses(variant: Variant, card: Any) -> Iterable[Award] | None:
    """Bonuses the card earns as a whole (upper-section bonus). Called on all enabled plugins.

    Called whenever a total is shown, so it must only read ``card``; the awards
    count once the game is over and show progress before that.
    """


@hookspec(firstresult=True)
def dicecup_instant_win(ctx: TurnContext, players: int) -> bool | None:
    """Whether this roll wins the game at once. First non-None result wins.

    Called after every roll of a game with two or more players (never in
    solitaire play, where such a roll is scored as usual).
    """


@hookspec(firstresult=True)
def dicecup_settle(variant: Variant, totals: Mapping[str, int]) -> Mapping[str, Fraction] | None:
    """What each player receives (negative: pays) at the end of a match. First result wins.

    ``totals`` maps player name to match total. The amounts must sum to zero.
    """


@hookspec
def dicecup_state_flags(variant: Variant) -> Iterable[BoxFlag] | None:
    """Facts about a card that this rule's scoring or legality depends on.

    Called on all enabled plugins by the solver, which keeps one state per
    combination of flags. A rule that reads a filled box's *value* (not only
    whether it is filled) must declare it here, e.g. ``BoxFlag("yahtzee", 50)``.
    """
