"""Bots think in child processes, never on the server's event loop.

A bot's move can take tens of milliseconds of pure Python, and preparing its tables (a solve, a fit)
minutes: in the server's own process either would stall every table. So the moves are computed by
`Workers.movers` (a table always goes to the same one, which keeps its replayed state and its bots
warm), and tables are prepared by one more process, `preparer`. Stopping the server kills them at
once, mid-computation or not.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import multiprocessing
import os
import signal
import sys
import threading
import zlib
from collections import OrderedDict
from collections.abc import Sequence
from multiprocessing.connection import Connection
from typing import Any

from ..errors import DicecupError
from ..game.actions import action_from_json, action_to_json
from ..game.state import GameState
from ..language.engine import Engine
from ..language.model import Variant
from ..locales import DEFAULT, Catalogs

__all__ = ["Workers", "WorkerFailed", "VariantRef", "load_variant"]

log = logging.getLogger("dicecup.server")
KEEP = 256  # tables (their states and bots) one mover keeps warm; the least recent is dropped
DRILLS_KEPT = 32  # trainers' seeds whose drills one mover keeps
GRADE_OPTIONS = 3  # options a trainer's grade lists, best first

#: how a table names its variant: (id, source file or None, options)
VariantRef = tuple[str, "str | None", dict[str, Any]]


class WorkerFailed(Exception):
    """A bot could not move or its tables could not be prepared (says why), or its process died."""


def load_variant(engine: Engine, ref: VariantRef) -> Variant:
    """The compiled variant a table names (DicecupError when it cannot be built any more)."""
    vid, source, options = ref
    return engine.load_file(source, options) if source else engine.variant(vid, options)


class Bench:
    """What one worker process keeps: compiled variants, tables' states and their bots (each bounded)."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.variants: OrderedDict[str, Variant] = OrderedDict()
        self.states: OrderedDict[str, tuple[GameState, int]] = OrderedDict()  # by table: its state and undos
        self.bots: OrderedDict[tuple[str, int, str], Any] = OrderedDict()
        self.drills: OrderedDict[tuple[str, int], Any] = OrderedDict()  # a trainer's seeds' drills
        self.values: OrderedDict[tuple[str, str], Any] = OrderedDict()  # a hint bot's values, by variant
        self.catalogs = Catalogs()

    def variant(self, ref: VariantRef) -> Variant:
        key = repr((ref[0], ref[1], sorted(ref[2].items())))
        if key not in self.variants:
            self.variants[key] = load_variant(self.engine, ref)
        self.variants.move_to_end(key)
        _trim(self.variants, 64)
        return self.variants[key]

    def state(
        self, code: str, ref: VariantRef, players: Sequence[str], moves: Sequence[Any], undos: int = 0
    ) -> GameState:
        """The table's state after `moves`: the kept one moved on when it is a prefix (kept at the same count of
        the table's `undos`: an undo may change moves before its end), else replayed."""
        state, kept_undos = self.states.pop(code, (None, undos))
        if state is None or kept_undos != undos or len(state.history) > len(moves) or state.players != tuple(players):
            state = GameState.new(self.variant(ref), list(players))
        for move in moves[len(state.history) :]:
            state = state.apply(action_from_json(move))
        self.states[code] = (state, undos)
        _trim(self.states, KEEP)
        return state

    def choose(self, job: dict[str, Any]) -> list[Any]:
        """A bot's move at a table: `{code, seat, spec, variant, players, moves}`."""
        state = self.state(job["code"], job["variant"], job["players"], job["moves"], job.get("undos", 0))
        key = (job["code"], job["seat"], job["spec"])
        bot = self.bots.pop(key, None) or self.engine.make_bot(job["spec"])
        self.bots[key] = bot
        _trim(self.bots, KEEP)
        if state.over or state.is_chance or state.current != job["seat"]:
            raise WorkerFailed(f"it is not bot {job['spec']}'s decision at table {job['code']}")
        return action_to_json(bot.choose(state))

    def review(self, job: dict[str, Any]) -> dict[str, Any]:
        """A table's game reviewed against the exact solver (`solver.review`, as `dicecup review --json` gives it):
        `{code, variant, players, moves, kinds}`; the solver's table is loaded from the cache (the server has it
        prepared first)."""
        from ..solver.cache import load_or_solve
        from ..solver.review import review, review_json

        state = self.state(job["code"], job["variant"], job["players"], job["moves"], job.get("undos", 0))
        solution, _ = load_or_solve(state.variant)
        return review_json(review(solution, state), job["kinds"], state.match_totals())

    def drill(self, job: dict[str, Any]) -> dict[str, Any]:
        """A trainer's drill (`server.training`): `{variant, seed, k, day}` -> the moves that lead to it, its
        importance and the decisions of a game; `day` (ISO date, or null) asks for that day's puzzle."""
        import datetime

        from ..solver.cache import load_or_solve
        from ..solver.training import Drills, daily_seed

        v = self.variant(job["variant"])
        solution, _ = load_or_solve(v)
        if job["day"] is not None:
            drills = Drills(solution, daily_seed(v.fingerprint, datetime.date.fromisoformat(job["day"])))
            drill = drills.hardest()
        else:
            key = (v.fingerprint, job["seed"])
            drills = self.drills.pop(key, None) or Drills(solution, job["seed"])
            self.drills[key] = drills
            _trim(self.drills, DRILLS_KEPT)
            drill = drills.pick(job["k"])
        moves = [action_to_json(a) for a in drill.state.history]
        return {"moves": moves, "importance": drill.importance, "per_game": drills.per_game}

    def grade(self, job: dict[str, Any]) -> dict[str, Any]:
        """A trainer's grade (`server.training`): `{variant, moves, move, lang}` -> the review's loss of `move` at
        the position `moves` lead to, the best options (moves as JSON: the server words them) and why the best is
        best (in language `lang`)."""
        from ..solver.advice import advise_state
        from ..solver.cache import load_or_solve
        from ..solver.explain import explain_options
        from ..solver.training import grade

        state = GameState.new(self.variant(job["variant"]), ["you"])
        for raw in job["moves"]:
            state = state.apply(action_from_json(raw))
        solution, _ = load_or_solve(state.variant)
        d = grade(solution, state, action_from_json(job["move"]))
        options = advise_state(solution, state)
        lang = job.get("lang", DEFAULT)
        with self.catalogs.speaking(lang):
            named = state.variant.in_language(lang)
            why = explain_options(named, state.card, state.dice, state.rolls_left, options, solution.graph,
                                  state.first_roll)  # fmt: skip

        def option(action: Any, value: float) -> dict[str, Any]:
            return {"move": action_to_json(action), "expected_score": value, "loss": max(0.0, d.best.value - value)}

        return {
            "loss": d.loss,
            "optimal": d.optimal,
            "played": option(d.chosen.action, d.chosen.value),
            "best": option(d.best.action, d.best.value),
            "options": [option(o.action, o.value) for o in options[:GRADE_OPTIONS]],
            "explanation": why.to_json(),
        }

    def explain(self, job: dict[str, Any]) -> dict[str, Any]:
        """Why the best move now is best (`solver.explain`), by the values of hint bot `spec` (optimal: the exact
        solver's, strong: bot strong's), in language `lang`: `{code, spec, lang, variant, players, moves}`."""
        from ..solver.advice import advise
        from ..solver.explain import explain_options

        state = self.state(job["code"], job["variant"], job["players"], job["moves"], job.get("undos", 0))
        if state.over or state.is_chance:
            raise WorkerFailed(f"no decision to explain at table {job['code']}")
        values = self._values(state.variant, job["spec"])
        options = advise(values, state.card, state.dice, state.rolls_left, state.first_roll)
        with self.catalogs.speaking(job.get("lang", DEFAULT)):
            named = state.variant.in_language(job.get("lang", DEFAULT))
            told = explain_options(
                named, state.card, state.dice, state.rolls_left, options, values.graph, state.first_roll
            )
        return told.to_json()

    def _values(self, variant: Variant, spec: str) -> Any:
        """The table of values hint bot `spec` plays by (prepared by the server before it is asked), kept."""
        key = (variant.fingerprint, spec)
        got = self.values.pop(key, None)
        if got is None:
            if spec == "optimal":
                from ..solver.cache import load_or_solve

                got = load_or_solve(variant)[0]
            elif spec == "strong":
                from ..solver.strong import strong_values

                got = strong_values(variant)
            else:
                raise WorkerFailed(f"bot:{spec} has no values to explain a move by")
        self.values[key] = got
        _trim(self.values, 8)
        return got

    def prepare(self, job: dict[str, Any]) -> None:
        """Build (or load) what a bot needs for a variant, by having it choose once: `{spec, variant, players}`."""
        import random

        variant = self.variant(job["variant"])
        state = GameState.new(variant, [f"p{i}" for i in range(job["players"])]).roll(random.Random(0))
        self.engine.make_bot(job["spec"], random.Random(0)).choose(state)


def _trim(cache: OrderedDict[Any, Any], size: int) -> None:
    while len(cache) > size:
        cache.popitem(last=False)


def _die_with_parent() -> None:
    """On Linux, be killed when the server dies, even by SIGKILL mid-computation (elsewhere: when the pipe closes),
    and go by the worker's name (`dicecup-bots-0`, `dicecup-prepare`) in ps, top and /proc, not as `python`."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        libc.prctl(15, multiprocessing.current_process().name.encode()[:15])  # PR_SET_NAME
    except (OSError, AttributeError):
        return
    if os.getppid() == 1:  # the server died before the call: nobody to work for
        os._exit(0)


def serve_jobs(jobs: Connection, results: Connection, engine: Engine) -> None:
    """A worker process's life: answer each job `(id, kind, payload)` with `(id, ok, result or message)`."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the whole group: the server stops us itself
    _die_with_parent()
    bench = Bench(engine)
    while True:
        try:
            job_id, kind, payload = jobs.recv()
        except (EOFError, OSError):  # the server is gone
            return
        try:
            out: list[Any] | dict[str, Any] | None = None
            if kind == "choose":
                out = bench.choose(payload)
            elif kind in ("review", "drill", "grade", "explain"):
                out = getattr(bench, kind)(payload)
            else:
                bench.prepare(payload)
            results.send((job_id, True, out))
        except (DicecupError, WorkerFailed) as exc:
            results.send((job_id, False, str(exc)))
        except Exception as exc:  # a bot's own fault: reported, the process goes on
            results.send((job_id, False, f"{type(exc).__name__}: {exc}"))


class Worker:
    """One child process and the jobs waiting on it; restarted when it dies."""

    def __init__(self, engine: Engine, name: str) -> None:
        self.engine = engine
        self.name = name
        self.pending: dict[int, asyncio.Future[Any]] = {}
        self.ids = itertools.count(1)
        self.process: Any = None
        self.jobs: Connection | None = None

    def start(self, loop: asyncio.AbstractEventLoop) -> None:
        ctx = multiprocessing.get_context("spawn")
        job_out, job_in = ctx.Pipe(duplex=False)
        result_out, result_in = ctx.Pipe(duplex=False)
        self.process = ctx.Process(
            target=serve_jobs, args=(job_out, result_in, self.engine), name=self.name, daemon=True
        )
        self.process.start()
        job_out.close()
        result_in.close()
        self.jobs = job_in
        threading.Thread(target=self._read, args=(result_out, loop, self.process), daemon=True).start()

    def _read(self, results: Connection, loop: asyncio.AbstractEventLoop, process: Any) -> None:
        """The thread that hands results back to the event loop (and fails the jobs when the process dies)."""
        while True:
            try:
                job_id, ok, out = results.recv()
            except (EOFError, OSError):
                break
            loop.call_soon_threadsafe(self._settle, job_id, ok, out)
        results.close()
        loop.call_soon_threadsafe(self._died, process)

    def _settle(self, job_id: int, ok: bool, out: Any) -> None:
        future = self.pending.pop(job_id, None)
        if future is not None and not future.done():
            future.set_result(out) if ok else future.set_exception(WorkerFailed(out))

    def _died(self, process: Any) -> None:
        if process is not self.process:
            return
        for future in self.pending.values():
            if not future.done():
                future.set_exception(WorkerFailed(f"the bots' process {self.name} stopped"))
        self.pending.clear()
        self.process = None

    async def run(self, kind: str, payload: dict[str, Any]) -> Any:
        loop = asyncio.get_running_loop()
        if self.process is None or not self.process.is_alive():
            self.start(loop)
        job_id = next(self.ids)
        future: asyncio.Future[Any] = loop.create_future()
        self.pending[job_id] = future
        assert self.jobs is not None
        try:
            self.jobs.send((job_id, kind, payload))
        except OSError as exc:
            self.pending.pop(job_id, None)
            raise WorkerFailed(f"the bots' process {self.name} cannot take work: {exc}") from None
        return await future

    def stop(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.join(5)
            self.process = None
        if self.jobs is not None:
            self.jobs.close()
            self.jobs = None


class Workers:
    """The movers and the preparer, started on first use and killed by `stop`."""

    def __init__(self, engine: Engine, movers: int) -> None:
        self.movers = [Worker(engine, f"dicecup-bots-{i}") for i in range(movers)]
        self.preparer = Worker(engine, "dicecup-prepare")

    async def choose(self, job: dict[str, Any]) -> list[Any]:
        """A bot's move (JSON) for `job` (see `Bench.choose`); WorkerFailed saying why not."""
        worker = self.movers[zlib.crc32(job["code"].encode()) % len(self.movers)]
        move: list[Any] = await worker.run("choose", job)
        return move

    async def review(self, job: dict[str, Any]) -> dict[str, Any]:
        """A table's review (see `Bench.review`), by the process that moves its bots (it holds the table warm)."""
        worker = self.movers[zlib.crc32(job["code"].encode()) % len(self.movers)]
        got: dict[str, Any] = await worker.run("review", job)
        return got

    async def drill(self, job: dict[str, Any]) -> dict[str, Any]:
        """A trainer's drill (see `Bench.drill`), by the mover its seed falls to."""
        got: dict[str, Any] = await self._mover(str(job["seed"])).run("drill", job)
        return got

    async def grade(self, job: dict[str, Any]) -> dict[str, Any]:
        """A trainer's grade (see `Bench.grade`)."""
        got: dict[str, Any] = await self._mover(str(len(job["moves"]))).run("grade", job)
        return got

    def _mover(self, key: str) -> Worker:
        return self.movers[zlib.crc32(key.encode()) % len(self.movers)]

    async def explain(self, job: dict[str, Any]) -> dict[str, Any]:
        """Why the best move is best (see `Bench.explain`), by the process that moves the table's bots."""
        worker = self.movers[zlib.crc32(job["code"].encode()) % len(self.movers)]
        got: dict[str, Any] = await worker.run("explain", job)
        return got

    async def prepare(self, job: dict[str, Any]) -> None:
        """Build a bot's tables for a variant (see `Bench.prepare`), one preparation at a time."""
        await self.preparer.run("prepare", job)

    def stop(self) -> None:
        for worker in [*self.movers, self.preparer]:
            worker.stop()
