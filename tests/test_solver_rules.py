"""The solver reads rules only through the engine: plugins are honoured when they declare what they read,
and refused with a precise message when they read what the solver's state does not track."""

from __future__ import annotations

import numpy as np
import pytest
from _solver_helpers import TINY, brute_force

from dicecup import REQUIRED, BoxFlag, Engine, hookimpl
from dicecup.solver import SolverError, StateSpaceTooLarge, solve

PEEK_VARIANT = TINY["threshold"].replace("id: tiny-threshold", "id: tiny-peek") + "rules:\n  peek: {box: twos}\n"


class Peek:
    """Doubles the pair box while box `box` holds 2; declares that flag only if told to."""

    def __init__(self, declare: bool) -> None:
        self.declare = declare

    @hookimpl
    def dicecup_register_rules(self, register):
        register("peek", {"box": REQUIRED}, "pair scores double while `box` holds 2")

    @hookimpl
    def dicecup_adjust_score(self, ctx, score):
        if ctx.box.id == "pair" and ctx.card.value(ctx.variant.rule("peek")["box"]) == 2:
            return score * 2
        return None

    @hookimpl
    def dicecup_state_flags(self, variant):
        return [BoxFlag(variant.rule("peek")["box"], 2)] if self.declare else []


class Counting:
    """Scores the pair box by how many boxes are filled: reads the whole card."""

    @hookimpl
    def dicecup_register_rules(self, register):
        register("counting", {}, "pair scores the number of filled boxes")

    @hookimpl
    def dicecup_adjust_score(self, ctx, score):
        return len(ctx.card.scores) if ctx.box.id == "pair" else None


class EndPeek:
    """An end bonus reading the pair box's value (not a flag, not in a threshold group)."""

    @hookimpl
    def dicecup_register_rules(self, register):
        register("endpeek", {}, "5 points at the end when the pair box holds 8")

    @hookimpl
    def dicecup_end_bonuses(self, variant, card):
        from dicecup import Award

        return [Award("endpeek", 5)] if card.scores.get("pair") == 8 else []


def _load(tmp_path, text, *plugins):
    path = tmp_path / "v.yaml"
    path.write_text(text, encoding="utf-8")
    return Engine(list(plugins), entry_points=False).load_file(path)


def test_declared_flag_is_tracked_and_matches_brute_force(tmp_path):
    v = _load(tmp_path, PEEK_VARIANT, Peek(declare=True))
    assert solve(v).expected_score == pytest.approx(brute_force(v), abs=1e-9)


def test_undeclared_value_read_is_refused_naming_the_box(tmp_path):
    v = _load(tmp_path, PEEK_VARIANT, Peek(declare=False))
    with pytest.raises(SolverError, match=r"score of box 'pair' reads the value of box 'twos'.*dicecup_state_flags"):
        solve(v)


def test_whole_card_read_is_refused(tmp_path):
    text = TINY["threshold"] + "rules:\n  counting: {}\n"
    v = _load(tmp_path, text, Counting())
    with pytest.raises(SolverError, match="depends on the whole card"):
        solve(v)


def test_end_bonus_reading_an_untracked_box_is_refused(tmp_path):
    text = TINY["threshold"] + "rules:\n  endpeek: {}\n"
    v = _load(tmp_path, text, EndPeek())
    with pytest.raises(SolverError, match="end-of-game bonus reads the value of box 'pair'"):
        solve(v)


@pytest.mark.parametrize("kernel", ["numpy", "numba"])
def test_banked_rolls_with_first_roll_scoring_solve_the_same_in_both_kernels(tmp_path, kernel):
    """A first-roll bonus and banked rolls together: the first decision of a turn begun with b rolls banked
    has rolls - 1 + b left, and its scores are the first roll's (brute force: test_solver_bruteforce.py)."""
    text = TINY["served"].replace("turn: {rolls: 3}", "turn: {rolls: 3, carry_over: true}")
    v = _load(tmp_path, text)
    plain = solve(_load(tmp_path, TINY["served"].replace("tiny-served", "tiny-served-plain")))
    banked = solve(v, kernel=kernel)
    assert banked.expected_score > plain.expected_score  # spare rolls are worth something
    assert banked.expected_score == pytest.approx(solve(v, kernel="numpy").expected_score, abs=1e-9)


def test_state_limit_gives_the_size(tmp_path):
    v = _load(tmp_path, TINY["threshold"])
    full = solve(v).states
    with pytest.raises(
        StateSpaceTooLarge, match=rf"has {full:,} states, above the limit of {full - 1:,}; raise it with --max-states"
    ):
        solve(v, max_states=full - 1)
    with pytest.raises(StateSpaceTooLarge, match=r"has more than \d+ states, above the limit of 1;") as info:
        solve(v, max_states=1)  # far past the limit the search stops early: a lower bound
    assert info.value.states > 1
    assert solve(v, max_states=full).states == full


class Beyond:
    """Declares the flag (twos, 2) but compares the value with 3 too: beyond the declared values."""

    @hookimpl
    def dicecup_register_rules(self, register):
        register("beyond", {}, "pair scores double while twos holds more than 2")

    @hookimpl
    def dicecup_adjust_score(self, ctx, score):
        held = ctx.card.value("twos")
        if ctx.box.id == "pair" and held is not None and held > 2:
            return score * 2
        return None

    @hookimpl
    def dicecup_state_flags(self, variant):
        return [BoxFlag("twos", 2)]


def test_value_compared_beyond_declared_flags_is_refused(tmp_path):
    text = TINY["threshold"] + "rules:\n  beyond: {}\n"
    v = _load(tmp_path, text, Beyond())
    with pytest.raises(SolverError, match=r"depends on the value of box 'twos' beyond the declared flag values \[2\]"):
        solve(v)


def _count_legality_calls(monkeypatch: pytest.MonkeyPatch) -> list:
    """Count the engine's legality calls (`Variant.rules_allow`) from here on: the list of their rolls;
    `monkeypatch.undo()` stops counting."""
    from dicecup import Variant

    calls: list = []
    real = Variant.rules_allow

    def counted(self, *args, **kwargs):
        calls.append(args[1])
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Variant, "rules_allow", counted)
    return calls


def test_legality_is_asked_once_per_pattern_answer_not_once_per_roll(engine, monkeypatch):
    """A legality rule that reads the roll only through declared patterns (the forced joker asks the
    yahtzee box's pattern) is asked once per distinct answer of those patterns: seven calls for
    Yahtzee (no five alike, or five of each face), not one per each of the 252 rolls; and since it
    never reads whether the roll is the first, one call serves after the first roll and after later ones."""
    from dicecup.solver.rules import RuleModel

    variant = engine.variant("yahtzee", {"joker": "forced"})
    model = RuleModel(variant)
    calls = _count_legality_calls(monkeypatch)
    yahtzee_filled = 1 << model.bidx["yahtzee"]
    legality = model.legality(yahtzee_filled)
    assert len(calls) == 1 + variant.faces
    # and the answers are the engine's own, roll by roll
    monkeypatch.undo()
    card = model._card({model.bidx["yahtzee"]: 1})
    for r, roll in enumerate(model.rolls):
        for first in (False, True):
            expected = model._bits(variant.legal_boxes(card, roll, first))
            if legality.table is None:
                got = legality.first if first else legality.later
            else:
                got = int(legality.table[r, int(first)])
            assert got == expected, (roll, first)


@pytest.mark.parametrize(("vid", "options"), [("yacht", {}), ("yahtzee", {"joker": "forced"})])
def test_legality_is_reused_by_every_class_that_agrees_on_what_the_rules_read(engine, monkeypatch, vid, options):
    """Yacht has no legality rule, and the forced joker reads only the yahtzee box while that box is open
    (and not whether the roll is the first): one engine call serves all those classes, after any roll;
    every answer is the engine's own."""
    from dicecup.solver.rules import RuleModel

    variant = engine.variant(vid, options)
    model = RuleModel(variant)
    calls = _count_legality_calls(monkeypatch)
    spare = model.bidx.get("yahtzee", model.nb)  # classes with this box open (Yacht has none: every class)
    classes = [code for code in range(1 << model.nb) if not code >> spare & 1]
    got = {code: model.legality(code) for code in classes}
    assert len(calls) == 1
    monkeypatch.undo()
    rng = np.random.default_rng(3)
    for code in rng.choice(list(classes), 40, replace=False).tolist():
        card = model._card({b: 1 for b in range(model.nb) if code >> b & 1})
        for r in rng.choice(len(model.rolls), 6, replace=False).tolist():
            for first in (False, True):
                want = model._bits(variant.legal_boxes(card, model.rolls[r], first))
                leg = got[code]
                bits = leg.table[r, int(first)] if leg.table is not None else (leg.first if first else leg.later)
                assert bits == want, (code, r, first)


def test_forced_joker_with_the_faces_upper_box_open_is_asked_once_for_every_such_card(engine, monkeypatch):
    """Five alike with the yahtzee box filled and the face's upper box open: the forced joker reads only
    those two boxes (`in ctx.open_boxes` reads the one box asked about), so one engine call per face
    serves every class that agrees on them, whatever else is filled; the answers are the engine's own."""
    from dicecup.solver.rules import RuleModel

    variant = engine.variant("yahtzee", {"joker": "forced"})
    model = RuleModel(variant)
    calls = _count_legality_calls(monkeypatch)
    upper = [model.bidx[b] for b in ("ones", "twos", "threes", "fours", "fives", "sixes")]
    lower = [b for b in range(model.nb) if b not in upper and b != model.bidx["yahtzee"]]
    yahtzee = 1 << model.bidx["yahtzee"]
    classes = [yahtzee | sum(1 << lower[i] for i in range(len(lower)) if m >> i & 1) for m in range(1 << len(lower))]
    codes = np.array(classes, dtype=np.int64)
    later, first, index, tables = model.legal_arrays(codes)
    assert len(calls) == 1 + variant.faces  # no five alike, or five of a face whose upper box is open
    monkeypatch.undo()
    for i in np.random.default_rng(5).choice(len(classes), 12, replace=False).tolist():
        card = model._card({b: 1 for b in range(model.nb) if classes[i] >> b & 1})
        for r, roll in enumerate(model.rolls):
            for f in (False, True):
                want = model._bits(variant.legal_boxes(card, roll, f))
                bits = tables[index[i], r, int(f)] if index[i] >= 0 else (first[i] if f else later[i])
                assert bits == want, (classes[i], roll, f)


class FirstRollOnly:
    """Box `pair` may not take a served roll (the turn's first): a legality rule that reads `first_roll`."""

    @hookimpl
    def dicecup_register_rules(self, register):
        register("served", {}, "the pair box takes no served roll")

    @hookimpl
    def dicecup_legal_boxes(self, ctx):
        return [b for b in ctx.variant.box_ids if b != "pair" or not ctx.first_roll]


def test_a_legality_rule_reading_the_first_roll_is_asked_for_each_and_solves_to_brute_force(tmp_path, monkeypatch):
    """A legality answer is shared between the first and later rolls only where the rule did not read which
    it is: this one does, so it is asked for both, and the solve matches the brute force."""
    from dicecup import Variant
    from dicecup.solver.rules import RuleModel

    v = _load(tmp_path, TINY["threshold"] + "rules:\n  served: {}\n", FirstRollOnly())
    firsts = []
    real = Variant.rules_allow

    def counted(self, card, roll, first_roll=False, *args, **kwargs):
        firsts.append(first_roll)
        return real(self, card, roll, first_roll, *args, **kwargs)

    monkeypatch.setattr(Variant, "rules_allow", counted)
    model = RuleModel(v)
    leg = model.legality(0)
    assert sorted(firsts) == [False, True]
    assert leg.later == (1 << model.nb) - 1 and leg.first == (1 << model.nb) - 1 - (1 << model.bidx["pair"])
    monkeypatch.setattr(Variant, "rules_allow", real)
    assert solve(v).expected_score == pytest.approx(brute_force(v), abs=1e-9)


CHANCE_VARIANT = """
id: tiny-chance
dice: {count: 3, faces: 6}
turn: {rolls: 2}
boxes:
  top:    {pattern: {kind: face, face: 6}, score: sum}
  pair:   {pattern: {kind: of_a_kind, n: 2}, score: 8}
  chance: {pattern: always, score: total}
"""


class HighDie:
    """Adds the highest die of the pair box's combination to its score, twice on the first roll: the score
    depends on which dice form the pattern and on the first roll, not only on the declared points."""

    @hookimpl
    def dicecup_register_rules(self, register):
        register("highdie", {}, "the pair box adds its highest die, twice on the first roll")

    @hookimpl
    def dicecup_adjust_score(self, ctx, score):
        if ctx.box.id == "pair" and ctx.met:
            return score + max(ctx.combination) * (2 if ctx.first_roll else 1)
        return None


def _score_calls(monkeypatch, variant):
    """The solver's rules model of `variant`, and the boxes of every `Variant.score` call it made."""
    from dicecup import Variant
    from dicecup.solver.rules import RuleModel

    calls = []
    real = Variant.score

    def counted(self, card, box_id, *args, **kwargs):
        calls.append(box_id)
        return real(self, card, box_id, *args, **kwargs)

    monkeypatch.setattr(Variant, "score", counted)
    model = RuleModel(variant)
    model.score_groups  # noqa: B018
    monkeypatch.setattr(Variant, "score", real)
    return model, calls


def _assert_tables_are_the_engines(model, variant):
    """Every (box, roll, first) score in the model's tables is what the engine says, on the empty card."""
    scores, _ = model.context_tables(0)
    card = model._card({})
    for b, box in enumerate(model.box_ids):
        for r, roll in enumerate(model.rolls):
            for first in (False, True):
                assert scores[b, r, int(first)] == variant.score(card, box, roll, first).score, (box, roll, first)


def test_a_score_is_asked_once_per_declared_points_for_first_and_later_rolls_alike(tmp_path, monkeypatch):
    """No rule reads the dice of a combination or the first roll: chance is asked once per total (16 of
    them for 3 dice, not once per each of the 56 rolls), the pair box once met and once not, and none twice
    for the first roll."""
    variant = _load(tmp_path, CHANCE_VARIANT)
    model, calls = _score_calls(monkeypatch, variant)
    assert calls.count("chance") == 16
    assert calls.count("pair") == 2
    assert calls.count("top") == 4  # 0, 6, 12 or 18
    _assert_tables_are_the_engines(model, variant)


def test_a_rule_reading_the_combination_and_the_first_roll_is_asked_for_each(tmp_path, monkeypatch):
    """HighDie reads the pair's dice and the first roll: the pair box is asked per combination (four faces
    paired, and not met) after later and after first rolls; the tables and the solved game are the engine's
    (two four-sided dice, so that the brute force is quick)."""
    text = CHANCE_VARIANT.replace("count: 3, faces: 6", "count: 2, faces: 4").replace("face: 6", "face: 4")
    variant = _load(tmp_path, text + "rules:\n  highdie: {}\n", HighDie())
    model, calls = _score_calls(monkeypatch, variant)
    assert calls.count("pair") == 1 + 4 + 4  # not met (read once: no combination, no first roll), met x 2
    assert calls.count("chance") == 7  # totals 2..8
    _assert_tables_are_the_engines(model, variant)
    assert solve(variant).expected_score == pytest.approx(brute_force(variant), abs=1e-9)
