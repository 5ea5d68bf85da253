"""A host game that rolls its own dice and lets dicecup keep the score.

Think of a board-game app with physical-looking dice: the app decides what the
dice show (here a "dice tower" with its own generator), and the engine only checks
the moves and scores them. Run it:

    python examples/host_game.py --variant yatzy --players ann bob --seed 7

It plays every turn with a simple rule of thumb, choosing only among the moves the
engine says are legal now (`legal_boxes`, `legal_keeps` and the rules' own
`rule_actions`, such as Yamb's announcements), so it plays every variant. Halfway
it saves the game to JSON and carries on from the reloaded copy, then prints each
player's card and the winner.
"""

from __future__ import annotations

import argparse
import random
from collections import Counter

from dicecup import Action, Engine, GameState, Keep, Score

GOOD_ENOUGH = 25  # points: a box worth this much is scored at once


class DiceTower:
    """The host's own dice: any source of numbers 1..faces (a camera, a server, a generator)."""

    def __init__(self, faces: int, seed: int | None) -> None:
        self.faces = faces
        self.rng = random.Random(seed)

    def throw(self, n: int) -> list[int]:
        """The faces of `n` dice thrown now."""
        return [self.rng.randint(1, self.faces) for _ in range(n)]


def best_box(state: GameState) -> tuple[int, Score] | None:
    """The legal box that scores the most now (the first on the card on a tie), or None when none may be scored."""
    boxes = state.legal_boxes()
    if not boxes:
        return None
    points = {b: state.score_preview(b).points for b in boxes}
    box = max(boxes, key=lambda b: points[b])  # max keeps the first of equal ones
    return points[box], Score(box)


def choose(state: GameState) -> Action:
    """Rule of thumb, among legal moves only.

    A rule's action (an announcement, ...) when it makes the best box score more, or when no
    box may be scored without one; then a box worth GOOD_ENOUGH points, or the best box when
    no reroll is allowed; else keep the dice of the most common face (never all of them).
    """
    now = best_box(state)
    for action in state.rule_actions():
        after = best_box(state.act(action))
        if after is not None and (now is None or after[0] > now[0]):
            return action
    keeps = state.legal_keeps()
    if now is not None and (not keeps or now[0] >= GOOD_ENOUGH):
        return now[1]
    if keeps:
        face, count = max(Counter(state.dice).items(), key=lambda fc: (fc[1], fc[0]))
        keep = (face,) * min(count, len(state.dice) - 1)  # a proper part of the dice: some are rerolled
        return Keep(keep) if keep in keeps else Keep(keeps[0])
    return state.legal_actions()[0]  # only a rule's action is left, and it scores nothing better


def play(variant: str, players: list[str], seed: int | None, engine: Engine | None = None) -> GameState:
    """Play a whole match of `variant` with the host's own dice; the finished state."""
    engine = engine or Engine()
    state = GameState.new(engine.variant(variant), players)
    tower = DiceTower(state.variant.faces, seed)
    half_way = len(state.variant.boxes) * len(players) // 2
    turns = 0
    while not state.over:
        if state.is_chance:
            # The engine says how many dice are to be thrown; the host throws them.
            n = state.variant.dice - len(state.held)  # type: ignore[arg-type]
            state = state.roll(dice=tower.throw(n))
            continue
        action = choose(state)
        state = state.apply(action)  # an illegal action would raise IllegalAction, state unchanged
        if isinstance(action, Score):
            turns += 1
            if turns == half_way:  # the host saves and reloads, e.g. to survive a restart
                state = GameState.from_json(state.to_json(), engine)
    return state


def report(state: GameState) -> list[str]:
    """One line per player (boxes, bonuses, total and any other figure), then the winner."""
    lines = []
    for i, name in enumerate(state.players):
        card = state.breakdown(i)
        boxes = ", ".join(f"{b}={s}" for b, s in card["boxes"].items())
        bonuses = ", ".join(f"{a['id']}={a['points']}" for a in card["awards"] + card["bonuses"]) or "none"
        figures = "".join(f"; {f} {n}" for f, n in card.get("figures", {}).items() if f != "score")
        lines.append(f"{name}: {boxes}; bonuses: {bonuses}; total {card['total']}{figures}")
    lines.append("winner: " + ", ".join(state.winners()))
    return lines


def main() -> None:
    """The command line: play one match and print the report."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variant", default="yahtzee")
    parser.add_argument("--players", nargs="+", default=["ann", "bob"])
    parser.add_argument("--seed", type=int, default=None)
    args = parser.parse_args()
    print("\n".join(report(play(args.variant, args.players, args.seed))))


if __name__ == "__main__":
    main()
