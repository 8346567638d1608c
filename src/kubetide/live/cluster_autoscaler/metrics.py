"""Cluster Autoscaler's Prometheus metrics, with CA's names, labels and help (``cluster_autoscaler_*``).

The loop computes the numbers (:class:`~kubetide.cluster.loop.result.LoopMetrics`); this module only
exports them, so dashboards and alerts written for CA (``cluster_autoscaler_unschedulable_pods_count``,
``..._failed_scale_ups_total{reason}``, ``..._last_activity{activity}``) work unchanged. Per-group
gauges only with ``--emit-per-nodegroup-metrics``, as CA. ``function_duration_seconds`` (and its
summary, ``function_duration_quantile_seconds``) has CA's ``function`` labels: ``main`` around the
whole loop, the others as the loop timed them (:mod:`kubetide.cluster.loop.timing`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence

from prometheus_client import REGISTRY, CollectorRegistry, Counter, Gauge, Histogram, Summary

from kubetide.cloud.provider import CloudProvider, CloudProviderError, NodeGroup
from kubetide.cluster.loop.result import LoopResult

__all__ = ["CAMetrics"]

_NS = "cluster_autoscaler"
# CA 1.31's buckets for function_duration_seconds: ExponentialBuckets(0.01, 1.5, 30), 0.01 s to 1278 s.
_BUCKETS = tuple(0.01 * 1.5**i for i in range(30))


class CAMetrics:
    def __init__(self, *, per_nodegroup: bool, registry: CollectorRegistry = REGISTRY) -> None:
        self.per_nodegroup = per_nodegroup
        r = registry
        self.safe = Gauge(
            "cluster_safe_to_autoscale",
            "Whether or not cluster is healthy enough for autoscaling. 1 if it is, 0 otherwise.",
            namespace=_NS,
            registry=r,
        )
        self.nodes = Gauge("nodes_count", "Number of nodes in cluster.", ["state"], namespace=_NS, registry=r)
        self.groups = Gauge(
            "node_groups_count",
            "Number of node groups managed by CA.",
            ["node_group_type"],
            namespace=_NS,
            registry=r,
        )
        self.unschedulable = Gauge(
            "unschedulable_pods_count",
            "Number of unschedulable pods in the cluster.",
            namespace=_NS,
            registry=r,
        )
        self.max_nodes = Gauge(
            "max_nodes_count", "Maximum number of nodes in all node groups", namespace=_NS, registry=r
        )
        self.last_activity = Gauge(
            "last_activity",
            "Last time certain part of CA logic executed.",
            ["activity"],
            namespace=_NS,
            registry=r,
        )
        self.duration = Histogram(
            "function_duration_seconds",
            "Time taken by various parts of CA main loop.",
            ["function"],
            namespace=_NS,
            buckets=_BUCKETS,
            registry=r,
        )
        self.duration_summary = Summary(
            "function_duration_quantile_seconds",
            "Quantiles of time taken by various parts of CA main loop.",
            ["function"],
            namespace=_NS,
            registry=r,
        )
        self.errors = Counter(
            "errors", "The number of CA loops failed due to an error.", ["type"], namespace=_NS, registry=r
        )
        self.scaled_up = Counter("scaled_up_nodes", "Number of nodes added by CA.", namespace=_NS, registry=r)
        self.failed_scale_ups = Counter(
            "failed_scale_ups",
            "Number of times scale-up operation has failed.",
            ["reason"],
            namespace=_NS,
            registry=r,
        )
        self.scaled_down = Counter(
            "scaled_down_nodes", "Number of nodes removed by CA.", ["reason"], namespace=_NS, registry=r
        )
        self.evicted_pods = Counter(
            "evicted_pods",
            "Number of pods evicted by CA",
            ["eviction_result"],
            namespace=_NS,
            registry=r,
        )
        self.unneeded = Gauge(
            "unneeded_nodes_count",
            "Number of nodes currently considered unneeded by CA.",
            namespace=_NS,
            registry=r,
        )
        self.group_min = Gauge(
            "node_group_min_count",
            "Minimum number of nodes in the node group",
            ["node_group"],
            namespace=_NS,
            registry=r,
        )
        self.group_max = Gauge(
            "node_group_max_count",
            "Maximum number of nodes in the node group",
            ["node_group"],
            namespace=_NS,
            registry=r,
        )
        self.group_target = Gauge(
            "node_group_target_count",
            "Target number of nodes in the node group by CA.",
            ["node_group"],
            namespace=_NS,
            registry=r,
        )
        self.group_backoff = Gauge(
            "node_group_backoff_status",
            "Whether or not node group is backoff for not autoscaling. 1 if it is, 0 otherwise.",
            ["node_group", "reason"],
            namespace=_NS,
            registry=r,
        )
        self._kept_groups: set[str] = set()  # groups given a kept-foreign count (0 again when none is left)
        self.kept_foreign = Gauge(
            "kubetide_cluster_autoscaler_kept_foreign_instances",
            "kubetide: unregistered instances past --max-node-provision-time that kubetide did not launch and "
            "keeps (--delete-unregistered-foreign-instances removes them), per node group.",
            ["node_group"],
            registry=r,
        )
        # Series exist from the start (CA registers its counters' labels as they first occur; zeroed
        # series let rate() and absent() alerts work from the first scrape).
        for reason in ("empty", "underutilized", "unready"):
            self.scaled_down.labels(reason=reason)
        for outcome in ("succeeded", "failed"):
            self.evicted_pods.labels(eviction_result=outcome)
        for reason in ("cloudProviderError", "apiCallError", "timeout"):
            self.failed_scale_ups.labels(reason=reason)

    def loop_started(self, now: float) -> None:
        self.last_activity.labels(activity="main").set(int(now))

    def loop_finished(self, result: LoopResult, now: float, duration: float, cloud: CloudProvider) -> None:
        for function, seconds in result.function_durations:
            self._observe(function, seconds)
        self._observe("main", duration)
        if result.error is not None:
            self.errors.labels(type="internalError").inc()
            return
        self.last_activity.labels(activity="autoscaling").set(int(now))
        m = result.metrics
        if m is None:
            return
        self.safe.set(1 if m.cluster_safe_to_autoscale else 0)
        for state, count in m.nodes_by_state.items():
            self.nodes.labels(state=state).set(count)
        self.groups.labels(node_group_type="autoscaled").set(m.node_groups)
        self.groups.labels(node_group_type="autoprovisioned").set(0)
        self.unschedulable.set(m.unschedulable_pods)
        self.unneeded.set(m.unneeded_nodes)
        if m.scaled_up_nodes:
            self.scaled_up.inc(m.scaled_up_nodes)
            self.last_activity.labels(activity="scaleUp").set(int(now))
        self._count_scaled_down(m.scaled_down_nodes, now)
        self._count_evictions(m.evicted_pods)
        for reason, count in m.failed_scale_ups.items():
            if count:
                self.failed_scale_ups.labels(reason=reason).inc(count)
        for gid in set(self._kept_groups) - set(m.kept_foreign_instances):
            self.kept_foreign.labels(node_group=gid).set(0)
        for gid, count in m.kept_foreign_instances.items():
            self.kept_foreign.labels(node_group=gid).set(count)
        self._kept_groups = set(m.kept_foreign_instances) | set(self._kept_groups)
        self._groups(cloud, result)

    def _observe(self, function: str, seconds: float) -> None:
        self.duration.labels(function=function).observe(seconds)
        self.duration_summary.labels(function=function).observe(seconds)

    def deletions_finished(self, result: LoopResult, now: float) -> None:
        """A deletions pass between loops: its removed nodes counted at once, as CA's deletion
        goroutine counts them."""
        self._count_scaled_down(result.deleted_between_loops, now)
        self._count_evictions(result.evicted_between_loops)

    def _count_evictions(self, by_result: Mapping[str, int]) -> None:
        for outcome, count in by_result.items():
            if count:
                self.evicted_pods.labels(eviction_result=outcome).inc(count)

    def _count_scaled_down(self, by_reason: Mapping[str, int], now: float) -> None:
        for reason, count in by_reason.items():
            if count:
                self.scaled_down.labels(reason=reason).inc(count)
                self.last_activity.labels(activity="scaleDown").set(int(now))

    def _groups(self, cloud: CloudProvider, result: LoopResult) -> None:
        try:
            groups: Sequence[NodeGroup] = cloud.node_groups()
        except CloudProviderError:
            return
        self.max_nodes.set(sum(g.max_size() for g in groups))
        if not self.per_nodegroup:
            return
        backed_off = _backed_off(result)
        for g in groups:
            gid = g.id()
            self.group_min.labels(node_group=gid).set(g.min_size())
            self.group_max.labels(node_group=gid).set(g.max_size())
            with contextlib.suppress(CloudProviderError):  # a failing read leaves the last value
                self.group_target.labels(node_group=gid).set(g.target_size())
            reason = backed_off.get(gid)
            self.group_backoff.labels(node_group=gid, reason=reason or "").set(1 if reason else 0)


def _backed_off(result: LoopResult) -> dict[str, str]:
    """Groups in backoff per the loop's status (their backoff error code)."""
    out: dict[str, str] = {}
    if result.status is None:
        return out
    for group in result.status.node_groups:
        if group.scale_up.status == "Backoff":
            out[group.name] = group.scale_up.backoff_error_code or "Backoff"
    return out
