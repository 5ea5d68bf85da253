"""The solver's rules model and state search against plain oracles: every score it reuses across rolls is the
engine's own, and the layer-at-a-time search finds exactly the states a state-by-state walk finds."""

from __future__ import annotations

import numpy as np
import pytest
from _solver_helpers import TINY, brute_force, tiny_variant
from hypothesis import given, settings
from hypothesis import strategies as st

from dicecup import Variant
from dicecup.solver import SolverError, solve
from dicecup.solver.rules import RuleModel
from dicecup.solver.space import StateSpace


def walk(model: RuleModel, space: StateSpace) -> list[set[tuple[int, tuple[int, ...]]]]:
    """Every reachable (class, clamped totals), layer by layer, one state, box, roll and first-roll flag at a
    time from the engine's answers (the oracle the vectorised search must agree with)."""
    start = tuple(int(np.clip(0, space.clo[g][0], space.chi[g][0])) for g in range(space.G))
    layer = {(0, start)}
    found = [layer]
    for _ in range(model.nb):
        nxt = set()
        for code, prog in layer:
            leg = model.legality(code)
            scores, _ = model.context_tables(int(model.context_of(np.array([code]))[0]))
            for b in range(model.nb):
                if code >> b & 1:
                    continue
                for r in range(len(model.rolls)):
                    for f in (0, 1) if model.variant.rolls > 1 else (1,):
                        bits = int(leg.table[r, f]) if leg.table is not None else (leg.first if f else leg.later)
                        if not bits >> b & 1:
                            continue
                        s = int(scores[b, r, f])
                        code2 = code + (1 << b) + ((model.digit_of(b, s) * model.radix[b]) << model.nb)
                        mask2 = code2 & space.full
                        p2 = tuple(
                            int(np.clip(prog[g] + (s if b in group else 0), space.clo[g][mask2], space.chi[g][mask2]))
                            for g, group in enumerate(space.groups)
                        )
                        nxt.add((code2, p2))
        layer = nxt
        found.append(layer)
    return found


@pytest.mark.parametrize("name", [name for name in TINY if not name.startswith("banked")])
def test_the_search_finds_exactly_the_states_a_state_by_state_walk_finds(engine, tmp_path, name):
    variant = tiny_variant(tmp_path, name, engine)
    try:
        model = RuleModel(variant)
        model.score_groups  # noqa: B018
        space = StateSpace(model, None)
    except SolverError:
        pytest.skip("the solver refuses this variant")
    want = walk(model, space)
    assert len(space.layers) == len(want)
    for layer, states in zip(space.layers, want, strict=True):
        got = set(zip(layer.codes.tolist(), map(tuple, layer.progress.tolist()), strict=True))
        assert got == states
        assert len(got) == len(layer)  # no state twice
    assert space.n_states == sum(len(s) for s in want)


def test_two_threshold_groups_solve_to_the_brute_force_value(engine, tmp_path):
    variant = tiny_variant(tmp_path, "two-groups", engine)
    solution = solve(variant)
    assert len(solution.space.groups) == 2  # both groups matter: the search keeps two totals
    assert solution.expected_score == pytest.approx(brute_force(variant), abs=1e-9)


@pytest.mark.parametrize(("vid", "options"), [("yacht", {}), ("yahtzee", {"joker": "free"})])
def test_scores_are_asked_once_per_distinct_declared_result(engine, monkeypatch, vid, options):
    """A box's score is explored once per distinct declared result (and card situation), not once per roll."""
    variant = engine.variant(vid, options)
    calls = []
    real = Variant.score

    def counted(self, *args, **kwargs):
        calls.append(1)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Variant, "score", counted)
    model = RuleModel(variant)
    model.score_groups  # noqa: B018
    per_roll = len(variant.boxes) * len(model.rolls) * 2
    assert len(calls) < per_roll / 3


@pytest.mark.parametrize(
    ("vid", "options"), [("yahtzee", {"joker": "free"}), ("yahtzee", {"joker": "forced"}), ("kniffel", {})]
)
def test_every_reused_score_is_the_engines_own(engine, vid, options):
    """For random classes, every box, roll and first-roll flag: the model's score and points are what
    `Variant.score` gives on that class's card."""
    variant = engine.variant(vid, options)
    model = RuleModel(variant)
    rng = np.random.default_rng(7)
    for _ in range(12):
        cats = [int(rng.integers(0, n)) for n in model.ncat]
        code = sum(1 << b for b, c in enumerate(cats) if c)
        code += sum(((c - 1) * model.radix[b]) << model.nb for b, c in enumerate(cats) if c > 1)
        assert model.class_cats(code) == cats
        scores, points = model.context_tables(int(model.context_of(np.array([code]))[0]))
        card = model._card({b: c for b, c in enumerate(cats) if c})
        for r in rng.choice(len(model.rolls), 25, replace=False).tolist():
            for b, box in enumerate(model.box_ids):
                for f in (0, 1):
                    res = variant.score(card, box, model.rolls[r], bool(f))
                    assert (int(scores[b, r, f]), float(points[b, r, f])) == (res.score, res.points)


def test_progress_rows_shift_each_by_its_own_step_as_bits_do():
    """`_shifted` moves every row's bits by that row's step (words carried into each other, bits past the top
    dropped) and says which rows lost a bit below bit 0: checked against the rows as lists of bits."""
    from dicecup.solver.bitrows import pack as _pack
    from dicecup.solver.bitrows import shifted as _shifted
    from dicecup.solver.bitrows import unpack as _unpack

    rng = np.random.default_rng(7)
    for words in (1, 2, 3):
        n = words * 64
        bits = rng.random((200, n)) < 0.2
        steps = rng.integers(-n - 3, n + 3, size=200)
        moved, lost = _shifted(_pack(bits), steps)
        want = np.zeros_like(bits)
        for i, d in enumerate(steps.tolist()):
            src = np.flatnonzero(bits[i]) + d
            want[i, src[(src >= 0) & (src < n)]] = True
            assert lost[i] == bool((src < 0).any())
        assert (_unpack(moved) == want).all()


@settings(max_examples=200, deadline=None)
@given(values=st.lists(st.integers(-(2**62), 2**62), max_size=60), shape=st.sampled_from([(-1,), (2, -1)]))
def test_distinct_is_numpys_unique_without_its_import(values, shape):
    """`bitrows.distinct`: the distinct values ascending, of any shape flattened, the type kept, as np.unique
    gives them (which imports numpy.ma, a cost the solve's and the advisor's processes do without)."""
    from dicecup.solver.bitrows import distinct

    a = np.array(values + values[:1] if shape == (2, -1) and len(values) % 2 else values, dtype=np.int64)
    a = a.reshape(shape) if len(a) else a
    got = distinct(a)
    assert got.dtype == a.dtype and got.tolist() == np.unique(a).tolist()


@settings(max_examples=200, deadline=None)
@given(values=st.lists(st.integers(0, 5000), max_size=80), spare=st.integers(1, 3000), dense=st.integers(0, 1 << 21))
def test_distinct_below_marks_or_sorts_the_same_values_and_ranks_them(values, spare, dense):
    """`bitrows.distinct_below`: the distinct values ascending and each one's position among them, the same
    whether it marks them in a table or sorts them (its table's limit moved around the bound)."""
    from unittest import mock

    from dicecup.solver import bitrows

    a = np.array(values, dtype=np.int64)
    bound = max(values, default=0) + spare
    with mock.patch.object(bitrows, "DENSE_VALUES", dense):
        got, rank = bitrows.distinct_below(a, bound)
    want = np.unique(a)
    assert got.dtype == np.int64 and got.tolist() == want.tolist()
    assert (rank is None) == (bound > min(dense, max(64 * len(a), 1 << 16)))
    if rank is not None:
        assert rank[a].tolist() == np.searchsorted(want, a).tolist()


def test_the_search_finds_the_same_layers_whether_it_marks_or_sorts_its_classes(engine, tmp_path, monkeypatch):
    """The search's successor classes and their positions marked in a table or sorted (`DENSE_VALUES`): the
    same layers of Yahtzee, with its upper bonus clamped, and of a game of two threshold groups."""
    from dicecup.solver import bitrows

    for variant in (engine.variant("yahtzee"), tiny_variant(tmp_path, "two-groups")):
        found = []
        for dense in (bitrows.DENSE_VALUES, 0):
            monkeypatch.setattr(bitrows, "DENSE_VALUES", dense)
            space = StateSpace(RuleModel(variant), None)
            found.append([(layer.codes, layer.progress, layer.index) for layer in space.layers])
        for a, b in zip(*found, strict=True):
            assert all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))


def test_few_rows_paths_find_the_layers_the_array_steps_find(engine, monkeypatch):
    """A layer's few successor classes are sorted and its states counted as Python values (`FEW_ROWS`):
    Yahtzee's layers, with its upper bonus clamped, come out the same with every layer taken that way and none."""
    from dicecup.solver import space as space_module

    model = RuleModel(engine.variant("yahtzee"))
    found = []
    for few in (0, 1 << 30):
        monkeypatch.setattr(space_module, "FEW_ROWS", few)
        space = StateSpace(model, None)
        found.append([(layer.codes, layer.progress, layer.index) for layer in space.layers])
    for (codes, prog, index), (codes2, prog2, index2) in zip(*found, strict=True):
        assert (codes == codes2).all() and (prog == prog2).all() and (index == index2).all()


def test_declared_scores_of_many_rolls_are_the_declared_score_of_each(engine):
    """The solver's signatures come from `Variant.declared_scores`: the same answers as `declared_score`
    asked roll by roll (a pattern that refers to other boxes among them)."""
    variant = engine.variant("russian")
    rolls = variant.all_rolls()
    for box in variant.boxes:
        assert variant.declared_scores(box, rolls) == [variant.declared_score(box, r) for r in rolls]


@pytest.mark.parametrize("vid", ["yacht", "generala"])
def test_context_rows_name_each_distinct_row_once_and_give_back_every_contexts_rows(engine, vid):
    """The kernel's score rows (`dp.ContextRows`): every context's row of points and of successor slots, for each
    box and first roll or not, is the distinct row its index names; no two distinct rows are equal; and the
    indices run in the order the rows were first met, layer after layer."""
    from dicecup.solver.dp import ContextRows

    model = RuleModel(engine.variant(vid))
    space = StateSpace(model, None)
    rows = ContextRows(space)
    for layer in space.layers[::-1]:
        contexts = np.unique(model.context_of(layer.codes))
        before = len(rows.point_list)
        points, slots, reach, point_row, slot_row = rows.layer(contexts)
        for i, c in enumerate(contexts.tolist()):
            want_points, want_slots = model.context_tables(c)[1], space.context_slots(c)
            for b in range(space.nb):
                for f in range(2):
                    assert np.array_equal(points[point_row[i, b, f]], want_points[b, :, f])
                    assert np.array_equal(slots[slot_row[i, b, f]], want_slots[b, :, f])
        assert len({p.tobytes() for p in points}) == len(points) and len({s.tobytes() for s in slots}) == len(slots)
        new = sorted(set(point_row.ravel().tolist()) - set(range(before)))
        assert new == list(range(before, len(points)))  # each new row named in turn
        assert all(reach[k] == np.bitwise_or.reduce(1 << slots[k].astype(np.int64)) for k in range(len(slots)))
