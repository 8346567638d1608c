"""The removal simulation tries empty nodes first, then, in each part, the nodes unneeded last loop
first, in upstream's stable order otherwise: the fast ordering equals that sort."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from kubetide.cluster.loop.scaledown_step import _empty_then_unneeded

_names = st.lists(st.sampled_from([f"n{i}" for i in range(30)]), unique=True, max_size=30)


@given(names=_names, data=st.data())
def test_order_is_upstreams_stable_sort(names: list[str], data: st.DataObject) -> None:
    pods = {
        n: data.draw(st.sampled_from([(), ("p",), ("p", "q")])) for n in names if data.draw(st.booleans())
    }
    unneeded = {n: 0.0 for n in names if data.draw(st.booleans())}
    expected = sorted(names, key=lambda n: (bool(pods.get(n)), n not in unneeded))
    assert _empty_then_unneeded(names, pods, unneeded) == expected  # type: ignore[arg-type]


def test_empty_first_then_unneeded_first() -> None:
    names = ["busy", "busy-unneeded", "empty", "empty-unneeded"]
    pods = {"busy": ("p",), "busy-unneeded": ("p",), "empty": (), "empty-unneeded": ()}
    unneeded = {"busy-unneeded": 1.0, "empty-unneeded": 1.0}
    assert _empty_then_unneeded(names, pods, unneeded) == [  # type: ignore[arg-type]
        "empty-unneeded",
        "empty",
        "busy-unneeded",
        "busy",
    ]
