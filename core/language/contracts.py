"""What each hook, and each function a plugin registers, must return: the contracts, as data.

`hookspecs` writes every hook's contract next to its specification (`returns`), and the engine checks each
value a plugin hands back against it before using it (`rulehooks` for rule hooks, `registry` for registration
hooks and what they register). A contract's `check` returns the value as the engine keeps it, or raises
`Broken` saying what is wrong; the caller turns that into one `ContractError` naming plugin, hook and value.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Mapping
from fractions import Fraction
from itertools import islice
from typing import Any

from ..errors import shown
from ..phrases import Phrase
from .card import Award
from .frozen import freeze_json
from .model import UNCHANGED, BoxFlag, BoxTotal, Progress, RuleAction, StateUpdate
from .yamlsource import NUMBER_LIMIT

__all__ = [
    "Broken",
    "Contract",
    "HookContract",
    "returns",
    "contract_of",
    "NUMBER_LIMIT",
    "ITEMS_LIMIT",
    "TEXT_LIMIT",
    "SETTLEMENT_LIMIT",
]

#: Most items one result may hold (an iterable is read no further: a generator may never end).
ITEMS_LIMIT = 10_000
#: Longest text a hook may return (a line shown to a player, a name, an explanation).
TEXT_LIMIT = 1_000
#: Largest amount, and largest denominator, of one player's settlement (a stake times a difference of totals).
SETTLEMENT_LIMIT = NUMBER_LIMIT**2
#: The attribute `returns` sets on a hook specification.
ATTR = "dicecup_contract"

Args = Mapping[str, Any]  # the arguments the hook (or function) was called with, by name


class Broken(Exception):
    """What a returned value breaks, in words (the engine turns it into a ContractError naming the plugin):
    `why` about the part at fault, `path` where that part is in the value ("item 2", "points")."""

    def __init__(self, why: str, path: tuple[str, ...] = ()) -> None:
        super().__init__(why)
        self.why, self.path = why, path

    def within(self, step: str) -> Broken:
        """The same fault, one step further inside the value."""
        return Broken(self.why, (step, *self.path))


class Contract:
    """A kind of value: `text` says it in words; `check(value, args, rules)` returns it as the engine keeps
    it or raises Broken. `args` are the call's arguments (a contract about box ids reads the variant there),
    `rules` the enabled rules of the plugin that answered."""

    text = "anything"

    def check(self, value: Any, args: Args, rules: tuple[str, ...] = ()) -> Any:
        return value

    def __repr__(self) -> str:
        return f"<contract: {self.text}>"


def _kind(value: Any) -> str:
    """`value` and its type, bounded, for saying what was found."""
    return f"{shown(value, 40)} ({type(value).__name__})"


def _a(noun: str) -> str:
    """`noun` with its indefinite article."""
    return f"{'an' if noun[:1].lower() in 'aeiou' else 'a'} {noun}"


def _variant(args: Args) -> Any:
    """The variant a call is about: its `variant` argument, else its context's."""
    variant = args.get("variant")
    if variant is None:
        ctx = args.get("ctx")
        variant = getattr(ctx, "variant", None) if ctx is not None else None
    return variant


class _Anything(Contract):
    text = "any value"


class _Nothing(Contract):
    text = "nothing (None)"

    def check(self, value: Any, args: Args, rules: tuple[str, ...] = ()) -> Any:
        if value is not None:
            raise Broken(f"{_kind(value)}, where nothing is expected")
        return None


class Maybe(Contract):
    """None, or what `inner` accepts."""

    def __init__(self, inner: Contract) -> None:
        self.inner = inner
        self.text = f"{inner.text}, or None"

    def check(self, value: Any, args: Args, rules: tuple[str, ...] = ()) -> Any:
        return None if value is None else self.inner.check(value, args, rules)


class Whole(Contract):
    """A whole number from `low` to `high`: an int (or a numpy integer), never a bool or a float.

    Plugins' scores, points and counts are held within ±`NUMBER_LIMIT`, the bound of every number in a variant
    file, so that totals stay exact in the solver's 64-bit integers and floats. A float is refused even when
    whole (12.0): it is a division or a rounding that would go wrong on some other roll."""

    def __init__(self, low: int, high: int, text: str | None = None) -> None:
        self.low, self.high = low, high
        self.text = text or f"a whole number from {low:,} to {high:,}"

    def check(self, value: Any, args: Args, rules: tuple[str, ...] = ()) -> Any:
        if type(value) is int and self.low <= value <= self.high:
            return value
        if isinstance(value, bool):
            raise Broken(f"{value} (bool), not an int")
        if isinstance(value, float):
            raise Broken(f"{_kind(value)}, not an int")
        if not isinstance(value, numbers.Integral):
            raise Broken(f"{_kind(value)}, not a whole number")
        number = int(value)
        if not self.low <= number <= self.high:
            raise Broken(f"{shown(number)}, out of the range {self.low:,} to {self.high:,}")
        return number


class Flag(Contract):
    """True or False (not 0, 1 or other values that are merely truthy)."""

    text = "True or False"

    def check(self, value: Any, args: Args, rules: tuple[str, ...] = ()) -> Any:
        if value is True or value is False:
            return value
        raise Broken(f"{_kind(value)}, not True or False")


class Text(Contract):
    """One line of printable text (a str: no newline, tab or terminal escape) of at most `limit` characters
    (not empty with `empty=False`): it is shown to players, on one line of a message or of the terminal."""

    def __init__(self, what: str = "text", limit: int = TEXT_LIMIT, empty: bool = True) -> None:
        self.limit, self.empty, self.what = limit, empty, what
        self.text = f"{what} (one line, a str{'' if empty else ', not empty'}, at most {limit:,} characters)"

    def check(self, value: Any, args: Args, rules: tuple[str, ...] = ()) -> Any:
        phrase = value if type(value) is Phrase else None  # kept whole: a front end says it in its language
        if type(value) is not str:
            if not isinstance(value, str):
                raise Broken(f"{_kind(value)}, not {self.what} (a str)")
            value = str.__str__(value)  # a subclass of str: its text alone, as a plain str
        if len(value) > self.limit:
            raise Broken(f"{self.what} of {len(value):,} characters, longer than {self.limit:,}")
        if not value and not self.empty:
            raise Broken(f"empty {self.what}")
        if not value.isprintable():
            raise Broken(f"{shown(value, 40)}, {self.what} holding a newline or another control character")
        return value if phrase is None else phrase


class OneOf(Contract):
    """What the first of `options` that accepts the value accepts."""

    def __init__(self, *options: Contract, text: str) -> None:
        self.options, self.text = options, text

    def check(self, value: Any, args: Args, rules: tuple[str, ...] = ()) -> Any:
        for option in self.options:
            try:
                return option.check(value, args, rules)
            except Broken:
                continue
        raise Broken(f"{_kind(value)}, not {self.text}")


def _items(value: Any, what: str) -> list[Any] | tuple[Any, ...]:
    """The items of an iterable result (a list, a tuple, a set, a generator), at most ITEMS_LIMIT of them;
    Broken for text, a mapping (ambiguous: its keys?) or a value that is not iterable."""
    if type(value) is tuple or type(value) is list:
        items = value
    else:
        if isinstance(value, (str, bytes, bytearray, Mapping)):
            raise Broken(f"{_kind(value)}, not a collection of {what} (text and mappings are not)")
        try:
            items = list(islice(iter(value), ITEMS_LIMIT + 1))
        except Broken:
            raise
        except TypeError:
            raise Broken(f"{_kind(value)}, not a collection of {what}") from None
    if len(items) > ITEMS_LIMIT:
        raise Broken(f"{type(value).__name__} of more than {ITEMS_LIMIT:,} {what}")
    return items


class Items(Contract):
    """An iterable (list, tuple, set, generator; not text or a mapping) of values `item` accepts, as a tuple."""

    def __init__(self, item: Contract, what: str) -> None:
        self.item, self.what = item, what
        self.text = f"an iterable of {what}"

    def check(self, value: Any, args: Args, rules: tuple[str, ...] = ()) -> Any:
        if not value and (type(value) is list or type(value) is tuple):  # (nothing to add: the commonest answer)
            return ()
        items = _items(value, self.what)
        if not items:
            return ()
        out = []
        check = self.item.check
        for i, item in enumerate(items):
            try:
                out.append(check(item, args, rules))
            except Broken as exc:
                raise exc.within(f"item {i}") from None
        return tuple(out)


class BoxIds(Contract):
    """Ids of the boxes of the variant the call is about (its sheet's row ids for a column-scope rule),
    as a frozenset."""

    text = "a collection of this variant's box ids"

    def check(self, value: Any, args: Args, rules: tuple[str, ...] = ()) -> Any:
        known = _variant(args)._box_by_id
        if type(value) is frozenset or type(value) is set or type(value) is tuple or type(value) is list:
            try:
                ids = frozenset(value)
            except TypeError:
                raise Broken(f"{_kind(value)}, holding a value that is not a box id") from None
            if all(b in known for b in ids):  # (set-like `<=` on a dict's keys would build a set)
                return ids
        items = _items(value, "box ids")
        for item in items:
            if type(item) is not str:
                raise Broken(f"{_kind(item)}, not a box id (a str)")
            if item not in known:
                raise Broken(f"{shown(item)}, not a box of {shown(_variant(args).id)}")
        return frozenset(items)


class BoxId(Contract):
    """The id of one box of the variant the call is about."""

    text = "one of this variant's box ids"

    def check(self, value: Any, args: Args, rules: tuple[str, ...] = ()) -> Any:
        variant = _variant(args)
        if type(value) is not str:
            raise Broken(f"{_kind(value)}, not a box id (a str)")
        if value not in variant._box_by_id:
            raise Broken(f"{shown(value)}, not a box of {shown(variant.id)}")
        return value


class BoxGroup(Contract):
    """Distinct box ids of the variant the call is about, at least one, as a tuple."""

    text = "distinct box ids of this variant (at least one)"

    def check(self, value: Any, args: Args, rules: tuple[str, ...] = ()) -> Any:
        ids = tuple(_BOX.check(b, args) for b in _items(value, "box ids"))
        if not ids:
            raise Broken(f"{_kind(value)}, a group of no boxes")
        if len(set(ids)) != len(ids):
            raise Broken(f"{shown(ids)}, a group that names a box twice")
        return ids


_BOX = BoxId()


class OwnRule(Contract):
    """The name of one of the enabled rules of the plugin that answered."""

    text = "the name of one of the plugin's enabled rules"

    def check(self, value: Any, args: Args, rules: tuple[str, ...] = ()) -> Any:
        if type(value) is not str or value not in rules:
            mine = ", ".join(rules) or "none"
            raise Broken(f"{_kind(value)}, not one of its enabled rules ({mine})")
        return value


class Json(Contract):
    """JSON data (None, true/false, numbers, text, lists, text-keyed mappings), made immutable."""

    def __init__(self, what: str) -> None:
        self.what = what
        self.text = f"{what} (JSON data)"

    def check(self, value: Any, args: Args, rules: tuple[str, ...] = ()) -> Any:
        if value is UNCHANGED:
            return value
        try:
            return freeze_json(value, self.what)
        except (ValueError, RecursionError) as exc:
            raise Broken(shown(str(exc), 200).strip("'\"")) from None


class Record(Contract):
    """An instance of `cls` whose fields each satisfy their contract (the same object when nothing changed)."""

    def __init__(self, cls: type, text: str, **fields: Contract) -> None:
        self.cls, self.fields, self.text = cls, fields, text

    def check(self, value: Any, args: Args, rules: tuple[str, ...] = ()) -> Any:
        if not isinstance(value, self.cls):
            raise Broken(f"{_kind(value)}, not {_a(self.cls.__name__)}")
        changed = {}
        for name, contract in self.fields.items():
            try:
                got = getattr(value, name)
            except AttributeError:
                raise Broken(f"{_a(self.cls.__name__)} without {name}") from None
            try:
                new = contract.check(got, args, rules)
            except Broken as exc:
                raise exc.within(name) from None
            if new is not got:
                changed[name] = new
        if not changed:
            return value
        return self.cls(**{name: changed.get(name, getattr(value, name)) for name in self.fields})


class MappingOf(Contract):
    """A mapping (at most ITEMS_LIMIT entries) whose keys and values satisfy their contracts, as a dict."""

    def __init__(self, key: Contract, value: Contract, text: str) -> None:
        self.key, self.value, self.text = key, value, text

    def check(self, value: Any, args: Args, rules: tuple[str, ...] = ()) -> Any:
        if not isinstance(value, Mapping):
            raise Broken(f"{_kind(value)}, not a mapping")
        if len(value) > ITEMS_LIMIT:
            raise Broken(f"a mapping of more than {ITEMS_LIMIT:,} entries")
        out = {}
        for k, v in value.items():
            try:
                key = self.key.check(k, args, rules)
            except Broken as exc:
                raise exc.within("key") from None
            try:
                out[key] = self.value.check(v, args, rules)
            except Broken as exc:
                raise exc.within(shown(key, 40)) from None
        return out


class Settlement(Contract):
    """What each player of `totals` receives (negative: pays): every player once, amounts that are whole
    numbers, Fractions or finite floats within ±SETTLEMENT_LIMIT, summing to zero (floats: to rounding)."""

    text = (
        "a mapping of every player in `totals` to the amount received (an int, a Fraction or a finite float), "
        "the amounts summing to zero"
    )

    def check(self, value: Any, args: Args, rules: tuple[str, ...] = ()) -> Any:
        if not isinstance(value, Mapping):
            raise Broken(f"{_kind(value)}, not a mapping of player to amount")
        players = list(args["totals"])
        if len(value) > len(players) or set(value) != set(players):
            missing = [p for p in players if p not in value]
            extra = [k for k in islice(value, len(players) + 1) if k not in players]
            raise Broken(
                f"{shown(value)}, which does not name every player once"
                + (f" (missing: {shown(missing)})" if missing else "")
                + (f" (not players: {shown(extra)})" if extra else "")
            )
        out: dict[str, Any] = {}
        exact = Fraction(0)
        floats = 0.0
        largest = 0.0
        for player in players:
            amount = value[player]
            if isinstance(amount, bool) or not isinstance(amount, (numbers.Rational, float)):
                raise Broken(f"{_kind(amount)}, not a number", (shown(player, 40),))
            if isinstance(amount, float):
                if not math.isfinite(amount) or abs(amount) > SETTLEMENT_LIMIT:
                    raise Broken(f"{shown(amount)}, not a finite amount within ±10**18", (shown(player, 40),))
                floats += amount
                largest = max(largest, abs(amount))
                out[player] = amount
            else:
                rational = Fraction(amount)  # (exact: an int, a Fraction or another Rational)
                if abs(rational) > SETTLEMENT_LIMIT or rational.denominator > SETTLEMENT_LIMIT:
                    raise Broken(f"{shown(amount)}, not an amount within ±10**18", (shown(player, 40),))
                exact += rational
                largest = max(largest, float(abs(rational)))
                out[player] = int(rational) if isinstance(amount, numbers.Integral) else rational
        if floats:  # (floats sum to zero up to their rounding)
            off = float(exact) + floats
            if abs(off) > 1e-9 * max(1.0, largest):
                raise Broken(f"{shown(value)}, whose amounts sum to {off}, not 0")
        elif exact != 0:
            raise Broken(f"{shown(value)}, whose amounts sum to {exact}, not 0")
        return out


class Combination(Contract):
    """The dice that form a pattern: some of the roll's dice (a sub-multiset), as a tuple."""

    text = "the dice of the roll that form the combination (a tuple of die values)"

    def check(self, value: Any, args: Args, rules: tuple[str, ...] = ()) -> Any:
        roll = args["roll"]
        dice = roll.dice
        if type(value) is tuple and len(value) <= len(dice):  # (the commonest answers: checked at once)
            if value == dice:
                return value
            counts = roll.counts
            faces = len(counts)
            if all(type(d) is int and 0 < d < faces and value.count(d) <= counts[d] for d in value):
                return value
        items = _items(value, "die values")
        counts = list(roll.counts)
        for d in items:
            if type(d) is not int:
                if isinstance(d, bool) or not isinstance(d, numbers.Integral):
                    raise Broken(f"die {_kind(d)}, not a whole number")
                d = int(d)
            if not 0 < d < len(counts) or counts[d] == 0:
                raise Broken(f"{shown(tuple(items))}, not dice of the roll {shown(dice)}")
            counts[d] -= 1
        return tuple(int(d) for d in items)


class Function(Contract):
    """A callable."""

    text = "a function"

    def check(self, value: Any, args: Args, rules: tuple[str, ...] = ()) -> Any:
        if not callable(value):
            raise Broken(f"{_kind(value)}, not a function")
        return value


class BotObject(Contract):
    """An object with a `choose(state)` method."""

    text = "a bot: an object with a method choose(state) returning one of state.legal_actions()"

    def check(self, value: Any, args: Args, rules: tuple[str, ...] = ()) -> Any:
        try:
            choose = getattr(value, "choose", None)
        except Exception:
            choose = None
        if not callable(choose):
            raise Broken(f"{_kind(value)}, which has no method choose(state)")
        return value


class LegalAction(Contract):
    """One of the legal actions of the state the bot was asked about."""

    text = "one of state.legal_actions() (a Keep, a Score or a RuleAction the state offers)"

    def check(self, value: Any, args: Args, rules: tuple[str, ...] = ()) -> Any:
        state = args["state"]
        try:
            legal = value in state.legal_actions()
        except (TypeError, ValueError):  # an unhashable or uncomparable value
            legal = False
        if not legal:
            raise Broken(f"{_kind(value)}, not a legal action now")
        return value


class HookContract:
    """A hook's contract: what it returns (`result`) and what each function it registers returns (`registered`,
    by the name its messages use: "pattern", "scorer factory", "bot choose", ...)."""

    def __init__(self, result: Contract, registered: Mapping[str, Contract]) -> None:
        self.result = result
        self.registered = dict(registered)


def returns(result: Contract, **registered: Contract) -> Callable[[Any], Any]:
    """Decorator of a hook specification: the contract of what the hook returns, and of what the functions
    it registers return (keyword names use `_` for spaces: `scorer_factory=` is the "scorer factory")."""

    def mark(spec: Any) -> Any:
        setattr(spec, ATTR, HookContract(result, {k.replace("_", " "): c for k, c in registered.items()}))
        return spec

    return mark


def contract_of(spec: Any) -> HookContract:
    """The contract `returns` gave a hook specification (KeyError naming it when it has none: every hook has one)."""
    got = getattr(spec, ATTR, None)
    if not isinstance(got, HookContract):
        raise KeyError(f"hook {getattr(spec, '__name__', spec)!r} has no contract: give it one with @returns(...)")
    return got


# ---------------------------------------------------------------------------- the vocabulary hookspecs uses

ANYTHING = _Anything()
NOTHING = _Nothing()
FUNCTION = Function()
POINTS = Whole(-NUMBER_LIMIT, NUMBER_LIMIT)
COUNT = Whole(0, NUMBER_LIMIT)
ID = Text("an id", limit=200, empty=False)
TEXT = Text()
AWARD = Record(
    Award,
    "Award objects",
    id=ID,
    points=POINTS,
    name=Text("its name"),
    figure=Text("its figure", limit=200, empty=False),
    column=Maybe(Text("its column", limit=200)),
)
AWARDS = Items(AWARD, "Award(id, points, name) objects")
BOX_IDS = BoxIds()
BOX_FLAG = Record(BoxFlag, "BoxFlag objects", box=BoxId(), value=POINTS)
BOX_TOTAL = Record(BoxTotal, "BoxTotal objects", name=ID, boxes=BoxGroup())
PROGRESS = Record(Progress, "Progress objects", id=ID, cell=Text("its cell", limit=200), line=TEXT)
RULE_ACTION = Record(
    RuleAction, "RuleAction objects", rule=OwnRule(), name=Text("its name", limit=200, empty=False), arg=Json("its arg")
)
STATE_UPDATE = Record(StateUpdate, "a StateUpdate", turn=Json("the turn state"), player=Json("the player state"))
SETTLEMENT = Settlement()
COMBINATION = Combination()
BOT = BotObject()
LEGAL_ACTION = LegalAction()

__all__ += [
    "ANYTHING",
    "NOTHING",
    "FUNCTION",
    "POINTS",
    "COUNT",
    "ID",
    "TEXT",
    "AWARD",
    "AWARDS",
    "BOX_IDS",
    "BOX_FLAG",
    "BOX_TOTAL",
    "PROGRESS",
    "RULE_ACTION",
    "STATE_UPDATE",
    "SETTLEMENT",
    "COMBINATION",
    "BOT",
    "LEGAL_ACTION",
    "Maybe",
    "Whole",
    "Flag",
    "Text",
    "OneOf",
    "Items",
    "MappingOf",
    "Record",
    "Json",
]
