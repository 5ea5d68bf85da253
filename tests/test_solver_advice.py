"""The advisor's quick paths: a new card scored from the tables and folded by the compiled turn recursion
gives the engine's advice."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from dicecup.errors import DicecupError
from dicecup.numeric import card as card_kernel
from dicecup.numeric import compiled
from dicecup.numeric.reference import fold
from dicecup.solver import advice, advice_kernel, advice_scoring, advisor_memory, solve

sys.path.insert(0, str(Path(__file__).parent))
from _solver_helpers import decision_states, tiny_variant


@pytest.mark.parametrize("name", ["threshold", "served", "flags", "banked", "banked-served", "eight-faces"])
def test_advice_on_new_cards_is_the_engine_scored_advice(tmp_path, monkeypatch, name):
    """Every decision asked on a card never seen: scored by the engine and folded in numpy (what one
    `dicecup advise` without the solve's complete tables does), from the learned tables and the compiled fold
    (a process past its first cards), or from the solve's complete tables (`card_tables`), gives the same
    options in the same order, the same points, values to 1e-9."""
    v = tiny_variant(tmp_path, name)
    solution = solve(v)
    states = decision_states(v, 60, seed=11)
    answers = []
    complete = advice_kernel._card_tables
    for after, tables in ((10**9, None), (1, None), (10**9, complete)):  # the engine, learned, complete tables
        monkeypatch.setattr(advice_scoring, "TABLES_AFTER", after)
        monkeypatch.setattr(advice_kernel, "_card_tables", tables or (lambda solution: None))
        advisor_memory.forget(v)  # nothing learned, no tables made
        got = []
        for state in states:
            advisor_memory.memory_of(v).later.clear()  # each card new
            got.append(advice.advise_state(solution, state))
        answers.append(got)
        if tables is not None and compiled.MODE == "aot":  # (else the numpy path, or numba's once it compiles)
            made = advisor_memory.memory_of(v).card_tables
            assert made is not None and made[0] is not None  # the complete tables did answer
    engine = answers[0]
    for other in answers[1:]:
        for slow, fast in zip(engine, other, strict=True):
            assert [(o.label, o.points, o.best) for o in slow] == [(o.label, o.points, o.best) for o in fast]
            assert np.allclose([o.value for o in slow], [o.value for o in fast], rtol=0, atol=1e-9)


@pytest.mark.skipif(not card_kernel.AVAILABLE, reason="the card kernel does not run compiled here")
@pytest.mark.parametrize(
    ("name", "precision"),
    [
        *((name, "float64") for name in ("threshold", "served", "flags", "banked", "banked-three", "sym-chance")),
        *((name, "float64") for name in ("sym-upper", "two-columns")),
        ("threshold", "float32"),
        ("banked", "float32"),
    ],
)
def test_the_card_kernel_gives_the_numpy_tables_advice_bit_for_bit(tmp_path, monkeypatch, name, precision):
    """A card's turn in one compiled call (`numeric.card`) against the same tables scored and folded in numpy:
    the same options with equal bits, on new cards and on the later decisions of a turn (read from the
    fold of its first), first rolls and banked rolls included, from float64 and float32 tables."""
    v = tiny_variant(tmp_path, name)
    solution = solve(v, precision=precision)
    assert solution.values.dtype == np.dtype(precision)
    monkeypatch.setattr(advice_scoring, "TABLES_AFTER", 1)
    states = decision_states(v, 50, seed=7)
    used = []
    real = advice_kernel._card_turn
    monkeypatch.setattr(advice_kernel, "_card_turn", lambda *a: used.append(1) or real(*a))
    answers = []
    for fast in (True, False):
        monkeypatch.setattr(card_kernel, "AVAILABLE", fast)
        got = []
        for state in states:
            advisor_memory.memory_of(v).later.clear()
            most = state.rolls_left
            for left in range(most, -1, -1):  # this decision, then the turn's later ones on the same card
                first = state.first_roll and left == most
                got.append(advice.advise(solution, state.card, state.dice, left, first))
        answers.append(got)
    assert used, "the card kernel was not asked"
    assert answers[0] == answers[1]  # named tuples: labels, points, order, and values to the last bit


@pytest.mark.skipif(not compiled.AVAILABLE, reason="no compiled kernels: numba is not installed")
@pytest.mark.parametrize(("dice", "faces"), [(5, 6), (3, 3), (2, 8)])
def test_compiled_fold_gives_the_numpy_folds_keeps_exactly(dice, faces):
    """The compiled turn recursion and its numpy twin sum the same terms in the same order: equal bits."""
    from dicecup.numeric.dice import DiceGraph

    class Table:  # what `fold_keeps` reads of a table of values
        graph = DiceGraph(dice, faces)
        variant = None

    rng = np.random.default_rng(5)
    n_keeps = int(Table.graph.arrays.levels[dice])
    for left in (1, 2, 3):
        rows = [rng.normal(50, 20, (Table.graph.n_rolls, 1)) for _ in range(left + 1)]
        want = fold(Table.graph, rows)[-1][1]
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(advice_scoring, "use_compiled", lambda v: True)
            got = advice_scoring.fold_keeps(Table, rows)  # type: ignore[arg-type]
        assert want is not None and got.shape == (n_keeps, 1)
        assert np.array_equal(got, want[:n_keeps])


def test_one_roll_scored_alone_is_its_row_of_the_whole_table(tmp_path):
    """`_later_from_tables(only=r)`: roll r's row of the whole table, every other roll left illegal."""
    v = tiny_variant(tmp_path, "served")
    solution = solve(v)
    for state in decision_states(v, 20, seed=3):
        for first in (False, True):
            whole = advice_scoring._later_from_tables(solution, state.card, 0, first=first)
            for r in (0, solution.graph.n_rolls // 2, solution.graph.n_rolls - 1):
                one = advice_scoring._later_from_tables(solution, state.card, 0, first=first, only=r)
                assert np.array_equal(one.legal[r], whole.legal[r])
                assert np.array_equal(one.points[r], whole.points[r])
                assert np.array_equal(one.after[r], whole.after[r])
                assert one.legal.sum() == whole.legal[r].sum()


@pytest.mark.parametrize(
    ("scores", "words"),
    [
        ({"ones": "3"}, "box 'ones' holds '3': a score is a whole number"),
        ({"ones": 2.5}, "box 'ones' holds 2.5"),
        ({"ones": None}, "box 'ones' holds None"),
        ({"ones": True}, "box 'ones' holds True"),
        ({"nonesuch": 1}, "the card fills box 'nonesuch', which .* does not have"),
    ],
)
def test_a_card_that_does_not_fit_the_variant_is_one_card_error(tmp_path, scores, words):
    """Wrong types through the API: a score that is not a whole number, or a box the variant lacks, is a
    CardError saying which box, even right after the same variant advised a good card (its check is kept for
    the same card object only)."""
    from dicecup import Card, CardError

    v = tiny_variant(tmp_path, "flags")
    solution = solve(v)
    good = Card({v.box_ids[0]: 1})
    assert advice.advise(solution, good, (1,) * v.dice, 0)
    bad = Card({(v.box_ids[0] if b == "ones" else b): s for b, s in scores.items()})
    with pytest.raises(CardError, match=words.replace("'ones'", repr(v.box_ids[0]))):
        advice.advise(solution, bad, (1,) * v.dice, 0)
    with pytest.raises(CardError, match="expected a dicecup Card, got dict"):
        advice.advise(solution, dict(scores), (1,) * v.dice, 0)


def test_every_entry_that_takes_a_card_refuses_one_that_does_not_fit(tmp_path):
    """The values, the exact distribution and the target tables check a card as the advisor does: one
    CardError naming the box (not a KeyError, an AttributeError, or a float score read silently)."""
    from dicecup import Card, CardError
    from dicecup.simulate.distribution import AVAILABLE as dist_available
    from dicecup.simulate.distribution import distribution
    from dicecup.solver import target

    v = tiny_variant(tmp_path, "flags")
    solution = solve(v)
    first = v.box_ids[0]
    good = Card({first: 1})
    entries = {
        "value": solution.value,
        "future": solution.future,
        "turn_start_value": lambda c: advice.turn_start_value(solution, c),
    }
    if dist_available:
        entries["distribution"] = lambda c: distribution(solution, card=c)
    if target.AVAILABLE:
        tables = target.solve_target(solution)
        entries["target remaining"] = tables.remaining
        entries["target_options"] = lambda c: target.target_options(tables, c, (1,) * v.dice, 0, 5)
    for entry in entries.values():
        entry(good)  # the good card answers
        for bad, words in (
            (Card({"nonesuch": 1}), "the card fills box 'nonesuch', which .* does not have"),
            (Card({first: 2.5}), f"box '{first}' holds 2.5: a score is a whole number"),
            ({first: 1}, "expected a dicecup Card, got dict"),
        ):
            with pytest.raises(CardError, match=words):
                entry(bad)


@pytest.mark.parametrize("name", ["threshold", "banked"])
def test_every_roll_advised_at_once_is_each_roll_advised_alone(tmp_path, monkeypatch, name):
    """`advise_rolls` (a card's whole table at one decision, its turn scored once) gives each roll the options
    `advise` gives it asked alone, in the same order with the same values bit for bit: by the card kernel and
    by the engine's scores folded in numpy."""
    v = tiny_variant(tmp_path, name)
    solution = solve(v)
    rolls = [r.dice for r in v.all_rolls()]
    complete = advice_kernel._card_tables
    for tables in (complete, None):
        monkeypatch.setattr(advice_kernel, "_card_tables", tables or (lambda solution: None))
        monkeypatch.setattr(advice_scoring, "TABLES_AFTER", 10**9)  # (no tables learned from the engine's scores)
        for state in decision_states(v, 12, seed=5):
            advisor_memory.forget(v)
            together = advice.advise_rolls(solution, state.card, rolls, state.rolls_left, state.first_roll)
            advisor_memory.forget(v)
            alone = [advice.advise(solution, state.card, r, state.rolls_left, state.first_roll) for r in rolls]
            fast = advice_kernel.card_turn_cached(solution, state.card, state.rolls_left, None)
            # the card kernel serves where it is built ahead of time; numba would compile it only after
            # TABLES_AFTER cards, and numpy's kernels alone take the engine's path
            served = tables is not None and compiled.MODE == "aot"
            assert (fast is not None) == served  # the kernel's path, then the engine's
            assert [[tuple(o) for o in opts] for opts in together] == [[tuple(o) for o in opts] for opts in alone]
    with pytest.raises(DicecupError, match="rolls left must be"):
        advice.advise_rolls(solution, state.card, rolls, 9)
