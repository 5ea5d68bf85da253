"""The web game's tables being played: the engine's `Game` with its seats, bots and narration (`Table`), and
the views the page draws (the card, the result), all from the engine's own state and queries."""

from __future__ import annotations

import secrets
import threading
from typing import Any

from preparing import Adviser

from dicecup import Engine, Game, GameState, Keep, RollDice, RuleAction, Score, Variant
from dicecup.game.actions import Action, action_to_json
from dicecup.language.describe import bonus_cells

HUMAN = "human"
MAX_LOG = 200  # lines of narration kept per game


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
