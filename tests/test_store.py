"""The engine's store: what is kept for its variants belongs to it, bounded; the advisor keeps its memory there."""

from __future__ import annotations

import pickle
import threading

import pytest

from dicecup.language.engine import Engine
from dicecup.solver import advisor_memory
from dicecup.store import Store, store_of


def test_get_makes_an_entry_once_and_keeps_it():
    store = Store()
    made = []
    first = store.get("kind", "a", lambda: made.append(1) or ["a"])
    again = store.get("kind", "a", lambda: made.append(1) or ["other"])
    assert first is again and made == [1]
    assert store.peek("kind", "a") is first and store.peek("kind", "b") is None and store.peek("other", "a") is None


def test_each_kind_keeps_its_most_recently_used_entries():
    store = Store()
    for key in "abc":
        store.get("kind", key, lambda key=key: key, keep=2)
    assert store.size("kind") == 2 and store.peek("kind", "a") is None  # the least recently used went
    store.get("kind", "b", lambda: "never", keep=2)  # used: now the most recent
    store.get("kind", "d", lambda: "d", keep=2)
    assert store.peek("kind", "b") == "b" and store.peek("kind", "c") is None and store.peek("kind", "d") == "d"
    store.get("other", "x", lambda: "x", keep=1)
    assert store.size("kind") == 2 and store.size("other") == 1  # kinds are bounded apart


def test_an_entry_that_no_longer_serves_is_made_again():
    store = Store()
    first = store.get("kind", "a", lambda: ["old"])
    same = store.get("kind", "a", lambda: ["new"], valid=lambda got: got == ["old"])
    assert same is first
    made = store.get("kind", "a", lambda: ["new"], valid=lambda got: got == ["new"])
    assert made == ["new"] and store.peek("kind", "a") is made and store.size("kind") == 1


def test_put_keeps_the_first_entry_and_replace_overrides_it():
    store = Store()
    assert store.put("kind", "a", 1) == 1
    assert store.put("kind", "a", 2) == 1  # made meanwhile by another thread: the first one kept wins
    assert store.replace("kind", "a", 3) == 3 and store.peek("kind", "a") == 3


def test_drop_one_entry_or_a_whole_kind():
    store = Store()
    for key in "ab":
        store.put("kind", key, key)
    store.put("other", "a", "a")
    store.drop("kind", "a")
    assert store.peek("kind", "a") is None and store.peek("kind", "b") == "b"
    store.drop("kind")
    assert store.size("kind") == 0 and store.peek("other", "a") == "a"
    store.drop("missing")  # nothing to let go of: no error
    store.drop("missing", "key")


def test_threads_asking_at_once_get_one_entry():
    store = Store()
    got: list[object] = []
    start = threading.Barrier(8)

    def ask() -> None:
        start.wait()
        got.append(store.get("kind", "a", object))

    threads = [threading.Thread(target=ask) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(got) == 8 and all(g is got[0] for g in got)


def test_a_variant_carries_its_engines_store_and_engines_keep_apart(engine):
    v = engine.variant("yacht")
    assert store_of(v) is engine.store
    assert store_of(engine.variant("yahtzee")) is engine.store
    other = Engine(entry_points=False)
    w = other.variant("yacht")
    assert w.fingerprint == v.fingerprint and store_of(w) is other.store is not engine.store
    assert advisor_memory.memory_of(v) is advisor_memory.memory_of(v)
    assert advisor_memory.memory_of(w) is not advisor_memory.memory_of(v)  # what one engine learns is its own


def test_a_pickled_variant_is_compiled_again_into_an_engine_with_a_store(engine):
    v = engine.variant("yacht")
    back = pickle.loads(pickle.dumps(v))
    assert back == v and isinstance(store_of(back), Store)
    assert store_of(back) is store_of(back.derive({}))  # a variant derived from it keeps the same engine's


def test_an_object_without_a_store_keeps_nothing():
    class Bare:
        fingerprint = "x"

    assert store_of(Bare()) is not store_of(Bare())
    assert advisor_memory.memory_of(Bare()) is not advisor_memory.memory_of(Bare())


def test_the_simulators_memos_are_the_engines(engine):
    from dicecup.simulate import jitplay
    from dicecup.simulate.batch import BATCHED_KIND, batched_for

    v = engine.variant("yacht")
    sim = batched_for(v)
    assert batched_for(v) is sim and engine.store.peek(BATCHED_KIND, v.fingerprint) is sim
    other = Engine(entry_points=False).variant("yacht")
    assert batched_for(other) is not sim  # another engine's rule hooks: its own tables
    assert jitplay.moves_of(other) is None


def test_the_advisor_remembers_few_variants_and_few_turns(monkeypatch):
    engine = Engine(entry_points=False)
    monkeypatch.setattr(advisor_memory, "VARIANTS_KEPT", 2)
    ids = ["yacht", "yahtzee", "generala"]
    for vid in ids:
        advisor_memory.memory_of(engine.variant(vid))
    assert engine.store.size(advisor_memory.KIND) == 2
    memory = advisor_memory.memory_of(engine.variant(ids[-1]))
    for i in range(advisor_memory.LATER_KEPT + 5):
        memory.remember((i,), (None, i))
    assert len(memory.later) == advisor_memory.LATER_KEPT and (0,) not in memory.later
    advisor_memory.forget(engine.variant(ids[-1]))
    assert advisor_memory.memory_of(engine.variant(ids[-1])) is not memory


@pytest.mark.parametrize(
    ("kind", "xdg", "default"),
    [
        ("cache", "XDG_CACHE_HOME", ".cache"),
        ("state", "XDG_STATE_HOME", ".local/state"),
        ("data", "XDG_DATA_HOME", ".local/share"),
    ],
)
def test_the_user_folders_follow_one_rule(monkeypatch, tmp_path, kind, xdg, default):
    """The cache, state and data folders: the override variable, else $XDG_..._HOME/dicecup, else the default
    under the home folder (on Linux, where the tests run)."""
    from dicecup.places import user_folder

    monkeypatch.setenv("DICECUP_TEST_OVERRIDE", str(tmp_path / "here"))
    assert user_folder(kind, "DICECUP_TEST_OVERRIDE") == tmp_path / "here"
    monkeypatch.delenv("DICECUP_TEST_OVERRIDE")
    monkeypatch.setenv(xdg, str(tmp_path / "xdg"))
    assert user_folder(kind, "DICECUP_TEST_OVERRIDE") == tmp_path / "xdg" / "dicecup"
    monkeypatch.delenv(xdg)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert user_folder(kind, "DICECUP_TEST_OVERRIDE") == tmp_path / "home" / default / "dicecup"
