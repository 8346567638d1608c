"""Cluster Autoscaler's loop on the aws provider, against moto behind the fault proxy: a stockout the
ASG reports in its scaling activities fails over to the next group in one loop."""

from __future__ import annotations

import sys
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from kubetide.cluster.autoscaler import StaticAutoscaler
from kubetide.cluster.loop.world import World
from kubetide.cluster.options import AutoscalingOptions
from kubetide.live.providers.aws import AwsApi, AwsCloudProvider
from kubetide.live.providers.aws.specs import ExplicitGroup
from kubetide.model.node import NodeView
from kubetide.model.resources import Resources
from kubetide.testing.cluster import RecordingClusterPort

from .conftest import AwsProxy, activity

sys.path.insert(0, str(Path(__file__).parents[3] / "cluster"))  # the loop tests' builders
from ca_loop_harness import pod

INSUFFICIENT = (
    "We currently do not have sufficient m5.xlarge capacity in the Availability Zone you requested "
    "(us-east-1a). Launching EC2 instance failed."
)


def _desired(aws: Any, name: str) -> int:
    (group,) = aws.autoscaling.describe_auto_scaling_groups(AutoScalingGroupNames=[name])["AutoScalingGroups"]
    return int(group["DesiredCapacity"])


def test_a_reported_stockout_fails_over_to_the_next_group_in_one_loop(
    make_group: Callable[..., str], make_api: Callable[..., AwsApi], proxy: AwsProxy, aws: Any
) -> None:
    first, second = make_group("spot"), make_group("general")
    proxy.stocked_out[first] = None  # SetDesiredCapacity is accepted, nothing launches
    cloud = AwsCloudProvider(make_api(), [ExplicitGroup(first, 0, 5), ExplicitGroup(second, 0, 5)])
    options = AutoscalingOptions.from_flags({"expander": "priority,least-waste"})
    priorities = {
        "kube-system/cluster-autoscaler-priority-expander": {"priorities": "10:\n  - ^spot-\n1:\n  - .*\n"}
    }
    alloc = Resources({"cpu": 2000, "memory": 4 * 2**30, "pods": 110})
    other = NodeView(
        "static-1", labels={"kubernetes.io/hostname": "static-1"}, allocatable=alloc, capacity=alloc
    )
    nodes = {"static-1": other}
    pods = {"busy": pod("busy", 1800, node_name="static-1"), "p0": pod("p0", 1000)}
    ca = StaticAutoscaler(cloud, RecordingClusterPort(nodes, pods), options)

    def loop(now: float) -> list[str]:
        result = ca.run_once(World(list(nodes.values()), list(pods.values()), [], priorities, None), now)
        return [e.reason for e in result.events]

    loop(0.0)
    assert (_desired(aws, first), _desired(aws, second)) == (1, 0)
    proxy.activities[first] = [activity("Failed", INSUFFICIENT, datetime.now(UTC) + timedelta(seconds=1))]
    reasons = loop(10.0)
    assert "NodeGroupBackoff" in reasons and "ScaleUpFailed" in reasons
    # The same loop: the placeholder removed (desired back to the launched instances) and the next
    # group scaled, not after --max-node-provision-time.
    assert (_desired(aws, first), _desired(aws, second)) == (0, 1)
