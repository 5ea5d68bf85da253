"""dicecup.testing catches broken plugins: it is a conformance check, not a rubber stamp."""

from __future__ import annotations

from fractions import Fraction

import pytest

from dicecup import Engine, hookimpl
from dicecup.testing import ConformanceError, check_variant

GAME = """\
id: tiny-{rule}
dice: {{count: 2}}
turn: {{rolls: 2}}
boxes:
  a: {{pattern: always, score: total}}
  b: {{pattern: {{kind: of_a_kind, n: 2}}, score: 10}}
rules:
  {rule}: {{}}
"""


class Blocker:
    """Forbids every box whenever a 6 shows: play gets stuck."""

    @hookimpl
    def dicecup_register_rules(self, register):
        register("blocker", {}, "Broken on purpose.")

    @hookimpl
    def dicecup_register_variants(self, register):
        register(text=GAME.format(rule="blocker"), source="tiny-blocker.yaml")

    @hookimpl
    def dicecup_legal_boxes(self, ctx):
        return [] if 6 in ctx.roll.dice else None


class Greedy:
    """A settlement that creates money: payments do not sum to zero."""

    @hookimpl
    def dicecup_register_rules(self, register):
        register("greedy", {}, "Broken on purpose.")

    @hookimpl
    def dicecup_register_variants(self, register):
        register(text=GAME.format(rule="greedy"), source="tiny-greedy.yaml")

    @hookimpl
    def dicecup_settle(self, variant, totals):
        return {p: Fraction(1) for p in totals}


class Fickle:
    """Scores that change between the preview and the real fill."""

    def __init__(self) -> None:
        self.n = 0

    @hookimpl
    def dicecup_register_rules(self, register):
        register("fickle", {}, "Broken on purpose.")

    @hookimpl
    def dicecup_register_variants(self, register):
        register(text=GAME.format(rule="fickle"), source="tiny-fickle.yaml")

    @hookimpl
    def dicecup_adjust_score(self, ctx, score):
        self.n += 1
        return score + self.n


class Peeker:
    """Reads the card behind the tracing's back (the private dict): breaks the hook contract."""

    @hookimpl
    def dicecup_register_rules(self, register):
        register("peeker", {}, "Broken on purpose.")

    @hookimpl
    def dicecup_register_variants(self, register):
        register(text=GAME.format(rule="peeker"), source="tiny-peeker.yaml")

    @hookimpl
    def dicecup_adjust_score(self, ctx, score):
        hidden = getattr(ctx.card.scores, "_d", {})
        return score + sum(hidden.values()) % 3


class Moody:
    """Answers differently each time it is asked the same question (impure)."""

    def __init__(self) -> None:
        self.calls = 0

    @hookimpl
    def dicecup_register_rules(self, register):
        register("moody", {}, "Broken on purpose.")

    @hookimpl
    def dicecup_register_variants(self, register):
        register(text=GAME.format(rule="moody"), source="tiny-moody.yaml")

    @hookimpl
    def dicecup_legal_boxes(self, ctx):
        self.calls += 1
        return list(ctx.open_boxes)[: 1 + self.calls % 2]


@pytest.mark.parametrize(
    ("plugin", "variant_id", "words"),
    [
        (Peeker(), "tiny-peeker", "changed with box values or game facts it was not seen to read"),
        (Moody(), "tiny-moody", "different answers to the same question|are the rules pure"),
        (Blocker(), "tiny-blocker", "no legal"),
        (Greedy(), "tiny-greedy", "sum to 2, not 0"),
        (Fickle(), "tiny-fickle", "not filled as score_preview said"),
    ],
)
def test_broken_plugins_fail_the_check(plugin, variant_id, words):
    engine = Engine(plugins=[plugin], entry_points=False)
    with pytest.raises(ConformanceError, match=words):
        check_variant(engine, variant_id, games=10, seed=0, players=(2,), contract_every=0.5)


def test_a_sound_plugin_variant_passes(engine):
    report = check_variant(engine, "yacht", games=3, seed=9, players=(1, 3))
    assert (report.games, report.rounds, report.turns) == (3, 3, 12 * (1 + 3 + 1))
    assert 0 <= report.lowest_total <= report.highest_total
