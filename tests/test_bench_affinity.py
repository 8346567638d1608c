"""The affinity-heavy fixtures are the worlds ``docs/perf-fixtures.md`` describes, and at a small scale
the decisions the benches print are the plain reference's (upstream's filters pod by pod)."""

from __future__ import annotations

from collections import Counter

from kubetide.bench import affinity
from kubetide.model.node import HOSTNAME_LABEL, ZONE_LABEL
from kubetide.scheduling.equivalence import group_pods
from kubetide.scheduling.estimator import estimate
from kubetide.scheduling.removal_simulation import must_move, simulate_removals
from kubetide.scheduling.snapshot import ClusterSnapshot
from scheduling.reference import ref_estimate, ref_remove


def test_su4_world_is_as_described() -> None:
    world = affinity.su4(nodes=100, deployments=20, replicas=5)
    assert len(world.nodes) == 100 and len(world.running) == 100 * affinity.SU4_RESIDENTS_PER_NODE
    assert len(world.pending) == 20 * 5 and len(world.templates) == affinity.SU4_GROUPS
    zones = Counter(n.labels[ZONE_LABEL] for n in world.nodes)
    assert zones == {"zone-0": 40, "zone-1": 30, "zone-2": 30}  # groups 0,3,6,9 / 1,4,7 / 2,5,8
    per_node = Counter(p.node_name for p in world.running)
    assert set(per_node.values()) == {affinity.SU4_RESIDENTS_PER_NODE}
    for p in world.running:  # one pod of each resident Deployment per node at most
        assert [t.topology_key for t in p.pod_anti_affinity] == [HOSTNAME_LABEL] and not p.topology_spread
    for p in world.pending:
        assert [t.topology_key for t in p.pod_anti_affinity] == [HOSTNAME_LABEL]
        (spread,) = p.topology_spread
        assert (spread.max_skew, spread.topology_key, spread.when_unsatisfiable) == (
            1,
            ZONE_LABEL,
            "DoNotSchedule",
        )
    for g, template in enumerate(world.templates):
        assert template.labels[ZONE_LABEL] == f"zone-{g % 3}"


def test_su4_estimates_are_the_reference_ones_at_small_scale() -> None:
    world = affinity.su4(nodes=30, deployments=6, replicas=4)
    snap = ClusterSnapshot(world.nodes, world.running)
    groups = group_pods(world.pending)
    for template in world.templates[:3]:  # one per zone
        result = estimate(snap, template, groups)
        count, scheduled = ref_estimate(snap, template, world.pending)
        assert (result.node_count, sorted(p.name for p in result.scheduled)) == (
            count,
            sorted(p.name for p in scheduled),
        )
        assert result.node_count > 0  # one pod of each Deployment per zone's estimate


def test_sd4_world_is_as_described_and_its_removals_are_the_reference_ones() -> None:
    nodes, pods, candidates = affinity.sd4(n=30)
    assert candidates == [f"n{i}" for i in range(9)]
    per_node = Counter(p.node_name for p in pods)
    assert [per_node[f"n{i}"] for i in range(30)] == [24] * 9 + [56] * 21
    for name in per_node:  # each node runs at most one pod of a Deployment
        apps = [p.labels["app"] for p in pods if p.node_name == name]
        assert len(apps) == len(set(apps))
    zones = {n.name: n.labels[ZONE_LABEL] for n in nodes}
    for app in {p.labels["app"] for p in pods}:  # spread evenly over the zones, as the scheduler left it
        counts = Counter(zones[p.node_name] for p in pods if p.labels["app"] == app)
        assert max(counts.values()) - min(counts[z] for z in ("zone-0", "zone-1", "zone-2")) <= 1
    snap = ClusterSnapshot(nodes, pods)
    assert list(simulate_removals(snap, candidates).removable) == ref_remove(snap, candidates, must_move)
