"""Builders for driver tests: a group with the docs' thresholds, a recording cluster port and a recording
cloud holding the given nodes, wired so one log shows API and cloud writes in order."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kubetide.escalator.config import NodeGroupOptions
from kubetide.escalator.driver import EscalatorDriver
from kubetide.escalator.result import TickResult
from kubetide.model.node import NodeView
from kubetide.model.pod import Pod
from kubetide.testing.cloud import RecordingCloud
from kubetide.testing.cluster import RecordingClusterPort

from .builders import group

SOFT, HARD, COOL_DOWN = 60.0, 600.0, 120.0


def esc_group(**kw: Any) -> NodeGroupOptions:
    defaults: dict[str, Any] = {
        "min_nodes": 1,
        "max_nodes": 10,
        "taint_lower_capacity_threshold_percent": 20,
        "taint_upper_capacity_threshold_percent": 50,
        "scale_up_threshold_percent": 70,
        "slow_node_removal_rate": 1,
        "fast_node_removal_rate": 2,
        "soft_delete_grace_period": "1m",
        "hard_delete_grace_period": "10m",
        "scale_up_cool_down_period": "2m",
    }
    return group(**(defaults | kw))


def setup(
    listed: Sequence[NodeView],
    listed_pods: Sequence[Pod] = (),
    *,
    min_size: int = 1,
    max_size: int = 10,
    dry_run: bool = False,
    **group_kw: Any,
) -> tuple[EscalatorDriver, RecordingClusterPort, RecordingCloud]:
    cluster = RecordingClusterPort(listed, listed_pods)
    cloud = RecordingCloud().with_group("asg", min_size, max_size, len(listed))
    for n in listed:
        cloud.with_node("asg", n)
    cluster.logging_cloud(cloud)
    driver = EscalatorDriver([esc_group(**group_kw)], cluster.listing(), cluster, cloud, dry_run=dry_run)
    return driver, cluster, cloud


def metric(result: TickResult, name: str, **labels: str) -> float | None:
    wanted = tuple(sorted(labels.items()))
    for s in result.metrics:
        if s.name == name and tuple(sorted(s.labels)) == wanted:
            return s.value
    return None
