"""dicecup.rl: the gymnasium and PettingZoo environments pass their own checkers, the mask is
exactly the engine's legal actions, observations describe the engine's state, a random agent's
return is the engine's final total, seeds replay games, and the training example runs."""

from __future__ import annotations

import subprocess
import sys
import warnings
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from _variants import BUILTIN_VARIANTS, FAMILY_VARIANTS
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

gymnasium = pytest.importorskip("gymnasium")
pytest.importorskip("pettingzoo")

from gymnasium.utils.env_checker import check_env  # noqa: E402
from pettingzoo.test import api_test  # noqa: E402

from dicecup import DicecupError, GameState, IllegalAction, RuleAction, UnknownVariant  # noqa: E402
from dicecup.language.dice import sub_multisets  # noqa: E402
from dicecup.rl import ENV_ID, DicecupAECEnv, DicecupEnv, Encoding  # noqa: E402
from dicecup.rl.encoding import turn_rule_actions  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
CHECKED = ("yahtzee", "yatzy", "triple-yahtzee", "yamb", "maxi-yatzy", "kismet", "generala")


def random_masked(mask: np.ndarray, rng: np.random.Generator) -> int:
    legal = np.flatnonzero(mask)
    return int(legal[rng.integers(len(legal))])


def expected_parts(state: GameState, player: int, enc: Encoding) -> dict[str, list[float]]:
    """The observation's parts worked out from the engine's own views of the state (breakdown, totals)."""
    v = state.variant
    card = state.breakdown(player)
    dice = sorted(state.dice)
    counts = Counter(dice)
    out: dict[str, list[float]] = {
        "dice": dice or [0] * v.dice,
        "face_counts": [counts[f] for f in range(1, v.faces + 1)],
        "rolls_used": [0 if state.over else state.rolls_used],
        "rolls_left": [0 if state.over else state.rolls_left],
        "banked": [state.banked[player] if v.carry_over else 0],
        "open": [card["boxes"][b] is None for b in v.box_ids],
        "scores": [card["boxes"][b] or 0 for b in v.box_ids],
        "group_totals": [sum(card["boxes"][b] or 0 for b in g.boxes) for g in v.state_totals()],
        "flags": [state.cards[player].scores.get(f.box) == f.value for f in v.state_flags()],
        "total": [state.totals()[player]],
        "figures": [card.get("figures", {}).get(f.id, 0) for f in v.figures],
    }
    if len(v.columns) > 1:
        out["column_totals"] = [card["columns"][c.id] for c in v.columns]
    for per_face in v.attributes.values():
        values = list(dict.fromkeys(x for x in per_face[1:] if x is not None))
        out.setdefault("attributes", []).extend(sum(per_face[d] == x for d in dice) for x in values)
    if enc.rule_slots:
        taken = turn_rule_actions(state)
        out["turn_actions"] = [a in taken for a in enc.rule_slots]
    if len(state.players) > 1:
        seats = [(player + k) % len(state.players) for k in range(1, len(state.players))]
        out["others_totals"] = [state.totals()[i] for i in seats]
        out["to_act"] = [state.current == player and not state.over]
    return {k: vals for k, vals in out.items() if k in enc.layout}


def check_observation(vector: np.ndarray, state: GameState, player: int, enc: Encoding) -> None:
    """The vector is the documented parts in order, each what the engine says of the state."""
    assert vector.dtype == np.float32 and vector.shape == (enc.length,)
    parts = enc.as_dict(vector)
    assert list(parts) == [p[0] for p in enc.parts]
    assert np.array_equal(np.concatenate(list(parts.values())), vector)
    for name, want in expected_parts(state, player, enc).items():
        assert parts[name].tolist() == [float(x) for x in want], name


def check_mask(mask: np.ndarray, state: GameState, enc: Encoding) -> None:
    """The mask marks exactly the engine's legal actions, one index each, and the indices round-trip."""
    legal = state.legal_actions()
    indices = np.flatnonzero(mask)
    assert len(indices) == len(legal)
    assert sorted(enc.encode(a, state) for a in legal) == indices.tolist()
    assert {enc.decode(int(i), state) for i in indices} == set(legal)


# ---------------------------------------------------------------------- the checkers


@pytest.mark.parametrize("variant", CHECKED)
@pytest.mark.parametrize("observation", ["vector", "dict"])
def test_gymnasium_check_env_passes_without_a_warning(variant, observation, engine):
    # gymnasium.make deep-copies its keyword arguments: a compiled Variant goes through (a copy is itself)
    env = gymnasium.make(ENV_ID, variant=engine.variant(variant), observation=observation, render_mode="ansi")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env.unwrapped)
    assert isinstance(env.unwrapped, DicecupEnv)


@pytest.mark.parametrize(("variant", "players"), [("yahtzee", 2), ("generala", 4), ("yamb", 4)])
def test_pettingzoo_api_test_passes(variant, players, engine):
    env = DicecupAECEnv(variant, players=players, engine=engine, render_mode="ansi")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        # the two remarks api_test makes of every observation that is a dict with an action mask
        # (PettingZoo's own board games have that form too, and are listed in api_test to silence them)
        warnings.filterwarnings("ignore", "Observation space for each agent probably should be gymnasium.spaces.box")
        warnings.filterwarnings("ignore", "Observation is not a NumPy array")
        api_test(env, num_cycles=300)
    assert env.possible_agents == [f"player_{i}" for i in range(players)]


def test_registered_with_gymnasium_by_module_and_id(engine):
    env = gymnasium.make("dicecup.rl:dicecup/Dicecup-v0", variant="yatzy")
    obs, info = env.reset(seed=3)
    assert env.unwrapped.state.variant.id == "yatzy"
    assert obs in env.observation_space and info["action_mask"].sum() == len(env.unwrapped.state.legal_actions())


# ---------------------------------------------------------------------- whole games


@pytest.mark.parametrize("variant", BUILTIN_VARIANTS + FAMILY_VARIANTS)
def test_random_masked_agent_returns_the_engines_final_total(variant, engine):
    env = DicecupEnv(variant, engine=engine, observation="dict")
    enc = env.encoding
    rng = np.random.default_rng(7)
    for game in range(2):
        obs, info = env.reset(seed=game)
        episode_return, terminated, steps = 0.0, False, 0
        while not terminated:
            state = env.state
            assert np.array_equal(env.action_masks(), info["action_mask"])
            check_mask(info["action_mask"], state, enc)
            check_observation(np.concatenate(list(obs.values())), state, 0, enc)
            assert obs in env.observation_space
            obs, reward, terminated, truncated, info = env.step(random_masked(info["action_mask"], rng))
            assert not truncated and "illegal" not in info
            episode_return += reward
            steps += 1
        state = env.state
        assert state.over and len(state.cards[0].scores) == len(state.variant.boxes)
        assert episode_return == state.totals()[0] == state.results[-1].totals[0]
        assert not info["action_mask"].any()
        check_observation(np.concatenate(list(obs.values())), state, 0, enc)
        with pytest.raises(IllegalAction, match="reset"):
            env.step(0)


@pytest.mark.parametrize(("variant", "players"), [("yahtzee", 3), ("generala", 2), ("yamb", 2), ("russian", 3)])
def test_aec_random_agents_returns_are_their_final_totals(variant, players, engine):
    env = DicecupAECEnv(variant, players=players, engine=engine)
    enc = env.encoding
    rng = np.random.default_rng(1)
    for game in range(1 if variant == "yamb" else 3):
        env.reset(seed=game)
        returns = dict.fromkeys(env.possible_agents, 0.0)
        for agent in env.agent_iter():
            obs, reward, terminated, truncated, info = env.last()  # reward: since the agent last acted
            seat = env.possible_agents.index(agent)
            returns[agent] += reward
            if terminated or truncated:
                env.step(None)
                continue
            state = env.game
            assert state.current == seat
            check_mask(obs["action_mask"], state, enc)
            assert np.array_equal(obs["action_mask"], info["action_mask"])
            check_observation(obs["observation"], state, seat, enc)
            for other in env.possible_agents:
                if other != agent:
                    seen = env.observe(other)
                    check_observation(seen["observation"], state, env.possible_agents.index(other), enc)
                    assert not seen["action_mask"].any()
            env.step(random_masked(obs["action_mask"], rng))
        state = env.game
        assert state.results and env.agents == []
        final = state.results[0].totals
        if state.results[0].instant_winner is None:
            assert all(len(c.scores) == len(state.variant.boxes) for c in state.cards)
        assert [returns[a] for a in env.possible_agents] == [float(t) for t in final]


def test_aec_rewards_every_player_each_step_and_sum_to_the_totals(engine):
    env = DicecupAECEnv("yahtzee", players=2, engine=engine)
    env.reset(seed=5)
    rng = np.random.default_rng(0)
    summed = dict.fromkeys(env.possible_agents, 0.0)
    while env.agents:
        obs, reward, terminated, truncated, info = env.last()
        summed[env.agent_selection] += reward
        env.step(None if terminated else random_masked(obs["action_mask"], rng))
    assert list(summed.values()) == [float(t) for t in env.game.totals()]


# ---------------------------------------------------------------------- seeds


def play(env: DicecupEnv, seed: int, actions_seed: int) -> list[tuple[list[float], float]]:
    rng = np.random.default_rng(actions_seed)
    obs, info = env.reset(seed=seed)
    trace = [(obs.tolist(), 0.0)]
    terminated = False
    while not terminated:
        obs, reward, terminated, _, info = env.step(random_masked(info["action_mask"], rng))
        trace.append((obs.tolist(), reward))
    return trace


def test_the_same_seed_plays_the_same_game_and_another_seed_another(engine):
    a = DicecupEnv("yatzy", engine=engine)
    b = DicecupEnv("yatzy", engine=engine)
    assert play(a, 11, 0) == play(b, 11, 0)
    assert a.state.history == b.state.history  # the dice, not only what the observation shows
    assert play(a, 11, 0) != play(a, 12, 0)
    assert a.state.history != b.state.history


def test_aec_same_seed_same_game(engine):
    def run() -> tuple:
        env = DicecupAECEnv("kismet", players=2, engine=engine)
        env.reset(seed=42)
        rng = np.random.default_rng(3)
        while env.agents:
            obs, _, terminated, _, _ = env.last()
            env.step(None if terminated else random_masked(obs["action_mask"], rng))
        return env.game.history

    assert run() == run()


# ---------------------------------------------------------------------- encoding


@pytest.fixture(scope="module")
def encodings(engine) -> dict[int, Encoding]:
    """Encodings of 5 and 6 dice, by the number of dice."""
    return {v.dice: Encoding(v, engine) for v in (engine.variant("yahtzee"), engine.variant("maxi-yatzy"))}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(dice=st.lists(st.integers(1, 6), min_size=5, max_size=6))
def test_legal_keep_indices_are_the_distinct_keeps_once_each(encodings, dice):
    enc = encodings[len(dice)]
    ordered = tuple(sorted(dice))
    indices = enc.keep_mask(ordered).tolist()
    kept = [tuple(ordered[i] for i in range(len(dice)) if m >> i & 1) for m in indices]
    assert sorted(kept) == sorted(k for k in sub_multisets(ordered) if len(k) < len(dice))
    assert len(set(kept)) == len(kept)
    for m in indices:  # the leftmost of equal dice
        assert all(not m >> i & 1 or ordered[i - 1] != ordered[i] or m >> (i - 1) & 1 for i in range(1, len(dice)))


def test_action_space_layout_and_labels(engine):
    yamb = Encoding(engine.variant("yamb"), engine)
    assert yamb.keep_count == 31
    assert yamb.size == 31 + 52 + 53  # keeps, boxes, announce with no argument or a box
    assert yamb.label(0) == "reroll every die"
    assert yamb.label(0b10011) == "keep sorted dice 1,2,5"
    assert yamb.label(31) == "score down.ones"
    assert yamb.rule_slots[1] == RuleAction("announced", "announce", "down.ones")
    assert yamb.label(31 + 52 + 1) == "announce down.ones"
    yahtzee = Encoding(engine.variant("yahtzee"), engine)
    assert yahtzee.rule_slots == () and "turn_actions" not in yahtzee.layout and "attributes" not in yahtzee.layout
    assert yahtzee.length == 5 + 6 + 2 + 13 + 13 + 1 + 1 + 1  # no banked rolls: no carry-over
    assert Encoding(engine.variant("kismet"), engine).layout["attributes"] == slice(11, 14)
    assert Encoding(engine.variant("maxi-yatzy"), engine).layout["banked"] == slice(6 + 6 + 2, 6 + 6 + 3)
    assert np.all(yahtzee.scale >= 1) and yahtzee.scale.shape == (yahtzee.length,)


def test_yamb_announcement_shows_in_the_observation_and_the_mask(engine):
    env = DicecupEnv("yamb", engine=engine, observation="dict")
    obs, info = env.reset(seed=2)
    enc = env.encoding
    announce = enc.rule_index[("announced", "announce", "announce.yamb")]
    assert info["action_mask"][announce] == 1 and obs["turn_actions"].sum() == 0
    obs, reward, *_, info = env.step(announce)
    assert reward == 0 and obs["turn_actions"][announce - enc.keep_count - len(enc.box_ids)] == 1
    assert env.state.legal_boxes() == ("announce.yamb",)
    assert np.flatnonzero(info["action_mask"][enc.keep_count :]).tolist() == [enc.box_index["announce.yamb"] - 31]


def test_the_observation_space_holds_carried_over_rolls(engine):
    env = DicecupEnv("maxi-yatzy", engine=engine, observation="dict")
    obs, info = env.reset(seed=0)
    for _ in range(8):  # score at once: each turn banks two rolls
        boxes = [i for i in np.flatnonzero(info["action_mask"]) if i >= env.encoding.keep_count]
        obs, _, _, _, info = env.step(int(boxes[0]))
    assert obs["banked"][0] == 16 and obs["rolls_left"][0] == 3 + 16 - 1
    assert obs in env.observation_space


# ---------------------------------------------------------------------- illegal actions


def test_an_illegal_action_is_penalised_with_the_engines_reason_and_changes_nothing(engine):
    env = DicecupEnv("yahtzee", engine=engine, penalty=-2.5, max_illegal=3)
    obs, info = env.reset(seed=1)
    before = env.state
    box = env.encoding.box_index["ones"]
    env.step(box)  # fills ones
    obs, reward, terminated, truncated, info = env.step(box)
    assert reward == -2.5 and not terminated and not truncated
    assert "action 31 (score ones) is not legal now: box 'ones' is already filled" in info["illegal"]
    state = env.state
    env.step(box)
    _, _, _, truncated, _ = env.step(box)
    assert truncated and env.state == state and before != state


def test_a_keep_of_the_same_faces_by_other_dice_names_the_legal_index(engine):
    env = DicecupEnv("yahtzee", engine=engine)
    env.reset(seed=0)
    dice = sorted(env.state.dice)
    pair = next(i for i in range(1, 5) if dice[i] == dice[i - 1])
    _, reward, _, _, info = env.step(1 << pair)  # the right one of two equal dice
    assert reward == -1.0
    assert f"the same faces as action {1 << (pair - 1)}" in info["illegal"]


def test_raise_mode_and_actions_outside_the_space(engine):
    env = DicecupEnv("yahtzee", engine=engine, illegal="raise")
    env.reset(seed=1)
    env.step(env.encoding.box_index["ones"])
    state = env.state
    with pytest.raises(IllegalAction, match="already filled"):
        env.step(env.encoding.box_index["ones"])
    assert env.state is state
    with pytest.raises(IllegalAction, match="outside the action space: indices run from 0 to 43"):
        env.step(44)
    with pytest.raises(IllegalAction, match="an action is an index"):
        env.step("ones")
    env.step(np.int64(env.encoding.box_index["twos"]))
    env.step(np.array(env.encoding.box_index["threes"]))
    assert {"ones", "twos", "threes"} <= set(env.state.cards[0].scores)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"observation": "pixels"}, "observation must be one of vector, dict"),
        ({"illegal": "ignore"}, "illegal must be one of penalise, raise"),
        ({"penalty": float("nan")}, "penalty must be a finite number"),
        ({"max_illegal": 0}, "max_illegal must be a whole number from 1"),
        ({"render_mode": "human"}, "render_mode must be None or 'ansi'"),
        ({"variant": 3}, "variant must be a variant id"),
        ({"engine": "engine"}, "engine must be a dicecup.Engine"),
    ],
)
def test_bad_arguments_are_one_precise_error(kwargs, message, engine):
    with pytest.raises(DicecupError, match=message):
        DicecupEnv(**{"engine": engine, **kwargs})


def test_unknown_variant_and_options(engine):
    with pytest.raises(UnknownVariant, match="known variants"):
        DicecupEnv("yahtzeee", engine=engine)
    env = DicecupEnv("yahtzee", options={"joker": "free"}, engine=engine)
    assert env.state.variant.options["joker"] == "free"
    with pytest.raises(DicecupError, match="players must be a whole number from 1 to 16"):
        DicecupAECEnv("yahtzee", players=0, engine=engine)


def test_a_variant_of_many_rounds_plays_one_game_per_episode(engine):
    env = DicecupAECEnv("russian-simple", players=3, engine=engine)
    env.reset(seed=0)
    assert engine.variant("russian-simple").match.rounds_for(3) == 13 and env.game.rounds == 1


# ---------------------------------------------------------------------- the optional extra


def run_python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)


def test_dicecup_works_without_the_extra_and_dicecup_rl_says_how_to_get_it():
    hide = "import sys; sys.modules['gymnasium'] = None; sys.modules['pettingzoo'] = None\n"
    ok = run_python(
        hide
        + "import dicecup\nfrom dicecup import Engine, GameState\n"
        + "s = GameState.new(Engine(entry_points=False).variant('yahtzee'), 1)\n"
        + "assert not any(m.startswith('dicecup.rl') for m in sys.modules)\nprint('ok')"
    )
    assert ok.returncode == 0 and ok.stdout == "ok\n", ok.stderr
    missing = run_python(hide + "try:\n    import dicecup.rl\nexcept ImportError as e:\n    print(type(e).__name__, e)")
    assert missing.stdout.strip() == (
        "MissingExtra dicecup.rl needs gymnasium and pettingzoo, which are not installed; "
        "install the rl extra: .venv/bin/pip install -e '.[rl]' in dicecup's checkout"
    )


def test_render_ansi_shows_the_dice_and_the_card(engine):
    env = DicecupEnv("yahtzee", engine=engine, render_mode="ansi")
    env.reset(seed=4)
    text = env.render()
    assert text.startswith("Yahtzee: P1, total 0\n")
    assert f"dice {' '.join(map(str, env.state.dice))}, 2 rolls left" in text
    assert DicecupEnv("yahtzee", engine=engine).render() is None


# ---------------------------------------------------------------------- the example


@pytest.mark.slow
def test_the_training_example_runs_and_reports():
    proc = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "rl" / "train.py"), "--minutes", "0.05", "--games", "20"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "training on yahtzee for 0.05 min with 2 workers"
    assert "mean score over 20 games of yahtzee" in lines
    means = {line.split()[0]: float(line.split()[1]) for line in lines if line.startswith(("agent ", "bot:"))}
    assert list(means) == ["agent", "bot:greedy", "bot:optimal"]
    assert all(0 <= m <= 1575 for m in means.values())
    assert means["bot:optimal"] > means["agent"]  # three seconds of training are far from the optimum


def test_the_training_example_refuses_bad_numbers():
    proc = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "rl" / "train.py"), "--minutes", "-1"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2 and proc.stderr.startswith("error: --minutes must be >= 0")


# ---------------------------------------------------------------------- misuse, fuzzed


WRONG_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.integers(min_value=10**300, max_value=10**400),
    st.floats(allow_nan=True),
    st.text(max_size=300),
    st.lists(st.integers(), max_size=5),
    st.builds(lambda n: np.array(n), st.integers(min_value=-5, max_value=60)),
    st.builds(lambda n: np.array([n]), st.integers(min_value=0, max_value=60)),
    st.just(object()),
)
GYM_CALLS = st.lists(
    st.one_of(
        st.tuples(st.just("reset"), st.one_of(st.none(), st.integers(min_value=0, max_value=2**32), WRONG_VALUES)),
        st.tuples(st.just("reset_options"), WRONG_VALUES),
        st.tuples(st.just("step"), st.one_of(st.integers(min_value=-3, max_value=60), WRONG_VALUES)),
        st.tuples(st.just("step_legal"), st.none()),
        st.tuples(st.just("finish"), st.none()),
        st.tuples(st.just("mask"), st.none()),
        st.tuples(st.just("render"), st.none()),
    ),
    max_size=25,
)
AEC_CALLS = st.lists(
    st.one_of(
        st.tuples(st.just("reset"), st.one_of(st.none(), st.integers(min_value=0, max_value=2**32), WRONG_VALUES)),
        st.tuples(st.just("step"), st.one_of(st.integers(min_value=-3, max_value=60), WRONG_VALUES)),
        st.tuples(st.just("step_legal"), st.none()),
        st.tuples(st.just("finish"), st.none()),
        st.tuples(st.just("observe"), st.one_of(st.sampled_from(["player_0", "player_1"]), WRONG_VALUES)),
        st.tuples(st.just("spaces"), st.one_of(st.sampled_from(["player_0", "player_1"]), WRONG_VALUES)),
        st.tuples(st.just("last"), st.none()),
        st.tuples(st.just("render"), st.none()),
    ),
    max_size=25,
)


def _typed(call, *args, **kwargs):
    """Run one call: it answers, or raises one EnvUsageError (a DicecupError) that says what to do."""
    from dicecup.rl import EnvUsageError

    try:
        return call(*args, **kwargs)
    except EnvUsageError as exc:
        text = str(exc)
        assert text and "\n" not in text and len(text) < 300, text
        return None


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(calls=GYM_CALLS, illegal=st.sampled_from(["penalise", "raise"]))
def test_gymnasium_misuse_is_always_one_typed_error(engine, calls, illegal):
    env = DicecupEnv("yacht", engine=engine, illegal=illegal, render_mode="ansi")
    for name, value in calls:
        if name == "reset":
            _typed(env.reset, seed=value)
        elif name == "reset_options":
            _typed(env.reset, options=value)
        elif name == "step":
            _typed(env.step, value)
        elif name in ("step_legal", "finish"):
            for _ in range(1 if name == "step_legal" else 200):  # finish: the game to its end
                mask = _typed(env.action_masks)
                if mask is None or not mask.any():
                    break
                _typed(env.step, int(np.flatnonzero(mask)[-1]))
        elif name == "mask":
            _typed(env.action_masks)
        else:
            _typed(env.render)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(calls=AEC_CALLS)
def test_pettingzoo_misuse_is_always_one_typed_error(engine, calls):
    env = DicecupAECEnv("yacht", players=2, engine=engine, render_mode="ansi")
    for name, value in calls:
        if name == "reset":
            _typed(env.reset, seed=value)
        elif name == "step":
            _typed(env.step, value)
        elif name in ("step_legal", "finish"):
            for _ in range(1 if name == "step_legal" else 400):  # finish: the game to its end, then past it
                got = _typed(env.last)
                if got is None:
                    break
                mask = got[0]["action_mask"]
                _typed(env.step, None if got[2] or got[3] else int(np.flatnonzero(mask)[-1]))
        elif name == "observe":
            _typed(env.observe, value)
        elif name == "spaces":
            _typed(env.action_space, value)
            _typed(env.observation_space, value)
        elif name == "last":
            _typed(env.last)
        else:
            _typed(env.render)


def test_the_reported_misuses_name_what_to_do(engine):
    from dicecup.rl import EnvUsageError, IllegalStep

    env = DicecupEnv("yacht", engine=engine)
    with pytest.raises(EnvUsageError, match=r"step\(\) before reset\(\): call reset\(\) first"):
        env.step(0)
    aec = DicecupAECEnv("yacht", players=2, engine=engine)
    with pytest.raises(EnvUsageError, match=r"step\(\) before reset\(\)"):
        aec.step(0)
    aec.reset(seed=1)
    with pytest.raises(EnvUsageError, match="no agent 'nobody' here; the agents are player_0, player_1"):
        aec.observe("nobody")
    with pytest.raises(IllegalStep, match="outside the action space") as exc:
        aec.step(10**400)
    assert isinstance(exc.value, IllegalAction) and "a 401-digit number" in str(exc.value)
    with pytest.raises(EnvUsageError, match="takes None or a whole number"):
        env.reset(seed=-1)
