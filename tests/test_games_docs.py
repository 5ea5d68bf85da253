"""The Games pages of the docs (docs/games/) played against the engine, so they cannot drift from the rules.

Every example table on a page is run here: a roll scored in a box, a box a roll may
or may not go in, a bonus a card earns, the payments of a match. Every row of every
built-in variant needs an example, every option its line, every variant its page.
The tables' formats are described in docs/games/index.md ("How to read these pages").
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import pytest

from dicecup import Card, Engine, Variant

ROOT = Path(__file__).resolve().parents[1]
GAMES = ROOT / "docs" / "games"

# ----------------------------------------------------------------------------- reading the pages


@dataclass(frozen=True)
class Row:
    """One row of a table: its cells by lower-cased header, and where it is."""

    page: str
    line: int
    cells: dict[str, str]

    def __str__(self) -> str:
        return f"docs/games/{self.page}.md:{self.line}"

    def get(self, column: str) -> str:
        return self.cells.get(column, "")


@dataclass(frozen=True)
class Table:
    page: str
    line: int
    header: tuple[str, ...]
    rows: tuple[Row, ...]


def _split(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def read_tables(page: str, text: str) -> list[Table]:
    """Every Markdown table of a page (header, separator, rows), with line numbers."""
    lines = text.splitlines()
    out: list[Table] = []
    i = 0
    while i < len(lines):
        if lines[i].lstrip().startswith("|") and i + 1 < len(lines) and re.match(r"^\s*\|[\s:|-]+\|\s*$", lines[i + 1]):
            header = tuple(c.lower() for c in _split(lines[i]))
            start, i = i + 1, i + 2
            rows = []
            while i < len(lines) and lines[i].lstrip().startswith("|"):
                cells = _split(lines[i])
                if len(cells) != len(header):
                    raise AssertionError(
                        f"docs/games/{page}.md:{i + 1}: {len(cells)} cells under {len(header)} headers"
                    )
                rows.append(Row(page, i + 1, dict(zip(header, cells, strict=True))))
                i += 1
            out.append(Table(page, start, header, tuple(rows)))
        else:
            i += 1
    return out


#: The example tables, by the columns that name them; a table with a Roll, Card or Totals column must be one.
KINDS = {
    "score": {"roll", "box", "score"},
    "allowed": {"roll", "box", "allowed"},
    "bonus": {"card", "bonus", "points"},
    "settlement": {"totals", "payments"},
}
OPTIONAL = {
    "score": {"card", "first roll", "options", "bonus", "why"},
    "allowed": {"card", "first roll", "options", "why"},
    "bonus": {"options", "why"},
    "settlement": {"options", "why"},
}


def kind_of(table: Table) -> str | None:
    """Which example table this is (None: not an example table); AssertionError for a malformed one."""
    header = set(table.header)
    for kind, needed in KINDS.items():
        if needed <= header:
            extra = header - needed - OPTIONAL[kind]
            assert not extra, (
                f"docs/games/{table.page}.md:{table.line}: unknown columns {sorted(extra)} in a {kind} table"
            )
            return kind
    assert not header & {"roll", "card", "totals"}, (
        f"docs/games/{table.page}.md:{table.line}: a table with columns {table.header} is no known example table"
    )
    return None


def pages() -> list[str]:
    return sorted(p.stem for p in GAMES.glob("*.md") if p.stem != "index")


def page_text(page: str) -> str:
    return (GAMES / f"{page}.md").read_text(encoding="utf-8")


def examples(kind: str, page_ids: list[str] | None = None) -> Iterator[Row]:
    for page in page_ids if page_ids is not None else pages():
        for table in read_tables(page, page_text(page)):
            if kind_of(table) == kind:
                yield from table.rows


# ----------------------------------------------------------------------------- reading the cells

TICKS = re.compile(r"`([^`]*)`")
NONE = {"", "-", "—", "none", "empty", "no"}


def plain(cell: str) -> str:
    return cell.replace("`", "").replace("*", "").strip()


def ident(cell: str) -> str:
    """The first `id` in backticks (a box, bonus or option id)."""
    found = TICKS.search(cell)
    assert found, f"expected an `id` in backticks, got {cell!r}"
    return found.group(1)


def number(cell: str) -> int:
    text = plain(cell).replace("−", "-")
    assert re.fullmatch(r"[+-]?\d+", text), f"expected a whole number, got {cell!r}"
    return int(text)


def dice(cell: str) -> tuple[int, ...]:
    text = ident(cell)
    assert re.fullmatch(r"\d+( \d+)*", text), f"expected dice like `3 3 3 5 5`, got {cell!r}"
    return tuple(int(d) for d in text.split())


def yes(cell: str) -> bool:
    text = plain(cell).lower()
    assert text in NONE | {"yes"}, f"expected yes or no, got {cell!r}"
    return text == "yes"


def options(cell: str) -> dict[str, str]:
    """`key=value` pairs, as `--option KEY=VALUE` takes them (the engine reads the strings as the CLI does)."""
    out = {}
    for item in TICKS.findall(cell):
        key, eq, value = item.partition("=")
        assert eq, f"expected `key=value`, got {item!r}"
        out[key.strip()] = value.strip()
    return out


def card(variant: Variant, cell: str) -> Card:
    """`box score` pairs (a row id means that row in every column): the boxes already filled."""
    if plain(cell).lower() in NONE:
        return Card()
    scores: dict[str, int] = {}
    for item in plain(cell).split(","):
        found = re.fullmatch(r"\s*([\w.]+)\s+([+-]?\d+)\s*", item.replace("−", "-"))
        assert found, f"expected `box score` pairs separated by commas, got {item!r} in {cell!r}"
        ref, value = found.group(1), int(found.group(2))
        assert variant.has_ref(ref), f"{variant.id} has no box or row {ref!r}"
        for box in variant.boxes_of(ref):
            scores[box] = value
    result = Card(scores)
    variant.check_card(result)
    return result


def awards(cell: str) -> dict[str, int]:
    """`bonus_id` +points pairs (nothing: no bonus)."""
    if plain(cell).lower() in NONE:
        return {}
    out = {}
    for item in cell.split(","):
        out[ident(item)] = number(TICKS.sub("", item))
    return out


def payments(cell: str) -> dict[str, Fraction]:
    out = {}
    for item in plain(cell).split(","):
        name, _, amount = item.strip().partition(" ")
        out[name] = Fraction(amount.strip().replace("−", "-"))
    return out


# ----------------------------------------------------------------------------- checking one example


@pytest.fixture(scope="module")
def builtins() -> Engine:
    return Engine(entry_points=False)


def variant_of(engine: Engine, row: Row) -> Variant:
    return engine.variant(row.page, options(row.get("options")))


def check_score(engine: Engine, row: Row) -> None:
    variant = variant_of(engine, row)
    box = ident(row.get("box"))
    before = card(variant, row.get("card"))
    assert box in variant.box_ids, f"{row}: {variant.id} has no box {box!r}"
    assert box not in before.scores, f"{row}: {box} is already filled on the card"
    got = variant.score(before, box, variant.roll_of(dice(row.get("roll"))), yes(row.get("first roll")))
    assert got.written == number(row.get("score")), f"{row}: the engine scores {got.written}"
    if "bonus" in row.cells:
        earned = {a.id: a.points for a in got.awards if a.figure == "score"}
        assert earned == awards(row.get("bonus")), f"{row}: the engine awards {earned}"


def check_allowed(engine: Engine, row: Row) -> None:
    variant = variant_of(engine, row)
    box = ident(row.get("box"))
    assert box in variant.box_ids, f"{row}: {variant.id} has no box {box!r}"
    before = card(variant, row.get("card"))
    legal = variant.legal_boxes(before, variant.roll_of(dice(row.get("roll"))), yes(row.get("first roll")))
    assert (box in legal) == yes(row.get("allowed")), f"{row}: the engine allows {', '.join(legal)}"


def check_bonus(engine: Engine, row: Row) -> None:
    variant = variant_of(engine, row)
    bonus = ident(row.get("bonus"))
    known = {b.id for b in variant.bonuses} | {b.id for b in variant.column_bonuses}
    assert bonus in known, f"{row}: {variant.id} has no bonus {bonus!r} (it has {', '.join(sorted(known))})"
    found = variant.end_bonuses(card(variant, row.get("card")))
    got = sum(a.points for a in found if a.id == bonus)
    assert got == number(row.get("points")), f"{row}: the engine awards {got}"


def check_settlement(engine: Engine, row: Row) -> None:
    variant = variant_of(engine, row)
    totals = {name: int(v) for name, v in payments(row.get("totals")).items()}
    got = dict(variant.settle(totals) or {})
    assert got == payments(row.get("payments")), f"{row}: the engine settles {got}"


CHECKS = {"score": check_score, "allowed": check_allowed, "bonus": check_bonus, "settlement": check_settlement}


EXAMPLES = [(kind, row) for kind in CHECKS for row in examples(kind)]


@pytest.mark.parametrize(("kind", "row"), EXAMPLES, ids=[f"{kind}:{row}" for kind, row in EXAMPLES])
def test_example(builtins, kind, row):
    CHECKS[kind](builtins, row)


# ----------------------------------------------------------------------------- the checks can fail

WRONG = """\
| Roll | Box | Score |
|---|---|---|
| `3 3 3 5 5` | `full_house` | 30 |

| Card | Roll | Box | Allowed | Options |
|---|---|---|---|---|
| `yahtzee 50` | `3 3 3 3 3` | `chance` | yes | `joker=forced` |

| Card | Bonus | Points |
|---|---|---|
| `ones 3, twos 6, threes 9, fours 12, fives 15, sixes 17` | `upper_bonus` | 35 |
"""


def test_a_wrong_example_fails(builtins):
    """A wrong score, legal box, bonus or settlement is caught, and so is a table of no known kind."""
    tables = read_tables("yahtzee", WRONG) + read_tables(
        "russian", "| Totals | Payments |\n|---|---|\n| ann 300, bob 250 | ann +40, bob -40 |\n"
    )
    assert [kind_of(t) for t in tables] == ["score", "allowed", "bonus", "settlement"]
    for table in tables:
        with pytest.raises(AssertionError, match="the engine"):
            CHECKS[str(kind_of(table))](builtins, table.rows[0])
    with pytest.raises(AssertionError, match="no known example table"):
        kind_of(read_tables("yahtzee", "| Roll | Box | Points |\n|---|---|---|\n| `1 1 1 1 1` | `ones` | 5 |")[0])


# ----------------------------------------------------------------------------- coverage of the rules


def test_every_builtin_variant_has_a_page(builtins):
    assert set(pages()) == set(builtins.variant_ids())


@pytest.mark.parametrize("page", pages())
def test_every_row_has_an_example(builtins, page):
    """A box added to a variant without an example on its page fails here."""
    variant = builtins.variant(page)
    shown = {variant.box(ident(r.get("box"))).row for r in examples("score", [page])}
    missing = [r for r in variant.rows if r not in shown]
    assert not missing, f"docs/games/{page}.md has no score example for {', '.join(missing)}"


@pytest.mark.parametrize("page", pages())
def test_every_bonus_has_an_example(builtins, page):
    """Each bonus is earned in an example: at the end (a bonus table) or when a roll is scored (a Bonus cell)."""
    variant = builtins.variant(page)
    shown = {ident(r.get("bonus")) for r in examples("bonus", [page])}
    shown |= {b for r in examples("score", [page]) if "bonus" in r.cells for b in awards(r.get("bonus"))}
    base = {b.split(".")[-1] for b in shown}
    declared = {b.id for b in variant.bonuses} | {b.id.split(".")[-1] for b in variant.column_bonuses}
    missing = sorted(declared - base)
    assert not missing, f"docs/games/{page}.md has no example earning {', '.join(missing)}"


def option_rows(page: str) -> list[Row]:
    return [
        row
        for table in read_tables(page, page_text(page))
        if {"option", "values", "default"} <= set(table.header)
        for row in table.rows
    ]


@pytest.mark.parametrize("page", pages())
def test_options_are_the_variants(builtins, page):
    """The options table lists exactly the variant's options, their values and defaults."""
    specs = {o.name: o for o in builtins.variant(page).option_specs}
    listed = {ident(r.get("option")): r for r in option_rows(page)}
    assert set(listed) == set(specs), (
        f"docs/games/{page}.md lists options {sorted(listed)}, the variant has {sorted(specs)}"
    )
    for name, row in listed.items():
        spec = specs[name]
        values = [v.split("=", 1)[-1] for v in TICKS.findall(row.get("values"))]
        assert values == [str(c).lower() for c in spec.choices], f"{row}: {name} takes {spec.choices}"
        assert ident(row.get("default")).split("=", 1)[-1] == str(spec.default).lower(), (
            f"{row}: default {spec.default}"
        )
        for value in values:  # each value is accepted as written after --option
            builtins.variant(page, {name: value})


@pytest.mark.parametrize("page", pages())
def test_card_tables_name_the_rows_and_columns_as_the_variant_does(builtins, page):
    """A card table (Id, Name, ...) and a columns table (Column, Name, ...) use the variant's names and ids."""
    variant = builtins.variant(page)
    seen = 0
    for table in read_tables(page, page_text(page)):
        for row in table.rows:
            ids = TICKS.findall(row.get("id") or row.get("column"))
            if table.header[:2] == ("id", "name") and len(ids) == 1:
                assert ids[0] in variant.rows, f"{row}: {page} has no row {ids[0]!r}"
                assert plain(row.get("name")) == variant.row(ids[0]).name, (
                    f"{row}: the variant calls it {variant.row(ids[0]).name}"
                )
                if "turn" in table.header:  # a forced order: the row's place on the card
                    assert number(row.get("turn")) == variant.rows.index(ids[0]) + 1, (
                        f"{row}: not its place on the card"
                    )
                seen += 1
            elif table.header[:2] == ("column", "name"):
                assert len(ids) == 1 and ids[0] in {c.id for c in variant.columns}, f"{row}: no column {ids}"
                assert plain(row.get("name")) == variant.column(ids[0]).name, f"{row}: the column's name"
                if "multiplier" in table.header:
                    assert number(row.get("multiplier")) == variant.column(ids[0]).multiplier, f"{row}: its multiplier"
                seen += 1
    assert seen, f"docs/games/{page}.md has no card table"


def test_index_lists_every_variant(builtins):
    """The index's table: a link to each page, and the dice and boxes of each game as the engine has them."""
    text = (GAMES / "index.md").read_text(encoding="utf-8")
    rows = [r for t in read_tables("index", text) if {"id", "dice", "boxes"} <= set(t.header) for r in t.rows]
    listed = {}
    for row in rows:
        link = re.search(r"\]\(([\w-]+)\.md\)", row.get("game"))
        assert link, f"{row}: the game's name links to its page"
        assert link.group(1) == ident(row.get("id")), f"{row}: the link goes to {link.group(1)}.md"
        listed[ident(row.get("id"))] = row
    assert len(rows) == len(listed), "a variant is listed twice"
    assert set(listed) == set(builtins.variant_ids())
    for vid, row in listed.items():
        variant = builtins.variant(vid)
        assert number(row.get("dice")) == variant.dice, row
        assert number(row.get("boxes")) == len(variant.boxes), row


ROLL = re.compile(r"`(\d(?: \d){3,})`")


@pytest.mark.parametrize("page", pages())
def test_every_roll_on_a_page_is_an_example(page):
    """A roll written in the prose is also in an example table, so it too is checked."""
    text = page_text(page)
    tested = {dice(r.get("roll")) for kind in ("score", "allowed") for r in examples(kind, [page])}
    for match in ROLL.finditer(text):
        roll = tuple(int(d) for d in match.group(1).split())
        line = text.count("\n", 0, match.start()) + 1
        assert roll in tested, f"docs/games/{page}.md:{line}: roll {match.group(0)} is in no example table"


# ----------------------------------------------------------------------------- no rules file outside the project


def test_no_tracked_file_names_the_old_rules_file():
    """The Games pages are the rules' reference: nothing tracked names the rules file they replaced."""
    name = "RULES" + ".md"
    cited = re.compile(r"\bRULES(\.md\b|\s+(section\b|\d))")  # the file, or one of its sections by number
    try:
        files = subprocess.run(
            ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, text=True, timeout=60, check=True
        ).stdout.split("\0")
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    found = []
    for path in filter(None, files):
        if path == "CHANGELOG.md" or not (ROOT / path).is_file():
            continue
        try:
            text = (ROOT / path).read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        found.extend(f"{path}:{n}" for n, line in enumerate(text.splitlines(), 1) if cited.search(line))
    assert not found, f"these lines cite {name}: {', '.join(found)}"
