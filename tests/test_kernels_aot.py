"""The kernels built ahead of time at install (`numeric.aot`), and how a process picks its kernels.

The install of the README builds `dicecup.numeric._kernels`; a process that solves or
advises then runs it without importing numba, and gets the same bits as numba's
compile of the same functions and as the numpy reference.
"""

from __future__ import annotations

import importlib
import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest
from _solver_helpers import tiny_variant

from dicecup.numeric import compiled
from dicecup.numeric.dice import DiceGraph
from dicecup.numeric.records import TurnArrays
from dicecup.numeric.reference import plain_pick
from dicecup.numeric.turn import W

needs_aot = pytest.mark.skipif(compiled.MODE != "aot", reason="the kernels were not built ahead of time here")


def _fold_args(dice: int = 2, faces: int = 3) -> tuple:
    graph = DiceGraph(dice, faces)
    rolls, rows = graph.n_rolls, len(graph.multisets)
    pick = plain_pick(2)
    rng = np.random.default_rng(1)
    arrays = TurnArrays(
        np.empty((rolls, W)), np.empty((rows, W)), np.empty((rows, W)), np.empty((0, 0, W)), np.empty((0, rolls, W))
    )
    return rng.normal(size=(2, rolls, W)), pick, pick, graph.arrays, arrays


@pytest.mark.skipif(
    shutil.which("cc") is None or os.environ.get(compiled.MODE_ENV, "") not in ("", "aot"),
    reason="no C compiler to build the kernels with, or a kernel mode forced",
)
def test_the_install_built_the_kernels_and_uses_them():
    """Where the install could build them (a C compiler), this process runs them: nothing to compile."""
    assert compiled.aot_module() is not None
    assert compiled.MODE == "aot"


@needs_aot
def test_a_solve_and_advice_import_neither_numba_nor_llvm(tmp_path):
    """What made a first run slow and a solve 90 MB larger is not loaded at all."""
    tiny_variant(tmp_path, "threshold")
    path = tmp_path / "tiny-threshold.yaml"
    code = f"""
import json, sys
from dicecup import Engine, GameState
from dicecup.solver import advise_state, solve
v = Engine(entry_points=False).load_file({str(path)!r})
solution = solve(v)
state = GameState.new(v, ["a"]).roll(dice=[1] * v.dice)
advise_state(solution, state)
print(json.dumps([m for m in ("numba", "llvmlite") if m in sys.modules]))
"""
    env = dict(os.environ, DICECUP_CACHE_DIR=str(tmp_path / "cache"))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert json.loads(out.stdout.splitlines()[-1]) == []


@needs_aot
@pytest.mark.parametrize("name", ["threshold", "banked", "flags"])
def test_ahead_of_time_and_numba_kernels_give_the_same_bits(tmp_path, name):
    """The same functions, compiled twice (at install, and by numba now): equal value tables."""
    tiny_variant(tmp_path, name)
    path = tmp_path / f"tiny-{name}.yaml"
    code = f"""
import sys
import numpy as np
from dicecup import Engine
from dicecup.numeric import compiled
from dicecup.solver import solve
assert compiled.MODE == sys.argv[1], compiled.MODE
np.save(sys.argv[2], np.asarray(solve(Engine(entry_points=False).load_file({str(path)!r}), kernel="numba").values))
"""
    tables = {}
    for mode in ("aot", "jit"):
        env = dict(os.environ, DICECUP_CACHE_DIR=str(tmp_path / f"cache-{mode}"), DICECUP_KERNELS=mode)
        out = tmp_path / f"{mode}.npy"
        done = subprocess.run([sys.executable, "-c", code, mode, str(out)], env=env, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        tables[mode] = np.load(out)
    assert tables["aot"].tobytes() == tables["jit"].tobytes()


@needs_aot
def test_wrong_arrays_are_refused_before_they_reach_the_built_kernel():
    """A built kernel has one signature: another dtype, rank or layout is a TypeError, not a crash."""
    turn_block = compiled.aot_kernel("turn_block")
    good = _fold_args()
    turn_block(*good)  # the right types pass
    cases = {
        0: good[0].astype(np.float32),  # dtype
        1: good[1].reshape(1, -1),  # rank
        4: good[4]._replace(val=np.empty((good[4].val.shape[0], 2 * W))[:, ::2]),  # not contiguous, in a record
        3: tuple(good[3]),  # a plain tuple for the record
    }
    for at, bad in cases.items():
        args = list(good)
        args[at] = bad
        with pytest.raises(TypeError, match=f"turn_block argument {at}"):
            turn_block(*args)
    with pytest.raises(TypeError, match="arguments"):
        turn_block(*good[:-1])


def test_a_pinned_record_is_checked_once_and_then_passes_unwalked(monkeypatch):
    """`pin` checks a record against a kernel argument now (a wrong one is a TypeError naming the field);
    the checks that pinned it then let it pass without walking its fields again (the advisor's layer of every
    class, passed with each new card), and other checks still walk it: what passed is the holder's, not the
    process's."""
    from dicecup.numeric.records import signatures

    layer = signatures()["card_f8"][2]
    bad = layer._replace(rows=layer.rows._replace(points=layer.rows.points.astype(np.float32)))
    checks = compiled.RecordChecks()
    with pytest.raises(TypeError, match=r"card_f8 argument 2\.rows\.points"):
        checks.pin(bad, "card_f8", 2)
    assert checks.pin(layer, "card_f8", 2) is layer and checks.remembers(layer)
    walked: list[object] = []
    real = compiled.RecordChecks.fits
    monkeypatch.setattr(
        compiled.RecordChecks, "fits", lambda self, arg, like: walked.append(arg) or real(self, arg, like)
    )
    assert checks.fits(layer, layer) and walked == [layer]  # known: none of its fields looked at
    walked.clear()
    assert not checks.fits(bad, layer) and len(walked) > 1  # refused, never pinned: walked, and unfit
    walked.clear()
    other = compiled.RecordChecks()
    assert other.fits(layer, layer) and len(walked) > 1 and not other.remembers(bad)


def test_pinned_records_are_bounded():
    """A holder keeps its last `PINNED_KEPT` pinned records (one per variant advised), not every one."""
    from dicecup.numeric.records import signatures

    layer = signatures()["card_f8"][2]
    checks = compiled.RecordChecks()
    made = [checks.pin(layer._replace(turn=layer.turn._replace(rolls=k)), "card_f8", 2) for k in range(20)]
    assert [checks.remembers(r) for r in made] == [False] * (20 - compiled.PINNED_KEPT) + [True] * compiled.PINNED_KEPT


@pytest.mark.parametrize(
    ("arg", "like", "fits"),
    [
        (3, 1, True), (np.int64(3), 1, True), (np.int32(3), 1, True), (True, 1, False), (np.bool_(True), 1, False),
        (3.0, 1, False), ("3", 1, False), (True, False, True), (np.bool_(False), False, True), (1, False, False),
    ],
)  # fmt: skip
def test_a_scalar_argument_fits_its_kind_only(arg, like, fits):
    """An integer argument takes any integer but a bool, and a bool argument only a bool (numba would read
    one as the other)."""
    assert compiled.RecordChecks().fits(arg, like) is fits


def test_a_record_passed_on_every_call_outlives_a_stream_of_one_off_records(monkeypatch):
    """The records remembered as fitting drop the least recently passed first: a record every call passes
    (the dice graph, the state index) is not walked again however many one-off records pass between."""
    from dicecup.numeric.records import CardArrays, signatures

    like = signatures()["card_f8"][0]
    checks = compiled.RecordChecks()
    steady = CardArrays(1, np.zeros(1, np.int64), np.zeros(1, np.int64), np.zeros(1, np.int64), 0)
    assert checks.fits(steady, like)
    walked: list[object] = []
    real = compiled.RecordChecks.fits
    monkeypatch.setattr(
        compiled.RecordChecks, "fits", lambda self, arg, like: walked.append(arg) or real(self, arg, like)
    )
    for code in range(3 * compiled.RECORDS_KEPT):
        one_off = steady._replace(code=code, prog=np.zeros(1, np.int64))
        assert checks.fits(one_off, like) and checks.fits(steady, like)
    assert not any(arg is steady.prog for arg in walked)  # its fields never looked at again
    assert checks.recent() == compiled.RECORDS_KEPT


def test_a_large_record_is_not_remembered_even_when_its_arrays_are_in_nested_records():
    """Only small records are remembered as fitting (each is held while remembered): a layer's record, whose
    arrays sit in the records nested in it, counts their bytes, so that a solve does not hold its layers."""
    from dicecup.numeric.records import signatures

    like = signatures()["layer_f8"][0]
    checks = compiled.RecordChecks()
    rows = like.rows._replace(points=np.zeros((1 << 18, 1)))  # 2 MiB in a nested record
    big, small = like._replace(rows=rows), like._replace(rows=like.rows._replace(points=np.zeros((2, 1))))
    assert checks.fits(big, like) and checks.fits(small, like)
    assert not checks.remembers(big) and not checks.remembers(big.rows)
    assert checks.remembers(small)


def test_a_build_for_a_cpu_with_more_instructions_is_not_loaded(monkeypatch):
    """The module is tuned for the CPU it was built on: where this one lacks one of its flags, numba compiles."""
    _refused_with(monkeypatch, compiled, "cpu_flags", lambda: frozenset({"fpu"}))


def _refused_with(monkeypatch, target, name: str, value) -> None:
    """The build here loads, is not loaded with target.name set to value, and loads again once it is undone."""
    if compiled.aot_module() is None:
        pytest.skip("the kernels were not built ahead of time here")
    try:
        compiled.aot_module.cache_clear()
        monkeypatch.setattr(target, name, value)
        assert compiled.aot_module() is None
    finally:
        monkeypatch.undo()
        compiled.aot_module.cache_clear()
    assert compiled.aot_module() is not None


def test_a_build_for_other_argument_types_is_not_loaded(monkeypatch):
    """A build made before a kernel's records changed (an older install) would read today's records with
    yesterday's layout: the digest of the argument types written beside it must match, else numba compiles."""
    from dicecup.numeric import records

    if compiled.aot_module() is None:
        pytest.skip("the kernels were not built ahead of time here")
    beside = importlib.import_module(compiled.AOT_MODULE + "_cpu")
    assert beside.SIGNATURES == records.signature_digest()  # the build here is today's
    _refused_with(monkeypatch, records, "signature_digest", lambda: "0" * 16)


def test_the_digest_follows_the_records_layout(monkeypatch):
    """A field added to a record (as `CardArrays.state` was) changes the digest; the same types give the same."""
    from dicecup.numeric import records

    before = records.signature_digest()
    assert records.signature_digest() == before
    real = records.core_signatures
    monkeypatch.setattr(records, "core_signatures", lambda: real() | {"card_f8": (*real()["card_f8"], 0)})
    assert records.signature_digest() != before


@pytest.mark.parametrize(("asked", "numba_here", "built", "mode"), [
    ("", True, True, "aot"), ("", True, False, "jit"), ("", False, False, "numpy"), ("", False, True, "aot"),
    ("jit", True, True, "jit"), ("jit", False, True, "aot"), ("numpy", True, True, "numpy"),
    ("aot", True, False, "jit"), ("nonsense", True, True, "aot"),
])  # fmt: skip
def test_the_kernel_mode_a_process_picks(asked, numba_here, built, mode):
    """$DICECUP_KERNELS forces a mode that can run; otherwise the build, then numba, then numpy."""
    environ = {compiled.MODE_ENV: asked}
    assert compiled.pick_mode(environ, numba_here, lambda: object() if built else None) == mode


@pytest.mark.parametrize(("old", "new", "mode"), [
    ("numpy", "", "numpy"), ("numba", "", "aot"), ("numpy", "jit", "jit"), ("numba", "numpy", "numpy"),
])  # fmt: skip
def test_the_solvers_old_switch_still_picks_the_mode(old, new, mode):
    """$DICECUP_SOLVER_KERNEL, deprecated, is read as the one mode where $DICECUP_KERNELS is not set (with a
    warning saying what to set instead), and ignored where it is."""
    environ = {compiled.LEGACY_ENV: old, compiled.MODE_ENV: new}
    if new:
        assert compiled.pick_mode(environ, True, object) == mode
    else:
        with pytest.warns(DeprecationWarning, match=compiled.MODE_ENV):
            assert compiled.pick_mode(environ, True, object) == mode


@needs_aot
@pytest.mark.parametrize(("at", "field"), [(0, "prog"), (2, "rows.points"), (5, "")])
def test_card_turn_checks_what_it_is_given(at, field):
    """`card_turn` allocates the kernel's scratch itself (not checked again); any argument it is given of
    another type is a TypeError naming it, before the kernel runs."""
    from dicecup.numeric import card
    from dicecup.numeric.records import signatures

    args = list(signatures()["card_f8"][:6])
    if at == 0:
        args[0] = args[0]._replace(prog=args[0].prog.astype(np.int32))
    elif at == 2:
        rows = args[2].rows
        args[2] = args[2]._replace(rows=rows._replace(points=rows.points.astype(np.float32)))
    else:
        args[5] = np.zeros((1, 1), dtype=np.float16)  # values neither float64 nor float32
    where = f"card_f8 argument {at}" + (f".{field}" if field else "")
    with pytest.raises(TypeError, match=where.replace(".", r"\.")):
        card.card_turn(*args)


def test_a_build_from_other_sources_is_not_loaded(monkeypatch):
    """A kernel edited after the build (a checkout changed, the build not run again) would run yesterday's code
    silently: the digest of the sources written beside the build must match them, else numba compiles."""
    if compiled.aot_module() is None:
        pytest.skip("the kernels were not built ahead of time here")
    beside = importlib.import_module(compiled.AOT_MODULE + "_cpu")
    assert {"layer.py", "turn.py", "play.py"} <= set(beside.MODULES)
    assert beside.SOURCES == compiled.sources_digest(beside.MODULES)  # the build here is from today's sources
    _refused_with(monkeypatch, compiled, "sources_digest", lambda names: "0" * 16)


def test_the_build_lists_the_kernels_sources():
    """What the build records: the kernel modules and the folder's modules they import, not the build's own."""
    from dicecup.numeric import aot

    names = aot.kernel_modules()
    assert {"layer.py", "turn.py", "play.py", "duel.py", "scoreclass.py", "records.py"} <= set(names)
    assert not {"aot.py", "__init__.py", "_kernels_cpu.py"} & set(names)
    assert all(n.endswith(".py") for n in names)
    digest = compiled.sources_digest(names)
    assert digest == compiled.sources_digest(list(reversed(names)))  # the order given does not matter
    assert digest != compiled.sources_digest([n for n in names if n != "layer.py"])
