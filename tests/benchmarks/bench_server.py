"""`dicecup serve` under load, over loopback: many tables at once, each a scripted human client (a WebSocket
connection of this process) against a bot the server runs; the latency from a move to its acknowledgement,
and the server's memory. A soak mode watches the memory over a long run; a kill mode kills the server with
SIGKILL mid-load, restarts it, and checks that no acknowledged move was lost.

    .venv/bin/python tests/benchmarks/bench_server.py                     # 200 tables for 60 s
    .venv/bin/python tests/benchmarks/bench_server.py --minutes 30        # the soak: memory must not grow
    .venv/bin/python tests/benchmarks/bench_server.py --kill-after 30     # kill -9 at 30 s, restart, check
    .venv/bin/python tests/benchmarks/bench_server.py --db postgresql://USER@HOST/NAME

Each client plays Yahtzee as a person might: it waits `--think` seconds (0.5x to 1.5x, at random) before
each decision, keeps the dice of its most common face while no box is worth 25, else scores its best box;
when its game ends it creates a new table, so the load goes on for the whole run. The bot (`--bot`, the
exact solver's by default; its tables are prepared before the clients start) moves after `--bot-delay`.
Latency is measured by the client: from sending a move to reading its `ack`, which the server sends once
the move is committed to the database. Memory: the resident size of each process (the server's own, its bots',
its preparer's), sampled as the load runs, and the trend of each.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import psutil
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

MiB = 2**20


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    """The server under test, as a subprocess (its log in a file)."""

    def __init__(self, args: argparse.Namespace, folder: Path) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.db = args.db or f"sqlite:///{folder}/bench.sqlite3"
        self.args = args
        self.folder = folder
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        cmd = [sys.executable, "-m", "dicecup", "serve", "--port", str(self.port), "--db", self.db]
        cmd += ["--bot-delay", str(self.args.bot_delay), "--bot-workers", str(self.args.workers)]
        cmd += ["--max-tables-per-client", "1000000", "--max-connections-per-client", "100000"]
        env = {**os.environ, "DICECUP_DATA_DIR": str(self.folder)}
        log = open(self.folder / "server.log", "ab")
        self.proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"{self.url}/api/health", timeout=2):
                    return
            except OSError:
                time.sleep(0.2)
        raise SystemExit(f"the server did not start: {(self.folder / 'server.log').read_text()[-2000:]}")

    def cpu(self) -> float:
        """CPU seconds the server and its children have used so far."""
        assert self.proc is not None
        try:
            main = psutil.Process(self.proc.pid)
            return sum(sum(p.cpu_times()[:2]) for p in [main, *main.children(recursive=True)])
        except psutil.Error:
            return 0.0

    def memory(self) -> dict[str, int]:
        """Resident bytes of each process: the server's own (`server`) and its children by name (the bots'
        `dicecup-bots-N`, `dicecup-prepare`, and multiprocessing's `resource-tracker`)."""
        assert self.proc is not None
        sizes: dict[str, int] = {}
        try:
            main = psutil.Process(self.proc.pid)
            sizes["server"] = main.memory_info().rss
            for child in main.children(recursive=True):
                try:
                    name = child.name()
                    if name.startswith("python"):
                        name = "resource-tracker" if "resource_tracker" in " ".join(child.cmdline()) else name
                    sizes[name] = sizes.get(name, 0) + child.memory_info().rss
                except psutil.Error:
                    continue
        except psutil.Error:
            pass
        return sizes

    def kill(self) -> None:
        assert self.proc is not None
        for child in psutil.Process(self.proc.pid).children(recursive=True):
            child.kill()
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(30)


def post(url: str, body: dict[str, Any]) -> tuple[int, Any]:
    req = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=60) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=60) as answer:
        return json.loads(answer.read())


def choose(game: dict[str, Any]) -> list[Any]:
    """Keep the most common face while no box is worth 25 and rolls are left; else score the best box."""
    best = max(game["legal"].items(), key=lambda kv: kv[1]["points"], default=None)
    if best is None:
        return game["rule_actions"][0]["move"]
    counts = collections.Counter(game["dice"])
    face, count = max(counts.items(), key=lambda fc: (fc[1], fc[0]))
    if game["rolls_left"] > 0 and game["may_reroll"] and best[1]["points"] < 25 and count < len(game["dice"]):
        return ["keep", [face] * count]
    return ["score", best[0]]


class Stats:
    def __init__(self) -> None:
        self.latencies: list[float] = []
        self.acked: list[tuple[str, int, list[Any], int]] = []  # (table, at, move, ack seq)
        self.errors: collections.Counter[str] = collections.Counter()
        self.games = 0
        self.tables: set[str] = set()
        self.cpu = 0.0  # the server's CPU seconds at the start of the measure (negated)
        self.cpu_end = 0.0


async def play_tables(
    server: Server, args: argparse.Namespace, stats: Stats, stop: asyncio.Event, rng: random.Random
) -> None:
    """One client: a table after another until `stop` is set."""
    ws_url = server.url.replace("http", "ws") + "/ws"
    while not stop.is_set():
        body = {
            "variant": args.variant,
            "seats": [{"player": "human", "name": "client", "mine": True}, {"player": args.bot}],
        }
        status, made = await asyncio.to_thread(post, f"{server.url}/api/tables", body)
        if status != 201:
            stats.errors[f"create {status}"] += 1
            await asyncio.sleep(1)
            continue
        code, token = made["code"], made["tokens"][0]["token"]
        stats.tables.add(code)
        try:
            await play_one(ws_url, code, token, args, stats, stop, rng)
        except (ConnectionClosed, InvalidStatus, OSError):
            if not stop.is_set():
                stats.errors["connection lost"] += 1
            return


async def play_one(
    ws_url: str, code: str, token: str, args: argparse.Namespace, stats: Stats, stop: asyncio.Event, rng: random.Random
) -> None:
    sent: dict[str, tuple[float, int, list[Any]]] = {}
    asked = -1
    async with connect(ws_url, max_size=None) as ws:
        await ws.send(json.dumps({"type": "hello", "v": 1, "table": code, "tokens": [token]}))
        async for text in ws:
            message = json.loads(text)
            kind = message["type"]
            if kind == "ack":
                began, at, move = sent.pop(message["id"])
                stats.latencies.append(time.perf_counter() - began)
                stats.acked.append((code, at, move, message["seq"]))
            elif kind == "error":
                stats.errors[message["code"]] += 1
            elif kind in ("welcome", "update", "state"):
                game = message["game"]
                if game["status"] == "over":
                    stats.games += 1
                    return
                if game["to_move"] == 0 and game["seq"] != asked and not stop.is_set():
                    asked = game["seq"]
                    await asyncio.sleep(args.think * rng.uniform(0.5, 1.5))
                    move = choose(game)
                    msg_id = f"{code}:{game['seq']}"
                    sent[msg_id] = (time.perf_counter(), game["seq"], move)
                    await ws.send(
                        json.dumps({"type": "move", "seat": 0, "at": game["seq"], "move": move, "id": msg_id})
                    )
            if stop.is_set() and not sent:
                return


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


async def run(server: Server, args: argparse.Namespace, seconds: float) -> tuple[Stats, list[tuple[float, int]]]:
    """The load for `seconds` (or until the kill), with the server's memory sampled as it goes."""
    stats, stop, rng = Stats(), asyncio.Event(), random.Random(args.seed)
    clients = []
    for _ in range(args.tables):  # started over a few seconds, as people arrive
        clients.append(asyncio.create_task(play_tables(server, args, stats, stop, random.Random(rng.random()))))
        await asyncio.sleep(args.ramp / args.tables)
    samples: list[tuple[float, dict[str, int]]] = []
    began = time.monotonic()
    stats.cpu = -server.cpu()
    end = began + seconds
    killed = False
    while time.monotonic() < end:
        await asyncio.sleep(min(args.sample, max(0.0, end - time.monotonic())))
        samples.append((time.monotonic() - began, server.memory()))
        stats.cpu_end = server.cpu()
        if args.kill_after is not None and not killed and time.monotonic() - began >= args.kill_after:
            server.kill()
            killed = True
            break
        if args.minutes:
            at, sizes = samples[-1]
            each = ", ".join(f"{name} {rss / MiB:.1f}" for name, rss in sorted(sizes.items()))
            print(
                f"  {at / 60:5.1f} min: {sum(sizes.values()) / MiB:6.1f} MiB ({each}), "
                f"{len(stats.latencies)} moves, {stats.games} games",
                flush=True,
            )
    stop.set()
    await asyncio.wait(clients, timeout=30)
    return stats, samples


def check_acknowledged(server: Server, stats: Stats) -> tuple[int, list[str]]:
    """Every acknowledged move is in its table's stored history, at its place: (moves checked, problems)."""
    problems = []
    by_table: dict[str, list[tuple[int, list[Any], int]]] = collections.defaultdict(list)
    for code, at, move, seq in stats.acked:
        by_table[code].append((at, move, seq))
    for code, moves in by_table.items():
        history = saved_history(f"{server.url}/api/tables/{code}/save")
        for at, move, seq in moves:
            if len(history) < seq or history[at] != move:
                problems.append(f"{code}: the move acknowledged at {at} ({move}) is not stored")
    return len(stats.acked), problems


def saved_history(url: str) -> list[Any]:
    """A table's stored moves, from its save (a journal: a line per move, in order), asked for at the pace
    the server's rate limit allows."""
    while True:
        try:
            with urllib.request.urlopen(url, timeout=60) as answer:
                lines = [json.loads(line) for line in answer.read().splitlines()]
                return [r["move"] for r in lines if "move" in r]
        except urllib.error.HTTPError as exc:
            if exc.code != 429:
                raise
            time.sleep(float(exc.headers.get("retry-after", "1")))


def report(stats: Stats, samples: list[tuple[float, dict[str, int]]], seconds: float, args: argparse.Namespace) -> None:
    ms = [x * 1000 for x in stats.latencies]
    print(f"tables at once: {args.tables}; tables played: {len(stats.tables)}; games finished: {stats.games}")
    print(f"moves acknowledged: {len(ms)} ({len(ms) / max(seconds, 1e-9):.1f} a second)")
    if ms:
        print(
            f"move -> ack latency (ms): p50 {percentile(ms, 0.5):.1f}  p90 {percentile(ms, 0.9):.1f}  "
            f"p99 {percentile(ms, 0.99):.1f}  max {max(ms):.1f}  mean {statistics.fmean(ms):.1f}"
        )
    if samples:
        names = sorted({name for _, sizes in samples for name in sizes}, key=lambda n: (n != "server", n))
        print("memory (RSS, MiB; the trend: the median of the run's last tenth against its second tenth's):")
        for name in [*names, "all"]:
            rss = [sum(sizes.values()) if name == "all" else sizes.get(name, 0) for _, sizes in samples]
            line = f"  {name:>16}: first {rss[0] / MiB:6.1f}  peak {max(rss) / MiB:6.1f}  last {rss[-1] / MiB:6.1f}"
            if len(rss) >= 10:
                tenth = max(1, len(rss) // 10)
                early = statistics.median(rss[tenth : 2 * tenth])
                late = statistics.median(rss[-tenth:])
                if early:
                    line += f"  trend {early / MiB:6.1f} -> {late / MiB:6.1f} ({(late - early) / early * 100:+.1f}%)"
            print(line)
    used = stats.cpu_end + stats.cpu
    print(
        f"server CPU (with its bots' processes): {used:.1f} s in {seconds:.0f} s ({used / seconds * 100:.0f}% of a core), "
        f"{used / max(len(ms), 1) * 1000:.1f} ms per acknowledged move; machine load average {os.getloadavg()[0]:.1f} "
        f"on {os.cpu_count()} cores"
    )
    print(f"errors: {dict(stats.errors) or 'none'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=200, help="tables played at once")
    parser.add_argument("--seconds", type=float, default=60.0, help="how long the load runs")
    parser.add_argument("--minutes", type=float, default=None, help="the soak: run this many minutes instead")
    parser.add_argument("--think", type=float, default=1.0, help="a client's mean seconds before each decision")
    parser.add_argument("--bot-delay", type=float, default=1.0, help="the server's --bot-delay")
    parser.add_argument("--bot", default="bot:optimal", help="the bot at every table")
    parser.add_argument("--variant", default="yahtzee")
    parser.add_argument("--workers", type=int, default=1, help="the server's --bot-workers")
    parser.add_argument("--db", default=None, help="a PostgreSQL URL (default: a SQLite file in a temporary folder)")
    parser.add_argument(
        "--kill-after", type=float, default=None, help="kill -9 the server this many seconds in, then check"
    )
    parser.add_argument("--ramp", type=float, default=10.0, help="seconds over which the clients arrive")
    parser.add_argument("--sample", type=float, default=5.0, help="seconds between memory samples")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    seconds = args.minutes * 60 if args.minutes else args.seconds
    with tempfile.TemporaryDirectory(prefix="dicecup-bench-") as tmp:
        server = Server(args, Path(tmp))
        server.start()
        print(f"preparing {args.bot} for {args.variant}...", flush=True)
        prepared = time.monotonic()
        while True:
            status, answer = post(
                f"{server.url}/api/tables",
                {"variant": args.variant, "seats": [{"player": "human"}, {"player": args.bot}]},
            )
            if status == 201 or time.monotonic() - prepared > 900:
                break
            time.sleep(2)
        print(
            f"load: {args.tables} tables, think {args.think} s, bot delay {args.bot_delay} s, {seconds:.0f} s, db {server.db.split(':')[0]}",
            flush=True,
        )
        began = time.monotonic()
        try:
            stats, samples = asyncio.run(run(server, args, seconds))
            took = time.monotonic() - began - args.ramp
            report(stats, samples, max(took, 1.0), args)
            if args.kill_after is not None:
                server.start()
                checked, problems = check_acknowledged(server, stats)
                print(f"after kill -9 and a restart: {checked} acknowledged moves checked, {len(problems)} lost")
                for line in problems[:20]:
                    print("  " + line)
        finally:
            server.stop()
        log = (Path(tmp) / "server.log").read_text()
        if "Traceback" in log:
            print("the server logged a traceback:\n" + log[-3000:])


if __name__ == "__main__":
    main()
