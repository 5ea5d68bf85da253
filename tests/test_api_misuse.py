"""API misuse: every public method of GameState and Game, given wrong types or values, raises a
DicecupError subclass saying what was expected (never TypeError, AttributeError, IndexError,
ValueError or KeyError), and the state it was tried on still saves and loads unchanged."""

from __future__ import annotations

import copy
import functools
import json
import random
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest
from attrs import evolve
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dicecup import (
    DicecupError,
    DiceError,
    Game,
    GameState,
    IllegalAction,
    Keep,
    RollDice,
    RuleAction,
    SaveError,
    Score,
    VariantError,
)
from dicecup.testing import turn

HUGE = 10**5000  # more digits than Python will print


@pytest.fixture(scope="module")
def states(engine) -> dict[str, GameState]:
    return all_states(engine)


@functools.cache
def all_states(engine) -> dict[str, GameState]:
    """One state of each kind: chance nodes, decisions, a rule's turn state, awards, a finished game."""
    yahtzee = engine.variant("yahtzee")
    start = GameState.new(yahtzee, ["ann", "bob"])
    awarded = turn(turn(start, "yahtzee", (6, 6, 6, 6, 6)), "chance", (1, 2, 3, 4, 6))
    rolled = awarded.roll(dice=(6, 6, 6, 6, 6))  # ann may take a +100 Yahtzee bonus
    yamb = GameState.new(engine.variant("yamb"), ["ann"]).roll(dice=(1, 1, 1, 2, 3))
    return {
        "start": start,
        "rolled": rolled,
        "held": rolled.keep((6, 6)),
        "yamb": yamb,
        "announced": yamb.act(RuleAction("announced", "announce", "announce.triple")),
        "over": GameState.new(engine.variant("generala"), 2).roll(dice=(3, 3, 3, 3, 3)),
    }


def unchanged(state: GameState, engine) -> None:
    """The state still round-trips through JSON exactly (nothing half-done was left in it)."""
    assert GameState.from_json(state.to_json(), engine) == state


def refused(call, error: type[DicecupError] = IllegalAction, words: str = "") -> str:
    """Run `call`, which must raise `error` (a DicecupError) whose message contains `words`."""
    with pytest.raises(DicecupError) as info:
        call()
    assert isinstance(info.value, error), f"{type(info.value).__name__}: {info.value}"
    assert words in str(info.value)
    return str(info.value)


# ----------------------------------------------------------------------------- GameState moves


@pytest.mark.parametrize(
    ("kind", "call", "error", "words"),
    [
        ("rolled", lambda s: s.keep(3), IllegalAction, "must be a list of die values such as [3, 3, 5], got int 3"),
        ("rolled", lambda s: s.keep([3.0]), IllegalAction, "each die value is a whole number, got float 3.0"),
        (
            "rolled",
            lambda s: s.keep("33"),
            IllegalAction,
            "must be a list of die values such as [3, 3, 5], got str '33'",
        ),
        ("rolled", lambda s: s.keep([True]), IllegalAction, "each die value is a whole number, got bool True"),
        ("rolled", lambda s: s.keep(None), IllegalAction, "got NoneType None"),
        ("rolled", lambda s: s.keep({6}), IllegalAction, "got set"),
        ("rolled", lambda s: s.keep({6: 2}), IllegalAction, "got dict"),
        ("rolled", lambda s: s.keep([HUGE]), DiceError, "die value a 5,001-digit number is out of range"),
        ("rolled", lambda s: s.keep(np.array(6)), IllegalAction, "got ndarray"),
        ("rolled", lambda s: s.keep([6] * 100), IllegalAction, "more than 64 values"),
        ("start", lambda s: s.roll(dice=12345), IllegalAction, "must be a list of die values"),
        ("start", lambda s: s.roll(dice="12345"), IllegalAction, "got str '12345'"),
        (
            "start",
            lambda s: s.roll(dice=[1, 2, 3, 4, 5.0]),
            IllegalAction,
            "each die value is a whole number, got float 5.0",
        ),
        ("start", lambda s: s.roll(dice=[1, 2, 3, 4, 7]), DiceError, "die value 7 is out of range"),
        (
            "start",
            lambda s: s.roll(rng=42),
            IllegalAction,
            "rng must be a random.Random, or give the dice rolled; got int",
        ),
        ("start", lambda s: s.roll(rng="x"), IllegalAction, "got str"),
        (
            "start",
            lambda s: s.roll(rng=np.random.RandomState(1)),
            IllegalAction,
            "numpy generator's randint leaves out",
        ),
        ("start", lambda s: s.roll(rng=np.random.default_rng(1)), IllegalAction, "give the dice"),
        ("start", lambda s: s.roll(random.Random(1), [1, 2, 3, 4, 5]), IllegalAction, "not both"),
        ("start", lambda s: s.roll(), IllegalAction, "give the dice rolled, or a random generator"),
        ("rolled", lambda s: s.score(5), IllegalAction, "a box id is a string such as 'ones', got int 5"),
        ("rolled", lambda s: s.score(None), IllegalAction, "got NoneType None"),
        ("rolled", lambda s: s.score("x" * 10_000), IllegalAction, "no box 'xxxx"),
        ("rolled", lambda s: s.score_preview(5), IllegalAction, "a box id is a string"),
        ("rolled", lambda s: s.score_preview(["chance"]), IllegalAction, "got list ['chance']"),
        (
            "rolled",
            lambda s: s.apply("keep"),
            IllegalAction,
            "not an action (Keep, Score, RollDice or RuleAction): str 'keep'",
        ),
        ("rolled", lambda s: s.apply(None), IllegalAction, "not an action"),
        ("rolled", lambda s: s.apply(("score", "chance")), IllegalAction, "not an action"),
        ("yamb", lambda s: s.act("announce"), IllegalAction, "act takes a RuleAction from rule_actions(), got str"),
        ("yamb", lambda s: s.act(None), IllegalAction, "act takes a RuleAction"),
        ("yamb", lambda s: s.act(Keep([1])), IllegalAction, "act takes a RuleAction"),
        ("yamb", lambda s: s.act(RuleAction(1, 2)), IllegalAction, "rule and name are strings"),
        ("yamb", lambda s: s.act(RuleAction("announced", "announce", object())), IllegalAction, "must be JSON data"),
        ("yamb", lambda s: s.act(RuleAction("announced", "announce", np.array([1, 2]))), IllegalAction, "JSON data"),
        ("yamb", lambda s: s.act(RuleAction("announced", "announce", HUGE)), IllegalAction, "is not possible now"),
        (
            "yamb",
            lambda s: s.act(RuleAction("announced", "announce", "nope")),
            IllegalAction,
            "'announce nope' is not possible now",
        ),
        ("rolled", lambda s: s.breakdown(5), IllegalAction, "there is no player 5; players are numbered 0 to 1"),
        ("rolled", lambda s: s.breakdown("0"), IllegalAction, "there is no player '0'"),
        ("rolled", lambda s: s.breakdown(-1), IllegalAction, "there is no player -1"),
        ("rolled", lambda s: s.breakdown(True), IllegalAction, "there is no player True"),
        ("rolled", lambda s: s.breakdown(HUGE), IllegalAction, "there is no player a 5,001-digit number"),
        (
            "rolled",
            lambda s: s.match_totals("nope"),
            IllegalAction,
            "yahtzee has no figure 'nope'; its figures are score",
        ),
        ("rolled", lambda s: s.match_totals([]), IllegalAction, "no figure []"),
        ("rolled", lambda s: s.match_totals(None), IllegalAction, "no figure None"),
    ],
)
def test_a_wrong_argument_is_a_typed_error(engine, states, kind, call, error, words):
    state = states[kind]
    refused(lambda: call(state), error, words)
    unchanged(state, engine)


class _Dice:
    """A host's generator object: randint(a, b) as random.Random has it, returning what it is told."""

    def __init__(self, value):
        self.value = value

    def randint(self, low, high):
        if isinstance(self.value, Exception):
            raise self.value
        return self.value


@pytest.mark.parametrize(
    ("rng", "error", "words"),
    [
        (_Dice(7), DiceError, "die value 7 is out of range"),
        (_Dice(3.0), IllegalAction, "each die value is a whole number, got float 3.0"),
        (_Dice("3"), IllegalAction, "got str '3'"),
        (_Dice(KeyError("boom")), IllegalAction, "rng.randint(1, 6) failed: KeyError"),
    ],
)
def test_a_generator_that_rolls_nonsense_is_refused(engine, states, rng, error, words):
    refused(lambda: states["start"].roll(rng), error, words)
    unchanged(states["start"], engine)


def test_a_duck_typed_generator_and_numpy_values_work(engine, states):
    """Anything with randint(1, faces) rolls; numpy integers are die values like ints (hosts use numpy)."""
    assert states["start"].roll(_Dice(np.int64(4))).dice == (4, 4, 4, 4, 4)
    rolled = states["start"].roll(dice=np.array([6, 6, 2, 3, 6]))
    assert rolled.dice == (6, 6, 2, 3, 6) and all(type(d) is int for d in rolled.dice)
    kept = rolled.keep([np.int64(6), np.int32(6)])
    assert kept.held == (6, 6)
    final = kept.roll(dice=(np.uint8(6), np.int16(6), np.int64(1)))
    assert final.dice == (6, 6, 6, 6, 1)
    unchanged(final, engine)  # the save holds plain ints: json.dumps would refuse numpy's
    assert json.loads(final.to_json())["dice"] == [6, 6, 6, 6, 1]
    v = states["start"].variant
    assert GameState.new(v, np.int64(3), rounds=np.int64(2)).rounds == 2
    assert final.breakdown(np.int64(1))["player"] == "bob"


# ----------------------------------------------------------------------------- GameState.new


@pytest.mark.parametrize(
    ("players", "words"),
    [
        ([1, 2], "each player name must be printable text of 1 to 64 characters, got 1"),
        (["ann", 2], "got 2"),
        ({"ann", "bob"}, "players must be a number of players or a list of names, got set"),
        ({"ann": 1}, "got dict"),
        ("ann", "got str"),
        (b"ann", "got bytes"),
        (["ann", "ann"], "player names must differ"),
        ([""], "got ''"),
        (["  "], "got '  '"),
        (["a\nb"], "printable"),
        ([], "a game needs at least one player"),
        ([f"p{i}" for i in range(1000)], "a game has at most 16 players, got 1000"),
        (["x" * 10_000], "got 'xxxx"),
        (0, "a game has 1 to 16 players, got 0"),
        (17, "got 17"),
        pytest.param(HUGE, "got a 5,001-digit number", id="huge"),
        (2.0, "got float"),
        (True, "got True"),
        (None, "got NoneType"),
    ],
)
def test_players_must_be_a_count_or_distinct_names(states, players, words):
    message = refused(lambda: GameState.new(states["start"].variant, players), IllegalAction, words)
    assert len(message) < 300  # a 10,000-character name is not echoed whole


@pytest.mark.parametrize(
    ("rounds", "words"),
    [
        (0, "a match has 1 to 1000 rounds, got 0"),
        (-1, "got -1"),
        ("3", "rounds must be a whole number, got str '3'"),
        (True, "got bool True"),
        (2.0, "got float 2.0"),
        (10**9, "got 1000000000"),
        pytest.param(HUGE, "got a 5,001-digit number", id="huge"),
    ],
)
def test_rounds_must_be_a_whole_number_in_range(states, rounds, words):
    refused(lambda: GameState.new(states["start"].variant, 2, rounds), IllegalAction, words)


@pytest.mark.parametrize("variant", ["yahtzee", None, 5, {"id": "yahtzee"}])
def test_new_needs_a_compiled_variant(variant):
    refused(lambda: GameState.new(variant, 1), IllegalAction, "needs a compiled Variant (engine.variant(...))")
    refused(lambda: Game.new(variant, 1), IllegalAction, "needs a compiled Variant")


# ----------------------------------------------------------------------------- loading


@pytest.mark.parametrize(
    ("text", "words"),
    [
        (None, "from_json needs the saved text, got NoneType"),
        (5, "got int"),
        (b"\xff", "not a dicecup save (the bytes are not UTF-8 text)"),
        ("[" * 100_000, "not a dicecup save (invalid JSON: nested too deeply)"),
        ('{"format": "dicecup/state", "version": 2, "players": ' + "9" * 5000 + "}", "a number too long to read"),
        ("{oops", "invalid JSON at line 1, column 2"),
        ("null", "not a dicecup save"),
        ('{"format": "dicecup/state", "version": NaN}', "version nan is not supported"),
    ],
)
def test_from_json_refuses_what_is_not_a_save(engine, text, words):
    refused(lambda: GameState.from_json(text, engine), SaveError, words)


@pytest.mark.parametrize("bad_engine", [None, "engine", 5, object()])
def test_loading_needs_an_engine(states, bad_engine):
    text = states["rolled"].to_json()
    refused(lambda: GameState.from_json(text, bad_engine), IllegalAction, "from_json needs the Engine")
    refused(lambda: GameState.from_dict(json.loads(text), bad_engine), IllegalAction, "from_dict needs the Engine")


def _paths(data, path=()):
    """Every key path of a JSON document (dict keys and list indices), parents before children."""
    if path:
        yield path
    items = data.items() if isinstance(data, dict) else enumerate(data) if isinstance(data, list) else ()
    for key, value in items:
        yield from _paths(value, path + (key,))


def _replaced(data, path, value):
    out = copy.deepcopy(data)
    node = out
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return out


@pytest.mark.parametrize("kind", ["held", "announced"])
def test_every_key_of_a_save_replaced_by_garbage_is_refused_or_harmless(engine, states, kind):
    """Each key of a real save (awards, a held roll, a rule's turn state) replaced in turn by None, a
    string, a huge number and a nested list: SaveError, or the same game (a renamed player, or a key
    loading does not need)."""
    state = states[kind]
    data = json.loads(state.to_json())
    refusals = 0
    for path in _paths(data):
        for bad in (None, "x", HUGE, 2**70, [[[[[]]]]]):
            try:
                back = GameState.from_dict(_replaced(data, path, bad), engine)
            except SaveError:
                refusals += 1
            else:
                assert evolve(back, players=state.players) == state, f"{path} = {bad!r:.20} loaded another game"
                unchanged(back, engine)
    assert refusals > 100


def test_a_huge_number_in_a_save_names_its_key(engine, states):
    data = json.loads(states["held"].to_json())
    words = "save file key 'history[0][1][2]' holds a number far too large for a game"
    refused(lambda: GameState.from_dict(_replaced(data, ("history", 0, 1, 2), HUGE), engine), SaveError, words)


@pytest.mark.parametrize(
    ("version", "where"),
    [(HUGE, "'version'"), ((None, HUGE), "'version[1]'"), ([HUGE], "'version[0]'")],
    ids=["int", "tuple", "list"],
)
def test_a_number_too_long_to_print_in_a_host_dict_names_its_key(engine, states, version, where):
    """Found by the fuzz: a tuple holding an int of over 4,300 digits (which cannot be repr'd) crashed
    the version message with ValueError; tuples are searched like lists now."""
    data = {**states["start"].to_dict(), "version": version}
    refused(lambda: GameState.from_dict(data, engine), SaveError, f"save file key {where} holds a number far too large")


def test_what_json_cannot_hold_in_a_host_dict_names_its_key(engine, states):
    """Found by the fuzz: a numpy array as the version raised numpy's ValueError on comparison."""
    data = states["start"].to_dict()
    refused(
        lambda: GameState.from_dict({**data, "version": np.array([6, 6])}, engine),
        SaveError,
        "save file key 'version' holds a ndarray, not a JSON value",
    )
    refused(
        lambda: GameState.from_dict({**data, "options": {3: "x"}}, engine),
        SaveError,
        "save file key 'options' has a key 3 that is not text",
    )


# ----------------------------------------------------------------------------- Game


@pytest.mark.parametrize(
    ("seed", "words"),
    [
        (1.5, "a seed is a whole number such as 7 (or None for fresh dice), got float 1.5"),
        ("abc", "got str 'abc'"),
        (True, "got bool True"),
        ([1], "got list [1]"),
        (b"\x00", "got bytes"),
    ],
)
def test_a_seed_is_a_whole_number(states, seed, words):
    v = states["start"].variant
    refused(lambda: Game.new(v, 1, seed=seed), IllegalAction, words)
    refused(lambda: Game(states["start"], seed=seed), IllegalAction, words)


def test_numpy_and_plain_seeds_give_the_same_dice(states):
    v = states["start"].variant
    assert Game.new(v, 1, seed=np.int64(7)).roll() == Game.new(v, 1, seed=7).roll()
    assert Game.new(v, 1, seed=7).seed == 7 and type(Game.new(v, 1, seed=np.int64(7)).seed) is int


@pytest.mark.parametrize(
    ("make", "words"),
    [
        (lambda s: Game("state"), "Game needs a GameState (or use Game.new(variant, players)), got str"),
        (lambda s: Game(None), "got NoneType"),
        (lambda s: Game(s, rng=5), "rng must be a random.Random, got int"),
        (lambda s: Game(s, seed=1, rng=random.Random(1)), "a seed or a random generator, not both"),
        (lambda s: Game.new(s.variant, "ann"), "got str"),
        (lambda s: Game.new(s.variant, 1, rounds="3"), "rounds must be a whole number"),
    ],
)
def test_a_game_handle_checks_its_arguments(states, make, words):
    refused(lambda: make(states["start"]), IllegalAction, words)


@pytest.mark.parametrize(
    ("call", "error", "words"),
    [
        (lambda g: g.undo(), IllegalAction, "nothing to undo"),
        (lambda g: g.roll("12345"), IllegalAction, "got str '12345'"),
        (lambda g: g.roll([1, 2, 3]), DiceError, "expected 5 dice, got 3"),
        (lambda g: g.keep(None), IllegalAction, "got NoneType None"),
        (lambda g: g.keep([6]), IllegalAction, "roll the dice first"),
        (lambda g: g.reroll(3), IllegalAction, "must be a list of die values"),
        (lambda g: g.score(5), IllegalAction, "a box id is a string"),
        (lambda g: g.apply("score chance"), IllegalAction, "not an action"),
    ],
)
def test_game_moves_are_checked_and_leave_the_handle_as_it_was(engine, states, call, error, words):
    game = Game(states["start"], seed=1)
    refused(lambda: call(game), error, words)
    assert game.state == states["start"] and game.history == []
    unchanged(game.state, engine)
    game.roll()
    rolled, rng_state = game.state, game.rng.getstate()
    refused(lambda: game.reroll([9]), IllegalAction, "cannot keep [9]")
    refused(lambda: game.reroll([], dice="abc"), IllegalAction, "got str 'abc'")
    assert game.state == rolled and len(game.history) == 1 and game.rng.getstate() == rng_state


# ----------------------------------------------------------------------------- random garbage

_leaf = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=2**64),
    st.floats(),
    st.text(max_size=12),
    st.binary(max_size=6),
    st.sampled_from(["ones", "chance", "announce", "announce.triple", "score", "keep", "P1", "ann"]),
    st.sampled_from([1, -1]).map(lambda sign: sign * HUGE),  # mapped: hypothesis cannot print HUGE itself
    st.sampled_from([np.int64(3), np.float64(2.0), np.array([6, 6]), Fraction(3), Decimal("6"), object(), ...]),
    st.from_type(type).filter(lambda t: t.__module__ == "builtins"),
)
GARBAGE = st.recursive(
    _leaf,
    lambda inner: st.one_of(
        st.lists(inner, max_size=6),
        st.tuples(inner, inner),
        st.dictionaries(st.text(max_size=6), inner, max_size=4),
        st.frozensets(st.integers(0, 7), max_size=4),
        st.builds(RuleAction, inner, inner, inner),
        st.builds(lambda d: d, st.lists(st.integers(0, 7), max_size=6)),  # dice-like: sometimes legal
    ),
    max_leaves=8,
)

SAVE_KEYS = (
    "format",
    "version",
    "variant",
    "source",
    "options",
    "fingerprint",
    "players",
    "start_rounds",
    "history",
    "cards",
    "current",
    "dice",
    "rolls_used",
    "held",
    "banked",
    "round",
    "rounds",
    "replays",
    "results",
    "over",
    "turn_state",
    "player_state",
)

CALLS = {
    "keep": lambda s, e, a, b, k: s.keep(a),
    "roll(dice)": lambda s, e, a, b, k: s.roll(dice=a),
    "roll(rng)": lambda s, e, a, b, k: s.roll(rng=a),
    "roll(rng, dice)": lambda s, e, a, b, k: s.roll(a, b),
    "score": lambda s, e, a, b, k: s.score(a),
    "score_preview": lambda s, e, a, b, k: s.score_preview(a),
    "apply": lambda s, e, a, b, k: s.apply(a),
    "act": lambda s, e, a, b, k: s.act(a),
    "breakdown": lambda s, e, a, b, k: s.breakdown(a),
    "match_totals": lambda s, e, a, b, k: s.match_totals(a),
    "new(players, rounds)": lambda s, e, a, b, k: GameState.new(s.variant, a, b),
    "new(variant)": lambda s, e, a, b, k: GameState.new(a, 1),
    "from_json": lambda s, e, a, b, k: GameState.from_json(a, e),
    "from_json(engine)": lambda s, e, a, b, k: GameState.from_json(s.to_json(), a),
    "from_dict": lambda s, e, a, b, k: GameState.from_dict(a, e),
    "from_dict(key)": lambda s, e, a, b, k: GameState.from_dict({**s.to_dict(), k: a}, e),
    "Game.new": lambda s, e, a, b, k: Game.new(s.variant, a, seed=b),
    "Game(seed, rng)": lambda s, e, a, b, k: Game(s, seed=a, rng=b),
    "Game.roll": lambda s, e, a, b, k: Game(s, seed=1).roll(a),
    "Game.keep": lambda s, e, a, b, k: Game(s).keep(a),
    "Game.reroll": lambda s, e, a, b, k: Game(s, seed=1).reroll(a, b),
    "Game.score": lambda s, e, a, b, k: Game(s).score(a),
    "Game.apply": lambda s, e, a, b, k: Game(s).apply(a),
}


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(
    kind=st.sampled_from(["start", "rolled", "held", "yamb", "announced", "over"]),
    call=st.sampled_from(sorted(CALLS)),
    a=GARBAGE,
    b=GARBAGE,
    key=st.sampled_from(SAVE_KEYS),
)
def test_random_garbage_gives_only_dicecup_errors(engine, kind, call, a, b, key):
    state = all_states(engine)[kind]
    try:
        got = CALLS[call](state, engine, a, b, key)
    except DicecupError:
        pass
    else:  # garbage that happened to be a legal move: what it made saves and loads too
        new = got.state if isinstance(got, Game) else got
        if isinstance(new, GameState):
            unchanged(new, engine)
    unchanged(state, engine)


def test_actions_built_from_garbage_are_typed_errors():
    """The action values themselves check what they hold, so a host cannot build one that saves wrongly."""
    refused(lambda: Keep(5), IllegalAction, "must be a list of die values")
    refused(lambda: Keep([1.5]), IllegalAction, "each die value is a whole number")
    refused(lambda: RollDice("123"), IllegalAction, "got str '123'")
    refused(lambda: RollDice([HUGE]), DiceError, "out of range")
    refused(lambda: Score(None), IllegalAction, "a box id is a string such as 'full_house', got NoneType None")
    assert Keep(np.array([3, 1])) == Keep([1, 3])


def _deep_overlay(levels: int) -> dict:
    out: dict = {}
    inner = out
    for _ in range(levels):
        inner["a"] = {}
        inner = inner["a"]
    return out


loop: dict = {}
loop["boxes"] = loop  # refers to itself: refused by depth, never a RecursionError


@pytest.mark.parametrize(
    ("overlay", "message"),
    [
        ({"dice": {1, 2}}, "at dice: a value must be what YAML can write"),
        ({"name": object()}, "at name: a value must be what YAML can write"),
        ({(1, 2): "x"}, "a key must be a plain value, got tuple"),
        ({"bonuses": {"upper_bonus": {"points": 10**20}}}, "is out of range"),
        ({"boxes": {"ones": {"score": float("nan")}}}, "nan is not a finite number"),
        (_deep_overlay(100), "nested more than 64 levels"),
        (loop, "nested more than 64 levels"),
        ({"turn": {"rolls": "three"}}, "at turn -> rolls"),
        ({"dice": {"sides": 6}}, "unknown key"),
    ],
)
def test_derive_refuses_what_a_variant_file_could_not_hold(engine, overlay, message):
    """`Variant.derive` takes an overlay from code: each bad one is one VariantError saying where."""
    with pytest.raises(VariantError, match=message.replace("(", r"\(")):
        engine.variant("yahtzee").derive(overlay)
    with pytest.raises(DicecupError, match="overlay must be a mapping"):
        engine.variant("yahtzee").derive("dice: 5")  # type: ignore[arg-type]
