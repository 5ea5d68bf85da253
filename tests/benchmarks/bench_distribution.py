"""The exact score distribution's time against the solve's, same process, alternating (drift cancels).

    .venv/bin/python tests/benchmarks/bench_distribution.py [--variants yacht,yahtzee] [--runs 5]

Per variant: a warm-up of each (numba's caches loaded), then `runs` pairs of a full solve
(`solve(variant)`) and a distribution from the start (`distribution(solution)`), alternating; medians of
each and the median of the pairwise ratios (target: distribution / solve <= 2), by the clock and by the
process's CPU time (all threads: steadier where other processes share the cores). Then one more distribution
with its phases timed (clock and CPU): the successor slots, the turns folded and played (`play_turns`: the simulator's fold and
choice of keep, the policy, with the probabilities propagated through the turn, for the states the policy
reaches), the outcomes compacted, their windows and the convolution;
and the memory its score vectors took against the refusal's estimate.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections import defaultdict

from dicecup import Engine
from dicecup.numeric import propagate as prop
from dicecup.simulate import distribution as dist_mod
from dicecup.solver import solve


def _timed_phases() -> tuple[dict[str, float], dict[str, float], list[int], callable]:
    """Wrap the distribution's kernels with timers; returns (seconds per phase, CPU seconds per phase, vector
    bytes per layer, undo)."""
    spent: dict[str, float] = defaultdict(float)
    cpu: dict[str, float] = defaultdict(float)
    sizes: list[int] = []
    saved = {}

    def wrap(owner, name, label):
        fn = getattr(owner, name)
        saved[(owner, name)] = fn

        def timed(*args, **kwargs):
            t, c = time.perf_counter(), time.process_time()
            try:
                return fn(*args, **kwargs)
            finally:
                spent[label] += time.perf_counter() - t
                cpu[label] += time.process_time() - c

        setattr(owner, name, timed)

    wrap(prop, "successor_slots", "successor slots")
    wrap(prop, "play_turns", "turns folded and played")
    wrap(prop, "compact", "compaction")
    wrap(prop, "windows", "windows")
    wrap(prop, "convolve", "convolution")
    layer = dist_mod.LayerPass.layer

    def spy(self, *args):
        layer(self, *args)
        sizes.append(self.vec.nbytes)

    dist_mod.LayerPass.layer = spy

    def undo():
        for (owner, name), fn in saved.items():
            setattr(owner, name, fn)
        dist_mod.LayerPass.layer = layer

    return spent, cpu, sizes, undo


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--variants", default="yacht,yahtzee")
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    engine = Engine()
    for vid in args.variants.split(","):
        v = engine.variant(vid)
        solution = solve(v)
        d = dist_mod.distribution(solution)  # warm-up: numba's caches loaded
        solves, dists, ratios, cpu_ratios = [], [], [], []
        for _ in range(args.runs):
            t, c = time.perf_counter(), time.process_time()
            solve(v)
            a, ca = time.perf_counter() - t, time.process_time() - c
            t, c = time.perf_counter(), time.process_time()
            d = dist_mod.distribution(solution)
            b, cb = time.perf_counter() - t, time.process_time() - c
            solves.append(a)
            dists.append(b)
            ratios.append(b / a)
            cpu_ratios.append(cb / ca)
        print(f"{vid}: {solution.states:,} states")
        print(
            f"  solve        median {statistics.median(solves):.3f} s  (runs {', '.join(f'{x:.2f}' for x in solves)})"
        )
        print(f"  distribution median {statistics.median(dists):.3f} s  (runs {', '.join(f'{x:.2f}' for x in dists)})")
        print(f"  distribution / solve: median of pairwise ratios {statistics.median(ratios):.2f} (target <= 2)")
        print(f"  by CPU time (all threads): median of pairwise ratios {statistics.median(cpu_ratios):.2f}")
        print(
            f"  mean {d.mean:.6f} (solver {solution.expected_score:.6f}), sd {d.sd:.4f}, median {d.median}, "
            f"mode {d.mode}, p5 {d.quantile(0.05)}, p95 {d.quantile(0.95)}"
        )
        spent, cpu, sizes, undo = _timed_phases()
        try:
            t, c = time.perf_counter(), time.process_time()
            dist_mod.distribution(solution)
            whole, whole_cpu = time.perf_counter() - t, time.process_time() - c
        finally:
            undo()
        print(f"  phases of one more run ({whole:.3f} s, CPU {whole_cpu:.3f} s):")
        for label, sec in sorted(spent.items(), key=lambda kv: -kv[1]):
            print(
                f"    {label:<28} {sec:7.3f} s  {100 * sec / whole:5.1f}%   CPU {cpu[label]:7.3f} s "
                f"{100 * cpu[label] / whole_cpu:5.1f}%"
            )
        pairs = [a + b for a, b in zip(sizes, sizes[1:], strict=False)] or sizes
        print(
            f"  score vectors: two neighbouring layers took at most {max(pairs) / 2**20:.0f} MiB "
            f"(the refusal's estimate: {dist_mod.estimate_bytes(solution) / 2**20:.0f} MiB)"
        )


if __name__ == "__main__":
    main()
