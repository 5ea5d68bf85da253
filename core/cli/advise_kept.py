"""`dicecup advise --json` answered from the card's kept advice table (`kept_advice`), and that table learned.

A question about a card advised on before (the same variant, options and `--card`) is answered by a look-up
in the card's table: no engine, no solver, no numpy. The first question about a card is answered by the
engine and the solver (`advising`), which then learns the card's whole table (every roll, every number of
rolls left, ranked by the same advisor) and keeps it. Only the plain question is kept and answered so: the
mean, the exact table, no opponents, nothing banked, the JSON answer, English (a language's catalog loads
only where one is asked for: the engine answers then), no plugin but the built-in ones (no `--plugin` file).
Both paths build the answer with `advice_json` and `move_json`, so they print the same bytes.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from ..kept_advice import CardAdvice, KeptAdvice, Question, read_dice
from .common import echo, language, plugin_files, warn

if TYPE_CHECKING:
    from ..language.model import Card, Variant
    from ..rankings import Advisor
    from ..solver.advice import Option

__all__ = ["MAX_LEARNED", "MAX_LEARNING_SECONDS", "advice_json", "answer_kept", "keep_card", "move_json", "question_of"]

#: decisions of a card's turn (rolls x rolls left) past which a card's table is not learned, and the time its
#: learning may take (where the advisor scores rolls slowly): past either, a table would cost the card's first
#: question more than its later ones save
MAX_LEARNED = 4000
MAX_LEARNING_SECONDS = 1.0
_BATCH = 64  # rolls ranked at a time (the time the learning may take is looked at between batches)
#: what `answer_kept` reads of the command's arguments; any other must be at its default
_READ = frozenset({"variant", "dice", "rolls_left", "card", "option", "as_json", "quiet", "top", "strategy"})


def question_of(variant: str, option: list[str] | None, card: str | None, strategy: str) -> Question:
    """What names the card's table: the variant as given, the `--option` flags in order, the `--card` text,
    the strategy asked for (`auto` may pick another than `optimal` does)."""
    return Question(variant, tuple(option or ()), (card or "").strip(), strategy)


def answer_kept(asked: dict[str, Any], defaults: dict[str, Any]) -> bool:
    """Print the answer to `advise` called with `asked` (its arguments by name) from the card's kept table and
    return True; False (nothing said but a warning about a bad file) where the question is not a plain one
    (`defaults`: each argument's default) or its card has no table yet: the engine answers it then."""
    from ..locales import DEFAULT

    plain = all(asked[name] == value for name, value in defaults.items() if name not in _READ)
    if not plain or not asked["as_json"] or asked["strategy"] not in ("auto", "optimal"):
        return False
    if language() != DEFAULT or plugin_files():  # (the engine answers: in that language, with those plugins)
        return False
    start = time.perf_counter()
    table = KeptAdvice(warn).get(question_of(asked["variant"], asked["option"], asked["card"], asked["strategy"]))
    if table is None:
        return False
    head = table.head
    dice = read_dice(asked["dice"], head["dice"], head["faces"])
    left = head["most"] if asked["rolls_left"] is None else asked["rolls_left"]
    if dice is None or type(left) is not int or not 0 <= left <= head["most"]:
        return False  # (the engine says what is wrong)
    try:
        moves = table.moves(tuple(sorted(dice)), left)
    except (LookupError, TypeError, ValueError):
        return False
    goal = head["objectives"][0]
    shown = [
        move_json(_what(m.action, m.points), head["value_key"], [(goal, m.value, n + 1)]) for n, m in enumerate(moves)
    ]
    picks = [(goal, shown[0])] if shown else []
    answer = advice_json(head, dice, left, left == head["most"], shown, picks, time.perf_counter() - start)
    echo(json.dumps(answer))
    return True


def keep_card(
    question: Question, variant: Variant, card: Card, advisor: Advisor, head: dict[str, Any], most: int
) -> None:
    """Learn and keep the card's advice table: `advisor`'s ranked options of every roll with 0..`most` rolls
    left (`most` the first roll's), as `advise` ranks them; `head` what an answer says besides its moves.
    Nothing is kept where the advisor refuses a roll, or the table would be too large or slow to learn."""
    rolls = [r.dice for r in variant.all_rolls()]
    if len(rolls) * (most + 1) > MAX_LEARNED:
        return
    from ..errors import DicecupError
    from ..game.actions import Score

    number: dict[str | tuple[int, ...], int] = {}  # keyed by what a table keeps (a box's id, the kept dice):
    actions: list[str | tuple[int, ...]] = []  # (their hashes are the built-in ones, the actions' are not)
    turns = []
    stop = time.perf_counter() + MAX_LEARNING_SECONDS
    ranks = _ranker(advisor)
    try:
        for left in range(most + 1):
            table = {}
            for start in range(0, len(rolls), _BATCH):
                if time.perf_counter() > stop:
                    return
                batch = rolls[start : start + _BATCH]
                for roll, options in zip(batch, ranks(card, batch, left, left == most), strict=True):
                    ids = []
                    for o in options:
                        act = o.action
                        kept = act.box if isinstance(act, Score) else act.dice
                        n = number.get(kept)
                        if n is None:
                            n = number[kept] = len(actions)
                            actions.append(kept)
                        ids.append(n)
                    values, points = tuple(o.value for o in options), tuple(o.points for o in options)
                    table[tuple(roll)] = (tuple(ids), values, points)
            turns.append(table)
    except DicecupError:
        return
    full = {**head, "dice": variant.dice, "faces": variant.faces, "most": most}
    KeptAdvice(warn).put(question, CardAdvice(full, tuple(actions), tuple(turns)))


def _ranker(advisor: Advisor) -> Callable[[Card, Sequence[tuple[int, ...]], int, bool], list[list[Option]]]:
    """How the card's table ranks a batch of rolls at one decision: as `advisor.options` ranks each; a table's
    advisor ranks them with its card's turn scored once (`advise_rolls`: the same options, the same values)."""
    from ..rankings import TableAdvisor

    if isinstance(advisor, TableAdvisor):
        from ..solver.advice import advise_rolls

        values = advisor.values
        return lambda card, rolls, left, first: advise_rolls(values, card, rolls, left, first)
    return lambda card, rolls, left, first: [advisor.options(card, roll, left, first) for roll in rolls]


def _what(action: str | Sequence[int], points: int | None) -> dict[str, Any]:
    """A move's action in JSON: a box to score now (with its points), or the dice to keep."""
    if isinstance(action, str):
        return {"action": "score", "box": action, "points": points}
    return {"action": "keep", "keep": list(action)}


def move_json(what: dict[str, Any], value_key: str, places: list[tuple[str, float, int]]) -> dict[str, Any]:
    """A move in JSON: its action (`what`), the first objective's value under its key (as before several
    objectives), and each objective's (id, value, rank) with whether it is that objective's pick."""
    return {
        **what,
        value_key: places[0][1],
        "best": places[0][2] == 1,
        "ranks": [{"objective": g, "value": value, "rank": rank, "best": rank == 1} for g, value, rank in places],
    }


def advice_json(
    head: dict[str, Any],
    dice: Sequence[int],
    left: int,
    first: bool,
    moves: list[dict[str, Any]],
    picks: list[tuple[str, dict[str, Any]]],
    seconds: float,
) -> dict[str, Any]:
    """`advise --json`: the question (`head`: the variant's id and options, the strategy, the objectives' ids,
    what is banked, the card read, the opponents', the notes), every move with its value and rank under each
    objective, and each objective's pick (its id, its move)."""
    objectives: list[str] = head["objectives"]
    return {
        "variant": head["variant"],
        "options": head["options"],
        "dice": list(dice),
        "strategy": head["strategy"],
        "objective": objectives[0],
        "objectives": objectives,
        "rolls_left": left,
        "banked": head["banked"],
        "first_roll": first,
        "card": dict(head["card"]),
        "opponents": head["opponents"],
        "moves": moves,
        "best": moves[0] if moves else None,
        "picks": [{"objective": g, "move": m} for g, m in picks],
        "seconds": seconds,
        "notes": head["notes"],
    }
