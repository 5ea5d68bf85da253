"""pickle, copy.copy and copy.deepcopy of variants, game states and Game handles: the copy equals
the original and plays on identically, in this process and in a fresh one; a variant whose engine
holds a plugin that cannot be found again by name refuses to pickle with a clear PicklingError."""

from __future__ import annotations

import copy
import importlib
import json
import os
import pickle
import subprocess
import sys
import textwrap
import types
from pathlib import Path

import pytest

from dicecup import Engine, Game, GameState, RuleAction, Variant, hookimpl
from dicecup.testing import turn

PROTOCOLS = range(pickle.HIGHEST_PROTOCOL + 1)

#: What a pickled object does next, computed the same way here and in a fresh process.
BEHAVIOUR = '''
def behaviour(obj):
    """A variant: its identity and each box's points for one roll. A state or a Game: play on
    (engine dice from a seeded generator, the last legal action each time) and give the result."""
    from dicecup import Game, Variant

    if isinstance(obj, Variant):
        roll = obj.roll_of([i % obj.faces + 1 for i in range(obj.dice)])
        return [obj.id, obj.fingerprint, dict(obj.options), {b: obj.score(obj.empty_card(), b, roll).points for b in obj.box_ids}]
    game = obj if isinstance(obj, Game) else Game(obj, seed=11)
    for _ in range(150):
        if game.over:
            break
        game.roll() if game.state.is_chance else game.apply(game.state.legal_actions()[-1])
    return [game.state.to_json(), game.rng.random(), len(game.history)]
'''
_here: dict[str, object] = {}
exec(BEHAVIOUR, _here)  # the same function here as in the fresh process
behaviour = _here["behaviour"]

PLUGIN = '''
"""A plugin module outside dicecup: a pattern and a variant that uses it."""
from dicecup import hookimpl


@hookimpl
def dicecup_register_patterns(register):
    register("low_total", lambda ctx, at_most: lambda roll: roll.dice if roll.total <= at_most else None)


@hookimpl
def dicecup_register_variants(register):
    register(text="id: low-yacht\\nextends: yacht\\nboxes:\\n  low: {name: Low, pattern: {kind: low_total, at_most: 12}, score: total}\\n",
             source="low-yacht")
'''

FILE_VARIANT = "id: mine\ndice: {count: 3}\nturn: {rolls: 2}\nboxes:\n  a: {pattern: always, score: total}\n  b: {pattern: {kind: of_a_kind, n: 2}, score: sum}\n"


@pytest.fixture(scope="module")
def plugin_dir(tmp_path_factory) -> Path:
    """A folder holding the out-of-tree plugin module `pickle_test_plugin`, importable by name."""
    folder = tmp_path_factory.mktemp("plugin")
    (folder / "pickle_test_plugin.py").write_text(PLUGIN)
    sys.path.insert(0, str(folder))
    yield folder
    sys.path.remove(str(folder))


@pytest.fixture(scope="module")
def variants(engine, plugin_dir, tmp_path_factory) -> dict[str, Variant]:
    """Built-in, options, several columns, a rule with turn state, a .yaml file, an out-of-tree plugin."""
    path = tmp_path_factory.mktemp("file") / "mine.yaml"
    path.write_text(FILE_VARIANT)
    plugged = Engine([importlib.import_module("pickle_test_plugin")], entry_points=False)
    return {
        "yahtzee": engine.variant("yahtzee"),
        "yahtzee-forced": engine.variant("yahtzee", {"joker": "forced"}),
        "maxi-no-saved-rolls": engine.variant("maxi-yatzy", {"saved_rolls": False}),
        "triple-yahtzee": engine.variant("triple-yahtzee"),
        "yamb": engine.variant("yamb"),
        "file": engine.load_file(path),
        "plugin": plugged.variant("low-yacht"),
    }


@pytest.fixture(scope="module")
def states(engine, variants) -> dict[str, GameState]:
    """Mid-turn states (a held roll, awards, a yamb announcement, banked rolls) and finished ones."""
    ya = GameState.new(variants["yahtzee"], ["ann", "bob"])
    awarded = turn(turn(ya, "yahtzee", (5, 5, 5, 5, 5)), "chance", (1, 2, 3, 4, 6))
    yamb = GameState.new(variants["yamb"], ["ann", "bob"]).roll(dice=(4, 4, 4, 1, 2))
    announced = yamb.act(RuleAction("announced", "announce", "announce.triple"))
    return {
        "held": awarded.roll(dice=(5, 5, 5, 1, 2)).keep((5, 5, 5)),
        "announced": announced,
        "announced-rerolled": announced.keep((4, 4)).roll(dice=(6, 6, 1)),
        "triple": turn(GameState.new(variants["triple-yahtzee"], 1), "x3.chance", (6, 6, 6, 6, 5)).roll(
            dice=(1, 1, 1, 1, 1)
        ),
        "banked": turn(GameState.new(engine.variant("maxi-yatzy"), 1), "chance", (1, 2, 3, 4, 5, 6)),
        "plugin": GameState.new(variants["plugin"], 2).roll(dice=(1, 2, 2, 3, 1)),
        "file": GameState.new(variants["file"], 1).roll(dice=(2, 2, 3)),
        "over": _finish(GameState.new(variants["yahtzee"], ["solo"])),
    }


def _finish(state: GameState) -> GameState:
    """`state` played to its end (engine dice, the first legal action each time)."""
    game = Game(state, seed=4)
    while not game.over:
        game.roll() if game.state.is_chance else game.apply(game.state.legal_actions()[0])
    return game.state


@pytest.fixture(scope="module")
def games(variants) -> dict[str, Game]:
    """Game handles with a seeded generator part way through, and an undo history."""
    out = {}
    for name in ("yahtzee", "yamb", "plugin"):
        game = Game.new(variants[name], ["ann", "bob"], seed=21)
        for _ in range(9):
            game.roll() if game.state.is_chance else game.apply(game.state.legal_actions()[-1])
        game.undo()
        out[name] = game
    return out


def same_game(a: Game, b: Game) -> None:
    """Equal states, undo stacks and generator states, in separate objects."""
    assert a.state == b.state and a.history == b.history and a.seed == b.seed
    assert a.rng.getstate() == b.rng.getstate() and a.rng is not b.rng and a.history is not b.history


# ----------------------------------------------------------------------------- in this process


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_variants_pickle_and_copy(variants, protocol):
    for name, v in variants.items():
        back = pickle.loads(pickle.dumps(v, protocol))
        assert back == v and hash(back) == hash(v), name
        assert back.fingerprint == v.fingerprint and back.options == v.options and back.source == v.source
        assert behaviour(back) == behaviour(v), name
        assert copy.copy(v) is v and copy.deepcopy(v) is v  # immutable: a copy is the same variant


def test_every_built_in_variant_pickles_and_derives(engine):
    """The stored document keeps its keys as written (Russian's `rounds: {1: 1, 2: 1, ...}` by player count), so
    compiling it again, to unpickle or to derive a variant, gives the same rules."""
    for vid in engine.variant_ids():
        v = engine.variant(vid)
        back = pickle.loads(pickle.dumps(v))
        assert back == v and back.fingerprint == v.fingerprint, vid
        derived = v.derive({"description": "the same game"})
        assert derived.box_ids == v.box_ids and derived.match == v.match, vid


def test_a_pickled_multi_column_variant_keeps_its_sheets(variants):
    v = variants["triple-yahtzee"]
    back = pickle.loads(pickle.dumps(v))
    assert [c.multiplier for c in back.columns] == [1, 2, 3] and set(back.sheets) == set(v.sheets)
    card = v.empty_card().fill("x1.yahtzee", 50)
    roll = v.roll_of([4, 4, 4, 4, 4])
    assert back.score(card, "x3.fours", roll) == v.score(card, "x3.fours", roll)  # the x3 Yahtzee bonus: 300


@pytest.mark.parametrize("how", ["pickle", "copy", "deepcopy"])
def test_states_copy_equal_and_play_on_identically(engine, states, how):
    for name, state in states.items():
        twin = {"pickle": lambda s: pickle.loads(pickle.dumps(s)), "copy": copy.copy, "deepcopy": copy.deepcopy}[how](
            state
        )
        assert twin == state and twin.history == state.history and twin.to_json() == state.to_json(), name
        assert twin.turn_state == state.turn_state and twin.player_state == state.player_state
        assert behaviour(twin) == behaviour(state), name


def test_a_copied_announcement_still_binds_the_turn(states):
    twin = pickle.loads(pickle.dumps(states["announced-rerolled"]))
    assert twin.turn_state == {"announced": "announce.triple"} and twin.legal_boxes() == ("announce.triple",)
    assert twin.score("announce.triple").cards[0].scores["announce.triple"] == 0  # 14466: the triple was missed


@pytest.mark.parametrize("how", ["pickle", "copy", "deepcopy"])
def test_games_copy_with_their_generator_and_undo_history(games, how):
    for name, game in games.items():
        twin = {"pickle": lambda g: pickle.loads(pickle.dumps(g)), "copy": copy.copy, "deepcopy": copy.deepcopy}[how](
            game
        )
        same_game(twin, game)
        assert behaviour(twin) == behaviour(copy.copy(game)), name  # the same dice from the same generator


def test_a_copied_game_is_independent(games):
    game = games["yahtzee"]
    before = (game.state, list(game.history), game.rng.getstate())
    for twin in (copy.copy(game), copy.deepcopy(game)):
        twin.undo()
        twin.roll() if twin.state.is_chance else twin.apply(twin.state.legal_actions()[0])
        twin.rng.random()
    assert (game.state, game.history, game.rng.getstate()) == before


def test_deepcopy_works_where_pickling_cannot(engine):
    """A state of a variant that cannot pickle (see below) still deep-copies: variants are shared."""
    local = _local_plugin_engine()
    state = GameState.new(local.variant("yahtzee"), 1).roll(dice=(1, 2, 3, 4, 5))
    assert copy.deepcopy(state) == state and copy.deepcopy(Game(state, seed=1)).state == state


# ----------------------------------------------------------------------------- a fresh process


def test_pickles_load_and_play_on_in_a_fresh_process(variants, states, games, plugin_dir, tmp_path):
    """Bytes written here are loaded by a new interpreter (the variant recompiled by an engine built
    the same way), which then plays on: the same results as the originals give here."""
    objects = {f"variant:{k}": v for k, v in variants.items()}
    objects |= {f"state:{k}": s for k, s in states.items()} | {f"game:{k}": g for k, g in games.items()}
    expected = {k: behaviour(copy.copy(o) if isinstance(o, Game) else o) for k, o in objects.items()}
    (tmp_path / "bundle.pkl").write_bytes(pickle.dumps({k: pickle.dumps(o) for k, o in objects.items()}))
    Path(variants["file"].source).unlink()  # a pickle holds the resolved document: the file is not read again
    script = BEHAVIOUR + textwrap.dedent("""
        import json, pickle, sys
        bundle = pickle.loads(open(sys.argv[1], "rb").read())
        print(json.dumps({k: behaviour(pickle.loads(b)) for k, b in bundle.items()}))
    """)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(plugin_dir), os.environ.get("PYTHONPATH", "")])}
    env.pop("DICECUP_DISABLE_PLUGIN_AUTOLOAD", None)
    proc = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "bundle.pkl")],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout)
    assert got.keys() == expected.keys()
    for key, value in expected.items():
        assert got[key] == json.loads(json.dumps(value)), key


# ----------------------------------------------------------------------------- what cannot pickle


def _local_plugin_engine() -> Engine:
    class LocalRules:  # defined in a function: no name imports it again
        @hookimpl
        def dicecup_register_variants(self, register):
            register(text="id: local\nextends: yacht\n", source="local")

    return Engine([LocalRules()], entry_points=False)


def _unlisted_module_engine() -> Engine:
    module = types.ModuleType("nowhere_to_be_found")  # never put in sys.modules
    exec(
        "from dicecup import hookimpl\n@hookimpl\ndef dicecup_register_variants(register):\n"
        "    register(text='id: ghost\\nextends: yacht\\n', source='ghost')\n",
        module.__dict__,
    )
    return Engine([module], entry_points=False)


@pytest.mark.parametrize("make_engine", [_local_plugin_engine, _unlisted_module_engine])
def test_a_plugin_that_cannot_be_imported_by_name_is_a_clear_pickling_error(make_engine):
    engine = make_engine()
    for vid in engine.variant_ids()[-1:] + ["yahtzee"]:  # the plugin's own variant, and a built-in one
        v = engine.variant(vid)
        state = GameState.new(v, 1).roll(dice=[1, 2, 3, 4, 5])
        for obj in (v, state, Game(state, seed=1)):
            for protocol in (0, pickle.HIGHEST_PROTOCOL):
                with pytest.raises(
                    pickle.PicklingError, match=f"variant '{vid}' uses a plugin that cannot be imported by name"
                ):
                    pickle.dumps(obj, protocol)


def test_an_engine_that_pickles_builds_its_plugins_again_by_name(variants):
    """The plugin object in the fresh engine is the module found by its name, not a copy."""
    back = pickle.loads(pickle.dumps(variants["plugin"]))
    assert back.box("low").pattern.kind == "low_total"
    assert back.score(back.empty_card(), "low", back.roll_of([1, 2, 3, 2, 1])).score == 9


def test_an_engine_copies_as_itself_and_pickles_as_how_it_was_built(engine):
    """copy and deepcopy share the engine (its registries are fixed); a pickle builds one the same way,
    which compiles the same variants, in this process and in a fresh one."""
    assert copy.copy(engine) is engine and copy.deepcopy(engine) is engine
    for protocol in PROTOCOLS:
        back = pickle.loads(pickle.dumps(engine, protocol))
        assert back.variant_ids() == engine.variant_ids()
        assert back.variant("yahtzee").fingerprint == engine.variant("yahtzee").fingerprint
    code = "import pickle, sys; e = pickle.loads(sys.stdin.buffer.read()); print(e.variant('yatzy').fingerprint)"
    out = subprocess.run(
        [sys.executable, "-c", code], input=pickle.dumps(engine), capture_output=True, check=True
    ).stdout.decode()
    assert out.strip() == engine.variant("yatzy").fingerprint


@pytest.mark.parametrize("make_engine", [_local_plugin_engine, _unlisted_module_engine])
def test_an_engine_with_an_unnamed_plugin_refuses_to_pickle_and_says_why(make_engine):
    with pytest.raises(pickle.PicklingError, match="cannot be imported by name, so it cannot be pickled"):
        pickle.dumps(make_engine())
