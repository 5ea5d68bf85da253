"""The solver on a Dask cluster (`dicecup.cluster`): the same table bit for bit, resumed chunk by chunk.

Every test here starts (or shares) a local cluster of two worker processes on this machine, as
`--cluster local:2` does, and stops it at the end.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from _solver_helpers import TINY, cli_run, cli_schema, tiny_variant

from dicecup import Engine
from dicecup.cluster import (
    ClusterBackend,
    ClusterError,
    ClusterInterrupted,
    ClusterStoreError,
    ClusterUnavailable,
    connect,
    simulate_on_cluster,
)
from dicecup.cluster.connect import parse_address
from dicecup.cluster.store import PROGRESS
from dicecup.errors import DicecupError
from dicecup.numeric.objective import parse_objective
from dicecup.simulate import simulate, summarize
from dicecup.solver import solve

pytestmark = pytest.mark.slow

distributed = pytest.importorskip("distributed", reason="the cluster extra (dask distributed) is not installed")
pytest.importorskip("zarr", reason="the cluster extra (zarr) is not installed")


@pytest.fixture(scope="module")
def cluster():
    with connect("local:2") as c:
        yield c


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    """Byte for byte (NaNs included), same shape and dtype."""
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


# ---------------------------------------------------------------------- same answers


@pytest.mark.parametrize("name", sorted(TINY))
def test_tiny_variants_bit_identical(cluster, tmp_path, name):
    """Every small test card (thresholds, stages, flags, banked rolls, columns...) split in chunks of 8 states."""
    variant = tiny_variant(tmp_path, name)
    backend = ClusterBackend(cluster, tmp_path / "store", block=8)
    assert _same(solve(variant, backend=backend).values, solve(variant).values)
    assert backend.report.computed == sum(r.chunks for r in backend.report.layers) > 2


def test_each_worker_reads_the_layer_below_once_not_per_chunk(cluster, tmp_path):
    """The layer below is kept by each worker's plugin: a layer of many chunks costs each of the 2 workers at
    most one read of it (float64 values: 8 bytes a state), not one per chunk."""
    variant = Engine().variant("yacht")
    backend = ClusterBackend(cluster, tmp_path / "store", block=16)
    solve(variant, backend=backend)
    states = {r.filled: r.states for r in backend.report.layers}
    checked = 0
    for row in backend.report.layers:
        if row.filled + 1 in states and row.chunks > 2:
            one_read = 8 * states[row.filled + 1]
            assert one_read <= row.read_bytes <= 2 * one_read < row.chunks * one_read
            checked += 1
    assert checked >= 3


# One of each shape among the built-ins (Kniffel is Yahtzee renamed, Yatzy the forced order's card without the
# order, the simple Russian game the full one's subset): `tests/benchmarks/bench_cluster.py --identical` runs them all.
BUILT_IN = ["yacht", "yahtzee", "yatzy-forced", "generala", "russian", "kismet"]


def test_built_in_variants_bit_identical(cluster, tmp_path):
    """A built-in variant of each shape the solver takes by default (all of them, Maxi Yatzy with 33.5 million
    states without saved rolls and Yahtzee's other joker modes: `tests/benchmarks/bench_cluster.py --identical --maxi`)."""
    engine = Engine()
    for name in BUILT_IN:
        variant = engine.variant(name)
        backend = ClusterBackend(cluster, tmp_path / name)
        assert _same(solve(variant, backend=backend).values, solve(variant).values), name


def test_float32_and_risk_tables_bit_identical(cluster, tmp_path):
    variant = Engine().variant("yacht")
    for kwargs in ({"precision": "float32"}, {"objective": parse_objective("risk:0.02")}):
        backend = ClusterBackend(cluster, tmp_path / str(len(kwargs)) / next(iter(kwargs)), block=64)
        assert _same(solve(variant, backend=backend, **kwargs).values, solve(variant, **kwargs).values)


# ---------------------------------------------------------------------- simulation


@pytest.mark.parametrize("strategy", ["optimal", "greedy", "random", "risk:0.02"])
def test_simulation_on_the_cluster_is_the_run_in_one_process(cluster, strategy):
    """The same seed gives the same figures, every one of them, cut into ranges on two workers or not at all."""
    variant = Engine().variant("yacht")
    whole = summarize(simulate(variant, strategy, 3000, seed=11))
    tally, report = simulate_on_cluster(cluster, variant, strategy, 3000, seed=11, games_per_range=700)
    assert report.ranges == 5 and report.workers == 2
    assert summarize(tally) == whole


def test_simulation_figures_do_not_depend_on_the_number_of_workers(cluster):
    variant = Engine().variant("yacht")
    two, _ = simulate_on_cluster(cluster, variant, "greedy", 4000, seed=3, games_per_range=900)
    with connect("local:1") as alone:
        one, report = simulate_on_cluster(alone, variant, "greedy", 4000, seed=3, games_per_range=900)
    assert report.workers == 1 and summarize(one) == summarize(two)


# ---------------------------------------------------------------------- resuming


def test_stopped_solve_resumes_from_its_chunks(cluster, tmp_path):
    variant = tiny_variant(tmp_path, "threshold")
    store = tmp_path / "store"
    with pytest.raises(ClusterInterrupted, match="stopped after 5 chunks"):
        solve(variant, backend=ClusterBackend(cluster, store, block=8, stop_after=5))
    record = json.loads((store / PROGRESS).read_text())
    kept = sum(len(v) for v in record["done"].values())
    again = ClusterBackend(cluster, store, block=8)
    values = solve(variant, backend=again).values
    report = again.report
    assert report.resumed == kept - len(record["done"][str(len(variant.box_ids))])  # the full cards aside
    assert report.resumed >= 5 and report.computed == sum(r.chunks for r in report.layers) - report.resumed
    assert _same(values, solve(variant).values)
    # a third run has nothing left to compute
    third = ClusterBackend(cluster, store, block=8)
    assert _same(solve(variant, backend=third).values, values) and third.report.computed == 0


def test_a_worker_killed_mid_solve_is_replaced(cluster, tmp_path):
    """SIGKILL one worker process while the layers are computed: its chunks run again elsewhere."""
    variant = tiny_variant(tmp_path, "two-groups")
    pids = list(cluster.client.run(os.getpid).values())
    killed: list[int] = []

    class Kill:  # a progress reporter that kills a worker a quarter into the backward pass
        label, total, count = "", 0, 0

        def start(self, label, total=None, unit="", seconds=None):
            self.label, self.total, self.count = label, total or 0, 0

        def advance(self, n=1):
            self.count += n
            if self.label == "backward pass" and not killed and self.count > self.total // 4:
                killed.append(pids[0])
                os.kill(pids[0], signal.SIGKILL)

        def done(self):
            self.label = ""

    backend = ClusterBackend(cluster, tmp_path / "store", block=8)
    values = solve(variant, backend=backend, progress=Kill()).values
    assert killed and _same(values, solve(variant).values)
    cluster.client.wait_for_workers(2, timeout=30)  # the nanny restarted it, for the tests after this one


def test_interrupted_cli_solve_resumes(tmp_path):
    """Ctrl-C (SIGINT) in the middle of `dicecup solve --cluster`: the chunks written are kept and not redone."""
    store = tmp_path / "store"
    env = {**os.environ, "DICECUP_CACHE_DIR": str(tmp_path / "cache")}
    cmd = [sys.executable, "-m", "dicecup", "solve", "-v", "yahtzee", "--cluster", "local:2", "--work-dir", str(store)]
    proc = subprocess.Popen(
        [*cmd, "-q"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # a test runner's worker may ignore SIGINT, and a child inherits that: give it Python's own handling
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    record = store / PROGRESS
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            if len(json.loads(record.read_text())["done"]) > 2:  # two layers below the full cards begun
                break
        except (OSError, ValueError):
            pass
        time.sleep(0.02)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert f"resume from the chunks kept in {store}" in err and "Traceback" not in err
    again = subprocess.run([*cmd, "--json", "-q"], env=env, capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr
    got = json.loads(again.stdout)
    assert got["cluster"]["chunks_resumed"] > 0
    assert got["expected_score"] == pytest.approx(254.5896, abs=1e-4)


# ---------------------------------------------------------------------- refusals


def test_store_refusals(cluster, tmp_path):
    yacht, tiny = Engine().variant("yacht"), tiny_variant(tmp_path, "threshold")
    store = tmp_path / "store"
    solve(tiny, backend=ClusterBackend(cluster, store, block=8))
    with pytest.raises(ClusterStoreError, match="holds the work of another solve"):
        solve(yacht, backend=ClusterBackend(cluster, store, block=8))
    with pytest.raises(ClusterStoreError, match="split in blocks of 8 states, not 16"):
        solve(tiny, backend=ClusterBackend(cluster, store, block=16))
    # a chunk's bytes changed on disk: refused, never reused
    chunk = next(p for p in (store / "layer_2").rglob("*") if p.is_file() and p.name != "zarr.json")
    data = bytearray(chunk.read_bytes())
    data[0] ^= 0xFF
    chunk.write_bytes(bytes(data))
    with pytest.raises(ClusterStoreError, match="changed since it was written"):
        solve(tiny, backend=ClusterBackend(cluster, store, block=8))
    # a cut chunk, a record that is not ours, a FIFO for a record, a file for a folder, someone else's folder
    chunk.write_bytes(bytes(data[:5]))
    with pytest.raises(ClusterStoreError, match="damaged"):
        solve(tiny, backend=ClusterBackend(cluster, store, block=8))
    (store / PROGRESS).write_text('{"signature": 1}')
    with pytest.raises(ClusterStoreError, match="progress record is not one this solver wrote"):
        solve(tiny, backend=ClusterBackend(cluster, store, block=8))
    (store / PROGRESS).unlink()
    os.mkfifo(store / PROGRESS)
    with pytest.raises(Exception, match="not a regular file|FIFO") as got:
        solve(tiny, backend=ClusterBackend(cluster, store, block=8))
    assert isinstance(got.value, DicecupError)
    afile = tmp_path / "afile"
    afile.write_text("x")
    with pytest.raises(ClusterStoreError, match="is not a folder"):
        solve(tiny, backend=ClusterBackend(cluster, afile))
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("mine")
    with pytest.raises(ClusterStoreError, match="holds no solve's record"):
        solve(tiny, backend=ClusterBackend(cluster, other))
    assert (other / "notes.txt").read_text() == "mine"


def test_a_store_the_disk_cannot_hold_is_refused_before_any_work(cluster, tmp_path, monkeypatch):
    import dicecup.cluster.store as store_module

    class Full:
        f_bavail, f_frsize = 1, 4096

    monkeypatch.setattr(store_module.os, "statvfs", lambda path: Full)
    with pytest.raises(ClusterStoreError, match=r"the layers need 0\.00 GiB and the disk has 0\.00 GiB free"):
        solve(Engine().variant("yacht"), backend=ClusterBackend(cluster, tmp_path / "store"))
    assert not (tmp_path / "store" / PROGRESS).exists()


@pytest.mark.parametrize(
    "address, message",
    [
        ("local:0", "1 to 64 workers"),
        ("local:999", "1 to 64 workers"),
        ("nowhere", "is not an address"),
        ("tcp://", "is not an address"),
        ("", "is not an address"),
    ],
)
def test_bad_addresses_are_refused_before_anything_starts(address, message):
    with pytest.raises(ClusterError, match=message):
        parse_address(address)
    with pytest.raises(ClusterError, match=message):
        ClusterBackend(address, "store")


def test_an_unreachable_scheduler_is_one_error():
    start = time.monotonic()
    with pytest.raises(ClusterError, match="cannot reach the scheduler"):
        connect("tcp://127.0.0.1:9", timeout=2)
    assert time.monotonic() - start < 30


def test_missing_extra_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)
    with pytest.raises(
        ClusterUnavailable,
        match=r"install the cluster extra: \.venv/bin/pip install -e '\.\[cluster\]' in dicecup's checkout",
    ):
        ClusterBackend("local:2", "store")


def test_bad_block_and_backend_with_work_dir(cluster, tmp_path):
    with pytest.raises(ClusterError, match="8 to"):
        ClusterBackend(cluster, tmp_path, block=3)
    with pytest.raises(ClusterError, match="stop_after is a number of chunks"):
        ClusterBackend(cluster, tmp_path, stop_after=0)
    with pytest.raises(Exception, match="neither a work folder"):
        solve(Engine().variant("yacht"), backend=ClusterBackend(cluster, tmp_path / "s"), workdir=tmp_path / "w")


# ---------------------------------------------------------------------- the CLI


def test_cli_solve_on_a_local_cluster(cli_env, tmp_path):
    got = cli_run("solve", "-v", "yacht", "--cluster", "local:2", "--json", "-q")
    assert got.exit_code == 0, got.output
    out = json.loads(got.stdout)
    cli_schema("solve").validate(out)
    assert out["cluster"]["workers"] == 2 and out["cluster"]["chunks_computed"] == 12
    assert out["expected_score"] == pytest.approx(solve(Engine().variant("yacht")).expected_score, abs=0)
    assert not Path(out["cluster"]["store"]).exists()  # its own store is removed once the table is cached
    again = cli_run("solve", "-v", "yacht", "--cluster", "local:2")
    assert again.exit_code == 0 and "cluster: not used (the table was cached" in again.stdout


def test_cli_simulate_on_a_local_cluster(cli_env):
    args = ("simulate", "-v", "yacht", "-n", "2500", "--seed", "5", "--json", "-q")
    got, alone = cli_run(*args, "--cluster", "local:2"), cli_run(*args)
    assert got.exit_code == 0 and alone.exit_code == 0, got.output
    out = json.loads(got.stdout)
    cli_schema("simulate").validate(out)
    assert out.pop("cluster")["workers"] == 2 and out == json.loads(alone.stdout)


@pytest.mark.parametrize(
    "args, message",
    [
        (["--cluster", "nowhere"], "is not an address"),
        (["--cluster", "local:2", "--objective", "target:300"], "--cluster solves the mean and risk objectives"),
    ],
)
def test_cli_cluster_errors_are_one_line(cli_env, args, message):
    got = cli_run("solve", "-v", "yacht", *args)
    assert got.exit_code == 2 and message in got.output and "Traceback" not in got.output
