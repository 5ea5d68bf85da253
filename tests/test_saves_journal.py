"""`dicecup play --save` journals: a game saved after every action and resumed is the same game at every
point (its dice generator included); any prefix of a save (a crash) is the game after its whole lines; a
save changed in any other way, or a file that is no save, is one precise SaveError (exit 2), in bounded
time and memory."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from _cli_helpers import cli_fails
from _saves import records, reseal
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dicecup import Game, GameState, SaveError
from dicecup.terminal import journal, savefile
from dicecup.terminal.generator import TrackedRandom
from dicecup.terminal.savefile import Recorder, SavedGame
from dicecup.terminal.session import Seat

pytestmark = pytest.mark.skipif(os.name != "posix", reason="FIFOs, devices and signals as on POSIX")
ENV = {"DICECUP_DISABLE_PLUGIN_AUTOLOAD": "1", "COLUMNS": "200"}
SETTINGS = settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def play(engine, variant: str, players: int, seed: int, path: Path, undo: float = 0.0, check=None):
    """A game of random legal moves and undos, recorded after every action as the CLI records it; `check(
    recorder, game, rng)` after each. Returns the states by number of moves, and the generator at each."""
    v = engine.variant(variant)
    rng = TrackedRandom(seed)  # the dice and the players' choices, as the session draws them
    chooser = random.Random(seed)  # when to undo, when to ask for an fsync: not the game's dice
    game = Game(GameState.new(v, [f"p{i}" for i in range(players)], rounds=1))
    seats = tuple(Seat(n, "random") for n in game.state.players)
    recorder = Recorder.start(path, SavedGame(game.state, seats, rng))
    states, generators, snapshots = {0: game.state}, {0: rng.getstate()}, []
    try:
        while not game.over:
            if snapshots and chooser.random() < undo:  # an undo, as the session makes it: the generator rewound
                depth, snapshot = snapshots.pop()
                while len(game.history) > depth:
                    game.undo()
                rng.setstate(snapshot)
            elif game.state.is_chance:
                n = v.dice - len(game.state.held)
                game.roll(dice=[rng.randint(1, v.faces) for _ in range(n)])
            else:
                snapshots.append((len(game.history), rng.getstate()))
                game.apply(rng.choice(game.state.legal_actions()))
            recorder.record(game.state, sync=chooser.random() < 0.3)
            states[len(game.state.history)] = game.state
            generators[len(game.state.history)] = rng.getstate()
            if check is not None:
                check(recorder, game, rng)
    finally:
        recorder.close()
    return states, generators


@SETTINGS
@given(
    st.sampled_from(["yacht", "yahtzee", "generala", "yamb", "balut"]),
    st.integers(1, 3),
    st.integers(0, 2**32),
    st.sampled_from([0.0, 0.1]),
)
def test_a_game_saved_after_every_action_resumes_to_the_same_game(engine, tmp_path, variant, players, seed, undo):
    path = tmp_path / f"{variant}-{players}-{seed}.json"

    def same(recorder, game, rng):
        if not game.over and len(game.state.history) % 8:  # a load after one move in eight, and the last
            return
        saved = savefile.load(path, engine)
        assert saved.state == game.state and saved.state.history == game.state.history
        assert saved.rng.getstate()[1] == rng.getstate()[1]  # the same dice to come
        assert saved.note == ""

    play(engine, variant, players, seed, path, undo, same)


def test_resuming_tells_its_progress_move_by_move(engine, tmp_path):
    """A long save takes seconds to replay: resuming tells the reporter each move, in one task of all of them."""
    path = tmp_path / "game.json"
    states, _ = play(engine, "yacht", 2, 7, path)
    heard: list[tuple] = []

    class Heard:
        def start(self, label, total=None, unit="", seconds=None):
            heard.append(("start", label, total, unit))

        def advance(self, n=1):
            heard.append(("advance", n))

        def done(self):
            heard.append(("done",))

    saved, recorder = Recorder.resume(path, engine, progress=Heard())
    recorder.close()
    moves = len(saved.state.history)
    assert saved.state == states[moves]
    assert heard[0] == ("start", f"replaying {moves:,} moves", moves, "moves")
    assert heard[1:-1] == [("advance", 1)] * moves and heard[-1] == ("done",)


@SETTINGS
@given(st.sampled_from(["yacht", "yamb"]), st.integers(0, 2**32), st.data())
def test_any_prefix_of_a_save_is_the_game_after_its_whole_lines(engine, tmp_path, variant, seed, data):
    """A crash leaves a prefix of the file: it loads as the game after its last whole move (and says so), with
    the dice generator as it was when the file held those lines; resuming cuts the cut line off and appends
    after it."""
    path = tmp_path / "game.json"
    moments: dict[bytes, tuple[GameState, list]] = {}  # the file after each action: the game and the generator

    def remember(recorder, game, rng):  # the first time the file holds these lines: what they state
        moments.setdefault(path.read_bytes(), (game.state, rng.getstate()[1]))

    states, _ = play(engine, variant, 2, seed, path, undo=0.1, check=remember)
    whole = path.read_bytes()
    first_move = whole.index(b"\n", whole.index(b"\n") + 1) + 1  # after the header and the generator
    cut = data.draw(st.integers(first_move, len(whole)), label="cut")
    path.write_bytes(whole[:cut])
    saved = savefile.load(path, engine)
    moves = sum(1 for r in records(path) if "move" in r)
    assert saved.state == states[moves]
    kept = whole[: whole.rfind(b"\n", 0, cut) + 1]
    if kept in moments:  # (a cut between the lines of one action's record: the generator is the action's)
        assert (saved.state, saved.rng.getstate()[1]) == moments[kept]
    torn = not whole[:cut].endswith(b"\n")
    assert ("cut short" in saved.note) == torn and (f"({moves} moves)" in saved.note) == torn
    resumed, recorder = Recorder.resume(path, engine)
    try:
        assert path.read_bytes() == kept  # the cut line cut off
        if not resumed.state.over:
            nxt = (
                resumed.state.roll(resumed.rng)
                if resumed.state.is_chance
                else resumed.state.apply(resumed.state.legal_actions()[0])
            )
            recorder.record(nxt)
            assert savefile.load(path, engine).state == nxt
    finally:
        recorder.close()


def test_a_killed_writer_loses_at_most_the_move_it_was_writing(tmp_path):
    """SIGKILL halfway through writing a move's line: resume says so, plays that move again with the same dice,
    and ends as the game played in one go."""
    args = ["play", "-v", "yacht", "-p", "bot:random", "-p", "bot:random", "--seed", "4", "--rounds", "2", "-q"]
    whole = subprocess.run([sys.executable, "-m", "dicecup", *args, "--json"], capture_output=True, text=True,
                           env={**os.environ, **ENV}, timeout=120)  # fmt: skip
    assert whole.returncode == 0, whole.stderr
    save = tmp_path / "killed.json"
    script = textwrap.dedent(f"""\
        import os, signal
        from dicecup.terminal import journal
        from dicecup.cli import main
        write, calls = journal._write_all, [0]
        def half_then_die(fd, data):
            calls[0] += 1
            if calls[0] == 60:  # the 60th move: half its line, then the process is killed
                os.write(fd, data[: len(data) // 2])
                os.kill(os.getpid(), signal.SIGKILL)
            write(fd, data)
        journal._write_all = half_then_die
        main([*{args!r}, "--json", "--save", {str(save)!r}])
        """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, env={**os.environ, **ENV}, timeout=120)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    assert not save.read_bytes().endswith(b"\n")  # the cut line
    resumed = subprocess.run([sys.executable, "-m", "dicecup", "resume", str(save), "--json"], capture_output=True,
                             text=True, env={**os.environ, **ENV}, timeout=120)  # fmt: skip
    assert resumed.returncode == 0, resumed.stderr
    assert "the save's last line was cut short" in resumed.stderr and "(59 moves)" in resumed.stderr
    assert json.loads(resumed.stdout) == json.loads(whole.stdout)
    assert save.read_bytes().endswith(b"\n") and savefile.load(save, _engine()).state.over


def _engine():
    from dicecup import Engine

    return Engine(entry_points=False)


# ---------------------------------------------------------------------------- changed saves


@pytest.fixture
def good(engine, tmp_path) -> Path:
    """A save of a two-player yacht game part way through (a few dozen moves)."""
    path = tmp_path / "good.json"
    states, _ = play(engine, "yacht", 2, 7, path)
    lines = path.read_bytes().split(b"\n")[:-1]
    path.write_bytes(b"\n".join(lines[:40]) + b"\n")  # 38 moves: a game in progress
    assert not savefile.load(path, engine).state.over
    return path


def swap(lines: list[bytes]) -> list[bytes]:
    return [*lines[:10], lines[11], lines[10], *lines[12:]]


def _edit(change):
    def make(path: Path) -> None:
        path.write_bytes(b"".join(line + b"\n" for line in change(path.read_bytes().split(b"\n")[:-1])))

    return make


def _forge(change):
    return lambda path: reseal(path, change)


def _append_sealed(path: Path, body: bytes) -> None:
    """Append a line whose checksum is right but whose body is `body` (not a record)."""
    data = path.read_bytes()
    before = data[-19:-3]  # the last line's sum
    digest = journal._digest(before, body)
    path.write_bytes(data + body[:-1] + b',"sum":"' + digest + b'"}\n')


def _illegal_move(recs):
    recs[12] = {**recs[12], "move": ["score", "nothing-here"]}
    return recs


CHANGED = {  # how the save is changed: the words of the one error it then gets
    "a move line swapped with the next": (_edit(swap), "line 11 does not match its checksum"),
    "a move line repeated": (_edit(lambda ls: [*ls[:10], ls[10], *ls[10:]]), "line 12 does not match its checksum"),
    "a move line removed": (_edit(lambda ls: [*ls[:10], *ls[11:]]), "line 11 does not match its checksum"),
    "a die changed": (
        lambda p: p.write_bytes(p.read_bytes().replace(b'"roll",[', b'"roll",[6,', 1)),
        "line 3 does not match its checksum",
    ),  # fmt: skip
    "a forged reorder": (_forge(lambda r: [*r[:10], r[11], r[10], *r[12:]]), "where move 8 belongs"),
    "a forged repeat": (_forge(lambda r: [*r[:10], r[10], *r[10:]]), "where move 9 belongs"),
    "a forged removal": (_forge(lambda r: [*r[:10], *r[11:]]), "where move 8 belongs"),
    "a forged illegal move": (_forge(_illegal_move), "line 13 is not a legal move in that position"),
    "a forged generator count": (_forge(lambda r: [*r[:5], {**r[5], "drawn": -1}, *r[6:]]), "'drawn' -1"),
    "a forged record": (_forge(lambda r: [*r[:5], {"eval": "rm -rf"}, *r[5:]]), "line 6 is neither a move"),
    "a forged generator": (
        _forge(lambda r: [r[0], {"generator": [3, [0] * 625, None]}, *r[2:]]),
        "line 2 is not a dice generator",
    ),
    "a forged header": (_forge(lambda r: [{**r[0], "version": 9}, *r[1:]]), "saved-game version 9 is not supported"),
    "no generator": (_forge(lambda r: [r[0], *r[2:]]), "line 2: the save holds no dice generator"),
    "an unsealed line": (lambda p: p.write_bytes(p.read_bytes() + b'{"n":38}\n'), "line 41 is not a sealed"),
    "a huge last line": (lambda p: p.write_bytes(p.read_bytes() + b"x" * 100_000), "line 41 is longer than 65,536"),
    "a huge line": (lambda p: p.write_bytes(p.read_bytes() + b"x" * 100_000 + b"\n"), "line 41 is longer than"),
    "a NUL in a line": (lambda p: p.write_bytes(p.read_bytes().replace(b'"drawn"', b'"dr\0wn"', 1)), "does not match"),
    "not UTF-8": (lambda p: p.write_bytes(p.read_bytes().replace(b'"drawn"', b'"dr\xffwn"', 1)), "does not match"),
    "JSON garbage, sealed": (lambda p: _append_sealed(p, b"[1,2}"), "line 41 is not JSON"),
    "a list, sealed": (lambda p: _append_sealed(p, b'["n",1]}'), "line 41 is not JSON"),
}


@pytest.mark.parametrize("case", CHANGED)
def test_a_changed_save_is_one_precise_error(engine, good, case):
    change, words = CHANGED[case]
    change(good)
    with pytest.raises(SaveError) as err:
        savefile.load(good, engine)
    assert str(err.value).startswith(f"{good}: ") and words in str(err.value), str(err.value)
    before = good.read_bytes()
    line = cli_fails("resume", str(good))  # exit 2, one line, no traceback, bounded time and memory
    assert words in line and good.read_bytes() == before  # a refused save is left as it was


def test_too_many_moves_are_refused_before_any_is_replayed(engine, tmp_path):
    path = tmp_path / "long.json"
    savefile.save(path, SavedGame(GameState.new(engine.variant("yacht"), ["a"]), (Seat("a"),), TrackedRandom(1)))
    header, generator = records(path)
    moves = [{"n": n, "move": ["roll", [1, 2, 3, 4, 5]], "drawn": 0} for n in range(200_001)]
    reseal(path, lambda _: [header, generator, *moves])
    with pytest.raises(SaveError, match="the save holds more than 200,000 moves"):
        savefile.load(path, engine)


@pytest.mark.parametrize("kind", ["fifo", "dev_zero", "directory", "empty", "binary"])
def test_a_file_that_is_no_save(tmp_path, kind):
    path = tmp_path / "save.json"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "dev_zero":
        path.symlink_to("/dev/zero")
    elif kind == "directory":
        path.mkdir()
    else:
        path.write_bytes(b"" if kind == "empty" else bytes(range(256)) * 100)
    words = {"fifo": "named pipe", "dev_zero": "character device", "directory": "a directory",
             "empty": "not a dicecup saved game", "binary": "not a saved game"}[kind]  # fmt: skip
    for command in ("resume", "review"):
        assert words in cli_fails(command, str(path))


# ---------------------------------------------------------------------------- version 1, locks, durability


def test_a_version_1_save_is_read_and_resumed_as_a_journal(engine, tmp_path):
    path = tmp_path / "old.json"
    v = engine.variant("yacht")
    state = GameState.new(v, ["a"]).roll(dice=[1, 2, 3, 4, 5]).score("choice")
    rng = random.Random(3)
    old = {"format": "dicecup/play", "version": 1, "seats": [{"name": "a", "kind": "human"}],
           "rng": [3, list(rng.getstate()[1]), None], "hints": False, "game": state.to_dict()}  # fmt: skip
    path.write_text(json.dumps(old, indent=1))
    saved = savefile.load(path, engine)
    assert saved.state == state and saved.rng.getstate()[1] == rng.getstate()[1]
    resumed, recorder = Recorder.resume(path, engine)
    recorder.close()
    assert json.loads(path.read_text()) == old  # nothing recorded: the old file is left as it was
    resumed, recorder = Recorder.resume(path, engine)
    nxt = resumed.state.roll(resumed.rng)
    recorder.record(nxt)
    recorder.close()
    assert records(path)[0]["version"] == 2 and savefile.load(path, engine).state == nxt


def test_a_save_another_process_is_writing_is_refused(engine, tmp_path):
    path = tmp_path / "busy.json"
    saved = SavedGame(GameState.new(engine.variant("yacht"), ["a"]), (Seat("a"),), TrackedRandom(1))
    recorder = Recorder.start(path, saved)
    try:
        with pytest.raises(SaveError, match="another dicecup process is playing this game now"):
            Recorder.resume(path, engine)
        with pytest.raises(SaveError, match="another dicecup process is playing this game now"):
            Recorder.start(path, saved)
    finally:
        recorder.close()
    Recorder.resume(path, engine)[1].close()


def test_lines_reach_the_disk_before_a_player_is_asked_and_once_a_second_otherwise(engine, tmp_path, monkeypatch):
    synced, clock = [], [0.0]
    monkeypatch.setattr(os, "fsync", lambda fd: synced.append(clock[0]))
    monkeypatch.setattr(journal.time, "monotonic", lambda: clock[0])
    state = GameState.new(engine.variant("yacht"), ["a", "b"])  # 48 moves: a roll and a score a turn
    recorder = Recorder.start(tmp_path / "g.json", SavedGame(state, (Seat("a"), Seat("b")), TrackedRandom(1)))
    start = len(synced)  # the new file itself is synced before it is put in place
    rng = random.Random(1)
    for _ in range(40):  # bots' moves, a tenth of a second apart: one fsync a second
        clock[0] += 0.1
        state = state.roll(rng) if state.is_chance else state.apply(state.legal_actions()[0])
        recorder.record(state)
    assert 3 <= len(synced) - start <= 5
    recorder.record(state.roll(rng) if state.is_chance else state.apply(state.legal_actions()[0]), sync=True)
    assert synced[-1] == clock[0]  # asked: now
    recorder.close()
    assert len(synced) - start >= 5


def test_a_full_disk_stops_the_game_and_leaves_whole_lines(engine, tmp_path, monkeypatch):
    """A write that fails halfway (no space left) is taken back off the file: the save stays readable, with every
    move written before it, and nothing is written after it."""
    path = tmp_path / "full.json"
    state = GameState.new(engine.variant("yacht"), ["a"])
    recorder = Recorder.start(path, SavedGame(state, (Seat("a"),), TrackedRandom(1)))
    rng = random.Random(2)
    for _ in range(5):
        state = state.roll(rng) if state.is_chance else state.apply(state.legal_actions()[0])
        recorder.record(state)
    kept = state
    write = journal._write_all

    def full(fd, data):
        os.write(fd, data[: len(data) // 2])
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(journal, "_write_all", full)
    state = state.roll(rng) if state.is_chance else state.apply(state.legal_actions()[0])
    with pytest.raises(OSError, match="No space left"):
        recorder.record(state)
    monkeypatch.setattr(journal, "_write_all", write)
    recorder.close()
    assert path.read_bytes().endswith(b"\n") and savefile.load(path, engine).state == kept


@settings(max_examples=50, deadline=None)
@given(st.integers(0, 2**64), st.lists(st.sampled_from(range(8)), max_size=300))
def test_the_dice_generator_draws_as_random_random_and_is_restored_from_its_count(seed, ops):
    plain, tracked = random.Random(seed), TrackedRandom(seed)
    start = tracked.getstate()
    calls = [
        lambda r: r.randint(1, 6),
        lambda r: r.random(),
        lambda r: r.choice("abcdef"),
        lambda r: r.getrandbits(70),
        lambda r: r.randbytes(3),
        lambda r: r.sample(range(50), 4),
        lambda r: r.uniform(2, 3),
        lambda r: r.getrandbits(0),
    ]
    for op in ops:
        assert calls[op](plain) == calls[op](tracked)
    restored = TrackedRandom()
    restored.setstate(tuple(start))
    restored.run(tracked.drawn)
    assert restored.getstate()[1] == tracked.getstate()[1] == plain.getstate()[1]
    snapshot = tracked.getstate()
    tracked.random()
    tracked.setstate(snapshot)  # an undo: the count comes back with the state
    assert tracked.drawn == snapshot.drawn
