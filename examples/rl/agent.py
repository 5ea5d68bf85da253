"""The reference agent: a learned value of the card, and each turn searched exactly against it.

    python examples/rl/agent.py --variant yahtzee --cpu-minutes 5 --save runs/yahtzee
    python examples/rl/agent.py --load runs/yahtzee --games 10000 --eval-seed 0

What is learned: a small numpy network (`valuenet.ValueNet`) that maps a card at the start of a turn to the
points still to come. What is searched: the turn itself, every keep and box of its rolls over all dice
outcomes, with the network's value as the worth of the card each box leaves (`learned.py`).

It learns by DAgger: the first games are played by the teacher, every later round by the agent itself, and
every card the games meet (and every card one box away from it, which the search compares) is labelled with
the teacher's value and added to the data the network is fitted to. The teacher is the exact solver where it
reaches the variant (`--teacher optimal`), else `bot:strong`'s estimate (`--teacher strong`). Training stops
when the process has used `--cpu-minutes` of CPU time (all its threads), and reports CPU and wall time.

Training games are run `TRAIN_SEED`+`--seed` of the simulator; evaluation plays run `--eval-seed` (refused when it
is a training run), so the agent is measured on games it never trained on.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from pathlib import Path

# one BLAS thread: the network's matrices are small, and threads contending for 2 shared cores only add CPU time
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))

from learned import ExactTeacher, StrongTeacher, open_rows  # noqa: E402
from valuenet import ValueNet  # noqa: E402

from dicecup import Engine  # noqa: E402
from dicecup.language.model import Variant  # noqa: E402

TRAIN_SEED = 1_000_000
"""Training runs are seeds TRAIN_SEED + --seed; an evaluation seed at or above it is refused."""


def make_teacher(variant_id: str | Variant, teacher: str) -> ExactTeacher | StrongTeacher:
    """The exact solver's values (`optimal`), bot strong's (`strong`), or the first that reaches it (`auto`)."""
    variant = Engine().variant(variant_id) if isinstance(variant_id, str) else variant_id
    if teacher == "auto":
        from dicecup.solver.rules import check_solvable

        try:
            check_solvable(variant)
            teacher = "optimal"
        except Exception:
            teacher = "strong"
    return ExactTeacher(variant) if teacher == "optimal" else StrongTeacher(variant)


class Data:
    """The aggregated training set: states (slots of the exact table, or card rows) and their labels."""

    def __init__(self, teacher: ExactTeacher | StrongTeacher) -> None:
        self.teacher = teacher
        self.slots = np.zeros(0, dtype=np.int64)
        self.rows: np.ndarray | None = None
        self.x = np.zeros((0, 0))
        self.y = np.zeros(0)

    def add(self, record: list[np.ndarray]) -> int:
        """Add what games recorded; the number of new states."""
        t = self.teacher
        if not record:
            return 0
        if isinstance(t, ExactTeacher):
            got = t.label(np.concatenate(record))
            new = np.setdiff1d(got, self.slots)
            self.slots = np.union1d(self.slots, new)
            self.x, self.y = t.features[self.slots], t.values[self.slots]
            return len(new)
        rows = np.unique(open_rows(np.concatenate(record)), axis=0)
        if self.rows is not None:
            known = {r.tobytes() for r in self.rows}
            rows = np.array([r for r in rows if r.tobytes() not in known], dtype=np.int64).reshape(-1, rows.shape[1])
        if len(rows) == 0:
            return 0
        x, y = t.features(rows), t.labels(rows)
        self.rows = rows if self.rows is None else np.concatenate([self.rows, rows])
        self.x = x if len(self.x) == 0 else np.concatenate([self.x, x])
        self.y = np.concatenate([self.y, y])
        return len(rows)


def cpu_seconds() -> float:
    return time.process_time()


def learn(
    teacher: ExactTeacher | StrongTeacher,
    cpu_minutes: float,
    *,
    seed: int = 0,
    rounds: int = 1000,
    round_games: int = 0,
    epochs: float = 4.0,
    hidden: int = 128,
    lr: float = 2e-3,
    say=print,  # type: ignore[no-untyped-def]
) -> tuple[ValueNet, list[dict], int]:
    """DAgger until `cpu_minutes` of this process's CPU time are used (or `rounds` rounds): (the network, a line per
    round, training games played). Round 0's games are the teacher's, every later round's the agent's own."""
    cpu0 = cpu_seconds()
    budget = cpu_minutes * 60.0
    rng = np.random.default_rng(seed)
    run = TRAIN_SEED + seed
    data = Data(teacher)
    played = 0
    games = round_games or (5_000 if isinstance(teacher, ExactTeacher) else 40)
    net: ValueNet | None = None
    history: list[dict] = []
    for rnd in range(rounds):
        if rnd and cpu_seconds() - cpu0 >= budget:
            break
        t0 = cpu_seconds()
        record: list[np.ndarray] = []
        totals = teacher.play(net, games, run, played, record)  # round 0: the teacher plays (net is None)
        played += games
        new = data.add(record)
        if net is None:
            net = ValueNet(data.x.shape[1], hidden, scale=max(1.0, float(np.abs(data.y).max())), seed=seed)
            net.fit_inputs(data.x)
        mse = net.train(data.x, data.y, epochs if rnd else 2 * epochs, lr, rng)
        line = {
            "round": rnd,
            "played_by": teacher.name if rnd == 0 else "agent",
            "games": games,
            "mean": round(float(totals.mean()), 2),
            "new_states": new,
            "states": len(data.y),
            "rmse": round(math.sqrt(mse), 3),
            "cpu_s": round(cpu_seconds() - cpu0, 1),
            "round_cpu_s": round(cpu_seconds() - t0, 1),
        }
        history.append(line)
        say(json.dumps(line))
    assert net is not None
    return net, history, played


def train(args: argparse.Namespace) -> None:
    wall0, cpu0 = time.time(), cpu_seconds()
    teacher = make_teacher(args.variant, args.teacher)
    print(f"{args.variant}: teacher {teacher.name}; budget {args.cpu_minutes:g} CPU minutes", flush=True)
    net, history, played = learn(
        teacher,
        args.cpu_minutes - (cpu_seconds() - cpu0) / 60,
        seed=args.seed,
        rounds=args.rounds,
        round_games=args.round_games,
        epochs=args.epochs,
        hidden=args.hidden,
        lr=args.lr,
        say=lambda line: print(line, flush=True),
    )
    cpu, wall = cpu_seconds() - cpu0, time.time() - wall0
    print(f"trained: {cpu / 60:.1f} CPU minutes, {wall / 60:.1f} wall minutes, {played:,} training games", flush=True)
    out = Path(args.save)
    out.mkdir(parents=True, exist_ok=True)
    run = TRAIN_SEED + args.seed
    net.save(
        out / "value.npz",
        variant=args.variant,
        teacher=teacher.name,
        train_seed=run,
        train_games=played,
        cpu_seconds=cpu,
        wall_seconds=wall,
    )
    (out / "training.json").write_text(json.dumps(history, indent=1) + "\n")
    print(f"saved {out / 'value.npz'}", flush=True)
    if args.games:
        evaluate_net(net, teacher, args.games, args.eval_seed, run)


def evaluate_net(
    net: ValueNet, teacher: ExactTeacher | StrongTeacher, games: int, seed: int, train_seed: int
) -> np.ndarray:
    """Play `games` games of run `seed` (never a training run), print the mean and its standard error; the totals."""
    if seed == train_seed or seed >= TRAIN_SEED:
        raise SystemExit(f"--eval-seed {seed}: runs from {TRAIN_SEED} on are for training; pick a smaller seed")
    t0, c0 = time.time(), cpu_seconds()
    totals = teacher.play(net, games, seed, 0).astype(np.float64)
    mean, se = totals.mean(), totals.std(ddof=1) / math.sqrt(len(totals))
    line = f"learned ({teacher.name} teacher): {mean:.2f} ± {se:.2f} over {games:,} games of run {seed}"
    if isinstance(teacher, ExactTeacher):
        opt = teacher.exact.expected_score
        line += f"; optimal {opt:.2f}, so {100 * mean / opt:.2f}% of it"
    print(line, f"({time.time() - t0:.0f} s wall, {cpu_seconds() - c0:.0f} s CPU)", flush=True)
    return totals


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--variant", default="yahtzee")
    p.add_argument("--teacher", choices=("auto", "optimal", "strong"), default="auto")
    p.add_argument("--cpu-minutes", type=float, default=5.0, help="training budget in CPU minutes (all threads)")
    p.add_argument("--save", default="runs/agent", help="folder for the trained network")
    p.add_argument("--load", help="evaluate the network saved in this folder instead of training")
    p.add_argument("--games", type=int, default=10_000, help="evaluation games (0: none)")
    p.add_argument("--eval-seed", type=int, default=0, help=f"evaluation run (below {TRAIN_SEED:,})")
    p.add_argument("--seed", type=int, default=0, help="training seed (the run TRAIN_SEED + seed, and the weights)")
    p.add_argument("--rounds", type=int, default=1000, help="at most this many DAgger rounds")
    p.add_argument("--round-games", type=int, default=0, help="games per round (0: 5,000 exact, 40 strong)")
    p.add_argument("--epochs", type=float, default=4.0, help="passes over the data per round")
    p.add_argument("--hidden", type=int, default=128)
    p.add_argument("--lr", type=float, default=2e-3)
    args = p.parse_args(argv)
    if args.load:
        net, meta = ValueNet.load(Path(args.load) / "value.npz")
        teacher = make_teacher(str(meta["variant"]), str(meta["teacher"]))
        evaluate_net(net, teacher, args.games, args.eval_seed, int(meta["train_seed"]))
    else:
        train(args)


if __name__ == "__main__":
    main()
