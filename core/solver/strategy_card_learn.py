"""A strategy card distilled from the exact solver, and its value measured by play.

Positions are drawn by playing games (optimal play, then the card's own play, so the card learns the positions
it leads to); at each, the solver's option values give every human action's loss: the expected final score it
gives up against the best move. Rules are picked greedily: each step adds the rule (a rolls test, up to two
feature tests, one action) that lowers the total loss over the positions the most, placed first on the card
or just before the default, so the training loss never rises with another rule. The card's value is the mean
final score of games in which the card makes every decision.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Iterator
from typing import NamedTuple

import numpy as np

from ..errors import DicecupError
from ..game.actions import Keep, Score
from ..game.state import GameState
from ..language.model import Card, Variant
from ..progress import NULL, Reporter, task
from .advice import advise_state
from .solve import Solution
from .strategy_card import ANY, SOME, Rule, StrategyCard, View, Vocabulary, view_of

__all__ = ["Choice", "Measured", "Positions", "card_after", "induce", "measure", "positions", "state_view"]

#: an action's loss where it is not legal (it does not fire there)
ILLEGAL = math.inf


class Positions(NamedTuple):
    """Decisions drawn from play: rolls left (P,), each feature's truth (P, F) and each action's loss (P, A)."""

    rolls: np.ndarray
    truth: np.ndarray
    loss: np.ndarray
    default: np.ndarray  # (P,) the default's loss

    def __add__(self, other: object) -> Positions:
        assert isinstance(other, Positions)
        return Positions(*(np.concatenate([a, b]) for a, b in zip(self, other, strict=True)))


class Choice(NamedTuple):
    """One greedy step: the rule, whether it goes first on the card (else just before the default), its gain."""

    rule: Rule
    front: bool
    gain: float


class Measured(NamedTuple):
    """A card's value by play: mean final score, its standard error, games played."""

    mean: float
    stderr: float
    games: int


def state_view(vocab: Vocabulary, state: GameState, points: dict[str, int] | None = None) -> View:
    """The `View` of a decision state; `points` (each legal box's points now) computed when not given."""
    v = vocab.variant
    roll = state.roll_now
    assert roll is not None  # a decision: dice on the table
    if points is None:
        sit, first = state.situation(), state.first_roll
        points = {b: v.score(state.card, b, roll, first, sit).points for b in state.legal_boxes()}
    return view_of(v, vocab, state.card, roll, state.rolls_left, state.may_reroll(), points)


def play(variant: Variant, decide: Callable[[GameState], Keep | Score], rng: random.Random) -> GameState:
    """One solitaire game to its end, `decide` making every decision."""
    state = GameState.new(variant)
    while not state.over:
        state = state.roll(rng) if state.is_chance else state.apply(decide(state))
    return state


Record = tuple[View, dict[Keep | Score, float], float]


def decisions(solution: Solution, vocab: Vocabulary, card: StrategyCard | None, rng: random.Random,
              finals: list[Card]) -> Iterator[Record]:  # fmt: skip
    """Every decision of one game played by `card` (None: optimal play), as (view, each move's value, best);
    the finished card is added to `finals`."""
    state = GameState.new(solution.variant)
    while not state.over:
        if state.is_chance:
            state = state.roll(rng)
            continue
        options = advise_state(solution, state)
        points = {o.action.box: o.points for o in options if isinstance(o.action, Score) and o.points is not None}
        view = state_view(vocab, state, points)
        yield view, {o.action: o.value for o in options}, options[0].value
        state = state.apply(options[0].action if card is None else card.choose(view))
    finals.append(state.card)


def records(
    solution: Solution,
    vocab: Vocabulary,
    games: int,
    rng: random.Random,
    card: StrategyCard | None = None,
    progress: Reporter = NULL,
) -> tuple[list[Record], list[Card]]:
    """The decisions of `games` games played by `card` (None: optimally), and the games' finished cards."""
    out: list[Record] = []
    finals: list[Card] = []
    for _game in range(games):
        out.extend(decisions(solution, vocab, card, rng, finals))
        progress.advance()
    return out, finals


def targets_of(variant: Variant, finals: list[Card]) -> dict[str, int]:
    """Each box's target: what the finished cards wrote in it, on average, rounded."""
    return {b: round(sum(variant.written(b, c.scores[b]) for c in finals) / len(finals)) for b in variant.box_ids}


def positions(vocab: Vocabulary, recs: list[Record]) -> Positions:
    """Decisions as `Positions`: each feature's truth and each of the vocabulary's actions' loss."""
    default = StrategyCard(vocab, ()).default
    rolls, truth, loss, base = [], [], [], []
    n_actions = len(vocab.actions)
    for view, values, best in recs:
        rolls.append(view.rolls_left)
        truth.append(vocab.holds(view))
        row = []
        for a in range(n_actions):
            move = vocab.resolve(a, view)
            row.append(best - values[move] if move in values else ILLEGAL)
        loss.append(row)
        base.append(best - values[default(view)])
    return Positions(
        np.array(rolls, dtype=np.int64),
        np.array(truth, dtype=bool).reshape(len(rolls), len(vocab.features)),
        np.maximum(np.array(loss, dtype=np.float64).reshape(len(rolls), n_actions), 0.0),
        np.maximum(np.array(base, dtype=np.float64), 0.0),
    )


def rolls_tests(variant: Variant) -> list[int]:
    """The rolls tests a rule may make: any, none left, each count left, and (with three rolls or more) some."""
    return [ANY, *range(variant.rolls), *([SOME] if variant.rolls > 2 else [])]


class _Greedy:
    """The greedy search's state: each candidate rule's gain, kept current as rules are added.

    A candidate is a slot (rolls test, action, placement) and a pair of features (a feature with itself: one
    test; with the all-true column: none). Gains are sums over positions of products of feature columns, so
    they are one matrix product, updated after each rule over the positions whose move it changed."""

    CHUNK = 2048  # positions per matrix product (bounds the memory of the pair columns)

    def __init__(self, pos: Positions, tests: list[int]) -> None:
        n = len(pos.rolls)
        self.pos, self.tests = pos, tests
        self.x = np.concatenate([pos.truth, np.ones((n, 1), dtype=bool)], axis=1)
        self.iu, self.ju = np.triu_indices(self.x.shape[1])
        self.legal = np.isfinite(pos.loss)
        self.loss0 = np.where(self.legal, pos.loss, 0.0)
        self.masks = np.stack([_rolls_mask(pos.rolls, t) for t in tests])  # (tests, P)
        self.cur = pos.default.copy()
        self.at_default = np.ones(n, dtype=bool)
        n_slots = len(tests) * pos.loss.shape[1] * 2
        self.gain = np.zeros((n_slots, len(self.iu)))
        rows, minus = np.arange(n), -np.ones(n)
        self._add(rows, (self.cur, minus), (self.cur, minus))

    def _add(self, rows: np.ndarray, front: tuple[np.ndarray, ...], end: tuple[np.ndarray, ...]) -> None:
        """Add to the gains, over `rows`, c + s x (the action's loss) where the rule fires, (c, s) per row:
        `front` for the slots placed first, `end` for those placed before the default."""
        for lo in range(0, len(rows), self.CHUNK):
            part = slice(lo, lo + self.CHUNK)
            r = rows[part]
            fires = self.masks[:, r][:, :, None] & self.legal[r][None, :, :]  # (tests, R, A)
            loss = self.loss0[r][None, :, :]
            w_front = fires * (front[0][part, None] + front[1][part, None] * loss)
            w_end = fires * (end[0][part, None] + end[1][part, None] * loss)
            w = np.stack([w_front, w_end], axis=-1).transpose(0, 2, 3, 1).reshape(-1, len(r))  # (slots, R)
            xr = self.x[r]
            pairs = (xr[:, self.iu] & xr[:, self.ju]).astype(np.float32)
            self.gain += (w.astype(np.float32) @ pairs).astype(np.float64)

    def best(self) -> tuple[int, int]:
        """(slot, pair) of the largest gain."""
        flat = int(np.argmax(self.gain))
        return divmod(flat, self.gain.shape[1])

    def rule_of(self, slot: int, pair: int) -> tuple[Rule, bool]:
        n_actions = self.pos.loss.shape[1]
        t, rest = divmod(slot, n_actions * 2)
        action, end = divmod(rest, 2)
        last = self.x.shape[1] - 1
        tests = tuple(sorted({int(self.iu[pair]), int(self.ju[pair])} - {last}))
        return Rule(self.tests[t], tests, action), not end

    def covered(self, rule: Rule, front: bool) -> np.ndarray:
        """The positions a rule placed so would take over."""
        fires = _rolls_mask(self.pos.rolls, rule.rolls) & self.legal[:, rule.action]
        for t in rule.tests:
            fires &= self.x[:, t]
        return fires if front else fires & self.at_default

    def take(self, rule: Rule, front: bool) -> float:
        """Add the rule; its exact gain (the fall of the total loss)."""
        rows = np.flatnonzero(self.covered(rule, front))
        old, new = self.cur[rows], self.pos.loss[rows, rule.action]
        gain = float((old - new).sum())
        was = self.at_default[rows].astype(np.float64)
        # first-placed candidates: the loss they would replace falls by (old - new) there; candidates placed
        # before the default lose these positions (no longer the default's): minus what they gained there
        self._add(rows, (new - old, np.zeros(len(rows))), (-old * was, was))
        self.cur[rows] = new
        self.at_default[rows] = False
        return gain

    def forget(self, slot: int, pair: int) -> None:
        self.gain[slot, pair] = -np.inf


def _rolls_mask(rolls: np.ndarray, test: int) -> np.ndarray:
    if test == ANY:
        return np.ones(len(rolls), dtype=bool)
    return rolls > 0 if test == SOME else rolls == test


def induce(pos: Positions, vocab: Vocabulary, rules: int, progress: Reporter = NULL) -> list[Choice]:
    """Up to `rules` greedy steps over `pos` (fewer when no rule lowers the loss any more)."""
    greedy = _Greedy(pos, rolls_tests(vocab.variant))
    out: list[Choice] = []
    while len(out) < rules:
        slot, pair = greedy.best()
        if not greedy.gain[slot, pair] > 1e-6:
            break
        rule, front = greedy.rule_of(slot, pair)
        gain = greedy.take(rule, front)
        if gain <= 1e-9:  # (the float32 sums overrated it: it never takes a place)
            greedy.forget(slot, pair)
            continue
        out.append(Choice(rule, front, gain))
        progress.advance()
    return out


def card_after(vocab: Vocabulary, choices: list[Choice], k: int) -> StrategyCard:
    """The card the first `k` greedy steps make."""
    rules: list[Rule] = []
    for c in choices[:k]:
        if c.front:
            rules.insert(0, c.rule)
        else:
            rules.append(c.rule)
    return StrategyCard(vocab, rules)


def training_loss(card: StrategyCard, pos: Positions) -> float:
    """The card's total loss over `pos` (each position's move by the card's rules, exactly)."""
    total = 0.0
    done = np.zeros(len(pos.rolls), dtype=bool)
    for rule in card.rules:
        fires = ~done & _rolls_mask(pos.rolls, rule.rolls) & np.isfinite(pos.loss[:, rule.action])
        for t in rule.tests:
            fires &= pos.truth[:, t]
        total += float(pos.loss[fires, rule.action].sum())
        done |= fires
    return total + float(pos.default[~done].sum())


def measure(card: StrategyCard, games: int, seed: int, progress: Reporter = NULL) -> Measured:
    """The card's value: the mean final score of `games` games it plays (seeded), with its standard error."""
    if games < 1:
        raise DicecupError(f"a card's value needs at least one game, got {games}")
    rng = random.Random(seed)
    v = card.vocab.variant
    scores = []
    with task(progress, f"playing {games:,} games with a card of {len(card.rules)} rules", games, "games"):
        for _game in range(games):
            end = play(v, lambda s: card.choose(state_view(card.vocab, s)), rng)
            scores.append(v.total(end.card))
            progress.advance()
    mean = sum(scores) / len(scores)
    var = sum((s - mean) ** 2 for s in scores) / max(1, len(scores) - 1)
    return Measured(mean, math.sqrt(var / len(scores)), len(scores))


class Distilled(NamedTuple):
    """A distilled card's greedy steps (the card of k rules is `card_after(vocab, choices, k)`) and the
    positions it was trained on."""

    vocab: Vocabulary
    choices: list[Choice]
    positions: Positions


def distil(solution: Solution, rules: int, games: int, rounds: int, seed: int, progress: Reporter = NULL) -> Distilled:
    """A card of up to `rules` rules: positions of `games` optimal games, then for each further round those of
    `games` games the card so far plays, the rules picked again over them all (the card learns the positions
    its own play leads to, not only the optimal player's)."""
    if rules < 0 or games < 1 or rounds < 1:
        raise DicecupError(f"a card needs rules >= 0, games >= 1 and rounds >= 1; got {rules}, {games}, {rounds}")
    v = solution.variant
    rng = random.Random(seed)
    with task(progress, f"positions of {games:,} optimal games of {v.id}", games, "games"):
        recs, finals = records(solution, Vocabulary(v), games, rng, None, progress)
    vocab = Vocabulary(v, targets_of(v, finals))
    pos = positions(vocab, recs)
    choices: list[Choice] = []
    for round_ in range(rounds):
        if round_:
            with task(progress, f"positions of {games:,} games the card plays", games, "games"):
                pos = pos + positions(
                    vocab, records(solution, vocab, games, rng, card_after(vocab, choices, rules), progress)[0]
                )
        with task(progress, f"picking {rules} rules", rules, "rules"):
            choices = induce(pos, vocab, rules, progress)
    return Distilled(vocab, choices, pos)
