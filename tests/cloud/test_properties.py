"""Property: any sequence of size calls and time advances keeps the group's books straight.

Target within [min, max]; a failed call changes nothing; instances listed match the target once the
delays (and any stockout) are over; ids are never reused; billing equals the running intervals the
events tell, so no instance is billed twice. The recording listener also asserts that no Node is
registered twice or deleted while absent.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kubetide.cloud import CloudProviderError, InstanceState

from .builders import World, fake_node, group, world

FAULTS: list[list[dict[str, Any]]] = [
    [],
    [{"type": "stockout", "at": 100, "until": 400}],
    [{"type": "stockout", "mode": "error", "at": 100, "until": 400}],
    [{"type": "unregistered", "count": 1}, {"type": "missingProviderID", "count": 1, "at": 50}],
    [{"type": "apiError", "at": 50, "until": 150}],
    [{"type": "nodeNotReady", "at": 120, "until": 300, "count": 2}],
]

ops = st.one_of(
    st.tuples(st.just("inc"), st.integers(1, 4)),
    st.tuples(st.just("dec"), st.integers(1, 3)),
    st.tuples(st.just("del"), st.lists(st.integers(0, 20), min_size=1, max_size=3), st.booleans()),
    st.tuples(st.just("adv"), st.floats(0, 150)),
    st.tuples(st.just("delobj"), st.integers(1, 2)),
)


@st.composite
def scenarios(draw: st.DrawFn) -> tuple[World, list[tuple[Any, ...]]]:
    lo = draw(st.integers(0, 3))
    hi = draw(st.integers(lo, lo + 6))
    initial = draw(st.integers(lo, hi))
    faults = draw(st.sampled_from(FAULTS))
    w = world(group(minSize=lo, maxSize=hi, initialSize=initial, faults=faults), seed=draw(st.integers(0, 5)))
    return w, draw(st.lists(ops, max_size=25))


def _apply(w: World, op: tuple[Any, ...]) -> None:
    ng = w.ng()
    if op[0] == "adv":
        w.run(w.engine.now + op[1])
        return
    if op[0] == "delobj":
        w.cloud.delete_node_objects("ng", op[1])
        return
    before = (ng.target_size(), ng.nodes())
    try:
        if op[0] == "inc":
            ng.increase_size(op[1])
        elif op[0] == "dec":
            ng.decrease_target_size(-op[1])
        else:
            instances = ng.nodes()
            if not instances:
                return
            nodes = [fake_node(instances[i % len(instances)].id) for i in op[1]]
            (ng.force_delete_nodes if op[2] else ng.delete_nodes)(nodes)
    except CloudProviderError:
        assert (ng.target_size(), ng.nodes()) == before


def _billed_from_events(w: World, initial: list[str], now: float) -> float:
    start = dict.fromkeys(initial, 0.0)
    end: dict[str, float] = {}
    for e in w.listener.events:
        pid = str(e.data["instance"])
        if e.reason == "InstanceCreated":
            assert pid not in start, "running twice"
            start[pid] = e.t
        elif e.reason == "InstanceTerminated":
            assert pid not in end, "terminated twice"
            end[pid] = e.t
    return sum(end.get(pid, now) - t for pid, t in start.items())


@settings(max_examples=150, deadline=None)
@given(scenarios())
def test_books_stay_straight(case: tuple[World, list[tuple[Any, ...]]]) -> None:
    w, operations = case
    ng = w.ng()
    initial = [i.id for i in ng.nodes()]
    seen: set[str] = set(initial)
    for op in operations:
        _apply(w, op)
        assert ng.min_size() <= ng.target_size() <= ng.max_size()
        live = [i for i in ng.nodes() if i.status.state is not InstanceState.Deleting]
        assert len(live) <= ng.target_size()
        ids = [i.id for i in ng.nodes()]
        assert len(ids) == len(set(ids))
        seen.update(ids)
    # Long after every delay and fault window: the listed instances are exactly the target.
    w.run(w.engine.now + 1000)
    instances = ng.nodes()
    assert all(i.status.state is not InstanceState.Deleting for i in instances)
    assert len(instances) == ng.target_size()
    now = w.engine.now
    seconds, cost = w.cloud.billing(now)["ng"]
    assert abs(seconds - _billed_from_events(w, initial, now)) < 1e-6
    assert abs(cost - seconds * 0.096 / 3600) < 1e-9
    created = [
        e.data["instance"] for e in w.listener.events if e.reason in ("InstanceCreated", "InstanceFailed")
    ]
    assert len(created) == len(set(created)) and not set(created) & set(initial)
