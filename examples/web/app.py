"""A browser game on the dicecup engine: pick any variant, play against bots, ask for hints.

Run it from the repository root (after `pip install -e '.[web]'`) and open the address it prints:

    python examples/web/app.py --port 8000

The page (static HTML, CSS and JavaScript beside this file, no build step) holds no rules. It
sends every click here as a move in the engine's own JSON form (`["keep", [5, 5]]`,
`["score", "full_house"]`, `["rule", "announced", "announce", "announce.yamb"]`), and this server
applies it with `GameState.apply`: an illegal click is refused with the engine's own message.
The server rolls the dice (`Game`, seeded) and plays the bots' turns between two human moves.
"""

from __future__ import annotations

import argparse
import json
import secrets
import threading
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from dicecup import DicecupError, Engine, Game, GameState, Keep, RollDice, RuleAction, Score, UnknownVariant, Variant
from dicecup.game.actions import Action, action_from_json, action_to_json
from dicecup.language.describe import bonus_cells

HERE = Path(__file__).resolve().parent
HUMAN = "human"
MAX_BODY = 16 * 1024  # bytes: a request is a few hundred; a larger body is refused before it is read whole
MAX_GAMES = 64  # games kept in memory; starting one more forgets the one least recently played
MAX_LOG = 200  # lines of narration kept per game
MAX_SEED = 2**63 - 1
HINT_OPTIONS = 6  # ranked options a hint lists


class Refused(Exception):
    """A request this server refuses: an HTTP status and one message saying what and how to fix it."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


# ---------------------------------------------------------------------------- hints


class Adviser:
    """Hints for one variant: the exact solver's advice where it reaches; beyond it, an estimate that values
    the rest of the card as the sum of its parts (columns or sections), each solved exactly.

    The estimate leaves out bot strong's fitted correction: fitting it takes many minutes the first time,
    too long to wait for in a browser, and the parts alone rank a turn's moves well.
    """

    def __init__(self, variant: Variant) -> None:
        from dicecup.solver import DEFAULT_MAX_STATES, check_solvable, load_or_solve
        from dicecup.solver.relax import check_relaxable
        from dicecup.solver.strong import strong_values

        self.source = hint_source(variant)
        if self.source == "exact":
            self.values: Any = load_or_solve(variant, DEFAULT_MAX_STATES, None)[0]
        elif self.source == "estimate":
            self.values = strong_values(variant, fitted=False)
        else:
            check_solvable(variant)  # neither reaches the variant: raise the solver's reason
            check_relaxable(variant)

    def hint(self, state: GameState) -> dict[str, Any]:
        """The recommended move and the best few options, each with the expected final score after it."""
        from dicecup.solver.advice import advise, advise_state
        from dicecup.solver.relax import best_move

        if self.source == "exact":
            options = advise_state(self.values, state)
            best: Action = options[0].action
        else:
            args = (state.card, state.dice, state.rolls_left, state.first_roll, state.situation())
            options = [o for o in advise(self.values, *args) if state.may_reroll() or not isinstance(o.action, Keep)]
            best = best_move(self.values, state)
        return {
            "source": self.source,
            "best": {"move": action_to_json(best), "label": move_label(state, best)},
            "options": [
                {"move": action_to_json(o.action), "label": move_label(state, o.action), "value": round(o.value, 2)}
                for o in options[:HINT_OPTIONS]
            ],
        }


def hint_source(variant: Variant) -> str | None:
    """Where hints for `variant` come from ("exact", "estimate"), or None when there are none."""
    from dicecup.solver import check_solvable
    from dicecup.solver.relax import check_relaxable

    for source, check in (("exact", check_solvable), ("estimate", check_relaxable)):
        try:
            check(variant)
        except DicecupError:
            continue
        return source
    return None


# ---------------------------------------------------------------------------- games


def box_name(v: Variant, box: str) -> str:
    """A box's name, with its column's where the card has several: `Full house`, `Yamb (Announce)`."""
    b = v.box(box)
    return f"{b.name} ({v.column(b.column).name})" if len(v.columns) > 1 else b.name


def move_label(state: GameState, action: Action) -> str:
    """A move in words for the page: `keep 5 5`, `score Full house`, `announce Yamb (Announce)`."""
    if isinstance(action, Keep):
        return "keep " + (" ".join(map(str, action.dice)) or "nothing")
    if isinstance(action, Score):
        return "score " + box_name(state.variant, action.box)
    if isinstance(action, RuleAction):
        on_box = action.arg in state.variant.box_ids
        return f"{action.name} {box_name(state.variant, action.arg)}" if on_box else action.label
    return "roll " + " ".join(map(str, action.dice))


class Table:
    """One game being played: the engine's `Game` handle, who sits where, their bots, the narration."""

    def __init__(self, engine: Engine, variant: Variant, seats: list[tuple[str, str]], seed: int | None) -> None:
        self.id = secrets.token_urlsafe(12)
        self.game = Game.new(variant, [name for name, _ in seats], seed=seed)
        self.kinds = [kind for _, kind in seats]
        self.bots = {i: engine.make_bot(k, self.game.rng) for i, k in enumerate(self.kinds) if k != HUMAN}
        self.adviser: Adviser | None = None
        self.log: list[str] = []
        self.lock = threading.Lock()

    def say(self, line: str) -> None:
        """Add a line to the narration the page shows (the last MAX_LOG lines are kept)."""
        self.log.append(line)
        del self.log[:-MAX_LOG]

    def play(self, action: Action) -> None:
        """Apply a move (IllegalAction leaves the game as it was) and narrate it."""
        state = self.game.state
        self.game.apply(action)
        text = move_label(state, action)
        if isinstance(action, Score):
            result = state.score_preview(action.box)  # the state before the move: what the box was worth
            text += f" for {result.points}" + "".join(f" ({a.name or a.id} {a.points:+d})" for a in result.awards)
        self.say(f"{state.player}: {text}")
        self._after(state)

    def run(self) -> None:
        """Roll the dice and play the bots' moves until a human is to decide, or the game is over."""
        while not self.game.over:
            state = self.game.state
            if state.is_chance:
                rolled = self.game.roll().history[-1]  # the RollDice move: known even when it ends the game
                assert isinstance(rolled, RollDice) and state.held is not None
                dice = sorted(state.held + rolled.dice)
                self.say(f"{state.player}: roll {' '.join(map(str, dice))}")
                self._after(state)
            elif self.kinds[state.current] != HUMAN:
                self.play(self.bots[state.current].choose(state))
            else:
                return

    def _after(self, before: GameState) -> None:
        """Narrate a game of the match that has just ended (an instant win, a new round)."""
        now = self.game.state
        if len(now.results) > len(before.results):
            r = now.results[-1]
            if r.instant_winner is not None:
                self.say(f"{now.players[r.instant_winner]} wins at once" + (f": {r.won_by}" if r.won_by else ""))
            totals = ", ".join(f"{p} {t}" for p, t in zip(now.players, r.totals, strict=True))
            self.say(
                f"game {len(now.results)} of {now.rounds} over: {totals}" if now.rounds > 1 else f"game over: {totals}"
            )

    def view(self) -> dict[str, Any]:
        """Everything the page draws, from the engine's own state and queries."""
        state = self.game.state
        v = state.variant
        yours = not state.over and not state.is_chance and self.kinds[state.current] == HUMAN
        players = []
        for i, (name, card) in enumerate(zip(state.players, state.cards, strict=True)):
            part = state.breakdown(i)
            players.append(
                {
                    "name": name,
                    "kind": self.kinds[i],
                    "scores": part["boxes"],
                    "bonuses": [
                        {"id": bid, "name": bname, "text": text} for bid, bname, text, _ in bonus_cells(v, card, False)
                    ],
                    "columns": part.get("columns"),
                    "figures": part.get("figures"),
                    "total": part["total"],
                    "banked": state.banked[i] if v.carry_over else None,
                }
            )
        previews = {}
        for box in state.legal_boxes() if yours else ():
            res = state.score_preview(box)
            previews[box] = {"written": res.written, "points": res.points}
        return {
            "id": self.id,
            "variant": variant_view(v),
            "players": players,
            "current": state.current,
            "round": state.round,
            "rounds": state.rounds,
            "over": state.over,
            "your_turn": yours,
            "dice": list(state.dice),
            "rolls_left": state.rolls_left,
            "may_reroll": yours and state.may_reroll(),
            "previews": previews,
            "rule_actions": [
                {"move": action_to_json(a), "label": move_label(state, a)}
                for a in (state.rule_actions() if yours else ())
            ],
            "status": [t for t in state.turn_status() if t],
            "progress": [p.line for p in v.progress(state.card) if p.line] if not state.over else [],
            "hints": self.adviser.source if self.adviser else None,
            "log": self.log,
            "result": result_view(state) if state.over else None,
        }


def variant_view(v: Variant) -> dict[str, Any]:
    """The variant as the page draws its card: boxes, rows and columns, face attributes (Kismet's colours)."""
    return {
        "id": v.id,
        "name": v.name,
        "faces": v.faces,
        "boxes": [
            {"id": b.id, "name": b.name, "section": b.section, "row": b.row, "column": b.column} for b in v.boxes
        ],
        "rows": [{"id": r, "name": v.row(r).name, "section": v.row(r).section} for r in v.rows],
        "columns": [{"id": c.id, "name": c.name, "multiplier": c.multiplier, "order": c.order} for c in v.columns],
        "attributes": {name: list(values[1:]) for name, values in v.attributes.items()},
        "figures": {f.id: f.name for f in v.figures},
        "carry_over": v.carry_over,
    }


def result_view(state: GameState) -> dict[str, Any]:
    """The end of the match: every game's totals, the ranking by the variant's own keys, winners, settlement."""
    v, names = state.variant, state.players
    keys = [state.match_totals(f) for f in v.rank_by]
    order = sorted(range(len(names)), key=lambda i: tuple(-k[i] for k in keys))
    ranking: list[dict[str, Any]] = []
    for n, i in enumerate(order):
        tied = n > 0 and all(k[i] == k[order[n - 1]] for k in keys)
        ranking.append(
            {"place": ranking[-1]["place"] if tied else n + 1, "name": names[i], "keys": [k[i] for k in keys]}
        )
    settle = state.settlement()
    return {
        "games": [list(r.totals) for r in state.results],
        "rank_by": [next((f.name for f in v.figures if f.id == key), "Score") for key in v.rank_by],
        "ranking": ranking,
        "winners": list(state.winners()),
        "settlement": None if settle is None else {p: float(amount) for p, amount in settle.items()},
    }


# ---------------------------------------------------------------------------- the server


class Lobby:
    """The engine, the variants on offer, and the games in progress (at most MAX_GAMES)."""

    def __init__(self, engine: Engine, files: list[Path]) -> None:
        self.engine = engine
        self.files: dict[str, Path] = {}  # extra variant files, by their ids
        for path in files:
            vid = engine.load_file(path).id
            if vid in engine.variant_ids() or vid in self.files:
                raise DicecupError(
                    f"--variant-file {path}: a variant {vid!r} is already offered; give the file another id"
                )
            self.files[vid] = path
        self.games: OrderedDict[str, Table] = OrderedDict()
        self.lock = threading.Lock()
        self._catalogue: list[dict[str, Any]] | None = None

    def variant(self, vid: Any, options: Any) -> Variant:
        """The variant a request names, with its options; Refused (4xx) saying what is wrong."""
        if not isinstance(vid, str):
            raise Refused(400, f"'variant' must be a variant id such as 'yahtzee', got {json.dumps(vid)[:40]}")
        if options is not None and (
            not isinstance(options, dict) or not all(isinstance(x, (str, int, bool)) for x in options.values())
        ):
            raise Refused(400, "'options' must be an object of option values such as {\"saved_rolls\": false}")
        if vid not in self.ids():
            raise Refused(404, str(UnknownVariant(vid, self.ids())))
        try:
            if vid in self.files:
                return self.engine.load_file(self.files[vid], options)
            return self.engine.variant(vid, options)
        except DicecupError as exc:  # an option it does not have, a value not among its choices
            raise Refused(400, str(exc)) from None

    def ids(self) -> list[str]:
        """Every variant on offer: the engine's (built-in and from plugins), then the extra files'."""
        return [*self.engine.variant_ids(), *self.files]

    def catalogue(self) -> list[dict[str, Any]]:
        """Every variant with its options, the bots that can play it and where its hints come from."""
        if self._catalogue is None:
            rows = []
            for vid in self.ids():
                try:
                    v = self.variant(vid, None)
                except Refused:
                    continue  # a broken plugin variant is left out, not the whole list
                bots = []
                for bot in self.engine.bot_names():
                    try:
                        self.engine.check_bot(bot, v)
                    except DicecupError:
                        continue
                    bots.append(bot)
                rows.append(
                    {
                        "id": vid,
                        "name": v.name,
                        "description": v.description,
                        "columns": len(v.columns),
                        "options": [
                            {"name": o.name, "default": o.default, "choices": list(o.choices)} for o in v.option_specs
                        ],
                        "bots": bots,
                        "hints": hint_source(v),
                    }
                )
            self._catalogue = rows
        return self._catalogue

    def start(self, body: dict[str, Any]) -> Table:
        """A new game from `{"variant", "options", "players": [{"name", "kind"}], "seed", "hints"}`."""
        variant = self.variant(body.get("variant"), body.get("options"))
        players = body.get("players")
        if not isinstance(players, list) or not all(
            isinstance(p, dict) and isinstance(p.get("name"), str) and isinstance(p.get("kind", HUMAN), str)
            for p in players
        ):
            raise Refused(
                400, '\'players\' must be a list such as [{"name": "you"}, {"name": "bob", "kind": "greedy"}]'
            )
        seats = [(p["name"], p.get("kind", HUMAN)) for p in players]
        if HUMAN not in (kind for _, kind in seats):
            raise Refused(400, 'a browser game needs at least one human player (kind "human")')
        seed = body.get("seed")
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED):
            raise Refused(400, f"'seed' must be a whole number from 0 to {MAX_SEED}, or null for fresh dice")
        hints = body.get("hints", False)
        if not isinstance(hints, bool):
            raise Refused(400, "'hints' must be true or false")
        try:
            for _, kind in seats:
                if kind != HUMAN:
                    self.engine.check_bot(kind, variant)  # refused at once, with the reason, before any work
            table = Table(self.engine, variant, seats, seed)
            if hints:
                table.adviser = Adviser(variant)  # solves or loads the tables now (once per variant, then cached)
            table.run()
        except DicecupError as exc:
            raise Refused(400, str(exc)) from None
        with self.lock:
            self.games[table.id] = table
            while len(self.games) > MAX_GAMES:
                self.games.popitem(last=False)
        return table

    def table(self, game_id: str) -> Table:
        """The game `game_id`, now the most recently played; Refused (404) when there is none."""
        with self.lock:
            table = self.games.get(game_id)
            if table is None:
                raise Refused(404, f"no game {game_id[:40]!r} here (finished games are forgotten): start a new one")
            self.games.move_to_end(game_id)
            return table


async def read_json(request: Request) -> dict[str, Any]:
    """The request body as a JSON object, reading no more than MAX_BODY bytes of it; Refused (4xx) otherwise."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_BODY:
        raise Refused(413, f"the request body is {int(declared):,} bytes; at most {MAX_BODY:,} are accepted")
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_BODY:
            raise Refused(413, f"the request body is over {MAX_BODY:,} bytes; at most {MAX_BODY:,} are accepted")
    try:
        data = json.loads(body)
    except json.JSONDecodeError as exc:
        raise Refused(
            400, f"the request body is not JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}"
        ) from None
    except (UnicodeDecodeError, RecursionError, ValueError):
        raise Refused(
            400, "the request body is not JSON that can be read (not UTF-8, nested too deeply or a number too long)"
        ) from None
    if not isinstance(data, dict):
        raise Refused(400, f"the request body must be a JSON object, got {type(data).__name__}")
    return data


def create_app(engine: Engine | None = None, files: list[Path] | None = None) -> Starlette:
    """The ASGI application: the page, its static files and the JSON API over one engine."""
    lobby = Lobby(engine or Engine(), files or [])

    def guarded(handler: Callable[..., Any]) -> Callable[[Request], Any]:
        """`handler` with every refusal turned into `{"error": message}` and its status (never a traceback)."""

        async def endpoint(request: Request) -> Response:
            try:
                return JSONResponse(await handler(request))
            except Refused as exc:
                return JSONResponse({"error": str(exc)}, status_code=exc.status)

        return endpoint

    async def variants(request: Request) -> Any:
        return await run(lobby.catalogue)

    async def start(request: Request) -> Any:
        body = await read_json(request)
        return (await run(lambda: lobby.start(body))).view()

    async def show(request: Request) -> Any:
        table = lobby.table(request.path_params["game"])
        return await run(lambda: locked(table, table.view))

    async def move(request: Request) -> Any:
        table = lobby.table(request.path_params["game"])
        body = await read_json(request)
        try:
            action = action_from_json(body.get("move"))
        except ValueError as exc:
            raise Refused(400, f"'move': {exc}") from None

        def play() -> dict[str, Any]:
            if not table.game.state.over and table.kinds[table.game.state.current] != HUMAN:
                raise Refused(409, "it is not a human player's turn")
            try:
                table.play(action)
            except DicecupError as exc:  # IllegalAction, DiceError: the engine's own message, nothing changed
                raise Refused(409, str(exc)) from None
            table.run()
            return table.view()

        return await run(lambda: locked(table, play))

    async def hint(request: Request) -> Any:
        table = lobby.table(request.path_params["game"])

        def advise() -> dict[str, Any]:
            state = table.game.state
            if table.adviser is None:
                raise Refused(409, "this game was started without hints")
            if state.over or state.is_chance or table.kinds[state.current] != HUMAN:
                raise Refused(409, "there is no decision of yours to advise on now")
            return table.adviser.hint(state)

        return await run(lambda: locked(table, advise))

    async def save(request: Request) -> Any:
        table = lobby.table(request.path_params["game"])
        return await run(lambda: locked(table, table.game.state.to_dict))

    async def page(request: Request) -> Response:
        return FileResponse(HERE / "static" / "index.html")

    async def http_error(request: Request, exc: Exception) -> Response:
        """No such page, a method a route does not take, or a failure: one JSON message, never a traceback."""
        status = exc.status_code if isinstance(exc, HTTPException) else 500
        where = f"{request.method} {request.url.path}"
        text = {404: f"nothing at {where}", 405: f"{where}: method not allowed"}.get(status, f"{where} failed")
        return JSONResponse({"error": text}, status_code=status)

    return Starlette(
        routes=[
            Route("/", page),
            Route("/api/variants", guarded(variants)),
            Route("/api/games", guarded(start), methods=["POST"]),
            Route("/api/games/{game}", guarded(show)),
            Route("/api/games/{game}/move", guarded(move), methods=["POST"]),
            Route("/api/games/{game}/hint", guarded(hint)),
            Route("/api/games/{game}/save", guarded(save)),
            Mount("/static", StaticFiles(directory=HERE / "static"), name="static"),
        ],
        exception_handlers={HTTPException: http_error, Exception: http_error},
    )


async def run(work: Callable[[], Any]) -> Any:
    """Run engine work (a solve, a bot's turn) in a worker thread, so the server keeps answering."""
    from starlette.concurrency import run_in_threadpool

    return await run_in_threadpool(work)


def locked(table: Table, work: Callable[[], Any]) -> Any:
    """`work()` with the game to itself: two clicks at once are played one after the other."""
    with table.lock:
        return work()


def main() -> None:
    """The command line: serve the game on HOST:PORT."""
    import uvicorn

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default: this machine only)")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument(
        "--variant-file", action="append", type=Path, default=[], help="also offer this variant YAML file (repeatable)"
    )
    args = parser.parse_args()
    try:
        app = create_app(files=args.variant_file)
    except DicecupError as exc:
        parser.exit(2, f"error: {exc}\n")
    print(f"dicecup web game on http://{args.host}:{args.port}/", flush=True)
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
