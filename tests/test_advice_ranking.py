"""`advice.ranked`, the order every advice list is given in, against its definition as one sort."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from dicecup import Keep, Score
from dicecup.solver.advice import Option, ranked

# few distinct values, so that ties (between keeps, between boxes, and across) are common
_VALUE = st.sampled_from([0.0, 1.5, 2.0, 7.25, 10.0, -3.0])


@given(st.lists(_VALUE, max_size=12), st.lists(st.tuples(_VALUE, st.integers(0, 50)), max_size=12))
def test_options_come_best_first_a_box_before_a_keep_on_a_tie_else_as_listed(keep_values, box_entries):
    """Keeps are listed first, then boxes (as `advise` lists them); the oracle sorts by (-value, is a keep),
    which Python's stable sort leaves in listed order on a full tie."""
    actions = [Keep((1,) * (i % 5)) for i in range(len(keep_values))]
    actions += [Score(f"box{i}") for i in range(len(box_entries))]
    values = keep_values + [v for v, _ in box_entries]
    points: list[int | None] = [None] * len(keep_values) + [p for _, p in box_entries]
    order = sorted(range(len(values)), key=lambda i: (-values[i], points[i] is None))
    want = [Option(actions[i], values[i], n == 0, points[i]) for n, i in enumerate(order)]
    got = ranked(actions, values, points)
    assert got == want
    assert [o.action for o in got] == [o.action for o in want]  # the very same actions, in that order
    assert all(type(o) is Option for o in got)
