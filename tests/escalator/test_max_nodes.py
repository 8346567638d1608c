"""``min_nodes``/``max_nodes`` as the hard limits Escalator's documentation describes
(docs/configuration/nodegroup.md, "min_nodes and max_nodes": "the required hard limits that Escalator
will stay within when performing scale up or down activities ... Escalator will clamp").

Upstream's code clamps a scale-up only to the cloud group's MaxSize (``calculateNodesToAdd`` in
pkg/controller/scale_up.go) and untaints without a bound (``scaleUpUntaint``), so a group above
``max_nodes`` with pending work tainted its excess (``scaleNodeGroup``: "Forcing scale down") and
untainted it again on the next run, for ever. kubetide clamps the untainted nodes, with those on their
way, to ``max_nodes`` (README, "Differences from Escalator").
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kubetide.escalator.taints import TAINT_KEY, escalator_bucket_nodes
from kubetide.testing.cluster import RecordingClusterPort

from .builders import T0, node, nodes, pods
from .driver_harness import COOL_DOWN, setup


def _untainted(cluster: RecordingClusterPort) -> int:
    return len(escalator_bucket_nodes(cluster.listing().nodes()).untainted)


@settings(max_examples=60, deadline=None)
@given(
    max_nodes=st.integers(2, 8),
    excess=st.integers(0, 4),
    tainted=st.integers(0, 4),
    extra_pods=st.integers(0, 40),
    cloud_room=st.integers(0, 10),
)
def test_untainted_and_upcoming_nodes_never_pass_max_nodes_and_the_group_settles(
    max_nodes: int, excess: int, tainted: int, extra_pods: int, cloud_room: int
) -> None:
    # Pending work keeps the group above its scale-up threshold (70%) even at max_nodes: 400m pods,
    # more than 2 per 1000m node. (Below it, thresholds close together can make Escalator itself
    # taint and untaint; that is its configuration's doing, not max_nodes'.)
    pending = 2 * max_nodes + 1 + extra_pods
    untainted = max_nodes + excess
    listed = [
        *nodes(untainted),
        *(node(f"t{i}", created=T0 - 100 + i, tainted_at=T0 - 30) for i in range(tainted)),
    ]
    total = len(listed)
    driver, cluster, cloud = setup(
        listed, pods(pending, 400, 0), min_nodes=1, max_nodes=max_nodes, max_size=total + cloud_room
    )
    untainted_nodes: set[str] = set()
    for tick in range(6):
        before = len(cluster.log)
        driver.tick(T0 + tick * (COOL_DOWN + 1))
        writes = cluster.log[before:]
        upcoming = max(cloud.groups["asg"].target - len(cluster.nodes), 0)
        # The excess a group started with is tainted on the first run; from then on the untainted
        # nodes and those the cloud is bringing up stay within max_nodes.
        assert _untainted(cluster) + upcoming <= max_nodes, (tick, writes)
        now_untainted = {w[1] for w in writes if w[0] == "remove_node_taint"}
        if tick > 0:
            # No cycle: a node tainted earlier is not untainted while the workload is unchanged.
            assert not (now_untainted & {str(n) for n in untainted_nodes}), (tick, writes)
        untainted_nodes |= {str(w[1]) for w in writes if w[0] == "add_node_taint"}


def test_a_group_above_max_nodes_with_pending_work_taints_its_excess_once_and_settles() -> None:
    # 12 untainted on max_nodes 10, 160% busy: upstream taints 2, untaints them, taints them, ...
    driver, cluster, _ = setup(nodes(12), pods(48, 400, 0), max_nodes=10, max_size=30)
    driver.tick(T0)
    assert [w[0] for w in cluster.log] == ["add_node_taint", "add_node_taint"]
    for tick in range(1, 5):
        before = len(cluster.log)
        driver.tick(T0 + tick * (COOL_DOWN + 1))
        assert not [w for w in cluster.log[before:] if w[0] in ("remove_node_taint", "increase_size")]
        assert _untainted(cluster) == 10


def test_below_min_nodes_the_untaint_is_still_bounded_by_max_nodes() -> None:
    # No untainted node, min_nodes 2; the cloud is already bringing up 9 of max_nodes 10.
    listed = [node(f"t{i}", created=T0 - 100 + i, tainted_at=T0 - 30) for i in range(3)]
    driver, cluster, cloud = setup(listed, min_nodes=2, max_nodes=10, max_size=30)
    cloud.groups["asg"].target = 12
    driver.tick(T0)
    assert cluster.log == [("remove_node_taint", "t2", TAINT_KEY)]
