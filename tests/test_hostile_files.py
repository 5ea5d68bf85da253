"""Bad and hostile files: each ends quickly, in bounded memory, with one precise typed error
(VariantError, SaveError or FileError) through the API, and through the real command line
with exit status 2, one `error:` line, no traceback and nothing of the file's content.

Also the safe file layer itself (dicecup.fileio): reads that never block nor read without
bound, and atomic writes that leave the whole old file or the whole new one.
"""

from __future__ import annotations

import os
import random
import signal
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from _cli_helpers import ENV, SECRET, cli_fails, deadline  # noqa: F401 (deadline: autouse, a FIFO opened by mistake fails the test)
from _saves import header, reseal

from dicecup import DicecupError, GameState, SaveError, VariantError
from dicecup.fileio import TEMP_SUFFIX, FileError, read_text, write_atomic, write_atomic_with
from dicecup.game.saving import VariantFileNeeded
from dicecup.terminal import savefile
from dicecup.terminal.session import Seat

pytestmark = pytest.mark.skipif(os.name != "posix", reason="FIFOs, devices and signals as on POSIX")

TINY = """\
id: tiny
name: Tiny
dice: {count: 3}
boxes:
  ones: {section: top, pattern: {kind: face, face: 1}, score: sum}
  triple: {pattern: {kind: of_a_kind, n: 3}, score: 30}
"""


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, str):
        text = textwrap.dedent(text).encode()
    path.write_bytes(text)
    return path


def variant_error(engine, path: Path, options: dict | None = None) -> VariantError:
    with pytest.raises(VariantError) as err:
        engine.load_file(path, options)
    assert SECRET not in str(err.value)
    return err.value


# ------------------------------------------------------------------- hostile files, each made in a folder


def alias_bomb(folder: Path) -> Path:
    """Billion laughs: nine anchors, each a list of nine aliases of the previous one."""
    lines = [f'a0: &a0 ["{SECRET}", "{SECRET}", "{SECRET}"]']
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 10)]
    return write(folder / "bomb.yaml", "id: bomb\n" + "\n".join(lines) + "\n")


def deep_flow(folder: Path) -> Path:
    return write(folder / "deep_flow.yaml", "id: deep\nboxes: " + "[" * 5000 + f'"{SECRET}"' + "]" * 5000 + "\n")


def deep_block(folder: Path) -> Path:
    return write(folder / "deep_block.yaml", "- " * 5000 + f"{SECRET}\n")


def deep_block_mapping(folder: Path) -> Path:
    """Block mappings a thousand levels deep (one space of indentation a level)."""
    return write(
        folder / "deep_map.yaml", "".join(" " * i + f"k{i}:\n" for i in range(1000)) + " " * 1000 + SECRET + "\n"
    )


def huge(folder: Path) -> Path:
    return write(folder / "huge.yaml", f"# {SECRET}\n".encode() * 600_000)  # 12 MB


def not_utf8(folder: Path) -> Path:
    return write(folder / "latin1.yaml", f"id: latin\nname: {SECRET} caf\xe9\n".encode("latin-1"))


def with_nul(folder: Path) -> Path:
    return write(folder / "nul.yaml", f"id: nul\nname: {SECRET}\0\n".encode())


def binary(folder: Path) -> Path:
    return write(folder / "binary.yaml", SECRET.encode() + bytes(range(256)) * 64)


def directory(folder: Path) -> Path:
    (folder / "folder.yaml").mkdir(parents=True)
    return folder / "folder.yaml"


def fifo(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    os.mkfifo(folder / "pipe.yaml")
    return folder / "pipe.yaml"


def dev_zero(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "zero.yaml").symlink_to("/dev/zero")  # a .yaml name, so `--variant` takes it for a file
    return folder / "zero.yaml"


def dev_null(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "null.yaml").symlink_to("/dev/null")
    return folder / "null.yaml"


# ---------------------------------------------------------------------------- fileio: reading


def test_read_text_refuses_what_is_no_regular_text_file(tmp_path):
    cases = {
        tmp_path / "missing.txt": "cannot read the file: no such file",
        directory(tmp_path): "is a directory, not a note",
        fifo(tmp_path): "is a named pipe (FIFO), not a note",
        Path("/dev/zero"): "is a character device, not a note",
        binary(tmp_path): "has a NUL byte (line 1, column 18): a binary file, not a note",
        not_utf8(tmp_path): "is not UTF-8 text (a bad byte at line 2, column 28); save the note as UTF-8",
    }
    for path, words in cases.items():
        with pytest.raises(FileError) as err:
            read_text(path, limit=1 << 20, what="note")
        assert err.value.path == str(path) and words in err.value.message, path
        assert SECRET not in str(err.value)


def test_read_text_reads_at_most_the_limit(tmp_path):
    path = write(tmp_path / "a.txt", "é" * 50)  # 100 bytes
    assert read_text(path, limit=100) == "é" * 50
    with pytest.raises(FileError, match=r"is 100 bytes; a file may be at most 99 bytes"):
        read_text(path, limit=99)


def test_read_text_names_the_column_in_characters(tmp_path):
    path = write(tmp_path / "a.txt", "ok\né\0\n".encode())
    with pytest.raises(FileError) as err:
        read_text(path, limit=100)
    assert (err.value.line, err.value.column) == (2, 2)


# ---------------------------------------------------------------------------- fileio: atomic writes


def test_write_atomic_replaces_the_whole_file_and_keeps_its_mode(tmp_path):
    path = write(tmp_path / "save.json", "old")
    path.chmod(0o640)
    write_atomic(path, "new ✓")
    assert path.read_text(encoding="utf-8") == "new ✓"
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    write_atomic(path, b"\x00bytes")
    assert path.read_bytes() == b"\x00bytes"
    assert [p.name for p in tmp_path.iterdir()] == ["save.json"]


def test_write_atomic_of_a_new_file_follows_the_umask(tmp_path):
    old = os.umask(0o027)
    try:
        write_atomic(tmp_path / "new.json", "{}")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "new.json").stat().st_mode) == 0o640


def test_write_atomic_through_a_symlink_replaces_the_target(tmp_path):
    target = write(tmp_path / "real" / "save.json", "old")
    link = tmp_path / "link.json"
    link.symlink_to(target)
    write_atomic(link, "new")
    assert link.is_symlink() and link.resolve() == target.resolve()
    assert target.read_text() == "new"
    assert sorted(p.name for p in (tmp_path / "real").iterdir()) == ["save.json"]


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path, monkeypatch):
    path = write(tmp_path / "save.json", "old and whole")
    names = []
    real_replace = os.replace

    def record(src, dst):
        names.append(Path(src).name)
        return real_replace(src, dst)

    def broken_fsync(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", record)
    write_atomic(path, "new")
    assert names[0].startswith(f".{os.getpid()}.") and names[0].endswith(TEMP_SUFFIX) and len(names[0]) < 40
    monkeypatch.setattr(os, "fsync", broken_fsync)
    with pytest.raises(OSError, match="No space left"):
        write_atomic(path, "newer")
    assert path.read_text() == "new"
    assert [p.name for p in tmp_path.iterdir()] == ["save.json"]


def test_stale_temporary_files_of_dead_writers_are_removed(tmp_path):
    path = write(tmp_path / "save.json", "old")
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead_pid = int(dead.stdout)
    stale = write(tmp_path / f".{dead_pid}.0badc0de{TEMP_SUFFIX}", "half")
    alive = write(tmp_path / f".{os.getppid()}.0badc0de{TEMP_SUFFIX}", "in progress")
    other = write(tmp_path / f"notes.{dead_pid}.0badc0de{TEMP_SUFFIX}", "not ours")  # not a temporary file's name
    write_atomic(path, "new")
    assert not stale.exists()
    assert alive.exists() and other.exists()
    assert path.read_text() == "new"


def test_a_killed_writer_leaves_the_old_file_whole(tmp_path):
    """SIGKILL in the middle of write_atomic: the destination is the old file, and the next write cleans up."""
    path = write(tmp_path / "save.json", "old")
    script = textwrap.dedent(f"""\
        import os, signal
        from dicecup import fileio
        def die(fd):
            os.kill(os.getpid(), signal.SIGKILL)
        os.fsync = die
        fileio.write_atomic({str(path)!r}, "x" * 100_000)
        """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, timeout=60)
    assert proc.returncode == -signal.SIGKILL
    assert path.read_text() == "old"
    assert len(list(tmp_path.glob(f"*{TEMP_SUFFIX}"))) == 1  # what the killed writer left
    write_atomic(path, "new")
    assert [p.name for p in tmp_path.iterdir()] == ["save.json"] and path.read_text() == "new"


def test_write_atomic_refuses_a_directory_a_missing_folder_and_a_device(tmp_path):
    (tmp_path / "dir.json").mkdir()
    with pytest.raises(FileError, match="is a directory; it was not replaced"):
        write_atomic(tmp_path / "dir.json", "x")
    with pytest.raises(FileError, match="cannot write it: the folder .*nowhere does not exist"):
        write_atomic(tmp_path / "nowhere" / "save.json", "x")
    with pytest.raises(FileError, match="is a named pipe"):
        write_atomic(fifo(tmp_path), "x")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dir.json", "pipe.yaml"]


# ---------------------------------------------------------------------------- saves that are no saves
@pytest.mark.parametrize("make", [fifo, dev_zero, directory, binary])
def test_resume_of_a_file_that_is_no_save(engine, tmp_path, make):
    path = make(tmp_path)
    with pytest.raises(SaveError) as err:
        savefile.load(path, engine)
    assert str(err.value).startswith(f"{path}: ") and SECRET not in str(err.value)
    assert "not a saved game" in str(err.value)
    cli_fails("resume", str(path))


def test_resume_of_a_huge_or_deeply_nested_save(engine, tmp_path):
    big = write(tmp_path / "big.json", b" " * (33 << 20))
    with pytest.raises(SaveError, match=r"is 33\.0 MiB .*; a saved game may be at most 32\.0 MiB"):
        savefile.load(big, engine)
    deep = write(tmp_path / "deep.json", "[" * 100_000 + "]" * 100_000)
    with pytest.raises(SaveError, match="JSON nested too deeply"):
        savefile.load(deep, engine)
    long_number = write(tmp_path / "number.json", "1" + "0" * 10_000)
    with pytest.raises(SaveError, match="a number in it is too long"):
        savefile.load(long_number, engine)


# ---------------------------------------------------------------------------- hostile variant files


#: (make the file, words of the error, the line it names or None)
HOSTILE = {
    "alias_bomb": (alias_bomb, "more than 100,000 values (aliases expanded)", 7),
    "deep_flow": (deep_flow, "nested more than 64 levels", 2),
    "deep_block": (deep_block, "nested more than 64 levels", 1),
    "deep_block_mapping": (deep_block_mapping, "nested more than 64 levels", 64),
    "huge": (huge, "is 11.4 MiB (12,000,000 bytes); a variant file may be at most 1.0 MiB (1,048,576 bytes)", None),
    "not_utf8": (not_utf8, "is not UTF-8 text (a bad byte at line 2, column 28); save the variant file as UTF-8", 2),
    "nul": (with_nul, "has a NUL byte (line 2, column 24): a binary file, not a variant file", 2),
    "binary": (binary, "has a NUL byte (line 1, column 18): a binary file, not a variant file", 1),
    "directory": (directory, "is a directory, not a variant file", None),
    "fifo": (fifo, "is a named pipe (FIFO), not a variant file", None),
    "dev_zero": (dev_zero, "is a character device, not a variant file", None),
    "dev_null": (dev_null, "is a character device, not a variant file", None),
}


@pytest.mark.parametrize("case", HOSTILE)
def test_hostile_variant_file_through_the_api(engine, tmp_path, case):
    make, words, line = HOSTILE[case]
    path = make(tmp_path)
    err = variant_error(engine, path)
    assert words in err.message
    assert (err.source, err.line) == (str(path), line)
    assert "\n" not in err.message and len(str(err)) < 600


@pytest.mark.parametrize("command", ["validate", "show"])
@pytest.mark.parametrize("case", HOSTILE)
def test_hostile_variant_file_through_the_cli(tmp_path, case, command):
    make, words, line = HOSTILE[case]
    path = make(tmp_path)
    err = cli_fails(*(["validate", str(path)] if command == "validate" else ["show", "-v", str(path)]))
    assert err.startswith(f"error: {path}{f':{line}' if line else ''}: ")
    assert words in err


def test_the_alias_bomb_names_the_alias_and_its_key_path(engine, tmp_path):
    err = variant_error(engine, alias_bomb(tmp_path))
    # each *a4 stands for 27,064 values (9**4 * 3 strings, the lists and keys): the fourth of a5 passes 100,000
    assert err.line == 7 and err.path == ("a5", 3)
    assert "an alias here" in err.message


def test_an_alias_inside_its_own_anchor_is_refused(engine, tmp_path):
    err = variant_error(engine, write(tmp_path / "loop.yaml", "id: loop\nboxes: &b\n  - *b\n"))
    assert err.line == 3 and "alias *b is inside the value it repeats" in err.message


def test_an_alias_cannot_carry_a_value_past_the_depth_limit(engine, tmp_path):
    deep = "[" * 40 + "1" + "]" * 40
    path = write(tmp_path / "alias_depth.yaml", f"id: d\na: &a {deep}\nb: {'[' * 30}*a{']' * 30}\n")
    err = variant_error(engine, path)
    assert err.line == 3 and "nests the document more than 64 levels" in err.message


def test_long_text_repeated_by_aliases_is_refused(engine, tmp_path):
    path = write(tmp_path / "chars.yaml", f'id: c\na: &a "{"x" * 500_000}"\nb: [{", ".join(["*a"] * 10)}]\n')
    err = variant_error(engine, path)
    assert err.line == 3 and "more than 4,000,000 characters of text" in err.message


def test_a_number_of_thousands_of_digits_is_refused_at_its_line(engine, tmp_path):
    err = variant_error(engine, write(tmp_path / "digits.yaml", "id: d\ndice: {count: 1" + "0" * 10_000 + "}\n"))
    assert (err.line, err.path) == (2, ("dice", "count")) and "limited to ±1,000,000,000" in str(err)
    assert len(str(err)) < 300


@pytest.mark.parametrize("text", ["name: *{long}\n", "name: !{long} x\n", "a: &{long} 1\nb: &{long} 2\n"])
def test_yaml_problems_do_not_quote_long_pieces_of_the_file(engine, tmp_path, text):
    long = "x" * 5000  # an alias, tag or anchor name: quoted only as a short token
    err = variant_error(engine, write(tmp_path / "long.yaml", "id: a\n" + text.format(long=long)))
    assert err.line in (2, 3) and err.message.startswith("not valid YAML: ")
    assert "x" * 40 not in str(err) and len(err.message) < 200


def test_a_control_character_in_registered_text_names_its_line(engine):
    from dicecup.language.yamlload import load_yaml

    with pytest.raises(VariantError) as err:
        load_yaml(f"id: x\nname: {SECRET}\x07\n", "text.yaml")
    assert err.value.line == 2 and "U+0007" in err.value.message and SECRET not in str(err.value)


# ---------------------------------------------------------------------------- YAML merge keys


def test_merge_keys_merge_and_explicit_keys_override(engine, tmp_path):
    path = write(
        tmp_path / "merge.yaml",
        """\
        id: merged
        dice: {count: 3}
        boxes:
          ones: &face {section: top, pattern: {kind: face, face: 1}, score: sum}
          twos: {<<: *face, pattern: {kind: face, face: 2}}
          sixes:
            <<: *face
            pattern: {kind: face, face: 6}
            name: Sixes
        """,
    )
    v = engine.load_file(path)
    assert [(b.id, b.section) for b in v.boxes] == [("ones", "top"), ("twos", "top"), ("sixes", "top")]
    assert v.box("sixes").name == "Sixes"
    from dicecup import Card

    roll = v.roll_of([2, 2, 6])
    assert [v.score(Card(), b, roll, False).score for b in v.box_ids] == [0, 4, 6]


def test_merge_key_lines_and_order(tmp_path):
    from dicecup.language.yamlload import load_yaml

    doc = load_yaml(
        textwrap.dedent("""\
        a: &a {p: 1, q: 1}
        b: &b
          q: 2
          r: 2
        x:
          z: 0
          <<: [*a, *b]
          p: 9
        """),
        "m.yaml",
    )
    assert doc["x"] == {"z": 0, "p": 9, "q": 1, "r": 2}  # earlier merged mappings win, explicit keys win
    assert list(doc["x"]) == ["z", "q", "r", "p"]  # merged keys sit where `<<` is written
    assert doc["x"].key_locs == {"z": ("m.yaml", 6), "p": ("m.yaml", 8), "q": ("m.yaml", 1), "r": ("m.yaml", 4)}


def test_a_key_written_twice_stays_an_error_next_to_a_merge(tmp_path):
    from dicecup.language.yamlload import load_yaml

    with pytest.raises(VariantError) as err:
        load_yaml("a: &a {p: 1}\nx:\n  <<: *a\n  p: 2\n  p: 3\n", "m.yaml")
    assert (err.value.line, err.value.path) == (5, ("x", "p")) and "duplicate key 'p'" in err.value.message


def test_a_merge_of_a_non_mapping_is_refused(tmp_path):
    from dicecup.language.yamlload import load_yaml

    with pytest.raises(VariantError) as err:
        load_yaml("a: &a [1, 2]\nx: {<<: *a}\n", "m.yaml")
    assert err.value.line == 2 and "`<<` merges a mapping, or a list of mappings" in err.value.message


# ---------------------------------------------------------------------------- saves whose variant source was tampered


def _saved_game(engine, tmp_path: Path) -> tuple[Path, Path]:
    """A saved game (as `dicecup play --save` writes it) of a variant file, and that file."""
    variant = write(tmp_path / "tiny.yaml", TINY)
    save = tmp_path / "game.json"
    state = GameState.new(engine.load_file(variant), ["ann"])
    savefile.save(save, savefile.SavedGame(state, (Seat("ann"),), random.Random(1)))
    assert savefile.load(save, engine, variant).state == state
    assert header(save)["source"] == str(variant.resolve())  # named, to say which file to pass
    return save, variant


@pytest.mark.parametrize("case", ["huge", "binary", "directory", "fifo", "dev_zero"])
def test_a_save_never_reads_the_variant_file_it_names(engine, tmp_path, case):
    """A save names its variant file; the file is read only when the user passes it (--variant FILE)."""
    save, _ = _saved_game(engine, tmp_path)
    make, words, _ = HOSTILE[case]
    evil = "/dev/zero" if case == "dev_zero" else str(make(tmp_path / "evil"))
    reseal(save, lambda lines: [{**lines[0], "source": evil}, *lines[1:]])
    with pytest.raises(VariantFileNeeded) as err:
        savefile.load(save, engine)
    assert str(err.value).startswith(f"{save}: the save's variant 'tiny' is neither built in nor installed")
    assert f"the save names the file {evil!r}" in str(err.value) and SECRET not in str(err.value)
    for command in ("resume", "review"):
        line = cli_fails(command, str(save))
        assert f"--variant {evil}" in line and SECRET not in line  # the command that would load it, spelled out
    with pytest.raises(DicecupError) as err:  # passed by the user: read through the bounded reader
        savefile.load(save, engine, evil)
    assert SECRET not in str(err.value)
    if case != "dev_zero":
        assert words in str(err.value)


# ---------------------------------------------------------------------------- extends


@pytest.mark.parametrize("case", ["huge", "not_utf8", "binary", "directory", "fifo", "dev_zero", "dev_null"])
def test_extends_naming_a_hostile_file(engine, tmp_path, case):
    make, words, line = HOSTILE[case]
    target = make(tmp_path)
    child = write(tmp_path / "child.yaml", f"id: child\nextends: {target.name}\n")
    err = variant_error(engine, child)
    if case.startswith("dev_"):  # the link leads to /dev, outside the child's folder: not even opened
        assert (err.source, err.line, err.path) == (str(child), 2, ("extends",))
        assert err.message == f"extends {target.name!r}, which is outside the folder of {child}"
    elif line is None:
        assert (err.source, err.line, err.path) == (str(child), 2, ("extends",))
        assert err.message.startswith(f"cannot extend {target.name!r}: ") and words in err.message
    else:  # a bad byte in the parent: its own file and line, and who extends it
        assert (err.source, err.line) == (str(target), line) and words in err.message
        assert err.hint == f"{child}:2 extends it"
    assert cli_fails("validate", str(child)).startswith("error: ")


@pytest.mark.parametrize("target", ["../outside.yaml", "/dev/zero.yaml", "sub/../../outside.yaml", "link/outside.yaml"])
def test_extends_leading_outside_the_folder_is_refused_unread(engine, tmp_path, target):
    write(tmp_path / "outside.yaml", TINY)
    (tmp_path / "game" / "sub").mkdir(parents=True)
    (tmp_path / "game" / "link").symlink_to(tmp_path)  # inside by name, outside once resolved
    child = write(tmp_path / "game" / "child.yaml", f"id: child\nextends: {target}\n")
    err = variant_error(engine, child)
    assert (err.line, err.path) == (2, ("extends",))
    assert err.message == f"extends {target!r}, which is outside the folder of {child}"


def test_extends_into_a_subfolder_and_back_within_the_folder(engine, tmp_path):
    """The folder is that of the file the chain starts from: a part may use `..` within it."""
    write(tmp_path / "base.yaml", TINY)
    write(tmp_path / "parts" / "middle.yaml", "id: middle\nextends: ../base.yaml\nname: Middle\n")
    child = write(tmp_path / "child.yaml", "id: child\nextends: parts/middle.yaml\n")
    v = engine.load_file(child)
    assert (v.id, v.name, v.box_ids) == ("child", "Middle", ("ones", "triple"))
    err = variant_error(engine, tmp_path / "parts" / "middle.yaml")  # started there, base.yaml is outside
    assert err.message == f"extends '../base.yaml', which is outside the folder of {tmp_path / 'parts' / 'middle.yaml'}"


def test_an_id_without_a_yaml_suffix_is_looked_up_not_opened(engine, tmp_path):
    child = write(tmp_path / "child.yaml", "id: child\nextends: /dev/zero\n")
    err = variant_error(engine, child)
    assert (err.line, err.path) == (2, ("extends",)) and "extends unknown variant '/dev/zero'" in err.message


def test_a_long_extends_chain_is_refused(engine, tmp_path):
    write(tmp_path / "v0.yaml", TINY)
    for i in range(1, 30):
        write(tmp_path / f"v{i}.yaml", f"id: v{i}\nextends: v{i - 1}.yaml\n")
    err = variant_error(engine, tmp_path / "v29.yaml")
    assert err.path == ("extends",) and "an extends chain may hold at most 16 variants" in err.message


# ---------------------------------------------------------------------------- numbers


@pytest.mark.parametrize(
    ("value", "words"),
    [
        ("9223372036854775808", "9223372036854775808 is out of range"),  # 2**63
        ("-1000000000000000000000000000000", "-1000000000000000000000000000000 is out of range"),  # -10**30
        ("1000000001", "1000000001 is out of range"),
        ("0x7fffffffffffffff", "9223372036854775807 is out of range"),
        ("1.0e+400", "inf is not a finite number"),
        (".inf", "inf is not a finite number"),
        ("-.inf", "-inf is not a finite number"),
        (".nan", "nan is not a finite number"),
        ("1.5e+12", "1.5e+12 is out of range"),
    ],
)
def test_numbers_beyond_machine_range_are_refused_where_written(engine, tmp_path, value, words):
    path = write(tmp_path / "n.yaml", TINY.replace("score: 30", f"score: {value}"))
    err = variant_error(engine, path)
    assert (err.line, err.path) == (6, ("boxes", "triple", "score"))
    assert words in err.message and "numbers in a variant are limited to ±1,000,000,000" in err.message


def test_a_huge_option_choice_is_refused_at_its_line_even_when_not_chosen(engine, tmp_path):
    """Checked after `${}` substitution, which keeps each list item's line."""
    text = (
        TINY.replace("score: 30", 'score: "${big}"')
        + "options:\n  big:\n    default: 1\n    choices:\n      - 1\n      - 99999999999\n"
    )
    err = variant_error(engine, write(tmp_path / "n.yaml", text))
    assert (err.line, err.path) == (
        12,
        ("options", "big", "choices", 1),
    ) and "99999999999 is out of range" in err.message


def test_the_largest_allowed_numbers_load(engine, tmp_path):
    v = engine.load_file(write(tmp_path / "n.yaml", TINY.replace("score: 30", "score: 1000000000")))
    assert v.box("triple") is not None


# ---------------------------------------------------------------------------- options


def _with_option(tmp_path: Path, declaration: str) -> Path:
    return write(tmp_path / "opt.yaml", TINY + "options:\n" + textwrap.indent(textwrap.dedent(declaration), "  "))


@pytest.mark.parametrize(
    ("key", "words"),
    [
        ("extends", "an overlay cannot change what the variant extends"),
        ("options", "an overlay cannot declare or change options"),
        ("id", "an overlay cannot change the variant's id"),
    ],
)
def test_an_overlay_cannot_change_extends_options_or_id(engine, tmp_path, key, words):
    path = _with_option(
        tmp_path,
        f"""\
        mode:
          default: plain
          choices:
            plain: {{}}
            other:
              name: Other
              {key}: yahtzee
        """,
    )
    err = variant_error(engine, path)
    assert (err.line, err.path) == (14, ("options", "mode", "choices", "other", key))
    assert err.message == words


@pytest.mark.parametrize(
    ("choices", "line", "path", "kind"),
    [
        ("[5, [1, 2]]", 8, ("options", "size", "choices", 1), "a list"),
        ("[5, {a: 1}]", 8, ("options", "size", "choices", 1), "a mapping"),
        ("[5, null]", 8, ("options", "size", "choices", 1), "null"),
        ("[5, 2.5]", 8, ("options", "size", "choices", 1), "a fractional number"),
        ("{5: {}, null: {}}", 8, ("options", "size", "choices", None), "null"),
    ],
)
def test_option_choices_must_be_plain_scalars(engine, tmp_path, choices, line, path, kind):
    err = variant_error(engine, _with_option(tmp_path, f"size: {{default: 5, choices: {choices}}}\n"))
    assert (err.line, err.path) == (line, path)
    assert f"an option choice must be a string, a whole number or true/false, not {kind}" in err.message


def test_option_names_must_be_identifiers(engine, tmp_path):
    err = variant_error(engine, _with_option(tmp_path, "big-bonus: {default: 1, choices: [1, 2]}\n"))
    assert (err.line, err.path) == (8, ("options", "big-bonus")) and "is not an identifier" in err.message


def test_choices_that_read_the_same_are_refused(engine, tmp_path):
    err = variant_error(engine, _with_option(tmp_path, "mode: {default: Fast, choices: [Fast, fast]}\n"))
    assert err.path == ("options", "mode", "choices") and "'Fast' and 'fast' cannot be told apart" in err.message
    err = variant_error(engine, _with_option(tmp_path, "flag: {default: 1, choices: [1, true]}\n"))
    assert err.path == ("options", "flag", "choices") and "1 and True cannot be told apart" in err.message


def test_substitution_cannot_blow_the_document_up(engine, tmp_path):
    long_choice = "x" * 400_000
    names = ", ".join(['"${t}${t}${t}${t}${t}"'] * 3)
    text = TINY + f"description: [{names}]\noptions:\n  t: {{default: a, choices: [a, {long_choice}]}}\n"
    path = write(tmp_path / "subst.yaml", text)
    err = variant_error(engine, path, {"t": long_choice})
    assert err.line == 7 and "substituting options makes the document longer than 4,000,000 characters" in err.message


# ---------------------------------------------------------------------------- validate: option combinations

CONFLICT = (
    TINY
    + """\
options:
  drop:
    default: keep
    choices:
      keep: {}
      drop: {boxes: {triple: null}}
  bonus:
    default: none
    choices:
      none: {}
      triple: {bonuses: {lucky: {kind: event, pattern_of: triple, box_holds: {triple: 30}, points: 10}}}
"""
)


def test_validate_finds_options_that_conflict_only_in_combination(engine, tmp_path):
    path = write(tmp_path / "conflict.yaml", CONFLICT)
    for options in ({}, {"drop": "drop"}, {"bonus": "triple"}):  # each choice alone compiles
        engine.load_file(path, options)
    variant_error(engine, path, {"drop": "drop", "bonus": "triple"})
    err = cli_fails("validate", str(path))
    assert err.startswith(f"error: {path}:") and "with options drop=drop, bonus=triple: " in err


def test_validate_counts_the_combinations_it_checked(tmp_path):
    path = write(
        tmp_path / "fine.yaml", CONFLICT.replace("drop: {boxes: {triple: null}}", "drop: {boxes: {ones: null}}")
    )
    proc = subprocess.run(
        [sys.executable, "-m", "dicecup", "validate", str(path)],
        capture_output=True,
        text=True,
        env={**os.environ, **ENV},
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().endswith(", 4 option combinations checked")


def test_validate_refuses_more_combinations_than_its_cap(engine, tmp_path):
    from dicecup.language.documents import option_combinations

    options = "".join(f"  o{i}: {{default: a, choices: [a, b]}}\n" for i in range(11))
    path = write(tmp_path / "many.yaml", TINY + "options:\n" + options)
    specs = engine.load_file(path).option_specs
    with pytest.raises(VariantError, match="2,048 option combinations; validate checks up to 1,024"):
        option_combinations(specs, source=str(path))
    assert len(list(option_combinations(specs[:10]))) == 1024
    assert next(option_combinations(specs[:10])) == {s.name: "a" for s in specs[:10]}  # the defaults first
    err = cli_fails("validate", str(path))
    assert "2,048 option combinations; validate checks up to 1,024" in err


def test_write_atomic_with_a_writer_that_fails_halfway_keeps_the_old_file(tmp_path):
    """A streamed write (a large table) that fails midway leaves the old file whole and no temporary file."""
    path = tmp_path / "table.npz"
    write_atomic_with(path, lambda fh: fh.write(b"old table"))

    def half(fh):
        fh.write(b"half of a new ")
        raise OSError(28, "No space left on device")

    with pytest.raises(OSError, match="No space left"):
        write_atomic_with(path, half)
    assert path.read_bytes() == b"old table"
    assert [p.name for p in tmp_path.iterdir()] == ["table.npz"]
