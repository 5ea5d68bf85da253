"""The advisor's score and legality tables kept beside the solver's table: a new process advises its first
card from them without asking the engine, and a kept file that is tampered with, stale or of another
layout is refused, deleted and made again, never trusted.

Every test has its own cache folder and key folder, and starts with the advisor knowing no tables.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from dicecup.language.model import Variant
from dicecup.numeric import compiled
from dicecup.solver import advice, advice_kernel, advice_scoring, advice_tables, advisor_memory, cache

sys.path.insert(0, str(Path(__file__).parent))
from _solver_helpers import decision_states, rewrite_kept, tiny_variant
from _solver_helpers import forget_advice as _forget

COMPLETE = advice_kernel._card_tables


@pytest.fixture(autouse=True)
def private_cache(monkeypatch, tmp_path):
    monkeypatch.setenv(cache.CACHE_ENV, str(tmp_path / "cache"))
    monkeypatch.setenv(cache.STATE_ENV, str(tmp_path / "state"))
    monkeypatch.setattr(advice_kernel, "_card_tables", lambda solution: None)  # the learned tables (test_card_tables:
    # the solve's complete ones), unless a test says otherwise (each test's variant: a new engine's, fresh)


def _no_engine(monkeypatch) -> None:
    """Any score or legality asked of the engine from here on fails the test."""

    def refuse(*args, **kwargs):
        raise AssertionError("the engine was asked")

    monkeypatch.setattr(Variant, "score", refuse)
    monkeypatch.setattr(Variant, "legal_boxes", refuse)


def _ask(solution, states) -> list:
    return [advice.advise(solution, s.card, s.dice, s.rolls_left, s.first_roll) for s in states]


def _engine_answers(solution, states, monkeypatch) -> list:
    """The advice scored by the engine (the tables never answer): the reference."""
    with monkeypatch.context() as mp:
        mp.setattr(advice_scoring, "TABLES_AFTER", 10**9)
        out = []
        for s in states:
            advisor_memory.memory_of(solution.variant).later.clear()
            out += _ask(solution, [s])
    _forget(solution.variant)
    return out


@pytest.mark.parametrize("name", ["flags", "threshold", "banked"])
def test_kept_tables_advise_a_new_process_without_the_engine(tmp_path, monkeypatch, name):
    """A first process learns the tables (`recall_tables` finds none) and keeps them; the next one reads them
    back and advises the same cards, with the engine never asked, giving the engine-scored advice."""
    v = tiny_variant(tmp_path, name)
    solution, _ = cache.load_or_solve(v)
    states = decision_states(v, 30, seed=4)
    want = _engine_answers(solution, states, monkeypatch)
    assert advice_tables.recall_tables(solution.variant) is False
    assert _ask(solution, states) == want
    advice_tables.keep_tables(solution.variant)
    path = cache.arrays_path(v, advice_tables.TABLES_KIND)
    assert path.is_file()
    _forget(v)
    assert advice_tables.recall_tables(solution.variant) is True
    with monkeypatch.context() as mp:
        _no_engine(mp)
        got = []
        for s in states:
            advisor_memory.memory_of(solution.variant).later.clear()
            got += _ask(solution, [s])
    assert got == want


def _kept(tmp_path, name: str = "flags"):
    """A solved tiny variant with its tables kept; (variant, solution, states, engine advice, file)."""
    v = tiny_variant(tmp_path, name)
    solution, _ = cache.load_or_solve(v)
    states = decision_states(v, 12, seed=5)
    advice_tables.recall_tables(solution.variant)
    _ask(solution, states)
    advice_tables.keep_tables(solution.variant)
    _forget(v)
    return v, solution, states, cache.arrays_path(v, advice_tables.TABLES_KIND)


def _refused(v, solution, states, path, monkeypatch) -> None:
    """The kept file is refused with a warning and deleted; the advice is the engine's; the tables are kept again."""
    want = _engine_answers(solution, states, monkeypatch)
    said: list[str] = []
    assert advice_tables.recall_tables(solution.variant, said.append) is False
    assert said and not path.exists()
    assert _ask(solution, states) == want
    advice_tables.keep_tables(solution.variant)
    _forget(v)
    assert advice_tables.recall_tables(solution.variant) is True


def test_tampered_tables_are_refused_and_made_again(tmp_path, monkeypatch):
    """One score changed in the kept file (its signature left as it was): refused, never used."""
    v, solution, states, path = _kept(tmp_path)

    def change(header, arrays):
        answers = arrays["a_s_answers"]  # the learned answers the score tables are made from
        answers[0, 0] += 1

    rewrite_kept(path, change)
    _refused(v, solution, states, path, monkeypatch)


def test_tables_signed_with_another_key_are_refused(tmp_path, monkeypatch):
    """A file signed with another user's key (or written by someone else) is not trusted."""
    v, solution, states, path = _kept(tmp_path)
    raw = path.read_bytes()
    (tmp_path / "state" / cache.KEY_FILE).unlink()  # a new key: the file's signature no longer matches
    path.write_bytes(raw)
    _refused(v, solution, states, path, monkeypatch)


def test_stale_tables_are_refused(tmp_path, monkeypatch):
    """Tables made for other rules (another cache key: rules code, plugins, solver version) are refused even
    where they sit under this key's name, signature and all."""
    v, solution, states, path = _kept(tmp_path)
    with monkeypatch.context() as mp:
        mp.setattr(cache, "cache_key", lambda variant: "0" * 24)
        old = cache.arrays_path(v, advice_tables.TABLES_KIND)
        advice_tables.recall_tables(solution.variant)
        _ask(solution, states)
        advice_tables.keep_tables(solution.variant)  # signed properly, for the other key
        _forget(v)
    path.unlink(missing_ok=True)  # removed already: the other key's file replaced it
    old.rename(path)
    _refused(v, solution, states, path, monkeypatch)


def test_tables_of_another_layout_are_refused(tmp_path, monkeypatch):
    """A properly signed file of another layout of the tables (an older dicecup's) is deleted and made again."""
    v, solution, states, path = _kept(tmp_path)
    with monkeypatch.context() as mp:
        mp.setattr(advice_tables, "TABLES_LAYOUT", advice_tables.TABLES_LAYOUT + 1)
        advice_tables.recall_tables(solution.variant)
        _ask(solution, states)
        advice_tables.keep_tables(solution.variant)
        _forget(v)
    _refused(v, solution, states, path, monkeypatch)


ADVISE_NO_ENGINE = """\
import sys
from dicecup.cli import main
from dicecup.language.model import Variant

def refuse(*args, **kwargs):
    raise AssertionError("the engine was asked")

if sys.argv[1] == "kept":
    Variant.score = Variant.legal_boxes = refuse
try:
    main(["advise", "-v", "yacht", "-d", "11256", "-q", "--json", "-r", "1", "-c", "ones=3,sixes=24"])
except SystemExit as exc:
    assert not exc.code, exc.code
"""


def _solved_yacht(tmp_path) -> Callable[[str], dict]:
    """Yacht solved by `dicecup solve` in a cache of the test's own; returns what runs `ADVISE_NO_ENGINE` in a
    new process (`kept`: the engine refused) and gives its --json answer, its time left out."""
    env = {**os.environ, cache.CACHE_ENV: str(tmp_path / "cache"), cache.STATE_ENV: str(tmp_path / "state")}
    subprocess.run([sys.executable, "-m", "dicecup", "solve", "-v", "yacht", "-q"], env=env, check=True)

    def run(mode: str) -> dict:
        done = subprocess.run(
            [sys.executable, "-c", ADVISE_NO_ENGINE, mode], env=env, capture_output=True, text=True, cwd=tmp_path
        )
        assert done.returncode == 0, done.stderr
        out = json.loads(done.stdout)
        del out["seconds"]
        return out

    return run


def test_dicecup_advise_keeps_the_tables_and_its_next_run_asks_no_engine(tmp_path):
    """Without the solve's complete tables (an older cache), the first `dicecup advise` learns and keeps the
    tables; the next one, in a new process, checks its --card and advises with every engine score and
    legality call refused, and says the same."""
    run = _solved_yacht(tmp_path)
    (complete,) = (tmp_path / "cache").glob("*.card-tables.npz")
    complete.unlink()

    first = run("learn")
    assert list((tmp_path / "cache").glob(f"*.{advice_tables.TABLES_KIND}.npz"))
    assert run("kept") == first


@pytest.mark.skipif(
    compiled.MODE != "aot",
    reason="the card kernel answers a process's first card only when built ahead of time (numba would compile it)",
)
def test_dicecup_advise_after_a_solve_asks_no_engine(tmp_path):
    """With the solve's complete tables kept beside its table, the very first `dicecup advise` checks its
    --card and advises with every engine score and legality call refused, and says what the engine says."""
    run = _solved_yacht(tmp_path)

    kept = run("kept")
    for complete in (tmp_path / "cache").glob("*.card-tables.npz"):
        complete.unlink()
    assert run("learn") == kept


@pytest.mark.parametrize("complete", [False, True], ids=["learned", "complete"])
@pytest.mark.parametrize("name", ["flags", "served", "threshold"])
def test_known_scores_are_the_engines(tmp_path, monkeypatch, name, complete):
    """What the tables (learned, or the solve's complete ones) tell `dicecup advise --card` a box can score on
    a card is what the engine scores there, for every card whose class they know; nothing where they do not
    know it."""
    if complete:
        monkeypatch.setattr(advice_kernel, "_card_tables", COMPLETE)
    v = tiny_variant(tmp_path, name)
    solution, _ = cache.load_or_solve(v)
    states = decision_states(v, 25, seed=6)
    assert advice_tables.known_scores(v, states[0].card, v.box_ids[0]) is None  # no tables yet
    advice_tables.recall_tables(v)
    _ask(solution, states)
    checked = 0
    for s in states:
        for box in v.box_ids:
            got = advice_tables.known_scores(v, s.card, box)
            if got is None:
                continue
            rolls = v.all_rolls()
            assert got == {v.score(s.card, box, r, first).score for r in rolls for first in (False, True)}
            checked += 1
    assert checked >= len(states)
    if complete and compiled.MODE == "aot":  # (else the numpy path, or numba's before it compiles, answers)
        assert advice_tables._learned(v)[0] == 0  # the complete tables answered every one
