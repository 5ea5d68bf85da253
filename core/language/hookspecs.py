"""Hook specifications: the whole public surface a dicecup plugin implements.

*Registration* hooks run once when an engine starts and add patterns, scorers, rules, variants
and bots. *Rule* hooks run during play, only on the plugins a variant enables (plus plugins that
declare no rule at all), and keep `CONTRACT`: pure, reading only through the public accessors,
declaring what they depend on, so the solver and the tables can reuse their answers. Each
specification's ``@returns(...)`` is what the engine checks the hook's answers against. Plugins mark
implementations with ``dicecup.hookimpl``; a ``dicecup_`` function that matches no specification is
rejected at start-up.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping
from fractions import Fraction
from typing import TYPE_CHECKING

import pluggy

from .contracts import (
    ANYTHING,
    AWARDS,
    BOT,
    BOX_FLAG,
    BOX_IDS,
    BOX_TOTAL,
    COMBINATION,
    COUNT,
    FUNCTION,
    ID,
    LEGAL_ACTION,
    NOTHING,
    POINTS,
    PROGRESS,
    RULE_ACTION,
    SETTLEMENT,
    STATE_UPDATE,
    TEXT,
    Flag,
    Items,
    MappingOf,
    Maybe,
    OneOf,
    Text,
    returns,
)

if TYPE_CHECKING:  # pragma: no cover
    from .card import Award, Card
    from .hookcontexts import ScoreContext, TurnContext
    from .model import BoxFlag, BoxTotal, Progress, RuleAction, StateUpdate, Variant

PROJECT = "dicecup"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)

__all__ = ["PROJECT", "hookspec", "hookimpl", "CONTRACT"]

#: The contract every rule hook keeps, as the docs' hooks page shows it.
CONTRACT = """\
The contract every rule hook keeps (the solver, the simulator and the tables rely
on it, and ``dicecup.testing.check_variant`` checks it):

* **Pure.** A rule hook's result depends only on its arguments: no global or
  hidden state, no randomness, no clock, no I/O, and it changes nothing it is
  given (contexts, cards and variants are frozen anyway).
* **Reads through the public accessors.** A hook reads the card only through
  ``card.scores`` (``in``, ``[]``, ``.get``, iteration) and ``card.awards``,
  the roll through its attributes, and the game around the card through the
  context's properties (``ctx.player``, ``ctx.turn``, ``ctx.rolls_used``,
  ``ctx.rolls_left``, ``ctx.cards`` / ``ctx.others``, ``ctx.turn_state``,
  ``ctx.player_state``). The engine records those reads; an answer is reused
  for every call that agrees on what was read, so reading by any other route
  gives wrong results.
* **Declared dependencies.** A rule whose scoring or legality depends on a
  filled box's *value* declares it (``dicecup_state_flags``); one whose
  whole-card bonuses depend on a group's total declares the group
  (``dicecup_state_totals``). The solver refuses rules that read anything else.
* **Returns what its contract says.** ``@returns(...)`` on each specification
  below is what the hook, and each function it registers, must return
  (``contracts``); the engine checks every value where it comes back, and a
  value of the wrong kind is one ``ContractError`` (a ``PluginError``) naming
  the plugin, the hook and the value. Scores and points are whole numbers (int,
  not float) within ±1,000,000,000, the bound of every number in a variant.
"""


# --------------------------------------------------------------------------- registration


@hookspec
@returns(NOTHING, pattern_factory=FUNCTION, pattern=Maybe(COMBINATION), pattern_text=TEXT)
def dicecup_register_patterns(register: Callable[..., None]) -> None:
    """Add named patterns. Called once per engine, on every plugin.

    ``register(name, factory, text=None)``: ``factory(ctx, **params)`` receives a
    ``PatternContext`` and the YAML parameters and returns a function
    ``(roll: Roll) -> tuple[int, ...] | None``: the dice that form the
    combination (some of the roll's dice, a tuple of die values), or None when the
    roll does not meet the pattern. Raise
    ``ParameterError(key, message)`` (a ``ValueError``) from the factory for a bad
    parameter value, and the message points at that key. ``text(params) -> str``,
    if given, says in plain words what the pattern needs (`dicecup show`).
    """


@hookspec
@returns(NOTHING, scorer_factory=FUNCTION, scorer=POINTS, scorer_text=TEXT)
def dicecup_register_scorers(register: Callable[..., None]) -> None:
    """Add named scorers. Called once per engine, on every plugin.

    ``register(name, factory, text=None)``: ``factory(ctx, **params)`` returns a
    function ``(combination: tuple[int, ...], roll: Roll) -> int``, called only
    when the box's pattern is met (an unmet pattern scores 0 before any rule
    adjusts it): a whole number (an int, never a float, even 12.0) within
    ±1,000,000,000. ``text(params) -> str`` says what the box then scores.
    """


@hookspec
@returns(NOTHING, rule_check=NOTHING)
def dicecup_register_rules(register: Callable[..., None]) -> None:
    """Declare the rules this plugin provides. Called once per engine, on every plugin.

    ``register(name, params={key: default, ...}, doc="...", kind="rule", check=None, actions=None)``:
    ``name`` is what a variant writes under ``rules:`` (``kind="rule"``), as a bonus's ``kind:``
    (``kind="bonus"``) or as a column's ``order:`` (``kind="order"``, a fill-order rule). ``params`` lists
    every accepted parameter with its default (``REQUIRED`` for none); a value of another type than its
    default is an error. ``check(variant, params)``, if given, runs on the compiled variant (a
    column-scope bonus: on one column's sheet) and returns None or raises ``ParameterError(key, message)``
    for a bad parameter (e.g. a box that does not exist). ``actions={verb: help}`` names the actions the
    rule adds (see ``dicecup_actions``), for help texts and the terminal game.

    A plugin that declares rules receives rule hook calls only for variants that enable one of them.
    """


@hookspec
@returns(NOTHING)
def dicecup_register_variants(register: Callable[..., None]) -> None:
    """Add variant files. Called once per engine, on every plugin.

    ``register(path)`` for a YAML file, or ``register(text=..., source=...)``
    for YAML held in memory. Ids must be unique across all plugins. With
    ``id=...`` (the id the file declares) the file is parsed only when that
    variant is first used, which keeps start-up fast with many files.
    """


@hookspec
@returns(NOTHING, bot_factory=BOT, bot_choose=LEGAL_ACTION, bot_check=NOTHING, bot_parse=ANYTHING)
def dicecup_register_bots(register: Callable[..., None]) -> None:
    """Add computer players. Called once per engine, on every plugin.

    ``register(name, factory, doc="", check=None)``: ``factory(rng)`` (``rng`` a ``random.Random``)
    returns an object whose ``choose(state)`` returns one of ``state.legal_actions()`` (a plugin's bot is
    handed out wrapped: an illegal move is a ContractError naming it). ``check(variant)``, if given,
    returns None or raises a DicecupError for a variant the bot cannot play (too large, rules it does not
    model), so that a game is refused before it starts. Players write ``bot:NAME``.

    A bot with a parameter adds ``argument="LABEL"`` (and ``parse=fn``, reading the text into a value or
    raising a DicecupError): players write ``bot:NAME:ARG``, and ``factory(rng, value)`` and
    ``check(variant, value)`` take the parsed value. A bot that plays to win (its play depends on the other
    players) adds ``solitaire=False``, and ``dicecup simulate``, which plays solitaire games, refuses it.
    """


# --------------------------------------------------------------------------- rules during play


@hookspec
@returns(Maybe(BOX_IDS))
def dicecup_legal_boxes(ctx: TurnContext) -> Collection[str] | None:
    """Restrict where the current roll may be scored. Called on all enabled plugins.

    ``ctx`` holds the variant, the player's card, the roll, whether it is the
    first roll, ``open_boxes`` (ids not yet filled) and the situation. Return the
    ids this rule allows, ids of this variant's boxes (for a column-scope rule, its
    sheet's row ids) in any collection but text, or None for no restriction; the
    engine keeps the ids every result allows. Where no other roll is allowed the
    rules together must leave an open box to score (or offer an action): a game
    left with no move is the legality rules' error.
    """


@hookspec
@returns(Maybe(TEXT))
def dicecup_explain(ctx: TurnContext, box: str) -> str | None:
    """Why this rule does not allow open box ``box`` now, in words; None when it does (or says nothing).

    Used for the message of a refused move, so say what the player can do
    ("fill every stage-1 box first"): one line of text.
    """


@hookspec
@returns(Maybe(POINTS))
def dicecup_adjust_score(ctx: ScoreContext, score: int) -> int | None:
    """Change what a box scores for a roll. Called as a fold over enabled plugins.

    ``score`` is the score so far: the box's declared scorer (0 when its pattern
    is not met) after earlier plugins' adjustments. Return the new score, a whole
    number (an int, never a float) within ±1,000,000,000, or None to leave it. Plugins marked ``tryfirst`` see the declared score first.
    ``ctx.met`` says whether the pattern is met; read ``ctx.combination`` only for
    the dice themselves (the solver then asks the rule once per distinct
    combination, not once per distinct declared score).
    """


@hookspec
@returns(Maybe(AWARDS))
def dicecup_extra_points(ctx: ScoreContext) -> Iterable[Award] | None:
    """Points earned besides the box score when the box is filled (a Yahtzee bonus).

    Called on all enabled plugins after the score is fixed; every returned
    ``Award`` (its points a whole number within ±1,000,000,000, its id and name
    text) is added to the player's card. ``ctx.score`` is the box's final
    score. The engine multiplies the points by the box's column multiplier and
    counts them in the figure of the bonus whose id they carry.
    """


@hookspec
@returns(Maybe(MappingOf(ID, COUNT, "a mapping of event id to a count")))
def dicecup_turn_events(ctx: ScoreContext) -> Mapping[str, int] | None:
    """Things that happen when a box is filled that are not points (a Yahtzee rolled, a joker used).

    Called on all enabled plugins when a box is scored, after the score is fixed
    (``ctx.score`` is the box's final score, as for ``dicecup_extra_points``).
    Return ``{event id: count}`` (ids snake_case text, counts whole numbers from 0 to 1,000,000,000)
    or None for nothing; the counts of every plugin are summed per id. The
    simulators count each id per game; name the ids in ``dicecup_event_names``.
    For a column-scope bonus the context is one column's sheet and the ids are
    qualified with the column (``x2.yahtzee_rolled``), as award ids are.
    """


@hookspec
@returns(Maybe(MappingOf(ID, TEXT, "a mapping of event id to its name")))
def dicecup_event_names(variant: Variant) -> Mapping[str, str] | None:
    """The events this rule reports through ``dicecup_turn_events``: ``{event id: name}``. Called on all enabled plugins.

    The simulators report every declared id (in declaration order, plugins in call
    order), even one that never happens; an id reported but not declared is counted
    under its id as its name. The first name given for an id is kept.
    """


@hookspec
@returns(Maybe(AWARDS))
def dicecup_end_bonuses(variant: Variant, card: Card) -> Iterable[Award] | None:
    """Bonuses the card earns as a whole (upper-section bonus). Called on all enabled plugins.

    Called whenever a total is shown, so it must only read ``card``; the awards
    count once the game is over and show progress before that. For a bonus of
    scope ``column``, ``variant`` and ``card`` are one column's sheet (row ids,
    scores before the multiplier) and the engine multiplies the points.
    """


@hookspec(firstresult=True)
@returns(Maybe(OneOf(Flag(), Text("a phrase", empty=False), text="True, False or a phrase saying what won")))
def dicecup_instant_win(ctx: TurnContext, players: int) -> bool | str | None:
    """Whether this roll wins the game at once. First non-None result wins.

    Return True, or a short phrase saying what won ("a Generala on the first
    roll"); False or None for no win (nothing else: not 0, 1 or a number). Called
    after every roll of a game with two or more players (never in solitaire play,
    where such a roll is scored as usual).
    """


@hookspec(firstresult=True)
@returns(Maybe(SETTLEMENT))
def dicecup_settle(variant: Variant, totals: Mapping[str, int]) -> Mapping[str, Fraction] | None:
    """What each player receives (negative: pays) at the end of a match. First result wins.

    ``totals`` maps player name to match total. Return an amount for every player
    in ``totals`` (an int, a Fraction or a finite float, within ±10**18): the
    amounts must sum to zero (floats: up to their rounding).
    """


@hookspec
@returns(Maybe(Items(RULE_ACTION, "RuleAction(rule, name, arg) objects")))
def dicecup_actions(ctx: TurnContext) -> Iterable[RuleAction] | None:
    """Actions this rule adds that the acting player may take now, besides keeping and scoring.

    Asked at decision nodes (dice on the table). Return ``RuleAction(rule,
    name, arg)`` objects, ``rule`` being one of this plugin's enabled rules and
    ``arg`` JSON data (a box id, a number, ...). The engine lists them in
    ``GameState.legal_actions()``, saves and replays them, and the terminal game
    offers them as ``NAME ARG``.
    """


@hookspec
@returns(Maybe(STATE_UPDATE))
def dicecup_apply_action(ctx: TurnContext, action: RuleAction) -> StateUpdate | None:
    """What taking ``action`` (one this plugin offered) changes. Asked only of the rule's plugin.

    Return ``StateUpdate(turn=..., player=...)``: the new value this rule keeps
    for the turn (cleared when the turn ends) and/or for the player's game
    (cleared when a new game of the match starts); a value must be JSON data,
    None clears it, and a part left out stays as it was. Rule hooks read these
    values back through ``ctx.turn_state[rule]`` and ``ctx.player_state[rule]``.
    """


@hookspec
@returns(Maybe(Flag()))
def dicecup_may_reroll(ctx: TurnContext) -> bool | None:
    """Return False to forbid keeping dice and rolling again now (e.g. an announcement must come first);
    True or None allows it (nothing else)."""


@hookspec
@returns(Maybe(Items(TEXT, "lines of text")))
def dicecup_turn_status(ctx: TurnContext) -> Iterable[str] | None:
    """Lines to show about the acting player's turn (e.g. "announced: full (announce column)"): each one line
    of printable text (no newline)."""


@hookspec
@returns(Maybe(Items(PROGRESS, "Progress(id, cell, line) objects")))
def dicecup_progress(variant: Variant, card: Card) -> Iterable[Progress] | None:
    """How this rule's bonuses or constraints stand on a card, for display.

    ``Progress(id, cell, line)``: ``id`` is a bonus id (its ``cell`` is shown in
    that bonus's row of the scorecard, e.g. "42/63") or the rule's name; ``line``
    is a sentence for the player ("Upper bonus: 42/63 for +35, 2 boxes to go").
    """


@hookspec
@returns(Maybe(Items(TEXT, "lines of text")))
def dicecup_solitaire_notes(variant: Variant) -> Iterable[str] | None:
    """What solitaire play (the solver, the simulator) leaves out of this rule, in words."""


@hookspec
@returns(Maybe(Items(BOX_FLAG, "BoxFlag(box, value) objects")))
def dicecup_state_flags(variant: Variant) -> Iterable[BoxFlag] | None:
    """Facts about a card that this rule's scoring or legality depends on.

    Called on all enabled plugins by the solver, which keeps one state per
    combination of flags. A rule that reads a filled box's *value* (not only
    whether it is filled) must declare it here, e.g. ``BoxFlag("yahtzee", 50)``: a
    box of this variant and a whole-number value.
    """


@hookspec
@returns(Maybe(Items(BOX_TOTAL, "BoxTotal(name, boxes) objects")))
def dicecup_state_totals(variant: Variant) -> Iterable[BoxTotal] | None:
    """Groups of boxes whose running total this rule's whole-card bonuses depend on.

    ``BoxTotal(name, boxes)`` (distinct boxes of this variant, at least one), e.g.
    the upper section of a threshold bonus. The
    solver keeps each group's total (clamped to where it still matters) in its
    state, and reads the bonuses' values from ``dicecup_end_bonuses``.
    """
