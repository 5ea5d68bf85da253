"""Train a small agent on dicecup's gymnasium environment for a few minutes, then compare it with the bots.

    python examples/rl/train.py [--variant yahtzee] [--minutes 3] [--workers 2] [--games 2000]

The agent is a one-hidden-layer network written in numpy (no deep-learning library): its input is
the environment's observation vector, scaled by `Encoding.scale`, and the points each legal box
would score now (`GameState.score_preview`, what a player reads off the card); its output, one
logit per action, goes through a softmax over the legal actions (the action mask). It learns by
REINFORCE: each decision's log-probability is pushed up in proportion to the points that followed
it (discounted by `--gamma` per decision, which keeps the signal close to the turn that earned it),
less a baseline (their running mean at the same stage of the game), with Adam steps after every
`--batch` games, which `--workers` processes play; the step size falls linearly to a tenth of
`--lr` over the training time.

At the end the trained agent plays `--games` games choosing its most likely action, and the
engine's simulator plays as many with the strategies of `bot:greedy` and `bot:optimal` (the exact
solver's; its table is solved on first use and cached); the mean scores are printed side by side.
"""

from __future__ import annotations

import argparse
import multiprocessing
import sys
import time
from typing import Any

import numpy as np

from dicecup import Engine
from dicecup.rl import DicecupEnv
from dicecup.simulate import simulate

HIDDEN = 64

_env: DicecupEnv | None = None  # one environment per worker process


def features(env: DicecupEnv, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """The network's input: the scaled observation and what each legal box would score now."""
    enc = env.encoding
    points = np.zeros(len(enc.box_ids), dtype=np.float32)
    for i, box in enumerate(enc.box_ids):
        if mask[enc.box_index[box]]:
            points[i] = env.state.score_preview(box).points / 50.0
    return np.concatenate([obs / enc.scale, points, [1.0]]).astype(np.float32)


def init_params(inputs: int, actions: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Small random weights for the input -> hidden (tanh) -> logits network."""
    return {
        "w1": rng.normal(0, 1 / np.sqrt(inputs), (inputs, HIDDEN)).astype(np.float32),
        "w2": rng.normal(0, 0.01, (HIDDEN, actions)).astype(np.float32),
    }


def policy(params: dict[str, np.ndarray], x: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(probabilities over the actions, the hidden layer) for inputs `x` (one row per decision)."""
    hidden = np.tanh(x @ params["w1"])
    logits = hidden @ params["w2"]
    logits = np.where(mask > 0, logits, -np.inf)
    logits -= logits.max(axis=-1, keepdims=True)
    p = np.exp(logits)
    return p / p.sum(axis=-1, keepdims=True), hidden


def _worker_env(variant: str) -> DicecupEnv:
    global _env
    if _env is None or _env.state.variant.id != variant:
        _env = DicecupEnv(variant, engine=Engine())
    return _env


def play(job: tuple[str, dict[str, np.ndarray], int, int, bool]) -> list[dict[str, Any]]:
    """Play `games` games from `seed` with the policy (sampling, or its most likely action when `best`)."""
    variant, params, seed, games, best = job
    env = _worker_env(variant)
    rng = np.random.default_rng(seed)
    out = []
    for g in range(games):
        obs, info = env.reset(seed=seed * 1_000_003 + g)
        xs, masks, acts, rewards, stages = [], [], [], [], []
        done = False
        while not done:
            mask = info["action_mask"]
            x = features(env, obs, mask)
            p, _ = policy(params, x[None], mask[None])
            a = int(p[0].argmax()) if best else int(rng.choice(len(p[0]), p=p[0]))
            stages.append(min(int(obs[env.encoding.layout["open"]].sum()), 99) * 8 + min(env.state.rolls_left, 7))
            obs, reward, done, truncated, info = env.step(a)
            xs.append(x)
            masks.append(mask)
            acts.append(a)
            rewards.append(reward)
            done = done or truncated
        out.append(
            {
                "x": np.array(xs),
                "mask": np.array(masks),
                "action": np.array(acts),
                "reward": np.array(rewards, dtype=np.float32),
                "stage": np.array(stages),
                "total": float(sum(rewards)),
            }
        )
    return out


class Adam:
    """Adam steps for a dict of arrays (gradient ascent)."""

    def __init__(self, params: dict[str, np.ndarray], lr: float) -> None:
        self.lr, self.t = lr, 0
        self.m = {k: np.zeros_like(v) for k, v in params.items()}
        self.v = {k: np.zeros_like(v) for k, v in params.items()}

    def step(self, params: dict[str, np.ndarray], grads: dict[str, np.ndarray]) -> None:
        self.t += 1
        for k, g in grads.items():
            self.m[k] = 0.9 * self.m[k] + 0.1 * g
            self.v[k] = 0.999 * self.v[k] + 0.001 * g * g
            m = self.m[k] / (1 - 0.9**self.t)
            v = self.v[k] / (1 - 0.999**self.t)
            params[k] += self.lr * m / (np.sqrt(v) + 1e-8)


def discounted(rewards: np.ndarray, gamma: float) -> np.ndarray:
    """The points to come after each step, each step further away counted `gamma` times less."""
    out = np.zeros_like(rewards)
    acc = 0.0
    for t in range(len(rewards) - 1, -1, -1):
        acc = rewards[t] + gamma * acc
        out[t] = acc
    return out


def gradient(
    params: dict[str, np.ndarray], episodes: list[dict[str, Any]], baseline: np.ndarray, gamma: float
) -> dict[str, Any]:
    """REINFORCE's gradient of the batch (points to come, less the stage's baseline), and the baseline updated."""
    x = np.concatenate([e["x"] for e in episodes])
    mask = np.concatenate([e["mask"] for e in episodes])
    action = np.concatenate([e["action"] for e in episodes])
    stage = np.concatenate([e["stage"] for e in episodes])
    to_come = np.concatenate([discounted(e["reward"], gamma) for e in episodes])
    advantage = to_come - baseline[stage]
    counts = np.bincount(stage, minlength=len(baseline))
    seen = counts > 0
    means = np.bincount(stage, to_come, minlength=len(baseline))[seen] / counts[seen]
    baseline[seen] += 0.1 * (means - baseline[seen])
    advantage = advantage / (advantage.std() + 1e-6)
    p, hidden = policy(params, x, mask)
    dlogits = -p
    dlogits[np.arange(len(action)), action] += 1
    dlogits *= advantage[:, None] / len(episodes)
    dhidden = (dlogits @ params["w2"].T) * (1 - hidden**2)
    return {"w2": hidden.T @ dlogits, "w1": x.T @ dhidden}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--variant", default="yahtzee")
    ap.add_argument("--minutes", type=float, default=3.0, help="training time (wall clock)")
    ap.add_argument("--workers", type=int, default=2, help="processes that play the games")
    ap.add_argument("--games", type=int, default=2000, help="games for each mean score at the end")
    ap.add_argument("--batch", type=int, default=8, help="games per policy update")
    ap.add_argument("--lr", type=float, default=2e-2, help="Adam's step size")
    ap.add_argument("--gamma", type=float, default=0.9, help="discount per decision of the points to come")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    if args.minutes < 0 or min(args.workers, args.games, args.batch) < 1 or not 0 <= args.gamma <= 1:
        print(
            "error: --minutes must be >= 0, --workers, --games and --batch >= 1, --gamma from 0 to 1", file=sys.stderr
        )
        return 2

    env = _worker_env(args.variant)
    obs, info = env.reset(seed=0)
    rng = np.random.default_rng(args.seed)
    params = init_params(len(features(env, obs, info["action_mask"])), env.encoding.size, rng)
    baseline = np.zeros(100 * 8, dtype=np.float64)
    adam = Adam(params, args.lr)
    per_worker = max(1, args.batch // args.workers)
    print(f"training on {args.variant} for {args.minutes:g} min with {args.workers} workers", flush=True)
    start = last = time.monotonic()
    games, recent, batch_no = 0, [], 0
    with multiprocessing.get_context("spawn").Pool(args.workers) as pool:
        while time.monotonic() - start < args.minutes * 60 or batch_no == 0:
            jobs = [
                (args.variant, params, args.seed * 7919 + batch_no * args.workers + w, per_worker, False)
                for w in range(args.workers)
            ]
            episodes = [e for part in pool.map(play, jobs) for e in part]
            done = (time.monotonic() - start) / max(args.minutes * 60, 1e-9)
            adam.lr = args.lr * max(0.1, 1 - done)  # smaller steps as training ends
            adam.step(params, gradient(params, episodes, baseline, args.gamma))
            batch_no += 1
            games += len(episodes)
            recent.extend(e["total"] for e in episodes)
            if time.monotonic() - last >= 10:
                print(
                    f"  {time.monotonic() - start:6.0f} s  {games:7d} games  mean score of the last {len(recent)}: {np.mean(recent):6.1f}",
                    flush=True,
                )
                last, recent = time.monotonic(), []
        trained = time.monotonic() - start
        n = args.games
        chunks = [n // args.workers + (w < n % args.workers) for w in range(args.workers)]
        jobs = [(args.variant, params, 10**6 + w, c, True) for w, c in enumerate(chunks) if c]
        agent = np.array([e["total"] for part in pool.map(play, jobs) for e in part])
    print(f"trained for {trained:.0f} s on {games} games ({batch_no} updates)")
    variant = Engine().variant(args.variant)
    rows = [("agent", agent)]
    for strategy in ("greedy", "optimal"):
        rows.append((f"bot:{strategy}", simulate(variant, strategy, n, seed=args.seed).totals))
    print(f"\nmean score over {n} games of {args.variant}")
    for who, totals in rows:
        print(f"{who:<12} {totals.mean():7.1f}  (standard error {totals.std() / np.sqrt(len(totals)):.1f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
