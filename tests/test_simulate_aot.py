"""The simulator's player built ahead of time (`numeric.aot`): a simulation then imports no numba, and plays the
same games as numba's compile of the same functions."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from dicecup.numeric import compiled, records

needs_aot = pytest.mark.skipif(compiled.MODE != "aot", reason="the kernels were not built ahead of time here")

RUN = """
import json, sys
from dicecup.cli import main
try:
    main(["simulate", "-v", "yahtzee", "-n", "3000", "--seed", "5", "-s", sys.argv[1], "--json"])
except SystemExit:
    pass
print(json.dumps([m for m in ("numba", "llvmlite") if m in sys.modules]))
"""


def _simulate(tmp_path, strategy: str, mode: str) -> tuple[dict, list[str]]:
    """A simulation in a process of its own in kernel mode `mode`: its JSON report, and the compilers it loaded."""
    env = dict(
        os.environ,
        DICECUP_CACHE_DIR=str(tmp_path / "cache"),
        DICECUP_STATE_DIR=str(tmp_path / "state"),
        DICECUP_KERNELS=mode,
    )
    done = subprocess.run([sys.executable, "-c", RUN, strategy], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    *report, loaded = done.stdout.strip().splitlines()
    return json.loads("\n".join(report)), json.loads(loaded)


@pytest.mark.slow  # Yahtzee solved, its moves filled: about 40 s
@needs_aot
@pytest.mark.parametrize("strategy", ["optimal", "risk:0.02"])
def test_a_simulation_with_its_moves_kept_imports_neither_numba_nor_llvm_and_plays_the_same_games(tmp_path, strategy):
    """Once the best-move rows are kept on disk (a first run fills them, compiled by numba where the build has
    no fill), a simulation loads no compiler; its games are those numba's compile of the player plays."""
    _simulate(tmp_path, strategy, "aot")  # solves, fills and keeps the best-move rows
    built, loaded = _simulate(tmp_path, strategy, "aot")
    assert loaded == []
    jit, loaded_jit = _simulate(tmp_path, strategy, "jit")
    assert loaded_jit  # (the check above would see a compiler loaded)
    assert built["scores"] == jit["scores"] and built["histogram"] == jit["histogram"]
    assert built["mean"] == jit["mean"] and built["games"] == 3000


def test_the_player_s_records_are_checked_by_layout_and_writability():
    """The build's player takes column-major count arrays and read-only best-move rows; the argument check
    lets them through where the kernel was compiled for any layout (or for read-only rows), and refuses a
    strided array where a C one is expected, and a read-only array for one the kernel writes."""
    name = records.play_variant(*(np.zeros(1, dtype=t) for t in records.PLAY_VARIANTS[0]))
    ps, gm, pl, taken = records.signatures()[name]
    assert not gm.awards.flags.c_contiguous and not pl.moves.rows.flags.writeable
    counts = records.counts_array(5, 3)
    rows = np.zeros((2, 2, 2), dtype=pl.moves.rows.dtype)
    fits = compiled.RecordChecks().fits
    assert fits(gm._replace(awards=counts, earned=counts, events=counts), gm)
    assert fits(pl._replace(moves=pl.moves._replace(rows=rows)), pl)  # writable where read-only will do
    strided = np.zeros((4, 2), dtype=np.int64)[::2]
    assert not fits(gm._replace(vals=strided), gm)
    with pytest.raises(TypeError, match="C-contiguous"):
        compiled._check_like(gm._replace(vals=strided), gm, "games")
    read_only = np.zeros(1, dtype=np.int64)
    read_only.setflags(write=False)
    assert not fits(ps._replace(pending=read_only), ps)
    with pytest.raises(TypeError, match="writable"):
        compiled._check_like(ps._replace(pending=read_only), ps, "pass")


def test_the_simulator_s_build_is_checked_apart_from_the_core_s():
    """The core's digest is asked while `compiled` is imported (the simulator's records cannot be yet); the
    simulator's changes with its records' types alone."""
    assert records.signature_digest() != records.signature_digest(simulator=True)
    before = records.signature_digest(simulator=True)
    assert set(records.simulator_signatures()) >= {"class_slots", "group_facts", "class_scores"}
    kernels = set(records.simulator_signatures()) - {"class_slots", "group_facts", "class_scores"}
    assert all(name.startswith(("play_worker_", "fill_worker_")) for name in kernels)
    assert {records.fill_variant(np.zeros(1, dtype=t)) for t in records.FILL_VARIANTS} <= kernels
    assert records.signature_digest(simulator=True) == before
