"""A host game that rolls its own dice and lets dicecup keep the score.

Think of a board-game app with physical-looking dice: the app decides what the
dice show (here a "dice tower" with its own generator), and the engine only checks
the moves and scores them. Run it:

    python examples/host_game.py --variant yatzy --players ann bob --seed 7

It plays every turn with a simple rule of thumb (keep the most common face, score
the best box), saves the game to JSON halfway and carries on from the reloaded
copy, then prints each player's card and the winner.
"""

from __future__ import annotations

import argparse
import random
from collections import Counter

from dicecup import Engine, GameState, Keep, Score


class DiceTower:
    """The host's own dice: any source of numbers 1..faces (a camera, a server, a generator)."""

    def __init__(self, faces: int, seed: int | None) -> None:
        self.faces = faces
        self.rng = random.Random(seed)

    def throw(self, n: int) -> list[int]:
        return [self.rng.randint(1, self.faces) for _ in range(n)]


def choose(state: GameState) -> Keep | Score:
    """Rule of thumb: score a box worth 25 or more, else keep the most common face while rolls remain."""
    v, card, roll = state.variant, state.card, state.roll_now
    best = max(state.legal_boxes(), key=lambda b: v.score(card, b, roll, state.first_roll).points)
    if state.rolls_left == 0 or state.score_preview(best).points >= 25:
        return Score(best)
    face, _ = max(Counter(state.dice).items(), key=lambda fc: (fc[1], fc[0]))
    return Keep([face] * state.dice.count(face))


def play(variant: str, players: list[str], seed: int | None) -> GameState:
    engine = Engine()
    state = GameState.new(engine.variant(variant), players)
    tower = DiceTower(state.variant.faces, seed)
    half_way = len(state.variant.boxes) * len(players) // 2
    turns = 0
    while not state.over:
        if state.is_chance:
            # The engine says how many dice are to be thrown; the host throws them.
            n = state.variant.dice - len(state.held)
            state = state.roll(dice=tower.throw(n))
            continue
        action = choose(state)
        state = state.apply(action)  # an illegal action would raise IllegalAction, state unchanged
        if isinstance(action, Score):
            turns += 1
            if turns == half_way:  # the host saves and reloads, e.g. to survive a restart
                state = GameState.from_json(state.to_json(), engine)
    return state


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variant", default="yahtzee")
    parser.add_argument("--players", nargs="+", default=["ann", "bob"])
    parser.add_argument("--seed", type=int, default=None)
    args = parser.parse_args()
    state = play(args.variant, args.players, args.seed)
    for i, name in enumerate(state.players):
        card = state.breakdown(i)
        boxes = ", ".join(f"{b}={s}" for b, s in card["boxes"].items())
        bonuses = ", ".join(f"{a['id']}={a['points']}" for a in card["awards"] + card["bonuses"]) or "none"
        print(f"{name}: {boxes}; bonuses: {bonuses}; total {card['total']}")
    print("winner:", ", ".join(state.winners()))


if __name__ == "__main__":
    main()
