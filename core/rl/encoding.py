"""The one encoding both learning environments use: actions as fixed indices with a mask, states as a vector.

Actions form one `Discrete` space in three blocks: keeps (bit `i` keeps die `i` of the dice sorted by
value; of equal dice only the leftmost may be kept, so each legal keep index is exactly one engine `Keep`),
one index per box in card order, then each verb a rule declares, with no argument and with each box id.
The mask marks exactly `GameState.legal_actions()`. The observation is a float32 vector of named parts
(`Encoding.parts`; the dict form holds them as separate arrays) seen from the observing player's seat;
a one-player game has no parts about other players, so the gymnasium vector is the PettingZoo one's.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np
from gymnasium import spaces

from ..errors import DicecupError
from ..game.actions import Action, Keep, RuleAction, Score
from ..game.state import GameState
from ..language.card import Card
from ..language.engine import Engine
from ..language.model import Variant

__all__ = ["Encoding", "EncodingError", "SCORE_BOUND"]

#: Bound of the score-like parts of the observation space (far above any game's score).
SCORE_BOUND = 1_000_000


class EncodingError(DicecupError):
    """A variant or a rule action the fixed encoding cannot represent (too many dice, an unknown rule action)."""


#: Keeps are bitmasks over the dice: beyond this many dice the action space would pass 65,535 keeps.
MAX_DICE = 16


class Encoding:
    """Action indices, masks and observations for one variant and a number of players.

    The observation's parts, in order (a part with no entries for the variant is left out): `dice`,
    `face_counts`, `attributes`, `rolls_used`, `rolls_left`, `banked`, `open`, `scores`, `group_totals`,
    `flags`, `column_totals`, `total`, `figures`, `turn_actions`, `others_totals`, `to_act`. The card parts
    are the observing player's; the dice, rolls and turn actions are the acting player's turn.
    """

    def __init__(self, variant: Variant, engine: Engine, players: int = 1) -> None:
        if variant.dice > MAX_DICE:
            raise EncodingError(
                f"{variant.id}: keeps are encoded as subsets of the dice, and {variant.dice} dice would give "
                f"{2**variant.dice - 1:,} keep actions; at most {MAX_DICE} dice are supported"
            )
        self.variant = variant
        self.players = players
        n, faces = variant.dice, variant.faces
        self.keep_count = 2**n - 1
        self.box_ids = variant.box_ids
        self.box_index = {b: self.keep_count + i for i, b in enumerate(self.box_ids)}
        self.rule_slots: tuple[RuleAction, ...] = tuple(
            RuleAction(rule, verb, arg)
            for rule, verb in _declared_verbs(variant, engine)
            for arg in (None, *self.box_ids)
        )
        first_rule = self.keep_count + len(self.box_ids)
        self.rule_index: dict[tuple[str, str, Any], int] = {
            (a.rule, a.name, a.arg): first_rule + i for i, a in enumerate(self.rule_slots)
        }
        self.size = first_rule + len(self.rule_slots)
        self._keeps: dict[tuple[int, ...], np.ndarray] = {}
        self._attr_values: list[tuple[str, Any]] = [
            (name, value)
            for name, per_face in variant.attributes.items()
            for value in dict.fromkeys(v for v in per_face[1:] if v is not None)
        ]
        self._attr_faces = [
            [f for f in range(1, faces + 1) if variant.attributes[name][f] == value]
            for name, value in self._attr_values
        ]
        self.groups = variant.state_totals()
        self.flags = variant.state_flags()
        self.columns = tuple(c.id for c in variant.columns) if len(variant.columns) > 1 else ()
        self.figures = tuple(f.id for f in variant.figures)
        parts = self._observation_parts(n, faces, players)
        self.parts = tuple((name, count, lo, hi) for name, count, lo, hi in parts if count)
        self.layout: dict[str, slice] = {}
        start = 0
        for name, count, _, _ in self.parts:
            self.layout[name] = slice(start, start + count)
            start += count
        self.length = start
        self._rolls = self._dice_end = self.layout["rolls_used"].start  # dice, face counts, attributes come first
        card_parts = [
            p
            for p in ("open", "scores", "group_totals", "flags", "column_totals", "total", "figures")
            if p in self.layout
        ]
        self._card = slice(self.layout[card_parts[0]].start, self.layout[card_parts[-1]].stop)
        self._total = self.layout["total"].start - self._card.start
        self._first_rule = first_rule
        self._dice: dict[tuple[int, ...], np.ndarray] = {}
        self._group_index = [[self.box_ids.index(b) for b in g.boxes] for g in self.groups]
        self._make_spaces()

    def _observation_parts(self, n: int, faces: int, players: int) -> list[tuple[str, int, float, float]]:
        """(name, entries, low, high) of each part of the observation, in vector order (empty ones included)."""
        variant = self.variant
        max_rolls = variant.rolls + (variant.rolls - 1) * len(self.box_ids) if variant.carry_over else variant.rolls
        s = SCORE_BOUND
        return [
            ("dice", n, 0, faces),  # the dice on the table sorted by value (0: none)
            ("face_counts", faces, 0, n),  # how many dice show face 1, 2, ...
            ("attributes", len(self._attr_values), 0, n),  # dice per value of each attribute (Kismet's colours)
            ("rolls_used", 1, 0, max_rolls),
            ("rolls_left", 1, 0, max_rolls),  # banked rolls included
            ("banked", 1 if variant.carry_over else 0, 0, max_rolls),  # rolls banked for later turns
            ("open", len(self.box_ids), 0, 1),  # 1 while the box is open
            ("scores", len(self.box_ids), -s, s),  # as written (column multiplier applied), 0 while open
            ("group_totals", len(self.groups), -s, s),  # running total of each bonus's group (the upper section)
            ("flags", len(self.flags), 0, 1),  # 1 where a box holds a value the rules read (Yahtzee box holds 50)
            ("column_totals", len(self.columns), -s, s),  # each column's score, its bonuses included
            ("total", 1, -s, s),  # the player's total score now
            ("figures", len(self.figures), -s, s),  # other figures players are ranked by (Balut's points)
            ("turn_actions", len(self.rule_slots), 0, 1),  # 1 per rule action taken this turn (an announcement)
            ("others_totals", players - 1, -s, s),  # the other players' totals, in seat order after this player
            ("to_act", 1 if players > 1 else 0, 0, 1),  # 1 when this player is the one to act
        ]

    def _make_spaces(self) -> None:
        """The gymnasium spaces of the observation (as one vector and as a dict of parts) and of the actions."""
        low = np.concatenate([np.full(c, lo, np.float32) for _, c, lo, _ in self.parts])
        high = np.concatenate([np.full(c, hi, np.float32) for _, c, _, hi in self.parts])
        self.vector_space = spaces.Box(low, high, dtype=np.float32)
        self.dict_space = spaces.Dict(
            {name: spaces.Box(lo, hi, shape=(c,), dtype=np.float32) for name, c, lo, hi in self.parts}
        )
        self.action_space = spaces.Discrete(self.size)
        self.scale = np.maximum(np.minimum(np.abs(high), _typical(self.variant, self.parts)), 1).astype(np.float32)

    # ------------------------------------------------------------------ actions

    def label(self, index: int) -> str:
        """What action `index` does, in words (`keep sorted dice 1,2,5`, `score ones`, `announce down.ones`)."""
        if 0 <= index < self.keep_count:
            kept = [i for i in range(self.variant.dice) if index >> i & 1]
            return "reroll every die" if not kept else "keep sorted dice " + ",".join(str(i + 1) for i in kept)
        if index < self.keep_count + len(self.box_ids):
            return f"score {self.box_ids[index - self.keep_count]}"
        return self.rule_slots[index - self.keep_count - len(self.box_ids)].label

    def keep_mask(self, dice: tuple[int, ...]) -> np.ndarray:
        """The legal keep indices for these sorted dice: one per distinct keep, the leftmost of equal dice."""
        got = self._keeps.get(dice)
        if got is None:
            ok = [
                m
                for m in range(self.keep_count)
                if all(
                    not (m >> i & 1) or i == 0 or dice[i] != dice[i - 1] or m >> (i - 1) & 1 for i in range(len(dice))
                )
            ]
            got = self._keeps[dice] = np.array(ok, dtype=np.intp)
        return got

    def mask(self, state: GameState) -> np.ndarray:
        """The action mask of a decision state (int8, 1 for each legal index; all 0 when the game is over)."""
        out = np.zeros(self.size, dtype=np.int8)
        if state.over or state.held is not None:
            return out
        if state.may_reroll():
            out[self.keep_mask(tuple(sorted(state.dice)))] = 1
        for box in state.legal_boxes():
            out[self.box_index[box]] = 1
        for action in state.rule_actions():
            out[self.rule_action_index(action)] = 1
        return out

    def rule_action_index(self, action: RuleAction) -> int:
        """The index of a rule action the rules offer; EncodingError when the encoding has no slot for it."""
        key = (action.rule, action.name, action.arg)
        index = self.rule_index.get(key) if isinstance(action.arg, Hashable) else None
        if index is None:
            raise EncodingError(
                f"{self.variant.id}: rule action {action.label!r} of rule {action.rule!r} has no index: the encoding "
                "covers each action verb a rule declares, with no argument or a box id as its argument"
            )
        return index

    def decode(self, index: int, state: GameState) -> Action:
        """The engine action index `index` stands for in `state` (a keep reads the state's sorted dice)."""
        if index < self.keep_count:
            dice = sorted(state.dice)
            return Keep(tuple(dice[i] for i in range(len(dice)) if index >> i & 1))
        if index < self.keep_count + len(self.box_ids):
            return Score(self.box_ids[index - self.keep_count])
        return self.rule_slots[index - self.keep_count - len(self.box_ids)]

    def encode(self, action: Action, state: GameState) -> int:
        """The index of an engine action in `state` (a keep: the leftmost of equal dice); EncodingError if none."""
        if isinstance(action, Keep):
            return self.keep_index(action.dice, tuple(sorted(state.dice)))
        if isinstance(action, Score):
            if action.box not in self.box_index:
                raise EncodingError(f"{self.variant.id} has no box {action.box!r}")
            return self.box_index[action.box]
        if isinstance(action, RuleAction):
            return self.rule_action_index(action)
        raise EncodingError(f"only decisions have indices (Keep, Score, RuleAction), got {type(action).__name__}")

    def keep_index(self, kept: tuple[int, ...], dice: tuple[int, ...]) -> int:
        """The index of keeping `kept` of the sorted `dice` (the leftmost of equal dice); EncodingError if none."""
        left = list(kept)
        bits = 0
        for i, d in enumerate(dice):
            if d in left:
                left.remove(d)
                bits |= 1 << i
        if left or bits == self.keep_count:
            raise EncodingError(f"keeping {list(kept)} is no keep of the dice {list(dice)}")
        return bits

    # ------------------------------------------------------------------ observations

    def dice_block(self, dice: tuple[int, ...]) -> np.ndarray:
        """The parts `dice`, `face_counts` and `attributes` for these sorted dice (kept per roll: read only)."""
        got = self._dice.get(dice)
        if got is None:
            faces = self.variant.faces
            counts = [dice.count(f) for f in range(1, faces + 1)]
            attrs = [sum(counts[f - 1] for f in fs) for fs in self._attr_faces]
            got = self._dice[dice] = np.array([*dice, *counts, *attrs], dtype=np.float32)
        return got

    def card_block(self, card: Card) -> np.ndarray:
        """The parts `open` to `figures` of a card (worked out once per card: totals ask the rules' hooks)."""
        v = self.variant
        scores = card.scores
        written = [v.written(b, scores[b]) if b in scores else 0 for b in self.box_ids]
        figures = v.figure_totals(card)
        columns = v.column_totals(card) if self.columns else {}
        return np.array(
            [
                *(b not in scores for b in self.box_ids),
                *written,
                *(sum(written[i] for i in group) for group in self._group_index),
                *(flag.holds(card) for flag in self.flags),
                *(columns[c] for c in self.columns),
                figures["score"],
                *(figures.get(f, 0) for f in self.figures),
            ],
            dtype=np.float32,
        )

    def total(self, card_block: np.ndarray) -> int:
        """The total score a `card_block` holds."""
        return int(card_block[self._total])

    def vector(self, state: GameState, player: int, cards: Sequence[np.ndarray]) -> np.ndarray:
        """The observation vector of `player` (`Encoding`'s parts); `cards[i]` is player i's `card_block`."""
        out = np.zeros(self.length, dtype=np.float32)
        if state.dice:
            out[: self._dice_end] = self.dice_block(tuple(sorted(state.dice)))
        lay = self.layout
        if not state.over:
            out[self._rolls] = state.rolls_used
            out[self._rolls + 1] = state.rolls_left
        if self.variant.carry_over:
            out[self._rolls + 2] = state.banked[player]
        out[self._card] = cards[player]
        if self.rule_slots:
            start = lay["turn_actions"].start
            for action in turn_rule_actions(state):
                out[start + self.rule_action_index(action) - self._first_rule] = 1
        if self.players > 1:
            others = [(player + k) % self.players for k in range(1, self.players)]
            out[lay["others_totals"]] = [cards[i][self._total] for i in others]
            out[lay["to_act"]] = float(state.current == player and not state.over)
        return out

    def as_dict(self, vector: np.ndarray) -> dict[str, np.ndarray]:
        """The dict form of an observation vector: one array per part."""
        return {name: vector[self.layout[name]].copy() for name, _, _, _ in self.parts}


def turn_rule_actions(state: GameState) -> list[RuleAction]:
    """The rule actions taken since the turn on the table began (its last box scored)."""
    out: list[RuleAction] = []
    for action in reversed(state.history):
        if isinstance(action, Score):
            break
        if isinstance(action, RuleAction):
            out.append(action)
    return out


def _declared_verbs(variant: Variant, engine: Engine) -> list[tuple[str, str]]:
    """(rule, verb) for each action the variant's enabled rules (its columns' sheets' too) declare."""
    names = [*variant.rules, *(k for sheet in variant.sheets.values() for k in sheet.rules)]
    out: list[tuple[str, str]] = []
    for name in dict.fromkeys(names):
        decl = engine.rules.get(name)
        for verb in decl.actions if decl is not None else ():
            out.append((name, verb))
    return out


def _typical(variant: Variant, parts: Sequence[tuple[str, int, float, float]]) -> np.ndarray:
    """A typical size of each entry, to scale observations for a learner (`Encoding.scale`)."""
    rough = {"scores": 50.0, "group_totals": 100.0, "figures": 10.0}
    rough.update(dict.fromkeys(("column_totals", "total", "others_totals"), 20.0 * len(variant.boxes)))
    return np.concatenate([np.full(c, rough.get(name, hi), np.float32) for name, c, _, hi in parts])
