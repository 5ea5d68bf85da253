"""Shared pieces of the solver tests: small variants and a brute-force expectimax over GameState."""

from __future__ import annotations

import io
import json
import random
import struct
import sys
import zipfile
from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from dicecup import Engine, GameState, Variant
from dicecup.game.bots import RandomBot
from dicecup.solver import solve

# A four-box card small enough that every command (solve, advise, simulate, risk) runs on it in a moment.
CLI_TINY = """
id: tiny
name: Tiny
dice: {count: 3, faces: 4}
boxes:
  ones:   {section: upper, pattern: {kind: face, face: 1}, score: sum}
  fours:  {section: upper, pattern: {kind: face, face: 4}, score: sum}
  triple: {pattern: {kind: of_a_kind, n: 3}, score: 20}
  chance: {pattern: always, score: total}
bonuses:
  upper_bonus: {kind: threshold, section: upper, at_least: 8, points: 5}
"""

# Small variants exercising one rule family each; every one is tiny enough for brute force.
TINY = {
    "threshold": """
id: tiny-threshold
dice: {count: 2, faces: 3}
turn: {rolls: 2}
boxes:
  ones:   {section: upper, pattern: {kind: face, face: 1}, score: sum}
  twos:   {section: upper, pattern: {kind: face, face: 2}, score: sum}
  threes: {section: upper, pattern: {kind: face, face: 3}, score: sum}
  pair:   {section: lower, pattern: {kind: of_a_kind, n: 2}, score: 8}
bonuses:
  up: {kind: threshold, section: upper, at_least: 7, points: 9}
""",
    "sym-chance": """
id: tiny-sym-chance
dice: {count: 2, faces: 3}
turn: {rolls: 2}
boxes:
  c1:   {section: lower, pattern: always, score: total}
  c2:   {section: lower, pattern: always, score: total}
  c3:   {section: lower, pattern: always, score: total}
  ones: {section: upper, pattern: {kind: face, face: 1}, score: sum}
  pair: {section: lower, pattern: {kind: of_a_kind, n: 2}, score: 8}
bonuses:
  up: {kind: threshold, section: upper, at_least: 2, points: 5}
""",  # the chance boxes' many totals make every card distinct to the brute force: five boxes at most
    "sym-upper": """
id: tiny-sym-upper
dice: {count: 3, faces: 3}
turn: {rolls: 2}
boxes:
  twos_a: {section: upper, pattern: {kind: face, face: 2}, score: sum}
  twos_b: {section: upper, pattern: {kind: face, face: 2}, score: sum}
  threes: {section: upper, pattern: {kind: face, face: 3}, score: sum}
  pair:   {section: lower, pattern: {kind: of_a_kind, n: 2}, score: 8}
bonuses:
  up: {kind: threshold, section: upper, at_least: 12, points: 9}
""",
    "served": """
id: tiny-served
dice: {count: 3, faces: 3}
turn: {rolls: 3}
boxes:
  ones:     {section: upper, pattern: {kind: face, face: 1}, score: sum}
  threes:   {section: upper, pattern: {kind: face, face: 3}, score: sum}
  straight: {section: lower, pattern: {kind: straight, runs: [[1, 2, 3]]}, score: 10, first_roll: {add: 6}}
  triple:   {section: lower, pattern: {kind: of_a_kind, n: 3}, score: sum, first_roll: {multiply: 2}}
""",
    "stages": """
id: tiny-stages
dice: {count: 2, faces: 4}
turn: {rolls: 2}
boxes:
  ones:   {section: s1, stage: 1, pattern: {kind: face, face: 1}, score: {kind: relative, face: 1, par: 1}}
  fours:  {section: s1, stage: 1, pattern: {kind: face, face: 4}, score: {kind: relative, face: 4, par: 1}}
  pair:   {section: s2, stage: 2, pattern: {kind: of_a_kind, n: 2}, score: sum, first_roll: {multiply: 2}, extra: 3}
  chance: {section: s2, stage: 2, pattern: {kind: none_of, boxes: [pair]}, score: sum}
bonuses:
  stage: {kind: threshold, section: s1, at_least: 1, points: 7}
rules:
  stage_order: {}
""",
    "flags": """
id: tiny-flags
dice: {count: 2, faces: 3}
turn: {rolls: 2}
options:
  joker: {default: free, choices: [free, forced, none]}
boxes:
  ones:   {section: upper, pattern: {kind: face, face: 1}, score: sum}
  threes: {section: upper, pattern: {kind: face, face: 3}, score: sum}
  run:    {section: lower, pattern: {kind: straight, runs: [[1, 2], [2, 3]]}, score: 15}
  yam:    {section: lower, pattern: {kind: of_a_kind, n: 2}, score: 20}
  double: {section: lower, pattern: {kind: of_a_kind, n: 2}, score: 40}
bonuses:
  extra_yam: {kind: event, pattern_of: yam, box_holds: {yam: 20}, points: 30}
rules:
  joker: {mode: "${joker}", box: yam, points: {run: 15}, upper_section: upper}
  box_requires: {boxes: {double: {yam: 20}}}
""",
    "eight-faces": """
id: tiny-eight-faces
dice: {count: 2, faces: 8}
turn: {rolls: 2}
boxes:
  low:   {section: upper, pattern: {kind: face, face: 1}, score: sum}
  high:  {section: upper, pattern: {kind: face, face: 8}, score: sum}
  run:   {section: lower, pattern: {kind: straight, length: 2}, score: 9, first_roll: {add: 5}}
bonuses:
  up: {kind: threshold, section: upper, at_least: 10, points: 20}
""",
    "two-groups": """
id: tiny-two-groups
dice: {count: 2, faces: 3}
turn: {rolls: 2}
boxes:
  ones:   {section: upper, pattern: {kind: face, face: 1}, score: sum}
  twos:   {section: upper, pattern: {kind: face, face: 2}, score: sum}
  threes: {section: upper, pattern: {kind: face, face: 3}, score: sum}
  pair:   {section: lower, pattern: {kind: of_a_kind, n: 2}, score: sum}
  run:    {section: lower, pattern: {kind: straight, runs: [[1, 2], [2, 3]]}, score: 5}
bonuses:
  low_faces: {kind: threshold, boxes: [ones, twos], at_least: 4, points: 9}
  high:      {kind: threshold, boxes: [threes, pair], at_least: 9, points: 7}
""",  # two threshold groups on different boxes: the search keeps two totals
    "banked": """
id: tiny-banked
dice: {count: 2, faces: 3}
turn: {rolls: 2, carry_over: true}
boxes:
  ones:   {section: upper, pattern: {kind: face, face: 1}, score: sum}
  threes: {section: upper, pattern: {kind: face, face: 3}, score: sum}
  pair:   {section: lower, pattern: {kind: of_a_kind, n: 2}, score: 10}
  run:    {section: lower, pattern: {kind: straight, runs: [[1, 2], [2, 3]]}, score: 7}
bonuses:
  up: {kind: threshold, section: upper, at_least: 8, points: 6}
""",
    "banked-three": """
id: tiny-banked-three
dice: {count: 3, faces: 2}
turn: {rolls: 3, carry_over: true}
boxes:
  ones:  {section: upper, pattern: {kind: face, face: 1}, score: sum}
  twos:  {section: upper, pattern: {kind: face, face: 2}, score: sum}
  all:   {section: lower, pattern: {kind: of_a_kind, n: 3}, score: 12}
""",
    "banked-served": """
id: tiny-banked-served
dice: {count: 2, faces: 3}
turn: {rolls: 2, carry_over: true}
boxes:
  ones:  {section: upper, pattern: {kind: face, face: 1}, score: sum}
  pair:  {section: lower, pattern: {kind: of_a_kind, n: 2}, score: 6, first_roll: {add: 9}}
  run:   {section: lower, pattern: {kind: straight, runs: [[1, 2], [2, 3]]}, score: 5, first_roll: {multiply: 3}}
""",
    "single-roll": """
id: tiny-single-roll
dice: {count: 3, faces: 2}
turn: {rolls: 1}
boxes:
  ones:  {section: upper, pattern: {kind: face, face: 1}, score: sum, first_roll: {add: 1}}
  twos:  {section: upper, pattern: {kind: face, face: 2}, score: sum}
  all:   {section: lower, pattern: {kind: of_a_kind, n: 3}, score: 12}
bonuses:
  up: {kind: threshold, boxes: [ones, twos], at_least: 5, points: 4}
""",  # two columns, the second scoring double, nothing crossing them (bot strong's parts)
    "two-columns": """id: tiny-two-columns
dice: {count: 2, faces: 3}
turn: {rolls: 2}
columns:
  a: {name: A}
  b: {name: B, multiplier: 2}
boxes:
  ones:   {section: upper, pattern: {kind: face, face: 1}, score: sum}
  threes: {section: upper, pattern: {kind: face, face: 3}, score: sum}
  pair:   {section: lower, pattern: {kind: of_a_kind, n: 2}, score: 8}
bonuses:
  up: {kind: threshold, section: upper, at_least: 4, points: 5}
""",
}


# A free column and an announced one: beyond the solver (announcements), bot strong's ground (not in TINY,
# whose games the solver takes).
ANNOUNCED = """id: tiny-announced
dice: {count: 2, faces: 3}
turn: {rolls: 2}
columns:
  free: {name: Free}
  call: {name: Announce, order: announced}
boxes:
  ones:  {pattern: {kind: face, face: 1}, score: sum}
  threes: {pattern: {kind: face, face: 3}, score: sum}
  pair:  {pattern: {kind: of_a_kind, n: 2}, score: 8}
"""


def tiny_variant(tmp_path: Path, name: str, engine: Engine | None = None, options: dict | None = None) -> Variant:
    """Compile one of the TINY variants from a file in tmp_path."""
    path = tmp_path / f"tiny-{name}.yaml"
    path.write_text(TINY[name], encoding="utf-8")
    return (engine or Engine(entry_points=False)).load_file(path, options)


def brute_values(variant: Variant, final: Callable[[int], Any] = float):
    """The brute-force value function: expected final total of optimal solitaire play from a state (or, with
    `final`, the expected final(total) of the play that maximises it; a `final` returning an array gives every
    entry's own maximum at once, as separate plays would).

    Plain recursion over GameState's own actions and chance outcomes (memoised
    on the card, the sorted dice and the roll count), sharing no code with the solver.
    """
    memo: dict[tuple, Any] = {}

    def value(state: GameState) -> Any:
        key = (
            state.card,
            tuple(sorted(state.dice)),
            state.rolls_used,
            None if state.held is None else tuple(sorted(state.held)),
            state.over,
            state.banked,  # rolls carried over from earlier turns (variants that bank them)
        )
        got = memo.get(key)
        if got is not None:
            return got
        if state.over:
            got = final(state.totals()[0])
        elif state.is_chance:
            got = sum(float(p) * value(state.apply(a)) for a, p in state.chance_outcomes())
        else:
            options = [value(state.apply(a)) for a in state.legal_actions()]
            # A vector `final` (one entry per objective) is maximised entry by entry: each its own play.
            got = np.maximum.reduce(options) if isinstance(options[0], np.ndarray) else max(options)
        memo[key] = got
        return got

    return value


def draw_outcome(state: GameState, rng: random.Random) -> GameState:
    """The state after one of a chance node's outcomes, drawn with its probability."""
    outcomes = state.chance_outcomes()
    return state.apply(rng.choices([a for a, _ in outcomes], [float(p) for _, p in outcomes])[0])


def random_decisions(variant: Variant, games: int, seed: int) -> Iterator[GameState]:
    """Every decision of `games` solitaire games played at random (dice drawn with their probabilities)."""
    rng = random.Random(seed)
    for _ in range(games):
        state = GameState.new(variant, 1)
        while not state.over:
            if state.is_chance:
                state = draw_outcome(state, rng)
                continue
            yield state
            state = state.apply(rng.choice(state.legal_actions()))


def brute_force(variant: Variant) -> float:
    """Expected final total of optimal solitaire play from the start of a game."""
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10_000))
    try:
        return brute_values(variant)(GameState.new(variant, 1))
    finally:
        sys.setrecursionlimit(limit)


def cli_run(*args: str):
    """The CLI in-process, on a wide terminal so that nothing it prints is wrapped."""
    from typer.testing import CliRunner

    from dicecup.cli.app import app

    return CliRunner().invoke(app, list(args), env={"COLUMNS": "200"})


def cli_schema(command: str):
    """The JSON Schema validator of one command's --json output."""
    import json
    from importlib import resources

    from jsonschema import Draft202012Validator

    text = (resources.files("dicecup.cli") / "schemas" / f"{command}.json").read_text()
    return Draft202012Validator(json.loads(text))


def decision_states(variant, count: int, seed: int) -> list[GameState]:
    """Decision states met in random games (every turn and roll number), `count` of them."""
    rng = random.Random(seed)
    bot = RandomBot(random.Random(seed + 1))
    out: list[GameState] = []
    while len(out) < count:
        state = GameState.new(variant, 1)
        while not state.over and len(out) < count:
            if state.is_chance:
                state = state.roll(rng)
                continue
            if rng.random() < 0.3:
                out.append(state)
            state = state.apply(bot.choose(state))
    return out


def forget_advice(v) -> None:
    """What a new process knows of the advisor's tables for `v`: nothing (the engine's memory of it let go of)."""
    from dicecup.solver import advisor_memory

    advisor_memory.forget(v)


def rewrite_kept(path: Path, change) -> None:
    """Write the kept file again with `change(header, arrays)` applied and the old signature left as it was."""
    with np.load(io.BytesIO(path.read_bytes()), allow_pickle=False) as data:
        header = json.loads(bytes(data["header"]).decode())
        arrays = {k: data[k] for k in data.files if k != "header"}
    change(header, arrays)
    head = np.frombuffer(json.dumps(header).encode(), dtype=np.uint8)
    with open(path, "wb") as fh:
        np.savez(fh, header=head, **arrays)


def flip_array_byte(path: Path, member: str | None = None) -> None:
    """Flip the last byte of an array's data in the signed .npz at `path` (the largest member's, or
    `member`'s): the file stays a well-formed zip whose signature no longer holds."""
    with zipfile.ZipFile(path) as zf:
        info = zf.getinfo(f"{member}.npy") if member else max(zf.infolist(), key=lambda i: i.file_size)
    raw = bytearray(path.read_bytes())
    name_len, extra_len = struct.unpack("<2H", raw[info.header_offset + 26 : info.header_offset + 30])
    raw[info.header_offset + 30 + name_len + extra_len + info.file_size - 1] ^= 0xFF
    path.write_bytes(bytes(raw))


def share(state: GameState, player: int) -> float:
    """`player`'s share of the win of a finished game (a k-way tie shares it)."""
    won = state.winners()
    return 1.0 / len(won) if state.players[player] in won else 0.0


def state_key(s: GameState) -> tuple:
    held = None if s.held is None else tuple(sorted(s.held))
    return (s.cards, s.current, tuple(sorted(s.dice)), s.rolls_used, held, s.over)


def deep_recursion(fn):
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 20_000))
    try:
        return fn()
    finally:
        sys.setrecursionlimit(limit)


# three boxes, a bonus: small enough for a brute force of the two-player game in a second or two
MICRO_DUEL = """
id: micro-duel
dice: {count: 2, faces: 3}
turn: {rolls: 2}
boxes:
  ones:   {section: upper, pattern: {kind: face, face: 1}, score: sum}
  threes: {section: upper, pattern: {kind: face, face: 3}, score: sum}
  pair:   {section: lower, pattern: {kind: of_a_kind, n: 2}, score: 8}
bonuses:
  up: {kind: threshold, section: upper, at_least: 4, points: 5}
"""


@cache
def micro_duel(text: str):
    """(variant, solution, planner) of a micro variant (the variant compiled from text in memory)."""
    import tempfile
    from pathlib import Path

    from dicecup.simulate import win

    path = Path(tempfile.mkdtemp()) / "micro.yaml"
    path.write_text(text, encoding="utf-8")
    v = Engine(entry_points=False).load_file(path)
    solution = solve(v)
    return v, solution, win.WinPlanner(solution, win.build_table(solution))
