"""The variant file a save names is never read because the save names it (hypothesis over the names a
hostile save could give: absolute and relative paths, `..`, symlinks, devices, FIFOs, huge and unprintable
names, values that are no path): the save is one SaveError that says to pass the file, and no byte of the
file it names ever reaches a message, through the API or the CLI. A file the user passes is read."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest
from _cli_helpers import (  # noqa: F401 (deadline: autouse, a FIFO opened by mistake fails the test, not hangs it)
    deadline,
    deadline_again,
)
from _saves import reseal
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from dicecup import Engine, GameState, SaveError
from dicecup.cli.app import app
from dicecup.game.saving import MAX_SAVED_BITS, VariantFileNeeded
from dicecup.terminal import savefile
from dicecup.terminal.session import Seat

pytestmark = [
    pytest.mark.skipif(os.name != "posix", reason="FIFOs and devices as on POSIX"),
    pytest.mark.usefixtures("cli_builtins"),
]
ENV = {"DICECUP_DISABLE_PLUGIN_AUTOLOAD": "1", "COLUMNS": "200"}
SECRET = "hunter2-CONTENT"  # in the files a save names: no message may repeat it
FOREIGN = {  # files a hostile save may name: each would quote its content in a variant error if it were read
    "secret.yaml": f"id: mine\ndice: {SECRET}\nboxes: {{a: {{pattern: always, score: total}}}}\n",
    "keys.yaml": f"id: mine\n{SECRET}: 1\n",
    "mine.yaml": "id: mine\ndice: {count: 2}\nboxes:\n  a: {pattern: always, score: total}\n",
}


@pytest.fixture(scope="module")
def place(tmp_path_factory) -> dict[str, Path]:
    """A save's folder and another folder, each with the foreign files, a FIFO, a symlink and a device link."""
    root = tmp_path_factory.mktemp("sources")
    out = {}
    for name in ("saves", "elsewhere"):
        folder = root / name
        folder.mkdir()
        for file, text in FOREIGN.items():
            (folder / file).write_text(text)
        os.mkfifo(folder / "pipe.yaml")
        (folder / "link.yaml").symlink_to(folder / "secret.yaml")
        (folder / "zero.yaml").symlink_to("/dev/zero")
        out[name] = folder
    return out


def sources(place: dict[str, Path]) -> st.SearchStrategy:
    saves, elsewhere = place["saves"], place["elsewhere"]
    files = [*FOREIGN, "pipe.yaml", "link.yaml", "zero.yaml"]
    paths = st.one_of(
        st.sampled_from([str(f / n) for f in (saves, elsewhere) for n in files]),  # absolute, here or elsewhere
        st.sampled_from(files),  # relative to wherever the command runs
        st.sampled_from([f"../elsewhere/{n}" for n in files] + [f"./x/../{n}" for n in files]),
        st.sampled_from(["/dev/zero", "/dev/stdin", "/dev/tty", "/proc/self/environ", "/etc/passwd", "/", ""]),
        st.text(min_size=1, max_size=30).map(lambda t: t + ".yaml"),  # any characters, control ones too
        st.integers(1, 3000).map(lambda n: "a" * n + ".yaml"),  # names up to far beyond any file system's
    )
    return st.one_of(paths, st.none(), st.integers(), st.lists(st.text(max_size=5), max_size=3), st.just({}))


def check(message: str) -> None:
    assert SECRET not in message and len(message) < 1500, message


def saved_game(folder: Path, engine: Engine) -> Path:
    """A save of a game of the file variant `mine.yaml` in `folder`."""
    save = folder / "game.json"
    state = GameState.new(engine.load_file(folder / "mine.yaml"), ["ann"]).roll(dice=[1, 2])
    savefile.save(save, savefile.SavedGame(state, (Seat("ann"),), random.Random(1)))
    return save


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_no_source_a_save_names_is_read(engine, place, monkeypatch, data):
    deadline_again()
    monkeypatch.chdir(place["saves"])
    save = saved_game(place["saves"], engine)
    source = data.draw(sources(place), label="source")
    variant_id = data.draw(st.sampled_from(["mine", "secret", "x" * 500]), label="id")
    reseal(save, lambda lines: [{**lines[0], "source": source, "variant": variant_id}, *lines[1:]])
    with pytest.raises(SaveError) as err:
        savefile.load(save, engine)
    check(str(err.value))
    assert isinstance(err.value, VariantFileNeeded) and "pass that file to load it" in str(err.value)
    bare = (
        {**savefile.load(save, engine, place["saves"] / "mine.yaml").state.to_dict()} if variant_id == "mine" else None
    )
    if bare is not None:  # the engine's own save format (GameState.to_json), through the API
        with pytest.raises(SaveError) as err:
            GameState.from_dict({**bare, "source": source}, engine)
        check(str(err.value))
        # a whole number no game has is refused, wherever it stands, before anything is read of the save
        huge = isinstance(source, int) and source.bit_length() > MAX_SAVED_BITS
        assert isinstance(err.value, VariantFileNeeded) != huge, str(err.value)
        assert not huge or "'source' holds a number far too large" in str(err.value)
    for command in ("resume", "review"):
        result = CliRunner().invoke(app, [command, str(save)], env=ENV)
        assert result.exit_code == 2 and "Traceback" not in result.output, result.output
        (line,) = result.stderr.splitlines()
        assert line.startswith("error: ") and line.isprintable()  # a name's control characters are escaped
        check(line)


@pytest.mark.parametrize("source", [2**64 - 1, 2**64, -(2**64)])
def test_a_source_of_a_number_no_game_has_is_refused_as_such_through_the_api(engine, place, monkeypatch, source):
    """Through the API, a whole number past 64 bits anywhere in a save is refused before anything else is read
    (`saving.refuse_unplain`), naming its key; one within 64 bits is a source like any other that is no file
    read: pass the variant file. The save file says to pass the file either way."""
    monkeypatch.chdir(place["saves"])
    save = saved_game(place["saves"], engine)
    bare = savefile.load(save, engine, place["saves"] / "mine.yaml").state.to_dict()
    with pytest.raises(SaveError) as err:
        GameState.from_dict({**bare, "source": source}, engine)
    if source.bit_length() > MAX_SAVED_BITS:
        assert not isinstance(err.value, VariantFileNeeded)
        assert "save file key 'source' holds a number far too large for a game (65 bits)" in str(err.value)
    else:
        assert isinstance(err.value, VariantFileNeeded) and "pass that file to load it" in str(err.value)
    reseal(save, lambda lines: [{**lines[0], "source": source}, *lines[1:]])
    with pytest.raises(VariantFileNeeded):
        savefile.load(save, engine)


def test_a_registered_variant_is_compiled_whatever_source_the_save_names(engine, place):
    save = place["elsewhere"] / "yacht.json"
    state = GameState.new(engine.variant("yacht"), ["ann"]).roll(dice=[1, 2, 3, 4, 5])
    savefile.save(save, savefile.SavedGame(state, (Seat("ann"),), random.Random(1)))
    reseal(save, lambda lines: [{**lines[0], "source": str(place["saves"] / "pipe.yaml")}, *lines[1:]])
    assert savefile.load(save, engine).state == state  # the FIFO named is not opened (it would block)


def test_a_variant_file_the_user_passes_is_read_and_checked(engine, place, tmp_path):
    save = saved_game(place["saves"], engine)
    state = savefile.load(save, engine, place["saves"] / "mine.yaml").state
    assert state.variant.id == "mine" and state.dice == (1, 2)
    other = tmp_path / "other.yaml"
    other.write_text("id: other\ndice: {count: 2}\nboxes:\n  a: {pattern: always, score: total}\n")
    with pytest.raises(SaveError, match="the save is a game of 'mine', not of 'other'"):
        savefile.load(save, engine, other)
    changed = tmp_path / "mine.yaml"
    changed.write_text("id: mine\ndice: {count: 2}\nboxes:\n  a: {pattern: always, score: 7}\n")
    with pytest.raises(SaveError, match="different definition of variant 'mine'"):
        savefile.load(save, engine, changed)
    result = CliRunner().invoke(app, ["resume", str(save), "--variant", str(place["saves"] / "mine.yaml"), "--json"],
                                env=ENV, input="q\n")  # fmt: skip
    assert "error:" not in result.stderr and "Traceback" not in result.output
    result = CliRunner().invoke(app, ["resume", str(save)], env=ENV)
    assert f"--variant {place['saves'] / 'mine.yaml'}" in result.stderr  # the command to type, spelled out
