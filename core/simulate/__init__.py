"""Simulation: many solitaire games under one strategy, and the statistics of their scores.

`simulate(variant, strategy, games, seed)` returns a `SimResult` (per-game arrays); `summarize` turns it,
through its exact `Tally`, into every reported figure. Every game depends only on the seed and its number,
so a run can be played in ranges (`simulate_range`) whose tallies merge into the whole run's, whatever the
split. Two simulators give the same result type: `batched` plays thousands of games at once from tables
built from the variant's own scoring, and `engine` plays game by game through `GameState` (the reference
the batched one is tested against); any solitaire bot the engine registers plays through the latter.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from ..errors import DicecupError, TooLarge, shown
from ..language.model import Variant
from ..locales import N_, NP_, Phrase
from ..progress import Reporter, task
from .result import SimResult
from .stats import describe, histogram, summarize
from .tally import Tally, TallyError, merge, tally_of

__all__ = [
    "STRATEGIES",
    "METHODS",
    "RANGE_PIECE",
    "SimResult",
    "Tally",
    "TallyError",
    "describe",
    "histogram",
    "merge",
    "simulate",
    "simulate_range",
    "summarize",
    "tally_of",
    "check_run",
    "check_strategy",
    "check_size",
    "prepare",
    "strategy_name",
    "MAX_ENGINE_SECONDS",
    "MAX_RESULT_GAMES",
]

STRATEGIES = ("optimal", "strong", "greedy", "random")
MAX_ENGINE_SECONDS = 3600.0
"""A run the engine simulator would take longer than this for (by its first game's time) is refused."""
METHODS = ("auto", "batched", "engine")


#: the progress label of a simulation (the cluster's says where it runs)
SIMULATING = NP_(
    "simulating {games} game of {variant} ({strategy})", "simulating {games} games of {variant} ({strategy})"
)


def strategy_name(strategy: str) -> str:
    """A strategy as results name it: `bot:NAME` is NAME (`bot:optimal` is `optimal`)."""
    return strategy[4:] if isinstance(strategy, str) and strategy.startswith("bot:") else strategy


def _fast(strategy: str) -> bool:
    """Whether the simulator plays this (named) strategy itself, without asking the bot registry."""
    return strategy in STRATEGIES or strategy.startswith("risk:")


def _engine(engine: Any) -> Any:
    """The engine whose bots a strategy names: the one given, else one with the installed plugins."""
    if engine is not None:
        return engine
    from ..language.engine import Engine

    return Engine()


def check_strategy(strategy: str, engine: Any = None) -> str:
    """The strategy's name (`strategy_name`), or a DicecupError saying what is wrong: `risk:THETA` (the exact
    solver's strategy for that exponential utility) has its theta read; any other name must be a bot of the
    engine's registry that plays solitaire."""
    if not isinstance(strategy, str):
        raise DicecupError(
            Phrase(
                N_("unknown strategy {strategy}; strategies: {strategies}, risk:THETA"),
                strategy=shown(strategy),
                strategies=", ".join(STRATEGIES),
            )
        )
    name = strategy_name(strategy)
    if name.startswith("risk:"):
        from ..numeric.objective import risk_objective

        risk_objective(name[5:], f"strategy {shown(strategy)}")
        return name
    if name in STRATEGIES:
        return name
    eng = _engine(engine)
    try:
        decl, _ = eng.bot_spec(name)
    except DicecupError:
        bots = ", ".join(f"bot:{b}" for b in eng.bot_usage())
        raise DicecupError(
            Phrase(
                N_("unknown strategy {strategy}; strategies: {strategies}, risk:THETA, or a bot: {bots}"),
                strategy=shown(strategy),
                strategies=", ".join(STRATEGIES),
                bots=bots,
            )
        ) from None
    if not decl.solitaire:
        raise DicecupError(
            Phrase(
                N_(
                    "strategy {strategy}: bot {bot} plays against the others at the table, and simulate plays "
                    "solitaire games; pit it against other bots with `dicecup play` instead"
                ),
                strategy=shown(strategy),
                bot=decl.name,
            )
        )
    return name


def _whole(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def check_run(
    strategy: str, games: int, seed: int | None, method: str, engine: Any = None, first_game: int = 0
) -> None:
    """Refuse at once every argument of `simulate` but the variant (a caller checks them before any work)."""
    check_strategy(strategy, engine)
    if not _whole(games) or games < 1:
        raise DicecupError(
            Phrase(N_("the number of games must be a whole number >= 1, got {games}"), games=repr(games))
        )
    if not _whole(first_game) or not 0 <= first_game <= 2**63 - games:
        raise DicecupError(
            f"the first game must be a whole number from 0 to 2**63 - 1 - games (game numbers of a run start at 0), "
            f"got {first_game!r}"
        )
    if method not in METHODS:
        raise DicecupError(
            Phrase(N_("unknown method {method}; methods: {methods}"), method=repr(method), methods=", ".join(METHODS))
        )
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**63):
        raise DicecupError(
            Phrase(N_("the seed must be a whole number from 0 to 2**63 - 1, got {seed}"), seed=repr(seed))
        )


def check_size(variant: Variant, strategy: str, engine: Any = None, rules: Any = None) -> Any:
    """Refuse at once, with the size, a strategy whose work explodes on this variant (nothing is started).

    `greedy` looks one roll ahead over every distinct roll; `optimal` needs the exact solver's
    table, whose own limits (`solver.rules.check_solvable`) apply; `strong` needs a card it can
    split into parts (`solver.relax.check_relaxable`). `random` never enumerates rolls. Any other
    bot: its own check (`Engine.check_bot`).

    Returns the solver's rules model of `variant` where the check learned it (a risk strategy's range is
    checked against its scores), else `rules`: the caller passes it on (`simulate_range`, `load_or_solve`),
    so that the rules are learned once. `rules`: the model an earlier check returned (not learned again).
    """
    strategy = strategy_name(strategy)
    if not _fast(strategy):
        _engine(engine).check_bot(strategy, variant)
        return rules
    if strategy == "greedy":
        from ..game.bots import GreedyBot  # the game layer loads only where a game is played

        GreedyBot.check(variant)
    if strategy == "optimal" or strategy.startswith("risk:"):
        try:
            from ..solver.rules import RuleModel, check_solvable
        except ImportError:  # pragma: no cover - the solver ships with dicecup
            return rules
        check_solvable(variant)
        if strategy.startswith("risk:"):  # a theta whose values leave float64 for this variant's scores
            from ..numeric.objective import risk_objective
            from ..solver.solve import check_objective

            if rules is None or rules.variant is not variant:
                rules = RuleModel(variant)
            check_objective(variant, risk_objective(strategy[5:], f"strategy {shown(strategy)}"), rules)
    if strategy == "strong":
        from ..solver.relax import check_relaxable

        check_relaxable(variant)
    return rules


def _make_bot(strategy: str, rng: random.Random, engine: Any = None) -> Any:
    """A bot for the engine simulator: the tables-free ones from the game, the optimal one from the solver,
    any other from the engine's registry."""
    if not _fast(strategy):
        return _engine(engine).make_bot(strategy, rng)
    if strategy == "optimal":
        try:
            from ..solver import OptimalBot
        except ImportError:  # pragma: no cover - the solver ships with dicecup
            raise DicecupError(
                "the optimal strategy needs the solver (dicecup.solver), which is not available"
            ) from None
        return OptimalBot(rng)
    if strategy == "strong":
        from ..solver.strong import StrongBot

        return StrongBot(rng)
    if strategy.startswith("risk:"):
        from ..numeric.objective import risk_objective
        from ..solver import OptimalBot

        return OptimalBot(rng, risk_objective(strategy[5:], f"strategy {shown(strategy)}"))
    from ..game.bots import GreedyBot, RandomBot

    if strategy == "greedy":  # its look-ahead read from the turn's score tables, as bot:greedy's is
        from ..solver.greedy_turn import GreedyTurns

        return GreedyBot(rng, GreedyTurns())
    return RandomBot(rng)


def prepare(variant: Variant, strategy: str = "optimal") -> None:
    """Build now what `strategy` plays from on `variant`, so that later runs only play: the solver's table and
    the whole best-move table where it fits, whose rows runs otherwise fill as their games reach states. For a
    program that simulates many runs in one process (a single run is faster without it); nothing changes in
    the games."""
    strategy = check_strategy(strategy)
    check_size(variant, strategy)
    from .batched_run import prepare_batched, supports

    if supports(variant, strategy):
        prepare_batched(variant, strategy)


def simulate(
    variant: Variant,
    strategy: str,
    games: int,
    seed: int | None = None,
    *,
    method: str = "auto",
    progress: Reporter | None = None,
    engine: Any = None,
    max_seconds: float = MAX_ENGINE_SECONDS,
    first_game: int = 0,
) -> SimResult:
    """Play `games` solitaire games of `variant` with `strategy` (a name of `STRATEGIES`, risk:THETA, or any
    solitaire bot of `engine`'s registry, `bot:` or not); same seed, same games. Each game depends only on the
    seed and its number in the run: `first_game` plays games first_game .. first_game + games - 1 of the run,
    the very games a run from game 0 plays there. A run the engine simulator would take more than
    `max_seconds` for, by its first game, is refused then (TooLarge, with the estimate). The result holds
    every game's arrays, so runs past `MAX_RESULT_GAMES` are refused: `simulate_range` tallies any number
    in bounded memory. `progress` hears of the games played."""
    check_run(strategy, games, seed, method, engine, first_game)
    if games > MAX_RESULT_GAMES:
        raise TooLarge(
            f"{games:,} games hold their per-game arrays in memory (about {games * 8 * (len(variant.box_ids) + 8):,} "
            f"bytes), above the {MAX_RESULT_GAMES:,} games a result holds; tally them with simulate_range, whose "
            "memory does not grow with the games"
        )
    strategy = strategy_name(strategy)
    if not _fast(strategy):
        engine = _engine(engine)
    if seed is None:
        seed = random.SystemRandom().randrange(2**32)
    check_size(variant, strategy, engine)
    label = Phrase(SIMULATING, n=games, games=f"{games:,}", variant=variant.id, strategy=strategy)
    with task(progress, label, games, "games") as told:
        return _play(variant, strategy, games, seed, method, _counter(told), engine, max_seconds, first_game)


def _counter(told: Reporter) -> Callable[[int], None]:
    """A callback taking the games done so far, telling `told` of each step."""
    seen = [0]

    def done(n: int) -> None:
        if n > seen[0]:
            told.advance(n - seen[0])
            seen[0] = n

    return done


def _play(
    variant: Variant,
    strategy: str,
    games: int,
    seed: int,
    method: str,
    progress: Callable[[int], None],
    engine: Any,
    max_seconds: float | None,
    first_game: int,
    run_games: int | None = None,
) -> SimResult:
    """`simulate`'s games, its arguments checked: batched where it can, else game by game (refused by its
    second game past `max_seconds` for `run_games`, the whole run's games; None: no limit)."""
    if method in ("auto", "batched"):
        from ..numeric.tables import Untabulable
        from .batched_run import simulate_batched, supports

        why = None
        if supports(variant, strategy):
            try:
                return simulate_batched(variant, strategy, games, seed, progress=progress, first_game=first_game)
            except Untabulable as exc:  # found while tabulating: the engine plays such rules exactly
                why = str(exc)
        if method == "batched":
            raise DicecupError(
                Phrase(
                    N_("the batched simulator cannot play {strategy} on {variant}: {why}"),
                    strategy=shown(strategy),
                    variant=variant.id,
                    why=why,
                )
                if why
                else Phrase(
                    N_("the batched simulator cannot play {strategy} on {variant} yet"),
                    strategy=shown(strategy),
                    variant=variant.id,
                )
            )
    from .engine_sim import simulate_engine

    return simulate_engine(
        variant,
        strategy,
        lambda name, rng: _make_bot(name, rng, engine),
        games,
        seed,
        progress,
        max_seconds,
        first_game=first_game,
        run_games=run_games,
    )


RANGE_PIECE = 1 << 18
"""Games `simulate_range` plays at a time: their per-game arrays (tens of MB) are tallied, then dropped."""
MAX_RESULT_GAMES = 1 << 24
"""The most games `simulate` holds per-game arrays of (hundreds of MB to a few GB); more: `simulate_range`."""


def simulate_range(
    variant: Variant,
    strategy: str,
    seed: int,
    first_game: int,
    games: int,
    *,
    method: str = "auto",
    progress: Reporter | None = None,
    engine: Any = None,
    max_seconds: float = MAX_ENGINE_SECONDS,
    rules: Any = None,
) -> Tally:
    """The tally of games first_game .. first_game + games - 1 of the run `simulate(variant, strategy, total,
    seed)` (for any total reaching them), played `RANGE_PIECE` games at a time so that memory does not grow
    with `games`. Merging the tallies of ranges that cover a run gives the run's tally, for any split: what a
    process of a cluster returns. `max_seconds` bounds the whole range on the engine simulator. `rules`: what
    `check_size` returned for this variant and strategy (the rules are then not learned again)."""
    if seed is None:
        raise DicecupError("a range of a run needs the run's seed: give seed=")
    check_run(strategy, games, seed, method, engine, first_game)
    name = strategy_name(strategy)
    if not _fast(name):
        engine = _engine(engine)
    check_size(variant, name, engine, rules)
    tally: Tally | None = None
    label = Phrase(SIMULATING, n=games, games=f"{games:,}", variant=variant.id, strategy=name)
    with task(progress, label, games, "games") as told:
        for start in range(0, games, RANGE_PIECE):
            n = min(RANGE_PIECE, games - start)
            first = start == 0  # the first piece's second game is timed against the whole range
            result = _play(
                variant, name, n, seed, method, _counter(told), engine, max_seconds if first else None,
                first_game + start, games,
            )  # fmt: skip
            part = tally_of(result)
            del result  # the piece's per-game arrays: only its tally is kept
            tally = part if tally is None else tally + part
    assert tally is not None  # games >= 1
    return tally
