"""The rule tracer's tables, learned once and kept: what a cache gives back is what the rules say.

`numeric.tracer.Traced` learns a hook's answers by the card facts each entry reads; `state` and `restore`
carry them, and `solver.learned` keeps them signed beside the solver's table. These tests check that a
restored table is the table learned from the rules (no engine call made), that a second process (a fresh
engine) plays from the kept tables without asking the rules, and that a tampered, stale or garbled file
is refused with a warning, deleted, and learned again.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest
from _solver_helpers import rewrite_kept
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dicecup import Card, Engine
from dicecup.language.tracing import FILLED, VALUE, traced_card, tracing
from dicecup.numeric.tables import EMPTY, RuleTables
from dicecup.numeric.tracer import box_reads
from dicecup.simulate import simulate
from dicecup.simulate.batch import Batched, batched_for
from dicecup.simulate.result import bonus_columns, event_columns
from dicecup.solver import cache, learned


@pytest.fixture(scope="module")
def solved(tmp_path_factory):
    """A cache and signing key holding the solver's yahtzee table only (solved once for the module)."""
    where = tmp_path_factory.mktemp("solved")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(cache.CACHE_ENV, str(where / "cache"))
        mp.setenv(cache.STATE_ENV, str(where / "state"))
        cache.load_or_solve(_fresh())
    return where


@pytest.fixture
def own_cache(solved, tmp_path, monkeypatch):
    """The solver's cache and signing key in this test's own folder, with the yahtzee table solved already."""
    shutil.copytree(solved / "cache", tmp_path / "cache")
    shutil.copytree(solved / "state", tmp_path / "state")
    monkeypatch.setenv(cache.CACHE_ENV, str(tmp_path / "cache"))
    monkeypatch.setenv(cache.STATE_ENV, str(tmp_path / "state"))
    return tmp_path


def _fresh(vid: str = "yahtzee"):
    """The variant through a new engine: a new store, as a new process has (nothing learned in memory)."""
    return Engine(entry_points=False).variant(vid)


def _tables(v) -> RuleTables:
    ids, _ = bonus_columns(v)
    return RuleTables(v, list(ids), event_columns(v)[0])


def _cards(v, seed: int, n: int) -> np.ndarray:
    """`n` random card rows of `v`: each box open or holding one of the scores the rules can give it."""
    rng = np.random.default_rng(seed)
    nb = len(v.box_ids)
    vals = np.full((n, nb), EMPTY, dtype=np.int64)
    for j, box in enumerate(v.box_ids):
        scores = sorted({v.score(Card({}), box, r, False).score for r in v.all_rolls()[:: max(1, v.roll_count // 40)]})
        filled = rng.random(n) < 0.5
        vals[filled, j] = rng.choice(scores, size=int(filled.sum()))
    return vals


@pytest.fixture(scope="module")
def yahtzee():
    return _fresh()


@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), split=st.integers(1, 20))
def test_restored_tables_are_the_learned_tables_and_ask_nothing(yahtzee, seed, split):
    """Tables learned from some cards, carried through `state`/`restore`, answer those cards with the same
    tables without an engine call, and go on learning new cards exactly as tables that never stopped."""
    v = yahtzee
    vals = _cards(v, seed, 24)
    learnt = _tables(v)
    cls, tables = learnt.scores.traced.classes(vals[:split])
    legal = learnt.legal.lookup(vals[:split])
    meta, arrays = learnt.state()
    meta = json.loads(json.dumps(meta))  # as the cache keeps it
    back = _tables(v)
    back.restore(meta, arrays)
    again, tables_back = back.scores.traced.classes(vals[:split])
    assert back.scores.traced.asked == 0
    np.testing.assert_array_equal(tables_back[again], tables[cls])
    np.testing.assert_array_equal(back.legal.lookup(vals[:split]), legal)
    # the rest of the cards: the restored tables learn them as the first ones do
    cls, tables = learnt.scores.traced.classes(vals)
    again, tables_back = back.scores.traced.classes(vals)
    np.testing.assert_array_equal(tables_back[again], tables[cls])
    np.testing.assert_array_equal(back.end.points(vals), learnt.end.points(vals))


def test_restored_tables_are_kept_again_without_making_their_class_tables(yahtzee):
    """A restored tracer's `state` holds what it was restored from (the same answers, perhaps in another
    order) and makes none of the class tables: their answers are known already (a simulate run that learned
    one new class used to make every restored class's table, hundreds of them, only to keep the same
    answers)."""
    v = yahtzee
    vals = _cards(v, 7, 24)
    learnt = _tables(v)
    learnt.scores.traced.classes(vals[:12])
    meta, arrays = learnt.state()
    back = _tables(v)
    back.restore(json.loads(json.dumps(meta)), arrays)
    traced = back.scores.traced
    assert len(traced.tables) > 1 and traced.tables.made == 0
    meta_again, arrays_again = back.state()
    assert traced.tables.made == 0
    assert meta_again == meta and arrays_again.keys() == arrays.keys()
    assert all(arrays_again[name].shape == arrays[name].shape for name in arrays)
    third = _tables(v)
    third.restore(meta_again, arrays_again)
    cls, tables = learnt.scores.traced.classes(vals[:12])
    again, tables_back = third.scores.traced.classes(vals[:12])
    assert third.scores.traced.asked == 0
    np.testing.assert_array_equal(tables_back[again], tables[cls])


def test_restore_refuses_arrays_of_other_rules():
    """Arrays that do not fit the rules (another variant's, a truncated one) raise ValueError or KeyError,
    never a wrong table."""
    yacht, yahtzee = _fresh("yacht"), _fresh("yahtzee")
    small = _tables(yacht)
    small.scores.traced.classes(_cards(yacht, 1, 10))
    meta, arrays = small.state()
    with pytest.raises((ValueError, KeyError)):
        _tables(yahtzee).restore(meta, arrays)
    cut = dict(arrays)
    cut["s_answers"] = cut["s_answers"][:-1]
    with pytest.raises(ValueError):
        _tables(yacht).restore(meta, cut)
    del cut["s_entry"]
    with pytest.raises(KeyError):
        _tables(yacht).restore(meta, cut)


def _run(v, seed: int = 7, games: int = 500):
    result = simulate(v, "optimal", games, seed=seed, method="batched")
    return result.totals, result.boxes, result.bonus_points, result.event_counts


def test_second_process_plays_from_the_kept_tables_without_asking_the_rules(own_cache):
    """A run keeps what its tables learned; a run through a new engine (a new process) reads it back, asks
    the rules nothing for the cards it meets, and plays the same games. (The first run scores its full cards'
    end bonuses from the solver's end tables, which its fill builds anyway; a later run, its best moves all
    kept, from the simulator's own end tables: the second learns those once and keeps them, the third asks
    nothing at all.)"""
    v = _fresh()
    first = _run(v)
    sim = batched_for(v)
    assert sim.scores.traced.asked > 0
    assert cache.arrays_path(v, learned.KIND).is_file()
    v2 = _fresh()
    second = _run(v2)
    sim2 = batched_for(v2)
    assert sim2 is not sim and sim2.kept is not None
    assert sim2.scores.traced.asked == 0
    v3 = _fresh()
    third = _run(v3)
    sim3 = batched_for(v3)
    assert sim3.scores.traced.asked == 0 and sim3.end.traced.asked == 0
    for a, b, c in zip(first, second, third, strict=True):
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(a, c)


def test_results_are_the_same_with_and_without_the_cache(own_cache, monkeypatch):
    """A run whose tables came from the cache plays the games a run that learned them all plays."""
    _run(_fresh(), seed=3)
    kept = _run(_fresh(), seed=11)
    cache.arrays_path(_fresh(), learned.KIND).unlink()
    plain = _run(_fresh(), seed=11)
    for a, b in zip(kept, plain, strict=True):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize(
    "change",
    [
        pytest.param(lambda h, a: a["a_s_answers"].__setitem__((0, 0), a["a_s_answers"][0, 0] + 1), id="answer"),
        pytest.param(lambda h, a: h.__setitem__("key", "0" * 24), id="stale-key"),
    ],
)
def test_tampered_tables_are_refused_with_a_warning_and_learned_again(own_cache, change):
    """A kept file changed after it was signed is not used: a warning, the file deleted, the tables learned
    from the rules again (the same games), and kept anew."""
    v = _fresh()
    want = _run(v)
    path = cache.arrays_path(v, learned.KIND)
    rewrite_kept(path, change)
    said: list[str] = []
    v2 = _fresh()
    sim = batched_for(v2, warn=said.append)
    assert said and "removed" in said[0] and not path.exists()
    assert sim.kept is None and not sim.scores.traced.tables
    got = _run(v2)
    assert sim.scores.traced.asked > 0 and path.is_file()
    for a, b in zip(want, got, strict=True):
        np.testing.assert_array_equal(a, b)


def test_kept_tables_that_do_not_fit_are_learned_again(own_cache):
    """A properly signed file whose arrays do not fit these rules (another layout) is deleted with a warning."""
    v = _fresh()
    meta, arrays = _tables(v).state()
    learned.keep(v, learned.KIND, learned.LAYOUT + 1, meta, arrays)
    said: list[str] = []
    sim = Batched(v)
    assert learned.recall(v, learned.KIND, learned.LAYOUT, sim.tables.restore, said.append) is False
    assert said and "made again" in said[0]
    assert not cache.arrays_path(v, learned.KIND).exists()


def test_box_reads_names_each_box_read_and_the_whole_card_as_every_box():
    """`box_reads` (what both the tracer and the solver key answers on): a box read for its value or only
    whether it is filled, boxes the card does not have left out, and a read of the whole card (its
    length) a read of every box, merged with what was read of each."""
    index = {"a": 0, "b": 1, "c": 2}
    card = traced_card({"a": 3, "b": 0})
    with tracing() as reads:
        _ = card.scores["a"], "b" in card.scores, "zz" in card.scores
    got = box_reads(reads, index)
    assert set(got) == {0, 1} and got[0] & VALUE and got[1] == FILLED
    with tracing() as reads:
        _ = card.scores["a"], len(card.scores)
    got = box_reads(reads, index)
    assert set(got) == {0, 1, 2} and got[0] & VALUE and all(k & FILLED for k in got.values())


def test_dicecup_simulate_reads_the_kept_tables_and_warns_of_a_tampered_file(own_cache):
    """`dicecup simulate`, as whole processes: the first keeps the rule tables, the second reads them (the
    file is not written again: nothing new was learned) and reports the same games; a file tampered with
    after that is refused with a warning on stderr, and the run still reports the same games."""
    env = {**os.environ, cache.CACHE_ENV: str(own_cache / "cache"), cache.STATE_ENV: str(own_cache / "state")}
    env["DICECUP_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    args = [sys.executable, "-m", "dicecup", "simulate", "-v", "yahtzee", "-n", "300", "--seed", "5", "--json", "-q"]

    def run() -> subprocess.CompletedProcess:
        done = subprocess.run(args, capture_output=True, text=True, env=env, timeout=300, stdin=subprocess.DEVNULL)
        assert done.returncode == 0, done.stderr
        return done

    first = run()
    path = cache.arrays_path(_fresh(), learned.KIND)
    written = path.stat().st_mtime_ns
    second = run()
    assert second.stdout == first.stdout and second.stderr == ""
    assert path.stat().st_mtime_ns == written
    rewrite_kept(path, lambda h, a: a["a_s_answers"].__setitem__((0, 0), a["a_s_answers"][0, 0] + 1))
    third = run()
    assert third.stdout == first.stdout
    assert third.stderr.startswith("warning: the rule-tables arrays") and "removed" in third.stderr
    assert "Traceback" not in third.stderr
