"""Solver time, peak memory and table size for every built-in variant, and how solving scales with the card.

    .venv/bin/python tests/benchmarks/bench_variants.py [--quick] [--repeats 1] [--max-states 5000000]

Every solve runs in a fresh child process (this script with `--child`), so its
peak RSS is its own: the parent reads it from `os.wait4` on the child. Each
child first solves `yacht` once, untimed, so that numba's compiled kernel is
loaded (or compiled, when its on-disk cache is cold) before the timed solves;
the JIT column says which it was, from numba's own cache counters ("ahead-of-time
build" where the kernels were built at install and nothing is compiled). The peak RSS
is the child's whole life (interpreter, numba and the warm-up included); the
"+MiB" column is how far the timed solves raised it above the peak after the
warm-up. Seconds are the median of the timed solves (wall clock, `solve` from
the rules to the values, numba kernel by default); "DP s" is the part after
the rules are modelled and the states found (from `solve`'s first "solve"
progress report on); "model s" and "search s" time those two steps on their
own, as `solve` runs them (`RuleModel` with its scores and clamps, then
`StateSpace`), in the same child before each timed solve; "S<DP" says whether the
search alone costs less than the DP, "M+S<DP" whether model and search together
do. The table size is that of the signed file `dicecup.solver.cache.save`
writes (into a temporary folder, signed with a throw-away key: neither the
user's cache nor their key is touched).

1. Every built-in variant (and Yahtzee's other joker modes, Maxi Yatzy without
   saved rolls and tests/variants/seven.yaml): states, seconds, peak RSS,
   expected score, table bytes; a variant the solver refuses (`check_solvable`)
   or whose state count is above `--max-states` is a row saying why.
2. Growing cards written as variant YAML (temporary files): (a) dice 2..6 (6
   faces) and (b) faces 4..10 (5 dice) on one small card, fitted as a power law
   seconds ~ a * multisets^k with multisets = C(dice + faces, dice); (c) 4..13
   boxes of the Yahtzee card without bonuses (2^boxes states) and (d) 6..13 of
   them with its upper bonus, each fitted as log(seconds) against boxes: a
   growth factor per added box; (e) 8..13 of them with the upper bonus and a
   second threshold bonus on three and four of a kind (two groups of totals).

The default run takes about 4 minutes on 2 busy cores; `--quick` (a lower
state limit for the built-ins, fewer card sizes, one solve per card) about 2.
A child that fails or times out is a row with its error, never a traceback.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import math
import os
import signal
import statistics
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any, NamedTuple

WARMUP = "yacht"
RESULT = "RESULT "  # prefix of the child's one line of JSON on stdout

# The Yahtzee card in card order, without bonuses or joker: the first n boxes make the n-box card.
CARD = [
    ("ones", "{section: upper, pattern: {kind: face, face: 1}, score: sum}"),
    ("twos", "{section: upper, pattern: {kind: face, face: 2}, score: sum}"),
    ("threes", "{section: upper, pattern: {kind: face, face: 3}, score: sum}"),
    ("fours", "{section: upper, pattern: {kind: face, face: 4}, score: sum}"),
    ("fives", "{section: upper, pattern: {kind: face, face: 5}, score: sum}"),
    ("sixes", "{section: upper, pattern: {kind: face, face: 6}, score: sum}"),
    ("three_of_a_kind", "{pattern: {kind: of_a_kind, n: 3}, score: total}"),
    ("four_of_a_kind", "{pattern: {kind: of_a_kind, n: 4}, score: total}"),
    ("full_house", "{pattern: {kind: groups, sizes: [3, 2]}, score: 25}"),
    ("small_straight", "{pattern: {kind: straight, length: 4}, score: 30}"),
    ("large_straight", "{pattern: {kind: straight, length: 5}, score: 40}"),
    ("yahtzee", "{pattern: {kind: of_a_kind, n: 5}, score: 50}"),
    ("chance", "{pattern: always, score: total}"),
]


def small_card(dice: int) -> list[tuple[str, str]]:
    """The card of the dice and faces series: valid for 2+ dice and 4+ faces; only `alike` follows the dice."""
    return [
        *CARD[:4],
        ("pair", "{pattern: {kind: of_a_kind, n: 2}, score: sum}"),
        ("alike", f"{{pattern: {{kind: of_a_kind, n: {dice}}}, score: 50}}"),
        ("chance", "{pattern: always, score: total}"),
    ]


UPPER_BONUS = "  upper_bonus: {name: Upper bonus, kind: threshold, section: upper, at_least: 63, points: 35}"
KINDS_BONUS = (
    "  kinds_bonus: {name: Kinds bonus, kind: threshold, boxes: [three_of_a_kind, four_of_a_kind], "
    "at_least: 45, points: 20}"
)
# rows of table 1 besides the built-in variants at their defaults: (variant or file, options)
EXTRA = [
    ("yahtzee", {"joker": "forced"}),
    ("yahtzee", {"joker": "none"}),
    ("maxi-yatzy", {"saved_rolls": False}),
    (str(Path(__file__).resolve().parents[1] / "variants" / "seven.yaml"), {}),
]


def variant_yaml(vid: str, dice: int, faces: int, boxes: list[tuple[str, str]], bonus: int = 0) -> str:
    """A variant file: these dice and boxes, three rolls a turn; `bonus` 1: Yahtzee's upper bonus (35 at 63),
    2: that and a second threshold bonus on three and four of a kind (20 at 45)."""
    lines = [f"id: {vid}", f"name: {vid}", f"dice: {{count: {dice}, faces: {faces}}}", "turn: {rolls: 3}", "boxes:"]
    lines += [f"  {bid}: {body}" for bid, body in boxes]
    if bonus:
        lines += ["bonuses:", UPPER_BONUS] + ([KINDS_BONUS] if bonus > 1 else [])
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------- the child


def _jit_counts() -> tuple[int, int]:
    """(cache hits, cache misses = compilations) summed over dicecup's numba kernels so far."""
    from numba.core.dispatcher import Dispatcher

    seen: dict[int, Any] = {}
    for name, module in list(sys.modules.items()):
        if name.startswith("dicecup") and module is not None:
            for value in vars(module).values():
                if isinstance(value, Dispatcher):
                    seen[id(value)] = value
    hits = sum(sum(d.stats.cache_hits.values()) for d in seen.values())
    misses = sum(sum(d.stats.cache_misses.values()) for d in seen.values())
    return hits, misses


def child(spec: dict[str, Any], out: dict[str, Any]) -> None:
    """Compile, check, warm up, solve `repeats` times, save the table; fills `out` for the parent as it goes
    (`stage` says how far it got)."""
    import resource
    import secrets

    from dicecup import Engine
    from dicecup.solver import SolverError, StateSpaceTooLarge, cache, check_solvable, solve
    from dicecup.solver.rules import RuleModel
    from dicecup.solver.space import StateSpace, state_bound

    out["stage"] = "compile"
    engine = Engine(entry_points=False)
    options = spec.get("options") or None
    if "path" in spec:
        variant = engine.load_file(spec["path"], options=options)
    else:
        variant = engine.variant(spec["variant"], options=options)
    out.update(dice=variant.dice, faces=variant.faces, boxes=len(variant.boxes))
    kernel = spec["kernel"]

    def refuse(exc: SolverError) -> None:
        out["refused"] = str(exc)
        if isinstance(exc, StateSpaceTooLarge):
            out["size"], out["limit"] = exc.states, exc.limit

    out["stage"] = "check"
    try:
        check_solvable(variant)
    except SolverError as exc:
        refuse(exc)
        return
    out["stage"] = "warm-up"
    if kernel == "numba":
        from dicecup.numeric import compiled

        out["kernel_mode"] = compiled.MODE  # "aot": the ahead-of-time build, nothing for numba to compile
        start = time.perf_counter()
        solve(engine.variant(WARMUP), kernel=kernel)
        out["warmup_seconds"] = time.perf_counter() - start
        out["jit_warmup"] = _jit_counts()
    out["rss_warm_kib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    out["stage"] = "solve"
    times, dp_times = [], []
    dp_start: list[float] = []

    def progress(phase: str, done: int, total: int) -> None:
        # the first "solve" report comes once the rules are modelled and the states found: the DP starts
        if phase == "solve" and not dp_start:
            dp_start.append(time.perf_counter())

    model_times, search_times = [], []
    for _ in range(spec["repeats"]):
        try:  # the two steps before the DP, on their own, as `solve` runs them
            start = time.perf_counter()
            model = RuleModel(variant)
            model.score_groups  # noqa: B018
            model.clamps  # noqa: B018
            model_times.append(time.perf_counter() - start)
            limit = spec["max_states"]
            start = time.perf_counter()
            StateSpace(model, None if state_bound(model) <= limit else limit)
            search_times.append(time.perf_counter() - start)
            del model
        except SolverError as exc:
            refuse(exc)
            return
        dp_start.clear()
        start = time.perf_counter()
        try:
            solution = solve(variant, max_states=spec["max_states"], progress=progress, kernel=kernel)
        except SolverError as exc:
            refuse(exc)
            return
        end = time.perf_counter()
        times.append(end - start)
        dp_times.append(end - (dp_start[0] if dp_start else start))
    if kernel == "numba":
        out["jit_timed"] = _jit_counts()
    out.update(times=times, dp_times=dp_times, states=solution.states, expected=solution.expected_score)
    out.update(model_times=model_times, search_times=search_times)
    if spec.get("table", True):
        out["stage"] = "save"
        with tempfile.TemporaryDirectory(prefix="bench-table-") as tmp:
            path = cache.save(solution, Path(tmp) / "table.npz", secret=secrets.token_bytes(cache.KEY_BYTES))
            out["table_bytes"] = os.path.getsize(path)
    out["stage"] = "done"


def child_main(raw: str) -> int:
    result: dict[str, Any] = {}
    code = 0
    try:
        child(json.loads(raw), result)
    except BaseException as exc:  # noqa: B036 - the parent gets every failure as text, MemoryError included
        result["error"] = f"{type(exc).__name__}: {exc}"
        result["trace"] = traceback.format_exc()[-2000:]
        code = 1
    print(RESULT + json.dumps(result), flush=True)
    return code


# ---------------------------------------------------------------------- the parent


def run_child(spec: dict[str, Any], timeout: float) -> dict[str, Any]:
    """Run one child; its result with `peak_kib` (its own ru_maxrss from wait4) and `wall`, or an `error`."""
    try:
        return _run_child(spec, timeout)
    except Exception as exc:  # a child that could not even be started is a row too
        return {"error": f"could not run the child: {type(exc).__name__}: {exc}"}


def _run_child(spec: dict[str, Any], timeout: float) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="bench-child-") as tmp:
        out_path, err_path = os.path.join(tmp, "out"), os.path.join(tmp, "err")
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
        actions = [
            (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
            (os.POSIX_SPAWN_OPEN, 1, out_path, flags, 0o600),
            (os.POSIX_SPAWN_OPEN, 2, err_path, flags, 0o600),
        ]
        argv = [sys.executable, os.path.abspath(__file__), "--child", json.dumps(spec)]
        start = time.perf_counter()
        pid = os.posix_spawn(sys.executable, argv, os.environ, file_actions=actions)
        timed_out, done = False, 0
        try:
            while True:
                done, status, usage = os.wait4(pid, os.WNOHANG)
                if done:
                    break
                if time.perf_counter() - start > timeout:
                    os.kill(pid, signal.SIGKILL)
                    done, status, usage = os.wait4(pid, 0)
                    timed_out = True
                    break
                time.sleep(0.05)
        finally:
            if not done:  # interrupted here (Ctrl-C): the child goes too
                os.kill(pid, signal.SIGKILL)
                os.wait4(pid, 0)
        wall = time.perf_counter() - start
        stdout = Path(out_path).read_text(errors="replace")
        stderr = Path(err_path).read_text(errors="replace")
    lines = [ln for ln in stdout.splitlines() if ln.startswith(RESULT)]
    result: dict[str, Any] = {}
    if lines:
        try:
            result = json.loads(lines[-1][len(RESULT) :])
        except ValueError:
            result = {"error": "the child's result line is not JSON"}
    if timed_out:
        result = {"error": f"timed out after {timeout:.0f} s (killed)"}
    elif not lines:
        code = os.waitstatus_to_exitcode(status)
        how = f"killed by signal {-code}" if code < 0 else f"exit code {code}"
        tail = stderr.strip().splitlines()[-1:] or ["no output"]
        result = {"error": f"the child died ({how}): {tail[0][:300]}"}
    result["peak_kib"] = usage.ru_maxrss  # KiB on Linux
    result["wall"] = wall
    return result


def _mib(kib: float) -> str:
    return f"{kib / 1024:.0f}"


def _jit_note(r: dict[str, Any]) -> str:
    if "jit_warmup" not in r:
        return "n/a"
    hits, misses = r["jit_warmup"]
    _, timed_misses = r.get("jit_timed", r["jit_warmup"])
    if misses:
        note = f"cold: the warm-up compiled ({r['warmup_seconds']:.0f} s)"
    elif r.get("kernel_mode") == "aot":
        note = "ahead-of-time build"
    else:
        note = "warm" if hits else "unknown (no numba cache counts)"
    if timed_misses > misses:
        note += f"; compiled {timed_misses - misses} more while timed"
    return note


def _why(r: dict[str, Any]) -> str:
    """A failed or refused row's reason, on one line."""
    if "error" in r:
        where = f" in {r['stage']}" if "stage" in r else ""
        text = f"FAILED{where}: {r['error']}"
    else:
        text = f"refused: {r['refused']}"
    return " ".join(text.split())


def _peak(r: dict[str, Any]) -> str:
    """The child's peak RSS, where it means something: not for a variant refused before solving."""
    return "-" if r.get("stage") in ("compile", "check") and "error" not in r else _mib(r["peak_kib"])


def _label(vid: str, options: dict[str, Any]) -> str:
    name = Path(vid).name if vid.endswith(".yaml") else vid
    return name + "".join(f" {k}={str(v).lower()}" for k, v in options.items())


def _phases(r: dict[str, Any]) -> str:
    """Median seconds of the rules model and of the state search; whether the search costs less than the DP
    (the issue's target), and whether model and search together do."""
    model, search = statistics.median(r["model_times"]), statistics.median(r["search_times"])
    dp = statistics.median(r["dp_times"])
    return f"{model:7.3f} {search:8.3f} {'<' if search < dp else '>=':>4} {'<' if model + search < dp else '>=':>6}"


def builtin_table(ids: list[str], args: argparse.Namespace, extra: bool = True) -> None:
    print(f"\n1. Built-in variants (kernel {args.kernel}, median of {args.repeats}, limit {args.max_states:,} states)")
    print(
        f"{'variant':28} {'states':>10} {'seconds':>8} {'model s':>7} {'search s':>8} {'S<DP':>4} {'M+S<DP':>6} {'DP s':>7} "
        f"{'peak MiB':>8} {'+MiB':>6} {'expected':>10} {'table bytes':>11}  JIT"
    )
    rows: list[tuple[str, dict[str, Any]]] = [(vid, {}) for vid in ids] + (EXTRA if extra else [])
    for vid, options in rows:
        key = "path" if vid.endswith(".yaml") else "variant"
        spec = {key: vid, "options": options, "repeats": args.repeats, "max_states": args.max_states}
        r = run_child({**spec, "kernel": args.kernel}, args.timeout)
        label = _label(vid, options)
        if "times" not in r:
            dash = "-"
            print(
                f"{label:28} {dash:>10} {dash:>8} {dash:>7} {dash:>8} {dash:>4} {dash:>6} {dash:>7} {_peak(r):>8} {dash:>6} "
                f"{dash:>10} {dash:>11}  {_why(r)}"
            )
            continue
        grew = max(0, r["peak_kib"] - r["rss_warm_kib"])
        print(
            f"{label:28} {r['states']:>10,} {statistics.median(r['times']):8.2f} {_phases(r)} "
            f"{statistics.median(r['dp_times']):7.2f} {_mib(r['peak_kib']):>8} {_mib(grew):>6} {r['expected']:10.4f} "
            f"{r.get('table_bytes', 0):>11,}  {_jit_note(r)}",
            flush=True,
        )


class Point(NamedTuple):
    """One solved card of a scaling series (median seconds: the whole solve, and its DP part)."""

    dice: int
    faces: int
    boxes: int
    states: int
    seconds: float
    dp: float

    @property
    def multisets(self) -> int:
        return math.comb(self.dice + self.faces, self.dice)


def _fit(x: list[float], y: list[float]) -> tuple[float, float, float]:
    """Least-squares line y = slope * x + icpt (numpy.polyfit): (slope, icpt, R^2)."""
    import numpy as np

    xs, ys = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    slope, icpt = np.polyfit(xs, ys, 1)
    ss_res = float(np.sum((ys - np.polyval([slope, icpt], xs)) ** 2))
    ss_tot = float(np.sum((ys - ys.mean()) ** 2))
    return float(slope), float(icpt), 1.0 - ss_res / ss_tot if ss_tot > 0 else float("nan")


def scaling_series(
    title: str,
    cards: list[tuple[int, int, list[tuple[str, str]]]],
    args: argparse.Namespace,
    tmp: str,
    bonus: int = 0,
) -> list[Point]:
    """Solve each (dice, faces, boxes) card in a child and print its row; the cards solved."""
    print(f"\n{title}")
    print(
        f"{'dice':>4} {'faces':>5} {'boxes':>5} {'multisets':>9} {'states':>8} {'seconds':>8} {'model s':>7} "
        f"{'search s':>8} {'S<DP':>4} {'M+S<DP':>6} {'DP s':>7} {'peak MiB':>8}"
    )
    solved = []
    for dice, faces, boxes in cards:
        vid = f"scale-d{dice}-f{faces}-b{len(boxes)}{'-bonus' * bonus}"
        path = os.path.join(tmp, vid + ".yaml")
        lead = f"{dice:>4} {faces:>5} {len(boxes):>5} {math.comb(dice + faces, dice):>9,}"
        try:
            Path(path).write_text(variant_yaml(vid, dice, faces, boxes, bonus))
        except OSError as exc:
            print(f"{lead}  FAILED: cannot write {path}: {exc}")
            continue
        spec = {"path": path, "repeats": args.scaling_repeats, "max_states": args.max_states, "kernel": args.kernel}
        r = run_child({**spec, "table": False}, args.timeout)
        if "times" not in r:
            print(f"{lead} {'-':>8} {'-':>8} {'-':>7} {'-':>8} {'-':>4} {'-':>6} {'-':>7} {_peak(r):>8}  {_why(r)}")
            continue
        p = Point(dice, faces, len(boxes), r["states"], statistics.median(r["times"]), statistics.median(r["dp_times"]))
        print(f"{lead} {p.states:>8,} {p.seconds:8.2f} {_phases(r)} {p.dp:7.2f} {_mib(r['peak_kib']):>8}", flush=True)
        solved.append(p)
    return solved


def power_fit(name: str, solved: list[Point]) -> None:
    """seconds ~ a * multisets^k, for the whole solve and for its DP part."""
    if len(solved) < 3:
        print(f"   {name}: fewer than 3 cards solved, no fit")
        return
    x = [math.log(p.multisets) for p in solved]
    k, icpt, r2 = _fit(x, [math.log(p.seconds) for p in solved])
    dk, _, dr2 = _fit(x, [math.log(max(p.dp, 1e-6)) for p in solved])
    print(
        f"   {name}: seconds ~ {math.exp(icpt):.3g} * multisets^{k:.2f} (R^2 {r2:.3f}, {len(solved)} cards); "
        f"DP part alone: multisets^{dk:.2f} (R^2 {dr2:.3f})"
    )


def box_fit(name: str, solved: list[Point]) -> None:
    """log(seconds) against boxes: the growth factor per added box, for the whole solve and its DP part."""
    if len(solved) < 3:
        print(f"   {name}: fewer than 3 cards solved, no fit")
        return
    x = [float(p.boxes) for p in solved]
    slope, _, r2 = _fit(x, [math.log(p.seconds) for p in solved])
    dslope, _, dr2 = _fit(x, [math.log(max(p.dp, 1e-6)) for p in solved])
    sslope, _, _ = _fit(x, [math.log(p.states) for p in solved])
    print(
        f"   {name}: seconds x{math.exp(slope):.2f} per added box (R^2 {r2:.3f}, {len(solved)} cards); "
        f"DP part alone x{math.exp(dslope):.2f} (R^2 {dr2:.3f}); states x{math.exp(sslope):.2f}"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="a lower default state limit and fewer card sizes (~2 min)")
    ap.add_argument("--repeats", type=int, default=1, help="timed solves per built-in variant; the median is shown")
    ap.add_argument(
        "--scaling-repeats", type=int, default=None, help="timed solves per scaling card (3; --quick 1); the median"
    )
    ap.add_argument(
        "--max-states", type=int, default=None, help="refuse variants with more states (5000000; --quick 400000)"
    )
    ap.add_argument("--kernel", choices=["numba", "numpy"], default="numba", help="the solver's kernel (numba)")
    ap.add_argument("--timeout", type=float, default=900.0, help="seconds before a child is killed (900)")
    ap.add_argument("--only", choices=["variants", "scaling"], help="run one of the two parts")
    ap.add_argument("--variants", nargs="+", metavar="ID", help="table 1 for these variants only (no extra rows)")
    ap.add_argument("--child", metavar="JSON", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child is not None:
        return child_main(args.child)
    if args.max_states is None:
        args.max_states = 400_000 if args.quick else 5_000_000
    if args.scaling_repeats is None:
        args.scaling_repeats = 1 if args.quick else 3
    args.repeats, args.scaling_repeats = max(1, args.repeats), max(1, args.scaling_repeats)

    from dicecup import Engine

    started = time.perf_counter()
    print(
        f"dicecup bench_variants: Python {sys.version.split()[0]}; load average {os.getloadavg()[0]:.2f} at the start"
    )
    if args.only != "scaling":
        builtin_table(args.variants or Engine(entry_points=False).variant_ids(), args, extra=not args.variants)
    if args.only != "variants":
        dice = [2, 4, 6] if args.quick else [2, 3, 4, 5, 6]
        faces = [4, 7, 10] if args.quick else [4, 5, 6, 7, 8, 9, 10]
        boxes = [4, 7, 10, 13] if args.quick else list(range(4, 14))
        bonus_boxes = [9, 11, 13] if args.quick else list(range(6, 14))
        two_boxes = [8, 10, 13] if args.quick else list(range(8, 14))
        print(
            f"\n2. Scaling: one child per card, median of {args.scaling_repeats}; the cards are variant YAML "
            "(temporary files), no bonus but in (d)"
        )
        with tempfile.TemporaryDirectory(prefix="bench-cards-") as tmp:
            by_dice = scaling_series(
                "(a) dice, 6 faces, 7 boxes: ones..fours, pair, all alike, chance",
                [(d, 6, small_card(d)) for d in dice],
                args,
                tmp,
            )
            by_faces = scaling_series(
                "(b) faces, 5 dice, the same 7 boxes", [(5, f, small_card(5)) for f in faces], args, tmp
            )
            by_boxes = scaling_series(
                "(c) boxes, 5 dice, 6 faces: the first n boxes of the Yahtzee card",
                [(5, 6, CARD[:n]) for n in boxes],
                args,
                tmp,
            )
            by_bonus = scaling_series(
                "(d) boxes as in (c), with Yahtzee's upper bonus (35 at 63): more states per class, the DP counts",
                [(5, 6, CARD[:n]) for n in bonus_boxes],
                args,
                tmp,
                bonus=1,
            )
            by_bonuses = scaling_series(
                "(e) boxes as in (d), 8 or more, with a second threshold bonus (three and four of a kind, 20 at 45)",
                [(5, 6, CARD[:n]) for n in two_boxes],
                args,
                tmp,
                bonus=2,
            )
        print("\nFits (numpy.polyfit on logs; multisets = C(dice + faces, dice)):")
        power_fit("dice", by_dice)
        power_fit("faces", by_faces)
        box_fit("boxes", by_boxes)
        box_fit("boxes + bonus", by_bonus)
        box_fit("boxes + two bonuses", by_bonuses)

    try:
        numba_version = importlib.metadata.version("numba")
    except importlib.metadata.PackageNotFoundError:
        numba_version = "not installed"
    cores = os.cpu_count()
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else cores
    print(
        f"\nmachine: {cores} cores ({usable} usable); numba {numba_version}; "
        f"load average {os.getloadavg()[0]:.2f} at the end; {time.perf_counter() - started:.0f} s in all"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
