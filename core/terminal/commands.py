"""What a human types at the prompt: keep, reroll, score, a rule's action, help, card, hint, quit.

`parse_command(text, state)` reads one line against the position on the table
and returns a command, or raises `InputProblem` saying what is wrong and how to
write it. Boxes are named by number, id, name or a unique start of one; with
several card columns the column may be given too (`s full down`, `s x2.yahtzee`).
A rule's action is typed as its verb and argument (`announce full`).
"""

from __future__ import annotations

import textwrap
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

from attrs import field, frozen

from ..errors import DicecupError
from ..game.state import GameState
from ..game.words import variant_box_name
from ..language.model import RuleAction, Variant
from ..locales import N_, _, ngettext
from .wording import box_names, closest, score_example, typed_box, why_not

__all__ = [
    "KeepDice",
    "ScoreBox",
    "DoAction",
    "Say",
    "ShowCard",
    "Command",
    "InputProblem",
    "AmbiguousBox",
    "parse_command",
    "actions_summary",
    "resolve_box",
    "find_player",
    "help_text",
]


@frozen
class KeepDice:
    """Keep these dice (face values) and reroll the others; `positions` (1-based) when typed by position."""

    dice: tuple[int, ...]
    positions: tuple[int, ...] | None = field(default=None, eq=False)


@frozen
class ScoreBox:
    """Score the dice in this box."""

    box: str


@frozen
class DoAction:
    """Take an action a rule offers (an announcement)."""

    action: RuleAction


@frozen
class Say:
    """A command that changes nothing: help (on a `topic`, or all), hint, undo or quit."""

    what: str
    topic: str = ""


@frozen
class ShowCard:
    """Show the whole scorecard: everyone's (or the player to move's), or `player`'s (0-based)."""

    player: int | None = None


Command = KeepDice | ScoreBox | DoAction | Say | ShowCard


class InputProblem(DicecupError):
    """Input the prompt cannot use; the message says why and the prompt asks again."""


class AmbiguousBox(InputProblem):
    """A row open in several columns, typed without a column; `boxes` are the open candidates."""

    def __init__(self, message: str, boxes: Sequence[str]) -> None:
        super().__init__(message)
        self.boxes = tuple(boxes)


_HELP = (
    ("k 1 3 4", N_("keep the dice at positions 1, 3 and 4, reroll the rest (or k134)")),
    ("keep 6 6", N_("keep dice by their faces: here two sixes (or keep 66)")),
    ("r", N_("reroll every die (r 2 5: only the dice at positions 2 and 5)")),
    ("s {n}", N_("score box {n} of the card ({name})")),
    ("s {start}", N_("score a box by the start of its name (or its whole name or id)")),
)

_HELP_COLUMNS = (
    (
        "s {row} {col}",
        N_("score a row in a column: the row by number, name or the start of one, then the column (or s {n} {col})"),
    ),
    ("s {row}", N_("the row alone, when only one of its columns can take the dice")),
)

_HELP_END = (
    ("s", N_("alone: score the only box the rules allow now (an announced box, the next in card order)")),
    ("c", N_("the whole scorecard; c NAME or c 2: one player's card")),
    ("hint", N_("the advisor's best moves (games started with --hints)")),
    ("undo", N_("take back your last score or announcement (? undo says more)")),
    ("q", N_("quit (asks first unless the game is saved with --save FILE)")),
    ("?", N_("this help")),
)

_TOPICS = {
    "undo": N_(
        "undo takes back your last score or announcement: back to the dice you had then, your card as it was. "
        "Fair by design: the dice to come stay the same (undo never gives new dice), so once you have seen "
        "them you score instead of rerolling; the bots' turns since are played again as they were; "
        "another human's move, and a keep whose dice are rolled (a free reroll), are never taken back."
    ),
}

_SAY = {
    "?": "help",
    "h": "help",
    "help": "help",
    "q": "quit",
    "quit": "quit",
    "exit": "quit",
    "hint": "hint",
    "hints": "hint",
    "u": "undo",
    "undo": "undo",
}

_CARD = ("c", "card", "cards")

#: every command word, for "did you mean" (the rules' verbs are added per game)
_WORDS = (*_SAY, *_CARD, "k", "keep", "r", "roll", "reroll", "s", "score")


def help_text(variant: Variant, verbs: Mapping[str, str] | None = None, width: int = 80, topic: str = "") -> str:
    """The command list for this variant (columns and the actions its rules add included), wrapped to `width`;
    or the help on one `topic` (`undo`)."""
    if topic:
        known = _TOPICS.get(topic.lower())
        if known is None:
            return _("No help on {topic!r}; ? alone lists the commands, ? {topics} says more.").format(
                topic=topic, topics=" or ? ".join(_TOPICS)
            )
        return "\n".join(textwrap.wrap(_(known), max(width, 40)))
    rows = list(_HELP)
    example = variant.boxes[min(9, len(variant.boxes)) - 1]
    fill = {"n": min(9, len(variant.boxes)), "name": example.name, "start": example.name.split()[0].lower()[:4]}
    if len(variant.columns) > 1:
        fill.update(row=variant.rows[-1], col=variant.columns[0].id, n=len(variant.rows))
        rows[3:] = _HELP_COLUMNS
    rows.extend((f"{verb} ...", text) for verb, text in (verbs or {}).items())
    rows.extend(_HELP_END)
    lines = [_("Commands (dice positions are the numbers under the dice, #1 at the left):")]
    for cmd, text in rows:
        lines.extend(
            textwrap.wrap(
                f"{cmd.format(**fill):<13} {_(text).format(**fill)}",
                max(width, 40),
                initial_indent="  ",
                subsequent_indent=" " * 16,
            )
        )
    return "\n".join(lines)


def actions_summary(actions: Sequence[RuleAction], variant: Variant) -> list[str]:
    """The rule actions offered now, one phrase per verb and column: `announce a box of the Announce column: ones, ...`.

    Box arguments are shown by row id (what a player types), so a 13-box offer stays short.
    """
    out: list[str] = []
    by_verb: dict[str, list[RuleAction]] = {}
    for a in actions:
        by_verb.setdefault(a.name, []).append(a)
    for verb, offered in by_verb.items():
        boxes = [a.arg for a in offered if isinstance(a.arg, str) and a.arg in variant.box_ids]
        if len(boxes) < len(offered):
            out.append(", ".join(a.label for a in offered))
            continue
        by_column: dict[str, list[str]] = {}
        for b in boxes:
            by_column.setdefault(variant.box(b).column, []).append(variant.box(b).row)
        for col, rows in by_column.items():
            said = (
                _("{verb} a box of the {column} column: {rows} (e.g. {verb} {row})")
                if len(variant.columns) > 1
                else _("{verb} a box: {rows} (e.g. {verb} {row})")
            )
            out.append(said.format(verb=verb, column=variant.column(col).name, rows=", ".join(rows), row=rows[-1]))
    return out


def _numbers(args: list[str], what: str, split_digits: bool) -> list[int]:
    """`1 3 4`, `134` or `1,3,4` as numbers (single digits may run together when `split_digits`)."""
    out: list[int] = []
    for tok in args:
        for part in tok.replace(",", " ").split():
            if not part.isdigit():
                raise InputProblem(
                    _("{typed!r} is not a {what}; write numbers, e.g. k 1 3 or keep 6 6").format(
                        typed=part, what=_(what)
                    )
                )
            if split_digits and len(part) > 1:
                out.extend(int(c) for c in part)
            else:
                out.append(int(part))
    return out


def _positions(args: list[str], dice: Sequence[int], faces: int = 6) -> list[int]:
    """Die positions typed after `k` or `r`; a mistake that reads like faces (`k 55`) points to `keep 5 5`."""
    picks = _numbers(args, N_("die position"), split_digits=len(dice) < 10)
    n = len(dice)
    typed = " ".join(map(str, picks))
    by_face = (
        _(" (keep {faces} keeps dice by their faces; k takes positions)").format(faces=typed)
        if _faces_fit(picks, faces)
        else ""
    )
    for p in picks:
        if not 1 <= p <= n:
            raise InputProblem(
                _("there is no die at position {k}: the dice are numbered 1 to {n}").format(k=p, n=n) + by_face
            )
    dup = [p for p, c in Counter(picks).items() if c > 1]
    if dup:
        raise InputProblem(_("position {k} is given twice; each die can be picked once").format(k=dup[0]) + by_face)
    return picks


def _faces_fit(picks: Sequence[int], faces: int) -> bool:
    """Whether typed numbers could be faces to keep (`55`): each a face of the dice."""
    return bool(picks) and all(1 <= p <= faces for p in picks)


def _norm(text: str) -> str:
    return text.strip().lower().replace(" ", "_")


def _row_of(token: str, variant: Variant, rows: Sequence[str]) -> list[str]:
    """The rows a token may mean: a row number, id or name, or the start of one (among `rows`)."""
    t = _norm(token)
    if t.isdigit():
        k = int(t)
        if 1 <= k <= len(variant.rows):
            return [variant.rows[k - 1]]
        raise InputProblem(_("there is no row {k}: rows are numbered 1 to {n}").format(k=k, n=len(variant.rows)))
    names = {_norm(variant.row(r).name): r for r in variant.rows}
    if t in variant.rows:
        return [t]
    if t in names:
        return [names[t]]
    return sorted({r for r in rows if r.startswith(t)} | {r for n, r in names.items() if n.startswith(t) and r in rows})


def _column_of(token: str, variant: Variant) -> str | None:
    t = _norm(token)
    for c in variant.columns:
        if t in (c.id.lower(), _norm(c.name)):
            return c.id
    return None


def resolve_box(token: str, variant: Variant, open_boxes: Iterable[str] | None = None) -> str:
    """A box by number, id, name or unique start of one; `row column` or `column.row` with several columns.

    Abbreviations match only `open_boxes` (all boxes when not given), so `s fu`
    finds the one full-house box still open. A row open in several columns with
    no column named raises AmbiguousBox, which lists the columns to choose from.
    """
    text = token.strip()
    candidates = list(variant.box_ids if open_boxes is None else open_boxes)
    if not text:
        raise InputProblem(
            _("say which box, e.g. {example}").format(example=typed_box(variant, (candidates or variant.box_ids)[0]))
        )
    if text in variant.box_ids:
        return text
    if len(variant.columns) > 1:
        return _resolve_in_columns(token, variant, candidates)
    ids = variant.box_ids
    t = _norm(text)
    if t.isdigit():
        k = int(t)
        if 1 <= k <= len(ids):
            return ids[k - 1]
        raise InputProblem(_("there is no box {k}: boxes are numbered 1 to {n}").format(k=k, n=len(ids)))
    names = {_norm(b.name): b.id for b in variant.boxes}
    if t in ids:
        return t
    if t in names:
        return names[t]
    found = sorted(
        {b for b in candidates if b.startswith(t)}
        | {i for n, i in names.items() if n.startswith(t) and i in candidates}
    )
    if len(found) == 1:
        return found[0]
    if found:
        raise InputProblem(
            _("{typed!r} could be {boxes}; type more of the name").format(typed=token, boxes=box_names(variant, found))
        )
    filled = [i for i in ids if i not in candidates and (i.startswith(t) or _norm(variant.box(i).name).startswith(t))]
    if filled:  # what was typed names boxes already filled: say so, not "no box"
        were = ngettext("{boxes} is already filled", "{boxes} are already filled", len(filled))
        raise InputProblem(
            _("no open box {typed!r}: {filled}; open boxes: {boxes}").format(
                typed=token, filled=were.format(boxes=box_names(variant, filled)), boxes=box_names(variant, candidates)
            )
        )
    guess = _guess(t, {**{b.id: b.id for b in variant.boxes}, **names})
    if guess is not None:  # a misspelling: the box it most likely means
        name = variant_box_name(variant, guess)
        if guess not in candidates:
            raise InputProblem(_("no open box {typed!r}: {box} is already filled").format(typed=token, box=name))
        raise InputProblem(
            _("no box {typed!r}; did you mean {box} ({example})?").format(
                typed=token, box=name, example=typed_box(variant, guess)
            )
        )
    raise InputProblem(
        _("no open box {typed!r}; open boxes: {boxes} (or their numbers)").format(
            typed=token, boxes=box_names(variant, candidates)
        )
    )


def _guess(typed: str, keys: Mapping[str, str]) -> str | None:
    """What a mistyped box or row most likely means: `keys` maps ids and names (normalised) to it."""
    hit = closest(typed, keys, cutoff=0.75)  # names are long: a looser match would guess wildly
    return None if hit is None else keys[hit]


def _resolve_in_columns(token: str, variant: Variant, candidates: list[str]) -> str:
    """`full down`, `down full`, `Down.Full`, `11 down` or just `full` on a card with several columns."""
    column, row_text = None, token.strip()
    words = row_text.replace(".", " ").split()
    if len(words) >= 2:
        for col_word, rest in ((words[0], words[1:]), (words[-1], words[:-1])):
            col = _column_of(col_word, variant)
            if col is not None:
                column, row_text = col, " ".join(rest)
                break
    elif _column_of(row_text, variant) is not None:
        first = variant.rows[0]
        raise InputProblem(
            _("say the row too, e.g. s {row} {column} (or s 1 {typed})").format(
                row=first, column=_column_of(row_text, variant), typed=row_text
            )
        )
    # Abbreviations match rows open where the box would go: in the column named, else in any column.
    open_rows = [variant.box(b).row for b in candidates if column is None or variant.box(b).column == column]
    rows = _row_of(row_text, variant, open_rows)
    if not rows and column is None and len(words) >= 2:
        cols = ", ".join(c.id for c in variant.columns)
        raise InputProblem(
            _("no open box {typed!r}: write a row and a column ({columns}), e.g. s 1 {column}").format(
                typed=token, columns=cols, column=variant.columns[0].id
            )
        )
    if not rows:
        keys = {**{r: r for r in variant.rows}, **{_norm(variant.row(r).name): r for r in variant.rows}}
        guess = _guess(_norm(row_text), keys)
        if guess is not None:  # a misspelled row: the row it most likely means, in the column named
            typed = f"s {variant.rows.index(guess) + 1}" + (f" {column}" if column else "")
            raise InputProblem(
                _("no row {typed!r}; did you mean {row} ({example})?").format(
                    typed=row_text.strip(), row=variant.row(guess).name, example=typed
                )
            )
        names = ", ".join(variant.row(r).name for r in variant.rows)
        raise InputProblem(
            _("no open box {typed!r}; rows are {rows} (type ? for help)").format(typed=token, rows=names)
        )
    if len(rows) > 1:
        names = ", ".join(variant.row(r).name for r in rows)
        raise InputProblem(_("{typed!r} could be {boxes}; type more of the name").format(typed=token, boxes=names))
    row = rows[0]
    if column is not None:
        return f"{column}.{row}"
    where = [b for b in variant.boxes_of(row) if b in candidates]
    if len(where) == 1:
        return where[0]
    name = variant.row(row).name
    if not where:
        raise InputProblem(_("{row} is filled in every column; pick another row").format(row=name))
    cols = ", ".join(variant.box(b).column for b in where)
    said = _("{row} is open in columns {columns}: say which, e.g. s {row_id} {column}")
    raise AmbiguousBox(said.format(row=name, columns=cols, row_id=row, column=variant.box(where[0]).column), where)


def _score_target(text: str, state: GameState) -> str:
    """The box `s TEXT` means: an ambiguous row goes to its one column the rules allow now, else the choices are explained."""
    v = state.variant
    try:
        return resolve_box(text, v, v.open_boxes(state.card))
    except AmbiguousBox as amb:
        legal = [b for b in amb.boxes if b in state.legal_boxes()]
        if len(legal) == 1:
            return legal[0]
        row = v.box(amb.boxes[0]).row
        name = v.row(row).name
        if legal:
            scores = [f"{v.box(b).column} ({state.score_preview(b).written})" for b in legal]
            raise InputProblem(
                _("{row} can go in {some} or {last}: say which, e.g. s {row_id} {column}").format(
                    row=name, some=", ".join(scores[:-1]), last=scores[-1], row_id=row, column=v.box(legal[0]).column
                )
            ) from None
        reasons = [f"{v.box(b).column}: {why_not(state, b)}" for b in amb.boxes]
        raise InputProblem(
            _("{row} cannot be scored now in any open column ({reasons})").format(row=name, reasons="; ".join(reasons))
        ) from None


def _rule_action(head: str, args: list[str], state: GameState, offered: Sequence[RuleAction]) -> DoAction:
    """`announce full`, `announce 11` or `announce announce.full`: the offered action it names."""
    mine = [a for a in offered if a.name.lower() == head]
    arg_text = " ".join(args)
    no_arg = [a for a in mine if a.arg is None]
    if no_arg and not args:
        return DoAction(no_arg[0])
    boxes = [a.arg for a in mine if isinstance(a.arg, str) and a.arg in state.variant.box_ids]
    if boxes and args:
        try:
            box = resolve_box(arg_text, state.variant, boxes)
        except InputProblem:
            box = ""
        for a in mine:
            if a.arg == box:
                return DoAction(a)
    for a in mine:
        if str(a.arg).lower() == arg_text.lower():
            return DoAction(a)
    offers = "; ".join(actions_summary(mine, state.variant))
    if not args:
        raise InputProblem(_("{verb} what? you can {offers}").format(verb=head, offers=offers))
    raise InputProblem(
        _("you cannot {verb} {what} now; you can {offers}").format(verb=head, what=arg_text, offers=offers)
    )


def parse_command(text: str, state: GameState, verbs: Mapping[str, str] | Iterable[str] = ()) -> Command:
    """Read one line typed at the prompt; InputProblem says what is wrong and how to write it.

    `verbs` are the action names the variant's rules declare, with their help
    (so `announce` is understood, and explained, even when it is not possible now).
    """
    words = text.strip().split()
    if not words:
        raise InputProblem(
            _("type a command: k 1 3 to keep dice, {example} to score, ? for help").format(example=score_example(state))
        )
    head, args = words[0].lower(), words[1:]
    dice = state.dice
    if head in _SAY and (not args or _SAY[head] == "help"):
        return Say(_SAY[head], " ".join(args))
    if head in _CARD:
        return ShowCard(find_player(" ".join(args), state.players) if args else None)
    offered = state.rule_actions()
    if head in {a.name.lower() for a in offered}:
        return _rule_action(head, args, state, offered)
    helps = {v.lower(): (verbs[v] if isinstance(verbs, Mapping) else "") for v in verbs}
    if head in helps:
        status = "; ".join(state.turn_status())
        why = f" ({status})" if status else (f": {helps[head]}" if helps[head] else "")
        raise InputProblem(_("you cannot {verb} now{why}").format(verb=head, why=why))
    if head[0] == "k" and head[1:].isdigit() and head != "keep":  # k134
        head, args = "k", [head[1:]] + args
    if head == "k":
        if not args:
            raise InputProblem(_("say which dice to keep, e.g. k 1 3 (positions), or r to reroll them all"))
        picks = _positions(args, dice, state.variant.faces)
        return KeepDice(tuple(sorted(dice[p - 1] for p in picks)), tuple(sorted(picks)))
    if head == "keep":
        if not args:
            raise InputProblem(_("say which faces to keep, e.g. keep 6 6, or r to reroll every die"))
        want = Counter(_numbers(args, N_("face"), split_digits=state.variant.faces < 10))
        have = Counter(dice)
        for face, n in sorted(want.items()):
            if have[face] < n:
                showing = " ".join(map(str, sorted(dice)))
                said = (
                    _("you have no {face}s (the dice are {dice})")
                    if not have[face]
                    else ngettext(
                        "you have only {n} {face} (the dice are {dice})",
                        "you have only {n} {face}s (the dice are {dice})",
                        have[face],
                    )
                )
                raise InputProblem(said.format(n=have[face], face=face, dice=showing))
        return KeepDice(tuple(sorted(want.elements())))
    if head in ("r", "roll", "reroll"):
        if not args:
            return KeepDice(())
        drop = set(_positions(args, dice, state.variant.faces))
        kept = [i for i in range(1, len(dice) + 1) if i not in drop]
        return KeepDice(tuple(sorted(dice[i - 1] for i in kept)), tuple(kept))
    if head in ("s", "score"):
        if not args:
            legal = state.legal_boxes()
            if len(legal) == 1:
                return ScoreBox(legal[0])
            if not legal and offered:
                offers = _("; or ").join(actions_summary(offered, state.variant))
                raise InputProblem(_("no box can be scored yet; {offers}").format(offers=offers))
            raise InputProblem(_("say which box to score, e.g. {example}").format(example=score_example(state)))
        return ScoreBox(_score_target(" ".join(args), state))
    if head.isdigit():
        raise InputProblem(
            _("to score box {n} type s {n}; to keep dice type k followed by their positions").format(n=head)
        )
    # A bare box id or full name scores it (no abbreviations here: a stray `y` must not score).
    wanted = _norm(text)
    for box in state.variant.boxes:
        if wanted in (box.id, _norm(box.name)) and (len(state.variant.columns) == 1 or wanted == box.id):
            return ScoreBox(box.id)
    raise InputProblem(_not_understood(text, head, args, state, [*helps, *(a.name.lower() for a in offered)]))


def _not_understood(text: str, head: str, args: list[str], state: GameState, verbs: Sequence[str]) -> str:
    """The "I don't understand" message, with the command it most likely misspells (`kep 3 3 3`: `keep 3 3 3`)."""
    typed = text.strip()
    word = closest(head, [*_WORDS, *verbs])
    if word is not None:
        return _("I don't understand {typed!r}; did you mean {command!r}?").format(
            typed=typed, command=" ".join([word, *args])
        )
    box = None if args else _guess(_norm(text), {_norm(b.name): b.id for b in state.variant.boxes})
    if box is not None and box in state.variant.open_boxes(state.card):
        v = state.variant
        return _("I don't understand {typed!r}; did you mean {command!r} (score {box})?").format(
            typed=typed, command=typed_box(v, box), box=variant_box_name(v, box)
        )
    return _("I don't understand {typed!r}; type ? for the commands").format(typed=typed)


def find_player(text: str, players: Sequence[str]) -> int:
    """A player (0-based) by number in turn order (1 first), by name, or by the start of a name."""
    t = text.strip().lower()
    if t.isdigit() and t not in (p.lower() for p in players):
        k = int(t)
        if 1 <= k <= len(players):
            return k - 1
        raise InputProblem(
            _("there is no player {k}: players are numbered 1 to {n} in turn order").format(k=k, n=len(players))
        )
    for pool in ([p for p in players if p.lower() == t], [p for p in players if p.lower().startswith(t)]):
        if len(pool) == 1:
            return players.index(pool[0])
        if pool:
            raise InputProblem(
                _("{typed!r} could be {players}; type more of the name").format(
                    typed=text.strip(), players=", ".join(pool)
                )
            )
    guess = closest(t, {p.lower(): p for p in players})
    listed = ", ".join(players)
    if guess:
        said = _("no player {typed!r}; did you mean {player}? players: {players} (or 1 to {n})")
    else:
        said = _("no player {typed!r}; players: {players} (or 1 to {n})")
    player = players[[p.lower() for p in players].index(guess)] if guess else ""
    raise InputProblem(said.format(typed=text.strip(), player=player, players=listed, n=len(players)))
