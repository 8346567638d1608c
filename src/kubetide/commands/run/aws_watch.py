"""What the cluster autoscaler on the aws provider reports each loop beside CA's own output.

- A named group AWS does not have (``--nodes=0:3:no-such-asg``) stays registered, as in CA 1.31, but its
  status ConfigMap entry says ``Unhealthy`` (health and scale-up) and the status ``message`` gives the
  reason, since when (``lastTransitionTime``), with a Warning ``NodeGroupNotFound`` on the status
  ConfigMap and the gauge ``kubetide_aws_node_group_missing{node_group}``. CA shows it ``Healthy`` with
  target 0.
- With ``--expander=price``, a group the price expander cannot price (it then never wins) is named: a log
  line and a Warning ``NodeGroupWithoutPrice`` when it starts or stops lacking one, and the gauge
  ``kubetide_aws_node_group_without_price{node_group}``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import replace

from prometheus_client import Gauge

from kubetide.cluster.status import ClusterAutoscalerStatus, NodeGroupStatus
from kubetide.live.providers.aws import AwsCloudProvider
from kubetide.live.providers.aws.presence import MissingGroup

__all__ = ["MISSING_GROUPS", "UNPRICED_GROUPS", "AwsLoopReport", "with_missing_groups"]

log = logging.getLogger("kubetide.cluster-autoscaler")

MISSING_GROUPS = Gauge(
    "kubetide_aws_node_group_missing",
    "1 while a node group named by --nodes (or a config file) does not exist in AWS",
    ["node_group"],
)
UNPRICED_GROUPS = Gauge(
    "kubetide_aws_node_group_without_price",
    "1 while the price expander has no price for a node group's new nodes (it never wins)",
    ["node_group"],
)
UNHEALTHY = "Unhealthy"

Emit = Callable[[str, str, str], None]  # (type, reason, message), on the status ConfigMap


def with_missing_groups(
    status: ClusterAutoscalerStatus, missing: Mapping[str, MissingGroup]
) -> ClusterAutoscalerStatus:
    """``status`` with each missing group Unhealthy since it went missing, the reasons in ``message``."""
    if not missing:
        return status
    groups: list[NodeGroupStatus] = []
    for g in status.node_groups:
        m = missing.get(g.name)
        if m is not None:
            health = replace(g.health, status=UNHEALTHY, last_transition_time=m.since)
            scale_up = g.scale_up
            if scale_up.status != "InProgress":
                scale_up = replace(scale_up, status=UNHEALTHY, last_transition_time=m.since)
            g = replace(g, health=health, scale_up=scale_up)
        groups.append(g)
    reasons = [missing[name].reason for name in sorted(missing)]
    message = "; ".join([status.message, *reasons] if status.message else reasons)
    return replace(status, node_groups=tuple(groups), message=message)


class AwsLoopReport:
    def __init__(self, provider: AwsCloudProvider, *, priced: bool, emit: Emit) -> None:
        self.provider = provider
        self.priced = priced
        self.emit = emit
        self._missing: set[str] = set()
        self._unpriced: dict[str, str] = {}

    def status(self, status: ClusterAutoscalerStatus) -> ClusterAutoscalerStatus:
        return with_missing_groups(status, self.provider.missing_groups())

    def after_loop(self) -> None:
        """Gauges and Events for what changed since the last loop."""
        missing = self.provider.missing_groups()
        for name in sorted(set(missing) - self._missing):
            MISSING_GROUPS.labels(node_group=name).set(1)
            self.emit("Warning", "NodeGroupNotFound", missing[name].reason)
        for name in self._missing - set(missing):
            MISSING_GROUPS.remove(name)
        self._missing = set(missing)
        if self.priced:
            self._prices()

    def _prices(self) -> None:
        unpriced = self.provider.unpriced_groups()
        for name, why in sorted(unpriced.items()):
            if self._unpriced.get(name) == why:
                continue
            UNPRICED_GROUPS.labels(node_group=name).set(1)
            message = f"price expander: node group {name} has no price, so it is never chosen: {why}"
            log.warning("%s", message)
            self.emit("Warning", "NodeGroupWithoutPrice", message)
        for name in sorted(set(self._unpriced) - set(unpriced)):
            UNPRICED_GROUPS.remove(name)
            log.info("price expander: node group %s has a price again", name)
        self._unpriced = unpriced
