"""The tables the web game's bots and hints need, prepared ahead in one worker process the server can stop.

A request never solves: the server offers a fixed list of bots (`PAGE_BOTS`, narrowed by `--bots`), asks the
worker at start-up to prepare the tables they and the hints need for every variant it offers, and answers a
game that needs a table with it ready (loaded from the cache in a moment), still being prepared (503, try
again), or not to be had here (the reason: too large for this server, a variant the solver does not model).
The worker is a separate process, so a long solve never holds a request, and shutting the server down ends it
at once, mid-computation.
"""

from __future__ import annotations

import multiprocessing
import threading
from typing import Any

from dicecup import DicecupError, Engine, GameState, Keep, Variant
from dicecup.errors import bounded_line

PAGE_BOTS = ("greedy", "random", "optimal", "strong")  # every bot the page can offer; no other kind is taken
DEFAULT_BOTS = ("greedy", "random", "optimal")  # bot:strong's first fit takes many minutes: offered on request
TABLE_JOBS = {"optimal": "exact", "strong": "strong"}  # a bot and the job that prepares what it plays from
DEFAULT_MAX_STATES = 4_000_000  # every built-in variant but Maxi Yatzy, each solved in seconds

PENDING, READY, FAILED = "pending", "ready", "failed"

#: one piece of preparation: (job, variant id, the variant file or None, options as sorted pairs)
Job = tuple[str, str, str | None, tuple[tuple[str, Any], ...]]


def job(kind: str, variant: Variant, file: str | None) -> Job:
    """The job preparing `kind` ("exact", "strong" or "hints") for `variant` with its options."""
    return (kind, variant.id, file, tuple(sorted(variant.options.items())))


def describe(item: Job) -> str:
    """A job's variant in words for a message: `yahtzee`, `maxi-yatzy (saved_rolls=False)`."""
    _, vid, _, options = item
    return vid + (f" ({', '.join(f'{k}={v}' for k, v in options)})" if options else "")


# ---------------------------------------------------------------------------- in the worker process


def work(item: Job, max_states: int) -> str:
    """Prepare one job's tables (in the worker: solved or fitted, and cached); what the hints are ("exact" or
    "estimate") for a hints job, "" otherwise. A DicecupError says why the tables cannot be had."""
    from dicecup.solver import StateSpaceTooLarge, check_solvable, load_or_solve
    from dicecup.solver.cache import load
    from dicecup.solver.relax import check_relaxable
    from dicecup.solver.strong import strong_values

    kind, vid, file, options = item
    engine = Engine()
    variant = engine.load_file(file, dict(options)) if file else engine.variant(vid, dict(options))
    if kind in ("exact", "hints"):
        try:
            check_solvable(variant)
            load_or_solve(variant, max_states, None)
            load(variant, max_states=max_states)  # what the server will read: the cache must hold it
            return "exact"
        except (StateSpaceTooLarge, DicecupError) as exc:
            if kind == "exact":
                raise
            try:
                check_relaxable(variant)
            except DicecupError:
                raise exc from None
    strong_values(variant, fitted=kind == "strong")
    return "estimate"


def serve(jobs: Any, results: Any, max_states: int) -> None:
    """The worker: prepare each job received on `jobs`, and send back on `results` (job, True, what) or (job,
    False, why) for each (two one-way pipes: no queue, no lock a stopped worker could leave behind)."""
    while True:
        try:
            item = jobs.recv()
        except EOFError:  # the server has gone
            return
        if item is None:
            return
        try:
            results.send((item, True, work(item, max_states)))
        except DicecupError as exc:
            results.send((item, False, bounded_line(str(exc)).splitlines()[0]))
        except Exception as exc:  # a bug or a resource running out: said, and the worker goes on
            results.send((item, False, f"preparing failed ({type(exc).__name__}: {bounded_line(str(exc))[:200]})"))


# ---------------------------------------------------------------------------- in the server


class Preparer:
    """The worker process and what it has prepared: each job pending, ready (with what it made) or failed."""

    def __init__(self, max_states: int = DEFAULT_MAX_STATES) -> None:
        context = multiprocessing.get_context("spawn")  # never fork a server with threads
        jobs, self.jobs = context.Pipe(duplex=False)
        self.results, results = context.Pipe(duplex=False)
        self.process = context.Process(
            target=serve, args=(jobs, results, max_states), name="dicecup-tables", daemon=True
        )
        self.status: dict[Job, tuple[str, str]] = {}
        self.lock = threading.Lock()
        self.closed = False
        self.process.start()
        jobs.close()  # the worker's ends: this process keeps its own
        results.close()
        threading.Thread(target=self._collect, name="dicecup-tables-results", daemon=True).start()

    def ask(self, item: Job) -> tuple[str, str]:
        """(PENDING, ""), (READY, what it made) or (FAILED, why) of a job; a job never asked is sent now."""
        with self.lock:
            got = self.status.get(item)
            if got is None:
                if self.closed or not self.process.is_alive():
                    return FAILED, "the worker that prepares tables has stopped; restart the server"
                try:
                    self.jobs.send(item)
                except OSError:
                    return FAILED, "the worker that prepares tables has stopped; restart the server"
                got = self.status[item] = (PENDING, "")
            return got

    def _collect(self) -> None:
        """Record each result as it comes; if the worker dies, every job still pending fails with the reason."""
        while not self.closed:
            try:
                if not self.results.poll(0.5):
                    continue
                item, ok, text = self.results.recv()
            except (EOFError, OSError):  # the worker has stopped (or the server is closing)
                why = f"the worker that prepares tables stopped (exit code {self.process.exitcode}); restart the server"
                with self.lock:
                    for key, (state, _) in self.status.items():
                        if state == PENDING:
                            self.status[key] = (FAILED, why)
                return
            with self.lock:
                self.status[item] = (READY, text) if ok else (FAILED, text)

    def close(self) -> None:
        """Stop the worker at once, mid-computation if it is computing (what it finished stays cached)."""
        self.closed = True
        if self.process.is_alive():
            self.process.terminate()
            self.process.join(5)
            if self.process.is_alive():
                self.process.kill()
                self.process.join(5)
        self.jobs.close()
        self.results.close()


# ---------------------------------------------------------------------------- hints


class Adviser:
    """Hints for one variant, from tables prepared ahead: the exact solver's advice ("exact"), or beyond it an
    estimate that values the rest of the card as the sum of its parts (columns or sections), each solved
    exactly ("estimate"; bot strong's fitted correction is left out, as fitting it takes many minutes)."""

    def __init__(self, variant: Variant, source: str) -> None:
        from dicecup.solver import DEFAULT_MAX_STATES as SOLVER_MAX_STATES
        from dicecup.solver import load_or_solve
        from dicecup.solver.strong import strong_values

        self.source = source
        if source == "exact":
            self.values: Any = load_or_solve(variant, SOLVER_MAX_STATES, None)[0]
        else:
            self.values = strong_values(variant, fitted=False)

    def hint(self, state: GameState, label: Any, options_shown: int) -> dict[str, Any]:
        """The recommended move and the best few options, each with the expected final score after it
        (`label(state, action)` writes a move in words)."""
        from dicecup.game.actions import action_to_json
        from dicecup.solver.advice import advise, advise_state
        from dicecup.solver.relax import best_move

        if self.source == "exact":
            options = advise_state(self.values, state)
            best = options[0].action
        else:
            args = (state.card, state.dice, state.rolls_left, state.first_roll, state.situation())
            options = [o for o in advise(self.values, *args) if state.may_reroll() or not isinstance(o.action, Keep)]
            best = best_move(self.values, state)
        return {
            "source": self.source,
            "best": {"move": action_to_json(best), "label": label(state, best)},
            "options": [
                {"move": action_to_json(o.action), "label": label(state, o.action), "value": round(o.value, 2)}
                for o in options[:options_shown]
            ],
        }


def hint_source(variant: Variant) -> str | None:
    """Where hints for `variant` would come from ("exact", "estimate"), or None when there can be none."""
    from dicecup.solver import check_solvable
    from dicecup.solver.relax import check_relaxable

    for source, check in (("exact", check_solvable), ("estimate", check_relaxable)):
        try:
            check(variant)
        except DicecupError:
            continue
        return source
    return None
