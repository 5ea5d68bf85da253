"""Target play's time and peak memory for growing cards, against the mean's solve measured in the same process.

    .venv/bin/python tests/benchmarks/bench_target.py [--boxes 4,6,8,10] [--yahtzee] [--runs 3]

Cards of Yahtzee's dice (five six-sided dice, three rolls) with the first N boxes of a Yahtzee-like card
(the upper boxes with a bonus scaled to them, then three and four of a kind, straights, five of a kind and
chance); `--yahtzee` adds Yahtzee itself. Each run is a fresh process (numba's caches warm from a first,
discarded run, and loaded before the clock starts): the mean's solve, then the target solve of the curve from the start (keep="start", what
`solve --objective target` does) and of every layer (keep="all", what the advisor and bot:target read).
Printed per card: states, vector entries, the estimate made before starting, medians of the measured
seconds and the ratio target / mean solve, the vectors' bytes and the process's peak resident memory.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

UPPER = ["ones", "twos", "threes", "fours", "fives", "sixes"]
LOWER = {
    "three_kind": "{section: lower, pattern: {kind: of_a_kind, n: 3}, score: total}",
    "four_kind": "{section: lower, pattern: {kind: of_a_kind, n: 4}, score: total}",
    "small": "{section: lower, pattern: {kind: straight, length: 4}, score: 30}",
    "large": "{section: lower, pattern: {kind: straight, length: 5}, score: 40}",
    "five_kind": "{section: lower, pattern: {kind: of_a_kind, n: 5}, score: 50}",
    "chance": "{section: lower, pattern: always, score: total}",
}


def card_yaml(boxes: int) -> str:
    """A Yahtzee-like card of its first `boxes` boxes (upper first; the upper bonus at 3 x the faces' sum)."""
    upper = UPPER[: min(boxes, 6)]
    lower = list(LOWER)[: max(0, boxes - 6)]
    if boxes <= 6:  # a short card still mixes both kinds: half upper, half lower
        upper = UPPER[: (boxes + 1) // 2]
        lower = list(LOWER)[: boxes // 2]
    lines = [f"id: bench-target-{boxes}", "dice: {count: 5, faces: 6}", "turn: {rolls: 3}", "boxes:"]
    for i, name in enumerate(upper):
        lines.append(f"  {name}: {{section: upper, pattern: {{kind: face, face: {i + 1}}}, score: sum}}")
    for name in lower:
        lines.append(f"  {name}: {LOWER[name]}")
    at_least = 3 * sum(range(1, len(upper) + 1))
    lines += ["bonuses:", f"  up: {{kind: threshold, section: upper, at_least: {at_least}, points: 35}}"]
    return "\n".join(lines) + "\n"


def one(source: str) -> None:
    """Measure one card in this process and print a JSON line (run by `main` in a child process)."""
    import resource
    import time

    from dicecup import Engine
    from dicecup.solver import solve
    from dicecup.solver.target import solve_target

    engine = Engine()
    v = engine.variant(source) if not source.endswith(".yaml") else engine.load_file(source)
    t = time.perf_counter()
    solution = solve(v)
    mean_s = time.perf_counter() - t
    out = {"variant": v.id, "states": solution.states, "mean_s": mean_s}
    from dicecup.solver.target import _Run, _sample_seconds

    warm = _Run(solution)  # numba's cached kernels loaded before any timing
    warm.windows(warm.nb - 1)
    _sample_seconds(warm, warm.nb - 1)
    del warm
    for keep in ("start", "all"):
        t = time.perf_counter()
        tables = solve_target(solution, keep=keep)
        out[f"{keep}_s"] = time.perf_counter() - t
        out[f"{keep}_bytes"] = tables.nbytes
        out[f"{keep}_estimate_s"] = tables.estimate.seconds
        out[f"{keep}_estimate_bytes"] = tables.estimate.bytes
        out["entries"] = tables.estimate.entries
        out[f"{keep}_p"] = tables.curve().at(int(solution.expected_score))
        del tables
    out["peak_rss"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print(json.dumps(out))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--boxes", default="4,6,8,10")
    ap.add_argument("--yahtzee", action="store_true", help="also Yahtzee itself (minutes)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--one", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        one(args.one)
        return
    tmp = Path(tempfile.mkdtemp(prefix="bench-target-"))
    sources = []
    for n in [int(x) for x in args.boxes.split(",") if x]:
        path = tmp / f"bench-target-{n}.yaml"
        path.write_text(card_yaml(n), encoding="utf-8")
        sources.append(str(path))
    if args.yahtzee:
        sources.append("yahtzee")
    head = (
        f"{'card':<18}{'states':>9}{'entries':>13}{'mean s':>9}{'start s':>9}{'est s':>8}{'all s':>9}"
        f"{'est s':>8}{'all/mean':>9}{'all MiB':>9}{'peak RSS MiB':>13}"
    )
    print(head)
    for source in sources:
        runs = []
        for i in range(args.runs + 1):  # the first warms numba's caches: discarded
            got = (
                subprocess.run([sys.executable, __file__, "--one", source], capture_output=True, text=True, check=True)
                .stdout.strip()
                .splitlines()[-1]
            )
            if i:
                runs.append(json.loads(got))

        def med(key: str, runs: list[dict] = runs) -> float:
            return statistics.median(r[key] for r in runs)

        r = runs[0]
        print(
            f"{r['variant']:<18}{r['states']:>9,}{r['entries']:>13,}{med('mean_s'):>9.2f}{med('start_s'):>9.2f}"
            f"{med('start_estimate_s'):>8.1f}{med('all_s'):>9.2f}{med('all_estimate_s'):>8.1f}"
            f"{statistics.median(x['all_s'] / x['mean_s'] for x in runs):>9.1f}"
            f"{med('all_bytes') / 2**20:>9.1f}{med('peak_rss') / 2**20:>13.0f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
