"""A table's game reviewed move by move against the exact solver, for the page: each decision, the best move
there and the expected points it cost (`dicecup review`'s analysis, `solver.review`, computed by a bots'
process). Only for variants the solver takes; the solver's table is prepared as a bot's is, and a review
that would wait longer for it than a few seconds is refused, saying so. A game's review is kept (a few).
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from .lobby import Lobby, no_such_seat
from .protocol import Refused
from .workers import WorkerFailed

__all__ = ["Reviews", "KEPT"]

KEPT = 64  # reviews kept, by table and move (the least recent is dropped)
SOLVER_BOT = "optimal"  # the bot whose tables are the exact solver's: a review needs the same


class Reviews:
    """The reviews the server has computed, and the computing of new ones."""

    def __init__(self, lobby: Lobby) -> None:
        self.lobby = lobby
        self.kept: OrderedDict[tuple[str, int], dict[str, Any]] = OrderedDict()

    async def review(self, code: str, seat: int | None) -> dict[str, Any]:
        """The review of table `code` as it stands (of seat `seat`'s decisions, or everyone's): Refused when the
        game has not started, its variant is beyond the solver, or the solver's table is not ready yet."""
        room = await self.lobby.room(code)
        state = room.state
        if seat is not None and not 0 <= seat < len(room.record.seats):
            raise no_such_seat(code, len(room.record.seats), seat)
        if state is None:
            raise Refused(
                409, "the game has not started: seats are still open, there is nothing to review", code="not_started"
            )
        from ..solver.errors import SolverError  # (here: a bots' process imports this module, not the solver)
        from ..solver.review import check_reviewable

        try:
            check_reviewable(room.variant)
        except SolverError as exc:
            raise Refused(422, str(exc), code="beyond_solver", params={"detail": str(exc)}) from None
        key = (code, room.seq)
        whole = self.kept.get(key)
        if whole is None:
            await self.lobby.ready(room.variant, {SOLVER_BOT}, len(state.players), user="a review")
            job = {
                **self.lobby.hall.bot_job(room, 0, SOLVER_BOT),
                "kinds": [room.player(i) for i in range(len(state.players))],
            }
            try:
                whole = await self.lobby.hall.workers.review(job)
            except WorkerFailed as exc:
                raise Refused(503, f"no review now: {exc}", code="busy") from None
            self.kept[key] = whole
            while len(self.kept) > KEPT:
                self.kept.popitem(last=False)
        self.kept.move_to_end(key)
        mine = [d for d in whole["decisions"] if seat is None or d["seat"] == seat]
        return {**whole, "code": code, "seq": key[1], "seat": seat, "decisions": mine}
