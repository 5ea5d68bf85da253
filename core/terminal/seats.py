"""Who sits at the table: humans by name, bots by kind, as `--player` writes them."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from attrs import frozen

from ..errors import DicecupError, shown

__all__ = ["HUMAN", "Seat", "parse_seats"]

HUMAN = "human"


@frozen
class Seat:
    """A player at the table: a name and who moves for it (`human` or a bot kind)."""

    name: str
    kind: str = HUMAN

    @property
    def is_human(self) -> bool:
        return self.kind == HUMAN

    @property
    def spec(self) -> str:
        """How the seat is written on the command line and in save files."""
        return HUMAN if self.is_human else f"bot:{self.kind}"

    @property
    def label(self) -> str:
        return self.name if self.is_human or self.name == self.kind else f"{self.name} (bot:{self.kind})"


def parse_seats(
    specs: Sequence[str] | None, bots: Sequence[str], check: Callable[[str], object] | None = None
) -> tuple[Seat, ...]:
    """Read `--player` values: `NAME` (a human), `bot:KIND` or `bot:KIND:NAME` (a bot of a kind in `bots`).

    A kind listed with an argument (`risk:THETA`, `Engine.bot_usage`) is written `bot:KIND:ARG` or
    `bot:KIND:ARG:NAME`; `check(kind)` (`Engine.bot_spec`) refuses a bad argument at once.
    """
    if not specs:
        return (Seat("you"),)
    seats: list[Seat] = []
    used: set[str] = set()
    takes = {b.partition(":")[0] for b in bots if ":" in b}
    for raw in specs:
        text = raw.strip()
        if text.lower().startswith("bot:"):
            kind, _, name = text[4:].partition(":")
            kind = kind.strip().lower()
            if kind not in {b.partition(":")[0] for b in bots}:
                raise DicecupError(
                    f"--player {shown(raw, 40)}: no bot {shown(kind, 40)}; bots: {', '.join('bot:' + b for b in bots)} "
                    "(a human player is just a name)"
                )
            if kind in takes:  # bot:KIND:ARG[:NAME]
                arg, _, name = name.partition(":")
                kind = f"{kind}:{arg.strip()}"
                if check is not None:
                    try:
                        check(kind)
                    except DicecupError as exc:
                        raise DicecupError(f"--player {shown(raw, 40)}: {exc}") from None
            name = name.strip()
            if not name:  # unnamed bots of one kind are numbered: greedy, greedy2, ...
                name, n = kind, 1
                while name in used:
                    n += 1
                    name = f"{kind}#{n}" if ":" in kind else f"{kind}{n}"  # risk:0.05#2, not risk:0.052
            seat = Seat(name, kind)
        else:
            if not text:
                raise DicecupError("--player needs a name (or bot:random / bot:greedy)")
            seat = Seat(text)
        if seat.name in used:
            raise DicecupError(f"two players are called {shown(seat.name)}; give each --player a different name")
        used.add(seat.name)
        seats.append(seat)
    return tuple(seats)
