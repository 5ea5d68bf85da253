"""Random masked agents on the vector environment (N games a step, compiled) and on the single one: steps/s.

    .venv/bin/python tests/benchmarks/bench_vector_env.py [--envs 4096] [--steps 2000] [--variant yahtzee]
        [--single-steps 20000] [--repeat 3] [--threads 2]

The vector environment is made by `gymnasium.make_vec(..., vectorization_mode="vector_entry_point")`; each
step draws one uniformly random legal action per game in numpy from the mask (a random number in [0, 1) per
action plus the mask's 0 or 1, argmax: the largest of the legal ones). Steps count games: a step of N games is
N steps. Before timing, the environment plays the same number of steps once (so the learned rule tables hold
what random play reaches, as they do after a first run keeps them in the cache). Prints each run and the
medians: steps per second of the wall clock, and steps per CPU second of the process (which holds on a
loaded machine), with the load average; then the single environment's figure (`DicecupEnv`, one game)
measured the same way.
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings

import gymnasium
import numpy as np

import dicecup.rl  # noqa: F401  (registers the environment)
from dicecup.rl import DicecupEnv


def random_legal(mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One uniformly random legal action per row of `mask` (drawn in numpy)."""
    keys = rng.random(mask.shape, dtype=np.float32)
    keys += mask  # legal actions in [1, 2), the others in [0, 1)
    return keys.argmax(axis=1)


def run_vector(envs: gymnasium.vector.VectorEnv, steps: int, rng: np.random.Generator) -> tuple[float, float, int]:
    """(wall, CPU seconds, games finished) of `steps` vector steps."""
    obs, info = envs.reset(seed=int(rng.integers(2**31)))
    mask = info["action_mask"]
    games = 0
    wall, cpu = time.perf_counter(), time.process_time()
    for _ in range(steps):
        obs, reward, terminated, truncated, info = envs.step(random_legal(mask, rng))
        mask = info["action_mask"]
        games += int(terminated.sum())
    return time.perf_counter() - wall, time.process_time() - cpu, games


def run_single(variant: str, steps: int, rng: np.random.Generator) -> tuple[float, float]:
    """(wall, CPU seconds) of `steps` steps of one `DicecupEnv`."""
    env = DicecupEnv(variant)
    obs, info = env.reset(seed=0)
    wall, cpu = time.perf_counter(), time.process_time()
    for _ in range(steps):
        legal = np.flatnonzero(info["action_mask"])
        obs, reward, terminated, truncated, info = env.step(int(legal[rng.integers(len(legal))]))
        if terminated or truncated:
            obs, info = env.reset()
    return time.perf_counter() - wall, time.process_time() - cpu


def load() -> str:
    with open("/proc/loadavg", encoding="ascii") as f:
        return " ".join(f.read().split()[:3])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--envs", type=int, default=4096)
    ap.add_argument("--steps", type=int, default=2000, help="vector steps a run (each steps every game)")
    ap.add_argument("--single-steps", type=int, default=20000)
    ap.add_argument("--variant", default="yahtzee")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--threads", type=int, default=None, help="threads stepping the games (default: the cores)")
    ap.add_argument("--warm", type=int, default=None, help="vector steps before timing (default: --steps)")
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        envs = gymnasium.make_vec(
            "dicecup/Dicecup-v0",
            num_envs=args.envs,
            vectorization_mode="vector_entry_point",
            variant=args.variant,
            **({} if args.threads is None else {"threads": args.threads}),
        )
    backend, threads = getattr(envs, "backend", "?"), getattr(envs, "_threads", 1)
    print(f"{args.variant}: vector environment of {args.envs} games, {backend} backend, {threads} thread(s)")
    for w in caught:
        print(f"  ({w.message})")
    made = time.perf_counter()
    run_vector(envs, args.steps if args.warm is None else args.warm, rng)  # the tables learn what play reaches
    print(f"  first run (learning the tables): {time.perf_counter() - made:.1f} s")
    rates, per_cpu = [], []
    for k in range(args.repeat):
        wall, cpu, games = run_vector(envs, args.steps, rng)
        n = args.steps * args.envs
        rates.append(n / wall)
        per_cpu.append(n / cpu)
        print(
            f"  run {k + 1}: {n:,} steps ({games:,} games) in {wall:.2f} s ({cpu:.2f} s CPU): "
            f"{n / wall:,.0f} steps/s, {n / cpu:,.0f} steps/CPU-s, load {load()}"
        )
    envs.close()
    print(f"  median: {statistics.median(rates):,.0f} steps/s, {statistics.median(per_cpu):,.0f} steps per CPU second")
    single, single_cpu = [], []
    for _ in range(args.repeat):
        wall, cpu = run_single(args.variant, args.single_steps, rng)
        single.append(args.single_steps / wall)
        single_cpu.append(args.single_steps / cpu)
    print(
        f"single DicecupEnv: median {statistics.median(single):,.0f} steps/s, "
        f"{statistics.median(single_cpu):,.0f} steps per CPU second over {args.repeat} runs of "
        f"{args.single_steps:,} steps, load {load()}"
    )


if __name__ == "__main__":
    main()
