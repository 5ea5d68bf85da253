"""The advisor's kept score and legality tables: made per variant, kept beside its cached table, recalled.

Score tables memoise what the rules score for each card class they tell apart, legality tables which boxes
they allow; learned as cards arrive, they let a card's turn be scored by look-ups instead of the engine, and
`keep_tables` / `recall_tables` carry them across processes. The solve's complete tables (`card_tables`),
kept beside the cached table too, are read back here.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..language.model import Card, Variant
from ..numeric.coding import EMPTY, ClassCoding
from ..numeric.tables import LegalTables, ScoreTables, Untabulable
from . import card_tables, learned
from .advisor_memory import memory_of
from .card_tables import CardTables

__all__ = ["MAX_TABLE_BYTES", "TABLES_KIND", "TABLES_LAYOUT", "keep_tables", "known_scores", "recall_tables"]


TABLES_KIND = "advice-tables"
TABLES_LAYOUT = 2  # of what `keep_tables` writes: a file of another layout is refused


#: Score tables kept per variant at most. Each card class the rules tell apart holds a whole table (Triple
#: Yahtzee's bonus and joker read a dozen boxes, so classes keep coming); past this, the engine answers.
MAX_TABLE_BYTES = 256 << 20


def tables_of(v: Variant) -> tuple[ScoreTables, LegalTables, np.ndarray]:
    """The variant's score and legality tables (made empty at first use) and each box's multiplier."""
    memory = memory_of(v)
    got = memory.tables
    if got is None or got[0].variant.hooks is not v.hooks:
        got = memory.tables = (
            ScoreTables(v, [b.id for b in v.declared_bonuses]),
            LegalTables(v),
            np.array([v.multiplier(b) for b in v.box_ids], dtype=np.int64),
        )
    return got


def class_of(v: Variant, scores: ScoreTables, vals: np.ndarray) -> tuple[int, np.ndarray, np.ndarray]:
    """`ScoreTables.card` of the card row vals[0]; Untabulable where the tables cannot answer for `v`."""
    got = scores.card(vals[0])
    if scores.nbytes > MAX_TABLE_BYTES:  # the rules read so much of the card that classes keep coming
        memory_of(v).tables = None
        raise Untabulable(f"the score tables grew past {MAX_TABLE_BYTES >> 20} MiB; the engine answers from here on")
    if len(scores.award_ids) > len(v.declared_bonuses):
        raise Untabulable("a rule awards an undeclared id, whose figure the tables do not know: the engine values it")
    return got


def box_points(v: Variant, box_scores: np.ndarray, shaped: np.ndarray, mult: np.ndarray) -> np.ndarray:
    """What scoring a box adds (`box_scores` [..., boxes]; `shaped` the score tables' rows [..., boxes, columns]):
    its score times its column's multiplier, plus the score-figure awards."""
    points = box_scores * mult
    for a, bonus in enumerate(v.declared_bonuses):
        if bonus.figure == "score":
            points += shaped[..., 1 + a]
    return points


def _learned(v: Variant) -> tuple[int, int, int]:
    """How much the variant's tables hold (score classes, legal classes, per-roll answers): what grows."""
    got = memory_of(v).tables
    if got is None:
        return (0, 0, 0)
    scores, legal, _ = got
    return len(scores.traced.tables), len(legal.simple), int(legal.known[: legal.n_dep].sum())


def known_scores(v: Variant, card: Card, box: str) -> set[int] | None:
    """Every score `box` can get on `card` (any roll, first roll or not), from the variant's score tables where
    they know the card's class (kept beside the table and recalled, or learned in this process), else from the
    solve's complete tables (`card_tables`, recalled); None where neither knows it (nothing is learned here:
    the caller asks the engine)."""
    memory = memory_of(v)
    got = memory.tables
    if got is not None and got[0].variant.hooks is v.hooks:
        scores = got[0]
        row = np.full(len(v.box_ids), EMPTY, dtype=np.int64)
        for b, score in card.scores.items():
            row[scores.facts.index[b]] = score
        known = scores.known_scores(row, scores.facts.index[box])
        if known is not None:
            return known
    made = memory.card_tables
    if made is not None and made[0] is not None:
        complete = made[0][0]
    else:
        complete = memory.recalled[0] if memory.recalled is not None else None
    if complete is None:
        return None
    coding = memory.coding
    if coding is None:  # what the complete tables are keyed on (no solve needed; none kept where boxes
        coding = memory.coding = ClassCoding(v)  # are interchangeable)
    if len(complete.point_row[0]) != coding.nb:
        return None
    return complete.scores(coding.class_of_card(card), coding.bidx[box])


def recall_tables(v: Variant, warn: Callable[[str], None] | None = None) -> bool:
    """Read the score and legality tables kept beside the variant's cached table (`keep_tables`), so that the
    process's first card needs no engine call; True when they were there and fit. Where they are not,
    the tables are learned from the first card on (no engine-scored first cards): `keep_tables` then keeps
    them. A file that fails its signature, is stale or does not fit is deleted (`learned.recall`)."""
    memory = memory_of(v)
    if memory.card_tables is None:  # read now, to say what is wrong; checked against a solution at use
        memory.recalled = (recalled_card_tables(v, warn),)
    scores, legal, _ = tables_of(v)  # made: the tables answer from the first card (`tables_answer`)
    if len(scores.traced.tables) or len(legal.simple):
        return False

    def restore(meta: dict, arrays: dict) -> None:
        try:
            scores.restore(meta, {k[2:]: a for k, a in arrays.items() if k.startswith("s_")})
            legal.restore({k[2:]: a for k, a in arrays.items() if k.startswith("l_")})
        except Exception:
            memory.tables = None  # half restored: start empty
            raise

    if not learned.recall(v, TABLES_KIND, TABLES_LAYOUT, restore, warn):
        return False
    memory.kept = _learned(v)
    return True


def keep_tables(v: Variant, warn: Callable[[str], None] | None = None) -> None:
    """Keep the variant's score and legality tables beside its cached table (signed as it is) when they
    learned something since they were read or kept; nothing where the tables do not answer for it."""
    memory = memory_of(v)
    if memory.tables is None or memory.untabulable or _learned(v) == memory.kept:
        return
    scores, legal, _ = memory.tables
    meta, score_arrays = scores.state()
    arrays = {f"s_{k}": a for k, a in score_arrays.items()} | {f"l_{k}": a for k, a in legal.state().items()}
    learned.keep(v, TABLES_KIND, TABLES_LAYOUT, meta, arrays, warn)
    memory.kept = _learned(v)


def recalled_card_tables(v: Variant, warn: Callable[[str], None] | None) -> CardTables | None:
    """The `card_tables` kept beside the variant's cached table (`cache.load_or_solve` keeps them), or None
    (none there, not signed by this user, stale, or not fitting: a bad file is deleted, said through `warn`)."""
    from . import cache

    got = cache.load_arrays(v, card_tables.KIND, warn, private=True)  # (indices a kernel follows: copied)
    if got is None:
        return None
    meta, arrays = got
    try:
        if meta.get("layout") != card_tables.LAYOUT:
            raise ValueError("another layout")
        return CardTables.from_arrays(arrays, len(v.box_ids), len(v.all_rolls()))
    except ValueError as exc:
        (warn or (lambda message: None))(f"the kept {card_tables.KIND} do not fit ({exc}); they are not used")
        try:
            cache.arrays_path(v, card_tables.KIND).unlink(missing_ok=True)
        except OSError:
            pass
        return None
