"""The keys of the variant language, declared once as data.

The compiler reads each key's bounds and default from here, and the documentation's
language reference is generated from the same tables, so the two cannot disagree.
A `Section` is one mapping of the document (the top level, `dice`, a box, ...);
each `Key` says how its value is written, what it defaults to and what it means.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from attrs import frozen

__all__ = [
    "REQUIRED",
    "Key",
    "Section",
    "SECTIONS",
    "TOP",
    "DICE",
    "TURN",
    "COLUMN",
    "BOX",
    "FIRST_ROLL",
    "PATTERN",
    "SCORER",
    "BONUS",
    "RULE",
    "MATCH",
    "OPTION",
    "FIGURE",
    "TRANSLATION",
    "MAX_ID_LENGTH",
    "MAX_ROUNDS",
    "MAX_MULTIPLIER",
    "ANY_ORDER",
]

MAX_ID_LENGTH = 64  # ids end up in file names, save files and tables
MAX_ROUNDS = 1000
MAX_MULTIPLIER = 1000
ANY_ORDER = "any"


class _Required:
    def __repr__(self) -> str:
        return "REQUIRED"


#: The default of a key (or a rule parameter) that must be given.
REQUIRED: Any = _Required()


@frozen
class Key:
    """One key of a section: how its value is written, its bounds, its default and its meaning.

    `default` is the value used when the key is left out (REQUIRED: it must be given);
    `default_text` says it in words where the value alone would not (`the id, title-cased`).
    """

    name: str
    written: str
    meaning: str
    default: Any = None
    low: int | None = None
    high: int | None = None
    default_text: str | None = None

    @property
    def required(self) -> bool:
        return self.default is REQUIRED

    def describe_default(self) -> str:
        """The default in words, for the reference ("required" for a key that must be given)."""
        if self.required:
            return "required"
        if self.default_text is not None:
            return self.default_text
        if self.default is None:
            return "none"
        if isinstance(self.default, bool):
            return str(self.default).lower()
        if isinstance(self.default, str):
            return f"`{self.default}`" if self.default else "empty"
        return str(self.default)


@frozen
class Section:
    """One mapping of a variant document and the keys it takes.

    `where` is how it is reached from the top (`boxes.ID`); `more` says what else it
    takes beyond its keys (a pattern's parameters, a bonus kind's), empty when nothing.
    """

    name: str
    where: str
    meaning: str
    keys: tuple[Key, ...]
    more: str = ""

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(k.name for k in self.keys)

    def __getitem__(self, name: str) -> Key:
        for key in self.keys:
            if key.name == name:
                return key
        raise KeyError(name)

    def __iter__(self) -> Iterator[Key]:
        return iter(self.keys)


#: The `name` of a box, a bonus or a figure.
_SHOWN_NAME = Key("name", "a string", "The name players see.", default_text="the id, title-cased")

TOP = Section(
    "variant",
    "",
    "A variant file is one mapping with these keys.",
    (
        Key(
            "id",
            "an id",
            f"The variant's id, used by `--variant`: letters, digits, `_` or `-`, at most {MAX_ID_LENGTH} characters.",
            REQUIRED,
        ),
        Key("name", "a string", "The name players see.", default_text="the id"),
        Key("description", "a string", "One or two sentences about the game.", ""),
        Key(
            "extends",
            "a variant id, or a path to a `.yaml` file",
            "Start from another variant and change it: mappings merge key by key, `null` deletes a key, "
            "a new pattern `kind` replaces the old pattern whole, anything else replaces the old value. "
            "A path is relative to this file and must stay in its folder or below.",
        ),
        Key("dice", "a mapping (`dice`)", "The dice.", REQUIRED),
        Key("turn", "a mapping (`turn`)", "The rolls of a turn.", default_text="3 rolls, none banked"),
        Key("options", "a mapping of option name to `option`", "Choices a player makes with `--option KEY=VALUE`."),
        Key(
            "columns",
            "a mapping of column id to `column`",
            "Several copies of the card's rows: box ids become `column.row`.",
            default_text="one column",
        ),
        Key("boxes", "a mapping of box id to `box`", "The rows of the card, in card order.", REQUIRED),
        Key("bonuses", "a mapping of bonus id to `bonus`", "Points the card earns beyond its boxes."),
        Key(
            "rules",
            "a mapping of rule name to its parameters",
            "Rules from plugins, each with its parameters (`{}` for none).",
        ),
        Key("figures", "a mapping of figure id to `figure`", "Results other than the score (Balut's points)."),
        Key(
            "rank_by",
            "a list of figure ids",
            "How players are ranked: by the first figure, ties broken by the next.",
            default_text="[score]",
        ),
        Key("match", "a mapping (`match`)", "Games in a match.", default_text="one game"),
        Key(
            "translations",
            "a mapping of language code to `translation`",
            "The names players read, in other languages (`ru`, `de`, `pt-BR`); rules and tables are unchanged.",
            default_text="none",
        ),
    ),
)

DICE = Section(
    "dice",
    "dice",
    "The dice every roll uses.",
    (
        Key("count", "a whole number", "How many dice.", REQUIRED, 1, 10),
        Key("faces", "a whole number", "Faces on each die, numbered from 1.", 6, 2, 20),
        Key(
            "attributes",
            "a mapping of attribute name to a value per face",
            "Properties of the faces that patterns can use (Kismet's colours): "
            "`{colour: {1: black, 2: red, ...}}` or a list with one value per face.",
        ),
    ),
)

TURN = Section(
    "turn",
    "turn",
    "The rolls of a turn.",
    (
        Key("rolls", "a whole number", "Rolls per turn (the first one included).", 3, 1, 20),
        Key(
            "carry_over",
            "true or false",
            "Unused rolls are banked, and may be spent in any later turn of the same player.",
            False,
        ),
    ),
)

COLUMN = Section(
    "column",
    "columns.ID",
    "One column of the card: every row again, with its own multiplier and fill order.",
    (
        Key("name", "a string", "The column's name.", default_text="the id, title-cased"),
        Key(
            "multiplier",
            "a whole number",
            "Multiplies the column's box scores and the points of its bonuses (needs several columns).",
            1,
            1,
            MAX_MULTIPLIER,
        ),
        Key(
            "order",
            "a fill order",
            f"`{ANY_ORDER}`, or a fill order a plugin provides (`down`, `up`, `announced`; see Fill orders).",
            ANY_ORDER,
        ),
    ),
)

BOX = Section(
    "box",
    "boxes.ID",
    "One row of the card.",
    (
        _SHOWN_NAME,
        Key("section", "a string", "A group of boxes that bonuses can name (`upper`).", "main"),
        Key(
            "stage",
            "a whole number",
            "The stage the box belongs to (the rule `stage_order` opens them in turn).",
            1,
            1,
            1000,
        ),
        Key("pattern", "a pattern", "What the dice must show: a pattern name, or a `pattern` mapping.", REQUIRED),
        Key(
            "score",
            "a scorer",
            "What the box then scores: a scorer name, a plain number, or a `scorer` mapping. "
            "Dice that do not meet the pattern score 0.",
            REQUIRED,
        ),
        Key(
            "first_roll",
            "a mapping (`first_roll`)",
            "A different score when the pattern is met on the turn's first roll (served).",
        ),
        Key("extra", "a whole number", "Points added whenever the pattern is met (after `first_roll`).", 0),
        Key("help", "a string", "A line about the box, shown by `dicecup show`.", ""),
    ),
)

FIRST_ROLL = Section(
    "first_roll",
    "boxes.ID.first_roll",
    "How a box scores when its pattern is met on the turn's first roll.",
    (
        Key("multiply", "a whole number", "The score is multiplied by this.", 1, 0),
        Key("add", "a whole number", "Then this is added.", 0),
        Key("points", "a whole number", "The score is this instead."),
    ),
)

PATTERN = Section(
    "pattern",
    "boxes.ID.pattern",
    "A pattern written as a mapping.",
    (Key("kind", "a pattern name", "Which pattern (see Patterns).", REQUIRED),),
    "the pattern's own parameters",
)

SCORER = Section(
    "scorer",
    "boxes.ID.score",
    "A scorer written as a mapping.",
    (
        Key("kind", "a scorer name", "Which scorer (see Scorers).", REQUIRED),
        Key(
            "multiply",
            "a whole number",
            "The scorer's points are multiplied by this, for any scorer: `{kind: sum, multiply: 2}` makes "
            "a box count double. It applies before `first_roll` and `extra`.",
            1,
            1,
            MAX_MULTIPLIER,
        ),
    ),
    "the scorer's own parameters",
)

BONUS = Section(
    "bonus",
    "bonuses.ID",
    "A bonus: points the card earns by a rule of its kind.",
    (
        Key("kind", "a bonus kind", "Which kind of bonus (see Bonus kinds).", REQUIRED),
        _SHOWN_NAME,
        Key(
            "scope",
            "`card` or `column`",
            "With several columns: `column` evaluates the bonus on each column as if it were the whole card "
            "(its id becomes `column.bonus`, its points multiplied by the column's multiplier); `card` evaluates "
            "it once, and a row it names means that row in every column.",
            default_text="column with several columns, else card",
        ),
        Key("figure", "a figure id", "The result its points count in.", "score"),
    ),
    "the bonus kind's own parameters",
)

RULE = Section(
    "rules",
    "rules.NAME",
    "A rule a plugin provides, enabled by naming it with its parameters.",
    (),
    "the rule's own parameters (see Rules)",
)

MATCH = Section(
    "match",
    "match",
    "How many games make a match.",
    (
        Key(
            "rounds",
            "a whole number, or a mapping of player count to one",
            f"Games per match, 1 to {MAX_ROUNDS}; by player count: `{{2: 1, default: 13}}`.",
            1,
            1,
            MAX_ROUNDS,
        ),
        Key("replay_ties", "true or false", "Add a game when all totals tie.", False),
    ),
)

OPTION = Section(
    "option",
    "options.NAME",
    "A choice players make with `--option NAME=VALUE`. `${NAME}` anywhere in a string is replaced by the "
    'chosen value (a string that is only `${NAME}` takes the value\'s type, so `score: "${triple}"` is a number).',
    (
        Key("default", "one of the choices", "The value when the player does not choose.", REQUIRED),
        Key(
            "choices",
            "a list of values, or a mapping of value to overlay",
            "The values (strings, whole numbers, true or false). As a mapping, each value's overlay is merged "
            "into the document when it is chosen (an overlay cannot change `extends`, `id` or `options`).",
            REQUIRED,
        ),
        Key("help", "a string", "What the option does, shown by `dicecup variants` and `show`.", ""),
    ),
)

FIGURE = Section(
    "figure",
    "figures.ID",
    "A result other than the score that bonuses can count in and players can be ranked by.",
    (_SHOWN_NAME,),
)

TRANSLATION = Section(
    "translation",
    "translations.LANGUAGE",
    "One language's names for the variant; whatever it leaves out keeps the variant's own name.",
    (
        Key("name", "a string", "The variant's name.", default_text="the variant's"),
        Key("description", "a string", "Its description.", default_text="the variant's"),
        Key(
            "boxes",
            "a mapping of row id to a string",
            "The rows' names (in column games, by row id).",
            default_text="none",
        ),
        Key("bonuses", "a mapping of bonus id to a string", "The bonuses' names.", default_text="none"),
        Key("columns", "a mapping of column id to a string", "The columns' names.", default_text="none"),
        Key("figures", "a mapping of figure id to a string", "The figures' names.", default_text="none"),
        Key("sections", "a mapping of section to a string", "Headings for the boxes' sections.", default_text="none"),
    ),
)

#: Every section, in the order the reference lists them.
SECTIONS = (TOP, DICE, TURN, COLUMN, BOX, FIRST_ROLL, PATTERN, SCORER, BONUS, RULE, MATCH, OPTION, FIGURE, TRANSLATION)
