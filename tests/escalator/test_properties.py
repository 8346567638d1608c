"""Invariants of one Escalator run, over random groups, nodes and pods."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kubetide.escalator import AsgSnapshot, GroupMemory, ScaleLock
from kubetide.escalator.decision import escalator_scale_node_group
from kubetide.escalator.taints import escalator_bucket_nodes

from .builders import T0, group, nodes, pods


@st.composite
def worlds(draw: st.DrawFn) -> tuple:
    min_nodes = draw(st.integers(0, 4))
    max_nodes = draw(st.integers(min_nodes + 1, 12))
    slow = draw(st.integers(0, 3))
    g = group(
        min_nodes=min_nodes,
        max_nodes=max_nodes,
        taint_lower_capacity_threshold_percent=20,
        taint_upper_capacity_threshold_percent=50,
        scale_up_threshold_percent=70,
        slow_node_removal_rate=slow,
        fast_node_removal_rate=slow + draw(st.integers(0, 3)),
        soft_delete_grace_period="1m",
        hard_delete_grace_period="10m",
        scale_up_cool_down_period="2m",
        scale_on_starve=draw(st.booleans()),
    )
    untainted = draw(st.integers(min_nodes, max_nodes + 2))
    tainted = draw(st.integers(0, 4))
    listed = nodes(untainted, 1000, 1000) + nodes(tainted, 1000, 1000, prefix="t", tainted_at=T0 - 30)
    listed_pods = pods(draw(st.integers(0, 40)), draw(st.integers(0, 600)), draw(st.integers(0, 600)))
    total = len(listed)
    asg = AsgSnapshot(min_nodes, max(max_nodes + 4, total), total)
    return g, listed, listed_pods, asg


@settings(max_examples=200, deadline=None)
@given(worlds())
def test_one_run_respects_the_bounds(world: tuple) -> None:
    g, listed, listed_pods, asg = world
    d = escalator_scale_node_group(g, listed, listed_pods, asg, GroupMemory(), T0)
    buckets = escalator_bucket_nodes(listed)
    untainted = len(buckets.untainted)
    newly_tainted = [n for n in d.taint if n not in {t.name for t in buckets.tainted}]
    # Never taint more than the fast removal rate (or the over-max excess), nor below min_nodes.
    assert len(newly_tainted) <= max(g.fast_node_removal_rate, untainted - g.max_nodes, 0)
    assert untainted - len(newly_tainted) >= min(g.min_nodes, untainted)
    # Never ask the cloud past its max size; never untaint and taint in the same run.
    assert asg.target_size + d.increase <= asg.max_size
    assert not (d.untaint and d.taint)
    # Scale-up untaints before it asks the cloud: an increase means no tainted node was left over.
    if d.increase:
        assert len(d.untaint) == len(buckets.tainted)
    # Deletions are tainted nodes only.
    assert set(d.delete) <= {n.name for n in buckets.tainted} | {n.name for n in buckets.force_tainted}
    # Scale-down never takes untainted nodes below max_nodes' excess into a scale-up.
    if untainted > g.max_nodes:
        assert d.delta < 0


@settings(max_examples=100, deadline=None)
@given(worlds())
def test_a_held_lock_freezes_the_group(world: tuple) -> None:
    g, listed, listed_pods, asg = world
    memory = GroupMemory(lock=ScaleLock().locked(3, T0 - 60))
    d = escalator_scale_node_group(g, listed, listed_pods, asg, memory, T0)
    # The lock is checked after the early exits (nothing to do, below the minimum, no capacity).
    reached = (listed or listed_pods) and len(escalator_bucket_nodes(listed).untainted) >= g.min_nodes
    if d.error is None and reached:
        assert (d.delta, d.taint, d.untaint, d.delete, d.increase) == (3, (), (), (), 0)
