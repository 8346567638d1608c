"""The ``ca`` bench's world is the scenario it claims: its figures mean something only if so."""

from __future__ import annotations

from kubetide.bench import ca
from kubetide.cluster.autoscaler import StaticAutoscaler
from kubetide.cluster.options import AutoscalingOptions
from kubetide.testing.cluster import RecordingClusterPort


def test_world_is_ca_scalability_scenario_at_small_scale() -> None:
    world, cloud = ca.world(100)
    assert len(world.nodes) == 100 and len(world.pods) == 3000
    pending = [p for p in world.pods if not p.node_name]
    assert len(pending) == 100 and all(p.unschedulable_message for p in pending)
    assert sorted(cloud.groups) == [f"group-{g}" for g in range(ca.GROUPS)]
    autoscaler = StaticAutoscaler(
        cloud, RecordingClusterPort.discarding(), AutoscalingOptions(), start_time=ca.NOW - 3600
    )
    result = autoscaler.run_once(world, ca.NOW)
    assert result.scale_up_result == "Successful"


def test_the_buffers_row_injects_every_buffers_pods_onto_the_nodes_there_are() -> None:
    objects = ca.buffer_objects(3, 5)
    assert len(objects.buffers) == 3
    assert all(b.status.replicas == 5 for b in objects.buffers)
    row = ca._buffers_row(nodes=100)
    assert row["fake_pods"] == ca.BUFFERS * ca.BUFFER_REPLICAS
    assert row["target_seconds"] > row["without_buffers_seconds"] > 0
    assert ca.run(only="no-such-row") == []
