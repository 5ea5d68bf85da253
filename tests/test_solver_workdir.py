"""`solve(..., workdir=DIR)`: the table kept on disk while solving, and an interrupted solve resumed there."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest
from _solver_helpers import tiny_variant
from typer.testing import CliRunner

from dicecup import DicecupError, Engine
from dicecup.cli.app import app
from dicecup.solver import cache, dp, jit, solve
from dicecup.solver.workdir import PROGRESS, VALUES, WorkDirError


class Stop(Exception):
    """Raised from the progress callback: the solve interrupted between two layers."""


def _interrupt_after(layers: int):
    """A progress reporter that stops the solve once `layers` layers of its backward pass are reported."""

    class Interrupt:
        seen = 0
        phase = ""

        def start(self, label, total=None, unit="", seconds=None):
            self.phase = label

        def advance(self, n=1):
            if self.phase == "backward pass":
                self.seen += 1
                if self.seen > layers:
                    raise Stop

        def done(self):
            self.phase = ""

    return Interrupt()


def _layers_computed(monkeypatch) -> list[int]:
    """Count the layers the numpy kernel computes (one state_values call per batch: count distinct layers)."""
    calls: list[int] = []
    real = dp.state_values

    def counting(space, values, ctx, codes, prog, *objective):
        calls.append(int(codes[0] & space.full).bit_count())
        return real(space, values, ctx, codes, prog, *objective)

    monkeypatch.setattr(dp, "state_values", counting)
    return calls


@pytest.mark.parametrize("name", ["threshold", "banked"])
@pytest.mark.parametrize("kernel", ["numpy", "numba"])
def test_a_solve_on_disk_equals_the_one_in_memory_bit_for_bit(tmp_path, name, kernel):
    v = tiny_variant(tmp_path, name)
    plain = solve(v, kernel=kernel)
    on_disk = solve(v, kernel=kernel, workdir=tmp_path / "work")
    assert np.array_equal(plain.values, on_disk.values, equal_nan=True)
    assert on_disk.values.shape == np.load(tmp_path / "work" / VALUES, mmap_mode="r").shape
    record = json.loads((tmp_path / "work" / PROGRESS).read_text())
    assert sorted(map(int, record["done"])) == list(range(len(v.boxes) + 1))  # every layer recorded


def test_an_interrupted_solve_resumes_after_its_last_finished_layer(tmp_path, monkeypatch):
    v = tiny_variant(tmp_path, "banked")
    whole = solve(v, kernel="numpy")
    work = tmp_path / "work"
    computed = _layers_computed(monkeypatch)
    with pytest.raises(Stop):
        solve(v, kernel="numpy", workdir=work, progress=_interrupt_after(2))  # the full cards, then 2 layers
    done = {int(k) for k in json.loads((work / PROGRESS).read_text())["done"]}
    assert done == {4, 3}, done  # the full cards and the layer below; the stop came inside the next one
    assert set(computed) == {3, 2}
    computed.clear()
    resumed = solve(v, kernel="numpy", workdir=work)
    assert set(computed) == {2, 1, 0}  # only the layers not yet finished
    assert np.array_equal(whole.values, resumed.values, equal_nan=True)


def test_a_damaged_layer_or_another_solves_folder_is_refused(tmp_path):
    v = tiny_variant(tmp_path, "threshold")
    work = tmp_path / "work"
    solve(v, workdir=work)
    other = tiny_variant(tmp_path, "banked")
    with pytest.raises(WorkDirError, match="holds the work of another solve \\(tiny-threshold"):
        solve(other, workdir=work)
    table = np.load(work / VALUES, mmap_mode="r+")
    table[-2] += 1.0  # a value of the full cards' layer changes on disk
    table.flush()
    del table
    with pytest.raises(WorkDirError, match="damaged \\(the values of the layer with 4 boxes filled changed"):
        solve(v, workdir=work)
    (work / PROGRESS).write_text("{not json")
    with pytest.raises(WorkDirError, match="damaged \\(its progress record is not one this solver wrote\\)"):
        solve(v, workdir=work)


def test_a_file_or_a_fifo_is_no_work_folder(tmp_path):
    v = tiny_variant(tmp_path, "threshold")
    afile = tmp_path / "afile"
    afile.write_text("x")
    with pytest.raises(WorkDirError, match="is not a folder"):
        solve(v, workdir=afile)
    work = tmp_path / "work"
    work.mkdir()
    (work / VALUES).write_bytes(b"")
    os.mkfifo(work / PROGRESS)
    with pytest.raises(DicecupError, match="progress.json.*(FIFO|pipe)"):
        solve(v, workdir=work)  # refused at once, not blocked reading the pipe


def test_cli_work_dir_then_cached(tmp_path, monkeypatch):
    monkeypatch.setenv(cache.CACHE_ENV, str(tmp_path / "cache"))
    monkeypatch.setenv(cache.STATE_ENV, str(tmp_path / "state"))
    monkeypatch.setenv("DICECUP_DISABLE_PLUGIN_AUTOLOAD", "1")
    runner = CliRunner()
    out = runner.invoke(app, ["solve", "-v", "yacht", "--work-dir", str(tmp_path / "w"), "--json", "-q"])
    assert out.exit_code == 0, out.output
    want = solve(Engine(entry_points=False).variant("yacht")).expected_score
    assert json.loads(out.stdout)["expected_score"] == pytest.approx(want, abs=1e-9)
    assert (tmp_path / "w" / VALUES).exists()

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(jit, "layer_values", interrupted)  # Ctrl-C in the middle of the backward pass
    args = ["solve", "-v", "kismet", "--no-cache", "--work-dir", str(tmp_path / "k"), "-q"]
    out = runner.invoke(app, args)
    assert out.exit_code == 130
    assert (
        out.stderr.strip()
        == f"interrupted: run the same command again to resume from the layers kept in {tmp_path / 'k'}"
    )
