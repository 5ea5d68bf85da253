"""`UndoStack`: the states a `Game` can go back to, kept as prefixes of the shared move history.

Every state on the stack is a prefix of the moves that follow it, so the stack
keeps each state's history (shared, a pointer each) and a whole state only every
`CHECKPOINT` moves; a state is rebuilt by replaying the few moves since the
checkpoint before it. The top state is kept too (what a front end shows of the
move just made). A state a host put in place by hand (not reached by a move) is
kept whole, since no move leads to it.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, overload

from attrs import evolve

from .history import History

if TYPE_CHECKING:
    from .state import GameState

__all__ = ["UndoStack", "CHECKPOINT"]

#: Moves between two whole states kept on the stack (an undo replays fewer than this).
CHECKPOINT = 128


class UndoStack(Sequence["GameState"]):
    """The earlier states of a game, oldest first; reads as a sequence of `GameState`."""

    __slots__ = ("_tips", "_whole", "_whole_at", "_top")

    def __init__(self) -> None:
        self._tips: list[History] = []  # each state's history (the moves that lead to it)
        self._whole: dict[int, GameState] = {}  # index -> the state itself, every CHECKPOINT moves
        self._whole_at: list[int] = []  # the indices of `_whole`, ascending
        self._top: GameState | None = None  # the top state, when known

    def push(self, state: GameState, reached: bool) -> None:
        """Put `state` on top; `reached`: it follows the previous top by moves (not put in place by hand)."""
        i = len(self._tips)
        self._tips.append(state.history)
        self._top = state
        last = self._whole_at[-1] if self._whole_at else None
        if last is None or not reached or len(state.history) - len(self._whole[last].history) >= CHECKPOINT:
            self._whole[i] = state
            self._whole_at.append(i)

    def top_is_whole(self) -> bool:
        """Whether the top state is kept whole (put in place by hand, or a checkpoint): a state undone to that
        is pushed again must be kept whole again, since the moves may not lead to it."""
        return bool(self._whole_at) and self._whole_at[-1] == len(self._tips) - 1

    def pop(self) -> GameState:
        """Remove the top state and return it."""
        state = self[-1]
        i = len(self._tips) - 1
        del self._tips[i]
        if self._whole_at and self._whole_at[-1] == i:
            del self._whole[i]
            self._whole_at.pop()
        self._top = None
        return state

    def copy(self) -> UndoStack:
        """An independent stack with the same states (which are immutable, so shared)."""
        twin = UndoStack()
        twin._tips, twin._whole, twin._whole_at = list(self._tips), dict(self._whole), list(self._whole_at)
        twin._top = self._top
        return twin

    def __len__(self) -> int:
        return len(self._tips)

    @overload
    def __getitem__(self, index: int) -> GameState: ...

    @overload
    def __getitem__(self, index: slice) -> list[GameState]: ...

    def __getitem__(self, index: int | slice) -> GameState | list[GameState]:
        if isinstance(index, slice):
            return list(self)[index]
        n = len(self._tips)
        i = index + n if index < 0 else index
        if not 0 <= i < n:
            raise IndexError(f"the undo stack holds {n} states, not {index}")
        if i == n - 1 and self._top is not None:
            return self._top
        base = self._whole_at[bisect.bisect_right(self._whole_at, i) - 1]
        return _replayed(self._whole[base], self._tips[i])

    def __iter__(self) -> Iterator[GameState]:
        state: GameState | None = None
        for i, tip in enumerate(self._tips):
            state = self._whole[i] if i in self._whole else _replayed(state, tip)  # type: ignore[arg-type]
            yield state

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, (UndoStack, list, tuple)):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"UndoStack({len(self)} states)"

    def __getstate__(self) -> dict[str, Any]:
        """The whole states and, per stretch between them, its last history and each state's length."""
        stretches = []
        for k, start in enumerate(self._whole_at):
            end = self._whole_at[k + 1] if k + 1 < len(self._whole_at) else len(self._tips)
            stretches.append((start, self._tips[end - 1], [len(t) for t in self._tips[start:end]]))
        return {"whole": self._whole, "stretches": stretches}

    def __setstate__(self, data: dict[str, Any]) -> None:
        self._top = None
        self._whole = dict(data["whole"])
        self._whole_at = sorted(self._whole)
        self._tips = []
        for _start, last, lengths in data["stretches"]:
            nodes = {}
            node = last
            while True:  # the stretch's prefixes, walked once from its last history back to its first
                nodes[len(node)] = node
                if len(node) <= lengths[0]:
                    break
                node = node.before
            self._tips.extend(nodes[n] for n in lengths)


def _replayed(state: GameState, tip: History) -> GameState:
    """`state` after the moves of `tip` that follow its own history, sharing `tip` as its history."""
    done = len(state.history)
    if len(tip) == done:
        return state
    for move in tip.since(done):
        state = state.apply(move)
    return evolve(state, history=tip)
