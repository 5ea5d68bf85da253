"""The plugin hooks: every hook documented and exercised, misspelt or unmarked hooks
rejected, a third-party plugin adding a pattern, scorer, rule and variant, engines
keeping their plugins apart, and rule hooks called only for variants that enable them."""

from __future__ import annotations

import inspect
import random
import re
from collections import Counter
from fractions import Fraction
from pathlib import Path

import pytest

from dicecup import (
    Award,
    BoxFlag,
    BoxTotal,
    Card,
    Engine,
    GameState,
    IllegalAction,
    ParameterError,
    PluginError,
    Progress,
    RandomBot,
    RuleAction,
    StateUpdate,
    VariantError,
    hookimpl,
)
from dicecup.language import hookspecs
from dicecup.testing import check_variant, play_random, turn

HOOKS = sorted(n for n, f in vars(hookspecs).items() if n.startswith("dicecup_") and callable(f))
RULE_HOOKS = (
    "dicecup_legal_boxes",
    "dicecup_explain",
    "dicecup_adjust_score",
    "dicecup_extra_points",
    "dicecup_turn_events",
    "dicecup_event_names",
    "dicecup_end_bonuses",
    "dicecup_instant_win",
    "dicecup_settle",
    "dicecup_actions",
    "dicecup_apply_action",
    "dicecup_may_reroll",
    "dicecup_turn_status",
    "dicecup_progress",
    "dicecup_solitaire_notes",
    "dicecup_state_flags",
    "dicecup_state_totals",
)

SPY_GAME = """\
id: spy-game
name: Spy game
dice: {count: 3}
turn: {rolls: 2}
boxes:
  low:   {pattern: {kind: sum_at_most, limit: 8}, score: {kind: times, factor: 2}}
  any:   {pattern: always, score: total, first_roll: {multiply: 2}}
  trips: {pattern: {kind: of_a_kind, n: 3}, score: 30}
rules:
  spy: {award: 7}
"""


class Spy:
    """A third-party plugin implementing every hook, counting the calls it gets."""

    def __init__(self) -> None:
        self.calls: Counter[str] = Counter()

    @hookimpl
    def dicecup_register_patterns(self, register):
        self.calls["dicecup_register_patterns"] += 1

        def sum_at_most(ctx, limit):
            """Met when the dice add up to at most `limit`; the combination is all the dice."""
            if isinstance(limit, bool) or not isinstance(limit, int):
                raise ValueError(f"limit must be a whole number, got {limit!r}")
            return lambda roll: roll.dice if roll.total <= limit else None

        register("sum_at_most", sum_at_most)

    @hookimpl
    def dicecup_register_scorers(self, register):
        self.calls["dicecup_register_scorers"] += 1
        register("times", lambda ctx, factor: lambda comb, roll: factor * sum(comb))

    @hookimpl
    def dicecup_register_rules(self, register):
        self.calls["dicecup_register_rules"] += 1
        register(
            "spy",
            {"award": 5},
            "Test rule: 666 must go to trips, 111 served wins, trips earn `award`; once a game, `peek` ends the rolling.",
            actions={"peek": "stop rolling this turn (once a game)"},
        )

    @hookimpl
    def dicecup_register_bots(self, register):
        self.calls["dicecup_register_bots"] += 1
        register("spybot", RandomBot, "a random player, registered by the spy")

    @hookimpl
    def dicecup_register_variants(self, register):
        self.calls["dicecup_register_variants"] += 1
        register(text=SPY_GAME, source="spy-plugin/spy-game.yaml")

    @hookimpl
    def dicecup_legal_boxes(self, ctx):
        self.calls["dicecup_legal_boxes"] += 1
        if ctx.roll.dice == (6, 6, 6) and "trips" in ctx.open_boxes:
            return ["trips"]
        return None

    @hookimpl
    def dicecup_explain(self, ctx, box):
        self.calls["dicecup_explain"] += 1
        if ctx.roll is not None and ctx.roll.dice == (6, 6, 6) and box != "trips" and "trips" in ctx.open_boxes:
            return "666 must go to trips"
        return None

    @hookimpl
    def dicecup_actions(self, ctx):
        self.calls["dicecup_actions"] += 1
        if ctx.rolls_used == 1 and "spy" not in ctx.player_state:
            return [RuleAction("spy", "peek")]
        return None

    @hookimpl
    def dicecup_apply_action(self, ctx, action):
        self.calls["dicecup_apply_action"] += 1
        return StateUpdate(turn="peeked", player={"peeks": 1})

    @hookimpl
    def dicecup_may_reroll(self, ctx):
        self.calls["dicecup_may_reroll"] += 1
        return False if ctx.turn_state.get("spy") == "peeked" else None

    @hookimpl
    def dicecup_turn_status(self, ctx):
        self.calls["dicecup_turn_status"] += 1
        return ["peeked: score now"] if ctx.turn_state.get("spy") == "peeked" else None

    @hookimpl
    def dicecup_progress(self, variant, card):
        self.calls["dicecup_progress"] += 1
        return [Progress("spy_end", cell="low?" if "low" not in card.scores else "", line="Low bonus: fill low")]

    @hookimpl
    def dicecup_solitaire_notes(self, variant):
        self.calls["dicecup_solitaire_notes"] += 1
        return ["the spy peeks"]

    @hookimpl
    def dicecup_state_totals(self, variant):
        self.calls["dicecup_state_totals"] += 1
        return [BoxTotal("spy_low", ["low"])]

    @hookimpl
    def dicecup_adjust_score(self, ctx, score):
        self.calls["dicecup_adjust_score"] += 1
        return score + 1 if ctx.box.id == "any" and ctx.first_roll else None

    @hookimpl
    def dicecup_extra_points(self, ctx):
        self.calls["dicecup_extra_points"] += 1
        if ctx.box.id == "trips" and ctx.score > 0:
            return [Award("spy_award", ctx.variant.rule("spy")["award"], "Spy award")]
        return None

    @hookimpl
    def dicecup_turn_events(self, ctx):
        self.calls["dicecup_turn_events"] += 1
        return {"spy_trips": 1} if ctx.box.id == "trips" and ctx.score > 0 else None

    @hookimpl
    def dicecup_event_names(self, variant):
        self.calls["dicecup_event_names"] += 1
        return {"spy_trips": "Trips made"}

    @hookimpl
    def dicecup_end_bonuses(self, variant, card):
        self.calls["dicecup_end_bonuses"] += 1
        return [Award("spy_end", 3, "Low bonus")] if card.scores.get("low", 0) > 0 else None

    @hookimpl
    def dicecup_instant_win(self, ctx, players):
        self.calls["dicecup_instant_win"] += 1
        return True if ctx.first_roll and ctx.roll.dice == (1, 1, 1) else None

    @hookimpl
    def dicecup_settle(self, variant, totals):
        self.calls["dicecup_settle"] += 1
        best = max(totals.values())
        winners = [p for p, t in totals.items() if t == best]
        if len(winners) == len(totals):
            return {p: Fraction(0) for p in totals}
        losers = len(totals) - len(winners)
        return {p: Fraction(losers, len(winners)) if p in winners else Fraction(-1) for p in totals}

    @hookimpl
    def dicecup_state_flags(self, variant):
        self.calls["dicecup_state_flags"] += 1
        return [BoxFlag("low", 0)]


@pytest.fixture
def spy() -> Spy:
    return Spy()


@pytest.fixture
def spy_engine(spy) -> Engine:
    return Engine(plugins=[spy], entry_points=False)


# ----------------------------------------------------------------------------- documentation


def test_every_hookspec_is_documented():
    assert len(HOOKS) == 22
    for name in HOOKS:
        doc = inspect.getdoc(getattr(hookspecs, name))
        assert doc and len(doc) > 80, f"{name} needs a docstring that says how it is called"
        assert getattr(getattr(hookspecs, name), "dicecup_spec", None) is not None, f"{name} is not a hookspec"


def test_every_hookspec_is_exercised_by_a_test():
    """Datasette-style: each hook name appears in some test module besides this list's own."""
    here = Path(__file__)
    sources = {p.name: p.read_text(encoding="utf-8") for p in here.parent.glob("test_*.py")}
    for name in HOOKS:
        users = [f for f, text in sources.items() if f"def {name}(" in text]
        assert users, f"no test implements {name}"


def test_the_spy_receives_every_hook(spy, spy_engine):
    v = spy_engine.variant("spy-game")
    v.state_flags()
    v.state_totals()
    v.solitaire_notes()
    v.progress(Card())
    assert v.event_names() == {"spy_trips": "Trips made"}
    report = check_variant(spy_engine, "spy-game", games=4, seed=2, players=(1, 2))
    assert report.rule_actions > 0 and report.contract_checks > 0
    state = play_random(GameState.new(v, 2), random.Random(5))[0]
    state.settlement()
    GameState.new(v, 2).roll(dice=(1, 1, 1))
    rolled = GameState.new(v, 1).roll(dice=(6, 6, 6))
    rolled.turn_status()
    with pytest.raises(IllegalAction, match="666 must go to trips"):
        rolled.score("any")
    assert set(spy.calls) == set(HOOKS)
    registration = [n for n in HOOKS if n.startswith("dicecup_register_")]
    assert len(registration) == 5 and set(HOOKS) - set(registration) == set(RULE_HOOKS)
    assert all(spy.calls[name] == 1 for name in registration)  # once per engine


# ----------------------------------------------------------------------------- registration


def test_plugin_adds_pattern_scorer_rule_and_variant(spy_engine):
    assert "spy-game" in spy_engine.variant_ids()
    assert {"sum_at_most", "times"} <= set(spy_engine.patterns) | set(spy_engine.scorers)
    assert spy_engine.rules["spy"].params == {"award": 5}
    v = spy_engine.variant("spy-game")
    assert v.source == "spy-plugin/spy-game.yaml" and dict(v.rule("spy")) == {"award": 7}
    card = Card()
    low = v.roll_of((1, 2, 3))
    assert v.score(card, "low", low).score == 12  # sum 6 <= 8, times 2
    assert v.score(card, "low", v.roll_of((3, 3, 4))).score == 0  # sum 10: not met
    assert v.score(card, "any", low, first_roll=True).score == 6 * 2 + 1  # the served x2 first, then +1
    assert v.score(card, "any", low).score == 6
    trips = v.score(card, "trips", v.roll_of((4, 4, 4)))
    assert (trips.score, [(a.id, a.points) for a in trips.awards]) == (30, [("spy_award", 7)])
    assert v.legal_boxes(card, v.roll_of((6, 6, 6))) == ("trips",)
    assert [a.points for a in v.end_bonuses(Card({"low": 12}))] == [3]
    assert v.state_flags() == (BoxFlag("low", 0),)
    assert v.turn_events(card, "trips", v.roll_of((4, 4, 4))) == {"spy_trips": 1}
    assert v.turn_events(card, "trips", v.roll_of((4, 4, 5))) == {}


def test_a_plugin_action_and_its_state_go_through_the_api_and_saves(spy_engine):
    v = spy_engine.variant("spy-game")
    state = GameState.new(v, ["a", "b"]).roll(dice=(2, 3, 5))
    peek = RuleAction("spy", "peek")
    assert peek in state.legal_actions() and state.rule_actions() == (peek,)
    peeked = state.apply(peek)
    assert peeked.turn_state == {"spy": "peeked"} and peeked.player_state[0] == {"spy": {"peeks": 1}}
    assert peeked.legal_keeps() == () and peek not in peeked.legal_actions()
    assert peeked.turn_status() == ("peeked: score now",)
    with pytest.raises(IllegalAction, match="the rules do not allow another roll now"):
        peeked.keep((2,))
    assert GameState.from_json(peeked.to_json(), spy_engine) == peeked
    after = peeked.score("any")  # the turn ends: its state is cleared, the player's stays
    assert after.turn_state == {} and after.player_state[0] == {"spy": {"peeks": 1}}
    back = GameState.from_json(after.to_json(), spy_engine)
    assert back == after and back.history == after.history
    second = turn(after, "low", (1, 1, 2)).roll(dice=(3, 4, 5))
    assert second.player == "a" and second.rule_actions() == ()  # once a game
    with pytest.raises(IllegalAction, match="'peek' is not possible now"):
        second.act(peek)
    spybot = spy_engine.make_bot("spybot")  # a plugin's bot comes wrapped: its moves are checked to be legal
    assert "spybot" in spy_engine.bot_names() and isinstance(spybot.bot, RandomBot) and spybot.name == "random"


def test_plugin_variant_plays_through_the_api(spy, spy_engine):
    v = spy_engine.variant("spy-game")
    state = GameState.new(v, ["a", "b"])
    state = turn(state, "trips", (2, 2, 2))  # a: 30 + 7
    assert state.roll(dice=(1, 1, 1)).over  # b: served 111 wins at once
    state = turn(state, "low", (1, 1, 2))  # b: 8
    state = turn(state, "low", (1, 2, 3))  # a: 12
    state = turn(state, "any", (5, 5, 6), ((5, 5), (5,)))  # b: 15
    state = turn(state, "any", (2, 3, 4))  # a: served 9 x 2 + 1 = 19
    state = turn(state, "trips", (1, 2, 6))  # b: 0
    assert state.over
    assert state.totals() == (30 + 7 + 12 + 19 + 3, 8 + 15 + 0 + 3)
    assert state.settlement() == {"a": 1, "b": -1}


def test_plugin_variant_option_errors_still_name_the_source(spy_engine):
    with pytest.raises(VariantError, match="spy-plugin/spy-game.yaml"):
        spy_engine.variant("spy-game", {"award": 9})


# ----------------------------------------------------------------------------- isolation


def test_rule_hooks_are_not_called_for_variants_without_the_rule(spy, spy_engine):
    before = Counter(spy.calls)
    check_variant(spy_engine, "yahtzee", games=3, seed=4, players=(1, 2))
    spy_engine.variant("yahtzee").state_flags()
    spy_engine.variant("russian").settle({"a": 1, "b": 2, "c": 3})
    assert spy.calls == before, "the spy rule hooks ran for variants that do not enable `spy`"
    check_variant(spy_engine, "spy-game", games=1, seed=4, players=(2,))
    assert all(spy.calls[h] > before[h] for h in ("dicecup_legal_boxes", "dicecup_adjust_score", "dicecup_end_bonuses"))


def test_a_plugin_without_rules_applies_to_every_variant():
    class Flat:
        @hookimpl
        def dicecup_end_bonuses(self, variant, card):
            return [Award("flat", 1, "Flat")]

    engine = Engine(plugins=[Flat()], entry_points=False)
    assert engine.variant("yacht").total(Card()) == 1
    assert engine.variant("yahtzee").total(Card({"chance": 20})) == 21


def test_two_engines_keep_their_plugins_to_themselves(spy, spy_engine, engine):
    plain = Engine(entry_points=False)
    assert "spy-game" not in plain.variant_ids() and "spy-game" not in engine.variant_ids()
    assert "sum_at_most" not in plain.patterns and "spy" not in plain.rules
    before = Counter(spy.calls)
    check_variant(plain, "generala", games=2, seed=1, players=(2,))
    assert spy.calls == before
    other = Engine(plugins=[Spy()], entry_points=False)
    assert other.variant("spy-game") is not spy_engine.variant("spy-game")


def test_a_plugin_variant_does_not_compile_without_its_plugin(engine, tmp_path):
    path = tmp_path / "spy.yaml"
    path.write_text(SPY_GAME)
    with pytest.raises(VariantError) as err:
        engine.load_file(path)
    assert "unknown pattern 'sum_at_most'" in str(err.value) and err.value.line == 6


# ----------------------------------------------------------------------------- bad plugins


def test_misspelt_hook_is_an_error():
    class Typo:
        @hookimpl
        def dicecup_legal_boxs(self, ctx):
            return None

    with pytest.raises(PluginError) as err:
        Engine(plugins=[Typo()], entry_points=False)
    assert str(err.value) == (
        "plugin 'Typo' implements dicecup_legal_boxs, which is not a dicecup hook; did you mean dicecup_legal_boxes?"
    )


def test_unmarked_hook_is_an_error():
    class Unmarked:
        def dicecup_end_bonuses(self, variant, card):
            return [Award("never", 1)]

    with pytest.raises(PluginError, match="without @dicecup.hookimpl, so it would never be called"):
        Engine(plugins=[Unmarked()], entry_points=False)


def test_hook_with_wrong_arguments_is_an_error():
    class WrongArgs:
        @hookimpl
        def dicecup_legal_boxes(self, context):
            return None

    with pytest.raises(
        PluginError, match=r"(?s)cannot register plugin 'WrongArgs'.*\{'context'\} are declared in the hookimpl"
    ):
        Engine(plugins=[WrongArgs()], entry_points=False)


def test_names_registered_twice_are_errors():
    class ClashPattern:
        @hookimpl
        def dicecup_register_patterns(self, register):
            register("face", lambda ctx: lambda roll: None)

    class ClashVariant:
        @hookimpl
        def dicecup_register_variants(self, register):
            register(
                text="id: yahtzee\ndice: {count: 1}\nboxes: {a: {pattern: always, score: 1}}\n", source="mine.yaml"
            )

    class ClashRule:
        @hookimpl
        def dicecup_register_rules(self, register):
            register("joker", {})

    with pytest.raises(PluginError, match="pattern 'face' is registered twice"):
        Engine(plugins=[ClashPattern()], entry_points=False)
    with pytest.raises(PluginError, match="variant id 'yahtzee' from mine.yaml is already registered"):
        Engine(plugins=[ClashVariant()], entry_points=False)
    with pytest.raises(PluginError, match="rule 'joker' is registered twice"):
        Engine(plugins=[ClashRule()], entry_points=False)


def test_a_variant_registered_with_its_id_is_parsed_when_first_used():
    """`register(text=..., id=...)` defers the parse: a broken file does not stop the engine, and the
    error comes, with its file and line, when that variant is asked for (or its id does not match)."""

    class Lazy:
        @hookimpl
        def dicecup_register_variants(self, register):
            game = "id: {id}\ndice: {{count: 1}}\nboxes: {{a: {{pattern: always, score: 1}}}}\n"
            register(text=game.format(id="lazy-ok"), source="ok.yaml", id="lazy-ok")
            register(text="id: lazy-bad\nboxes: [unclosed\n", source="bad.yaml", id="lazy-bad")
            register(text=game.format(id="something-else"), source="named.yaml", id="lazy-named")

    engine = Engine(plugins=[Lazy()], entry_points=False)  # nothing above is parsed yet
    assert {"lazy-ok", "lazy-bad", "lazy-named"} <= set(engine.variant_ids())
    assert engine.variant("lazy-ok").box_ids == ("a",)
    with pytest.raises(VariantError, match=r"bad\.yaml.*line \d") as bad:
        engine.variant("lazy-bad")
    assert "lazy-ok" not in str(bad.value)
    with pytest.raises(VariantError, match=r"declares id 'something-else' but was registered as 'lazy-named'"):
        engine.variant("lazy-named")

    class Clash:
        @hookimpl
        def dicecup_register_variants(self, register):
            register(text="never parsed", source="mine.yaml", id="yahtzee")

    with pytest.raises(PluginError, match="variant id 'yahtzee' from mine.yaml is already registered"):
        Engine(plugins=[Clash()], entry_points=False)

    class BadId:
        @hookimpl
        def dicecup_register_variants(self, register):
            register(text="id: x\n", id=7)

    with pytest.raises(PluginError, match="a variant id must be a non-empty string, got 7"):
        Engine(plugins=[BadId()], entry_points=False)


# ----------------------------------------------------------------------------- calling through pluggy


def test_a_hookimpl_may_take_a_subset_of_the_arguments():
    class Lean:
        @hookimpl
        def dicecup_adjust_score(self, score):  # no ctx: pluggy passes only what is asked for
            return score + 1

        @hookimpl
        def dicecup_legal_boxes(self):
            return None

    engine = Engine(plugins=[Lean()], entry_points=False)
    v = engine.variant("yacht")
    roll = v.roll_of((6, 6, 6, 6, 6))
    assert v.score(Card(), "yacht", roll).score == 51
    assert len(v.legal_boxes(Card(), roll)) == 12


def test_monitoring_and_tracing_see_every_rule_hook_call_while_on():
    engine = Engine(entry_points=False)
    v = engine.variant("yahtzee")
    roll = v.roll_of((6, 6, 6, 6, 6))
    seen: list[str] = []
    stop = engine.pm.add_hookcall_monitoring(lambda name, impls, kwargs: seen.append(name), lambda *a: None)
    assert v.score(Card(), "sixes", roll).score == 30
    assert v.legal_boxes(Card(), roll)
    assert {"dicecup_adjust_score", "dicecup_extra_points", "dicecup_legal_boxes"} <= set(seen)
    stop()
    stop()  # undoing twice is harmless: the fast path comes back once, not below zero watchers
    seen.clear()
    assert v.score(Card(), "sixes", roll).score == 30
    assert seen == []  # no longer watched: plain hooks skip pluggy again, and nobody is told
    traced: list[str] = []
    engine.pm.trace.root.setwriter(traced.append)
    undo = engine.pm.enable_tracing()
    v.end_bonuses(Card())
    undo()
    assert any("dicecup_end_bonuses" in line for line in traced)


def test_a_wrapper_hookimpl_keeps_error_messages_working():
    class Wrapping:
        @hookimpl(wrapper=True)
        def dicecup_legal_boxes(self, ctx):
            result = yield
            return result

        @hookimpl
        def dicecup_register_rules(self, register):
            register("wrapped", {})

    engine = Engine(plugins=[Wrapping()], entry_points=False)
    state = GameState.new(engine.variant("russian"), 1).roll(dice=(3, 3, 5, 6, 6))
    with pytest.raises(IllegalAction, match="Two pairs is a stage-2 box: fill every stage-1 box first"):
        state.score("two_pairs")
    assert engine.variant("russian").blocking_rules(Card(), state.roll_now, True, "two_pairs") == ("stage_order",)


def test_a_plugin_that_raises_is_named_in_a_plugin_error():
    class Broken:
        @hookimpl
        def dicecup_end_bonuses(self, variant, card):
            raise KeyError("oops")

    engine = Engine(plugins=[Broken()], entry_points=False)
    with pytest.raises(PluginError, match=r"plugin 'Broken' failed in dicecup_end_bonuses: KeyError: 'oops'"):
        engine.variant("yacht")


def test_engines_with_different_plugins_never_give_equal_variants():
    """The fingerprint (and so every cache key) covers the plugins that implement a variant."""

    class Bonus:
        @hookimpl
        def dicecup_end_bonuses(self, variant, card):
            return [Award("house", 10, "House")] if len(card.scores) == len(variant.boxes) else None

    plain = Engine(entry_points=False)
    housed = Engine(plugins=[Bonus()], entry_points=False)
    a, b = plain.variant("yacht"), housed.variant("yacht")
    assert a != b and a.fingerprint != b.fingerprint
    assert Engine(entry_points=False).variant("yacht") == a  # the same plugins: the same variant
    from dicecup.solver.cache import cache_path

    assert cache_path(a) != cache_path(b)


def test_plugin_objects_with_other_settings_give_other_variants():
    class Flat:
        def __init__(self, points: int) -> None:
            self.points = points

        @hookimpl
        def dicecup_end_bonuses(self, variant, card):
            return [Award("flat", self.points, "Flat")]

    ten = Engine(plugins=[Flat(10)], entry_points=False).variant("yacht")
    twenty = Engine(plugins=[Flat(20)], entry_points=False).variant("yacht")
    assert ten.fingerprint != twenty.fingerprint and ten != twenty
    assert Engine(plugins=[Flat(10)], entry_points=False).variant("yacht").fingerprint == ten.fingerprint


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        (["joker_used"], "returned ['joker_used'] (list), not a mapping"),
        ({"lucky": True}, "whose 'lucky' is True (bool), not an int"),
        ({"lucky": 1.5}, "whose 'lucky' is 1.5 (float), not an int"),
        ({"lucky": -1}, "whose 'lucky' is -1, out of the range 0 to 1,000,000,000"),
        ({3: 1}, "whose key is 3 (int), not an id"),
    ],
)
def test_a_bad_turn_events_answer_is_a_plugin_error_naming_the_plugin(answer, message):
    class BadEvents:
        @hookimpl
        def dicecup_turn_events(self, ctx):
            return answer

    engine = Engine(plugins=[BadEvents()], entry_points=False)
    with pytest.raises(PluginError, match=rf"plugin 'BadEvents': dicecup_turn_events .*{re.escape(message)}"):
        v = engine.variant("yacht")  # (refused as it loads: its rules are asked every game-free question then)
        v.turn_events(Card(), v.box_ids[0], v.roll_of((1, 1, 1, 1, 1)))


def test_bad_event_names_are_a_plugin_error_naming_the_plugin():
    class BadNames:
        @hookimpl
        def dicecup_event_names(self, variant):
            return ["lucky"]

    engine = Engine(plugins=[BadNames()], entry_points=False)
    with pytest.raises(
        PluginError, match=r"plugin 'BadNames': dicecup_event_names returned \['lucky'\] \(list\), not a"
    ):
        engine.variant("yacht")


def test_built_in_events_of_yahtzee():
    """The event bonus reports a Yahtzee in any box; the joker rule a Yahtzee in another box once it is filled."""
    v = Engine(entry_points=False).variant("yahtzee")
    five = v.roll_of((4, 4, 4, 4, 4))
    assert v.event_names() == {"joker_used": "Joker used", "yahtzee_rolled": "Yahtzee rolled"}
    assert v.turn_events(Card(), "yahtzee", five) == {"yahtzee_rolled": 1}
    assert v.turn_events(Card(), "fours", five) == {"yahtzee_rolled": 1}  # yahtzee box open: no joker
    assert v.turn_events(Card({"yahtzee": 0}), "chance", five) == {"yahtzee_rolled": 1, "joker_used": 1}
    assert v.turn_events(Card({"yahtzee": 50}), "chance", v.roll_of((4, 4, 4, 4, 5))) == {}
    off = Engine(entry_points=False).variant("yahtzee", {"joker": "none"})
    assert "joker_used" not in off.event_names()
    assert off.turn_events(Card({"yahtzee": 50}), "chance", five) == {"yahtzee_rolled": 1}


@pytest.mark.parametrize(
    "use",
    [
        lambda card: card.fill("chance", 0).scores.get("ones"),
        lambda card: repr(card.scores),
        lambda card: card.scores.without("ones"),
        lambda card: __import__("pickle").dumps(card.scores),
    ],
)
def test_whole_card_uses_are_traced_as_reading_every_box(use):
    """A rule that copies, prints or pickles the scores depends on all of them: the tracing says so."""
    from dicecup.language.tracing import FILLED, VALUE, traced_card, tracing

    card = traced_card({"ones": 3, "twos": 4})
    with tracing() as reads:
        use(card)
    assert reads.boxes.get("*", 0) == FILLED | VALUE
    assert reads.boxes["ones"] & VALUE and reads.boxes["twos"] & VALUE


def test_open_boxes_of_a_traced_card_report_the_boxes_asked_about():
    """`box in ctx.open_boxes` reads that box's filled bit alone; iterating, counting or comparing the open
    boxes reads every box's (and the tuple still is the open boxes, in card order)."""
    from dicecup import Engine
    from dicecup.language.tracing import FILLED, traced_card, tracing

    v = Engine(entry_points=False).variant("yacht")
    card = traced_card({"ones": 3, "twos": 4})
    with tracing() as reads:
        opened = v.open_boxes(card)
        assert "threes" in opened and "ones" not in opened
    assert reads.boxes == {"threes": FILLED, "ones": FILLED}
    for use in (list, len, lambda o: o == tuple(v.box_ids), lambda o: o[0], lambda o: o.index("threes"), repr):
        with tracing() as reads:
            use(opened)
        assert reads.boxes == dict.fromkeys(v.box_ids, FILLED), use
    assert opened == tuple(b for b in v.box_ids if b not in ("ones", "twos"))


@pytest.mark.parametrize(
    ("raised", "said"),
    [
        (
            ParameterError("limit", "31 is more than 5 dice can show"),
            "at boxes -> high -> pattern -> limit: bad parameter",
        ),
        (ValueError("not a face"), "at boxes -> high -> pattern: bad parameter for pattern 'high_roll': not a face"),
        (ZeroDivisionError("division by zero"), "pattern 'high_roll' failed to build from these parameters "),
    ],
)
def test_a_factory_failure_is_told_from_a_bad_parameter(tmp_path, raised, said):
    """A factory's ParameterError or ValueError is the parameter's fault, at its key; any other exception is the
    plugin's own failure, said as such (it was reported as a bad parameter)."""

    class Patterns:
        @hookimpl
        def dicecup_register_patterns(self, register):
            def high_roll(ctx, limit):
                raise raised

            register("high_roll", high_roll)

    path = tmp_path / "v.yaml"
    path.write_text(
        "id: v\ndice: {count: 5, faces: 6}\nboxes:\n  high:\n    pattern: {kind: high_roll, limit: 31}\n"
        "    score: sum\n  chance: {pattern: always, score: total}\n"
    )
    with pytest.raises(VariantError) as info:
        Engine(plugins=[Patterns()], entry_points=False).load_file(path)
    assert said in str(info.value)
    if isinstance(raised, ZeroDivisionError):
        assert "ZeroDivisionError: division by zero" in str(info.value) and "bad parameter" not in str(info.value)
