"""The best-move rows games reached, kept on disk between processes (`simulate.kept_moves`): a later process plays
the same games from them without filling them again, and a file that is tampered with or does not fit is said,
removed and made again, never trusted."""

from __future__ import annotations

import mmap

import numpy as np
import pytest
from _solver_helpers import flip_array_byte, tiny_variant

from dicecup.numeric import compiled, pages
from dicecup.simulate import jitplay, kept_moves, simulate
from dicecup.simulate.batch import batched_for
from dicecup.simulate.batched_run import recall_batched
from dicecup.simulate.optimal import solution_for
from dicecup.solver import cache

pytestmark = pytest.mark.skipif(not compiled.NUMBA_KERNELS, reason="the compiled player needs numba")


@pytest.fixture
def fresh(tmp_path, monkeypatch):
    """A new variant (of a new engine: a new process's memos) of one tiny game, its cache in this test's folder,
    and every run's rows kept however few; calls to fill rows counted in `fresh.filled`."""
    monkeypatch.setenv(cache.CACHE_ENV, str(tmp_path / "cache"))
    monkeypatch.setenv(cache.STATE_ENV, str(tmp_path / "state"))
    monkeypatch.setattr(kept_moves, "KEEP_NEW", 1)
    monkeypatch.setattr(jitplay, "COMPLETE_AFTER", 1e12)  # rows filled as games reach them, never all at once
    filled = []
    fill = jitplay.fill_rows_of

    def counted(*args, **kwargs):
        filled.append(len(args[1]))
        return fill(*args, **kwargs)

    monkeypatch.setattr(jitplay, "fill_rows_of", counted)

    def variant():
        return tiny_variant(tmp_path, "threshold")

    variant.filled = filled
    return variant


def _kept_path(v):
    return cache.arrays_path(v, kept_moves._kind(solution_for(v)))


def _same(a, b):
    return (a.boxes == b.boxes).all() and (a.bonus_points == b.bonus_points).all() and (a.totals == b.totals).all()


def test_a_later_process_plays_from_the_kept_rows(fresh):
    v = fresh()
    first = simulate(v, "optimal", 3000, seed=4)
    assert fresh.filled and _kept_path(v).is_file()
    fresh.filled.clear()
    second = simulate(fresh(), "optimal", 3000, seed=4)
    assert fresh.filled == []  # every state the games reached had its row kept
    assert _same(first, second)
    other = simulate(fresh(), "optimal", 3000, seed=5)  # other games: the same rows, or a few more filled
    assert not (other.totals == first.totals).all()


def _mapped_from(a: np.ndarray) -> bool:
    """Whether `a` is a view of a memory map (a file's, or `numeric.pages`' anonymous one)."""
    while isinstance(a, np.ndarray) and a.base is not None:
        a = a.base
    return isinstance(a, mmap.mmap) or (isinstance(a, memoryview) and isinstance(a.obj, mmap.mmap))


def test_rows_added_to_kept_ones_are_written_apart_and_play_the_same_games(fresh, monkeypatch, tmp_path):
    """A process that adds rows to the kept ones leaves those as mapped from their file (read-only, never
    copied) and writes its own apart, on ordinary mapped pages (`numeric.pages`): its games are those of a
    process that filled every row itself."""
    simulate(fresh(), "optimal", 20, seed=4)  # the rows of a few games kept
    paged = pages.PAGED_BYTES
    monkeypatch.setattr(pages, "PAGED_BYTES", 1)  # every array of a run mapped, however small
    v = fresh()
    got = simulate(v, "optimal", 3000, seed=7)  # other games: rows added to the kept ones
    moves = jitplay.moves_of(v)
    assert moves is not None and 0 < moves.split < moves.used
    assert not moves.base.flags.writeable and _mapped_from(moves.base)  # the kept file's map itself
    assert moves.rows.flags.writeable and _mapped_from(moves.rows)  # (a view of `zeroed`'s buffer)
    every = moves.every_row()
    assert (every[: moves.split] == moves.base).all() and len(every) == moves.used
    monkeypatch.setattr(pages, "PAGED_BYTES", paged)
    monkeypatch.setenv(cache.CACHE_ENV, str(tmp_path / "elsewhere"))  # no kept rows: every row filled here
    assert _same(got, simulate(fresh(), "optimal", 3000, seed=7))


def _more_path(v):
    return cache.arrays_path(v, kept_moves._more_kind(solution_for(v)))


def test_fewer_rows_added_than_kept_are_written_in_a_file_of_their_own(fresh):
    """A run that adds fewer rows than were kept writes only those, beside the kept file (left as it was): a
    later process reads both, fills none of those rows again and plays the same games."""
    v = fresh()
    simulate(v, "optimal", 20, seed=4)
    kept = _kept_path(v).read_bytes()
    second = fresh()
    got = simulate(second, "optimal", 60, seed=5)
    moves = jitplay.moves_of(second)
    assert moves is not None and 0 < moves.used - moves.split <= moves.split  # (the case this test is about)
    assert _kept_path(v).read_bytes() == kept and _more_path(v).is_file()
    fresh.filled.clear()
    third = fresh()
    again = simulate(third, "optimal", 60, seed=5)
    assert fresh.filled == [] and _same(got, again)
    recalled = jitplay.moves_of(third)
    assert recalled is not None and recalled.used == moves.used and recalled.split == moves.split


def test_added_rows_passing_the_kept_ones_are_written_again_as_one_file(fresh):
    """Once a run's added rows outnumber the kept file's, the two are written as one kept file, and the file of
    added rows (which extended the old one) is removed; a later process plays from it alone."""
    v = fresh()
    simulate(v, "optimal", 2, seed=4)
    simulate(fresh(), "optimal", 2, seed=5)
    assert _more_path(v).is_file()
    third = fresh()
    got = simulate(third, "optimal", 3000, seed=7)
    moves = jitplay.moves_of(third)
    assert moves is not None and moves.used - moves.split > moves.split and moves.on_disk == moves.used
    assert not _more_path(v).exists()
    fresh.filled.clear()
    again = simulate(fresh(), "optimal", 3000, seed=7)
    assert fresh.filled == [] and _same(got, again)


def test_added_rows_of_other_kept_rows_are_removed_and_filled_again(fresh):
    """A file of added rows that extends another kept file (written over since, its rows in another order) is
    not used: removed without a word (a run stopped between the two writes leaves one), and its rows filled."""
    v = fresh()
    simulate(v, "optimal", 20, seed=4)
    got = simulate(fresh(), "optimal", 60, seed=5)
    assert _more_path(v).is_file()
    kept = cache.load_arrays(v, kept_moves._kind(solution_for(v)))
    assert kept is not None
    meta, arrays = kept
    reordered = {"rows": np.array(arrays["rows"])[::-1].copy(), "slots": np.array(arrays["slots"])[::-1].copy()}
    cache.save_arrays(v, kept_moves._kind(solution_for(v)), meta, reordered)
    fresh.filled.clear()
    said: list[str] = []
    again = fresh()
    recall_batched(again, "optimal", warn=said.append)
    assert said == [] and not _more_path(v).exists()
    assert _same(got, simulate(again, "optimal", 60, seed=5)) and fresh.filled


def test_a_tampered_file_of_added_rows_is_said_removed_and_its_rows_filled_again(fresh):
    v = fresh()
    simulate(v, "optimal", 20, seed=4)
    got = simulate(fresh(), "optimal", 60, seed=5)
    flip_array_byte(_more_path(v), "a_rows")
    fresh.filled.clear()
    said: list[str] = []
    again = fresh()
    recall_batched(again, "optimal", warn=said.append)
    assert any("moves" in s and "removed" in s for s in said), said
    assert not _more_path(v).exists() and _kept_path(v).is_file()
    assert _same(got, simulate(again, "optimal", 60, seed=5)) and fresh.filled


def test_tampered_rows_are_said_removed_and_filled_again(fresh):
    v = fresh()
    first = simulate(v, "optimal", 3000, seed=4)
    path = _kept_path(v)
    raw = bytearray(path.read_bytes())
    raw[len(raw) // 2] ^= 0x40  # inside the rows (the file is almost all rows)
    path.write_bytes(bytes(raw))
    fresh.filled.clear()
    said: list[str] = []
    again = fresh()
    recall_batched(again, "optimal", warn=said.append)
    assert any("moves" in s and "removed" in s for s in said), said
    assert not path.exists()
    second = simulate(again, "optimal", 3000, seed=4)
    assert fresh.filled and _same(first, second)
    assert path.is_file()  # kept again, from this run's rows


@pytest.mark.parametrize("spoil", ["out of range", "repeated"])
def test_signed_rows_that_do_not_fit_the_solution_are_not_used(fresh, spoil):
    """Slots no state has, or a state given two rows: the file is said not to fit, and no row of it is used
    (the games are those of rows filled afresh)."""
    v = fresh()
    first = simulate(v, "optimal", 3000, seed=4)
    got = cache.load_arrays(v, kept_moves._kind(solution_for(v)))
    assert got is not None
    meta, arrays = got
    n_states = solution_for(v).index.size
    slots = np.array(arrays["slots"])
    if spoil == "out of range":
        slots[:] = n_states + 5  # no state has this slot
    else:
        slots[-1] = slots[0]  # the first state's row given again, last
    cache.save_arrays(v, kept_moves._kind(solution_for(v)), meta, {"rows": np.array(arrays["rows"]), "slots": slots})
    fresh.filled.clear()
    said: list[str] = []
    again = fresh()
    recall_batched(again, "optimal", warn=said.append)
    assert any("do not fit" in s for s in said), said
    second = simulate(again, "optimal", 3000, seed=4)
    assert fresh.filled and _same(first, second)


def test_rows_of_other_code_are_dropped_without_a_word(fresh, monkeypatch):
    v = fresh()
    simulate(v, "optimal", 500, seed=4)
    monkeypatch.setattr(kept_moves, "_CODE", "another-code")
    said: list[str] = []
    recall_batched(fresh(), "optimal", warn=said.append)
    assert said == [] and not _kept_path(v).exists()


def _classes_path(v):
    return cache.arrays_path(v, kept_moves.CLASSES_KIND)


def _copies(monkeypatch) -> list[int]:
    """The classes whose whole tables `ClassArrays` copies from now on, counted."""
    copied: list[int] = []
    chunks = jitplay.ClassArrays._chunks

    def counted(self, start, stop):
        copied.append(stop - start)
        return chunks(self, start, stop)

    monkeypatch.setattr(jitplay.ClassArrays, "_chunks", counted)
    return copied


def test_a_later_process_reads_the_score_classes_play_arrays_back(fresh, monkeypatch):
    """The score classes' play arrays a run made are kept; a later process takes them back (not one class's
    whole table copied) and plays the same games from them."""
    v = fresh()
    first = simulate(v, "optimal", 3000, seed=4)
    assert _classes_path(v).is_file()
    copied = _copies(monkeypatch)
    second = simulate(fresh(), "optimal", 3000, seed=4)
    assert sum(copied) == 0 and _same(first, second)


def test_kept_classes_that_are_not_the_tables_classes_are_made_again(fresh, monkeypatch):
    """Signed play arrays whose keys are not the classes the tables know (another order, another class) are not
    taken: the classes are made from the tables, and the games are the same."""
    v = fresh()
    first = simulate(v, "optimal", 3000, seed=4)
    got = cache.load_arrays(v, kept_moves.CLASSES_KIND)
    assert got is not None
    meta, arrays = got
    keys = np.array(arrays["keys"])
    keyed = np.append(arrays["keyed"], 0)  # keyed on one more fact: other classes than the tables'
    arrays = {**arrays, "keyed": keyed, "keys": np.concatenate([keys, np.full((len(keys), 1), 7)], axis=1)}
    cache.save_arrays(v, kept_moves.CLASSES_KIND, meta, {k: np.array(a) for k, a in arrays.items()})
    again = fresh()
    copied = _copies(monkeypatch)
    second = simulate(again, "optimal", 3000, seed=4)
    assert _same(first, second) and sum(copied) > 0  # made from the tables
    classes = jitplay.class_arrays(batched_for(again).scores, solution_for(again))
    assert classes.kept == len(classes.class_keys())  # made, then kept again over the file that did not fit


def test_the_memo_makes_room_for_its_rows_once_and_keeps_every_row_it_was_given(fresh):
    """`Moves.reserve` maps room for every row the memo can add at its first growth (its pages found only as rows
    are written), so later reserves neither move nor copy the rows already filled."""
    v = fresh()
    moves = jitplay.Moves(solution_for(v), np.uint8, 128)
    first = moves.reserve(3)
    rows = moves.rows
    assert len(rows) == min(moves.limit, len(moves.row_of)) - moves.split
    rows[first - moves.split] = np.arange(3, dtype=np.uint8)[:, None, None] + 1
    second = moves.reserve(5)
    assert moves.rows is rows and second.tolist() == list(range(3, 8))
    assert (moves.added(0)[:3] == np.arange(1, 4, dtype=np.uint8)[:, None, None]).all()
    assert not moves.added(0)[3:].any() and moves.used == 8


def test_score_arrays_filled_as_classes_are_learned_are_those_of_every_class_at_once(tmp_path, fresh, monkeypatch):
    """The fill's score arrays, extended a few classes at a time as games learn them (`ClassArrays.fill_arrays`),
    hold what one pass over every class makes."""
    from dicecup.numeric.moves import class_scores, score_arrays

    made = []

    def counted(cells, *args):
        made.append(len(cells))
        return class_scores(cells, *args)

    monkeypatch.setattr(jitplay, "class_scores", counted)
    v = tiny_variant(tmp_path, "flags")  # (four score classes, met one game turn after another)
    simulate(v, "optimal", 2000, seed=9)
    classes = jitplay.class_arrays(batched_for(v).scores, solution_for(v))
    got = classes.fill_arrays()
    play = classes.arrays()
    want = score_arrays(*class_scores(play.cells, play.extras, classes.awards, classes.solution.score_slots))
    assert len([n for n in made if n]) > 1 and classes.n_fill == len(play.cells)  # (made a few at a time)
    for name, a, b in zip(want._fields, got, want, strict=True):
        assert a.dtype == b.dtype and np.array_equal(a, b), name
