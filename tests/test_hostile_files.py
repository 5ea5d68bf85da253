"""Bad and hostile files: each ends quickly, in bounded memory, with one precise typed error
(VariantError, SaveError or FileError) through the API, and through the real command line
with exit status 2, one `error:` line, no traceback and nothing of the file's content.

Also the safe file layer itself (dicecup.fileio): reads that never block nor read without
bound, and atomic writes that leave the whole old file or the whole new one.
"""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from dicecup import SaveError, VariantError
from dicecup.fileio import TEMP_SUFFIX, FileError, read_text, write_atomic
from dicecup.terminal import savefile

pytestmark = pytest.mark.skipif(os.name != "posix", reason="FIFOs, devices and signals as on POSIX")

ENV = {"DICECUP_DISABLE_PLUGIN_AUTOLOAD": "1", "COLUMNS": "200"}
MEMORY_CAP = 2 << 30  # bytes of address space for each command run
SECRET = "SECRET-CONTENT-42"  # written into hostile files: no message may repeat it

TINY = """\
id: tiny
name: Tiny
dice: {count: 3}
boxes:
  ones: {section: top, pattern: {kind: face, face: 1}, score: sum}
  triple: {pattern: {kind: of_a_kind, n: 3}, score: 30}
"""


@pytest.fixture(autouse=True)
def deadline():
    """Fail (instead of hanging the run) when a test takes more than 30 seconds: a FIFO that blocks."""

    def expired(signum, frame):
        raise TimeoutError("this test blocked: a read waited on a FIFO or device")

    old = signal.signal(signal.SIGALRM, expired)
    signal.alarm(30)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, old)


def _cap_memory() -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))


def cli_fails(*args: str, cwd: Path | None = None) -> str:
    """Run `python -m dicecup ARGS` under a timeout and a memory cap; it must fail cleanly. Returns stderr."""
    proc = subprocess.run(
        [sys.executable, "-m", "dicecup", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **ENV},
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        timeout=60,
        preexec_fn=_cap_memory,
    )
    assert proc.returncode == 2, (args, proc.returncode, proc.stderr[-3000:])
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    lines = proc.stderr.splitlines()
    assert lines and lines[0].startswith("error: "), proc.stderr[-3000:]
    assert sum(line.startswith("error:") for line in lines) == 1
    assert all(line.startswith("  hint: ") for line in lines[1:]), lines  # a hint may follow the error line
    assert SECRET not in proc.stderr and len(proc.stderr) < 1000
    return proc.stderr


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
    return write(folder / "deep_map.yaml", "".join(" " * i + f"k{i}:\n" for i in range(1000)) + " " * 1000 + SECRET + "\n")


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
    assert names[0].startswith(f".save.json.{os.getpid()}.") and names[0].endswith(TEMP_SUFFIX)
    monkeypatch.setattr(os, "fsync", broken_fsync)
    with pytest.raises(OSError, match="No space left"):
        write_atomic(path, "newer")
    assert path.read_text() == "new"
    assert [p.name for p in tmp_path.iterdir()] == ["save.json"]


def test_stale_temporary_files_of_dead_writers_are_removed(tmp_path):
    path = write(tmp_path / "save.json", "old")
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead_pid = int(dead.stdout)
    stale = write(tmp_path / f".save.json.{dead_pid}.0badc0de{TEMP_SUFFIX}", "half")
    alive = write(tmp_path / f".save.json.{os.getppid()}.0badc0de{TEMP_SUFFIX}", "in progress")
    other = write(tmp_path / f".save.json.5.{dead_pid}.0badc0de{TEMP_SUFFIX}", "another file's")  # `save.json.5`
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
    big = write(tmp_path / "big.json", b" " * (17 << 20))
    with pytest.raises(SaveError, match=r"is 17\.0 MiB .*; a saved game may be at most 16\.0 MiB"):
        savefile.load(big, engine)
    deep = write(tmp_path / "deep.json", "[" * 100_000 + "]" * 100_000)
    with pytest.raises(SaveError, match="JSON nested too deeply"):
        savefile.load(deep, engine)
    long_number = write(tmp_path / "number.json", "1" + "0" * 10_000)
    with pytest.raises(SaveError, match="a number in it is too long"):
        savefile.load(long_number, engine)
