"""The variant language: `extends` (by id and by relative path), option overlays,
`${option}` substitution, option errors that list the choices, `null` deleting keys."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from dicecup import Card, VariantError


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def scores(variant, dice: str, first_roll: bool = False) -> dict[str, int]:
    roll = variant.roll_of(int(ch) for ch in dice)
    return {b: variant.score(Card(), b, roll, first_roll).score for b in variant.box_ids}


SMALL = """\
id: small
name: Small
dice: {count: 3}
boxes:
  low:   {section: top, pattern: {kind: face, face: 1}, score: sum}
  high:  {section: top, pattern: {kind: face, face: 6}, score: sum}
  trips: {pattern: {kind: of_a_kind, n: 3}, score: 30}
"""


# ----------------------------------------------------------------------------- extends


def test_builtin_thin_extensions(engine):
    kniffel, yahtzee = engine.variant("kniffel"), engine.variant("yahtzee")
    assert kniffel.id == "kniffel" and kniffel.name == "Kniffel"
    assert [b.pattern for b in kniffel.boxes] == [b.pattern for b in yahtzee.boxes]
    assert [b.name for b in kniffel.boxes][:2] == ["Einser", "Zweier"]
    simple, russian = engine.variant("russian-simple"), engine.variant("russian")
    assert simple.box_ids == tuple(b for b in russian.box_ids if b not in ("pair", "two_pairs", "even", "odd"))
    assert simple.box("ones").scorer.kind == "sum" and russian.box("ones").scorer.kind == "relative"
    assert simple.box("yahtzee").extra == 0 and russian.box("yahtzee").extra == 50
    assert simple.box("yahtzee").first_roll == russian.box("yahtzee").first_roll  # inherited, not restated
    assert simple.match == russian.match and simple.rule("pot_settlement") is not None


def test_child_file_extends_a_builtin_by_id(engine, tmp_path):
    path = write(
        tmp_path / "house.yaml",
        """\
        id: house-yahtzee
        extends: yahtzee
        name: House Yahtzee
        boxes:
          chance: null                       # deleted
          full_house: {score: 30}            # a patch: pattern kept, score changed
          small_straight:                    # same kind: a patch, so the inherited `length` is deleted
            pattern: {kind: straight, length: null, runs: [[1, 2, 3, 4]]}
          three_of_a_kind:                   # a new kind replaces the old mapping whole (no `n` left)
            pattern: {kind: pairs, count: 2}
        bonuses:
          upper_bonus: {points: 50}
        """,
    )
    v = engine.load_file(path)
    assert v.id == "house-yahtzee" and v.name == "House Yahtzee"
    assert "chance" not in v.box_ids and len(v.boxes) == 12
    s = scores(v, "22333")
    assert s["full_house"] == 30
    assert s["three_of_a_kind"] == 13 and scores(v, "22234")["three_of_a_kind"] == 0
    assert scores(v, "12346")["small_straight"] == 30
    assert scores(v, "23456")["small_straight"] == 0
    upper = Card({"ones": 3, "twos": 6, "threes": 9, "fours": 12, "fives": 15, "sixes": 18})
    assert [a.points for a in v.end_bonuses(upper)] == [50]
    assert [o.name for o in v.option_specs] == ["joker"]  # options are inherited
    assert engine.load_file(path, {"joker": "forced"}).rule("joker")["mode"] == "forced"
    assert engine.resolve(str(path)).box_ids == v.box_ids


def test_child_extends_a_file_by_relative_path(engine, tmp_path):
    write(tmp_path / "house" / "base" / "small.yaml", SMALL)
    child = write(
        tmp_path / "house" / "child.yaml",
        """\
        id: small-child
        extends: base/../base/small.yaml
        boxes:
          low: null
          pair: {pattern: {kind: pairs, count: 1}, score: 5}
        """,
    )
    v = engine.load_file(child)
    assert v.box_ids == ("high", "trips", "pair")
    assert v.dice == 3
    assert scores(v, "166") == {"high": 12, "trips": 0, "pair": 5}


def test_extends_chain_of_three(engine, tmp_path):
    path = write(
        tmp_path / "k.yaml",
        """\
        id: kniffel-short
        extends: kniffel
        boxes: {chance: null, yahtzee: {name: Kniffel!}}
        """,
    )
    v = engine.load_file(path)
    assert v.box("ones").name == "Einser" and v.box("yahtzee").name == "Kniffel!"
    assert "chance" not in v.box_ids


# ----------------------------------------------------------------------------- options


def test_option_overlays(engine):
    assert engine.variant("generala").box("straight").pattern.params["runs"][-1] == (3, 4, 5, 6, 1)
    plain = engine.variant("generala", {"straight": "plain"})
    assert len(plain.box("straight").pattern.params["runs"]) == 2
    assert engine.variant("russian", {"chance": "any"}).box("chance").pattern.kind == "always"
    assert engine.variant("russian").box("chance").pattern.kind == "none_of"
    bonus = {b.id: b for b in engine.variant("russian", {"bonus_at": "nonnegative"}).bonuses}["stage_bonus"]
    assert bonus.params["at_least"] == 0 and bonus.params["points"] == 10


def test_option_substitution_keeps_the_type(engine):
    assert engine.variant("yahtzee", {"joker": "none"}).rule("joker")["mode"] == "none"
    served = engine.variant("generala", {"served_bonus": "10"}).box("full_house").first_roll
    assert served.add == 10 and isinstance(served.add, int)
    assert engine.variant("generala").options["served_bonus"] == 5


def test_substitution_inside_a_longer_string(engine, tmp_path):
    path = write(
        tmp_path / "named.yaml",
        """\
        id: named
        name: "Small (${size} points)"
        options:
          size: {default: 30, choices: [30, 40]}
        dice: {count: 3}
        boxes:
          trips: {pattern: {kind: of_a_kind, n: 3}, score: "${size}"}
        """,
    )
    assert engine.load_file(path).name == "Small (30 points)"
    v = engine.load_file(path, {"size": 40})
    assert v.name == "Small (40 points)" and scores(v, "555") == {"trips": 40}


def test_options_change_the_fingerprint(engine):
    a, b = engine.variant("yahtzee"), engine.variant("yahtzee", {"joker": "forced"})
    assert a.fingerprint != b.fingerprint
    assert engine.variant("yahtzee", {"joker": "free"}).fingerprint == a.fingerprint


def test_unknown_option_lists_the_options(engine):
    with pytest.raises(VariantError) as err:
        engine.variant("yahtzee", {"jokers": "free"})
    assert "unknown option 'jokers'" in str(err.value)
    assert "this variant's options: joker" in str(err.value)
    with pytest.raises(VariantError, match="options: none"):
        engine.variant("yacht", {"joker": "free"})


def test_bad_option_value_lists_the_choices(engine):
    with pytest.raises(VariantError) as err:
        engine.variant("generala", {"served_bonus": "7"})
    assert str(err.value) == (
        "dicecup/variants/generala.yaml: at options -> served_bonus: option 'served_bonus' cannot be '7'\n"
        "  hint: choose one of: 5, 10"
    )
    with pytest.raises(VariantError, match="choose one of: positive, nonnegative"):
        engine.variant("russian", {"bonus_at": "always"})


def test_option_values_match_case_insensitively(engine):
    assert engine.variant("yahtzee", {"joker": "FORCED"}).options["joker"] == "forced"


def test_builtin_variants_list_the_five_main_games_first(engine):
    """`dicecup variants` and the API list the five main games first, in a fixed order, then the extras."""
    ids = engine.variant_ids()
    assert ids[:5] == ["yahtzee", "yatzy", "yacht", "generala", "russian"]
    assert sorted(ids[5:]) == ids[5:] and {"kniffel", "russian-simple"} <= set(ids[5:])


def test_bundled_variants_read_alike_from_their_folder_and_through_importlib_resources(monkeypatch):
    """The bundled files are read straight from the package's folder; where the package is no folder on disk
    (inside an archive), through importlib.resources: both give the same files and texts."""
    from dicecup.plugins import builtin_variants

    from_folder = dict(builtin_variants._bundled())
    monkeypatch.setattr(builtin_variants.os.path, "isdir", lambda path: False)
    through_resources = dict(builtin_variants._bundled())
    assert from_folder == through_resources
    assert {"yahtzee.yaml", "yatzy.yaml", "maxi-yatzy.yaml"} <= set(from_folder)
    assert all(name.endswith(".yaml") for name in from_folder)
