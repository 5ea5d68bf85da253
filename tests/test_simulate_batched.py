"""The batched simulator against the engine: same tables, same decisions, same totals, same distribution.

The batched simulator never calls the game; these tests check, state by state,
that its tables say what `Variant.score` / `legal_boxes` say, that its policies
pick what `GreedyBot` and the solver's `best_action` pick, that its totals are
`Variant.total` of the cards it produced, and that its games score like games
played through `GameState`.
"""

from __future__ import annotations

import random
from collections import Counter

import numpy as np
import pytest
from _solver_helpers import TINY, decision_states, tiny_variant
from _variants import BUILTIN_VARIANTS
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dicecup import Award, Card, Engine, GameState, Keep, Score, hookimpl
from dicecup.game.bots import GreedyBot
from dicecup.language.tracing import traced_card, traced_roll, tracing
from dicecup.numeric import compiled, draws, scoreclass
from dicecup.numeric.tables import EMPTY, LegalTables, ScoreTables
from dicecup.simulate import jitplay, simulate, summarize
from dicecup.simulate import optimal as optimal_mod
from dicecup.simulate.batch import Batched, GreedyPolicy, RandomPolicy, Turn
from dicecup.simulate.streams import GameStreams

CONFIGS = [(v, {}) for v in BUILTIN_VARIANTS] + [
    ("yahtzee", {"joker": "forced"}),
    ("yahtzee", {"joker": "none"}),
    ("russian", {"chance": "any"}),
]
IDS = [v + "".join(f"-{k}={x}" for k, x in o.items()) for v, o in CONFIGS]


def as_rows(sim: Batched, states: list[GameState]):
    """Card rows, roll ids and flags of decision states, as the batched simulator holds them."""
    v = sim.variant
    vals = np.full((len(states), len(v.box_ids)), EMPTY, dtype=np.int64)
    for i, s in enumerate(states):
        for j, b in enumerate(v.box_ids):
            if b in s.card.scores:
                vals[i, j] = s.card.scores[b]
    roll_id = {r: i for i, r in enumerate(sim.dm.rolls)}
    rolls = np.array([roll_id[tuple(sorted(s.dice))] for s in states], dtype=np.int64)
    return vals, rolls


def decide_each(sim: Batched, policy, states: list[GameState]) -> list:
    """The batched policy's action for each state, as a GameState action."""
    vals, rolls = as_rows(sim, states)
    turn = Turn(sim, vals, 0)
    actions = []
    for i, s in enumerate(states):  # one by one: states differ in first-roll flag and rolls left
        idx = np.array([i])
        box, keep = policy.decide(turn, idx, rolls[i : i + 1], s.first_roll, s.rolls_left, np.random.default_rng(0))
        if box[0] >= 0:
            actions.append(Score(sim.variant.box_ids[int(box[0])]))
        else:
            actions.append(Keep(sim.dm.keeps[int(keep[0])]))
    return actions


@pytest.mark.parametrize(("vid", "options"), CONFIGS, ids=IDS)
def test_tables_say_what_the_engine_says(engine, vid, options):
    v = engine.variant(vid, options)
    sim = Batched(v)
    states = decision_states(v, 150, seed=7)
    vals, rolls = as_rows(sim, states)
    cls, tables, scores, points = sim.scores.lookup(vals)
    legal_cls = sim.legal.lookup(vals)
    for i, s in enumerate(states):
        for fr in (False, True):
            allowed = sim.legal.allowed(legal_cls[i : i + 1], fr, rolls[i : i + 1])[0]
            legal = v.legal_boxes(s.card, s.roll_now, fr)
            assert [b for j, b in enumerate(v.box_ids) if allowed[j]] == list(legal), (s.card, s.dice, fr)
            for j, b in enumerate(v.box_ids):
                res = v.score(s.card, b, s.roll_now, fr)
                row = tables[cls[i], int(fr), rolls[i], j]
                assert row[0] == res.score and points[cls[i], int(fr), rolls[i], j] == res.points, (
                    s.card,
                    s.dice,
                    b,
                    fr,
                )
                got = {sim.award_ids[k]: int(p) for k, p in enumerate(row[1 : 1 + len(sim.award_ids)]) if p}
                want: dict[str, int] = {}
                for a in res.awards:
                    want[a.id] = want.get(a.id, 0) + a.points
                assert got == want
                at = 1 + sim.scores.max_awards  # the events' columns, in sim.event_ids order
                events = {sim.event_ids[k]: int(n) for k, n in enumerate(row[at : at + len(sim.event_ids)]) if n}
                assert events == v.turn_events(s.card, b, s.roll_now, fr)


@pytest.mark.parametrize("vid", ["yahtzee", "generala", "kniffel"])
def test_one_card_at_a_time_gets_the_tables_many_cards_get(engine, vid):
    """`ScoreTables.card` (one row, a dict lookup on its class, the advisor's way) and `LegalTables.lookup`
    of one row give what the many-row lookups give, asked in either order on fresh tables."""
    v = engine.variant(vid)
    states = decision_states(v, 120, seed=3)
    rows = Batched(v)
    vals, _ = as_rows(rows, states)
    one, many = ScoreTables(v, [b.id for b in v.declared_bonuses]), ScoreTables(v, [b.id for b in v.declared_bonuses])
    legal_one, legal_many = LegalTables(v), LegalTables(v)
    singles = [one.card(vals[i]) for i in range(len(vals))]  # one card at a time first, on its own tables
    cls, shaped, box_scores, _ = many.lookup(vals)
    for i, (_, got_shaped, got_scores) in enumerate(singles):
        assert np.array_equal(got_shaped, shaped[cls[i]]) and np.array_equal(got_scores, box_scores[cls[i]])
    lc = legal_many.lookup(vals)
    legal_one.lookup(vals[:1])
    for i in range(len(vals)):
        mine = legal_one.lookup(vals[i : i + 1])
        every = np.arange(legal_one.R)
        for fr in (False, True):
            got = legal_one.allowed(np.repeat(mine, len(every)), fr, every)
            assert np.array_equal(got, legal_many.allowed(np.repeat(lc[i : i + 1], len(every)), fr, every))


@pytest.mark.parametrize("vid", ["yahtzee", "russian", "generala", "yatzy"])
def test_greedy_policy_is_greedybot(engine, vid):
    v = engine.variant(vid)
    sim = Batched(v)
    states = decision_states(v, 40, seed=3)
    bot = GreedyBot()
    assert decide_each(sim, GreedyPolicy(), states) == [bot.choose(s) for s in states]


@pytest.mark.parametrize(("vid", "options"), CONFIGS, ids=IDS)
def test_random_policy_plays_legal_actions(engine, vid, options):
    v = engine.variant(vid, options)
    sim = Batched(v)
    states = decision_states(v, 60, seed=5)
    for s, action in zip(states, decide_each(sim, RandomPolicy(), states), strict=False):
        assert action in s.legal_actions()


def _award_card(v, sim: Batched, vals_row, award_row) -> Card:
    scores = {b: int(vals_row[j]) for j, b in enumerate(v.box_ids)}
    awards = tuple(Award(sim.award_ids[k], int(p)) for k, p in enumerate(award_row[: len(sim.award_ids)]) if p)
    return Card(scores, awards)


@pytest.mark.parametrize(("vid", "options"), CONFIGS, ids=IDS)
@pytest.mark.parametrize("policy", [RandomPolicy, GreedyPolicy])
def test_totals_are_variant_totals(engine, vid, options, policy):
    v = engine.variant(vid, options)
    sim = Batched(v)
    vals, awards, earned, _ = sim.play(policy(), 60, GameStreams(1, 0, 60, v.faces, v.dice))
    assert (vals != EMPTY).all()
    assert ((earned == 0) == (awards == 0)).all() and (earned >= 0).all()
    end = sim.end.points(vals)
    totals = vals.sum(axis=1) + awards.sum(axis=1) + end.sum(axis=1)
    for g in range(len(vals)):
        card = _award_card(v, sim, vals[g], awards[g])
        assert totals[g] == v.total(card)
        want = {a.id: a.points for a in v.end_bonuses(card)}
        assert {sim.award_ids[k]: int(p) for k, p in enumerate(end[g]) if p} == want


@pytest.mark.parametrize(("vid", "options"), [("yahtzee", {"joker": "forced"}), ("russian", {}), ("generala", {})])
def test_random_play_agrees_with_the_engine(engine, vid, options):
    v = engine.variant(vid, options)
    fast = summarize(simulate(v, "random", 10000, seed=1, method="batched"))
    slow = summarize(simulate(v, "random", 1000, seed=2, method="engine"))
    assert fast["method"] == "batched" and slow["method"] == "engine"
    z = abs(fast["mean"] - slow["mean"]) / np.hypot(fast["se"], slow["se"])
    assert z < 4, (fast["mean"], slow["mean"], z)
    assert fast["sd"] == pytest.approx(slow["sd"], rel=0.15)


@pytest.mark.slow
def test_greedy_play_agrees_with_the_engine(engine):
    v = engine.variant("yacht")  # GreedyBot through GameState takes ~0.3-0.7 s a game
    fast = summarize(simulate(v, "greedy", 20000, seed=1, method="batched"))
    slow = summarize(simulate(v, "greedy", 60, seed=2, method="engine"))
    z = abs(fast["mean"] - slow["mean"]) / np.hypot(fast["se"], slow["se"])
    assert z < 4, (fast["mean"], slow["mean"], z)


# ----------------------------------------------------------------------------- times each award was earned


class LoadedDice(random.Random):
    """Dice that show their top face more often (with probability `bias`, else a fair face): frequent yahtzees."""

    def __init__(self, seed: float, bias: float) -> None:
        super().__init__(seed)
        self.bias = bias

    def randint(self, a: int, b: int) -> int:
        return b if self.random() < self.bias else super().randint(a, b)


@pytest.fixture
def loaded_engine_games(monkeypatch):
    """load(bias): the engine simulator plays with loaded dice from now on; the final card of every game
    it plays is recorded in the list returned."""
    from dicecup.simulate import engine_sim

    real = engine_sim.play_one

    def load(bias: float) -> list[Card]:
        played: list[Card] = []

        def loaded(variant, bot, rng, events=None):
            card, total = real(variant, bot, LoadedDice(rng.random(), bias), events)
            played.append(card)
            return card, total

        monkeypatch.setattr(engine_sim, "play_one", loaded)
        return played

    return load


class YahtzeeChaser:
    """Keeps the most common face and puts yahtzees in the yahtzee boxes: a quick bot that earns further yahtzees."""

    name = "chaser"

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def choose(self, state: GameState):
        v, dice = state.variant, tuple(state.dice)
        boxes = state.legal_boxes()
        if len(set(dice)) == 1:
            for b in boxes:
                if v.box(b).row == "yahtzee":
                    return Score(b)
            return Score(self.rng.choice(boxes))  # every yahtzee box filled: a joker anywhere
        if state.rolls_left > 0:
            face = max(set(dice), key=lambda f: (dice.count(f), f))
            return Keep((face,) * dice.count(face))
        others = [b for b in boxes if v.box(b).row != "yahtzee"]
        return Score(self.rng.choice(others or list(boxes)))


def _column(result, bid: str) -> tuple[np.ndarray, np.ndarray]:
    j = result.bonus_ids.index(bid)
    return result.bonus_points[:, j], result.bonus_counts[:, j]


def test_batched_and_engine_count_yahtzee_bonuses_as_their_points_say(engine, loaded_engine_games):
    """Yahtzee's bonuses have fixed points (35 upper, 100 each further yahtzee): both simulators' recorded counts
    times those points are every game's bonus points, and both see games with repeated bonuses."""
    v = engine.variant("yahtzee")
    fast = simulate(v, "greedy", 400, seed=10, method="batched")  # a seed whose games earn up to 3 bonuses
    loaded_engine_games(0.5)  # fair dice give a random bot's games no yahtzee bonus
    slow = simulate(v, "random", 300, seed=3, method="engine")
    assert (fast.method, slow.method) == ("batched", "engine")
    for result in (fast, slow):
        points, counts = _column(result, "yahtzee_bonus")
        assert (counts * 100 == points).all()
        assert counts.max() >= 2, result.method
        times = summarize(result)["bonuses"]["yahtzee_bonus"]["times"]
        assert times == {str(k): int((counts == k).sum()) for k in range(counts.max() + 1)}
        points, counts = _column(result, "upper_bonus")
        assert (counts * 35 == points).all() and set(counts.tolist()) <= {0, 1}


def test_triple_yahtzee_counts_are_the_cards_awards_not_points_over_100(engine, loaded_engine_games):
    """Column multipliers: a further yahtzee pays 100, 200 or 300 by the column it is scored in, so points / 100
    is not the count; the engine's counts are the awards with nonzero points on each game's final card."""
    from dicecup.simulate.engine_sim import simulate_engine

    v = engine.variant("triple-yahtzee")
    played = loaded_engine_games(0.25)
    result = simulate_engine(v, "chaser", lambda _, rng: YahtzeeChaser(rng), 40, seed=1)
    assert result.method == "engine" and len(played) == 40
    multiplier = {c.id: c.multiplier for c in v.columns}
    for g, card in enumerate(played):
        every = list(card.awards) + list(v.end_bonuses(card))
        want = Counter(a.id for a in every if a.points != 0)
        assert {bid: int(result.bonus_counts[g, j]) for j, bid in enumerate(result.bonus_ids) if want[bid]} == want
        assert result.bonus_counts[g].sum() == sum(want.values())
        bonus = [a for a in card.awards if a.id == "yahtzee_bonus"]
        points, counts = _column(result, "yahtzee_bonus")
        assert points[g] == sum(100 * multiplier[a.column] for a in bonus) and counts[g] == len(bonus)
    points, counts = _column(result, "yahtzee_bonus")
    assert (counts > 0).any() and (counts * 100 != points).any()  # some bonus was scored in the x2 or x3 column
    s = summarize(result)["bonuses"]["yahtzee_bonus"]
    assert s["times"] == {str(k): int((counts == k).sum()) for k in range(counts.max() + 1)}
    # every yahtzee bonus was a yahtzee rolled; the three yahtzee boxes took three more when scored 50
    rolled = result.event_counts[:, result.event_ids.index("yahtzee_rolled")]
    filled_50 = (result.boxes[:, [v.box_ids.index(f"{c.id}.yahtzee") for c in v.columns]] > 0).sum(axis=1)
    assert (rolled >= counts + filled_50).all() and rolled.max() >= 2


# ----------------------------------------------------------------------------- optimal

solver = pytest.importorskip("dicecup.solver")


@pytest.fixture
def forget_memos(engine):
    """Let go of the engine's best-move and score-class memos when called, and again after the test."""

    def forget() -> None:
        engine.store.drop(jitplay.MOVES_KIND)
        engine.store.drop(jitplay.CLASSES_KIND)

    yield forget
    forget()


@pytest.fixture(scope="module")
def solved(engine):
    """(variant, solution): the Solution the simulator plays, from the test run's cache (solved once a run, for
    every file and worker that plays the variant; the engine's `bot:optimal` loads the same table)."""

    def get(vid: str, options: dict | None = None):
        v = engine.variant(vid, options or {})
        return v, optimal_mod.solution_for(v)

    return get


@pytest.mark.parametrize(
    ("vid", "options"), [("generala", {}), ("yacht", {}), ("russian", {}), ("yahtzee", {"joker": "none"})]
)
def test_optimal_policy_takes_a_best_action(solved, vid, options):
    from dicecup.solver.advice import advise_state

    v, solution = solved(vid, options)
    sim = Batched(v)
    states = decision_states(v, 60, seed=11)
    for s, action in zip(states, decide_each(sim, optimal_mod.OptimalPolicy(v), states), strict=False):
        options_ranked = advise_state(solution, s)
        value = {o.action: o.value for o in options_ranked}
        assert action in value, (s.card, s.dice, action)
        assert value[action] >= options_ranked[0].value - 1e-6, (s.card, s.dice, action, options_ranked[:3])


@pytest.mark.parametrize("vid", ["generala", "yacht", "russian"])
def test_state_encoding_of_rows_matches_cards(solved, vid):
    """Many games' rows and single Cards go through one coding; the filled bits are the filled boxes."""
    v, solution = solved(vid)
    sim = Batched(v)
    states = decision_states(v, 80, seed=13)
    vals, _ = as_rows(sim, states)
    ix = solution.index
    code, prog = ix.encode(vals)
    for s, c in zip(states, code.tolist(), strict=False):
        filled = sum(1 << i for i, b in enumerate(v.box_ids) if b in s.card.scores)
        assert c & ix.full == filled
    got = ix.locate(vals)
    want = [int(ix.lookup(np.array([c]), p)[0]) for c, p in (ix.state_of_card(s.card) for s in states)]
    assert got.tolist() == want
    assert (got < ix.size).all()  # every card of real play has a state with a value


@pytest.mark.parametrize("vid", ["generala", "yacht", "russian-simple"])
def test_optimal_mean_is_the_solver_value(solved, vid):
    v, solution = solved(vid)
    s = summarize(simulate(v, "optimal", 20000, seed=5))
    assert s["method"] == "batched"
    assert abs(s["mean"] - solution.expected_score) < 4 * s["se"], (s["mean"], solution.expected_score, s["se"])


@pytest.mark.slow
def test_optimal_yahtzee_matches_published_figures(solved):
    v, solution = solved("yahtzee")
    s = summarize(simulate(v, "optimal", 200_000, seed=8))
    assert abs(s["mean"] - 254.5896) < 4 * s["se"]
    assert s["sd"] == pytest.approx(59.6, abs=0.8)


@pytest.mark.slow
def test_optimal_batched_agrees_with_engine_games(solved):
    v, _ = solved("yahtzee")
    fast = summarize(simulate(v, "optimal", 50000, seed=1, method="batched"))
    slow = summarize(simulate(v, "optimal", 800, seed=2, method="engine"))
    z = abs(fast["mean"] - slow["mean"]) / np.hypot(fast["se"], slow["se"])
    assert z < 4, (fast["mean"], slow["mean"], z)


# ----------------------------------------------------------------------------- compiled optimal play

needs_numba = pytest.mark.skipif(not compiled.NUMBA_KERNELS, reason="numba is not installed")


@needs_numba
@pytest.mark.parametrize(
    ("vid", "options"),
    [("generala", {}), ("russian", {}), pytest.param("yahtzee", {"joker": "forced"}, marks=pytest.mark.slow)],
)
def test_compiled_games_total_like_the_engine(solved, vid, options):
    from dicecup.simulate.batch import batched_for

    v, _ = solved(vid, options)
    sim = batched_for(v)
    vals, awards, earned, _ = jitplay.JitPlay(optimal_mod.OptimalPolicy(v), sim).play(300, seed=3, first_game=0)
    assert (vals != EMPTY).all()
    assert ((earned == 0) == (awards == 0)).all()  # a per-turn award is counted exactly where it scored
    end = sim.end.points(vals)
    for g in range(len(vals)):
        card = _award_card(v, sim, vals[g], awards[g])
        assert vals[g].sum() + awards[g].sum() + end[g].sum() == v.total(card)


@needs_numba
@pytest.mark.parametrize(("vid", "options"), [("generala", {}), ("russian", {}), ("yatzy", {})])
def test_end_bonuses_from_the_played_states_are_those_of_the_cards(solved, vid, options):
    """The class codes and group totals the compiled player keeps as boxes fill give the same end bonuses
    as encoding the full cards again (the simulator reads them from the former)."""
    from dicecup.simulate.batch import batched_for

    v, _ = solved(vid, options)
    play = jitplay.JitPlay(optimal_mod.OptimalPolicy(v), batched_for(v))
    states = play.new_states(400)
    vals = play.play(400, seed=5, first_game=0, states=states)[0]
    assert (vals != EMPTY).all() and (states[0] != 0).all()
    kept, encoded = play.end_points(vals, states), play.end_points(vals)
    assert encoded is not None and kept is not None
    assert (kept == encoded).all()
    if vid == "yatzy":  # the upper bonus is won in some games and not in others
        assert 0 < np.count_nonzero(encoded.sum(axis=1)) < len(vals)


@needs_numba
@pytest.mark.parametrize("options", [{}, {"joker": "forced"}])
def test_compiled_play_counts_each_award_where_it_scores(tmp_path, monkeypatch, options):
    """tiny-flags pays 30 for every further yam: the compiled kernel's counts are where its awards are, 30 points
    each, repeated in some games, and the numpy optimal policy counts them alike in distribution."""
    from dicecup.simulate.batch import NO_JIT_ENV, batched_for

    v = tiny_variant(tmp_path, "flags", options=options)
    optimal_mod.remember(solver.solve(v))  # (kept by the variant's own engine, made for this test)
    sim = batched_for(v)
    vals, awards, earned, _ = jitplay.JitPlay(optimal_mod.OptimalPolicy(v), sim).play(2000, seed=3, first_game=0)
    assert (vals != EMPTY).all()
    assert ((earned == 0) == (awards == 0)).all()
    j = sim.award_ids.index("extra_yam")
    assert (earned[:, j] * 30 == awards[:, j]).all() and earned[:, j].max() >= 2
    fast = simulate(v, "optimal", 20000, seed=1)
    monkeypatch.setenv(NO_JIT_ENV, "1")
    ref = simulate(v, "optimal", 5000, seed=2)
    for result in (fast, ref):
        points, counts = result.bonus_points[:, 0], result.bonus_counts[:, 0]
        assert result.method == "batched" and result.bonus_ids[0] == "extra_yam"
        assert (counts * 30 == points).all()
    a, b = fast.bonus_counts[:, 0], ref.bonus_counts[:, 0]
    z = abs(a.mean() - b.mean()) / np.hypot(a.std() / len(a) ** 0.5, b.std() / len(b) ** 0.5)
    assert z < 4, (a.mean(), b.mean())


@needs_numba
def test_compiled_results_do_not_depend_on_chunking(solved, monkeypatch):
    from dicecup.simulate import batched_run

    v, _ = solved("generala")
    whole = simulate(v, "optimal", 3000, seed=9)
    monkeypatch.setattr(batched_run, "JIT_CHUNK", 700)
    pieces = simulate(v, "optimal", 3000, seed=9)
    assert (whole.totals == pieces.totals).all() and (whole.boxes == pieces.boxes).all()
    assert (whole.bonus_counts == pieces.bonus_counts).all()
    assert not (simulate(v, "optimal", 3000, seed=10).totals == whole.totals).all()


@needs_numba
@pytest.mark.parametrize("vid", ["generala", "russian"])
def test_compiled_and_numpy_optimal_play_agree(solved, vid, monkeypatch):
    from dicecup.simulate.batch import NO_JIT_ENV

    v, solution = solved(vid)
    fast = summarize(simulate(v, "optimal", 40000, seed=1))
    monkeypatch.setenv(NO_JIT_ENV, "1")
    ref = summarize(simulate(v, "optimal", 10000, seed=2))
    z = abs(fast["mean"] - ref["mean"]) / np.hypot(fast["se"], ref["se"])
    assert z < 4, (fast["mean"], ref["mean"])
    assert abs(ref["mean"] - solution.expected_score) < 4 * ref["se"]


@needs_numba
@pytest.mark.parametrize("vid", ["generala", "russian"])
def test_compiled_helpers_match_numpy(solved, vid):
    from dicecup.numeric.tables import unique_rows
    from dicecup.simulate.batch import batched_for

    v, _ = solved(vid)
    sim = batched_for(v)
    play = jitplay.JitPlay(optimal_mod.OptimalPolicy(v), sim)
    vals, _ = as_rows(sim, decision_states(v, 300, seed=17))
    nb = len(v.box_ids)
    facts = tuple(range(nb)) + (nb, nb + 1)  # every box's presence, the first two boxes' scores
    got_uniq, got_first, got_inv = play.group(vals, facts)
    uniq, first, inv = unique_rows(sim.scores.facts.columns(vals, facts))
    # the same partition of the rows, whatever the group numbering
    assert len(got_uniq) == len(uniq)
    pairs = set(zip(got_inv.tolist(), inv.tolist(), strict=False))
    assert len(pairs) == len(uniq)
    assert (sim.scores.facts.columns(vals[got_first], facts) == got_uniq).all()


@needs_numba
@settings(max_examples=60, deadline=None)
@given(
    rows=st.lists(
        st.lists(
            st.one_of(st.just(int(EMPTY)), st.integers(-3, 40), st.integers(-(2**40), 2**40)), min_size=4, max_size=4
        ),
        min_size=1,
        max_size=60,
    ),
    facts=st.lists(st.integers(0, 7), min_size=1, max_size=6),
    dup=st.integers(0, 60),
)
def test_grouping_by_hash_matches_the_dense_grouping(rows, facts, dup):
    """Facts whose values range too widely for the dense key are grouped by hash: the same groups, numbered
    as first met, as the dense table and as `unique_rows` give."""
    from dicecup.numeric.tables import unique_rows

    vals = np.array(rows + rows[: dup % len(rows)], dtype=np.int64)  # (rows met again)
    nb, f = 4, np.array(facts, dtype=np.int64)
    hashed = scoreclass.group_facts(vals, f, nb, int(EMPTY), 1)
    dense = scoreclass.group_facts(vals, f, nb, int(EMPTY), 1 << 20)  # (hashed too where the values range wider)
    cols = np.stack([vals[:, x] != EMPTY if x < nb else vals[:, x - nb] for x in facts], axis=1).astype(np.int64)
    _, _, inverse = unique_rows(cols)
    first, groups = hashed
    assert len(groups) == len(vals) and groups.max() + 1 == len(first)
    assert (first == np.sort(first)).all() and (groups[first] == np.arange(len(first))).all()  # first met, in order
    assert (cols[first[groups]] == cols).all()  # each row in the group of a row with its values
    assert len(first) == inverse.max() + 1  # as many groups as distinct rows
    assert (dense[0] == first).all() and (dense[1] == groups).all()


def _replay(v, sim, games: int, seed: int, objective=None):
    """Games played with the numpy optimal policy (`OptimalPolicy.decide`, the reference; of `objective`, default
    the mean) on the dice of the compiled player's per-game streams: what the compiled player must produce game
    for game."""
    policy = optimal_mod.OptimalPolicy(v) if objective is None else optimal_mod.OptimalPolicy(v, objective)
    dm = sim.dm
    nb, na = len(v.box_ids), sim.scores.max_awards
    vals = np.full((games, nb), EMPTY, dtype=np.int64)
    awards = np.zeros((games, na), dtype=np.int64)
    earned = np.zeros_like(awards)
    events = np.zeros((games, sim.scores.max_events), dtype=np.int64)
    streams = draws.DiceStreams(seed, games, v.faces, v.dice)
    roll_id = {r: i for i, r in enumerate(dm.rolls)}
    for t in range(nb):
        turn = Turn(sim, vals, t)
        streams.new_turn()
        kept: list[tuple[int, ...]] = [()] * games
        live = np.arange(games)
        for used in range(1, v.rolls + 1):
            dice = [kept[g] + streams.roll(int(g), v.dice - len(kept[g])) for g in live]
            roll = np.array([roll_id[tuple(sorted(d))] for d in dice], dtype=np.int64)
            box, keep = policy.decide(turn, live, roll, used == 1, v.rolls - used, np.random.default_rng(0))
            done = box >= 0
            g, b = live[done], box[done]
            got = turn.tables[turn.score_class[g], int(used == 1), roll[done], b]
            vals[g, b] = got[:, 0]
            awards[g] += got[:, 1 : 1 + na]
            earned[g] += got[:, 1 : 1 + na] != 0
            events[g] += got[:, 1 + na :]
            for j in np.flatnonzero(~done).tolist():
                kept[int(live[j])] = dm.keeps[int(keep[j])]
            live = live[~done]
    return vals, awards, earned, events


@needs_numba
@pytest.mark.parametrize(
    ("vid", "options"),
    [
        ("generala", {}),
        ("russian", {}),
        ("yacht", {}),
        ("yatzy-forced", {}),
        pytest.param("yatzy", {}, marks=pytest.mark.slow),
        pytest.param("kismet", {}, marks=pytest.mark.slow),
        pytest.param("yahtzee", {}, marks=pytest.mark.slow),
    ],
)
def test_compiled_play_is_the_numpy_policy_game_for_game(solved, vid, options):
    """Same dice, same decisions: the best-move rows the kernel plays from say what the numpy reference
    decides, roll by roll, and every box score, award and event follows."""
    from dicecup.simulate.batch import batched_for

    v, _ = solved(vid, options)
    sim = batched_for(v)
    fast = jitplay.JitPlay(optimal_mod.OptimalPolicy(v), sim).play(150, seed=21, first_game=0)
    ref = _replay(v, sim, 150, seed=21)
    for got, want in zip(fast, ref, strict=True):
        assert (got == want).all()


@needs_numba
@pytest.mark.parametrize("theta", [-0.05, 0.04])
@pytest.mark.parametrize("vid", ["yacht", "generala"])
def test_compiled_risk_play_is_the_numpy_policy_game_for_game(vid, theta):
    """A risk table's compiled best-move rows (`numeric.moves.fill_moves` folding rolls as utilities) decide as the numpy
    policy does on the solver's own turn tables, game for game."""
    from dicecup.numeric.objective import parse_objective
    from dicecup.simulate.batch import batched_for

    v = Engine().variant(vid)
    goal = parse_objective(f"risk:{theta}")
    sim = batched_for(v)
    fast = jitplay.JitPlay(optimal_mod.OptimalPolicy(v, goal), sim).play(150, seed=23, first_game=0)
    ref = _replay(v, sim, 150, seed=23, objective=goal)
    for got, want in zip(fast, ref, strict=True):
        assert (got == want).all()


@needs_numba
def test_compiled_results_do_not_depend_on_threads_or_the_move_memo(forget_memos, solved, monkeypatch):
    """Decisions are a function of the state and dice of the game's own stream: one thread or two, a fresh
    memo, one dropped again and again when full, or the whole table filled instead, the games are the same."""
    from dicecup.numeric.compiled import numba_module

    numba = numba_module()

    v, solution = solved("generala")
    threads = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = simulate(v, "optimal", 3000, seed=4)
    finally:
        numba.set_num_threads(threads)
    forget_memos()
    two = simulate(v, "optimal", 3000, seed=4)
    forget_memos()
    row_bytes = solution.graph.n_rolls * v.rolls  # one byte per roll and decision (5 dice: uint8 rows)
    monkeypatch.setattr(jitplay, "MOVES_BYTES", 200 * row_bytes)
    full_bytes = jitplay.FULL_BYTES
    monkeypatch.setattr(jitplay, "FULL_BYTES", 0)  # no whole table to fall back on: the memo is dropped
    small = simulate(v, "optimal", 3000, seed=4)
    assert jitplay.moves_of(v).limit == 200
    assert not jitplay.moves_of(v).complete
    forget_memos()
    monkeypatch.setattr(jitplay, "FULL_BYTES", full_bytes)  # a memo that would pass its limit fills it all
    whole = simulate(v, "optimal", 3000, seed=4)
    assert jitplay.moves_of(v).complete
    for r in (two, small, whole):
        assert (r.boxes == one.boxes).all() and (r.bonus_counts == one.bonus_counts).all()
        assert (r.event_counts == one.event_counts).all() and (r.totals == one.totals).all()


@needs_numba
@pytest.mark.parametrize(("vid", "options"), [("generala", {}), ("russian", {}), ("yahtzee", {"joker": "forced"})])
def test_the_whole_move_table_is_the_rows_games_reach(forget_memos, solved, monkeypatch, vid, options):
    """Filled at once from the solver's score tables by context, every state's best-move row is the row
    filled from the engine's score classes when a game first reaches the state; and games played from
    the whole table are the games played from rows filled as they go."""
    from dicecup.simulate.batch import batched_for

    v, _ = solved(vid, options)
    forget_memos()
    monkeypatch.setattr(jitplay, "COMPLETE_AFTER", float("inf"))  # rows only as games reach states
    lazy = simulate(v, "optimal", 400, seed=8)
    memo = jitplay.moves_of(v)
    assert not memo.complete
    reached = np.flatnonzero(memo.row_of >= 0)
    assert len(reached) > 50
    whole = jitplay.JitPlay(optimal_mod.OptimalPolicy(v), batched_for(v))
    forget_memos()
    whole.moves = jitplay.moves_for(whole.policy.solution, memo.dtype, memo.flag)
    whole.complete()
    assert whole.moves.complete
    assert (whole.moves.every_row()[reached] == memo.every_row()[memo.row_of[reached]]).all()
    monkeypatch.setattr(jitplay, "COMPLETE_AFTER", 0.0)  # the whole table before the first game
    full = simulate(v, "optimal", 400, seed=8)
    assert jitplay.moves_of(v).complete
    for a, b in ((full.boxes, lazy.boxes), (full.bonus_points, lazy.bonus_points), (full.totals, lazy.totals)):
        assert (a == b).all()


@needs_numba
def test_prepare_fills_the_whole_table_and_changes_no_game(forget_memos, solved, monkeypatch):
    """`simulate.prepare` builds every state's row before any game (so runs after it only play), and the
    games are the ones a fresh process plays; a strategy the tables cannot take is refused at once."""
    from dicecup.errors import DicecupError
    from dicecup.simulate import prepare

    v, _ = solved("generala")
    forget_memos()
    monkeypatch.setattr(jitplay, "COMPLETE_AFTER", float("inf"))
    lazy = simulate(v, "optimal", 500, seed=12)
    forget_memos()
    prepare(v, "optimal")
    memo = jitplay.moves_of(v)
    assert memo.complete and memo.turns == 0  # filled before any game was played
    full = simulate(v, "optimal", 500, seed=12)
    assert (full.boxes == lazy.boxes).all() and (full.totals == lazy.totals).all()
    prepare(v, "greedy")  # nothing to build: no error
    with pytest.raises(DicecupError, match="unknown strategy"):
        prepare(v, "nope")


@needs_numba
@pytest.mark.parametrize("vid", ["yahtzee", "yatzy", "russian", "generala"])
def test_end_bonuses_from_the_solver_tables_are_the_engines(solved, vid):
    """The compiled player reads a full card's end bonuses, award by award, from the solver's end-of-game
    tables: what the engine's own `end_bonuses` give those cards (`EndBonuses`, which asks it)."""
    from dicecup.simulate.batch import batched_for

    v, _ = solved(vid)
    sim = batched_for(v)
    cards = simulate(v, "optimal", 300, seed=2).boxes
    fast = jitplay.JitPlay(optimal_mod.OptimalPolicy(v), sim).end_points(cards)
    assert fast is not None
    assert (fast == sim.end.points(cards)).all()
    if vid in ("yahtzee", "yatzy"):
        assert fast[:, sim.award_ids.index("upper_bonus")].any()  # an award that is won in some games


@needs_numba
def test_threads_of_a_host_simulate_at_once_as_one_after_the_other(forget_memos, solved, monkeypatch):
    """The best-move and score-class memos are one per process: two threads of an embedding program that
    simulate the same variant at once, both starting from empty memos, get the games a lone run gets."""
    import threading

    v, _ = solved("russian")
    forget_memos()
    got: dict[int, object] = {}

    def run(seed: int) -> None:
        got[seed] = simulate(v, "optimal", 1500, seed=seed)

    threads = [threading.Thread(target=run, args=(seed,)) for seed in (21, 22)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for seed in (21, 22):
        alone = simulate(v, "optimal", 1500, seed=seed)
        assert (got[seed].boxes == alone.boxes).all() and (got[seed].totals == alone.totals).all()  # type: ignore[attr-defined]


@needs_numba
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(first=st.integers(0, 40), games=st.integers(1, 25), seed=st.integers(0, 2**40))
def test_a_compiled_game_is_the_same_in_any_batch(solved, first, games, seed):
    """Game k of a run is the same game whether played alone, in a batch from game 0, or from game `first`."""
    from dicecup.simulate.batch import batched_for

    v, _ = solved("russian")
    play = jitplay.JitPlay(optimal_mod.OptimalPolicy(v), batched_for(v))
    part = play.play(games, seed, first)
    whole = play.play(first + games, seed, 0)
    for got, want in zip(part, whole, strict=True):
        assert (got == want[first:]).all()


def _class_of(*args):
    """`scoreclass.class_of` run as Python: its hash wraps round 2**64 as the compiled kernel's does, where
    numpy's scalars would warn of each overflow."""
    with np.errstate(over="ignore"):
        return scoreclass.class_of(*args)


@needs_numba
@settings(max_examples=60, deadline=None)
@given(
    keys=st.lists(
        st.lists(st.sampled_from([int(EMPTY), -3, 0, 1, 2, 50, 1 << 20]), min_size=3, max_size=3),
        max_size=40,
        unique_by=tuple,
    ),
    probe=st.lists(st.sampled_from([int(EMPTY), -3, 0, 1, 2, 50, 1 << 20, 7]), min_size=3, max_size=3),
)
def test_class_hash_finds_each_known_key_and_nothing_else(keys, probe):
    """The kernel's score-class lookup: every known key gives its class, any other card -1."""
    facts = np.array([3, 4, 5], dtype=np.int64)  # the scores of boxes 0..2 of a 3-box card
    arr = np.array(keys, dtype=np.int64).reshape(len(keys), 3)
    slots = scoreclass.class_slots(arr, 1 << max(4, (2 * len(keys)).bit_length()))
    for c, k in enumerate(keys):
        assert _class_of(np.array([k], dtype=np.int64), 0, facts, arr, slots) == c
    want = keys.index(probe) if probe in keys else -1
    assert _class_of(np.array([probe], dtype=np.int64), 0, facts, arr, slots) == want


@needs_numba
@settings(max_examples=30, deadline=None)
@given(
    keys=st.lists(
        st.lists(st.sampled_from([int(EMPTY), 0, 1, 2, 25, 50, 63]), min_size=2, max_size=2),
        min_size=1,
        max_size=40,
        unique_by=tuple,
    ),
    grown=st.integers(0, 40),
)
def test_the_vector_kernel_places_classes_as_the_player_finds_them(keys, grown):
    """One class hash: a table the vector environment grows (`vecstep`'s add_slots, the first classes then the
    rest) holds each class where the player's `class_of` looks for it, and where a table placed at once does."""
    from dicecup.numeric import vecstep

    facts = np.array([2, 3], dtype=np.int64)  # the scores of boxes 0 and 1 of a 2-box card
    arr = np.array(keys, dtype=np.int64).reshape(len(keys), 2)
    size = 1 << max(4, (2 * len(keys)).bit_length())
    slots = np.full(size, -1, dtype=np.int64)
    start = min(grown, len(keys))
    vecstep.compiled_names()["add_slots"](slots, arr[:start], 0)
    vecstep.compiled_names()["add_slots"](slots, arr, start)
    assert (slots == scoreclass.class_slots(arr, size)).all()
    for c, k in enumerate(keys):
        assert _class_of(np.array([k], dtype=np.int64), 0, facts, arr, slots) == c


def test_a_build_of_another_class_hash_is_not_loaded(monkeypatch):
    """The simulator's build digest names the class hash: a build placing classes another way is refused."""
    from dicecup.numeric import records

    before, core = records.signature_digest(simulator=True), records.signature_digest()
    monkeypatch.setattr(records, "CLASS_HASH", records.CLASS_HASH + "-other")
    assert records.signature_digest(simulator=True) != before
    assert records.signature_digest() == core  # the core's kernels do not hash classes: their build still loads


# ----------------------------------------------------------------------------- what the tables learn from the trace

PAIR_FIRST = """
id: tiny-pair-first
dice: {count: 2, faces: 3}
turn: {rolls: 2}
boxes:
  ones: {section: upper, pattern: {kind: face, face: 1}, score: sum}
  twos: {section: upper, pattern: {kind: face, face: 2}, score: sum}
  pair: {section: lower, pattern: {kind: of_a_kind, n: 2}, score: 8}
rules:
  pair_first: {}
"""


class PairFirst:
    """A pair must go in the pair box while it is open: legality that sees the roll only through a pattern."""

    @hookimpl
    def dicecup_register_rules(self, register):
        register("pair_first", {}, "a pair goes in the pair box while that box is open")

    @hookimpl
    def dicecup_legal_boxes(self, ctx):
        if ctx.roll is None or "pair" not in ctx.open_boxes:
            return None
        return None if ctx.variant.combination(ctx.variant.box("pair"), ctx.roll) is None else ["pair"]


class EmptyCardDouble:
    """The pair box scores double on an empty card, asked by comparing the whole scores mapping."""

    @hookimpl
    def dicecup_adjust_score(self, ctx, score):
        return score * 2 if ctx.box.id == "pair" and ctx.card.scores == {} else None


def _load(tmp_path, text: str, *plugins):
    path = tmp_path / "v.yaml"
    path.write_text(text, encoding="utf-8")
    return Engine(list(plugins), entry_points=False).load_file(path)


def _every_card(v) -> np.ndarray:
    """A card row for every fill pattern of `v`'s boxes (each filled box holding 1)."""
    n = len(v.box_ids)
    return np.array([[1 if m >> j & 1 else EMPTY for j in range(n)] for m in range(1 << n)], dtype=np.int64)


def test_legality_read_through_a_declared_pattern_is_asked_roll_by_roll(tmp_path):
    """A declared pattern's dice reads are excused from `Reads.roll`, yet its answer changes with the
    roll: the legality tables must not take the first roll's answer for every roll."""
    v = _load(tmp_path, PAIR_FIRST, PairFirst())
    with tracing() as reads:  # the case under test: the rule reads the probe roll only through the pattern
        v.legal_boxes(traced_card({}), traced_roll(v.all_rolls()[0]), False)
    assert not reads.roll and reads.patterns
    legal = LegalTables(v)
    vals = _every_card(v)[:-1]  # a full card has no legal box
    cls = legal.lookup(vals)
    every = np.arange(legal.R)
    for i, row in enumerate(vals):
        for fr in (False, True):
            allowed = legal.allowed(np.full(legal.R, cls[i]), fr, every)
            for r, roll in enumerate(v.all_rolls()):
                want = v.legal_boxes(legal.facts.card(row), roll, fr)
                assert [b for j, b in enumerate(v.box_ids) if allowed[r, j]] == list(want), (row, roll, fr)


def test_a_whole_card_comparison_keys_the_score_tables_on_every_box(tmp_path):
    """`card.scores == {}` reads every box: no card's score is reused for another that differs anywhere."""
    v = _load(tmp_path, TINY["threshold"], EmptyCardDouble())
    scores = ScoreTables(v, [])
    vals = _every_card(v)
    cls, _, box_scores, _ = scores.lookup(vals)
    pair = v.box_ids.index("pair")
    for i, row in enumerate(vals):
        card = scores.facts.card(row)
        for r, roll in enumerate(scores.rolls):
            assert box_scores[cls[i], 0, r, pair] == v.score(card, "pair", roll).score, (row, roll)


@pytest.mark.parametrize(("vid", "options"), [("generala", {}), ("russian", {}), ("yacht", {})])
def test_advisor_tables_and_engine_give_the_same_later_scores(solved, vid, options):
    """The advisor's two ways to value scoring each roll (memoised tables, the engine roll by roll) agree."""
    from dicecup.solver import advice_scoring

    v, solution = solved(vid, options)
    for state in decision_states(v, 25, seed=23):
        if len(state.card.scores) == len(v.box_ids) - 1 and state.rolls_left == 0:
            continue
        fast = advice_scoring._later_from_tables(solution, state.card, 0)
        slow = advice_scoring._later_from_engine(solution, state.card, 0)
        for got, want in ((fast.legal, slow.legal), (fast.points, slow.points), (fast.after, slow.after)):
            assert np.array_equal(got, want), state.card


@pytest.mark.parametrize("vid", ["generala", "yacht"])
def test_advice_is_the_same_from_the_engine_and_from_the_tables(engine, vid, monkeypatch):
    """Each option's action, value and points now, and the ranking, do not depend on who scored the roll on
    the table: the engine asked for that roll alone (the first cards), the memoised tables (later ones) or the
    solve's complete tables; Generala's first-roll bonuses included."""
    from dicecup.solver import advice, advice_kernel, advice_scoring, advisor_memory, solve

    v = engine.variant(vid)
    solution = solve(v)  # solved here (a fraction of a second): its search makes the complete tables
    states = list(decision_states(v, 30, seed=7))
    answers = []
    complete = advice_kernel._card_tables  # the solve's complete tables, kept beside the cached table
    for after, tables in ((10**9, None), (1, None), (10**9, complete)):  # the engine, learned, complete tables
        monkeypatch.setattr(advice_scoring, "TABLES_AFTER", after)
        monkeypatch.setattr(advice_kernel, "_card_tables", tables or (lambda solution: None))
        advisor_memory.forget(v)  # nothing learned, no tables made, no turn remembered
        answers.append([advice.advise_state(solution, state) for state in states])
        memory = advisor_memory.memory_of(v)
        if after == 1:
            assert memory.tables is not None  # the learned tables did answer
        if tables is not None and compiled.MODE == "aot":  # (numba would compile the card kernel after 10**9 cards)
            assert memory.card_tables is not None and memory.card_tables[0] is not None  # and the complete ones
    advisor_memory.forget(v)  # the shared engine's advisor as other tests expect it
    for tables_side in answers[1:]:
        for engine_side, other in zip(answers[0], tables_side, strict=True):
            assert [(o.label, o.points, o.best) for o in engine_side] == [(o.label, o.points, o.best) for o in other]
            assert np.allclose([o.value for o in engine_side], [o.value for o in other], atol=1e-9)


def test_advisor_switches_to_tables_after_a_few_cards(solved, monkeypatch):
    from dicecup.solver import advice, advice_kernel, advice_scoring, advisor_memory

    v, solution = solved("generala")
    advisor_memory.forget(v)  # no card asked, no tables built yet in this process
    monkeypatch.setattr(advice_kernel, "_card_tables", lambda solution: None)  # nor the solve's complete ones kept
    used = []
    monkeypatch.setattr(  # which whole turns (not single rolls: `only`) the tables scored
        advice_scoring,
        "_later_from_tables",
        lambda *args: used.append(args[5]) or advice_scoring._later_from_engine(*args),
    )
    card_turn = advice_kernel._card_turn  # a whole turn from the tables in one compiled call
    monkeypatch.setattr(advice_kernel, "_card_turn", lambda *args: used.append(None) or card_turn(*args))
    for state in decision_states(v, 12, seed=5):
        if state.rolls_left:
            advisor_memory.memory_of(v).later.clear()
            advice.advise_state(solution, state)
    whole = [u for u in used if u is None]
    asked = advisor_memory.memory_of(v).asked
    advisor_memory.forget(v)
    assert whole and asked - len(whole) == advice_scoring.TABLES_AFTER - 1


@pytest.mark.parametrize("vid", ["generala", "yahtzee", "russian"])
def test_every_state_of_an_index_looks_up_to_its_own_slot(solved, vid):
    """`StateIndex.states` lists each value slot's (class code, clamped totals), in slot order: looking them
    up gives every slot back, once, and each is a class the index holds."""
    _, solution = solved(vid)
    ix = solution.index
    codes, prog = ix.states()
    assert len(codes) == ix.size and prog.shape == (ix.size, ix.G)
    assert (ix.lookup(codes, prog) == np.arange(ix.size)).all()
    assert set(np.unique(codes).tolist()) == set(ix.class_codes.tolist())
