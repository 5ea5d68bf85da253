"""Shared pieces of the command-line and terminal tests: scripted prompts, a CLI run that must fail cleanly
(under a deadline and a memory cap), and each command's --json checked against its schema."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from importlib import resources
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator
from referencing import Registry, Resource
from typer.testing import CliRunner

from dicecup.cli.app import app

SECRET = "SECRET-CONTENT-42"  # written into hostile files: no message may repeat it

BOTS = ("random", "greedy", "optimal")


class Script:
    """Answers prompts from a list; counts the problems shown in between."""

    def __init__(self, lines):
        self.lines = list(lines)
        self.prompts: list[str] = []

    def __call__(self, prompt: str) -> str:
        self.prompts.append(prompt)
        if not self.lines:
            raise EOFError
        return self.lines.pop(0)


ENV = {"DICECUP_DISABLE_PLUGIN_AUTOLOAD": "1", "COLUMNS": "200"}


MEMORY_CAP = 2 << 30  # bytes of address space for each command run


DEADLINE_SECONDS = 30


@pytest.fixture(autouse=True)
def deadline():
    """Fail (instead of hanging the run) when a test takes more than 30 seconds: a FIFO that blocks (a hypothesis
    test sets them going again at each example: `deadline_again`)."""

    def expired(signum, frame):
        raise TimeoutError("this test blocked: a read waited on a FIFO or device")

    old = signal.signal(signal.SIGALRM, expired)
    signal.alarm(DEADLINE_SECONDS)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, old)


def deadline_again() -> None:
    """The `deadline` fixture's 30 seconds from now: for each example of a hypothesis test (thirty examples of a
    few commands each may take longer together on a busy machine, none of them blocked)."""
    signal.alarm(DEADLINE_SECONDS)


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


def _schemas() -> dict[str, dict]:
    folder = resources.files("dicecup.cli") / "schemas"
    return {
        f.name.removesuffix(".json"): json.loads(f.read_text()) for f in folder.iterdir() if f.name.endswith(".json")
    }


SCHEMAS = _schemas()


REGISTRY = Registry().with_resources((s["$id"], Resource.from_contents(s)) for s in SCHEMAS.values())


def json_of(*args: str, quiet: bool = True) -> dict:
    """Run a command with --json (and -q): its stdout is exactly one JSON document, its stderr empty."""
    result = CliRunner().invoke(app, [*args, "--json", *(["-q"] if quiet else [])])
    assert result.exit_code == 0, result.output
    if quiet:
        assert result.stderr == "", result.stderr
    data = json.loads(result.stdout)
    assert list(data)[:2] == ["variant", "options"]
    return data


def check(command: str, data: dict) -> None:
    Draft202012Validator(SCHEMAS[command], registry=REGISTRY).validate(data)
