"""What the parts' sum misses: the worth of choosing the part after the roll, fitted per cell of a table.

A `Relaxation` values a card as if each turn were given to one part before its roll. The real game chooses
after, and that freedom is worth more the more boxes are open in several parts, and more or less while a
part's threshold (Yatzy's upper total against 63) is undecided. `fit` learns it as one number per cell
(`Relaxation.cells`: open boxes per part and threshold progress) from cards met in the strong bot's own games;
the table is kept beside the parts' tables as a signed record (`cache.save_record`).
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable

import numpy as np

from ..game.state import GameState
from ..locales import N_, Phrase
from ..numeric.coding import EMPTY
from ..numeric.tables import CardFacts
from ..progress import Reporter, task
from .relax import Relaxation, profile_cells
from .strong_turn import TurnPlanner

__all__ = ["fit", "load_or_fit", "FIT_VERSION", "FIT_STATES", "MAX_CELLS", "RECORD_KIND"]

FIT_VERSION = 5  # raised whenever the fit changes: a record of another version is fitted again
FIT_STATES = 2000  # turn starts sampled: games enough for about this many (at least 20 games, at most 200)
PROGRESS_SAMPLES = 3  # a table keyed on threshold progress too has more cells: this many times the turn starts
MAX_CELLS = 1_000_000  # profiles in a table: beyond this the plain sum is used
RECORD_KIND = "strong-correction"
FIT_SEED = 2026


def games_for(rel: Relaxation) -> int:
    """Self-play games to sample: about FIT_STATES turn starts, PROGRESS_SAMPLES times that for a table
    keyed on threshold progress too, whose cells are too many for fewer games to meet."""
    times = PROGRESS_SAMPLES if rel.steps else 1
    return max(20, min(200 * times, math.ceil(times * FIT_STATES / len(rel.ids))))


def fit(
    rel: Relaxation, games: int | None = None, seed: int = FIT_SEED, progress: Reporter | None = None
) -> np.ndarray:
    """The correction table of `rel` (one float per profile), fitted on `games` games of its plain-sum play.

    Bellman backups: the cards met, taken from the fewest open boxes up, each get the value of one turn played
    against the corrected estimate of what follows (`advice.turn_start_value`); a cell's number is the mean gap
    between that value and the parts' sum. A cell the games never met takes its profile's mean, and a profile
    they never met keeps zero: the plain sum, a real strategy's value where no rule crosses parts, so no
    freedom is counted that play did not show."""
    base = rel.corrected(None)
    planner = TurnPlanner(base)  # `best_move`'s moves, each turn scored once
    games = games_for(rel) if games is None else games
    rng = random.Random(seed)
    rows = []
    with task(progress, Phrase(N_("self-play games")), games, "games") as told:
        for _ in range(games):
            state = GameState.new(rel.variant, 1)
            while not state.over:
                if state.is_chance:
                    if state.rolls_used == 0:
                        rows.append(base.row_of(state.card)[0])
                    state = state.roll(rng)
                else:
                    state = state.apply(planner.best_move(state, rng))
            told.advance()
    vals = np.array(rows)
    cells = base.cells(vals)
    plain = base.values(vals)
    open_boxes = (vals == EMPTY).sum(axis=1)
    table = np.zeros(profile_cells(rel.shape))
    profiles = profile_cells(rel.profile_shape)
    per_profile = len(table) // profiles  # progress cells of one profile (profiles are the table's major axis)
    facts = CardFacts(rel.variant)  # a row back to its Card
    with task(progress, Phrase(N_("fitting")), len(rel.ids), "boxes") as told:
        for k in range(1, len(rel.ids) + 1):
            now = TurnPlanner(rel.corrected(table.copy()), planner)  # successors' cells (k - 1 open) are fitted
            sel = np.flatnonzero(open_boxes == k)
            gap = np.array([now.turn_start_value(facts.card(vals[i])) for i in sel]) - plain[sel]
            # a turn the recursion cannot play (only announced boxes left: the announcement is a rule action it
            # does not model) gives no target: such states are left out, as if play had not met them
            met = np.isfinite(gap)
            sel, gap = sel[met], gap[met]
            total = np.bincount(cells[sel], weights=gap, minlength=len(table))
            count = np.bincount(cells[sel], minlength=len(table))
            # a cell play never met takes its profile's mean over the progress met; a profile never met keeps
            # zero: the plain sum, a real strategy's value where no rule crosses parts, so no freedom is
            # counted that the games did not show
            by_profile = np.arange(len(table)) // per_profile
            p_total = np.bincount(by_profile, weights=total, minlength=profiles)[by_profile]
            p_count = np.bincount(by_profile, weights=count, minlength=profiles)[by_profile]
            seen = count > 0
            near = ~seen & (p_count > 0)
            table[seen] = total[seen] / count[seen]
            table[near] = p_total[near] / p_count[near]
            told.advance()
    return table


def load_or_fit(
    rel: Relaxation, *, progress: Reporter | None = None, warn: Callable[[str], None] | None = None, store: bool = True
) -> Relaxation:
    """`rel` with its correction: from its signed record, else fitted and recorded (`store`). A card with
    more profiles than MAX_CELLS keeps the plain sum."""
    if profile_cells(rel.shape) > MAX_CELLS:
        return rel.corrected(None)
    from .cache import load_record, save_record

    want = {"version": FIT_VERSION, "games": games_for(rel), "seed": FIT_SEED, "shape": list(rel.shape)}
    if store:
        got = load_record(rel.variant, RECORD_KIND, warn)
        table = _table(got, want, profile_cells(rel.shape))
        if table is not None:
            return rel.corrected(table)
    with task(
        progress, Phrase(N_("fitting bot strong's correction for {variant} (then kept)"), variant=rel.variant.id)
    ):
        table = fit(rel, games_for(rel), FIT_SEED, progress)
    if store:
        save_record(rel.variant, RECORD_KIND, {**want, "values": table.tolist()}, warn)
    return rel.corrected(table)


def _table(payload: dict | None, want: dict, cells: int) -> np.ndarray | None:
    """The table a record holds, if it was made as `want` says and holds `cells` finite numbers."""
    if payload is None or any(payload.get(k) != v for k, v in want.items()):
        return None
    values = payload.get("values")
    if not isinstance(values, list) or len(values) != cells:
        return None
    if not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in values):
        return None
    table = np.array(values, dtype=np.float64)
    return table if np.isfinite(table).all() and np.abs(table).max(initial=0.0) < 1e9 else None
