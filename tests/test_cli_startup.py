"""What `solve` and `advise` show while they start: the progress bar is made when a solve reports progress
(so a cached table needs no rich), and it still shows, and is erased, in a terminal when something is solved."""

from __future__ import annotations

import os
import pty
import re
import subprocess
import sys
from pathlib import Path


def _in_a_terminal(tmp_path: Path, *args: str) -> str:
    """What `dicecup ARGS` writes to a terminal (a pseudo-terminal on stdout and stderr)."""
    main, sub = pty.openpty()
    env = {**os.environ, "DICECUP_CACHE_DIR": str(tmp_path), "COLUMNS": "100", "TERM": "xterm"}
    proc = subprocess.Popen([sys.executable, "-m", "dicecup", *args], stdout=sub, stderr=sub, env=env, cwd=tmp_path)
    os.close(sub)
    out = b""
    while True:
        try:
            chunk = os.read(main, 65536)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    assert proc.wait(timeout=120) == 0, out.decode(errors="replace")
    os.close(main)
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", out.decode())  # the terminal's control codes off


def test_a_solve_in_a_terminal_shows_its_progress_bar(tmp_path):
    """Solving in a terminal draws the bar (its phase and states done of all), then erases it."""
    out = _in_a_terminal(tmp_path, "solve", "-v", "yacht", "--no-cache")
    assert "solving" in out
    assert re.search(r"\d+/\d+", out)  # states done of all, rich's MofNCompleteColumn
    assert "optimal expected score" in out


def test_advise_from_a_cached_table_in_a_terminal_draws_no_bar(tmp_path):
    """With the table cached nothing reports progress: no bar, and the advice as before."""
    _in_a_terminal(tmp_path, "solve", "-v", "yacht", "-q")
    out = _in_a_terminal(tmp_path, "advise", "-v", "yacht", "-d", "11256", "-r", "1")
    assert "solving" not in out and "exploring states" not in out
    assert "best" in out
