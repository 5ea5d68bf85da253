"""The code is clean under ruff (lint and format) and mypy, as part of the test run CI makes.

mypy is run on a tree that maps the import package the way the installed one does
(`dicecup` = core/, `dicecup.plugins` = plugins/), built from symlinks in a
temporary folder, so the plugins' `from dicecup import ...` resolves to this code.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def run(*args: str, cwd: Path = ROOT, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *args], capture_output=True, text=True, cwd=cwd, timeout=600, env=env)


def test_ruff_lint():
    proc = run("ruff", "check", str(ROOT))
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_ruff_format():
    proc = run("ruff", "format", "--check", str(ROOT))
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.slow
def test_mypy(tmp_path):
    package = tmp_path / "dicecup"
    package.mkdir()
    for entry in (ROOT / "core").iterdir():
        if entry.name != "__pycache__":
            (package / entry.name).symlink_to(entry)
    (package / "plugins").symlink_to(ROOT / "plugins")
    env = {**os.environ, "MYPYPATH": str(tmp_path)}
    proc = run(
        "mypy",
        "--config-file",
        str(ROOT / "pyproject.toml"),
        "--cache-dir",
        str(tmp_path / ".mypy_cache"),
        "-p",
        "dicecup",
        cwd=tmp_path,
        env=env,
    )
    report = proc.stdout.replace(str(package), "core")
    assert proc.returncode == 0, report + proc.stderr
