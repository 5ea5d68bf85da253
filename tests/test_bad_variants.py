"""One malformed variant file per kind of error (tests/bad_variants/*.yaml).

Every message is snapshotted, and every message must name the file and the line;
the line and key path of many are also checked here by hand against the files.
Files are loaded by a path relative to tests/, so the messages read the same
in any checkout.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from dicecup import VariantError

HERE = Path(__file__).parent
CASES = sorted(p.name for p in (HERE / "bad_variants").glob("*.yaml"))


@pytest.fixture
def load(engine, monkeypatch):
    monkeypatch.chdir(HERE)

    def load_error(name: str) -> VariantError:
        with pytest.raises(VariantError) as err:
            engine.load_file(Path("bad_variants") / name)
        return err.value

    return load_error


def test_there_is_a_case_per_kind_of_error():
    assert len(CASES) >= 25


@pytest.mark.parametrize("name", CASES)
def test_message_snapshot(load, snapshot, name):
    err = load(name)
    assert err.source and err.source.endswith(".yaml")
    assert err.line is not None, "every error names a line"
    assert str(err).startswith(f"{err.source}:{err.line}: ")
    assert str(err) == snapshot


@pytest.mark.parametrize(
    ("name", "line", "path", "words"),
    [  # lines and key paths read off the files by hand
        ("yaml_syntax.yaml", 4, (), "flow mapping that starts on line 3"),
        ("duplicate_key.yaml", 6, ("boxes", "chance"), "first given on line 4"),
        ("unknown_top_key.yaml", 3, ("boxs",), "did you mean 'boxes'?"),
        ("missing_required_key.yaml", 1, (), "missing required key 'dice'"),
        ("missing_pattern.yaml", 4, ("boxes", "chance"), "missing required key 'pattern'"),
        ("wrong_type.yaml", 3, ("dice", "count"), "expected an integer, got str 'five'"),
        ("unknown_pattern_kind.yaml", 6, ("boxes", "trips", "pattern", "kind"), "did you mean 'of_a_kind'?"),
        ("unknown_pattern_parameter.yaml", 7, ("boxes", "trips", "pattern", "count"), "takes: n"),
        ("bad_parameter_value.yaml", 6, ("boxes", "seven", "pattern", "n"), "n=7 needs more dice than the variant's 5"),
        ("unknown_scorer.yaml", 6, ("boxes", "chance", "score"), "did you mean 'sum'?"),
        ("unknown_box_key.yaml", 6, ("boxes", "chance", "scor"), "did you mean 'score'?"),
        ("unknown_rule.yaml", 6, ("rules", "stage_ordr"), "did you mean 'stage_order'?"),
        (
            "unknown_rule_parameter.yaml",
            9,
            ("rules", "joker", "upper"),
            "joker takes: mode, box, points, upper_section",
        ),
        ("missing_rule_parameter.yaml", 6, ("rules", "instant_win"), "needs parameter 'pattern_of'"),
        ("wrong_rule_parameter_type.yaml", 7, ("rules", "pot_settlement", "stake"), "expected a whole number"),
        ("rule_check_failure.yaml", 9, ("rules", "joker", "box"), "no row 'yahtzee'"),
        (
            "unknown_bonus_kind.yaml",
            7,
            ("bonuses", "upper_bonus", "kind"),
            "known bonus kinds: event, nonzero, spread, threshold",
        ),
        ("threshold_missing_section.yaml", 9, ("bonuses", "upper_bonus", "section"), "section 'top' has no boxes"),
        ("none_of_missing_box.yaml", 6, ("boxes", "chance", "pattern", "boxes"), "no box 'straight'"),
        ("pattern_loop.yaml", 8, ("boxes", "right", "pattern", "boxes"), "left -> right -> left"),
        ("extends_unknown.yaml", 2, ("extends",), "did you mean 'yahtzee'?"),
        ("undeclared_option.yaml", 9, ("boxes", "trips", "score"), "${points} names no declared option"),
        ("option_default_not_in_choices.yaml", 4, ("options", "size", "default"), "not one of the choices [30, 40]"),
        ("bad_box_id.yaml", 5, ("boxes", "full house"), "letters, digits"),
        ("dice_count_out_of_range.yaml", 3, ("dice", "count"), "<= 10, got 11"),
        ("bad_match_rounds.yaml", 6, ("match", "rounds", "two"), "number of players or 'default'"),
        ("empty_boxes.yaml", 3, ("boxes",), "at least one box"),
        ("not_a_mapping.yaml", 1, (), "expected a variant mapping, got a list"),
        ("scorer_multiply_zero.yaml", 5, ("boxes", "sixes", "score", "multiply"), "integer >= 1, got 0"),
        ("scorer_multiply_fraction.yaml", 4, ("boxes", "sixes", "score", "multiply"), "integer, got float 1.5"),
        ("scorer_multiply_too_large.yaml", 9, ("boxes", "sixes", "score", "multiply"), "<= 1000, got 1000000"),
        ("scorer_multiply_string.yaml", 4, ("boxes", "sixes", "score", "multiply"), "integer, got str 'double'"),
    ],
)
def test_line_and_key_path(load, name, line, path, words):
    err = load(name)
    assert (err.line, err.path) == (line, path)
    assert err.source == f"bad_variants/{name}"
    assert words in str(err)


def test_extends_loop_names_the_files_in_order(load):
    err = load("extends_loop.yaml")
    assert err.source == "bad_variants/parts/loop_b.yaml" and err.line == 3 and err.path == ("extends",)
    assert "bad_variants/extends_loop.yaml -> bad_variants/parts/loop_b.yaml -> bad_variants/extends_loop.yaml" in str(
        err
    )


def test_an_error_in_an_inherited_part_names_the_child_file(engine, tmp_path):
    child = tmp_path / "child.yaml"
    child.write_text("id: child\nextends: yahtzee\nboxes:\n  small_straight:\n    pattern: {runs: [[1, 2, 3, 4]]}\n")
    with pytest.raises(VariantError) as err:
        engine.load_file(child)
    # the patch keeps the inherited `length`, which the child's `runs` now contradicts
    assert err.value.source == str(child) and err.value.line == 5
    assert err.value.path == ("boxes", "small_straight", "pattern")
    assert "give exactly one of `length` or `runs`" in str(err.value)


def test_unreadable_file(engine, tmp_path):
    with pytest.raises(VariantError, match="cannot read the file"):
        engine.load_file(tmp_path / "missing.yaml")
