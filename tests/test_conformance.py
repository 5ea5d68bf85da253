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


@pytest.mark.parametrize(
    ("plugin", "variant_id", "words"),
    [
        (Blocker(), "tiny-blocker", "no legal box"),
        (Greedy(), "tiny-greedy", "sum to 2, not 0"),
        (Fickle(), "tiny-fickle", "not filled as score_preview said"),
    ],
)
def test_broken_plugins_fail_the_check(plugin, variant_id, words):
    engine = Engine(plugins=[plugin], entry_points=False)
    with pytest.raises(ConformanceError, match=words):
        check_variant(engine, variant_id, games=10, seed=0, players=(2,))


def test_a_sound_plugin_variant_passes(engine):
    report = check_variant(engine, "yacht", games=3, seed=9, players=(1, 3))
    assert (report.games, report.rounds, report.turns) == (3, 3, 12 * (1 + 3 + 1))
    assert 0 <= report.lowest_total <= report.highest_total
