"""An explanation's parts (aims, alternatives, what stays open) and its words, in the language spoken (`locales`):
every number in the text is one of those parts' figures, formatted by the functions here (`points`, `percent`) and
nothing else."""

from __future__ import annotations

from collections.abc import Sequence

from attrs import frozen

from ..game.actions import Keep, Score
from ..locales import N_, _, ngettext

__all__ = [
    "HEADLINES", "Aim", "Alternative", "Condition", "Outlook", "Stage", "explain_text", "percent", "points",
]  # fmt: skip


@frozen
class Aim:
    """A row a move plays for: its chance of being made this turn (1 or 0 for a box scored now), and for a box
    scored now the points it adds."""

    box: str  # the box scored now, or the row a keep plays for
    name: str
    chance: float
    points: int | None = None


@frozen
class Alternative:
    """A move, its expected final score, and what it gives up against the best (0 for the best)."""

    move: Keep | Score
    words: str  # the move in a few words, in the language spoken
    value: float
    loss: float
    points: int | None = None  # a box's points now


@frozen
class Condition:
    """A box whose score later awards depend on (a declared state fact): `state` open, kept or lost."""

    box: str
    name: str
    value: int
    state: str


@frozen
class Stage:
    """The open stage of a card whose boxes come in stages: its number, its boxes still open, later stages."""

    number: int
    open: int
    later: bool


@frozen
class Outlook:
    """What the card keeps open once the best move is made: open boxes, the rules' and bonuses' progress
    (`Variant.progress`: id, short cell, line), the boxes awards depend on, the open stage."""

    open_boxes: int
    progress: tuple[tuple[str, str, str], ...]
    conditions: tuple[Condition, ...]
    stage: Stage | None


#: The sentence each label opens with.
HEADLINES = {
    "clear": N_("Clear choice: {move} (expected final score {value})."),
    "solid": N_("Solid choice: {move} (expected final score {value})."),
    "close": N_("Close call: {move} (expected final score {value})."),
    "toss-up": N_("Toss-up: {move} (expected final score {value})."),
}

#: How a box that later awards depend on stands, by `Condition.state`.
CONDITIONS = {
    "open": N_("{box} = {value} still possible"),
    "kept": N_("{box} = {value} in place"),
    "lost": N_("{box} = {value} no longer possible"),
}


def points(value: float) -> str:
    """Expected points as the text shows them: two decimals."""
    return f"{value:.2f}"


def percent(chance: float) -> str:
    """A chance as the text shows it: a percentage with one decimal."""
    return f"{100 * chance:.1f}%"


def explain_text(
    label: str,
    best: Alternative,
    aims: Sequence[Aim],
    alternatives: Sequence[Alternative],
    outlook: Outlook,
    rolls_left: int,
) -> str:
    """The explanation's sentences: the verdict, what the move aims at, what the others give up, what stays open."""
    parts = [_(HEADLINES[label]).format(move=best.words, value=points(best.value))]
    parts.append(_aims_text(best, aims, rolls_left))
    if alternatives:
        given = ", ".join(_given_up(a) for a in alternatives)
        parts.append(_("Next best, with the expected final points each gives up: {moves}.").format(moves=given))
    else:
        parts.append(_("It is the only move."))
    parts.append(_outlook_text(outlook))
    return " ".join(p for p in parts if p)


def _aims_text(best: Alternative, aims: Sequence[Aim], rolls_left: int) -> str:
    """What the best move plays for: the box it scores now, or the rows a keep makes likely this turn."""
    if not aims:
        return ""
    if best.points is not None:
        aim = aims[0]
        n = best.points
        if aim.chance >= 1.0:
            said = ngettext("It scores {points} point in {box} now.", "It scores {points} points in {box} now.", n)
        else:
            said = ngettext(
                "It gives up {box} for {points} point: the dice do not make it.",
                "It gives up {box} for {points} points: the dice do not make it.",
                n,
            )
        return said.format(points=n, box=aim.name)
    listed = ", ".join(f"{a.name} {percent(a.chance)}" for a in aims)
    said = ngettext(
        "With {rolls} roll left it plays for: {aims}.",
        "With {rolls} rolls left it plays for: {aims}.",
        rolls_left,
    )
    return said.format(rolls=rolls_left, aims=listed)


def _given_up(a: Alternative) -> str:
    scored = f" ({a.points})" if a.points is not None else ""
    return f"{a.words}{scored} -{points(a.loss)}"


def _outlook_text(outlook: Outlook) -> str:
    """What stays open: the rules' and bonuses' progress, the boxes awards depend on, the boxes left."""
    if not outlook.open_boxes:
        return _("The card is full after it.")
    items = [line for _id, _cell, line in outlook.progress if line]
    items += [_condition(c) for c in outlook.conditions]
    if outlook.stage is not None and not outlook.progress:  # (a rule's progress says its stages itself)
        s = outlook.stage
        items.append(
            ngettext("stage {number}: {n} box open", "stage {number}: {n} boxes open", s.open).format(
                number=s.number, n=s.open
            )
        )
    n = outlook.open_boxes
    left = ngettext("{n} box to go", "{n} boxes to go", n).format(n=n)
    return _("Still open: {items}.").format(items="; ".join([*items, left]))


def _condition(c: Condition) -> str:
    return _(CONDITIONS[c.state]).format(box=c.name, value=c.value)
