"""dicecup.rl's vector and parallel environments: the vector environment plays step by step what N single
environments play for the same seeds and actions (observations, masks, rewards, ends), autoresets as gymnasium
1.x does, falls back to the engine where the tables cannot hold a variant; the parallel environment passes
PettingZoo's checker and plays the AEC environment's game; the exact signal's regret is the review's loss."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from _variants import BUILTIN_VARIANTS, FAMILY_VARIANTS

gymnasium = pytest.importorskip("gymnasium")
pytest.importorskip("pettingzoo")

from gymnasium.vector import AutoresetMode  # noqa: E402
from pettingzoo.test import parallel_api_test  # noqa: E402

from dicecup import GameState  # noqa: E402
from dicecup.rl import (  # noqa: E402
    ENV_ID,
    DicecupAECEnv,
    DicecupEnv,
    DicecupParallelEnv,
    DicecupVectorEnv,
    EngineVectorEnv,
    EnvUsageError,
)
from dicecup.rl.table import DiceStream  # noqa: E402

N = 6


def random_legal(mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One random legal action per row (0 for a row with none: a finished game, whose action is not read)."""
    keys = rng.random(mask.shape)
    keys[mask == 0] = -1.0
    return keys.argmax(axis=1)


def make_vec(variant: str, n: int = N, **kwargs):
    return gymnasium.make_vec(ENV_ID, num_envs=n, vectorization_mode="vector_entry_point", variant=variant, **kwargs)


def play_side_by_side(envs, singles, steps: int, seed: int, rng: np.random.Generator, illegal_every: int = 0):
    """Step the vector environment and N single ones with the same actions, asserting they agree each step;
    the games finished."""
    obs, info = envs.reset(seed=seed)
    firsts = [env.reset(seed=seed + i) for i, env in enumerate(singles)]
    assert np.array_equal(obs, np.stack([o for o, _ in firsts]))
    assert np.array_equal(info["action_mask"], np.stack([i["action_mask"] for _, i in firsts]))
    done = np.zeros(len(singles), dtype=bool)
    finished = 0
    for step in range(steps):
        actions = random_legal(info["action_mask"], rng)
        if illegal_every and step % illegal_every == 0:
            actions[0] = np.flatnonzero(info["action_mask"][0] == 0)[0]  # an illegal action for game 0
        obs, reward, terminated, truncated, info = envs.step(actions)
        for i, env in enumerate(singles):
            if done[i]:  # next-step autoreset: the game starts again, its action not read
                want_obs, want_info = env.reset()
                want = (want_obs, 0.0, False, False, want_info)
            else:
                want = env.step(int(actions[i]))
            assert np.array_equal(obs[i], want[0]), (step, i)
            assert reward[i] == want[1] and terminated[i] == want[2] and truncated[i] == want[3], (step, i)
            assert np.array_equal(info["action_mask"][i], want[4]["action_mask"]), (step, i)
            assert np.array_equal(envs.action_masks()[i], want[4]["action_mask"])
            assert bool(info.get("illegal", np.zeros(len(singles), bool))[i]) == ("illegal" in want[4])
        done = terminated | truncated
        finished += int(terminated.sum())
    return finished


@pytest.mark.parametrize("variant", ["yahtzee", "yatzy", "yacht", "generala"])
def test_the_vector_environment_plays_what_n_single_environments_play(variant, engine):
    envs = make_vec(variant)
    assert isinstance(envs, DicecupVectorEnv) and envs.backend == "compiled"
    singles = [DicecupEnv(variant, engine=engine) for _ in range(N)]
    finished = play_side_by_side(envs, singles, 90, seed=11, rng=np.random.default_rng(1), illegal_every=7)
    assert finished >= N  # every game ended at least once and was dealt again
    assert envs.observation_space.shape == (N, singles[0].observation_space.shape[0])
    assert envs.single_action_space == singles[0].action_space


def test_a_table_keyed_anew_has_every_games_classes_looked_up_again(monkeypatch, tmp_path):
    """Yahtzee's score classes, learned from nothing, are keyed anew in the first steps (the joker rule reads the
    Yahtzee box): the classes are numbered anew, so every game's, not only those whose card changed, are
    looked up again (a stale number would score a box from another card's class)."""
    from dicecup import Engine
    from dicecup.solver import cache

    monkeypatch.setenv(cache.CACHE_ENV, str(tmp_path / "cache"))
    monkeypatch.setenv(cache.STATE_ENV, str(tmp_path / "state"))
    envs = DicecupVectorEnv(256, "yahtzee", engine=Engine(), threads=1)
    traced = envs.rules.tables.scores.traced, envs.rules.tables.end.traced
    rng = np.random.default_rng(0)
    obs, info = envs.reset(seed=5)
    for _ in range(12):
        obs, reward, terminated, truncated, info = envs.step(random_legal(info["action_mask"], rng))
        for t, table in ((0, traced[0]), (2, traced[1])):
            want = [table.known_class(row) for row in envs._games.vals]
            assert envs._games.cls[:, t].tolist() == want
    assert envs.rules.rekeyed >= 1


ENGINE_STEPPED = {
    "maxi-yatzy": "banks unused rolls",
    "triple-yahtzee": "a column multiplies",
    "yamb": "declare actions",
}
ENGINE_STEPPED["balut"] = "parts the kernel does not write"


@pytest.mark.parametrize("variant", BUILTIN_VARIANTS + FAMILY_VARIANTS)
def test_every_variant_is_stepped_as_the_single_environment_steps_it(variant, engine):
    """Compiled where the tables hold the variant, else by the engine with a warning saying why: the same
    games either way."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        envs = make_vec(variant, n=2)
    why = ENGINE_STEPPED.get(variant)
    assert envs.backend == ("engine" if why else "compiled")
    assert [why in str(w.message) for w in caught] == ([True] if why else [])
    singles = [DicecupEnv(variant, engine=engine) for _ in range(2)]
    play_side_by_side(envs, singles, 40, seed=7, rng=np.random.default_rng(0), illegal_every=9)


def test_a_variant_the_tables_cannot_hold_is_played_by_the_engine_and_says_so(engine):
    with pytest.warns(UserWarning, match="stepped by the engine, not the compiled tables: .*announcements"):
        envs = make_vec("yamb", n=3)
    assert isinstance(envs, EngineVectorEnv) and envs.backend == "engine"
    singles = [DicecupEnv("yamb", engine=engine) for _ in range(3)]
    play_side_by_side(envs, singles, 40, seed=3, rng=np.random.default_rng(2))
    assert envs.action_masks().shape == (3, singles[0].action_space.n)


def test_autoreset_is_next_step_and_masks_are_the_engines(engine):
    envs = make_vec("yacht", n=2)
    assert envs.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP
    obs, info = envs.reset(seed=5)
    rng = np.random.default_rng(0)
    ended = None
    for _ in range(200):
        obs, reward, terminated, truncated, info = envs.step(random_legal(info["action_mask"], rng))
        if terminated.any():
            ended = int(np.flatnonzero(terminated)[0])
            break
    assert ended is not None
    enc = DicecupEnv("yacht", engine=engine).encoding
    parts = enc.as_dict(obs[ended])
    assert not info["action_mask"][ended].any() and parts["open"].sum() == 0 and parts["dice"].sum() == 0
    total = parts["total"][0]
    obs, reward, terminated, truncated, info = envs.step(np.zeros(2, dtype=np.int64))  # action 0 not read
    assert reward[ended] == 0 and not terminated[ended]
    fresh = enc.as_dict(obs[ended])
    assert fresh["open"].all() and fresh["total"][0] == 0 and fresh["rolls_used"][0] == 1 and total > 0
    # the mask of a fresh game: every box and every distinct keep of its dice
    state = GameState.new(engine.variant("yacht"), 1).roll(dice=[int(d) for d in fresh["dice"]])
    assert info["action_mask"][ended].sum() == len(state.legal_actions())


def test_an_illegal_action_is_penalised_then_truncates(engine):
    envs = DicecupVectorEnv(2, "yacht", engine=engine, penalty=-2.5, max_illegal=3)
    obs, info = envs.reset(seed=0)
    bad = np.array([int(np.flatnonzero(m == 0)[0]) for m in info["action_mask"]])
    for k in range(3):
        new, reward, terminated, truncated, info = envs.step(bad)
        assert (reward == -2.5).all() and info["illegal"].all() and np.array_equal(new, obs)
        assert truncated.all() == (k == 2) and not terminated.any()
    new, reward, terminated, truncated, info = envs.step(bad)  # the next step deals new games
    assert (reward == 0).all() and "illegal" not in info and not truncated.any()


def test_seeds_replay_and_a_list_of_seeds_is_one_per_game(engine):
    a, b = DicecupVectorEnv(3, "yatzy", engine=engine), DicecupVectorEnv(3, "yatzy", engine=engine)
    first, _ = a.reset(seed=[4, None, 9])
    again, _ = b.reset(seed=[4, 1, 9])
    assert np.array_equal(first[[0, 2]], again[[0, 2]])
    single = DicecupEnv("yatzy", engine=engine)
    assert np.array_equal(single.reset(seed=9)[0], first[2])
    with pytest.raises(EnvUsageError, match="one seed per game: 3 of them"):
        a.reset(seed=[1, 2])


@pytest.mark.parametrize(
    ("actions", "message"),
    [
        ([0, 1], "takes 3 whole action indices"),
        ([0.5, 1.0, 2.0], "takes 3 whole action indices"),
        ([0, 1, 10**6], "outside the action space"),
        ([-1, 0, 0], "outside the action space"),
        ("abc", "takes 3 whole action indices"),
    ],
)
def test_bad_actions_are_one_usage_error(actions, message, engine):
    envs = DicecupVectorEnv(3, "yacht", engine=engine)
    with pytest.raises(EnvUsageError, match=r"step\(\) before reset"):
        envs.step([0, 0, 0])
    envs.reset(seed=1)
    with pytest.raises(EnvUsageError, match=message):
        envs.step(actions)


def test_what_the_vector_environment_does_not_take_is_one_precise_error(engine):
    from dicecup import DicecupError

    for kwargs, message in [
        ({"illegal": "raise"}, "penalises illegal actions"),
        ({"observation": "dict"}, "gives observation vectors"),
        ({"num_envs": 0}, "num_envs must be a whole number from 1"),
        ({"threads": 0}, "threads must be a whole number from 1"),
    ]:
        with pytest.raises(DicecupError, match=message):
            DicecupVectorEnv(**{"num_envs": 2, "variant": "yacht", "engine": engine, **kwargs})


def test_the_dice_stream_is_the_kernels():
    from dicecup import Engine

    v = Engine().variant("yahtzee")
    a, b = DiceStream(v, 2**64 - 1), DiceStream(v, 2**64 - 1)
    rolls = [a.roll(n) for n in (5, 3, 1, 5)]
    assert rolls == [b.roll(n) for n in (5, 3, 1, 5)]
    assert all(1 <= d <= 6 for r in rolls for d in r) and [len(r) for r in rolls] == [5, 3, 1, 5]


# ---------------------------------------------------------------------- the parallel environment


@pytest.mark.parametrize(("variant", "players"), [("yahtzee", 2), ("generala", 3), ("yamb", 2)])
def test_parallel_api_test_passes(variant, players, engine):
    env = DicecupParallelEnv(variant, players=players, engine=engine)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        parallel_api_test(env, num_cycles=400)


def test_the_parallel_environment_plays_the_aec_environments_game(engine):
    par = DicecupParallelEnv("yatzy", players=2, engine=engine)
    aec = DicecupAECEnv("yatzy", players=2, engine=engine)
    obs, infos = par.reset(seed=8)
    aec.reset(seed=8)
    rng = np.random.default_rng(3)
    returns = dict.fromkeys(par.possible_agents, 0.0)
    while par.agents:
        agent = aec.agent_selection
        want = aec.observe(agent)
        assert np.array_equal(obs[agent]["observation"], want["observation"])
        assert np.array_equal(obs[agent]["action_mask"], want["action_mask"])
        action = int(random_legal(want["action_mask"][None], rng)[0])
        other = dict.fromkeys(par.agents, 0)
        obs, rewards, terminations, truncations, infos = par.step({**other, agent: action})
        aec.step(action)
        for a, r in rewards.items():
            returns[a] += r
    totals = aec.game.results[0].totals
    assert [returns[a] for a in par.possible_agents] == [float(t) for t in totals]
    assert all(terminations.values()) and infos["player_0"]["totals"] == list(totals)


def test_the_parallel_environment_needs_the_acting_agents_action(engine):
    par = DicecupParallelEnv("yacht", players=2, engine=engine)
    par.reset(seed=1)
    with pytest.raises(EnvUsageError, match="player_0 is to act"):
        par.step({"player_1": 0})
    with pytest.raises(EnvUsageError, match="dict of actions"):
        par.step([0])


# ---------------------------------------------------------------------- the exact signal


def test_the_regret_in_info_is_the_reviews_loss(engine):
    from dicecup.solver import load_or_solve
    from dicecup.solver.review import decision_at

    variant = engine.variant("yacht")
    solution, _ = load_or_solve(variant)
    env = DicecupEnv(variant, engine=engine, exact=True)
    vec = DicecupVectorEnv(1, variant, engine=engine, exact=True)
    obs, info = env.reset(seed=3)
    vobs, vinfo = vec.reset(seed=3)
    rng = np.random.default_rng(4)
    losses = []
    for index in range(30):
        values = info["action_values"]
        assert np.array_equal(np.isfinite(values), info["action_mask"].astype(bool))
        np.testing.assert_allclose(vinfo["action_values"][0], values, rtol=0, atol=1e-9)
        state = env.state
        action = int(random_legal(info["action_mask"][None], rng)[0])
        move = env.encoding.decode(action, state)
        loss = decision_at(solution, state, move, index).loss
        obs, reward, terminated, truncated, info = env.step(action)
        vobs, vreward, vterm, vtrunc, vinfo = vec.step(np.array([action]))
        assert info["regret"] == pytest.approx(loss, abs=1e-9) and vinfo["regret"][0] == pytest.approx(loss, abs=1e-9)
        losses.append(loss)
        if terminated:
            break
    assert any(x > 0 for x in losses) and any(x == 0 for x in losses)
