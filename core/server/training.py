"""The trainer over HTTP: a drill from real play, then the grade of the move a player makes there.

Nothing is kept between the two: a drill is named by its seed and number (`solver.training.Drills.pick`), and
is sent as the moves that lead to it; the grade request sends those moves back with the player's move, and the
server replays them by the rules before grading, as `dicecup train` does. The drills and grades are computed
by a bots' process, against the exact solver's table, prepared as a bot's is.
"""

from __future__ import annotations

import datetime
import random
from typing import Any

from ..errors import DicecupError
from ..game.actions import Keep, Score, action_from_json, action_to_json
from ..game.state import GameState
from ..language.model import Variant
from .lobby import Lobby
from .protocol import Refused
from .reviews import SOLVER_BOT
from .views import move_label, players_view, progress_lines, turn_view, variant_view
from .workers import WorkerFailed

__all__ = ["Training", "MOST_MOVES"]

#: The most moves a drill's position may take to reach (a whole game of the longest built-in variant is less).
MOST_MOVES = 2_000


class Training:
    """Drills and grades for the page's trainer."""

    def __init__(self, lobby: Lobby) -> None:
        self.lobby = lobby

    async def _prepared(self, body: dict[str, Any]) -> Variant:
        """The variant the request names, refused unless the solver takes it, with its table ready."""
        from ..solver.errors import SolverError  # (here: a bots' process imports this module, not the solver)
        from ..solver.review import check_reviewable

        v = self.lobby.variant(body["variant"], body.get("options"))
        try:
            check_reviewable(v)
        except SolverError as exc:
            raise Refused(
                422,
                f"the trainer grades moves against the exact solver: {exc}",
                code="beyond_solver",
                params={"detail": str(exc)},
            ) from None
        await self.lobby.ready(v, {SOLVER_BOT}, 1, user="the trainer")
        return v

    def _job(self, v: Variant, **more: Any) -> dict[str, Any]:
        return {"variant": (v.id, self.lobby.files.get(v.id), dict(v.options)), **more}

    async def drill(self, body: dict[str, Any]) -> dict[str, Any]:
        """Drill `k` of `seed` (a seed is drawn when none is given), or today's puzzle with `daily`."""
        v = await self._prepared(body)
        seed = body.get("seed")
        seed = random.SystemRandom().randrange(2**53) if seed is None else seed
        day = datetime.date.today().isoformat() if body.get("daily") else None
        try:
            got = await self.lobby.hall.workers.drill(self._job(v, seed=seed, k=body.get("k", 0), day=day))
        except WorkerFailed as exc:
            raise Refused(503, f"no drill now: {exc}", code="busy") from None
        state = _replayed(v, got["moves"])
        lang = body.get("lang", "en")
        with self.lobby.hall.catalogs.speaking(lang):
            names = v.in_language(lang) if lang != "en" else None
            game = {
                **turn_view(state, progress_lines(state, names), names=names),
                "status": "playing", "seq": 0, "to_move": 0, "deadline": None, "undo": None, "result": None,
                "seats": [{"seat": 0, "player": "human", "name": state.players[0], "taken": True}],
                "players": players_view(state, names),
            }  # fmt: skip
        return {"variant": variant_view(v), "game": game, "moves": got["moves"], "seed": seed,
                "k": body.get("k", 0), "day": day, "importance": got["importance"], "per_game": got["per_game"]}  # fmt: skip

    async def grade(self, body: dict[str, Any]) -> dict[str, Any]:
        """The grade of `move` at the position `moves` lead to: the review's loss, and the best options."""
        v = await self._prepared(body)
        state = _replayed(v, body["moves"])
        if state.over or state.is_chance:
            raise Refused(
                400, "the moves lead to no decision (the dice are to be rolled, or the game is over)", code="malformed"
            )
        try:
            move = action_from_json(body["move"])
        except (ValueError, DicecupError) as exc:
            raise Refused(400, f"move: {exc}", code="malformed") from None
        move = _legal(state, move)
        try:
            job = self._job(v, moves=body["moves"], move=action_to_json(move), lang=body.get("lang", "en"))
            got = await self.lobby.hall.workers.grade(job)
        except WorkerFailed as exc:
            raise Refused(503, f"no grade now: {exc}", code="busy") from None
        lang = body.get("lang", "en")
        with self.lobby.hall.catalogs.speaking(lang):
            names = v.in_language(lang) if lang != "en" else None

            def said(option: dict[str, Any]) -> dict[str, Any]:
                return {**option, "label": move_label(state, action_from_json(option["move"]), names)}

            return {**got, "played": said(got["played"]), "best": said(got["best"]),
                    "options": [said(o) for o in got["options"]]}  # fmt: skip


def _legal(state: GameState, move: Any) -> Keep | Score:
    """`move` as the solver lists it (a keep's dice in order), Refused (400) unless it is a legal keep or box."""
    if isinstance(move, Score) and move.box in state.legal_boxes():
        return move
    if isinstance(move, Keep) and len(move.dice) < len(state.dice):
        try:
            state.keep(move.dice)
        except DicecupError as exc:
            raise Refused(400, f"move: {exc}", code="malformed") from None
        return Keep(tuple(sorted(move.dice)))
    raise Refused(400, f"move: {action_to_json(move)!r} is no legal keep or open box here", code="malformed")


def _replayed(v: Variant, moves: list[Any]) -> GameState:
    """The one-player game of `v` after `moves` (JSON), checked by the rules: Refused (400) saying which is wrong."""
    if len(moves) > MOST_MOVES:
        raise Refused(
            400, f"a drill's position is reached in at most {MOST_MOVES:,} moves, got {len(moves):,}", code="malformed"
        )
    state = GameState.new(v, ["you"])
    for i, raw in enumerate(moves):
        try:
            state = state.apply(action_from_json(raw))
        except (ValueError, TypeError, DicecupError) as exc:
            raise Refused(400, f"moves[{i}]: {exc}", code="malformed") from None
    return state
