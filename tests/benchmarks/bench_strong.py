"""How good `bot:strong` is: against greedy on the games beyond exact reach, against the optimum where it is known.

    .venv/bin/python tests/benchmarks/bench_strong.py [--games 400] [--greedy-games 100] [--regret-games 300]
        [--processes 2] [--variants yatzy yahtzee]
    .venv/bin/python tests/benchmarks/bench_strong.py --speed 10 [--variants yahtzee triple-yahtzee yamb]
    .venv/bin/python tests/benchmarks/bench_strong.py --greedy-speed 3 [--variants triple-yahtzee yamb]

`--speed N`: seconds per game of bot strong's moves made two ways, N games each after one game to warm up
(the same games, one process): asking the advisor at every decision (`relax.best_move`, the way it played
before) and scoring each turn's card once (`strong_turn.TurnPlanner`, the way it plays). Both make the same
moves (tests/test_strong_turn.py), so the games are the same; both play against the parts' plain sum (the
fitted correction is one more lookup, and fitting it first would take longer than the timing).

`--greedy-speed N`: CPU seconds per game of bot greedy's moves made two ways, N games each after one to warm up
(the same games, one process): every look-ahead figure asked of the engine's hooks (`GreedyBot()`, the way it
played before) and read from the turn's tables (`GreedyBot(rng, GreedyTurns())`, the way `bot:greedy` plays).
Both make the same moves (tests/test_greedy_turn.py), so the games are the same.

Column games (Triple Yahtzee, Yamb, Balut): strong and greedy each play their
games through the game engine (`dicecup simulate --method engine`); the table
gives the mean final score with its standard error, Balut's points too (it ranks
by them), the parts' summed value (the floor: a real strategy's value where no
rule crosses parts) and the corrected estimate the bot plays against. Calibration (Yahtzee, Yatzy): the same
method, with the card split by sections in place of the exact table, against
the exact optimum the solver computes; the target is within 1%. There the
loss of each of the bot's moves is also read from the exact table (`--regret-games`):
its sum per game has a far smaller spread than the score, so it judges the 1% with
fewer games.
Games are split over `--processes` workers, each with its own seed.
"""

from __future__ import annotations

import argparse
import math
import multiprocessing
import random
import time
from concurrent.futures import ProcessPoolExecutor

import numpy as np

from dicecup import Engine
from dicecup.simulate import simulate

COLUMN_GAMES = ("triple-yahtzee", "yamb", "balut")
CALIBRATION = ("yahtzee", "yatzy")


def _play(job: tuple[str, str, int, int]) -> tuple[list[int], list[int]]:
    """(scores, points figure per game) of `games` games of one strategy with one seed."""
    variant_id, strategy, games, seed = job
    v = Engine(entry_points=False).variant(variant_id)
    res = simulate(v, strategy, games, seed, method="engine")
    figure = {b.id: b.figure for b in v.declared_bonuses}
    cols = [i for i, b in enumerate(res.bonus_ids) if figure.get(b) == "points"]
    points = res.bonus_points[:, cols].sum(axis=1) if cols else np.zeros(res.games, dtype=np.int64)
    return res.totals.tolist(), points.tolist()


def _regret(job: tuple[str, int, int]) -> list[float]:
    """Per game of bot strong on a calibration game: the points its moves give up against the optimum, each
    move's loss read from the exact table (`advise`). Their mean is the optimum less the bot's mean, with a
    far smaller spread than the scores'."""
    from dicecup.game.state import GameState
    from dicecup.solver.advice import advise
    from dicecup.solver.cache import load_or_solve
    from dicecup.solver.relax import best_move
    from dicecup.solver.strong import strong_values

    variant_id, games, seed = job
    v = Engine(entry_points=False).variant(variant_id)
    exact, rel = load_or_solve(v)[0], strong_values(v)
    rng = random.Random(seed)
    out = []
    for _ in range(games):
        state, lost = GameState.new(v, 1), 0.0
        while not state.over:
            if state.is_chance:
                state = state.roll(rng)
                continue
            action = best_move(rel, state, rng)
            options = advise(exact, state.card, state.dice, state.rolls_left, state.first_roll, state.situation())
            lost += options[0].value - next(o.value for o in options if o.action == action)
            state = state.apply(action)
        out.append(lost)
    return out


def _run(pool: ProcessPoolExecutor, variant_id: str, strategy: str, games: int, workers: int, seed: int):
    share = [games // workers + (1 if w < games % workers else 0) for w in range(workers)]
    jobs = [(variant_id, strategy, n, seed * 1000 + w) for w, n in enumerate(share) if n]
    start = time.perf_counter()
    scores: list[int] = []
    points: list[int] = []
    for s, p in pool.map(_play, jobs):
        scores += s
        points += p
    return np.array(scores), np.array(points), time.perf_counter() - start


def _speed(variant_id: str, games: int, seed: int) -> tuple[float, float]:
    """(seconds per game by `best_move`, by the turn planner) over `games` games after one to warm each up."""
    from dicecup.game.state import GameState
    from dicecup.solver.relax import best_move
    from dicecup.solver.strong import strong_values
    from dicecup.solver.strong_turn import TurnPlanner

    rel = strong_values(Engine(entry_points=False).variant(variant_id), fitted=False)  # (a correction costs nothing)
    planner = TurnPlanner(rel)
    out = []
    for choose in (lambda s: best_move(rel, s), planner.best_move):
        took = 0.0
        for g in range(games + 1):
            rng, state = random.Random(seed * 1000 + g), GameState.new(rel.variant, 1)
            start = time.perf_counter()
            while not state.over:
                state = state.roll(rng) if state.is_chance else state.apply(choose(state))
            took += (time.perf_counter() - start) if g else 0.0
        out.append(took / games)
    return out[0], out[1]


def _greedy_speed(variant_id: str, games: int, seed: int) -> tuple[float, float]:
    """(CPU seconds per game of greedy from the engine's hooks, from the tables) over `games` games after one
    to warm each up."""
    from dicecup import GreedyBot
    from dicecup.game.state import GameState
    from dicecup.solver.greedy_turn import GreedyTurns

    variant = Engine(entry_points=False).variant(variant_id)
    out = []
    for bot in (GreedyBot(random.Random(seed)), GreedyBot(random.Random(seed), GreedyTurns())):
        took = 0.0
        for g in range(games + 1):
            rng, state = random.Random(seed * 1000 + g), GameState.new(variant, 1)
            start = time.process_time()
            while not state.over:
                state = state.roll(rng) if state.is_chance else state.apply(bot.choose(state))
            took += (time.process_time() - start) if g else 0.0
        out.append(took / games)
    return out[0], out[1]


def _mean_se(x: np.ndarray) -> tuple[float, float]:
    return float(x.mean()), float(x.std(ddof=1) / math.sqrt(len(x))) if len(x) > 1 else float("nan")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=400, help="strong games per variant (default 400)")
    ap.add_argument("--greedy-games", type=int, default=100, help="greedy games per column game (default 100)")
    ap.add_argument("--calibration-games", type=int, default=2000, help="strong games on Yahtzee and Yatzy")
    ap.add_argument(
        "--regret-games", type=int, default=300, help="games on Yahtzee and Yatzy with each move's loss read exactly"
    )
    ap.add_argument("--processes", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--variants", nargs="*", default=[*COLUMN_GAMES, *CALIBRATION])
    ap.add_argument("--speed", type=int, default=0, help="time N games of each way of choosing moves, and stop")
    ap.add_argument(
        "--greedy-speed", type=int, default=0, help="time N games of greedy from the engine and from the tables"
    )
    args = ap.parse_args(argv)
    timings = (
        (args.greedy_speed, _greedy_speed, "engine s/game", "tables s/game"),
        (args.speed, _speed, "advisor s/game", "planner s/game"),
    )
    for games, timer, before, after in timings:
        if games:
            print(f"{'variant':15} {before:>15} {after:>15} {'speed-up':>9}")
            for vid in args.variants:
                old, new = timer(vid, games, args.seed)
                print(f"{vid:15} {old:15.3f} {new:15.3f} {old / new:8.1f}x", flush=True)
            return 0
    from dicecup.solver.cache import load_or_solve
    from dicecup.solver.strong import strong_values

    engine = Engine(entry_points=False)
    made = {}
    for vid in args.variants:  # parts solved and the correction fitted (and cached) before the workers start
        start = time.perf_counter()
        made[vid] = strong_values(engine.variant(vid))
        print(f"{vid}: parts and correction ready in {time.perf_counter() - start:.1f} s", flush=True)
    print(f"{'variant':15} {'strategy':8} {'games':>6} {'mean':>9} {'± SE':>6} {'points':>12} {'s/game':>7}  note")
    # spawned workers: this process may have solved the parts with numba's OpenMP threads, which fork() breaks
    with ProcessPoolExecutor(args.processes, mp_context=multiprocessing.get_context("spawn")) as pool:
        for vid in args.variants:
            v = engine.variant(vid)
            rel = made[vid]
            runs = [("strong", args.games if vid in COLUMN_GAMES else args.calibration_games)]
            if vid in COLUMN_GAMES:
                runs.append(("greedy", args.greedy_games))
            means = {}
            for strategy, games in runs:
                if games <= 0:
                    continue
                scores, points, secs = _run(pool, vid, strategy, games, args.processes, args.seed)
                m, se = _mean_se(scores)
                means[strategy] = (m, se)
                pts = f"{_mean_se(points)[0]:.2f}±{_mean_se(points)[1]:.2f}" if v.figures else ""
                note = ""
                if strategy == "strong":
                    note = f"floor {rel.floor:.2f}, estimate {rel.expected_score:.2f} ({len(rel.parts)} parts)"
                    if vid in CALIBRATION:
                        best = load_or_solve(v)[0].expected_score
                        note += f"; optimum {best:.4f}: {100 * (m / best - 1):+.2f}% ({(m - best) / se:+.1f} SE)"
                print(
                    f"{vid:15} {strategy:8} {games:6d} {m:9.2f} {se:6.2f} {pts:>12} {secs * args.processes / games:7.2f}  {note}",
                    flush=True,
                )
            if vid in CALIBRATION and args.regret_games > 0:
                share = [
                    args.regret_games // args.processes + (w < args.regret_games % args.processes)
                    for w in range(args.processes)
                ]
                jobs = [(vid, n, args.seed * 1000 + w) for w, n in enumerate(share) if n]
                lost = np.array([x for part in pool.map(_regret, jobs) for x in part])
                m, se = _mean_se(lost)
                best = load_or_solve(v)[0].expected_score
                print(
                    f"{'':15} moves' exact loss over {len(lost)} games: {m:.2f} ± {se:.2f} points a game, "
                    f"so {best - m:.2f} ({-100 * m / best:+.2f}% ± {100 * se / best:.2f}%)",
                    flush=True,
                )
            if "greedy" in means:
                (ms, ss), (mg, sg) = means["strong"], means["greedy"]
                print(
                    f"{'':15} strong - greedy: {ms - mg:+.2f} ± {math.hypot(ss, sg):.2f} ({100 * (ms / mg - 1):+.1f}%)"
                )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
