"""Interchangeable boxes counted, not enumerated: the proof, the canonical coding, and the same values as
the enumerated solve (symmetry detection switched off) and as brute force, with fewer states."""

from __future__ import annotations

import itertools
import random
from math import comb
from pathlib import Path

import numpy as np
import pytest
from _solver_helpers import TINY, brute_force, tiny_variant
from hypothesis import given, settings
from hypothesis import strategies as st

from dicecup import Card, Engine, GameState, Keep, Score
from dicecup.game.bots import RandomBot
from dicecup.numeric.coding import EMPTY
from dicecup.solver import cache, rules
from dicecup.solver.advice import advise, advise_state
from dicecup.solver.errors import SolverError
from dicecup.solver.solve import solve


def _load(tmp_path: Path, text: str, name: str = "v"):
    path = tmp_path / f"{name}.yaml"
    path.write_text(text, encoding="utf-8")
    return Engine(entry_points=False).load_file(path)


def _enumerated(monkeypatch, make):
    """What `make()` gives with the symmetry detection switched off (a fresh variant: nothing memoised)."""
    with monkeypatch.context() as m:
        m.setattr(rules, "DETECT_SYMMETRY", False)
        return make()


def _groups(v) -> list[list[str]]:
    return [[v.box_ids[b] for b in g] for g in rules.RuleModel(v).symmetric]


def _all_states(index):
    """Every (class code, clamped totals) of an index, as arrays."""
    codes, progs = [], []
    for code, pmin, dims in zip(index.class_codes, index.class_pmin, index.class_dims, strict=True):
        for off in itertools.product(*(range(int(d)) for d in dims)):
            codes.append(int(code))
            progs.append([int(p) + o for p, o in zip(pmin, off, strict=True)])
    return np.array(codes, dtype=np.int64), np.array(progs, dtype=np.int64).reshape(len(codes), index.G)


# ----------------------------------------------------------------------------- the proof


def test_identical_boxes_are_found(tmp_path):
    assert _groups(tiny_variant(tmp_path, "sym-chance")) == [["c1", "c2", "c3"]]
    assert _groups(tiny_variant(tmp_path, "sym-upper")) == [["twos_a", "twos_b"]]


BUILTIN = sorted(p.stem for p in (Path(__file__).parent.parent / "variants").glob("*.yaml"))


@pytest.mark.parametrize("vid", [v for v in BUILTIN if v != "balut"])
def test_builtin_variants_have_nothing_interchangeable(vid):
    """Only Balut has interchangeable boxes: every other variant is solved exactly as before."""
    v = Engine(entry_points=False).variant(vid)
    assert rules.RuleModel(v, checked=False).symmetric == ()


BASE = TINY["sym-chance"]


@pytest.mark.parametrize(
    ("change", "want"),
    [
        # another first-roll score: c3 is not like the others
        (
            (
                "c3:   {section: lower, pattern: always, score: total}",
                "c3: {section: lower, pattern: always, score: total, first_roll: {add: 2}}",
            ),
            [["c1", "c2"]],
        ),
        # c3 counts toward the upper bonus, the others do not
        (("c3:   {section: lower,", "c3:   {section: upper,"), [["c1", "c2"]]),
        # another multiplier-free difference: a box scoring another way
        (
            (
                "c2:   {section: lower, pattern: always, score: total}",
                "c2: {section: lower, pattern: always, score: 4}",
            ),
            [["c1", "c3"]],
        ),
        # a legality rule (box order by stage): nothing is counted
        (("bonuses:", "rules:\n  stage_order: {}\nbonuses:"), []),
    ],
)
def test_what_cannot_be_proven_alike_is_enumerated(tmp_path, change, want):
    old, new = change
    assert old in BASE
    v = _load(tmp_path, BASE.replace(old, new))
    assert _groups(v) == want


def test_a_box_a_bonus_reads_is_not_counted(tmp_path):
    text = """
id: tiny-sym-read
dice: {count: 2, faces: 3}
turn: {rolls: 2}
boxes:
  ones: {section: upper, pattern: {kind: face, face: 1}, score: sum}
  yam:  {section: lower, pattern: {kind: of_a_kind, n: 2}, score: 20}
  yam2: {section: lower, pattern: {kind: of_a_kind, n: 2}, score: 20}
  c1:   {section: lower, pattern: always, score: total}
  c2:   {section: lower, pattern: always, score: total}
bonuses:
  extra_yam: {kind: event, pattern_of: yam, box_holds: {yam: 20}, points: 30}
"""
    v = _load(tmp_path, text)
    # the bonus reads yam (a flag) but not yam2: the two are told apart; c1 and c2 still count
    assert _groups(v) == [["c1", "c2"]]


# ----------------------------------------------------------------------------- the coding


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_a_card_and_its_swaps_share_their_canonical_class(tmp_path_factory, data):
    v = tiny_variant(tmp_path_factory.mktemp("sym"), "sym-chance")
    model = rules.RuleModel(v)
    (g,) = model.symmetric
    row = np.array([[data.draw(st.sampled_from([int(EMPTY), 0, 2, 5])) for _ in range(model.nb)]], dtype=np.int64)
    perm = data.draw(st.permutations(list(g)))
    swapped = row.copy()
    swapped[0, list(g)] = row[0, perm]
    code = int(model.class_codes_of(row)[0])
    assert code == int(model.class_codes_of(swapped)[0])
    j = int((row[0, list(g)] != EMPTY).sum())
    want = sum(1 << b for b in g[:j]) | sum(1 << b for b in range(model.nb) if b not in g and row[0, b] != EMPTY)
    assert code == want


def test_invalid_groups_are_refused(tmp_path):
    from dicecup.numeric.coding import ClassCoding

    v = tiny_variant(tmp_path, "sym-chance")
    for bad in ([[0]], [[0, 1], [1, 2]], [[0, 99]]):
        with pytest.raises(SolverError):
            ClassCoding(v, bad)


# ----------------------------------------------------------------------------- the solve


@pytest.mark.parametrize("name", ["sym-chance", "sym-upper"])
def test_counted_solve_values_every_state_as_the_enumerated_one(tmp_path, monkeypatch, name):
    counted = solve(tiny_variant(tmp_path, name), max_states=None)
    whole = _enumerated(monkeypatch, lambda: solve(tiny_variant(tmp_path, name), max_states=None))
    assert counted.expected_score == pytest.approx(whole.expected_score, abs=1e-9)
    assert counted.expected_score == pytest.approx(brute_force(counted.variant), abs=1e-9)
    ix, wx = counted.index, whole.index
    assert ix.symmetric and not wx.symmetric
    # every enumerated state has the value of its canonical state
    codes, prog = _all_states(wx)
    want = whole.column()[wx.lookup(codes, prog)]
    got = counted.column()[ix.lookup(ix.canonical(codes), prog)]
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-9)
    # the states shrink by exactly C(k, j) for a class with j of a group of k filled
    sizes = ix.class_dims.prod(axis=1) if ix.G else np.ones(len(ix.class_codes), dtype=np.int64)
    mult = np.ones(len(ix.class_codes), dtype=np.int64)
    for g in ix.symmetric:
        j = sum(((ix.class_codes >> b) & 1) for b in g)
        mult *= np.array([comb(len(g), int(x)) for x in j], dtype=np.int64)
    assert wx.size == int((sizes * mult).sum())  # value slots
    reached = np.add.reduceat(np.isfinite(counted.column()[: ix.size]), ix.base[ix.class_codes])
    assert int(reached.sum()) == counted.states
    assert whole.states == int((reached * mult).sum()) > counted.states  # reachable states
    assert rules.RuleModel(counted.variant).counted_classes < 1 << ix.nb


def test_counted_cards_are_looked_up_by_any_fill_order(tmp_path):
    s = solve(tiny_variant(tmp_path, "sym-chance"), max_states=None)
    a = s.value(Card({"c2": 4, "ones": 1}))
    b = s.value(Card({"c1": 4, "ones": 1}))
    c = s.value(Card({"c3": 4, "ones": 1}))
    assert a == b == c
    rows = np.full((3, s.index.nb), EMPTY, dtype=np.int64)
    for i, box in enumerate(["c1", "c2", "c3"]):
        rows[i, s.index.bidx[box]] = 3
    assert len(set(s.index.locate(rows).tolist())) == 1


def test_the_cache_keeps_the_groups_and_leaves_other_tables_alone(tmp_path):
    for name, counted in (("sym-chance", True), ("threshold", False)):
        v = tiny_variant(tmp_path, name)
        s = solve(v, max_states=None)
        path = cache.save(s, tmp_path / f"{name}.npz", secret=b"k" * 32)
        with np.load(path) as data:
            import json

            header = json.loads(bytes(data["header"]).decode())
        assert ("symmetric" in header) is counted
        back = cache.load(v, path, secret=b"k" * 32, verify_values=True)
        assert back.index.symmetric == s.index.symmetric
        np.testing.assert_array_equal(back.values, s.values)
        assert back.expected_score == s.expected_score
        assert back.space.legality(0).later == s.space.legality(0).later


# ----------------------------------------------------------------------------- playing it


def _states(v, games: int, seed: int) -> list[GameState]:
    """Every decision state of a few random games."""
    rng, bot = random.Random(seed), RandomBot(random.Random(seed + 1))
    out: list[GameState] = []
    for _ in range(games):
        state = GameState.new(v, 1)
        while not state.over:
            out += [] if state.is_chance else [state]
            state = state.roll(rng) if state.is_chance else state.apply(bot.choose(state))
    return out


def test_advice_matches_the_enumerated_solve(tmp_path, monkeypatch):
    counted = solve(tiny_variant(tmp_path, "sym-chance"), max_states=None)
    whole = _enumerated(monkeypatch, lambda: solve(tiny_variant(tmp_path, "sym-chance"), max_states=None))
    seen_swapped = 0
    for state in _states(counted.variant, 6, seed=3):
        filled = [b for b in ("c1", "c2", "c3") if b in state.card.scores]
        seen_swapped += filled != ["c1", "c2", "c3"][: len(filled)]
        got = advise_state(counted, state)
        want = _enumerated(monkeypatch, lambda s=state: advise_state(whole, s))
        assert [round(o.value, 9) for o in got] == [round(o.value, 9) for o in want]
        assert {o.action for o in got} == {o.action for o in want}  # every real box offered, not only canonical
    assert seen_swapped  # the random games met cards filled out of the canonical order
    opts = advise(counted, Card({"c3": 2}), (1, 1), 0)
    assert any(o.action.box == "c1" for o in opts if hasattr(o.action, "box"))


def test_optimal_bot_and_simulator_play_the_counted_variant(tmp_path):
    from dicecup.simulate import optimal as optimal_mod
    from dicecup.simulate import simulate, summarize
    from dicecup.solver.policy import OptimalBot

    v = tiny_variant(tmp_path, "sym-upper")
    s = solve(v, max_states=None)
    optimal_mod.remember(s)  # (the variant's own engine keeps it: a new one, made for this test)
    got = summarize(simulate(v, "optimal", 20000, seed=5))
    assert abs(got["mean"] - s.expected_score) < 4 * got["se"], (got["mean"], s.expected_score)
    bot = OptimalBot()
    from dicecup.solver.policy import SolverPolicy

    bot._policies[v.fingerprint] = SolverPolicy.of(s)
    rng = random.Random(1)
    state = GameState.new(v, 1)
    while not state.over:
        state = state.roll(rng) if state.is_chance else state.apply(bot.choose(state))
    assert len(state.card.scores) == len(v.box_ids)


def test_balut_is_refused_with_its_counted_size():
    v = Engine(entry_points=False).variant("balut")
    with pytest.raises(SolverError, match=r"2\^28 .* \(78,125 with its interchangeable boxes \(4\+4\+4\+4\+4\+4\+4\)"):
        rules.check_solvable(v)


def test_the_batched_optimal_policy_takes_a_best_action_on_any_fill_order(tmp_path):
    """The numpy policy values each real open box (cards filled out of the canonical order included)."""
    from dicecup.simulate import optimal as optimal_mod
    from dicecup.simulate.batch import Batched, Turn

    v = tiny_variant(tmp_path, "sym-chance")
    s = solve(v, max_states=None)
    optimal_mod.remember(s)  # (the variant's own engine keeps it: a new one, made for this test)
    sim, policy = Batched(v), optimal_mod.OptimalPolicy(v)
    states = _states(v, 6, seed=4)
    nb = len(v.box_ids)
    vals = np.full((len(states), nb), EMPTY, dtype=np.int64)
    for i, st_ in enumerate(states):
        for box, score in st_.card.scores.items():
            vals[i, v.box_ids.index(box)] = score
    roll_id = {r: i for i, r in enumerate(sim.dm.rolls)}
    rolls = np.array([roll_id[tuple(sorted(st_.dice))] for st_ in states], dtype=np.int64)
    turn = Turn(sim, vals, 0)
    swapped = 0
    for i, st_ in enumerate(states):
        filled = [b for b in ("c1", "c2", "c3") if b in st_.card.scores]
        swapped += filled != ["c1", "c2", "c3"][: len(filled)]
        box, keep = policy.decide(turn, np.array([i]), rolls[i : i + 1], st_.first_roll, st_.rolls_left, None)
        action = Score(v.box_ids[int(box[0])]) if box[0] >= 0 else Keep(sim.dm.keeps[int(keep[0])])
        ranked = advise_state(s, st_)
        value = {o.action: o.value for o in ranked}
        assert action in value, (st_.card, st_.dice, action)
        assert value[action] >= ranked[0].value - 1e-6, (st_.card, st_.dice, action, ranked[:3])
    assert swapped
