"""The solve's complete scoring tables (`solver.card_tables`), kept beside the cached table.

A new process advises any card from them, with the engine never asked and no table learned, and gives
the engine-scored advice (the learned tables' bit for bit). A kept file that is tampered with, signed
with another key, of another layout, or that holds an index out of range is refused and never reaches a
kernel (they do not check bounds); the advice then falls back to learning, and stays right.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dicecup.language.model import Variant
from dicecup.numeric import card as card_kernel
from dicecup.solver import (
    advice,
    advice_kernel,
    advice_scoring,
    advice_tables,
    advisor_memory,
    cache,
    card_tables,
    solve,
)
from dicecup.solver.card_tables import CardTables
from dicecup.solver.solve import Solution

sys.path.insert(0, str(Path(__file__).parent))
from _solver_helpers import decision_states, rewrite_kept, tiny_variant
from _solver_helpers import forget_advice as _forget

pytestmark = pytest.mark.skipif(not card_kernel.AVAILABLE, reason="the card kernel does not run compiled here")


@pytest.fixture(autouse=True)
def private_cache(monkeypatch, tmp_path, engine):
    monkeypatch.setenv(cache.CACHE_ENV, str(tmp_path / "cache"))
    monkeypatch.setenv(cache.STATE_ENV, str(tmp_path / "state"))
    monkeypatch.setattr(advice_scoring, "TABLES_AFTER", 0)  # the compiled card turn from the first card, in any mode
    # the shared engine's advisor and loaded tables forgotten (a tiny variant's engine is new anyway)
    for kind in (advisor_memory.KIND, cache.RECENT_KIND):
        engine.store.drop(kind)
    yield
    engine.store.drop(advisor_memory.KIND)


def _ask(solution, states) -> list:
    out = []
    for s in states:
        advisor_memory.memory_of(solution.variant).later.clear()  # every card new
        out.append(advice.advise(solution, s.card, s.dice, s.rolls_left, s.first_roll))
    return out


def _learned_answers(solution, states, monkeypatch) -> list:
    """The advice from tables learned of the engine (never the complete ones): the reference."""
    with monkeypatch.context() as mp:
        mp.setattr(advice_kernel, "_card_tables", lambda solution: None)
        out = _ask(solution, states)
    _forget(solution.variant)
    return out


def _new_process(v: Variant, monkeypatch) -> object:
    """The solution as a new process loads it (from the cache, no search), with nothing known, the engine
    refused and the learned tables refused: only the kept complete tables can answer."""
    _forget(v)
    v.store.drop(cache.RECENT_KIND)  # no table read yet
    solution, cached = cache.load_or_solve(v)
    assert cached and solution.searched is None

    def refuse(*args, **kwargs):
        raise AssertionError("the engine or the learned tables were asked")

    monkeypatch.setattr(Variant, "score", refuse)
    monkeypatch.setattr(Variant, "legal_boxes", refuse)
    monkeypatch.setattr(advice_kernel, "_class_arrays", refuse)
    monkeypatch.setattr(advice_scoring, "_later_scores", refuse)
    return solution


CASES = [
    ("flags", {}),
    ("flags", {"joker": "forced"}),  # legality that depends on the roll
    ("threshold", {}),
    ("served", {}),  # first-roll scores
    ("banked", {}),
    ("banked-three", {}),
    ("two-columns", {}),
]


@pytest.mark.parametrize(
    ("name", "options"), CASES, ids=[f"{n}{'-' if o else ''}{'-'.join(o.values())}" for n, o in CASES]
)
def test_a_new_process_advises_from_the_kept_tables_alone(tmp_path, monkeypatch, name, options):
    """A solve keeps its complete tables; a new process advises every card from them, asking neither the
    engine nor the learned tables, and gets the learned tables' advice bit for bit."""
    v = tiny_variant(tmp_path, name, options=options)
    solution, cached = cache.load_or_solve(v)
    assert not cached and cache.arrays_path(v, card_tables.KIND).is_file()
    states = decision_states(v, 60, seed=3)
    want = _learned_answers(solution, states, monkeypatch)
    assert _ask(solution, states) == want  # the in-process solve's own tables
    with monkeypatch.context() as mp:
        kept = _new_process(v, mp)
        assert _ask(kept, states) == want
        memory = advisor_memory.memory_of(v)
        assert memory.card_tables is not None and memory.card_tables[0] is not None and memory.tables is None


@pytest.mark.slow
def test_yahtzee_any_position_from_the_complete_tables(engine, monkeypatch):
    """Yahtzee, positions of whole random games (the yahtzee box filled or not, jokers forced by the roll):
    the complete tables give the learned tables' advice bit for bit."""
    v = engine.variant("yahtzee")
    solution = solve(v)  # solved here, its search at hand (a table another test loaded may have none kept here)
    states = decision_states(v, 150, seed=9)
    assert any(s.card.scores.get("yahtzee") is not None for s in states)
    want = _learned_answers(solution, states, monkeypatch)
    got = _ask(solution, states)
    assert advisor_memory.memory_of(v).card_tables[0] is not None
    assert got == want


def test_interchangeable_boxes_keep_no_tables(tmp_path, monkeypatch):
    """A card whose boxes are interchangeable is not its canonical class's card: nothing is kept, and the
    advice is the learned tables'."""
    v = tiny_variant(tmp_path, "sym-upper")
    solution, _ = cache.load_or_solve(v)
    assert solution.index.symmetric
    assert not cache.arrays_path(v, card_tables.KIND).exists()
    states = decision_states(v, 30, seed=2)
    assert _ask(solution, states) == _learned_answers(solution, states, monkeypatch)


def _kept(tmp_path, monkeypatch):
    """A solved tiny variant with its complete tables kept: (variant, solution, states, learned advice, file)."""
    v = tiny_variant(tmp_path, "flags", options={"joker": "forced"})
    solution, _ = cache.load_or_solve(v)
    states = decision_states(v, 30, seed=6)
    return v, solution, states, _learned_answers(solution, states, monkeypatch), cache.arrays_path(v, card_tables.KIND)


def _refused(v, solution, states, want, path, monkeypatch, deleted: bool = True) -> list[str]:
    """A new process does not use the kept file (it warns, and deletes it unless `deleted` is False), and its
    advice, learned again, is still right; returns what it said."""
    _forget(v)
    said: list[str] = []
    advice_tables.recall_tables(v, said.append)  # what `dicecup advise` does first
    assert path.exists() is not deleted
    with monkeypatch.context() as mp:
        mp.setattr(Solution, "searched", property(lambda self: None))  # as loaded: no search to make them from
        assert _ask(solution, states) == want
    memory = advisor_memory.memory_of(v)
    assert memory.card_tables is not None and memory.card_tables[0] is None
    assert memory.tables is not None  # learned instead
    return said


def test_tampered_tables_are_refused(tmp_path, monkeypatch):
    """One point changed in the kept file, its signature left as it was: refused, deleted, never used."""
    v, solution, states, want, path = _kept(tmp_path, monkeypatch)

    def change(header, arrays):
        arrays["a_points"][0, 0] += 1

    rewrite_kept(path, change)
    said = _refused(v, solution, states, want, path, monkeypatch)
    assert any("damaged, stale or not ours" in s for s in said)


def test_tables_signed_with_another_key_are_refused(tmp_path, monkeypatch):
    v, solution, states, want, path = _kept(tmp_path, monkeypatch)
    (tmp_path / "state" / cache.KEY_FILE).unlink()  # a new key: the file's signature no longer matches
    _refused(v, solution, states, want, path, monkeypatch)


def _resign(v, path: Path, change, meta: dict | None = None) -> None:
    """The kept arrays with `change(arrays)` applied, signed properly again (what only the key's holder can
    write): the contents must be checked, not only the signature."""
    got = cache.load_arrays(v, card_tables.KIND)
    assert got is not None
    arrays = dict(got[1])
    arrays = {k: a.copy() for k, a in arrays.items()}
    change(arrays)
    cache.save_arrays(v, card_tables.KIND, meta or got[0], arrays)
    assert path.is_file()


def _set(name: str, at: tuple, value) -> object:
    def change(arrays):
        arrays[name][at] = value(arrays) if callable(value) else value

    return change


BAD = {
    "point row past the points": _set("point_row", (0, 0, 0), lambda a: len(a["points"])),
    "negative slot row": _set("slot_row", (0, 0, 1), -1),
    "roll table past the tables": _set("rd_index", (0,), lambda a: len(a["rd_tables"])),
    "context past the rows": _set("context", (0,), lambda a: len(a["point_row"])),
    "slot past a box's slots": _set("slots", (0, 0), lambda a: a["slot_add"].shape[1]),
    "used slots past the width": _set("slot_used", (0,), lambda a: a["slot_add"].shape[1] + 1),
    "codes out of order": lambda a: a.__setitem__("codes", a["codes"][::-1].copy()),
    "points of another type": lambda a: a.__setitem__("points", a["points"].astype(np.int64)),
    "an array missing": lambda a: a.pop("reach"),
    "rows of another roll count": lambda a: a.__setitem__("points", a["points"][:, :-1].copy()),
}


@pytest.mark.parametrize("bad", sorted(BAD))
def test_signed_tables_with_bad_contents_are_refused(tmp_path, monkeypatch, bad):
    """Properly signed arrays that do not fit (an index out of range, another type or shape, a missing one)
    are refused with the array named, deleted, and never reach a kernel."""
    v, solution, states, want, path = _kept(tmp_path, monkeypatch)
    _resign(v, path, BAD[bad])
    said = _refused(v, solution, states, want, path, monkeypatch)
    assert any("do not fit" in s for s in said), said


def test_tables_of_another_layout_are_refused(tmp_path, monkeypatch):
    v, solution, states, want, path = _kept(tmp_path, monkeypatch)
    _resign(v, path, lambda arrays: None, {"layout": card_tables.LAYOUT + 1})
    said = _refused(v, solution, states, want, path, monkeypatch)
    assert any("another layout" in s for s in said)


def test_successors_past_the_state_index_are_not_used(tmp_path, monkeypatch):
    """Tables whose successors would lead past the solution's state coding (kept for another coding) are not
    given to the kernel: the advice is learned, and right."""
    v, solution, states, want, path = _kept(tmp_path, monkeypatch)
    _resign(v, path, _set("slot_add", (0, 0), 1 << 40))
    _refused(v, solution, states, want, path, monkeypatch, deleted=False)


def test_asking_for_tables_that_are_not_there_makes_no_key(tmp_path):
    """A library that only advises, with no cache yet, writes nothing: no key file, no cache folder."""
    v = tiny_variant(tmp_path, "flags")
    assert advice_tables.recalled_card_tables(v, None) is None
    assert not cache.key_path().exists() and not cache.cache_dir().exists()


@pytest.fixture(scope="module")
def tiny_tables(tmp_path_factory):
    v = tiny_variant(tmp_path_factory.mktemp("tiny"), "flags", options={"joker": "forced"})
    tables = CardTables.of(solve(v).space)
    assert tables is not None
    return v, tables


INDEX_ARRAYS = ["codes", "rd_index", "context", "point_row", "slot_row", "slots", "slot_used", "rd_tables"]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.sampled_from(INDEX_ARRAYS), where=st.integers(0, 10**6), value=st.integers(-(2**31), 2**31 - 1))
def test_any_one_changed_index_is_refused_or_harmless(tiny_tables, name, where, value):
    """Any one entry of an index array set to anything: `from_arrays` refuses it, or every look-up the
    kernels make from the tables stays in range."""
    v, tables = tiny_tables
    arrays = {k: a.copy() for k, a in tables.arrays().items()}
    flat = arrays[name].reshape(-1)
    flat[where % len(flat)] = value
    n_rolls = len(v.all_rolls())
    try:
        got = CardTables.from_arrays(arrays, len(v.box_ids), n_rolls)
    except ValueError:
        return
    kmax = got.slot_arrays.add.shape[1]
    lay = got.shared_layer()  # what the card kernel reads, at each class's row
    rows, legal = lay.rows, lay.legal
    for at, code in enumerate(got.codes.tolist()):
        assert got.position(code) == at
        assert 0 <= int(lay.states.ctxs[at]) < len(rows.point_row)
        assert legal.rd_index[at] == -1 or 0 <= legal.rd_index[at] < len(legal.rd_tables)
    assert got.position(int(got.codes[-1]) + 1) == -1  # a class the search never met
    assert ((rows.point_row >= 0) & (rows.point_row < len(rows.points))).all()
    assert ((rows.slot_row >= 0) & (rows.slot_row < len(rows.slots))).all()
    assert ((rows.slots >= 0) & (rows.slots < kmax)).all()
    assert ((got.slot_arrays.used >= 0) & (got.slot_arrays.used <= kmax)).all()


def test_the_kept_arrays_read_back_as_they_were(tiny_tables):
    v, tables = tiny_tables
    back = CardTables.from_arrays(tables.arrays(), len(v.box_ids), len(v.all_rolls()))
    for a, b in zip(tables.arrays().values(), back.arrays().values(), strict=True):
        assert a.dtype == b.dtype and np.array_equal(a, b)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
@pytest.mark.parametrize("thing", ["fifo", "directory"])
def test_a_fifo_or_a_folder_at_the_kept_tables_path_is_said_not_read(tmp_path, monkeypatch, thing):
    """A named pipe (which would block a reader) or a folder where the kept tables should be: a warning that
    names it, nothing removed that is not ours, and the advice learned instead, right."""
    v, solution, states, want, path = _kept(tmp_path, monkeypatch)
    path.unlink()
    if thing == "fifo":
        os.mkfifo(path)
    else:
        path.mkdir()
    said = _refused(v, solution, states, want, path, monkeypatch, deleted=False)
    assert said and str(path) in said[0]


@pytest.mark.parametrize("theta", [None, "0.05"])
def test_card_tables_after_a_solve_read_its_rows_and_hold_each_contexts_points(tmp_path, theta):
    """The card tables made after a solve take the score rows its backward pass kept (`dp.kept_context_rows`,
    mean points: a risk solve's rows hold factors, so its card tables make their own), and each context's row
    for each box and first roll or not is that context's points and successor slots."""
    from dicecup.numeric.objective import MEAN, risk_objective
    from dicecup.solver.dp import kept_context_rows

    v = tiny_variant(tmp_path, "flags", options={"joker": "forced"})
    objective = MEAN if theta is None else risk_objective(theta, "test")
    space = solve(v, objective=objective).space
    assert set(space.rows_by_objective) == {objective.id}
    tables = CardTables.of(space)
    assert tables is not None and set(space.rows_by_objective) == {objective.id, MEAN.id}
    rows = kept_context_rows(space)
    assert rows is space.rows_by_objective[MEAN.id] and len(rows.point_list) == len(tables.points)
    model = space.model
    contexts = np.unique(model.context_of(tables.codes))
    for i, c in enumerate(contexts.tolist()):
        points, slots = model.context_tables(c)[1], space.context_slots(c)
        for b in range(space.nb):
            for f in range(2):
                assert np.array_equal(tables.points[tables.point_row[i, b, f]], points[b, :, f])
                assert np.array_equal(tables.slots[tables.slot_row[i, b, f]], slots[b, :, f])
