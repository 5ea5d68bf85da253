"""The score-and-advance step (`numeric.advance`): its compiled form, run by every kernel, held to its numpy twin
and to a plain loop over the boxes, on random states: filled and illegal boxes (for every roll, or per roll),
a risk objective's product leaf, ties (the first box reaching the best wins), one successor or several."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dicecup.numeric import advance, compiled
from dicecup.numeric.records import LayerArrays, LayerStates, Legality, ScoreRows, TurnShape

SMALL = st.sampled_from([-1.0, 0.0, 1.0, 2.0])  # few values: ties are common


@st.composite
def states(draw: st.DrawFn) -> dict:
    """One state at one decision: boxes' points and successor slots per roll, successor values per slot, which
    boxes are filled, and its legality (per box, or per roll from a table)."""
    nb, n_rolls, kmax = draw(st.integers(1, 6)), draw(st.integers(1, 7)), draw(st.integers(1, 4))
    f = draw(st.integers(0, 1))
    grid = st.lists(SMALL, min_size=n_rolls, max_size=n_rolls)
    points = np.array([draw(grid) for _ in range(nb)])
    one = st.integers(0, kmax - 1)
    slots = np.array(
        [[k] * n_rolls if draw(st.booleans()) else draw(st.lists(one, min_size=n_rolls, max_size=n_rolls)) for k in
         [draw(one) for _ in range(nb)]],
        dtype=np.int32,
    )  # fmt: skip
    sv = np.array([draw(st.lists(SMALL, min_size=kmax, max_size=kmax)) for _ in range(nb)])
    boxes = st.integers(0, (1 << nb) - 1)
    filled = draw(boxes) & draw(boxes)  # a quarter of the boxes filled, three quarters legal: ties are common
    per_roll = draw(st.booleans())
    bits = [draw(boxes) | draw(boxes) for _ in range(2)]  # legal boxes after a later roll, the first
    table = np.array([[draw(boxes) | draw(boxes) for _ in range(2)] for _ in range(n_rolls)])
    product = draw(st.booleans())
    if product:  # a risk objective's factors exp(theta * points) are positive
        points = np.exp(points / 2)
    return dict(points=points, slots=slots, sv=sv, filled=filled, f=f, per_roll=per_roll, bits=bits, table=table,
                product=product)  # fmt: skip


def layer_of(s: dict) -> LayerArrays:
    """The state as the one row of a kernel layer: box b's points and slots are rows b of the score rows."""
    nb, n_rolls = s["points"].shape
    rows = np.repeat(np.arange(nb, dtype=np.int32)[:, None], 2, axis=1)[None]  # [1 context, boxes, first?]
    reach = np.array([sum(1 << int(k) for k in set(row.tolist())) for row in s["slots"]], dtype=np.int64)
    one = np.zeros(1, dtype=np.int64)
    return LayerArrays(
        LayerStates(np.array([s["filled"]], dtype=np.int64), np.zeros((1, 1), dtype=np.int64), one),
        Legality(
            np.array([s["bits"][0]], dtype=np.int64),
            np.array([s["bits"][1]], dtype=np.int64),
            np.array([0 if s["per_roll"] else -1], dtype=np.int64),
            np.ascontiguousarray(s["table"][None], dtype=np.int64),
        ),
        ScoreRows(np.ascontiguousarray(s["points"]), s["slots"], reach, rows, rows.copy()),
        TurnShape(1, True, one, one, False, s["product"]),
    )


def twin_inputs(s: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(points, after, legal) [boxes, rolls] for the numpy twin: each roll's successor value gathered, and which
    (box, roll) the state may score."""
    nb, n_rolls = s["points"].shape
    after = np.take_along_axis(s["sv"], s["slots"].astype(np.int64), axis=1)
    open_ = ((s["filled"] >> np.arange(nb)) & 1) == 0
    if s["per_roll"]:
        legal = ((s["table"][:, s["f"]][None, :] >> np.arange(nb)[:, None]) & 1) == 1
    else:
        legal = np.repeat((((s["bits"][s["f"]] >> np.arange(nb)) & 1) == 1)[:, None], n_rolls, axis=1)
    return s["points"], after, legal & open_[:, None]


def plain(points: np.ndarray, after: np.ndarray, legal: np.ndarray, product: bool) -> tuple[list, list]:
    """The step as its definition says, roll by roll: the best leaf over the legal boxes and the first box
    reaching it (-inf and -1 where none is legal)."""
    best, arg = [], []
    for r in range(points.shape[1]):
        leaves = [
            (points[b, r] * after[b, r] if product else points[b, r] + after[b, r], b)
            for b in range(points.shape[0])
            if legal[b, r]
        ]
        top = max((v for v, _ in leaves), default=-np.inf)
        best.append(top)
        arg.append(next((b for v, b in leaves if v == top), -1))
    return best, arg


def run_step(forms: dict, s: dict, with_arg: bool) -> tuple[np.ndarray, np.ndarray, bool]:
    """(best, arg, every successor valued) of the state: by `_advance` over its layer row (values), or box by
    box by `_advance_arg` over the legal boxes `_legal_boxes` gives, as the best-move kernel folds them."""
    n_rolls = s["points"].shape[1]
    lay, sv = layer_of(s), np.ascontiguousarray(s["sv"])
    best = np.empty(n_rolls)
    if not with_arg:
        return best, np.empty(0, dtype=np.int64), forms["_advance"](lay, 0, s["f"], sv, best)
    best[:] = -np.inf
    arg = np.full(n_rolls, -1, dtype=np.int64)
    boxes, rd = forms["_legal_boxes"](lay.legal, 0, s["filled"], s["f"])
    rule = (lay.legal.rd_tables, rd, s["f"], s["product"])
    for b in range(len(sv)):
        if (boxes >> b) & 1:
            slots = s["slots"][b]
            single = int(slots[0]) if rd < 0 and len(set(slots.tolist())) == 1 else -1
            forms["_advance_arg"]((best, arg), b, (s["points"][b], slots, sv[b], single, 0), rule)
    return best, arg, True


def kernels() -> list[dict]:
    """The step's forms as Python runs them, and as numba compiles them (where numba is installed)."""
    names = ("_advance", "_legal_boxes", "_advance_arg")
    out = [{name: getattr(advance, name) for name in names}]
    if compiled.NUMBA:
        step = advance.compiled_names()
        out.append({name: step[name] for name in names})
    return out


def form_id(forms: dict) -> str:
    return "numba" if hasattr(forms["_advance"], "py_func") else "python"


@pytest.mark.parametrize("step", kernels(), ids=form_id)
@settings(max_examples=300, deadline=None)
@given(s=states(), with_arg=st.booleans())
def test_the_step_is_its_numpy_twin_and_its_definition(step, s, with_arg):
    best, arg, ok = run_step(step, s, with_arg)
    points, after, legal = twin_inputs(s)
    twin_best, twin_arg = advance.advance(points, after, legal, s["product"])
    want_best, want_arg = plain(points, after, legal, s["product"])
    assert ok
    assert best.tobytes() == twin_best.tobytes() == np.array(want_best).tobytes()  # bit for bit
    assert twin_arg.tolist() == want_arg  # the first box reaching the best
    if with_arg:
        assert arg.tolist() == want_arg


@given(s=states())
@settings(max_examples=100, deadline=None)
def test_best_box_is_the_step_over_the_last_axis(s):
    """`best_box` (the advisor's table of leaves, [rolls, boxes], -inf where illegal) is the same step."""
    points, after, legal = twin_inputs(s)
    shown = np.where(legal, after, -np.inf).T
    best, arg = advance.best_box(points.T, shown, product=s["product"])
    want_best, want_arg = plain(points, after, legal, s["product"])
    assert best.tolist() == want_best and arg.tolist() == want_arg


@pytest.mark.parametrize("step", kernels(), ids=form_id)
@pytest.mark.parametrize(("per_roll", "slots"), [(False, [0, 0, 0]), (False, [0, 1, 0]), (True, [0, 1, 0])])
def test_a_tie_goes_to_the_first_box(step, per_roll, slots):
    """Boxes 1 and 2 reach the same best leaf on every roll (box 0 less): box 1 is the one named, by the
    broadcast, the gather and the per-roll walk alike, and by the numpy twin."""
    s = dict(points=np.array([[0.0] * 3, [1.0] * 3, [2.0] * 3]), slots=np.array([slots] * 3, dtype=np.int32),
             sv=np.array([[1.0, 1.0], [2.0, 2.0], [1.0, 1.0]]), filled=0, f=1, per_roll=per_roll, bits=[0, 0b111],
             table=np.full((3, 2), 0b111), product=False)  # fmt: skip
    best, arg, _ = run_step(step, s, True)
    assert best.tolist() == [3.0] * 3 and arg.tolist() == [1] * 3
    assert advance.advance(*twin_inputs(s))[1].tolist() == [1] * 3


@pytest.mark.parametrize("step", kernels(), ids=form_id)
@pytest.mark.parametrize("per_roll", [False, True])
def test_a_legal_successor_without_a_value_is_reported(step, per_roll):
    """A NaN successor value where a legal box leads (a state the search never valued) makes the step say so;
    the same NaN behind an illegal box does not."""
    s = dict(points=np.ones((2, 3)), slots=np.zeros((2, 3), dtype=np.int32), sv=np.array([[1.0], [np.nan]]),
             filled=0, f=0, per_roll=per_roll, bits=[0b11, 0b11], table=np.full((3, 2), 0b11), product=False)  # fmt: skip
    assert not run_step(step, s, False)[2]
    s["filled"] = 0b10  # the box leading to it is filled
    best, _, ok = run_step(step, s, False)
    assert ok and best.tolist() == [2.0, 2.0, 2.0]


@pytest.mark.parametrize("step", kernels(), ids=form_id)
def test_a_score_the_solver_never_saw_is_reported_and_skipped(step):
    """With the arg kept (the best-move kernel's tables), a legal roll whose slot is -1 is MISSING, and only
    that roll of that box is left out."""
    best, arg = np.full(3, -np.inf), np.full(3, -1, dtype=np.int64)
    rule = (np.full((1, 3, 2), 0b1), np.int64(0), 1, False)  # legality per roll: every roll may score box 0
    leaf = (np.ones(3), np.array([0, -1, 0]), np.array([5.0]), np.int64(-1), np.int64(0))
    assert step["_advance_arg"]((best, arg), 0, leaf, rule) == advance.MISSING
    assert best.tolist() == [6.0, -np.inf, 6.0] and arg.tolist() == [0, -1, 0]
