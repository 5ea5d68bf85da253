"""The tables a game's bots play from, loaded or made before the game starts, with progress, or the game refused.

Each bot seat is made now (the engine's `make_bot`, with the game's generator, as the session would make
it) and, where it has tables (`prepare(variant, progress)`: bot:optimal, risk, strong, target, win), they
are loaded or made now. A bot whose tables would take longer than `PLAY_SECONDS` to make, and are not kept
yet (target play's), refuses the game before it starts, with the estimate and the command that makes them.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any

from ..errors import DicecupError
from ..language.model import Variant
from ..locales import _
from ..progress import Reporter
from .progress import reporting, say_duration

__all__ = ["PLAY_SECONDS", "prepare_bots"]

PLAY_SECONDS = 60.0
"""The longest a game waits for a bot's tables to be made before it starts; longer work is refused."""


def _solve_command(variant: Variant, objective: str) -> str:
    opts = "".join(f" -o {k}={v}" for k, v in variant.options.items())
    return f"dicecup solve -v {variant.id}{opts} --objective {objective}"


def _check_target(variant: Variant, kind: str, told: Reporter) -> None:
    """Refuse bot:target:T where target play's tables are not kept and would take over `PLAY_SECONDS`."""
    from ..solver.cache import load_or_solve
    from ..solver.target_store import target_estimate, target_kept

    solution, _cached = load_or_solve(variant, progress=told)
    if target_kept(solution):
        return
    estimate = target_estimate(solution, told)
    if estimate.seconds > PLAY_SECONDS:
        raise DicecupError(
            _(
                "bot:{kind} plays from target play's tables of {variant}, which are not made yet: making them takes "
                "{duration} and {gib} GiB of memory, longer than a game waits ({most} s); make them once with "
                "`{command}` (they are then kept, and a game with bot:{kind} starts within a minute), then play"
            ).format(
                kind=kind,
                variant=variant.id,
                duration=say_duration(estimate.seconds),
                gib=f"{estimate.bytes / 2**30:.1f}",
                most=f"{PLAY_SECONDS:.0f}",
                command=_solve_command(variant, "target"),
            )
        )


def prepare_bots(
    variant: Variant, seats: Sequence[Any], engine: Any, rng: random.Random, quiet: bool
) -> Callable[[str, random.Random], Any]:
    """Make every bot seat's bot with `rng` and its tables now (progress on stderr unless `quiet`), refusing
    what would take too long; returns the bot factory the session seats them with (the bots made here, for a
    game played with `rng`)."""
    kinds = list(dict.fromkeys(seat.kind for seat in seats if not seat.is_human))
    made: dict[str, Any] = {}  # kind -> its bot (one for every seat of the kind: a bot is a policy)
    if not kinds:
        return engine.make_bot
    with reporting(quiet, _("the bots of {variant}").format(variant=variant.id)) as told:
        for kind in kinds:
            engine.check_bot(kind, variant)  # refuse at once what a bot cannot play
        made.update((kind, engine.make_bot(kind, rng)) for kind in kinds)
        tabled = [kind for kind in kinds if callable(getattr(made[kind], "prepare", None))]
        for kind in tabled:  # every refusal before any table is made
            if kind.startswith("target:"):
                _check_target(variant, kind, told)
        for kind in tabled:
            made[kind].prepare(variant, told)

    def make_bot(kind: str, given: random.Random) -> Any:
        ready = made.get(kind)
        return ready if ready is not None and given is rng else engine.make_bot(kind, given)

    return make_bot
