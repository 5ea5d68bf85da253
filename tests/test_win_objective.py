"""The win objective (`--objective win`): each option's share of the win against brute force over GameState,
its pick against bot:win's move, its values as chances, and the refusal without opponents."""

from __future__ import annotations

import random

import pytest
from _cli_helpers import check, json_of
from _solver_helpers import MICRO_DUEL, deep_recursion, micro_duel, share, state_key, tiny_variant
from typer.testing import CliRunner

from dicecup import Card, Engine, GameState
from dicecup.errors import DicecupError
from dicecup.numeric.objective import KINDS, parse_objective, parse_objectives
from dicecup.simulate import distribution as dist_mod

pytestmark = pytest.mark.skipif(not dist_mod.AVAILABLE, reason="the win objective needs numba")


def _decisions(v, games: int, seed: int, kinds=("optimal", "random")):
    """Decision states of two-player games (bots of `kinds` in the seats, the dice at random)."""
    engine = Engine(entry_points=False)
    rng = random.Random(seed)
    for g in range(games):
        bots = [engine.make_bot(k, random.Random(g)) for k in kinds]
        s = GameState.new(v, ["a", "b"])
        while not s.over:
            if s.is_chance:
                acts, ps = zip(*s.chance_outcomes(), strict=True)
                s = s.apply(rng.choices(acts, [float(p) for p in ps])[0])
            else:
                yield s
                s = s.apply(bots[s.current].choose(s))


def brute_after(v, solution, state: GameState, me: int, card: Card, memo: dict[tuple, float] | None = None) -> float:
    """Player `me`'s share of the win from `state`, its moves while its card is `card` (this turn) the best
    for it, every other move the mean-optimal solver's (what the win objective ranks by). `memo` may be shared
    by calls with the same `me` and `card` (the options of one decision): a state's share depends on nothing else."""
    from dicecup.solver.policy import best_action

    memo = {} if memo is None else memo

    def walk(s: GameState) -> float:
        key = state_key(s)
        if key in memo:
            return memo[key]
        if s.over:
            out = share(s, me)
        elif s.is_chance:
            out = sum(float(p) * walk(s.apply(a)) for a, p in s.chance_outcomes())
        elif s.current == me and s.cards[me] == card:
            out = max(walk(s.apply(a)) for a in s.legal_actions())
        else:
            out = walk(s.apply(best_action(solution, s)))
        memo[key] = out
        return out

    return deep_recursion(lambda: walk(state))


def test_win_is_registered_without_argument():
    assert KINDS["win"].argument is None
    win = parse_objective("win")
    assert (win.id, win.kind, win.unit, win.value_key) == ("win", "win", "probability", "win_probability")
    assert [g.id for g in parse_objectives("mean,win")] == ["mean", "win"]
    with pytest.raises(DicecupError, match="takes no parameter"):
        parse_objective("win:2")


def test_every_option_is_worth_its_brute_force_share():
    """Each option's value is the mover's share of the win after it, this turn played to win and every later
    move the mean's: brute force over GameState (no code shared with the planner), keeps and boxes alike."""
    from dicecup.simulate.win import WinAdvisor

    v, solution, planner = micro_duel(MICRO_DUEL)
    advisor = WinAdvisor(parse_objective("win"), planner)
    checked = 0
    for s in _decisions(v, 4, 11):
        options = advisor.options_at(s)
        assert {o.action for o in options} == set(s.legal_actions())
        memo: dict[tuple, float] = {}  # one walk of the rest of the game serves every option of this decision
        for o in options:
            assert 0.0 <= o.value <= 1.0
            brute = brute_after(v, solution, s.apply(o.action), s.current, s.card, memo)
            assert o.value == pytest.approx(brute, abs=1e-6), (
                s.cards,
                o,
            )
            checked += 1
    assert checked > 40


def test_the_win_column_picks_bot_wins_move(tmp_path, monkeypatch):
    """Where the best option is clear (no tie within 1e-9), the win objective's pick is bot:win's move."""
    monkeypatch.setenv("DICECUP_CACHE_DIR", str(tmp_path / "cache"))
    from dicecup.rankings import make_advisor

    engine = Engine(entry_points=False)
    compared = 0
    for name in ("threshold", "two-groups", "sym-chance", "served"):
        v = tiny_variant(tmp_path, name, engine)
        advisor = make_advisor(v, parse_objective("win"))
        bot = engine.make_bot("win", random.Random(0))
        for s in _decisions(v, 3, 5, ("win", "optimal")):
            options = advisor.options_at(s)
            if len(options) > 1 and options[0].value - options[1].value < 1e-9:
                continue
            assert options[0].action == bot.choose(s), (name, s.cards, s.dice)
            compared += 1
    assert compared > 20


def test_win_refused_without_opponents(tmp_path, monkeypatch):
    monkeypatch.setenv("DICECUP_CACHE_DIR", str(tmp_path / "cache"))
    from dicecup.rankings import make_advisor

    v = tiny_variant(tmp_path, "threshold", Engine(entry_points=False))
    advisor = make_advisor(v, parse_objective("win"))
    with pytest.raises(DicecupError, match="there are none"):
        advisor.options(Card(), (1,) * v.dice, 1, True)
    alone = next(s for s in _decisions_alone(v))
    with pytest.raises(DicecupError, match="there are none"):
        advisor.options_at(alone)


def _decisions_alone(v):
    s = GameState.new(v, ["solo"])
    while s.is_chance:
        s = s.apply(s.chance_outcomes()[0][0])
    yield s


@pytest.mark.usefixtures("cli_builtins")
def test_advise_win_cli(tmp_path, monkeypatch):
    """`advise --objective win` needs --opponent (one error line, exit 2); with one, its JSON fits the schema
    and every win value is a chance."""
    monkeypatch.setenv("DICECUP_CACHE_DIR", str(tmp_path / "cache"))
    from dicecup.cli.app import app

    v = tiny_variant(tmp_path, "threshold", Engine(entry_points=False))
    path = str(tmp_path / "tiny-threshold.yaml")
    dice = "".join(["1"] * v.dice)
    got = CliRunner().invoke(app, ["advise", "-v", path, "-d", dice, "--objective", "mean,win"])
    assert got.exit_code == 2
    assert got.output.count("\n") == 1 and got.output.startswith("error: objective win ranks moves against")
    data = json_of("advise", "-v", path, "-d", dice, "--objective", "mean,win", "--opponent", "")
    check("advise", data)
    assert data["objectives"] == ["mean", "win"] and data["opponents"] == [{}]
    wins = [m["ranks"][1]["value"] for m in data["moves"]]
    assert all(0 <= w <= 1 for w in wins) and max(wins) > 0
    solved = CliRunner().invoke(app, ["solve", "-v", path, "--objective", "win"])
    assert solved.exit_code == 2 and solved.output.count("\n") == 1
    assert solved.output.startswith("error: objective win is not solved as a table")


@pytest.mark.usefixtures("cli_builtins")
def test_match_cli(tmp_path, monkeypatch):
    """`dicecup match`: the JSON fits its schema; the shares of a game's win sum to 1 (ties shared); the
    lineup bot:optimal x 2 is the control (each share within its CI of 1/2 for this seed's games, the same
    figures as the match player's own count); other bots and bot:win twice refused in one line."""
    monkeypatch.setenv("DICECUP_CACHE_DIR", str(tmp_path / "cache"))
    from dicecup.cli.app import app
    from dicecup.simulate.matches import play_matches
    from dicecup.simulate.win import planner_for

    v = tiny_variant(tmp_path, "threshold", Engine(entry_points=False))
    path = str(tmp_path / "tiny-threshold.yaml")
    data = json_of("match", "-v", path, "-p", "bot:win", "-p", "bot:optimal", "-n", "3000", "--seed", "4")
    check("match", data)
    shares = [p["win_share"] for p in data["players"]]
    assert sum(shares) == pytest.approx(1.0)
    own = play_matches(planner_for(v), 2, 3000, 4)
    assert shares[0] == pytest.approx(float(own.share.mean()))  # the win seat's share as the match player counts it
    for p in data["players"]:
        assert p["ci95"][0] <= p["win_share"] <= p["ci95"][1]
    control = json_of("match", "-v", path, "-p", "bot:optimal", "-p", "bot:optimal", "-n", "3000")
    check("match", control)
    for p in control["players"]:
        assert p["ci95"][0] <= 0.5 <= p["ci95"][1]
    for bad, said in ((["bot:random", "bot:win"], "--player 'bot:random'"), (["bot:win", "bot:win"], "twice"),
                      (["bot:win"], "at least two")):  # fmt: skip
        got = CliRunner().invoke(app, ["match", "-v", path, *[x for b in bad for x in ("-p", b)]])
        assert got.exit_code == 2 and got.output.count("\n") == 1 and said in got.output, got.output
    plot = tmp_path / "m.png"
    got = CliRunner().invoke(
        app, ["match", "-v", path, "-p", "bot:optimal", "-p", "bot:win", "-n", "200", "--plot", str(plot), "-q"]
    )
    assert got.exit_code == 0, got.output
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.usefixtures("cli_builtins")
def test_play_hints_show_the_chance_of_winning(tmp_path, monkeypatch):
    """`play --objective mean,win` against a bot: the hint table has a win column of percentages; alone, the
    win objective is refused before the game."""
    monkeypatch.setenv("DICECUP_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("DICECUP_STATE_DIR", str(tmp_path / "state"))
    from dicecup.cli.app import app

    tiny_variant(tmp_path, "threshold", Engine(entry_points=False))
    path = str(tmp_path / "tiny-threshold.yaml")
    got = CliRunner().invoke(
        app,
        ["play", "-v", path, "--seed", "1", "-p", "ann", "-p", "bot:optimal", "--objective", "mean,win"],
        input="q\n",
    )
    assert got.exit_code == 0, got.output
    head = next(line for line in got.stdout.splitlines() if line.startswith("hint"))
    assert head.split() == ["hint", "mean", "win"]
    assert "%" in got.stdout.split(head, 1)[1]
    alone = CliRunner().invoke(app, ["play", "-v", path, "-p", "ann", "--objective", "win"], input="q\n")
    assert alone.exit_code == 2 and "there are none" in alone.output
