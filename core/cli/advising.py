"""CLI command `advise`: every option of a decision ranked by the exact solver's values, or by other objectives
side by side.

Typer-free (`cli.quick`): a plain `dicecup advise` command line runs without importing typer, click or pydantic;
`cli.solve_app` adds the command to the typer app, for its help, completion and errors. A question about a card
asked before is answered from its kept advice table (`advise_kept`) without the engine; otherwise the engine,
the solver (numpy) and rich are imported when the command runs, rich only to draw a table.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any, NamedTuple

from ..errors import DicecupError, shown
from ..locales import N_, _, ngettext, said
from . import imports_paused
from .advise_kept import advice_json, answer_kept, keep_card, move_json, question_of
from .common import OPTION, VARIANT, check_variant, echo, language, load_variant, move_text, note_line, warn
from .quick import Opt, params

if TYPE_CHECKING:
    from ..language.model import Card, Variant
    from ..numeric.objective import Objective

__all__ = [
    "JSON_TEXT",
    "MAX_STATES",
    "QUIET_BAR",
    "advise_cmd",
    "make_advisors",
    "parse_card",
    "read_objectives",
    "value_fields",
    "warn",
]

JSON_TEXT = Opt("--json", help=N_("Print JSON instead of text."))
QUIET_BAR = Opt("--quiet", "-q", help=N_("No progress bar."))
MAX_STATES = Opt("--max-states", min=1, help=N_("Refuse variants with more states than this (default 40,000,000)."))
OBJECTIVES = Opt(
    "--objective",
    help=N_(
        "What the moves are ranked by: mean (the expected final score, the default); risk:THETA (the "
        "exponential utility E[exp(THETA x score)] as its certainty equivalent: THETA > 0 bold, < 0 careful); "
        "target:T (the chance of a final score of at least T); win (the chance of finishing first against the "
        "--opponent cards). "
        "Several side by side: repeat the flag or separate them by commas (--objective mean,risk:-0.03); "
        "the first orders the rows."
    ),
)
STRATEGIES = ("auto", "optimal", "strong")
#: --variant, checked when the command runs rather than as it is read: a kept answer needs no engine to check it
ADVISE_VARIANT = Opt(*VARIANT.names, **{k: v for k, v in VARIANT.settings.items() if k != "callback"})


def value_fields(objective: Objective, value: float) -> dict[str, Any]:
    """A value in JSON under its objective's key ("expected_score" for the mean, "certainty_equivalent" for
    a risk objective)."""
    return {objective.value_key: value}


def advise_cmd(
    variant: Annotated[str, ADVISE_VARIANT],
    dice: Annotated[str, Opt("--dice", "-d", help=N_("The dice on the table, e.g. 11256 or 1,1,2,5,6."))],
    rolls_left: Annotated[
        int | None,
        Opt(
            "--rolls-left",
            "-r",
            help=N_("Rolls still allowed this turn, banked ones included (default: after the first roll)."),
        ),
    ] = None,
    card: Annotated[
        str | None, Opt("--card", "-c", help=N_('Filled boxes with their scores, e.g. "ones=3,yahtzee=50".'))
    ] = None,
    banked: Annotated[
        int,
        Opt("--banked", "-b", help=N_("Rolls this turn began with from the bank (variants that bank unused rolls).")),
    ] = 0,
    option: Annotated[list[str] | None, OPTION] = None,
    as_json: Annotated[bool, JSON_TEXT] = False,
    top: Annotated[int, Opt("--top", min=1, help=N_("Show this many options (text output; JSON lists all)."))] = 12,
    max_states: Annotated[int | None, MAX_STATES] = None,
    quiet: Annotated[bool, QUIET_BAR] = False,
    strategy: Annotated[
        str,
        Opt(
            "--strategy",
            "-s",
            help=N_(
                "optimal (the exact solver's table), strong (the card's parts solved exactly: for games "
                "beyond the solver) or auto (optimal where the solver takes the variant, else strong)."
            ),
        ),
    ] = "auto",
    objective: Annotated[list[str] | None, OBJECTIVES] = None,
    opponent: Annotated[
        list[str] | None,
        Opt(
            "--opponent",
            help=N_(
                "An opponent's card, as --card (repeat per opponent; '' an empty card): what --objective win "
                "ranks against."
            ),
        ),
    ] = None,
    explain: Annotated[
        bool,
        Opt(
            "--explain",
            help=N_(
                "Say why the best move is best: what it aims at, what the next moves give up, what stays open, "
                "and how clear the choice is (by expected final score)."
            ),
        ),
    ] = False,
) -> None:
    """Rank every option (each distinct keep, each box to score now) by expected final score, or by other
    objectives side by side (--objective)."""
    if as_json and answer_kept(locals(), {p.name: p.default for p in params(advise_cmd)}):
        return  # a card advised on before: its kept table answers (`advise_kept`)
    check_variant(variant)
    with imports_paused():  # what advising needs, numpy and the solver included (see `cli`)
        from ..rankings import side_by_side
    asked = _question(variant, dice, rolls_left, card, banked, option, strategy, objective, opponent, explain)
    advisors = make_advisors(asked.variant, asked.goals, asked.strategy, max_states, quiet or as_json, asked.opponents)
    start = time.perf_counter()
    first = asked.left == asked.most
    rankings = [a.options(asked.card, asked.dice, asked.left, first) for a in advisors]
    seconds = time.perf_counter() - start
    if asked.strategy == "optimal":
        from ..solver.advice_tables import keep_tables

        keep_tables(asked.variant, warn)
    told = _explained(asked, advisors[0], rankings[0], first) if explain else None
    _say(asked, side_by_side(rankings), first, seconds, told, top if not as_json else None)
    if _keepable(asked):  # the card's whole table, for the next question about it
        keep_card(question_of(variant, option, card, strategy), asked.variant, asked.card, advisors[0],
                  _head(asked), asked.most)  # fmt: skip


def _say(asked: Question, rows: list[Any], first: bool, seconds: float, told: dict[str, Any] | None,
         top: int | None) -> None:  # fmt: skip
    """The advice as JSON (`top` None) or as a table of the `top` rows, with the explanation `told` if asked."""
    if top is None:
        echo(json.dumps({**_advice_json(asked, rows, first, seconds), **({"explanation": told} if told else {})}))
        return
    _print_advice(asked.variant, asked.goals, rows, asked.dice, asked.left, first, asked.strategy, seconds, top)
    if told:
        echo(told["text"])
    for note in asked.variant.solitaire_notes():
        echo(note_line(note))


def _explained(asked: Question, advisor: Any, options: list[Any], first: bool) -> dict[str, Any]:
    """`--explain`: the first objective's ranking, the mean's (`_question` checks it), explained as JSON in the
    command line's language (the one its names are in, on the quick path too)."""
    from ..locales import speak
    from ..solver.explain import explain_options
    from .common import language

    graph = getattr(getattr(advisor, "values", None), "graph", None)
    undo = speak(language())
    try:
        return explain_options(asked.variant, asked.card, asked.dice, asked.left, options, graph, first).to_json()
    finally:
        undo()


class Question(NamedTuple):
    """What `advise` was asked, read and checked: the variant, objectives, strategy, card and dice."""

    variant: Variant
    goals: list[Any]
    strategy: str
    card: Card
    opponents: tuple[Card, ...]
    dice: tuple[int, ...]
    banked: int
    left: int
    most: int


def _question(
    variant: str,
    dice: str,
    rolls_left: int | None,
    card: str | None,
    banked: int,
    option: list[str] | None,
    strategy: str,
    objective: list[str] | None,
    opponent: list[str] | None,
    explain: bool = False,
) -> Question:
    """`advise`'s arguments read and checked, before any table is made (a DicecupError saying what is wrong)."""
    from ..language.dice import parse_dice

    goals = read_objectives(objective)
    v = load_variant(variant, option)
    values = tuple(parse_dice(dice, v.dice, v.faces))
    if strategy not in STRATEGIES:
        raise DicecupError(
            _("unknown strategy {strategy}; strategies: {known}").format(
                strategy=shown(strategy), known=", ".join(STRATEGIES)
            )
        )
    if strategy == "auto":
        strategy = "optimal" if any(not getattr(g, "is_mean", False) for g in goals) else _auto_strategy(v)
    from ..solver.advice_tables import known_scores, recall_tables

    if strategy == "optimal":  # the score tables kept beside the table: the card is checked and advised
        from ..solver.rules import check_solvable  # without asking the engine

        check_solvable(v)  # (a variant the solver refuses is refused first, with its size)
        recall_tables(v, warn)
    the_card = parse_card(card, v, known_scores)
    opponents = tuple(parse_card(o, v, known_scores, "--opponent", full=True) for o in opponent or ())
    if explain and not getattr(goals[0], "is_mean", False):
        raise DicecupError(
            f"--explain explains the expected final score: put mean first (--objective mean,{goals[0].id})"
        )
    if any(g.kind == "win" for g in goals) and not opponents:
        from ..simulate.win import NO_OPPONENTS

        raise DicecupError(NO_OPPONENTS)
    from ..solver.space import most_banked

    bank_max = most_banked(v, len(the_card.scores))
    if not 0 <= banked <= bank_max:
        why = (
            _("its turns bank no unused rolls")
            if not v.carry_over
            else _("this card's turns left at most {n}").format(n=bank_max)
        )
        raise DicecupError(
            _("--banked must be 0..{most} for {variant} ({why}), got {got}").format(
                most=bank_max, variant=v.id, why=why, got=banked
            )
        )
    most = v.rolls - 1 + banked
    left = most if rolls_left is None else rolls_left
    if not 0 <= left <= most:
        if banked:
            said = _("--rolls-left must be 0..{most} ({variant} has {n} rolls a turn, plus {banked} banked), got {got}")
        else:
            said = ngettext(
                "--rolls-left must be 0..{most} ({variant} has {n} roll a turn), got {got}",
                "--rolls-left must be 0..{most} ({variant} has {n} rolls a turn), got {got}",
                v.rolls,
            )
        raise DicecupError(said.format(most=most, variant=v.id, n=v.rolls, banked=banked, got=left))
    return Question(v, goals, strategy, the_card, opponents, values, banked, left, most)


def _head(asked: Question) -> dict[str, Any]:
    """What `advise --json` says of the question besides the moves (`advise_kept.advice_json`)."""
    v = asked.variant
    return {
        "variant": v.id,
        "options": dict(v.options),
        "strategy": asked.strategy,
        "objectives": [g.id for g in asked.goals],
        "value_key": asked.goals[0].value_key,
        "banked": asked.banked,
        "card": dict(asked.card.scores),
        "opponents": [dict(o.scores) for o in asked.opponents],
        "notes": list(v.solitaire_notes()),
    }


def _advice_json(asked: Question, rows: list[Any], first: bool, seconds: float) -> dict[str, Any]:
    """`advise --json`: the question, every move with its value and rank under each objective, each pick."""
    goals = asked.goals
    moves = [_row_json(r, goals) for r in rows]
    picks = [
        (g.id, next(m for m, r in zip(moves, rows, strict=True) if r.places[i].best))
        for i, g in enumerate(goals)
        if rows
    ]
    return advice_json(_head(asked), asked.dice, asked.left, first, moves, picks, seconds)


def _keepable(asked: Question) -> bool:
    """Whether the card's table is learned and kept (`advise_kept`): the mean on the exact table, no opponents,
    nothing banked, English, no plugin but the built-in ones."""
    from ..language.engine import BUILTIN_PLUGINS
    from .common import get_engine

    plain = asked.strategy == "optimal" and [g.id for g in asked.goals] == ["mean"] and not asked.opponents
    if not plain or asked.banked or language() != "en":
        return False
    return {name for name, _ in get_engine().pm.list_name_plugin()} <= set(BUILTIN_PLUGINS)


def parse_card(
    text: str | None,
    variant: Variant,
    known: Callable[[Variant, Card, str], set[int] | None] | None = None,
    flag: str = "--card",
    full: bool = False,
) -> Card:
    """Read `--card "ones=3,yahtzee=50"`: filled boxes with their scores (precise errors naming `flag`; a full
    card only where `full`, an opponent's). `known(variant, card, box)` may tell the scores a box can get on
    a card from tables learned before (None: the engine)."""
    from ..language.model import Card

    if not text or not text.strip():
        return Card()
    scores: dict[str, int] = {}
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        box, sep, raw = part.partition("=")
        box, raw = box.strip(), raw.strip()
        if not sep or not box or not raw:
            raise DicecupError(_("{flag}: {part} is not BOX=SCORE (e.g. ones=3)").format(flag=flag, part=shown(part)))
        if box not in variant.box_ids:
            raise DicecupError(
                _("{flag}: no box {box} in {variant}; boxes: {boxes}").format(
                    flag=flag, box=shown(box), variant=variant.id, boxes=", ".join(variant.box_ids)
                )
            )
        if box in scores:
            raise DicecupError(_("{flag}: box {box} is given twice").format(flag=flag, box=shown(box)))
        try:
            value = int(raw)
        except ValueError:
            raise DicecupError(
                _("{flag}: the score of {box} must be a whole number, got {got}").format(
                    flag=flag, box=box, got=shown(raw)
                )
            ) from None
        scores[box] = value
    if len(scores) >= len(variant.boxes) and not full:
        raise DicecupError(
            _("{flag}: every box is filled; the game is over, there is nothing to advise").format(flag=flag)
        )
    card = Card(scores)
    for box, value in scores.items():
        if value not in _possible(variant, card, box, known):
            raise DicecupError(
                _("{flag}: box {box} cannot hold {score} (no roll scores that there)").format(
                    flag=flag, box=repr(box), score=shown(value)
                )
            )
    return card


def _possible(
    variant: Variant, card: Card, box: str, known: Callable[[Variant, Card, str], set[int] | None] | None = None
) -> set[int]:
    """Scores `box` can get on an empty card, or on this card without it (rules may depend on the card);
    from `known` where it knows them, else from the engine."""
    from ..language.model import Card

    out: set[int] = set()
    rest = Card({b: s for b, s in card.scores.items() if b != box})
    for base in (Card(), rest):
        got = known(variant, base, box) if known is not None else None
        if got is not None:
            out |= got
        else:
            for roll in variant.all_rolls():
                for first in (False, True):
                    out.add(variant.score(base, box, roll, first).score)
        if card.scores[box] in out:
            break
    return out


def _auto_strategy(variant: Variant) -> str:
    """optimal where the exact solver takes the variant at once, strong where it refuses and the card splits."""
    from ..solver import SolverError, check_solvable

    try:
        check_solvable(variant)
    except SolverError:
        from ..solver.relax import check_relaxable

        try:
            check_relaxable(variant)
        except SolverError:
            return "optimal"  # neither: the solver's refusal is the error to show
        return "strong"
    return "optimal"


def read_objectives(texts: list[str] | None) -> list[Any]:
    """`--objective` given once or more, each a comma list (default: the mean), in order; a one-line error."""
    from ..numeric.objective import parse_objectives

    return parse_objectives(texts or ["mean"])


def make_advisors(
    variant: Variant,
    goals: list[Any],
    strategy: str,
    max_states: int | None,
    quiet: bool,
    opponents: tuple[Card, ...] = (),
) -> list[Any]:
    """Each objective's advisor (`rankings`), its tables loaded or made with one progress bar on stderr
    (`opponents`: the other players' cards, what the win objective ranks against)."""
    from ..rankings import Asking, make_advisor
    from .progress import reporting

    with reporting(quiet) as told:
        asking = Asking(
            strategy,
            max_states,
            told,
            warn=warn,
            say=None if quiet else lambda msg: echo(msg, err=True),
            opponents=opponents,
        )
        return [make_advisor(variant, goal, asking) for goal in goals]


def _print_advice(
    v: Variant,
    goals: list[Any],
    rows: list[Any],
    dice: Any,
    left: int,
    first: bool,
    strategy: str,
    secs: float,
    top: int,
) -> None:
    """The ranking as a table: per objective its value of each move, and (several objectives) its rank."""
    with imports_paused():  # rich (see `cli`)
        from rich.console import Console
        from rich.table import Table

    console = Console(highlight=False)
    rolled = ngettext("dice {dice}, {n} roll left", "dice {dice}, {n} rolls left", left)
    title = f"{v.name}: {rolled.format(dice=' '.join(map(str, dice)), n=left)}" + (_(" (first roll)") if first else "")
    after = (
        _("played optimally afterwards")
        if strategy == "optimal"
        else _("played afterwards against the card's parts, each solved exactly (bot strong)")
    )
    what = "; ".join(f"{g.label}: {said(g.describe())}" for g in goals) if len(goals) > 1 else said(goals[0].describe())
    table = Table(
        title=title, caption=_("{what}, if {after}; {ms} ms").format(what=what, after=after, ms=f"{secs * 1000:.0f}")
    )
    table.add_column("", no_wrap=True)
    table.add_column(_("option"))
    table.add_column(_("scores now"), justify="right")
    single = len(goals) == 1
    for g in goals:
        table.add_column(_value_header(g) if single else g.label, justify="right")
        table.add_column(_("loss") if single else "#", justify="right")
    bests = [next(r.places[i].value for r in rows if r.places[i].best) for i in range(len(goals))] if rows else []
    shown = rows[:top]
    for extra in rows[top:]:  # each objective's pick is shown, whatever its place under the first
        if any(p.best for p in extra.places) and not single:
            shown.append(extra)
    for r in shown:
        mark = _("best") if r.places[0].best else ""
        if not single and any(p.best for p in r.places[1:]):
            mark = _("pick") if not mark else mark
        cells: list[str] = []
        for g, place, best_value in zip(goals, r.places, bests, strict=True):
            cells.append(_format_value(g, place.value))
            cells.append(("" if place.best else f"-{best_value - place.value:.3f}") if single else str(place.rank))
        table.add_row(mark, move_text(r.action, r.label, v), "" if r.points is None else str(r.points), *cells)
    console.print(table)
    if len(rows) > len(shown):
        more = len(rows) - len(shown)
        console.print(
            ngettext(
                "(and {n} more option; --top N shows more)", "(and {n} more options; --top N shows more)", more
            ).format(n=more)
        )
    if not single:
        console.print(_("# is each move's rank under that objective; pick: another objective's best move"))


#: the value column's header of a single objective, by its JSON key (other kinds: their label)
VALUE_HEADERS = {"expected_score": N_("expected final"), "certainty_equivalent": N_("certainty equiv.")}


def _value_header(goal: Any) -> str:
    header = VALUE_HEADERS.get(goal.value_key)
    return goal.label if header is None else _(header)


def _format_value(goal: Any, value: float) -> str:
    """A value in its objective's unit: points with three decimals, a probability as a percentage."""
    return f"{100 * value:.2f}%" if goal.unit == "probability" else f"{value:.3f}"


def _row_json(row: Any, goals: list[Any]) -> dict[str, Any]:
    """A move in JSON (`advise_kept.move_json`): its action, and every objective's value and rank."""
    from ..game.actions import Score

    what: dict[str, Any] = (
        {"action": "score", "box": row.action.box, "points": row.points}
        if isinstance(row.action, Score)
        else {"action": "keep", "keep": list(row.action.dice)}
    )
    places = [(g.id, p.value, p.rank) for g, p in zip(goals, row.places, strict=True)]
    return move_json(what, goals[0].value_key, places)
