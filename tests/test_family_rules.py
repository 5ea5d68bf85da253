"""The rules of the family (docs/games/) through the API: columns and their bonuses,
announcements, banked rolls, colours, points, forced order; and the language pieces they use."""

from __future__ import annotations

import pytest

import dicecup.testing as dicecup_testing
from dicecup import Card, GameState, IllegalAction, RuleAction, VariantError
from dicecup.language.card import Award
from dicecup.testing import turn

# ----------------------------------------------------------------------------- triple yahtzee


def test_triple_yahtzee_columns_multiply_boxes_and_their_upper_bonus(engine):
    v = engine.variant("triple-yahtzee")
    assert [c.multiplier for c in v.columns] == [1, 2, 3] and len(v.boxes) == 39
    upper = {f"x2.{r}": 3 * f for f, r in enumerate(("ones", "twos", "threes", "fours", "fives", "sixes"), 1)}
    card = Card(upper)  # x2: three of each face, 63 before the multiplier
    bonuses = {a.id: a.points for a in v.end_bonuses(card)}
    assert bonuses == {"x2.upper_bonus": 70}  # 35 x 2
    assert v.column_totals(card) == {"x1": 0, "x2": 2 * 63 + 70, "x3": 0}
    assert v.total(card) == 2 * 63 + 70
    almost = Card({**upper, "x2.sixes": 12})
    assert v.end_bonuses(almost) == ()


def test_triple_yahtzee_bonus_needs_every_yahtzee_box_at_50_and_takes_the_column_multiplier(engine):
    v = engine.variant("triple-yahtzee")
    five = v.roll_of((4, 4, 4, 4, 4))
    two = Card({"x1.yahtzee": 50, "x2.yahtzee": 50})
    assert v.score(two, "x1.fours", five).awards == ()  # x3.yahtzee still open
    three = Card({"x1.yahtzee": 50, "x2.yahtzee": 50, "x3.yahtzee": 50})
    got = v.score(three, "x3.fours", five)
    assert [(a.id, a.points, a.column) for a in got.awards] == [("yahtzee_bonus", 300, "x3")]
    assert got.points == 3 * 20 + 300
    zero = Card({"x1.yahtzee": 50, "x2.yahtzee": 0, "x3.yahtzee": 50})
    assert v.score(zero, "x1.fours", five).awards == ()


def test_triple_yahtzee_joker_needs_every_column(engine):
    v = engine.variant("triple-yahtzee")
    five = v.roll_of((2, 2, 2, 2, 2))
    yahtzees = {f"{c}.yahtzee": 50 for c in ("x1", "x2", "x3")}
    some = Card({**yahtzees, "x1.twos": 10, "x2.twos": 20})
    assert v.score(some, "x1.full_house", five).score == 0  # x3.twos open: no joker
    every = Card({**yahtzees, "x1.twos": 10, "x2.twos": 20, "x3.twos": 30})
    assert v.score(every, "x2.large_straight", five).written == 80  # 40 x 2


# ----------------------------------------------------------------------------- yamb


def test_yamb_down_and_up_columns_are_filled_in_order(engine):
    v = engine.variant("yamb")
    state = GameState.new(v, 1).roll(dice=(1, 1, 2, 3, 5))
    legal = state.legal_boxes()
    assert "down.ones" in legal and "down.twos" not in legal and "up.yamb" in legal and "up.ones" not in legal
    assert all(b in legal for b in v.boxes_of("max") if b.startswith("free."))
    assert not any(b.startswith("announce.") for b in legal)
    with pytest.raises(IllegalAction, match=r"the Down column is filled top to bottom: Ones comes next"):
        state.score("down.twos")


def test_yamb_announcement_is_a_move_the_turn_must_then_honour(engine):
    v = engine.variant("yamb")
    rolled = GameState.new(v, ["ann", "bob"]).roll(dice=(6, 6, 6, 2, 3))
    full = RuleAction("announced", "announce", "announce.full")
    assert full in rolled.legal_actions()
    with pytest.raises(
        IllegalAction, match="the Announce column takes a box only when announced right after the first roll"
    ):
        rolled.score("announce.full")
    said = rolled.act(full)
    assert said.turn_state == {"announced": "announce.full"} and said.legal_boxes() == ("announce.full",)
    assert said.turn_status() == ("Announced: Full (Announce column); this turn scores it",)
    with pytest.raises(IllegalAction, match=r"you announced Full in the Announce column: this turn must score it"):
        said.score("free.full")
    later = said.keep((6, 6, 6)).roll(dice=(1, 4))
    assert later.rule_actions() == ()  # only right after the first roll
    missed = later.score("announce.full")
    assert missed.cards[0].scores["announce.full"] == 0 and missed.turn_state == {}
    assert GameState.from_json(said.to_json(), engine) == said


def test_yamb_when_only_announced_boxes_are_left_the_player_must_announce(engine):
    v = engine.variant("yamb")
    left = ("announce.straight", "announce.full")
    filled = {b: 0 for b in v.box_ids if b not in left}
    from attrs import evolve

    state = evolve(GameState.new(v, ["ann"]), cards=(Card(filled),)).roll(dice=(1, 2, 3, 4, 5))
    assert state.legal_boxes() == () and state.legal_keeps() == ()  # no box, no reroll: announce first
    assert {a.arg for a in state.legal_actions()} == set(left)
    assert "announce one now" in state.turn_status()[0]
    after = state.act(RuleAction("announced", "announce", "announce.straight")).score("announce.straight")
    assert after.cards[0].scores["announce.straight"] == 35 and not after.over


def test_yamb_column_bonuses_upper_and_middle_value(engine):
    v = engine.variant("yamb")
    card = Card(
        {
            "free.ones": 3,
            "free.twos": 8,
            "free.threes": 12,
            "free.fours": 16,
            "free.fives": 15,
            "free.sixes": 6,
            "free.max": 28,
            "free.min": 9,
        }
    )
    bonuses = {a.id: (a.points, a.column) for a in v.end_bonuses(card)}
    assert bonuses == {"free.upper_bonus": (30, "free"), "free.middle_value": ((28 - 9) * 3, "free")}
    low = Card({"up.ones": 1, "up.max": 10, "up.min": 20})
    assert {a.id: a.points for a in v.end_bonuses(low)} == {"up.middle_value": -10}  # may be negative


# ----------------------------------------------------------------------------- kismet and balut


@pytest.mark.parametrize(("upper", "bonus"), [(62, None), (63, 35), (70, 35), (71, 55), (77, 55), (78, 75), (90, 75)])
def test_kismet_upper_bonus_tiers(engine, upper, bonus):
    v = engine.variant("kismet")
    scores = {"ones": 3, "twos": 6, "threes": 9, "fours": 12, "fives": 15, "sixes": upper - 45}
    got = [a.points for a in v.end_bonuses(Card(scores))]
    assert got == ([] if bonus is None else [bonus])


def test_kismet_colours_are_dice_attributes(engine):
    v = engine.variant("kismet")
    assert v.attributes["colour"][1:] == ("black", "red", "green", "green", "red", "black")
    assert v.score(Card(), "flush", v.roll_of((1, 6, 6, 1, 1))).score == 35
    assert v.score(Card(), "flush", v.roll_of((1, 6, 6, 1, 2))).score == 0


def _balut_card(engine, **rows):
    v = engine.variant("balut")
    scores = {}
    for row, values in rows.items():
        for col, value in zip("abcd", values, strict=True):
            scores[f"{col}.{row}"] = value
    return v, Card(scores)


def test_balut_points_and_ranking(engine):
    v, card = _balut_card(
        engine,
        fours=(16, 16, 12, 8),
        fives=(20, 20, 15, 10),
        sixes=(24, 24, 18, 12),
        straight=(15, 20, 20, 0),
        full_house=(20, 22, 18, 25),
        choice=(25, 25, 26, 24),
        balut=(50, 0, 0, 45),
    )
    points = {a.id: a.points for a in v.end_bonuses(card) if a.figure == "points"}
    assert points == {
        "fours_points": 2,
        "fives_points": 2,
        "sixes_points": 2,
        "full_house_points": 3,
        "choice_points": 2,
        "balut_points": 4,
        "score_points": 3,
    }
    totals = v.figure_totals(card)
    assert totals["score"] == sum(card.scores.values()) == 530 and totals["points"] == 18
    v2, weak = _balut_card(
        engine,
        fours=(4, 4, 4, 4),
        fives=(5, 5, 5, 5),
        sixes=(6, 6, 6, 6),
        straight=(0, 0, 0, 0),
        full_house=(0, 0, 0, 0),
        choice=(10, 10, 10, 10),
        balut=(0, 0, 0, 0),
    )
    assert v2.figure_totals(weak) == {"score": 100, "points": -2}


def test_balut_ranks_by_points_then_score(engine):
    v = engine.variant("balut")
    state = GameState.new(v, ["ann", "bob"])
    assert state.variant.rank_by == ("points", "score")
    from attrs import evolve

    _, strong = _balut_card(
        engine,
        fours=(16,) * 4,
        fives=(20,) * 4,
        sixes=(24,) * 4,
        straight=(15,) * 4,
        full_house=(20,) * 4,
        choice=(25,) * 4,
        balut=(0,) * 4,
    )
    _, rich = _balut_card(
        engine,
        fours=(0,) * 4,
        fives=(0,) * 4,
        sixes=(0,) * 4,
        straight=(0,) * 4,
        full_house=(0,) * 4,
        choice=(30,) * 4,
        balut=(50, 50, 50, 50),
    )
    cards = (strong, rich)
    done = evolve(state, cards=cards)._end_round(None)
    a, b = done.results[-1].figure("points")
    assert done.over and (a, b) == (2 + 2 + 2 + 4 + 3 + 2 + 2, 2 + 8 - 1)  # 480 scores +2, 320 scores -1
    assert done.winners() == (("ann",) if a > b else ("bob",))


# ----------------------------------------------------------------------------- maxi yatzy and forced order


def test_maxi_yatzy_banks_unused_rolls(engine):
    v = engine.variant("maxi-yatzy")
    state = GameState.new(v, 1)
    state = turn(state, "chance", (6, 6, 6, 5, 5, 4))  # scored after one roll: two rolls banked
    assert state.banked == (2,) and state.rolls_available == 5
    state = state.roll(dice=(1, 2, 3, 4, 5, 6))
    for _ in range(4):
        state = state.keep((1, 2, 3, 4, 5)).roll(dice=(6,))
    assert state.rolls_used == 5 and state.rolls_left == 0
    state = state.score("full_straight")
    assert state.banked == (0,)
    plain = GameState.new(engine.variant("maxi-yatzy", {"saved_rolls": "false"}), 1)
    assert turn(plain, "chance", (6, 6, 6, 5, 5, 4)).rolls_available == 3


def test_yatzy_forced_fills_the_card_in_order(engine):
    v = engine.variant("yatzy-forced")
    state = GameState.new(v, 1).roll(dice=(6, 6, 6, 6, 6))
    assert state.legal_boxes() == ("ones",)
    with pytest.raises(IllegalAction, match="the Card order column is filled top to bottom: Ones comes next"):
        state.score("yatzy")
    state = state.score("ones").roll(dice=(1, 2, 3, 4, 5))
    assert state.legal_boxes() == ("twos",)


# ----------------------------------------------------------------------------- language pieces


def write(tmp_path, text: str):
    path = tmp_path / "v.yaml"
    path.write_text(text)
    return path


def test_count_of_pattern_and_best_of_scorer_make_a_one_turn_game_yaml(engine, tmp_path):
    path = write(
        tmp_path,
        """\
id: one-turn
name: One turn
dice: {count: 5}
boxes:
  sixes_game: {pattern: {kind: count_of, face: 6, at_least: 3}, score: sum}
  best:
    pattern: always
    score:
      kind: best_of
      of:
        - {pattern: {kind: of_a_kind, n: 5}, score: 50}
        - {pattern: {kind: straight, length: 5}, score: 40}
        - {pattern: {kind: groups, sizes: [3, 2]}, score: 25}
        - {pattern: always, score: total}
""",
    )
    v = engine.load_file(path)
    assert v.score(Card(), "sixes_game", v.roll_of((6, 6, 6, 6, 1))).score == 24
    assert v.score(Card(), "sixes_game", v.roll_of((6, 6, 1, 1, 1))).score == 0
    assert v.score(Card(), "best", v.roll_of((2, 2, 2, 3, 3))).score == 25
    assert v.score(Card(), "best", v.roll_of((6, 6, 6, 5, 4))).score == 27
    assert v.score(Card(), "best", v.roll_of((1, 2, 3, 4, 5))).score == 40
    assert "at least 3 dice showing 6" in v.box("sixes_game").pattern.describe()


@pytest.mark.parametrize(
    ("yaml_text", "words", "line"),
    [
        ("columns: {a: {multiplier: 2}}\n", "a multiplier needs several columns", 5),
        ("columns: {a: {order: sideways}, b: {}}\n", "unknown fill order 'sideways'", 5),
        ("columns: {a: {order: dwon}, b: {}}\n", "did you mean 'down'?", 5),
        ("columns: {a.b: {}, c: {}}\n", "a column id must be a name", 5),
        (
            "bonuses: {u: {kind: threshold, section: main, at_least: 1, points: 1, scope: column}}\n",
            "needs a variant with several columns",
            5,
        ),
        (
            "bonuses: {u: {kind: threshold, section: main, at_least: 1, points: 1, figure: pts}}\n",
            "unknown figure 'pts'",
            5,
        ),
        ("rank_by: [points]\n", "unknown figure str 'points'", 5),
        ("figures: {score: {}}\n", "`score` is always a figure", 5),
        ("bonuses: {u: {kind: threshold, boxes: [nope], at_least: 1, points: 1}}\n", "no box or row 'nope'", 5),
        (
            "bonuses: {u: {kind: event, pattern_of: a, box_holds: 5, points: 1}}\n",
            "box_holds must map boxes to scores",
            5,
        ),
        ("bonuses: {u: {kind: threshold, section: main, tiers: [[1, 2], [1, 3]]}}\n", "two tiers start at 1", 5),
        ("bonuses: {u: {kind: threshold, section: main, tiers: lots}}\n", "tiers must be a non-empty list", 5),
        ("bonuses: {u: {kind: spread, high: a, low: a, times: x}}\n", "times must name one box", 5),
    ],
)
def test_family_language_errors_point_at_the_key(engine, tmp_path, yaml_text, words, line):
    path = write(tmp_path, "id: bad\ndice: {count: 5}\nboxes:\n  a: {pattern: always, score: total}\n" + yaml_text)
    with pytest.raises(VariantError) as err:
        engine.load_file(path)
    assert words in str(err.value) and err.value.line == line


@pytest.mark.parametrize(
    ("dice", "words"),
    [
        ("dice: {count: 5, attributes: {colour: [red, red]}}", "expected one value per face (6), got 2"),
        ("dice: {count: 5, attributes: {colour: {1: red}}}", "no value for faces 2, 3, 4, 5, 6"),
        ("dice: {count: 5, attributes: {colour: {9: red}}}", "expected a face from 1 to 6, got int 9"),
        ("dice: {count: 5, attributes: {colour: [[1], b, c, d, e, f]}}", "an attribute value must be a plain value"),
    ],
)
def test_dice_attribute_errors(engine, tmp_path, dice, words):
    path = write(tmp_path, f"id: bad\n{dice}\nboxes:\n  a: {{pattern: always, score: total}}\n")
    with pytest.raises(VariantError) as err:
        engine.load_file(path)
    assert words in str(err.value)


def test_same_pattern_needs_a_declared_attribute(engine, tmp_path):
    path = write(
        tmp_path, "id: bad\ndice: {count: 5}\nboxes:\n  a: {pattern: {kind: same, attribute: colour}, score: total}\n"
    )
    with pytest.raises(VariantError) as err:
        engine.load_file(path)
    assert "the dice have no attribute 'colour' (declared: none)" in str(err.value) and err.value.line == 4


def test_a_nested_pattern_error_names_its_own_line(engine, tmp_path):
    path = write(
        tmp_path,
        """\
id: bad
dice: {count: 5, attributes: {colour: [a, b, c, c, b, a]}}
boxes:
  a:
    pattern:
      kind: same
      attribute: colour
      of: {kind: of_a_kind, n: 9}
    score: total
""",
    )
    with pytest.raises(VariantError) as err:
        engine.load_file(path)
    assert "n=9 needs more dice" in str(err.value) and err.value.line == 8


# ----------------------------------------------------------------------------- conformance


@pytest.mark.parametrize("variant_id", ["maxi-yatzy", "triple-yahtzee", "yamb", "kismet", "balut", "yatzy-forced"])
def test_family_conformance(engine, variant_id):
    report = dicecup_testing.check_variant(engine, variant_id, games=3, seed=5, players=(1, 2))
    assert report.turns == sum(len(engine.variant(variant_id).boxes) * p for p in (1, 2, 1))
    assert report.contract_checks > 0
    if variant_id == "yamb":
        assert report.rule_actions > 0


@pytest.mark.parametrize("faces", [2, 3, 7, 10, 13, 20])
def test_any_face_count_plays_through_the_api(engine, tmp_path, faces):
    path = write(
        tmp_path,
        f"""\
id: faces-{faces}
dice: {{count: 3, faces: {faces}}}
boxes:
  low:    {{pattern: {{kind: face, face: 1}}, score: sum, section: upper}}
  high:   {{pattern: {{kind: face, face: {faces}}}, score: sum, section: upper}}
  pair:   {{pattern: pairs, score: sum}}
  triple: {{pattern: {{kind: of_a_kind, n: 3}}, score: 30}}
  run:    {{pattern: {{kind: straight, length: 2}}, score: 10}}
  chance: {{pattern: always, score: total}}
bonuses:
  upper: {{kind: threshold, section: upper, at_least: {faces + 1}, points: 5}}
""",
    )
    v = engine.load_file(path)
    assert v.roll_count == len(v.all_rolls())
    state = GameState.new(v, ["a", "b"])
    final, counts = dicecup_testing.play_random(
        state, __import__("random").Random(faces), engine=None, contract_every=0.2
    )
    assert final.over and counts["turns"] == 2 * 6
    assert GameState.from_json(final.to_json(), engine, variant=v) == final  # a file's variant is passed, never read


@pytest.mark.parametrize(("variant_id", "multiplied"), [("yahtzee", False), ("triple-yahtzee", True)])
def test_points_so_far_are_the_boxes_as_written_and_the_awards(engine, variant_id, multiplied):
    """Boxes as written (a column's multiplier applied) plus the awards earned, whatever the card holds:
    cards met in random games, checked against the definition."""
    from _solver_helpers import decision_states

    v = engine.variant(variant_id)
    assert any(v.multiplier(b) != 1 for b in v.box_ids) is multiplied  # the case each run is about
    cards = [state.card for state in decision_states(v, 60, seed=7)]
    assert len({len(c.scores) for c in cards}) > 5  # cards of many sizes
    for card in cards:
        want = sum(v.multiplier(b) * s for b, s in card.scores.items())
        assert v.points_so_far(card) == want + sum(a.points for a in card.awards if a.figure == "score")
    awarded = Card({}, (Award("bonus", 100, "Bonus"), Award("other", 7, "Other", "points")))
    assert v.points_so_far(awarded) == 100  # only awards in the score figure count
