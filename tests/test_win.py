"""bot:win and the exact two-player game: against brute force over GameState on tiny variants (sharing no
code with the table, the planner or the duel), the table's cache against hostile files, and the bot's moves
against the engine's legality."""

from __future__ import annotations

import random
import sys
from functools import lru_cache

import numpy as np
import pytest
from _solver_helpers import tiny_variant

from dicecup import Card, Engine, GameState
from dicecup.errors import DicecupError
from dicecup.simulate import distribution as dist_mod
from dicecup.solver import solve
from dicecup.solver.advice import best_action

pytestmark = pytest.mark.skipif(not dist_mod.AVAILABLE, reason="bot win needs numba")

CASES = ["threshold", "served", "two-groups"]


def share(state: GameState, player: int) -> float:
    """`player`'s share of the win of a finished game (a k-way tie shares it)."""
    won = state.winners()
    return 1.0 / len(won) if state.players[player] in won else 0.0


def _key(s: GameState) -> tuple:
    held = None if s.held is None else tuple(sorted(s.held))
    return (s.cards, s.current, tuple(sorted(s.dice)), s.rolls_used, held, s.over)


def _deep(fn):
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 20_000))
    try:
        return fn()
    finally:
        sys.setrecursionlimit(limit)


def brute_duel(v) -> float:
    """Player one's share of the win when both play to win: expectimax over GameState (player one maximises
    its share, player two minimises it: the shares sum to 1)."""
    memo: dict[tuple, float] = {}

    def walk(s: GameState) -> float:
        key = _key(s)
        if key in memo:
            return memo[key]
        if s.over:
            out = share(s, 0)
        elif s.is_chance:
            out = sum(float(p) * walk(s.apply(a)) for a, p in s.chance_outcomes())
        else:
            vals = [walk(s.apply(a)) for a in s.legal_actions()]
            out = max(vals) if s.current == 0 else min(vals)
        memo[key] = out
        return out

    return _deep(lambda: walk(GameState.new(v, ["a", "b"])))


def brute_turn(v, solution, state: GameState) -> float:
    """The mover's best share of the win over its play of this turn, every later decision (its own and the
    others') the mean-optimal solver's: what bot:win maximises."""
    me, card = state.current, state.card
    memo: dict[tuple, float] = {}

    def walk(s: GameState) -> float:
        key = _key(s)
        if key in memo:
            return memo[key]
        mine = s.current == me and s.cards[me] == card and not s.over
        if s.over:
            out = share(s, me)
        elif s.is_chance:
            out = sum(float(p) * walk(s.apply(a)) for a, p in s.chance_outcomes())
        elif mine:
            out = max(walk(s.apply(a)) for a in s.legal_actions())
        else:
            out = walk(s.apply(best_action(solution, s)))
        memo[key] = out
        return out

    return _deep(lambda: walk(state))
