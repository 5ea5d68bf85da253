"""The end bonuses of full cards kept in the strategy table's file (`solver.endtables`): a later process plays a
run's end bonuses from them, with the very figures the rules model and the engine give, without asking the
engine; a kept table that does not fit is refused, never trusted."""

from __future__ import annotations

import io
import json

import numpy as np
import pytest
from _solver_helpers import tiny_variant
from hypothesis import given, settings
from hypothesis import strategies as st

from dicecup.numeric import compiled, tables
from dicecup.simulate import jitplay, kept_moves, simulate
from dicecup.simulate.optimal import solution_for
from dicecup.solver import cache, endtables

needs_numba = pytest.mark.skipif(not compiled.NUMBA_KERNELS, reason="the compiled player needs numba")


@pytest.fixture
def fresh(tmp_path, monkeypatch):
    """A new variant of one tiny game with an upper bonus (a new engine: a new process's memos), its cache in
    this test's folder."""
    monkeypatch.setenv(cache.CACHE_ENV, str(tmp_path / "cache"))
    monkeypatch.setenv(cache.STATE_ENV, str(tmp_path / "state"))
    return lambda: tiny_variant(tmp_path, "threshold")


def _same(a, b) -> bool:
    return bool((a.totals == b.totals).all() and (a.bonus_points == b.bonus_points).all())


def test_the_table_file_keeps_the_end_bonuses_the_rules_model_gives(fresh):
    v = fresh()
    solved, _ = cache.load_or_solve(v)  # (solved here: its rules model learned)
    loaded = cache.load(fresh())
    assert loaded.searched is None and loaded.kept_end is not None
    cards = simulate(v, "optimal", 500, seed=3).boxes  # full cards
    by_model = solved.end_awards(cards)
    assert by_model and by_model.keys() == loaded.end_awards(cards).keys()
    for aid, points in by_model.items():
        assert (loaded.end_awards(cards)[aid] == points).all() and points.any()


@needs_numba
def test_a_later_process_plays_its_end_bonuses_from_the_table_without_the_engine(fresh, monkeypatch):
    """A later process whose best-move rows were all kept learns no rules model: its end bonuses come from the
    table's file, as the rules model's and the engine's tables give them."""
    monkeypatch.setattr(kept_moves, "KEEP_NEW", 1)  # every run's rows kept, however few
    monkeypatch.setattr(jitplay, "COMPLETE_AFTER", 1e12)  # (and filled as games reach them)
    first = simulate(fresh(), "optimal", 3000, seed=4)  # solves, and plays from the rules model
    engine_end = tables.EndBonuses.points

    def refused(self, *args, **kwargs):
        raise AssertionError("the engine's end-bonus tables were asked")

    monkeypatch.setattr(tables.EndBonuses, "points", refused)
    v = fresh()
    later = simulate(v, "optimal", 3000, seed=4)
    assert _same(first, later) and solution_for(v).searched is None
    monkeypatch.setattr(tables.EndBonuses, "points", engine_end)
    monkeypatch.setattr(endtables.EndAwards, "of", lambda self, codes, progress: None)  # the engine answers
    assert _same(first, simulate(fresh(), "optimal", 3000, seed=4))


def _doc(fresh) -> tuple[dict, object]:
    v = fresh()
    solution, _ = cache.load_or_solve(v)
    end = solution.end_table()
    assert end is not None
    doc = end.encode()
    assert doc is not None
    return doc, solution.index


def test_an_encoded_table_decodes_to_the_same_lookups(fresh):
    doc, index = _doc(fresh)
    back = endtables.EndAwards.decode(json.loads(json.dumps(doc)), index)
    assert back.encode() == doc


BAD = [
    lambda d: d.pop("awards"),
    lambda d: d.update(extra=1),
    lambda d: d.update(nb=d["nb"] + 1),
    lambda d: d.update(nb=True),
    lambda d: d.update(lows=["0"] * len(d["lows"])),
    lambda d: d.update(lows=d["lows"] + [0]),
    lambda d: d.update(tracked=[-2] * len(d["tracked"])),
    lambda d: d.update(tracked=[-1] * len(d["tracked"])),
    lambda d: d.update(shape=[0] + d["shape"][1:]),
    lambda d: d.update(shape=[1 << 20] + d["shape"][1:]),
    lambda d: d.update(shape=[1 << 70] + d["shape"][1:]),
    lambda d: d.update(shape=[2] * 40),
    lambda d: d.update(lows=[1 << 70] * len(d["lows"])),
    lambda d: d.update(awards=[]),
    lambda d: d["awards"].update(up=d["awards"]["up"][:-1]),
    lambda d: d["awards"].update(up=[1.5] * len(d["awards"]["up"])),
    lambda d: d["awards"].update(up=[1 << 50] * len(d["awards"]["up"])),
    lambda d: d["awards"].update(up=None),
]


@pytest.mark.parametrize("spoil", range(len(BAD)))
def test_a_table_that_does_not_fit_is_refused(fresh, spoil):
    doc, index = _doc(fresh)
    BAD[spoil](doc)
    with pytest.raises(ValueError):
        endtables.EndAwards.decode(doc, index)


@settings(max_examples=40, deadline=None)
@given(codes=st.lists(st.integers(0, 1 << 12), min_size=1, max_size=20), totals=st.lists(st.integers(-50, 200)))
def test_states_outside_the_cells_are_not_looked_up(codes, totals):
    """A state the table has no cell for gives None (the caller asks the engine's tables), never a wrong cell or
    an IndexError."""
    axes = endtables.TerminalAxes(nb=3, lows=(2,), tracked=(0,))
    end = endtables.EndAwards({"up": np.arange(2 * 10, dtype=np.int64).reshape(2, 10)}, axes)
    c = np.array(codes, dtype=np.int64)
    p = np.array((totals + [0] * len(codes))[: len(codes)], dtype=np.int64).reshape(-1, 1)
    inside = ((c >> 3) < 2) & (p[:, 0] >= 2) & (p[:, 0] < 12)
    got = end.of(c, p)
    if inside.all():
        assert got is not None and (got["up"] == (c >> 3) * 10 + p[:, 0] - 2).all()
    else:
        assert got is None


def test_a_signed_table_with_end_bonuses_that_do_not_fit_is_rejected_and_rebuilt(fresh, tmp_path):
    """Even signed with the user's key, end bonuses that do not fit make the table inconsistent: refused, said,
    solved again."""
    v = fresh()
    good = cache.load_or_solve(v)[0].expected_score
    path = cache.cache_path(v)
    with np.load(path) as data:
        arrays = {k: data[k].copy() for k in data.files}
    header = json.loads(bytes(arrays.pop("header")).decode())
    header["end_awards"]["lows"] = ["nine"]
    header["hmac"] = cache._mac((tmp_path / "state" / cache.KEY_FILE).read_bytes(), header, arrays)
    buf = io.BytesIO()
    np.savez(buf, header=np.frombuffer(json.dumps(header).encode(), dtype=np.uint8), **arrays)
    path.write_bytes(buf.getvalue())
    warnings: list[str] = []
    again, cached = cache.load_or_solve(fresh(), warn=warnings.append)
    assert not cached and again.expected_score == good
    assert len(warnings) == 1 and "inconsistent" in warnings[0], warnings


def test_kept_engine_tables_that_do_not_fit_are_learned_again_on_first_use(fresh):
    """The engine's end-bonus tables are taken back when first used; arrays that do not fit then leave them
    empty, and they ask the engine, with the same answers."""
    from dicecup.simulate.batch import Batched

    v = fresh()
    cards = simulate(v, "optimal", 300, seed=5).boxes
    want = Batched(v).tables.end.points(cards)
    spoiled = Batched(v).tables
    spoiled.end.restore({"reads_len": np.zeros(7, dtype=np.int64)})  # (taken back only when first used)
    assert spoiled.end.asked == 0
    assert (spoiled.end.points(cards) == want).all() and spoiled.end.asked > 0
