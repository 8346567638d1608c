"""Readiness from a cluster-state registry kept from loop to loop (which trusts a Ready node whose view
is the same object) is a fresh registry's, whatever changed in between: views, instances, the time."""

from __future__ import annotations

from typing import Any

from ca_builders import cnode
from hypothesis import example, given, settings
from hypothesis import strategies as st

from kubetide.cluster.clusterstate.readiness import SUSPENDED_CONDITION_ANNOTATION
from kubetide.cluster.clusterstate.registry import ClusterStateRegistry
from kubetide.cluster.options import AutoscalingOptions
from kubetide.model.scheduling_terms import Taint
from kubetide.testing.cloud import RecordingCloud

NOW = 10_000.0
_NAMES = ("a", "b", "c")
_VIEWS = {
    name: (
        cnode(name),
        cnode(name, ready=False),
        cnode(name, ready=False, created=NOW - 60),  # not started until NOW + 840 (15 min)
        cnode(name, annotations={SUSPENDED_CONDITION_ANNOTATION: "true"}),
        cnode(name, taints=(Taint("node.kubernetes.io/not-ready", "", "NoExecute"),)),
    )
    for name in _NAMES
}


def _cloud(cloud: RecordingCloud, present: dict[str, bool]) -> None:
    """The group's instances: one per present node (id = the node's name)."""
    group = cloud.groups["ng1"]
    group.instances.clear()
    cloud.node_groups_by_key.clear()
    for name, here in present.items():
        if here:
            cloud.with_node("ng1", _VIEWS[name][0])


_LOOP = st.fixed_dictionaries(
    {
        "views": st.fixed_dictionaries({n: st.integers(0, 4) for n in _NAMES}),
        "present": st.fixed_dictionaries({n: st.booleans() for n in _NAMES}),
        "now": st.sampled_from([NOW, NOW + 600, NOW + 1200]),
    }
)
_STEADY = {"views": dict.fromkeys(_NAMES, 0), "present": dict.fromkeys(_NAMES, True), "now": NOW}


@settings(max_examples=300, deadline=None)
@given(st.lists(_LOOP, min_size=1, max_size=8))
# A Ready node's instance goes away, its view unchanged.
@example([_STEADY, {**_STEADY, "present": {**_STEADY["present"], "a": False}}])
def test_a_kept_registry_counts_readiness_as_a_fresh_one(loops: list[dict[str, Any]]) -> None:
    cloud = RecordingCloud().with_group("ng1", 0, 10, 3)
    kept = ClusterStateRegistry(cloud, AutoscalingOptions())
    for loop in loops:
        _cloud(cloud, loop["present"])
        nodes = [_VIEWS[n][loop["views"][n]] for n in _NAMES]
        kept.update_nodes(nodes, loop["now"])
        fresh = ClusterStateRegistry(cloud, AutoscalingOptions())
        fresh.update_nodes(nodes, loop["now"])
        assert kept.total_readiness == fresh.total_readiness
        assert kept.per_group_readiness == fresh.per_group_readiness
