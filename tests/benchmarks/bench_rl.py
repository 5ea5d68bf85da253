"""A random masked agent on the learning environments: steps per second.

    .venv/bin/python tests/benchmarks/bench_rl.py [--steps 1000000] [--variant yahtzee] [--players 1]

Plays whole games choosing uniformly among the legal actions (the action mask) until `--steps`
steps are taken, on the gymnasium environment (one player) or the PettingZoo AEC one (several),
checks that every finished game's return is the engine's final total, and prints the steps per
second (wall clock and CPU time of this process).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from dicecup import Engine
from dicecup.rl import DicecupAECEnv, DicecupEnv


def run_gym(variant: str, steps: int, seed: int) -> int:
    """`steps` steps of a random masked agent on the gymnasium environment; the games finished."""
    env = DicecupEnv(variant, engine=Engine())
    rng = np.random.default_rng(seed)
    obs, info = env.reset(seed=seed)
    games, episode_return = 0, 0.0
    for _ in range(steps):
        legal = np.flatnonzero(info["action_mask"])
        obs, reward, terminated, truncated, info = env.step(int(legal[rng.integers(len(legal))]))
        episode_return += reward
        if terminated or truncated:
            assert episode_return == env.state.totals()[0], (episode_return, env.state.totals())
            games, episode_return = games + 1, 0.0
            obs, info = env.reset()
    return games


def run_aec(variant: str, players: int, steps: int, seed: int) -> int:
    """`steps` decisions of random masked agents on the AEC environment; the games finished."""
    env = DicecupAECEnv(variant, players=players, engine=Engine())
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)
    games, taken = 0, 0
    returns = dict.fromkeys(env.possible_agents, 0.0)
    while taken < steps:
        obs, reward, terminated, truncated, info = env.last()
        returns[env.agent_selection] += reward
        if terminated or truncated:
            env.step(None)
            if not env.agents:
                totals = env.game.results[0].totals
                assert [returns[a] for a in env.possible_agents] == [float(t) for t in totals]
                games, returns = games + 1, dict.fromkeys(env.possible_agents, 0.0)
                env.reset()
            continue
        legal = np.flatnonzero(obs["action_mask"])
        env.step(int(legal[rng.integers(len(legal))]))
        taken += 1
    return games


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=1_000_000)
    ap.add_argument("--variant", default="yahtzee")
    ap.add_argument("--players", type=int, default=1, help="1: the gymnasium environment; more: the AEC one")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    wall, cpu = time.perf_counter(), time.process_time()
    if args.players == 1:
        games = run_gym(args.variant, args.steps, args.seed)
    else:
        games = run_aec(args.variant, args.players, args.steps, args.seed)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    print(
        f"{args.variant}, {args.players} player(s): {args.steps:,} steps ({games:,} games) in {wall:.0f} s "
        f"({cpu:.0f} s CPU): {args.steps / wall:,.0f} steps/s wall, {args.steps / cpu:,.0f} steps/s CPU"
    )


if __name__ == "__main__":
    main()
