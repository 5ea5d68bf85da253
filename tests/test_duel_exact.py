"""The exact two-player game at scale (`simulate.duel_solve`): against a brute force written apart from the
engine, against the numpy reference (`simulate.duel`), float32 against float64, and a run killed and resumed."""

from __future__ import annotations

import itertools
import json
import math
import os
import signal
import subprocess
import sys
import time
from functools import cache
from pathlib import Path

import numpy as np
import pytest
from _solver_helpers import MICRO_DUEL

from dicecup import Engine
from dicecup.errors import DicecupError, TooLarge
from dicecup.simulate import distribution as dist_mod
from dicecup.solver import solve

pytestmark = pytest.mark.skipif(not dist_mod.AVAILABLE, reason="the exact duel needs numba")

# Yacht's boxes as this file's own brute force scores them (5 dice, 3 rolls)
SCORES = {
    "ones": lambda d: d.count(1),
    "twos": lambda d: 2 * d.count(2),
    "threes": lambda d: 3 * d.count(3),
    "fours": lambda d: 4 * d.count(4),
    "fives": lambda d: 5 * d.count(5),
    "sixes": lambda d: 6 * d.count(6),
    "choice": sum,
    "yacht": lambda d: 50 if len(set(d)) == 1 else 0,
}
YAML = {
    **{
        b: f"{{section: upper, pattern: {{kind: face, face: {f}}}, score: sum}}"
        for f, b in enumerate(SCORES, 1)
        if f <= 6
    },
    "choice": "{section: lower, pattern: always, score: total}",
    "yacht": "{section: lower, pattern: {kind: of_a_kind, n: 5}, score: 50}",
}


def mini_yacht(tmp: Path, boxes: tuple[str, ...]):
    text = "id: mini-yacht\ndice: {count: 5, faces: 6}\nturn: {rolls: 3}\nboxes:\n"
    text += "".join(f"  {b}: {YAML[b]}\n" for b in boxes)
    path = tmp / "mini.yaml"
    path.write_text(text, encoding="utf-8")
    return Engine(entry_points=False).load_file(path)


# ------------------------------------------------------------------ the brute force (numpy, no engine)

ROLLS = list(itertools.combinations_with_replacement(range(1, 7), 5))
KEEPS = [k for n in range(6) for k in itertools.combinations_with_replacement(range(1, 7), n)]


def _multiset_prob(dice: tuple[int, ...]) -> float:
    counts = [dice.count(f) for f in range(1, 7)]
    return math.factorial(len(dice)) / math.prod(math.factorial(c) for c in counts) / 6 ** len(dice)


@cache
def _dice_tables() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(probability of each first roll, K[keep, roll]: the chance that rerolling the rest of a keep gives the
    roll, subs[roll, j]: the keeps inside each roll, padded with the roll's own keep)."""
    roll_at = {r: i for i, r in enumerate(ROLLS)}
    first = np.array([_multiset_prob(r) for r in ROLLS])
    K = np.zeros((len(KEEPS), len(ROLLS)))
    for i, k in enumerate(KEEPS):
        for rest in itertools.combinations_with_replacement(range(1, 7), 5 - len(k)):
            K[i, roll_at[tuple(sorted(k + rest))]] += _multiset_prob(rest)
    keep_at = {k: i for i, k in enumerate(KEEPS)}
    subs = []
    for r in ROLLS:
        inside = {tuple(sorted(c)) for n in range(6) for c in itertools.combinations(r, n)}
        subs.append(sorted(keep_at[c] for c in inside))
    width = max(map(len, subs))
    return first, K, np.array([s + [s[-1]] * (width - len(s)) for s in subs])


def brute_duel(boxes: tuple[str, ...]):
    """V(mover's filled boxes, other's, lead) over every lead |d| <= L (L: all boxes' most points), by plain
    expectimax over the turn: each roll scored in its best open box or rerolled from its best keep."""
    first, K, subs = _dice_tables()
    nb = len(boxes)
    L = sum(max(SCORES[b](r) for r in ROLLS) for b in boxes)
    leads = np.arange(-L, L + 1)
    pts = np.array([[SCORES[b](r) for r in ROLLS] for b in boxes])  # [boxes, rolls]
    full = (1 << nb) - 1

    @cache
    def V(m: int, o: int) -> np.ndarray:
        if m == full and o == full:
            return np.where(leads > 0, 1.0, np.where(leads == 0, 0.5, 0.0))
        score = np.full((len(ROLLS), len(leads)), -np.inf)
        for b in range(nb):
            if m >> b & 1:
                continue
            nxt = V(o, m | 1 << b)
            for r in range(len(ROLLS)):
                after = -(leads + pts[b, r])  # the other's lead after this score
                inside = np.abs(after) <= L
                got = np.where(inside, 1.0 - nxt[np.clip(after + L, 0, 2 * L)], np.where(after < 0, 1.0, 0.0))
                score[r] = np.maximum(score[r], got)
        val = score
        for _ in range(2):  # two rerolls: the best of scoring now and of the best keep's expectation
            val = np.maximum(score, (K @ val)[subs].max(axis=1))
        return first @ val

    return V, L


def reachable(boxes: tuple[str, ...], mask: int) -> set[int]:
    """The points a card with these boxes filled can hold."""
    sums = {0}
    for b, name in enumerate(boxes):
        if mask >> b & 1:
            sums = {s + SCORES[name](r) for s in sums for r in ROLLS}
    return sums


@pytest.mark.parametrize("boxes", [("ones", "yacht"), ("twos", "sixes", "yacht")])
def test_every_reachable_position_matches_the_brute_force(tmp_path, boxes):
    from dicecup.simulate import duel_solve

    v = mini_yacht(tmp_path, boxes)
    sol = solve(v)
    got = duel_solve.solve(sol, dtype=np.float64, threads=1)
    V, L = brute_duel(boxes)
    assert got.first_player == pytest.approx(float(V(0, 0)[L]), abs=1e-12)
    codes = [layer[0] & ((1 << len(boxes)) - 1) for layer in sol.layer_states()]
    checked = 0
    for layer in got.plan.layers:
        for i, m in enumerate(codes[layer.km].tolist()):
            for j, o in enumerate(codes[layer.ko].tolist()):
                want = V(m, o)
                for d in {a - b for a in reachable(boxes, m) for b in reachable(boxes, o)}:
                    assert got.value(layer.km, layer.ko, i, j, d) == pytest.approx(want[d + L], abs=1e-12)
                    checked += 1
    assert checked > 100


def test_matches_the_numpy_reference_with_bonuses_and_two_roll_turns(tmp_path):
    from dicecup.simulate import duel, duel_solve, win

    path = tmp_path / "micro.yaml"
    path.write_text(MICRO_DUEL, encoding="utf-8")
    sol = solve(Engine(entry_points=False).load_file(path))
    want = duel.solve_duel(win.TurnOutcomes(sol)).first_player
    assert duel_solve.solve(sol, dtype=np.float64, threads=2).first_player == pytest.approx(want, abs=1e-12)


def test_float32_values_stay_within_1e_5_of_float64(tmp_path):
    from dicecup.simulate import duel_solve

    sol = solve(mini_yacht(tmp_path, ("ones", "twos", "threes", "yacht")))
    a = duel_solve.solve(sol, dtype=np.float32)
    b = duel_solve.solve(sol, dtype=np.float64)
    worst = max(float(np.abs(a.values[k].astype(np.float64) - b.values[k]).max()) for k in b.values)
    assert 0 < worst < 1e-5
    assert a.first_player == pytest.approx(b.first_player, abs=1e-6)


@pytest.mark.slow
def test_the_six_upper_boxes_duel_is_0_498201(tmp_path):
    from dicecup.simulate import duel_solve

    sol = solve(mini_yacht(tmp_path, ("ones", "twos", "threes", "fours", "fives", "sixes")))
    assert round(duel_solve.solve(sol).first_player, 6) == 0.498201


KILLED = """
import sys
from pathlib import Path
from dicecup import Engine
from dicecup.simulate import duel_solve
from dicecup.solver import solve
v = Engine(entry_points=False).load_file(Path(sys.argv[1]))
duel_solve.solve(solve(v), sys.argv[2], chunk_values=300, threads=1)
"""


def test_a_killed_run_resumes_from_its_last_finished_chunk_to_the_same_bytes(tmp_path):
    from dicecup.simulate import duel_solve

    boxes = ("ones", "twos", "threes", "fours")
    v = mini_yacht(tmp_path, boxes)
    sol = solve(v)
    whole = duel_solve.solve(sol, tmp_path / "whole", chunk_values=300, threads=1)
    work = tmp_path / "killed"
    proc = subprocess.Popen([sys.executable, "-c", KILLED, str(tmp_path / "mini.yaml"), str(work)])
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                done = sum(map(len, json.loads((work / "progress.json").read_text()).values()))
            except (OSError, ValueError):
                done = 0
            if done >= 6:
                break
            time.sleep(0.01)
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait()
    left = json.loads((work / "progress.json").read_text())
    total = sum(layer.chunks for layer in whole.plan.layers)
    assert 0 < sum(map(len, left.values())) < total, "the run was not cut in the middle"
    resumed = duel_solve.solve(sol, work, chunk_values=300, threads=2)
    assert resumed.first_player == whole.first_player
    for layer in whole.plan.layers:
        name = layer.name + ".bin"
        assert (work / name).read_bytes() == (tmp_path / "whole" / name).read_bytes(), name


def test_a_resumed_run_checks_its_chunks_and_its_game(tmp_path):
    from dicecup.simulate import duel_solve

    sol = solve(mini_yacht(tmp_path, ("ones", "yacht")))
    work = tmp_path / "work"
    duel_solve.solve(sol, work, chunk_values=50)
    other = solve(mini_yacht(tmp_path, ("twos", "yacht")))
    with pytest.raises(DicecupError, match="another duel"):
        duel_solve.solve(other, work, chunk_values=50)
    path = work / "L01-02.bin"
    raw = bytearray(path.read_bytes())
    raw[5] ^= 0xFF
    path.write_bytes(bytes(raw))
    with pytest.raises(DicecupError, match="no longer matches its digest"):
        duel_solve.solve(sol, work, chunk_values=50)
    (work / "progress.json").write_text("{not json")
    with pytest.raises(DicecupError, match="not a readable duel work folder"):
        duel_solve.solve(sol, work, chunk_values=50)


def test_what_does_not_fit_is_refused_before_starting_with_its_size(tmp_path, engine):
    from dicecup.simulate import duel_solve
    from dicecup.solver.cache import load_or_solve

    sol, _ = load_or_solve(engine.variant("yacht"))
    p = duel_solve.plan(sol)
    assert p.positions == 5_200_300  # C(24, 12) + C(24, 13): every pair of cards at most one box apart
    with pytest.raises(TooLarge, match=r"1,843,575,612 values .*6\.87 GiB"):
        duel_solve.solve(sol)
    assert not os.listdir(tmp_path)


# ------------------------------------------------------------------ the command line


def test_the_command_prints_the_first_players_chance_and_its_json(tmp_path, cli_env):
    from _cli_helpers import check, json_of

    mini_yacht(tmp_path, ("ones", "twos", "yacht"))
    path = str(tmp_path / "mini.yaml")
    data = json_of("duel", "-v", path, "--work-dir", str(tmp_path / "work"))
    check("duel", data)
    V, L = brute_duel(("ones", "twos", "yacht"))
    assert data["first_player"] == pytest.approx(float(V(0, 0)[L]), abs=1e-6)
    assert data["layers"][0] == {"mover": 3, "other": 3, "lead_bound": 0}
    again = json_of("duel", "-v", path, "--work-dir", str(tmp_path / "work"))  # every chunk read back, none solved
    assert again["first_player"] == data["first_player"]


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["-v", "yacht"], "6.87 GiB of values is above"),
        (["-v", "yacht", "--precision", "half"], "give float32 or float64"),
        (["-v", "nosuch"], "unknown variant"),
        (["-v", "yacht", "--threads", "0"], "--threads"),
    ],
)
def test_the_command_refuses_bad_input_with_one_line(args, said, cli_env):
    from _cli_helpers import cli_fails

    assert said in cli_fails("duel", *args)


def test_the_command_refuses_a_file_as_work_folder(tmp_path, cli_env):
    from _cli_helpers import cli_fails

    (tmp_path / "file").write_text("x")
    assert "not a folder" in cli_fails("duel", "-v", "yacht", "--work-dir", str(tmp_path / "file"))


@pytest.mark.slow
def test_fixed_policies_are_valued_exactly_against_the_layered_optimum(tmp_path):
    """The layered values as one array drive `duel.evaluate`: the optimum's own moves give back its value, and
    neither bot:win nor bot:optimal does better against it, from either seat."""
    from dicecup.simulate import duel, duel_solve, win

    sol = solve(mini_yacht(tmp_path, ("ones", "twos", "yacht")))
    got = duel_solve.solve(sol, dtype=np.float64)
    planner = win.WinPlanner(sol, win.build_table(sol))
    dense = got.dense(planner)
    assert duel.evaluate(planner, dense, "exact", "exact") == pytest.approx(got.first_player, abs=1e-12)
    for other in ("win", "optimal"):
        assert duel.evaluate(planner, dense, "exact", other) >= got.first_player - 1e-12
        assert duel.evaluate(planner, dense, other, "exact") <= got.first_player + 1e-12


def test_a_local_dask_cluster_writes_the_bytes_of_one_process(tmp_path):
    pytest.importorskip("distributed", reason="the cluster extra (dask distributed) is not installed")
    from dicecup.cluster import connect
    from dicecup.cluster.duel import solve_on
    from dicecup.simulate import duel_solve

    sol = solve(mini_yacht(tmp_path, ("ones", "twos", "threes")))
    one = duel_solve.solve(sol, tmp_path / "one", chunk_values=200, threads=1)
    with connect("local:2") as cluster:
        part = solve_on(cluster, sol, tmp_path / "dask", chunk_values=200, stop_after=4)
        assert sum(map(len, json.loads((tmp_path / "dask" / "progress.json").read_text()).values())) == 4
        got = solve_on(cluster, sol, tmp_path / "dask", chunk_values=200)
    assert part.plan == got.plan and got.first_player == one.first_player
    for layer in one.plan.layers:
        name = layer.name + ".bin"
        assert (tmp_path / "dask" / name).read_bytes() == (tmp_path / "one" / name).read_bytes(), name
