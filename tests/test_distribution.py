"""The exact score distribution of optimal play: against an independent brute force on tiny variants, its
invariants (probabilities sum to 1, the mean is the solver's value), and Yahtzee against a long simulation."""

from __future__ import annotations

import math
import random
import sys

import numpy as np
import pytest
from _solver_helpers import TINY, draw_outcome, tiny_variant
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dicecup import Card, Engine, GameState
from dicecup.errors import DicecupError
from dicecup.numeric import propagate
from dicecup.simulate import distribution as dist_mod
from dicecup.solver import solve
from dicecup.solver.policy import best_action

pytestmark = pytest.mark.skipif(not dist_mod.AVAILABLE, reason="the distribution needs numba")

# every tiny variant the distribution takes (banked rolls are refused, tested below)
CASES = [n for n in TINY if not n.startswith("banked")]


def brute_distribution(variant, solution, state: GameState) -> dict[int, float]:
    """The final score's distribution from `state` when every decision is the advisor's best action: a plain
    recursion over GameState's own chance outcomes, memoised, sharing no code with the propagation."""
    memo: dict[tuple, dict[int, float]] = {}

    def walk(s: GameState) -> dict[int, float]:
        key = (s.card, tuple(sorted(s.dice)), s.rolls_used, None if s.held is None else tuple(sorted(s.held)), s.over)
        got = memo.get(key)
        if got is not None:
            return got
        out: dict[int, float] = {}
        if s.over:
            out = {int(s.totals()[0]): 1.0}
        elif s.is_chance:
            for action, p in s.chance_outcomes():
                for score, q in walk(s.apply(action)).items():
                    out[score] = out.get(score, 0.0) + float(p) * q
        else:
            out = walk(s.apply(best_action(solution, s)))
        memo[key] = out
        return out

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10_000))
    try:
        return walk(state)
    finally:
        sys.setrecursionlimit(limit)


def as_dict(d) -> dict[int, float]:
    return {int(s): float(p) for s, p in zip(d.scores, d.probs, strict=True) if p != 0.0}


def assert_same(got: dict[int, float], want: dict[int, float]) -> None:
    assert set(got) == set(want)
    for score, p in want.items():
        assert got[score] == pytest.approx(p, abs=1e-13, rel=1e-11), score


@pytest.mark.parametrize("name", CASES)
def test_whole_game_equals_brute_force(tmp_path, name):
    v = tiny_variant(tmp_path, name)
    solution = solve(v)
    d = dist_mod.distribution(solution)
    assert_same(as_dict(d), brute_distribution(v, solution, GameState.new(v, 1)))
    assert d.total == pytest.approx(1.0, abs=1e-12)
    assert d.mean == pytest.approx(solution.expected_score, abs=1e-9)
    assert d.expected == pytest.approx(solution.expected_score, abs=1e-12)


@pytest.mark.parametrize("theta", [0.0, 0.15])
def test_reached_states_alone_give_every_states_vectors(tmp_path, theta):
    """The pass through the states the policy reaches (`distribution`) gives, bit for bit, the vector the
    backward pass through every state gives (`LayerPass.layer` without outcomes, as `win`'s table builds),
    from the empty card and from a roll mid-turn, for the mean and a risk objective; and it plays fewer states."""
    from dicecup.numeric.objective import parse_objective

    played: list[int] = []
    original = dist_mod.LayerPass.outcomes

    def spy(self, codes, *args):
        played.append(len(codes))
        return original(self, codes, *args)

    for name in CASES:
        v = tiny_variant(tmp_path, name)
        solution = solve(v, objective=parse_objective("mean" if theta == 0 else f"risk:{theta}"))
        layers = dist_mod.layers_from(solution)
        for dice in (None, [1] * v.dice):
            played.clear()
            dist_mod.LayerPass.outcomes = spy
            try:
                d = dist_mod.distribution(solution, dice=dice)
            finally:
                dist_mod.LayerPass.outcomes = original
            run = dist_mod.LayerPass(solution, np.concatenate([layer[0] for layer in layers[:-1]]))
            run.terminal(layers[-1][2])
            for codes, progs, index in layers[-2:0:-1]:
                run.layer(codes, progs, index)
            codes, progs, _ = layers[0]
            mass0 = None
            if dice is not None:  # after the turn's first roll (`distribution`'s default): decision 0
                mass0 = np.zeros(solution.graph.n_rolls)
                mass0[solution.graph.index[tuple(dice)] - int(solution.graph.roll_rows[0])] = 1.0
            wlo, _, _, out = run.turn(codes, np.ascontiguousarray(progs), 0, mass0)
            assert d.low == wlo[0] and d.probs.tobytes() == out.tobytes(), name
            assert sum(played) <= sum(len(layer[0]) for layer in layers[:-1]), name


@pytest.mark.parametrize("joker", ["free", "forced", "none"])
def test_flags_every_joker_mode_equals_brute_force(tmp_path, joker):
    v = tiny_variant(tmp_path, "flags", options={"joker": joker})
    solution = solve(v)
    d = dist_mod.distribution(solution)
    assert_same(as_dict(d), brute_distribution(v, solution, GameState.new(v, 1)))


def _random_position(v, seed: int) -> GameState:
    """A decision or turn start reached by random legal play (stopping at a random point)."""
    rng = random.Random(seed)
    state = GameState.new(v, 1)
    stops = rng.randrange(1, 3 * len(v.boxes) * v.rolls)
    for _ in range(stops):
        if state.is_chance:
            state = draw_outcome(state, rng)
        else:
            nxt = state.apply(rng.choice(state.legal_actions()))
            if nxt.over:
                break
            state = nxt
    if state.is_chance and state.rolls_used > 0:  # between rolls: roll (a position has dice on the table)
        state = draw_outcome(state, rng)
    return state


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.sampled_from(CASES), seed=st.integers(0, 10**6))
def test_any_position_equals_brute_force(tmp_path_factory, name, seed):
    """From a random position (a card mid-game, or dice on the table with some rolls left): the same
    distribution as brute force, summing to 1, with the solver's expected score as its mean."""
    v = tiny_variant(tmp_path_factory.mktemp("v"), name)
    solution = _solved(v)
    state = _random_position(v, seed)
    if state.is_chance:  # the start of a turn (`_random_position`): the position is the card
        assert state.rolls_used == 0
        d = dist_mod.distribution(solution, card=state.card)
    else:
        d = dist_mod.distribution(solution, card=state.card, dice=state.dice, rolls_left=state.rolls_left)
    assert_same(as_dict(d), brute_distribution(v, solution, state))
    assert d.total == pytest.approx(1.0, abs=1e-12)
    assert d.mean == pytest.approx(d.expected, abs=1e-9)


_SOLVED: dict[str, object] = {}


def _solved(v):
    got = _SOLVED.get(v.fingerprint)
    if got is None:
        got = _SOLVED[v.fingerprint] = solve(v)
    return got


def test_summary_figures_from_the_probabilities():
    """mean, sd, median, mode, quantiles and tails read off `probs` as their definitions say."""
    d = dist_mod.Distribution("x", 10, np.array([0.1, 0.0, 0.5, 0.4]), 11.9, 0.0)
    assert d.scores.tolist() == [10, 11, 12, 13]
    assert d.mean == pytest.approx(0.1 * 10 + 0.5 * 12 + 0.4 * 13)
    var = 0.1 * 10**2 + 0.5 * 12**2 + 0.4 * 13**2 - d.mean**2
    assert d.sd == pytest.approx(math.sqrt(var))
    assert (d.mode, d.median, d.quantile(0.1), d.quantile(0.11), d.quantile(1.0)) == (12, 12, 10, 12, 13)
    assert d.at_least(13) == pytest.approx(0.4) and d.at_least(9) == pytest.approx(1.0) and d.at_least(14) == 0.0
    assert d.tail().tolist() == pytest.approx([1.0, 0.9, 0.9, 0.4])
    with pytest.raises(DicecupError, match="quantile"):
        d.quantile(0)


def test_refusals(tmp_path):
    v = tiny_variant(tmp_path, "threshold")
    solution = solve(v)
    with pytest.raises(DicecupError, match="without dice"):
        dist_mod.distribution(solution, rolls_left=1)
    with pytest.raises(DicecupError, match="rolls_left must be 0..1"):
        dist_mod.distribution(solution, dice=(1, 2), rolls_left=2)
    with pytest.raises(DicecupError, match="dice must be 2 faces from 1 to 3"):
        dist_mod.distribution(solution, dice=(1, 4))
    with pytest.raises(DicecupError, match="every box"):
        dist_mod.distribution(solution, card=Card({"ones": 1, "twos": 2, "threes": 3, "pair": 8}))
    with pytest.raises(DicecupError, match="not reachable"):
        dist_mod.distribution(solution, card=Card({"ones": 5}))
    need = dist_mod.estimate_bytes(solution)
    with pytest.raises(DicecupError, match=r"could take up to .* GiB, above the limit"):
        dist_mod.distribution(solution, max_bytes=need - 1)
    with pytest.raises(DicecupError, match=r"GiB and the turns' outcomes .* GiB, above the limit"):
        dist_mod.distribution(solution, max_bytes=need)  # the vectors fit; with the kept outcomes they do not
    banked = solve(tiny_variant(tmp_path, "banked"))
    with pytest.raises(DicecupError, match="bank unused rolls"):
        dist_mod.distribution(banked)


@pytest.mark.parametrize("name", ["two-groups", "flags", "served"])
def test_outcome_bound_holds_the_kept_outcomes(tmp_path, name):
    """The refusal's bound on the kept outcomes is an upper bound on what the reached states keep."""
    solution = solve(tiny_variant(tmp_path, name))
    kept: list[int] = []
    original = dist_mod.LayerPass.outcomes

    def spy(self, *args):
        parts = original(self, *args)
        kept.append(sum(len(rows.prob) for _, rows in parts) * dist_mod.OUTCOME_BYTES)
        return parts

    dist_mod.LayerPass.outcomes = spy
    try:
        dist_mod.distribution(solution)
    finally:
        dist_mod.LayerPass.outcomes = original
    layers = dist_mod.layers_from(solution)
    codes = np.concatenate([layer[0] for layer in layers[:-1]])
    bound = dist_mod.LayerPass(solution, codes).tables.outcome_bytes(solution, codes)
    assert 0 < sum(kept) <= bound


def test_estimate_bounds_the_memory_used(tmp_path):
    """The refusal's estimate is an upper bound: no two neighbouring layers' vectors take more."""
    v = tiny_variant(tmp_path, "two-groups")
    solution = solve(v)
    used: list[int] = []
    original = dist_mod.LayerPass.layer

    def spy(self, *args):
        original(self, *args)
        used.append(self.vec.nbytes)

    dist_mod.LayerPass.layer = spy
    try:
        dist_mod.distribution(solution)
    finally:
        dist_mod.LayerPass.layer = original
    pairs = [a + b for a, b in zip(used, used[1:], strict=False)] or used
    assert max(pairs) <= dist_mod.estimate_bytes(solution)


def test_successor_slots_match_the_solver(tmp_path):
    """The compiled successor values equal `Solution.successors` (symmetric boxes included)."""
    for name in ("sym-upper", "flags", "two-groups"):
        v = tiny_variant(tmp_path, name)
        solution = solve(v)
        layers = dist_mod.layers_from(solution)
        codes = np.concatenate([layer[0] for layer in layers[:-1]])
        progs = np.ascontiguousarray(np.concatenate([layer[1] for layer in layers[:-1]]))
        run = dist_mod.LayerPass(solution, codes)
        nb, k = run.slot_add.shape
        succ = np.empty((len(codes), nb * k), dtype=np.int64)
        after = np.empty((len(codes), nb * k))
        propagate.successor_slots(codes, progs, run.nexts, run.states, run.values, succ, after)
        want = solution.successors(codes, progs)
        filled = np.repeat((codes[:, None] >> np.arange(nb)) & 1 == 1, k, axis=1)
        # a filled box has no successor (the solver's table repeats its group's row there: never legal)
        assert np.isnan(after[filled]).all(), name
        np.testing.assert_array_equal(after[~filled], want[~filled], err_msg=name)


@pytest.mark.parametrize("theta", [0.0, 0.15, -0.2])
def test_play_chooses_as_the_simulators_best_move_rows(tmp_path, theta):
    """The propagation that chooses its moves on the way (`propagate.play_turns`) ends every turn in the same
    outcomes, with the same probabilities bit for bit, as the one playing the simulator's best-move rows (`best_moves`, the
    rows `bot:optimal` plays from), from a turn's start and from a roll on the table mid-turn, for the mean
    and risk objectives."""
    from dicecup.numeric import propagate
    from dicecup.numeric.moves import move_rows, turn_play
    from dicecup.numeric.objective import parse_objective
    from dicecup.simulate.optimal import turn_states

    for name in ("sym-upper", "flags", "two-groups"):
        v = tiny_variant(tmp_path, name)
        solution = solve(v, objective=parse_objective("mean" if theta == 0 else f"risk:{theta}"))
        layers = dist_mod.layers_from(solution)
        codes = np.concatenate([layer[0] for layer in layers[:-1]])
        progs = np.ascontiguousarray(np.concatenate([layer[1] for layer in layers[:-1]]))
        run = dist_mod.LayerPass(solution, codes)
        tables, graph = run.tables, solution.graph
        nb, k = run.slot_add.shape
        succ = np.empty((len(codes), nb * k), dtype=np.int64)
        after = np.empty((len(codes), nb * k))
        propagate.successor_slots(codes, progs, run.nexts, run.states, run.values, succ, after)
        ctx = tables.dense(solution, codes)
        moves, flag = dist_mod.best_moves(solution, codes, progs, after, (ctx, tables.scores))
        mid = np.zeros(graph.n_rolls)
        mid[graph.n_rolls // 3] = 1.0
        for stage0, mass0 in ((0, np.ascontiguousarray(graph.arrays.roll_probs, dtype=np.float64)), (1, mid)):
            got = []
            for play in (False, True):
                acc = np.empty((len(codes), tables.out_box.shape[1]))
                count = np.empty(len(codes), dtype=np.int64)
                errors = np.zeros(3, dtype=np.int64)
                start, ends = dist_mod.Start(stage0, mass0), dist_mod.Ends(acc, count, errors)
                if play:
                    states = turn_states(solution, codes, progs, ctx, tables.scores.same, after)
                    pol = turn_play(graph.keep_order, v.rolls, theta)
                    propagate.play_turns(states, tables.scores, graph.arrays, pol, run.outs, start, ends)
                else:
                    rows = move_rows(moves, flag, v.rolls)._replace(kept=run.kept)
                    propagate.propagate(rows, ctx, run.outs, graph.arrays, start, ends)
                assert not errors.any(), name
                got.append((acc, count))
            np.testing.assert_array_equal(got[1][0], got[0][0], err_msg=f"{name} from decision {stage0}")
            np.testing.assert_array_equal(got[1][1], got[0][1], err_msg=name)
            assert (got[1][1] > 0).all(), name


# ------------------------------------------------------------------ Yahtzee, against a long simulation


@pytest.fixture(scope="module")
def yahtzee():
    v = Engine().variant("yahtzee")
    from dicecup.solver import load_or_solve

    solution, _ = load_or_solve(v)
    return v, solution, dist_mod.distribution(solution)


@pytest.mark.slow
def test_yahtzee_figures(yahtzee, snapshot):
    """Mean equal to the solver's value; the summary figures (median 248 and mode 266 are published)."""
    _, solution, d = yahtzee
    assert d.mean == pytest.approx(solution.expected_score, abs=1e-9)
    assert d.total == pytest.approx(1.0, abs=1e-12)
    assert (d.median, d.mode) == (248, 266)
    figures = d.summary()
    figures["mean"] = round(figures["mean"], 6)
    figures["sd"] = round(figures["sd"], 6)
    figures["p_at_least"] = {t: round(d.at_least(t), 9) for t in (200, 250, 300, 400, 500)}
    assert figures == snapshot


@pytest.mark.slow
def test_yahtzee_against_a_million_simulated_games(yahtzee):
    """bot:optimal's scores over 10^6 games (seed 20261202: chi-square z 0.61, mean and sd within 2 standard
    errors when written): mean and sd within 4 standard errors, and a chi-square test of
    the counts (scores pooled into bins of at least 50 expected games) at the 10^-4 level."""
    v, _, d = yahtzee
    from dicecup.simulate import simulate

    games = 1_000_000
    totals = simulate(v, "optimal", games, seed=20261202).totals
    assert totals.min() >= d.low and totals.max() <= d.high
    counts = np.bincount(totals - d.low, minlength=len(d.probs))
    se = d.sd / math.sqrt(games)
    assert abs(totals.mean() - d.mean) < 4 * se
    m4 = float(np.sum(d.probs * (d.scores - d.mean) ** 4))  # the sd's standard error from the exact 4th moment
    assert abs(totals.std() - d.sd) < 4 * math.sqrt((m4 - d.sd**4) / (4 * d.sd**2 * games))
    chi2, dof = chi_square(counts, d.probs * games, least=50)
    # Wilson-Hilferty: (chi2 / dof) ** (1/3) is near normal; z > 3.72 is p < 1e-4
    z = ((chi2 / dof) ** (1 / 3) - (1 - 2 / (9 * dof))) / math.sqrt(2 / (9 * dof))
    assert z < 3.72, (chi2, dof)
    for q in (0.05, 0.25, 0.5, 0.75, 0.95):  # each simulated quantile within a few points of the exact one
        assert abs(float(np.quantile(totals, q)) - d.quantile(q)) <= 3, q


def chi_square(counts: np.ndarray, expected: np.ndarray, least: float) -> tuple[float, int]:
    """Pearson's statistic over consecutive scores pooled until each bin expects at least `least` games (the
    tail's remainder joins the last bin), and its degrees of freedom."""
    bins: list[list[float]] = []
    c = e = 0.0
    for got, want in zip(counts.tolist(), expected.tolist(), strict=True):
        c += got
        e += want
        if e >= least:
            bins.append([c, e])
            c = e = 0.0
    bins[-1][0] += c
    bins[-1][1] += e
    return sum((c - e) ** 2 / e for c, e in bins), len(bins) - 1


# ------------------------------------------------------------------ the command


def _cli(*args: str):
    from typer.testing import CliRunner

    from dicecup.cli.app import app

    return CliRunner().invoke(app, list(args))


def test_cli_reports_the_same_figures_as_the_api(tmp_path):
    import json

    path = tmp_path / "tiny.yaml"
    path.write_text(TINY["threshold"], encoding="utf-8")
    v = Engine(entry_points=False).load_file(path)
    d = dist_mod.distribution(solve(v), dice=(1, 2), rolls_left=1)
    out = _cli("distribution", "-v", str(path), "-d", "12", "-r", "1", "--json", "-q")
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    assert (data["mean"], data["median"], data["mode"]) == (pytest.approx(d.mean, abs=1e-12), d.median, d.mode)
    assert [row["probability"] for row in data["scores"]] == pytest.approx(d.probs.tolist(), abs=1e-15)
    text = _cli("distribution", "-v", str(path), "--plot", str(tmp_path / "d.png"))
    assert text.exit_code == 0, text.output
    assert "median" in text.stdout and "P(score >= t)" in text.stdout and (tmp_path / "d.png").stat().st_size > 1000


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-r", "1"], "--rolls-left needs --dice"),
        (["-d", "12", "-r", "5"], "--rolls-left must be 0..1"),
        (["-d", "1"], "expected 2 dice"),
        (["-c", "ones=7"], "cannot hold 7"),
        (["--plot", "x.txt"], "ending in .png"),
    ],
)
def test_cli_errors_are_one_line(tmp_path, args, message):
    path = tmp_path / "tiny.yaml"
    path.write_text(TINY["threshold"], encoding="utf-8")
    out = _cli("distribution", "-v", str(path), *args)
    assert out.exit_code == 2
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0], out.stderr


def test_cli_refuses_banked_rolls_before_solving(tmp_path):
    path = tmp_path / "banked.yaml"
    path.write_text(TINY["banked"], encoding="utf-8")
    out = _cli("distribution", "-v", str(path))
    assert out.exit_code == 2 and "bank unused rolls" in out.stderr
