"""The Node.js client in examples/node-client plays a whole game against a bot through the protocol alone,
on Debian's `node`, against a real `dicecup serve`; its printed scores are the server's."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from _server_helpers import Serve, call

CLIENT = Path(__file__).resolve().parent.parent / "examples" / "node-client" / "play.mjs"


def test_the_node_client_plays_a_whole_game_against_a_bot(tmp_path):
    node = shutil.which("node") or shutil.which("nodejs")
    if node is None:
        pytest.skip("Node.js is not installed (Debian: apt-get install nodejs; .ci/run installs it)")
    server = Serve(tmp_path, f"sqlite:///{tmp_path}/t.sqlite3", "--bot-delay", "0").start()
    try:
        args = [node, str(CLIENT), "--server", server.url, "--variant", "yahtzee", "--bot", "bot:greedy"]
        try:
            proc = subprocess.run([*args, "--name", "nodie"], capture_output=True, text=True, timeout=300)
        except subprocess.TimeoutExpired as exc:  # say where the game stood, not only that it stopped
            pytest.fail(f"the Node.js client did not finish in 300 s:\n{exc.stdout!s}\n{exc.stderr!s}")
        assert proc.returncode == 0, proc.stdout + proc.stderr
        code = re.match(r"table ([A-Za-z0-9_-]{16}) ", proc.stdout).group(1)
        status, view = call(f"{server.url}/api/tables/{code}")
    finally:
        server.stop()
    game = view["game"]
    assert status == 200 and game["status"] == "over"
    lines = proc.stdout.splitlines()[1:]
    assert lines == [
        f"nodie: {game['result']['totals'][0]}",
        f"greedy: {game['result']['totals'][1]}",
        f"winner: {', '.join(game['result']['winners'])}",
    ]
    # every move it made was legal: the only refusal it may meet is the server's rate, which it waits out
    refusals = [line for line in proc.stderr.splitlines() if line.startswith("refused:")]
    assert all(line.startswith("refused: rate_limited:") for line in refusals), proc.stderr
    assert all(len(p["scores"]) == 13 and None not in p["scores"].values() for p in game["players"])
