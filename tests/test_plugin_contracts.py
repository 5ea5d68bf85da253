"""Plugins that return the wrong thing: every hook's answer, and every function a plugin registers, is
checked against the contract `hookspecs` writes beside its specification. A hostile value is one
PluginError naming the plugin, the hook and the value (in the CLI: exit 2 and one `error:` line), before
any table is built or any move applied; never a crash deep inside the engine.

Hypothesis draws the hostile values: wrong types and shapes, unknown box ids, NaN, infinities, huge and
negative numbers, text, nested junk, and objects whose own methods fail (even with SystemExit). Each is
given back by a plugin either at once (refused as the variant loads) or only once a box is filled (then
the check where the game asks the hook refuses it)."""

from __future__ import annotations

import importlib
import inspect
import math
import random
import re
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from dicecup import (
    Award,
    BoxFlag,
    BoxTotal,
    Card,
    ContractError,
    DicecupError,
    Engine,
    GameState,
    PluginError,
    Progress,
    RuleAction,
    StateUpdate,
    hookimpl,
)
from dicecup.errors import described, shown
from dicecup.language import contracts, hookspecs
from dicecup.language.contracts import NUMBER_LIMIT, contract_of
from dicecup.language.rulehooks import CONTRACTS, RULE_HOOKS
from dicecup.testing import ConformanceError, check_variant

TINY = """
id: tiny-contract
name: Tiny contract
dice: {count: 2}
turn: {rolls: 2}
boxes:
  low: {pattern: always, score: total}
  pair: {pattern: {kind: of_a_kind, n: 2}, score: 10}
rules:
  hostile: {}
"""
BOXES = ("low", "pair")
LABEL = "plugin 'Hostile'"
SPECS = {n: f for n, f in vars(hookspecs).items() if n.startswith("dicecup_") and callable(f)}

#: the hooks whose arguments hold a card: a plugin may answer well on an empty card and badly later
CARD_HOOKS = tuple(h for h in RULE_HOOKS if {"ctx", "card"} & set(inspect.signature(SPECS[f"dicecup_{h}"]).parameters))
SETTINGS = settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much]
)


# ----------------------------------------------------------------------------- the hostile plugin


class HostileBase:
    """Declares rule `hostile` and the tiny variant that enables it; its `dicecup_<hook>` answers `answer`
    (with `later`, only once the card holds a filled box: None, no opinion, before), and with `raises` it
    raises that instead. Made by `hostile`, which gives it that one rule hook."""

    def __init__(self, hook: str, answer: Any = None, later: bool = False, raises: BaseException | None = None):
        self.hook, self.answer, self.later, self.raises = hook, answer, later, raises

    def _answer(self, card: Card | None) -> Any:
        # (`later` asks whether a box is filled box by box: a traced card then reports two reads, not the whole card)
        if self.later and (card is None or not any(b in card.scores for b in BOXES)):
            return None
        if self.raises is not None:
            raise self.raises
        return self.answer

    @hookimpl
    def dicecup_register_rules(self, register):
        register("hostile", {}, "answers what the test tells it to")

    @hookimpl
    def dicecup_register_variants(self, register):
        register(text=TINY, source="tiny-contract.yaml")


@hookimpl
def _legal_boxes(self, ctx):
    return self._answer(ctx.card)


@hookimpl
def _explain(self, ctx, box):
    return self._answer(ctx.card)


@hookimpl
def _adjust_score(self, ctx, score):
    return self._answer(ctx.card)


@hookimpl
def _ctx_only(self, ctx):
    return self._answer(ctx.card)


@hookimpl
def _variant_only(self, variant):
    return self._answer(None)


@hookimpl
def _variant_card(self, variant, card):
    return self._answer(card)


@hookimpl
def _instant_win(self, ctx, players):
    return self._answer(ctx.card)


@hookimpl
def _settle(self, variant, totals):
    answer = self._answer(None)
    return answer(list(totals)) if callable(answer) else answer  # (a good answer is made for the players)


@hookimpl
def _apply_action(self, ctx, action):
    return self._answer(ctx.card)


@hookimpl
def _offer(self, ctx):  # (the actions of a plugin whose apply_action is under test)
    return [RuleAction("hostile", "go")]


IMPLS = {
    "legal_boxes": _legal_boxes,
    "explain": _explain,
    "adjust_score": _adjust_score,
    "extra_points": _ctx_only,
    "turn_events": _ctx_only,
    "event_names": _variant_only,
    "end_bonuses": _variant_card,
    "instant_win": _instant_win,
    "settle": _settle,
    "actions": _ctx_only,
    "apply_action": _apply_action,
    "may_reroll": _ctx_only,
    "turn_status": _ctx_only,
    "progress": _variant_card,
    "solitaire_notes": _variant_only,
    "state_flags": _variant_only,
    "state_totals": _variant_only,
}


def hostile(hook: str, answer: Any = None, later: bool = False, raises: BaseException | None = None) -> Any:
    """A plugin (class `Hostile`) implementing rule hook `hook` alone (and, for apply_action, actions that
    offer one action), answering `answer` (see `HostileBase`)."""
    methods = {f"dicecup_{hook}": IMPLS[hook]}
    if hook == "apply_action":
        methods["dicecup_actions"] = _offer
    return type("Hostile", (HostileBase,), methods)(hook, answer, later, raises)


def ask_everything(state: GameState) -> None:
    """Every question a game, its views and its previews ask the rules at a decision."""
    v, card, roll, first, sit = state.variant, state.card, state.roll_now, state.first_roll, state.situation()
    assert roll is not None
    state.legal_actions()
    state.turn_status()
    for box in v.open_boxes(card):
        state.score_preview(box)
        v.turn_events(card, box, roll, first, sit)
        v.why_illegal(card, roll, first, box, sit)
    v.total(card)
    v.progress(card)


def drive(engine: Engine, seed: int = 0) -> GameState:
    """Load the tiny variant and play a two-player match of it with random moves, asking the rules every
    question on the way (an action taken once a turn); the finished state."""
    v = engine.variant("tiny-contract")
    rng = random.Random(seed)
    state = GameState.new(v, 2, rounds=1)
    acted = False
    for _ in range(200):
        if state.over:
            break
        if state.is_chance:
            state = state.roll(rng)
            continue
        ask_everything(state)
        actions = state.legal_actions()
        offered = [a for a in actions if isinstance(a, RuleAction)]
        if offered and not acted:
            state, acted = state.act(offered[0]), True
            continue
        action = rng.choice([a for a in actions if not isinstance(a, RuleAction)])
        acted = acted and not hasattr(action, "box")
        state = state.apply(action)
    assert state.over
    state.settlement()
    state.winners()
    return state


def assert_names(err: PluginError, hook: str) -> None:
    """The error names the plugin and the hook on one bounded line, and can be written."""
    text = str(err)
    assert LABEL in text and hook in text, text
    assert "\n" not in text and len(text) <= 1_500, text


# ----------------------------------------------------------------------------- hostile values


class Nasty:
    """An object whose `method` raises `exc` (SystemExit included): what a plugin may hand back."""

    def __init__(self, method: str, exc: type[BaseException]) -> None:
        self.method, self.exc = method, exc

    def _check(self, method: str) -> None:
        if self.method == method:
            raise self.exc("nasty")

    def __iter__(self) -> Any:
        self._check("__iter__")
        return iter(())

    def __len__(self) -> int:
        self._check("__len__")
        return 0

    def __hash__(self) -> int:
        self._check("__hash__")
        return 1

    def __eq__(self, other: object) -> bool:
        self._check("__eq__")
        return self is other

    def __str__(self) -> str:
        self._check("__str__")
        return "nasty"

    def __repr__(self) -> str:
        self._check("__repr__")
        return f"Nasty({self.method})"


class Endless:
    """An iterable that never ends (a generator gone wrong)."""

    def __iter__(self) -> Any:
        n = 0
        while True:
            n += 1
            yield f"id{n}"


nasty = st.builds(
    Nasty,
    st.sampled_from(["__iter__", "__len__", "__hash__", "__eq__", "__str__", "__repr__"]),
    st.sampled_from([RuntimeError, ValueError, SystemExit]),
)
huge_ints = st.one_of(
    st.integers(min_value=NUMBER_LIMIT + 1), st.integers(max_value=-NUMBER_LIMIT - 1), st.just(10**30), st.just(10**400)
)
floats = st.floats(allow_nan=True, allow_infinity=True) | st.sampled_from([12.0, 2.5, math.nan, math.inf, -0.0])
not_whole = st.one_of(
    floats,
    huge_ints,
    st.booleans(),
    st.text(max_size=8),
    st.sampled_from(["12", b"12", Fraction(1, 2), Decimal("1.5"), complex(1, 1), np.float64(3.0), [1], {"a": 1}]),
    nasty,
    st.builds(object),
)
nasty_iter = st.builds(Nasty, st.just("__iter__"), st.sampled_from([RuntimeError, ValueError, SystemExit]))
texts_not = st.one_of(
    st.integers(), floats, st.booleans(), st.binary(max_size=4), st.lists(st.text(max_size=3), max_size=3), nasty
)
long_text = st.sampled_from(["x" * 10_000, "y" * 1_001])
scalars = st.one_of(st.integers(), floats, st.booleans(), st.text(max_size=8), st.binary(max_size=4), nasty)
junk = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
    max_leaves=6,
)
not_iterable = st.one_of(st.integers(), floats, st.booleans(), st.builds(object))
collection_rejects = st.one_of(
    not_iterable, st.text(max_size=8), st.binary(max_size=4), st.dictionaries(st.text(max_size=3), scalars, max_size=2)
)
unknown_ids = st.text(max_size=10).filter(lambda s: s not in BOXES)
bad_awards = st.one_of(
    st.builds(Award, st.just("x"), not_whole),
    st.builds(Award, st.integers() | st.just(""), st.integers(-10, 10)),
    st.builds(Award, st.just("x"), st.integers(-10, 10), texts_not),
)


def bad_items(item_rejects: st.SearchStrategy, good: st.SearchStrategy | None = None) -> st.SearchStrategy:
    """An answer that should be an iterable of items: not one, or one holding a bad item among good ones."""
    good = good if good is not None else st.nothing()
    return st.one_of(
        collection_rejects,
        st.builds(lambda a, b, c: [*a, b, *c], st.lists(good, max_size=2), item_rejects, st.lists(good, max_size=2)),
        st.sampled_from([[0] * 20_000, Endless()]),
        nasty_iter,
    )


good_award = st.builds(Award, st.sampled_from(["a", "b"]), st.integers(-100, 100), st.sampled_from(["", "A"]))
bad_answers: dict[str, st.SearchStrategy] = {
    "legal_boxes": st.one_of(
        collection_rejects,
        st.lists(unknown_ids, min_size=1, max_size=3).map(lambda ids: [*ids, "low"]),
        st.lists(st.integers() | floats | st.none(), min_size=1, max_size=3),
        st.just([["low"]]),
        st.just(Endless()),
        nasty,
    ),
    "explain": st.one_of(texts_not, long_text),
    "adjust_score": not_whole,
    "extra_points": bad_items(st.one_of(bad_awards, scalars), good_award),
    "end_bonuses": bad_items(st.one_of(bad_awards, scalars), good_award),
    "turn_events": st.one_of(
        st.lists(st.text(max_size=3), max_size=3),
        not_iterable,
        st.text(max_size=5),
        st.dictionaries(st.text(min_size=1, max_size=5), not_whole | st.integers(max_value=-1), min_size=1, max_size=3),
        st.dictionaries(st.integers() | st.just(""), st.integers(0, 5), min_size=1, max_size=2),
    ),
    "event_names": st.one_of(
        st.lists(st.text(max_size=3), max_size=3),
        not_iterable,
        st.dictionaries(st.text(min_size=1, max_size=5), texts_not | st.none(), min_size=1, max_size=3),
        st.dictionaries(st.integers(), st.text(max_size=3), min_size=1, max_size=2),
    ),
    "instant_win": st.one_of(
        st.integers(),
        floats,
        st.just(""),
        st.lists(st.booleans(), max_size=2),
        st.dictionaries(st.text(), st.text()),
        nasty,
        long_text,
    ),
    "settle": st.one_of(
        not_iterable,
        st.text(max_size=5),
        st.lists(st.integers(), max_size=2),
        st.dictionaries(st.text(max_size=5), st.integers(-5, 5), max_size=3),  # names no player of the match
        st.tuples(st.integers(-100, 100), st.integers(-100, 100))
        .filter(lambda t: sum(t) != 0)
        .map(lambda t: dict(zip(("player 1", "player 2"), t, strict=True))),
        st.one_of(  # not a number, or a float the other player's 0 does not balance
            st.floats(allow_nan=True).filter(lambda x: not abs(x) <= 1e-6),
            st.sampled_from(["12", None, [1], Decimal("1.5"), complex(1, 1), True]),
        ).map(lambda x: {"player 1": x, "player 2": 0}),
        st.just({"player 1": math.inf, "player 2": -math.inf}),
        st.just({"player 1": 10**30, "player 2": -(10**30)}),
    ),
    "actions": bad_items(
        st.one_of(
            scalars,
            st.builds(RuleAction, st.text(max_size=5).filter(lambda s: s != "hostile"), st.just("go")),
            st.builds(RuleAction, st.just("hostile"), texts_not | st.just("")),
            st.builds(
                RuleAction, st.just("hostile"), st.just("go"), st.sampled_from([object(), {1, 2}, math.nan, {3: "x"}])
            ),
        ),
        st.just(RuleAction("hostile", "go")),
    ),
    "apply_action": st.one_of(
        scalars.filter(lambda x: x is not None),
        st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
        st.builds(StateUpdate, st.sampled_from([object(), {1, 2}, math.nan, {3: "x"}, [[[object()]]]])),
        st.builds(StateUpdate, st.none(), st.sampled_from([object(), math.inf, b"x"])),
    ),
    "may_reroll": st.one_of(st.integers(), floats, st.text(max_size=3), st.lists(st.booleans(), max_size=2), nasty),
    "turn_status": bad_items(st.one_of(texts_not, long_text), st.text(max_size=5)),
    "progress": bad_items(
        st.one_of(
            scalars,
            st.builds(Progress, texts_not | st.just("")),
            st.builds(Progress, st.just("p"), texts_not),
            st.builds(Progress, st.just("p"), st.just(""), texts_not | long_text),
        ),
        st.builds(Progress, st.just("p"), st.text(max_size=3)),
    ),
    "solitaire_notes": bad_items(st.one_of(texts_not, long_text), st.text(max_size=5)),
    "state_flags": bad_items(
        st.one_of(
            scalars,
            st.builds(BoxFlag, unknown_ids, st.integers(0, 10)),
            st.builds(BoxFlag, st.just("low"), not_whole),
            st.builds(BoxFlag, st.integers(), st.just(0)),
        ),
        st.builds(BoxFlag, st.sampled_from(BOXES), st.integers(0, 10)),
    ),
    "state_totals": bad_items(
        st.one_of(
            scalars,
            st.builds(BoxTotal, st.just("g"), st.lists(unknown_ids, min_size=1, max_size=2)),
            st.builds(BoxTotal, st.just("g"), st.just(())),
            st.builds(BoxTotal, st.just("g"), st.just(("low", "low"))),
            st.builds(BoxTotal, texts_not | st.just(""), st.just(("low",))),
        ),
        st.builds(BoxTotal, st.just("g"), st.just(("low", "pair"))),
    ),
}


def test_every_rule_hook_has_a_strategy_of_hostile_answers():
    """A new rule hook gets its hostile answers here too, or this fails."""
    assert set(bad_answers) == set(RULE_HOOKS)


# ----------------------------------------------------------------------------- the contracts themselves


def test_every_hookspec_has_a_contract_that_the_checker_reads():
    """Each hook specification carries its contract (`@returns`), written once: the rule hooks' checker reads
    that very object, and each registration hook names the contracts of the functions it registers."""
    assert SPECS and {f"dicecup_{h}" for h in RULE_HOOKS} <= set(SPECS)
    for name, spec in SPECS.items():
        contract = contract_of(spec)  # KeyError for a hook without one
        assert isinstance(contract.result, contracts.Contract) and contract.result.text
        if name.removeprefix("dicecup_") in RULE_HOOKS:
            assert CONTRACTS[name.removeprefix("dicecup_")] is contract.result
    registered = {n: set(contract_of(s).registered) for n, s in SPECS.items() if n.startswith("dicecup_register_")}
    assert registered == {
        "dicecup_register_patterns": {"pattern factory", "pattern", "pattern text"},
        "dicecup_register_scorers": {"scorer factory", "scorer", "scorer text"},
        "dicecup_register_rules": {"rule check"},
        "dicecup_register_variants": set(),
        "dicecup_register_bots": {"bot factory", "bot choose", "bot check", "bot parse"},
    }


def test_a_hook_without_a_contract_is_refused():
    def dicecup_new_hook(ctx):
        """A specification someone forgot to give a contract."""

    with pytest.raises(KeyError, match="dicecup_new_hook.*has no contract"):
        contract_of(hookspecs.hookspec(dicecup_new_hook))


@pytest.mark.parametrize(
    ("value", "words"),
    [
        (10**400, "a 401-digit number"),
        (10**5000, "a 5,001-digit number"),
        ("x" * 10_000, "xxx… (10,000 characters)"),
        (list(range(100_000)), "100,000 items"),
        (Nasty("__repr__", SystemExit), "<Nasty>"),
        ("a\nb\x1b[31m", "a\\nb\\x1b[31m"),
    ],
    ids=["400 digits", "5000 digits", "long text", "long list", "failing repr", "control characters"],
)
def test_values_are_shown_bounded_and_never_fail(value, words):
    text = shown(value)
    assert words in text and len(text) <= 120


def test_an_exception_is_described_even_when_its_str_fails():
    class Mute(Exception):
        def __str__(self):
            raise SystemExit("no")

    assert described(Mute()) == "Mute (its message could not be shown: str() failed)"
    assert len(described(ValueError("y" * 10_000))) <= 320


# ----------------------------------------------------------------------------- hostile answers of rule hooks


@pytest.mark.parametrize("hook", RULE_HOOKS)
@SETTINGS
@given(data=st.data())
def test_a_hostile_answer_is_refused_as_the_variant_loads(hook, data):
    """Answered at once, a value against the contract is one ContractError when the variant loads (its rules
    are asked every game-free question then), naming the plugin and the hook."""
    answer = data.draw(bad_answers[hook], label="answer")
    engine = Engine(plugins=[hostile(hook, answer)], entry_points=False)
    with pytest.raises(ContractError) as caught:
        engine.variant("tiny-contract")
    assert_names(caught.value, f"dicecup_{hook}")


@pytest.mark.parametrize("hook", CARD_HOOKS)
@SETTINGS
@given(data=st.data(), seed=st.integers(0, 3))
def test_a_hostile_answer_in_play_is_one_plugin_error_before_the_move(hook, data, seed):
    """Answered only once a box is filled, the value reaches the engine in a game: one ContractError where
    the hook's answer comes back, naming the plugin and the hook, and nothing else fails first."""
    answer = data.draw(bad_answers[hook], label="answer")
    engine = Engine(plugins=[hostile(hook, answer, later=True)], entry_points=False)
    with pytest.raises(ContractError) as caught:
        drive(engine, seed)
    assert_names(caught.value, f"dicecup_{hook}")


def test_legality_that_leaves_no_box_where_the_player_must_score_is_refused():
    """`[]` is a collection of box ids, but once the rolls are used up it leaves the game stuck: refused by
    name, at load (an empty card after a reroll) and in a game."""
    with pytest.raises(ContractError, match=r"plugin 'Hostile': dicecup_legal_boxes left no legal box"):
        Engine(plugins=[hostile("legal_boxes", [])], entry_points=False).variant("tiny-contract")
    with pytest.raises(ContractError, match=r"plugin 'Hostile': dicecup_legal_boxes left no legal box"):
        drive(Engine(plugins=[hostile("legal_boxes", [], later=True)], entry_points=False))


exceptions = st.one_of(
    st.builds(ValueError, st.text(max_size=20)),
    st.builds(KeyError, st.text(max_size=5)),
    st.sampled_from([SystemExit(3), SystemExit(), GeneratorExit(), RuntimeError("x" * 10_000), ZeroDivisionError()]),
    st.builds(lambda: _mute()),
)


def _mute() -> Exception:
    class Mute(Exception):
        def __str__(self):
            raise RuntimeError("its str fails too")

    return Mute()


@pytest.mark.parametrize("hook", RULE_HOOKS)
@settings(max_examples=8, deadline=None)
@given(exc=exceptions, later=st.booleans())
def test_a_hook_that_raises_is_one_plugin_error_naming_it(hook, exc, later):
    """Whatever a hook raises (SystemExit, an exception whose str() fails, a 10,000-character message) is one
    PluginError naming the plugin and the hook, its message bounded."""
    later = later and hook in CARD_HOOKS
    engine = Engine(plugins=[hostile(hook, later=later, raises=exc)], entry_points=False)
    with pytest.raises(PluginError) as caught:
        drive(engine)
    assert_names(caught.value, f"dicecup_{hook}")
    assert f"failed in dicecup_{hook}: {type(exc).__name__}" in str(caught.value)


def test_keyboard_interrupt_still_interrupts():
    engine = Engine(plugins=[hostile("adjust_score", raises=KeyboardInterrupt())], entry_points=False)
    with pytest.raises(KeyboardInterrupt):
        engine.variant("tiny-contract")


line = st.text(max_size=20).filter(str.isprintable)
good_answers: dict[str, st.SearchStrategy] = {
    "legal_boxes": st.lists(st.sampled_from(BOXES), max_size=3).map(lambda ids: [*ids, *BOXES]) | st.just(set(BOXES)),
    "adjust_score": st.integers(-NUMBER_LIMIT, NUMBER_LIMIT) | st.builds(np.int64, st.integers(-1000, 1000)),
    "end_bonuses": st.lists(good_award, max_size=3) | st.just(()),
    "extra_points": st.lists(good_award, max_size=3).map(tuple),
    "turn_events": st.dictionaries(st.sampled_from(["a", "b"]), st.integers(0, 5), max_size=2),
    "instant_win": st.sampled_from([False, "a lucky roll"]),
    "settle": st.builds(
        lambda n, kind: lambda players: dict(zip(players, (kind(n), -kind(n)), strict=True)),
        st.integers(-100, 100),
        st.sampled_from([int, lambda n: Fraction(n, 3), lambda n: n / 10, np.int64]),
    ),
    "may_reroll": st.sampled_from([True, None]),
    "turn_status": st.lists(line, max_size=2),
    "progress": st.lists(st.builds(Progress, st.just("p"), line, line), max_size=2),
    "state_flags": st.lists(st.builds(BoxFlag, st.sampled_from(BOXES), st.integers(0, 12)), max_size=2),
}


@pytest.mark.parametrize("hook", sorted(good_answers))
@settings(max_examples=10, deadline=None)
@given(data=st.data())
def test_answers_within_the_contract_pass(hook, data):
    """Good answers of every kind the contracts allow (numpy integers, Fractions and floats that sum to zero,
    sets of box ids, generators of awards) play a whole match."""
    answer = data.draw(good_answers[hook], label="answer")
    final = drive(Engine(plugins=[hostile(hook, answer)], entry_points=False))
    assert final.over


# ----------------------------------------------------------------------------- functions a plugin registers


class Registering:
    """A plugin object holding registration hooks as plain functions (`registering`)."""


def registering(**hooks: Any) -> Registering:
    """A plugin made of these registration hooks (`patterns=lambda register: ...`)."""
    plugin = Registering()
    for name, fn in hooks.items():
        setattr(plugin, f"dicecup_register_{name}", hookimpl(fn))
    return plugin


def _one_box(pattern: str, score: str) -> str:
    return f"id: reg-contract\ndice: {{count: 2}}\nboxes:\n  a: {{pattern: {pattern}, score: {score}}}\n"


@SETTINGS
@given(
    answer=st.one_of(
        st.text(max_size=4),
        not_iterable,
        st.lists(st.integers(), min_size=1, max_size=3).filter(lambda ds: not (len(ds) <= 2 and set(ds) == {6})),
        st.sampled_from([(7, 7), (6, 6, 6), (0,), (6.0,), (True,), [[6]], {6: 1}]),
        nasty_iter,
    )
)
def test_a_pattern_answering_what_is_no_combination_of_the_roll_is_refused(answer):
    """The variant loads by scoring 66: anything but some of those dice (or None) is refused."""
    plugin = registering(
        patterns=lambda register: register("hostile", lambda ctx: lambda roll: answer),
        variants=lambda register: register(text=_one_box("hostile", "total"), source="reg.yaml"),
    )
    engine = Engine(plugins=[plugin], entry_points=False)
    with pytest.raises(PluginError) as caught:
        engine.variant("reg-contract")
    assert "plugin 'Registering': pattern 'hostile' returned" in str(caught.value)


@SETTINGS
@given(answer=not_whole)
def test_a_scorer_answering_what_is_no_whole_number_is_refused(answer):
    plugin = registering(
        scorers=lambda register: register("hostile", lambda ctx: lambda comb, roll: answer),
        variants=lambda register: register(text=_one_box("always", "hostile"), source="reg.yaml"),
    )
    engine = Engine(plugins=[plugin], entry_points=False)
    with pytest.raises(PluginError) as caught:
        engine.variant("reg-contract")
    assert "plugin 'Registering': scorer 'hostile' returned" in str(caught.value)


@SETTINGS
@given(answer=junk.filter(lambda x: x is not None))
def test_a_registration_hook_returning_anything_is_refused(answer):
    plugin = registering(variants=lambda register: answer)
    with pytest.raises(ContractError, match=r"plugin 'Registering': dicecup_register_variants returned .*nothing"):
        Engine(plugins=[plugin], entry_points=False)


@SETTINGS
@given(answer=junk.filter(lambda x: x is not None))
def test_a_rule_check_returning_anything_is_refused(answer):
    """A check returning False (meaning "bad parameters"?) would pass silently: refused, it must raise."""
    plugin = registering(
        rules=lambda register: register("checked", {}, "", check=lambda variant, params: answer),
        variants=lambda register: register(
            text=_one_box("always", "total") + "rules: {checked: {}}\n", source="reg.yaml"
        ),
    )
    engine = Engine(plugins=[plugin], entry_points=False)
    with pytest.raises(DicecupError, match=r"plugin 'Registering': the check of rule 'checked' returned"):
        engine.variant("reg-contract")


@SETTINGS
@given(made=st.one_of(scalars, st.builds(object), st.just(type("NoChoose", (), {"choose": 5})())))
def test_a_bot_without_choose_is_refused_when_made(made):
    plugin = registering(bots=lambda register: register("hostile", lambda rng: made))
    engine = Engine(plugins=[plugin], entry_points=False)
    with pytest.raises(ContractError, match=r"plugin 'Registering': the factory of bot 'hostile' returned .*choose"):
        engine.make_bot("hostile")


@SETTINGS
@given(move=st.one_of(junk, st.just(RuleAction("x", "y"))))
def test_a_bot_choosing_no_legal_action_is_refused_before_the_move(move):
    class Bot:
        def choose(self, state):
            return move

    plugin = registering(bots=lambda register: register("hostile", lambda rng: Bot()))
    engine = Engine(plugins=[plugin], entry_points=False)
    bot = engine.make_bot("hostile")
    state = GameState.new(engine.variant("yacht"), 1).roll(dice=(1, 2, 3, 4, 5))
    with pytest.raises(ContractError, match=r"plugin 'Registering': the choose of bot 'hostile' returned"):
        bot.choose(state)


def test_a_plugin_bot_playing_legally_plays_a_game():
    from dicecup import RandomBot

    plugin = registering(bots=lambda register: register("fair", RandomBot))
    engine = Engine(plugins=[plugin], entry_points=False)
    bot, rng = engine.make_bot("fair", random.Random(0)), random.Random(1)
    state = GameState.new(engine.variant("yacht"), 1)
    while not state.over:
        state = state.roll(rng) if state.is_chance else state.apply(bot.choose(state))
    assert isinstance(bot.bot, RandomBot) and state.totals()[0] >= 0


def test_the_built_in_patterns_and_scorers_keep_their_contracts():
    """The built-in plugins' patterns and scorers are called unwrapped (every roll of every box, on the hot
    path): here every bundled variant's boxes answer every roll within their contracts."""
    engine = Engine(entry_points=False)
    pattern = contract_of(hookspecs.dicecup_register_patterns).registered["pattern"]
    scorer = contract_of(hookspecs.dicecup_register_scorers).registered["scorer"]
    checked = 0
    for vid in engine.variant_ids():
        v = engine.variant(vid)
        if v.roll_count > 5_000:
            continue
        for box in v.boxes:
            for roll in v.all_rolls():
                comb = box.pattern.fn(roll)
                assert pattern.check(comb, {"roll": roll}) == comb, (vid, box.id, roll)
                if comb is not None:
                    scorer.check(box.scorer.fn(comb, roll), {})
                checked += 1
    assert checked > 10_000


# ----------------------------------------------------------------------------- solver, simulator, conformance


@pytest.mark.parametrize(
    ("hook", "answer"),
    [
        ("adjust_score", math.nan),
        ("adjust_score", 10**30),
        ("end_bonuses", 5),
        ("extra_points", [Award("x", 2.5)]),
        ("legal_boxes", "low"),
        ("legal_boxes", ["nope"]),
    ],
)
def test_the_solver_refuses_a_hostile_answer_before_any_table(monkeypatch, hook, answer):
    """The solver explores the rules before its search and its tables: a value against the contract there is
    the plugin's ContractError (not an error filed for 'a situation that may not occur'), and no table is
    built."""
    solver = importlib.import_module("dicecup.solver.solve")

    def no_table(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a table was built")

    monkeypatch.setattr(solver, "backward", no_table)
    monkeypatch.setattr(solver, "backward_jit", no_table)
    v = Engine(plugins=[hostile(hook, answer, later=True)], entry_points=False).variant("tiny-contract")
    with pytest.raises(ContractError) as caught:
        solver.solve(v)
    assert_names(caught.value, f"dicecup_{hook}")


@pytest.mark.parametrize("strategy", ["random", "greedy", "optimal"])
def test_the_simulator_refuses_a_hostile_answer(strategy):
    from dicecup.simulate import simulate

    v = Engine(plugins=[hostile("adjust_score", 2.5, later=True)], entry_points=False).variant("tiny-contract")
    with pytest.raises(ContractError) as caught:
        simulate(v, strategy, 20, seed=1)
    assert_names(caught.value, "dicecup_adjust_score")


def test_check_variant_reports_a_hostile_plugin_as_a_conformance_failure():
    engine = Engine(plugins=[hostile("turn_status", [3], later=True)], entry_points=False)
    with pytest.raises(ConformanceError, match=r"plugin 'Hostile': dicecup_turn_status returned \[3\]"):
        check_variant(engine, "tiny-contract", games=3)


# ----------------------------------------------------------------------------- the command line


HOSTILE_FILES = {
    # name: (source, the hook the error names)
    "legal_str": ("def dicecup_legal_boxes(ctx):\n    return 'chance'\n", "dicecup_legal_boxes"),
    "legal_empty": ("def dicecup_legal_boxes(ctx):\n    return []\n", "dicecup_legal_boxes"),
    "legal_unknown": ("def dicecup_legal_boxes(ctx):\n    return ['nope']\n", "dicecup_legal_boxes"),
    "bonus_int": ("def dicecup_end_bonuses(variant, card):\n    return 5\n", "dicecup_end_bonuses"),
    "flags_junk": ("def dicecup_state_flags(variant):\n    return [1, 2]\n", "dicecup_state_flags"),
    "totals_junk": ("def dicecup_state_totals(variant):\n    return ['x']\n", "dicecup_state_totals"),
    "score_nan": ("def dicecup_adjust_score(ctx, score):\n    return float('nan')\n", "dicecup_adjust_score"),
    "score_float": ("def dicecup_adjust_score(ctx, score):\n    return 2.5\n", "dicecup_adjust_score"),
    "score_text": ("def dicecup_adjust_score(ctx, score):\n    return '12'\n", "dicecup_adjust_score"),
    "score_huge": ("def dicecup_adjust_score(ctx, score):\n    return 10**309\n", "dicecup_adjust_score"),
    "settle_text": ("def dicecup_settle(variant, totals):\n    return 'abc'\n", "dicecup_settle"),
    "settle_sum": ("def dicecup_settle(variant, totals):\n    return {p: 1 for p in totals}\n", "dicecup_settle"),
    "instant_int": ("def dicecup_instant_win(ctx, players):\n    return 12345\n", "dicecup_instant_win"),
    "mute_raise": (
        "class Mute(Exception):\n    def __str__(self):\n        raise RuntimeError\n\n\n"
        "def dicecup_adjust_score(ctx, score):\n    raise Mute()\n",
        "dicecup_adjust_score",
    ),
    "exit_in_hook": ("def dicecup_turn_status(ctx):\n    raise SystemExit(0)\n", "dicecup_turn_status"),
}
#: what fails before any variant is loaded: every command refuses it, `variants` too
EARLY_FILES = {
    "exit_at_import": ("raise SystemExit(0)\n", "importing it failed: SystemExit"),
    "register_returns": ("def dicecup_register_variants(register):\n    return 5\n", "dicecup_register_variants"),
    "register_exits": (
        "def dicecup_register_patterns(register):\n    raise SystemExit(1)\n",
        "dicecup_register_patterns",
    ),
}


def commands(save: Path, variant_file: Path) -> dict[str, list[str]]:
    return {
        "score": ["score", "-v", "yacht", "66666"],
        "show": ["show", "-v", "yacht"],
        "play": ["play", "-v", "yacht", "-p", "bot:random", "-p", "bot:random:b", "--rounds", "1"],
        "solve": ["solve", "-v", "yacht", "-q"],
        "simulate": ["simulate", "-v", "yacht", "-n", "5", "-q"],
        "advise": ["advise", "-v", "yacht", "-d", "11256", "-q", "--json", "-r", "1"],
        "validate": ["validate", str(variant_file)],
        "odds": ["odds", "-v", "yacht", "-d", "11256"],
        "review": ["review", str(save)],
    }


def _write_plugin(folder: Path, name: str, body: str) -> Path:
    path = folder / f"{name}.py"
    hooks = re.sub(r"^def ", "@dicecup.hookimpl\ndef ", body, flags=re.M)
    path.write_text(f"import dicecup\n\n\n{hooks}")
    return path


@pytest.fixture(scope="module")
def cli_files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(a finished save of yacht, played by the CLI without plugins; yacht's variant file, copied)."""
    from dicecup.cli.app import app

    folder = tmp_path_factory.mktemp("hostile")
    save = folder / "game.json"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DICECUP_DISABLE_PLUGIN_AUTOLOAD", "1")
        done = CliRunner().invoke(
            app, ["play", "-v", "yacht", "-p", "bot:random", "--rounds", "1", "--seed", "3", "--save", str(save)]
        )
    assert done.exit_code == 0 and save.exists(), done.output
    variant_file = folder / "yacht-copy.yaml"
    source = (Path(__file__).resolve().parent.parent / "variants" / "yacht.yaml").read_text()
    variant_file.write_text(source.replace("id: yacht", "id: yacht-copy", 1))
    return save, variant_file


def run_cli(plugin: Path, args: list[str]) -> Any:
    from dicecup.cli.app import app

    return CliRunner().invoke(app, ["--plugin", str(plugin), *args])


def _assert_one_error(result: Any, plugin: Path, words: str) -> None:
    lines = result.stderr.splitlines()
    assert result.exit_code == 2, (result.exit_code, result.output, result.stderr)
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert "Traceback" not in result.stderr and str(plugin.name) in lines[0] and words in lines[0], lines[0]


CLI_CASES = [(name, command) for name in HOSTILE_FILES for command in commands(Path(), Path())]
QUICK_CLI = {(name, list(commands(Path(), Path()))[i % 9]) for i, name in enumerate(HOSTILE_FILES)} | {
    ("score_float", c) for c in commands(Path(), Path())
}


@pytest.mark.parametrize(
    ("name", "command"),
    [pytest.param(n, c, marks=() if (n, c) in QUICK_CLI else pytest.mark.slow) for n, c in CLI_CASES],
)
def test_each_command_refuses_a_hostile_plugin_file_with_one_error_line(
    cli_env, cli_files, monkeypatch, tmp_path, name, command
):
    """`dicecup --plugin FILE.py COMMAND`: exit 2 and one `error:` line naming the file, the hook and the value,
    no traceback; solve and simulate stop before any table is built (the cache stays empty)."""
    solver = importlib.import_module("dicecup.solver.solve")

    def no_table(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a table was built")

    monkeypatch.setattr(solver, "backward", no_table)
    monkeypatch.setattr(solver, "backward_jit", no_table)
    save, variant_file = cli_files
    source, hook = HOSTILE_FILES[name]
    plugin = _write_plugin(tmp_path, name, source)
    result = run_cli(plugin, commands(save, variant_file)[command])
    _assert_one_error(result, plugin, hook)
    cache = tmp_path / "cache"
    assert not cache.exists() or not any(p.is_file() for p in cache.rglob("*"))


@pytest.mark.parametrize("name", sorted(EARLY_FILES))
@pytest.mark.parametrize("command", ["variants", "score", "solve"])
def test_a_plugin_file_failing_before_any_variant_is_one_error_line(cli_env, tmp_path, name, command):
    """SystemExit at import, or a registration hook returning or raising, is an error (exit 2), never a
    silent exit 0: `variants`, which loads no variant, refuses it too."""
    source, words = EARLY_FILES[name]
    plugin = _write_plugin(tmp_path, name, source)
    args = {"variants": ["variants"], "score": ["score", "-v", "yacht", "66666"], "solve": ["solve", "-v", "yacht"]}
    _assert_one_error(run_cli(plugin, args[command]), plugin, words)


def test_a_plugin_file_raising_system_exit_at_import_is_a_plugin_error(tmp_path):
    path = tmp_path / "bye.py"
    path.write_text("import sys\nsys.exit(0)\n")
    with pytest.raises(PluginError, match=r"plugin file .*bye\.py:2: importing it failed: SystemExit: 0"):
        Engine(entry_points=False, plugin_files=[path])
