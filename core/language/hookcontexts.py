"""What the per-turn and scoring rule hooks are told: `TurnContext` and `ScoreContext`, and their traced
kinds, which note what a rule reads of them while the rules are learned (`tracing`). The variant's rule
hooks (`rulehooks.RuleHooks`) make them for it."""

from __future__ import annotations

from typing import Any

from attrs import field, frozen

from .card import Card
from .contexts import Situation, SituationFields
from .dice import Roll
from .model import Variant
from .parts import Box
from .tracing import is_tracing, note_first_roll, note_pattern

__all__ = ["ScoreContext", "TurnContext", "score_context", "turn_context"]


@frozen
class TurnContext(SituationFields):
    """Argument of the per-turn rule hooks: the variant, the acting player's card and roll, the situation."""

    variant: Variant
    card: Card
    roll: Roll | None
    first_roll: bool
    situation: Situation = field(factory=Situation.unknown, repr=False)
    _open: tuple[str, ...] | None = field(default=None, init=False, eq=False, repr=False)

    @property
    def open_boxes(self) -> tuple[str, ...]:
        """The card's open boxes, in card order (worked out when first asked, then kept for the hooks of the same
        call: a rule that does not ask reads nothing, and a traced card's tuple notes each read as it is made)."""
        got = self._open
        if got is None:
            got = self.variant.open_boxes(self.card)
            object.__setattr__(self, "_open", got)
        return got


@frozen
class ScoreContext(SituationFields):
    """Argument of the scoring rule hooks: which box, which roll, on which card."""

    variant: Variant
    card: Card
    box: Box
    roll: Roll
    first_roll: bool
    combination: tuple[int, ...] | None
    score: int = 0  # the final box score, set for `dicecup_extra_points`
    situation: Situation = field(factory=Situation.unknown, repr=False)

    @property
    def met(self) -> bool:
        """Whether the roll meets the box's pattern: `combination is not None`, without reading which dice
        form it (a traced call that reads only this holds for every roll with the same declared points)."""
        return object.__getattribute__(self, "combination") is not None


class _TracedScoreContext(ScoreContext):
    """The ScoreContext of a traced `Variant.score`: reading `combination` is noted as reading the declared
    result of box `traced_box` (the dice that form it; what `score` itself read is whether it is met and
    its declared points, "points"), and reading `first_roll` is noted too."""

    __slots__ = ("traced_box",)

    def __getattribute__(self, name: str) -> Any:
        if name == "combination":
            try:
                box_id = object.__getattribute__(self, "traced_box")
            except AttributeError:  # a copy a rule made (attrs.evolve): its own box
                box_id = object.__getattribute__(self, "box").id
            note_pattern("declared", box_id)
        elif name == "first_roll":
            note_first_roll()
        return object.__getattribute__(self, name)


class _TracedTurnContext(TurnContext):
    """The TurnContext of a traced call: reading `first_roll` is noted, so that an answer that did not read
    it holds after the first roll and after later ones alike (the solver asks legality once for both)."""

    __slots__ = ()

    def __getattribute__(self, name: str) -> Any:
        if name == "first_roll":
            note_first_roll()
        return object.__getattribute__(self, name)


def score_context(box_id: str, *args: Any, **kwargs: Any) -> ScoreContext:
    """A ScoreContext for scoring box `box_id`; traced (`_TracedScoreContext`) while reads are traced."""
    if not is_tracing():
        return ScoreContext(*args, **kwargs)
    ctx = _TracedScoreContext(*args, **kwargs)
    object.__setattr__(ctx, "traced_box", box_id)
    return ctx


def turn_context(
    variant: Variant, card: Card, roll: Roll | None, first_roll: bool, situation: Situation
) -> TurnContext:
    """A TurnContext; traced (`_TracedTurnContext`) while reads are traced."""
    kind = _TracedTurnContext if is_tracing() else TurnContext
    return kind(variant, card, roll, first_roll, situation=situation)
