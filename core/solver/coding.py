"""How the solver codes a card's class: one bit per filled box, plus a mixed-radix
digit per flagged box telling which declared value (if any) it holds."""

from __future__ import annotations

from ..language.model import Card, Variant
from .errors import SolverError

__all__ = ["ClassCoding"]


class ClassCoding:
    """Box positions, the rules' declared flag values, and the class code of a card."""

    def __init__(self, variant: Variant) -> None:
        self.box_ids: tuple[str, ...] = variant.box_ids
        self.nb = len(self.box_ids)
        self.bidx = {b: i for i, b in enumerate(self.box_ids)}
        values: dict[int, list[int]] = {}
        for flag in variant.state_flags():
            if flag.box not in self.bidx:
                raise SolverError(f"a rule declares a state flag on box {flag.box!r}, which {variant.id} does not have")
            vals = values.setdefault(self.bidx[flag.box], [])
            if flag.value not in vals:
                vals.append(int(flag.value))
        self.flag_values: dict[int, tuple[int, ...]] = {b: tuple(v) for b, v in sorted(values.items())}
        self.radix = [0] * self.nb
        r = 1
        for b, declared in self.flag_values.items():
            self.radix[b] = r
            r *= len(declared) + 1
        self.n_flagcodes = r

    def digit_of(self, b: int, score: int) -> int:
        """The flag digit a box gets when filled with `score` (0: no declared value)."""
        vals = self.flag_values.get(b)
        if not vals or score not in vals:
            return 0
        return vals.index(score) + 1

    def class_of_card(self, card: Card) -> int:
        """The class code of a real card."""
        code = 0
        for box, score in card.scores.items():
            b = self.bidx[box]
            code |= 1 << b
            code += (self.digit_of(b, score) * self.radix[b]) << self.nb
        return code
