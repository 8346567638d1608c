"""The ClusterStateRegistry: what CA believes about every node group after reading the cloud (CA spec §2).

Each loop :meth:`ClusterStateRegistry.update_nodes` reads target sizes and instances through the cloud
port, classifies nodes, times scale-up requests out, turns new instance creation errors into backoff,
and tracks incorrect sizes. It decides but does not act: the events to emit and the target-size
reverts to apply are returned in an :class:`UpdateResult` for the loop to execute. State kept across
loops: scale-up / scale-down requests, backoff, first-seen times of unregistered instances, incorrect
sizes, and which instances were already failing.
"""

from __future__ import annotations

import operator
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from itertools import compress

from kubetide.cloud.instance import (
    CloudProviderError,
    Instance,
    InstanceErrorInfo,
    InstanceState,
    NodeGroupAutoscalingOptions,
    NotImplementedByProvider,
)
from kubetide.cloud.provider import CloudProvider, NodeGroup
from kubetide.cluster.backoff import ExponentialBackoff
from kubetide.cluster.clusterstate.creation_errors import creation_error_groups, scale_up_failed_message
from kubetide.cluster.clusterstate.health import is_cluster_healthy, is_node_group_healthy
from kubetide.cluster.clusterstate.incorrect import IncorrectSize, incorrect_size, size_fix_delta
from kubetide.cluster.clusterstate.persisted import PersistedState
from kubetide.cluster.clusterstate.ranges import AcceptableRange, acceptable_range
from kubetide.cluster.clusterstate.readiness import Readiness, classify_node, unregistered_bucket
from kubetide.cluster.clusterstate.requests import (
    SCALE_DOWN_REQUEST_TTL_S,
    TIMEOUT_ERROR_CODES,
    RequestOutcome,
    ScaleDownRequest,
    ScaleUpRequest,
    progress_timeout_error,
    register_scale_up,
    request_outcome,
    timeout_error,
    timeout_event_message,
)
from kubetide.cluster.clusterstate.unregistered import UnregisteredNode, unregistered_to_delete
from kubetide.cluster.options import AutoscalingOptions, node_group_options
from kubetide.cluster.reasons import EventReason, KubetideEventReason, ReadinessBucket, ScaleUpActivity
from kubetide.model.node import NodeView

__all__ = ["ClusterEvent", "ClusterStateRegistry", "FailedScaleUp", "ScaleUpRevert", "UpdateResult"]

_NAME = operator.attrgetter("name")
_ID = operator.attrgetter("id")
_PROVIDER_ID = operator.attrgetter("provider_id")

TO_BE_DELETED_TAINT = "ToBeDeletedByClusterAutoscaler"


@dataclass(frozen=True, slots=True)
class ClusterEvent:
    """An event to record: ``object`` is a node group id, a node, or None for the status ConfigMap."""

    type: str
    reason: EventReason | KubetideEventReason
    message: str
    object: str | None = None


@dataclass(frozen=True, slots=True)
class ScaleUpRevert:
    """``DecreaseTargetSize(delta)`` to apply after a timed-out scale-up (1.36+): the whole increase."""

    group: str
    delta: int


@dataclass(frozen=True, slots=True)
class FailedScaleUp:
    group: str
    error: InstanceErrorInfo
    delta: int
    time: float


@dataclass(frozen=True, slots=True)
class UpdateResult:
    events: tuple[ClusterEvent, ...] = ()
    reverts: tuple[ScaleUpRevert, ...] = ()
    failed_scale_ups: tuple[FailedScaleUp, ...] = ()


@dataclass
class _Loop:
    events: list[ClusterEvent] = field(default_factory=list)
    reverts: list[ScaleUpRevert] = field(default_factory=list)
    failures: list[FailedScaleUp] = field(default_factory=list)


class ClusterStateRegistry:
    def __init__(self, cloud: CloudProvider, options: AutoscalingOptions | None = None) -> None:
        self.cloud = cloud
        self.options = options or AutoscalingOptions()
        self.backoff = ExponentialBackoff(
            self.options.initial_node_group_backoff_duration,
            self.options.max_node_group_backoff_duration,
            self.options.node_group_backoff_reset_timeout,
        )
        self.scale_up_requests: dict[str, ScaleUpRequest] = {}
        self.scale_down_requests: list[ScaleDownRequest] = []
        self.unregistered: dict[str, UnregisteredNode] = {}
        self._updated = False  # True after the first update_nodes of this process
        self._ready_views: dict[str, NodeView] = {}  # the nodes found Ready by the last update
        self._restored = False  # True once a previous process's state was read back
        self._registered_once: set[str] = set()  # instances seen with a Node (current instances only)
        self._announced_foreign: set[str] = set()  # kept foreign instances already reported
        # Instances of a group when its scale-up request began (--scale-up-progress-timeout).
        self._instances_at_request: dict[str, int] = {}
        # Registered nodes of a group when its scale-up request began or last made progress.
        self._registered_at_request: dict[str, int] = {}
        self.incorrect_sizes: dict[str, IncorrectSize] = {}
        self.acceptable_ranges: dict[str, AcceptableRange] = {}
        self.per_group_readiness: dict[str, Readiness] = {}
        self.total_readiness = Readiness()
        self._groups: dict[str, NodeGroup] = {}
        self._targets: dict[str, int] = {}
        self._instances: dict[str, list[Instance]] = {}
        self._failed: dict[str, list[Instance]] = {}
        self._failing: frozenset[str] = frozenset()
        self._instance_index: dict[str, Instance] = {}
        self._defaults = self.options.node_group_defaults()
        self._group_options: dict[str, NodeGroupAutoscalingOptions] = {}

    # -- options per group -------------------------------------------------------------------------
    def group_options(self, group_id: str) -> NodeGroupAutoscalingOptions:
        cached = self._group_options.get(group_id)
        if cached is not None:
            return cached
        group = self._groups.get(group_id)
        out = self._defaults if group is None else node_group_options(group, self._defaults)
        if group is not None:
            self._group_options[group_id] = out  # until the next update re-reads the groups
        return out

    # -- requests ----------------------------------------------------------------------------------
    def register_scale_up(self, group_id: str, delta: int, now: float) -> None:
        """``RegisterScaleUp``, except (kubetide) that more nodes asked of a group that has registered
        none since its request began do not restart the provision clock: upstream restarts it, so pods
        that go pending during a silent stockout put the failover off by the time they waited. A group
        that is delivering (a node registered since) restarts it as upstream does."""
        provision = self.group_options(group_id).max_node_provision_time
        existing = self.scale_up_requests.get(group_id)
        registered = len(self.per_group_readiness.get(group_id, Readiness()).registered)
        request = register_scale_up(existing, group_id, delta, now, provision)
        if request is None:
            self.scale_up_requests.pop(group_id, None)
            self._registered_at_request.pop(group_id, None)
            return
        if existing is None:
            self._instances_at_request[group_id] = len(self._instances.get(group_id, []))
        if existing is None or (delta > 0 and registered > self._registered_at_request.get(group_id, 0)):
            self._registered_at_request[group_id] = registered
        elif delta > 0:
            request = replace(request, time=existing.time, expected_add_time=existing.expected_add_time)
        self.scale_up_requests[group_id] = request

    def register_scale_down(self, group_id: str, node: str, now: float) -> None:
        self.scale_down_requests.append(ScaleDownRequest(group_id, node, now, now + SCALE_DOWN_REQUEST_TTL_S))

    def register_failed_scale_up(
        self, group_id: str, error: InstanceErrorInfo, now: float, min_duration: float = 0.0
    ) -> None:
        self.backoff.backoff(group_id, error, now, min_duration)

    def timed_out_before(self, group_id: str) -> bool:
        """kubetide: the group's last failure (within ``--node-group-backoff-reset-timeout``) was a
        scale-up that timed out: a silent stockout, found only after the provision time. The scale-up
        prefers a group not tried yet to such a group whose backoff has ended (see
        ``--failover-to-untried-groups``)."""
        entry = self.backoff.entry(group_id)
        info = entry.error_info if entry is not None else None
        return info is not None and info.error_code in TIMEOUT_ERROR_CODES

    # -- the update --------------------------------------------------------------------------------
    def update_nodes(
        self, nodes: Sequence[NodeView], now: float, group_of: Mapping[str, str | None] | None = None
    ) -> UpdateResult:
        """``UpdateNodes(allNodes, now)``; CloudProviderError from the port aborts the update.
        ``group_of``: each node's group id, when the caller has just asked the cloud (saves asking twice)."""
        groups = self.cloud.node_groups()
        self._groups = {g.id(): g for g in groups}
        self._group_options = {}
        self._targets = {g.id(): g.target_size() for g in groups}
        instances = {g.id(): g.nodes() for g in groups}
        old = self._instances
        # A provider may give the very same lists while nothing changed: what they give is the same.
        if instances.keys() != old.keys() or any(insts is not old[gid] for gid, insts in instances.items()):
            self._instance_index = {i.id: i for insts in instances.values() for i in insts}
            # Failed creations per group, read twice a loop (the update's and the cleanup's).
            self._failed = {
                gid: [i for i in insts if i.has_creation_error] for gid, insts in instances.items()
            }
        self._instances = instances
        loop = _Loop()
        if group_of is None:
            group_of = {n.name: _id(self.cloud.node_group_for_node(n)) for n in nodes}
        self._update_unregistered(nodes, now)
        self._update_readiness(nodes, group_of, now)
        self._update_ranges()
        self._update_scale_requests(now, loop)
        self._handle_creation_errors(now, loop)
        self._update_ranges()
        self._update_incorrect_sizes(now)
        self._updated = True
        return UpdateResult(tuple(loop.events), tuple(loop.reverts), tuple(loop.failures))

    def _deleted(self, nodes: Sequence[NodeView]) -> list[bool]:
        """:meth:`_is_deleted` of every node, in one call where the provider answers in bulk."""
        bulk = self.cloud.bulk_lookup()
        if bulk is not None:
            try:
                return [not has for has in bulk.has_instances(nodes)]
            except (CloudProviderError, NotImplementedByProvider):
                pass  # some node's answer is an error: node by node, as upstream handles each
        return list(map(self._is_deleted, nodes))

    def _is_deleted(self, node: NodeView) -> bool:
        try:
            return not self.cloud.has_instance(node)
        except NotImplementedByProvider:
            return any(t.key == TO_BE_DELETED_TAINT for t in node.taints)
        except CloudProviderError:
            # Upstream logs the error and does not count the node as deleted (e.g. no providerID).
            return False

    def _update_unregistered(self, nodes: Sequence[NodeView], now: float) -> None:
        registered_ids = set(map(_PROVIDER_ID, nodes))
        registered_ids.discard("")
        # The instances that have a Node (set algebra in C: most of them, every loop).
        self._registered_once |= registered_ids & self._instance_index.keys()
        # Nothing known about this cluster yet: every instance predates kubetide's management.
        first_look = not self._updated and not self._restored
        seen: dict[str, UnregisteredNode] = {}
        for gid, instances in self._instances.items():
            # The instances without a Node (a few), found in C.
            for inst in compress(
                instances, map(operator.not_, map(registered_ids.__contains__, map(_ID, instances)))
            ):
                st = inst.status
                if st is not None and (st.state is InstanceState.Deleting or st.error_info is not None):
                    continue
                old = self.unregistered.get(inst.id)
                # The first-seen time survives as long as the instance stays unregistered.
                if old is None:
                    foreign = inst.out_of_service or (
                        inst.id not in self._registered_once
                        and (
                            first_look or (gid not in self.scale_up_requests and self._raw_upcoming(gid) <= 0)
                        )
                    )
                    old = UnregisteredNode(inst.id, gid, self._first_seen(inst, now), foreign)
                elif inst.out_of_service and not old.foreign:
                    # Put in Standby (or detached) after it was seen: the cloud says it is no node.
                    old = UnregisteredNode(old.instance_id, old.group, old.since, True)
                seen[inst.id] = old
        self.unregistered = seen
        self._registered_once &= self._instance_index.keys()
        self._announced_foreign &= seen.keys()

    def _first_seen(self, inst: Instance, now: float) -> float:
        """kubetide: an instance a just-started autoscaler finds unregistered has been so since the cloud
        created it, when the cloud says (upstream: since now, so restarts postpone its removal)."""
        created = inst.creation_time
        if self._updated or created is None or created > now:
            return now
        return created

    def _update_readiness(
        self, nodes: Sequence[NodeView], group_of: Mapping[str, str | None], now: float
    ) -> None:
        # Names per bucket and the registered names, cluster-wide and per group.
        total = _new_count()
        per_group: dict[str, _Count] = {}
        startups: dict[str | None, float] = {None: self.options.max_node_startup_time}
        # A node found Ready stays Ready while its view is the very same object and its instance is
        # there (Ready reads neither the time nor the startup time): most nodes, every loop.
        ready_now: dict[str, NodeView] = {}
        ready = ReadinessBucket.READY
        names = list(map(_NAME, nodes))
        # Per node: its name, group, whether its instance is gone, and the view found Ready last loop.
        rows = zip(
            nodes,
            names,
            map(group_of.get, names),
            self._deleted(nodes),
            map(self._ready_views.get, names),
            strict=True,
        )
        for node, name, gid, deleted, ready_before in rows:
            if not deleted and ready_before is node:
                bucket = ready
            else:
                startup = startups.get(gid)
                if startup is None:
                    assert gid is not None
                    startup = startups[gid] = self.group_options(gid).max_node_startup_time
                bucket = classify_node(node, now, startup, deleted)
            if bucket is ready:
                ready_now[name] = node
            total[0][bucket].append(name)
            if gid is not None:
                count = per_group.get(gid)
                if count is None:
                    count = per_group[gid] = _new_count()
                count[0][bucket].append(name)
                count[1].append(name)
        total[1].extend(names)  # every node is registered
        for u in self.unregistered.values():
            provision = self.group_options(u.group).max_node_provision_time
            count = per_group.get(u.group)
            if count is None:
                count = per_group[u.group] = _new_count()
            count[0][unregistered_bucket(u.since, now, provision)].append(u.instance_id)
        self.per_group_readiness = {gid: Readiness.from_lists(*count) for gid, count in per_group.items()}
        self.total_readiness = Readiness.from_lists(*total)
        self._ready_views = ready_now

    def _update_ranges(self) -> None:
        down: dict[str, int] = {}
        for r in self.scale_down_requests:
            down[r.group] = down.get(r.group, 0) + 1
        ranges = {}
        for gid, target in self._targets.items():
            readiness = self.per_group_readiness.get(gid, Readiness())
            request = self.scale_up_requests.get(gid)
            ranges[gid] = acceptable_range(
                target, len(readiness.long_unregistered), request.increase if request else 0, down.get(gid, 0)
            )
        self.acceptable_ranges = ranges

    def _no_progress(self, gid: str, request: ScaleUpRequest, now: float) -> bool:
        """``--scale-up-progress-timeout`` ran out and the group has no instance newer than the request
        (by creation time when the cloud reports it, else by count against the request's start)."""
        timeout = self.options.scale_up_progress_timeout
        if timeout <= 0 or not request.time + timeout < now:
            return False
        instances = self._instances.get(gid, [])
        if all(i.creation_time is not None for i in instances):
            return not any(i.creation_time >= request.time for i in instances if i.creation_time is not None)
        baseline = self._instances_at_request.get(gid)
        return baseline is not None and len(instances) <= baseline

    def _update_scale_requests(self, now: float, loop: _Loop) -> None:
        self.backoff.remove_stale(now)
        for gid, request in list(self.scale_up_requests.items()):
            outcome = request_outcome(request, self._not_provisioned(gid), now)
            if outcome is RequestOutcome.PENDING and self._no_progress(gid, request, now):
                # kubetide: fails as a stockout would, long before --max-node-provision-time.
                error = progress_timeout_error(request, now)
                message = (
                    f"Nodes added to group {gid} failed: {error.error_message} (--scale-up-progress-timeout)"
                )
                loop.events.append(ClusterEvent("Warning", EventReason.SCALE_UP_TIMED_OUT, message, gid))
                self.register_failed_scale_up(gid, error, now)
                loop.failures.append(FailedScaleUp(gid, error, request.increase, now))
                loop.reverts.append(ScaleUpRevert(gid, -request.increase))
                del self.scale_up_requests[gid]
            elif outcome is RequestOutcome.FULFILLED:
                del self.scale_up_requests[gid]
            elif outcome is RequestOutcome.TIMED_OUT:
                # updateScaleRequests (1.31): the group is backed off and the request dropped; the target
                # stays (fixNodeGroupSize lowers it once the size has been wrong for the provision time)
                # and its missing nodes still count as upcoming.
                error = timeout_error(request, now)
                loop.events.append(
                    ClusterEvent(
                        "Warning", EventReason.SCALE_UP_TIMED_OUT, timeout_event_message(request, now), gid
                    )
                )
                self.register_failed_scale_up(gid, error, now)
                loop.failures.append(FailedScaleUp(gid, error, request.increase, now))
                if self.options.revert_timed_out_scale_ups:
                    # 1.36+: give back the whole recorded increase, even if some of it came up.
                    loop.reverts.append(ScaleUpRevert(gid, -request.increase))
                del self.scale_up_requests[gid]
        for gid in set(self._registered_at_request) - set(self.scale_up_requests):
            del self._registered_at_request[gid]
        for gid in set(self._instances_at_request) - set(self.scale_up_requests):
            del self._instances_at_request[gid]
        # Kept while ExpectedDeleteTime.After(now): dropped at the expected time itself.
        self.scale_down_requests = [r for r in self.scale_down_requests if r.expected_delete_time > now]

    def _handle_creation_errors(self, now: float, loop: _Loop) -> None:
        failing: set[str] = set()
        for gid, failed in self._failed.items():
            for failure in creation_error_groups(failed, self._failing):
                failing.update(failure.instance_ids)
                if not failure.unseen_ids or not self.is_node_group_scaling_up(gid):
                    continue
                count = len(failure.unseen_ids)
                message = scale_up_failed_message(gid, failure, count)
                loop.events.append(ClusterEvent("Warning", EventReason.SCALE_UP_FAILED, message, gid))
                self.register_scale_up(gid, -count, now)
                self.register_failed_scale_up(gid, failure.error, now)
                loop.failures.append(FailedScaleUp(gid, failure.error, count, now))
        self._failing = frozenset(failing)

    def _update_incorrect_sizes(self, now: float) -> None:
        out = {}
        for gid, acceptable in self.acceptable_ranges.items():
            readiness = self.per_group_readiness.get(gid)
            if readiness is None:
                # Upstream skips a group with no node and no instance, so the target of an empty group
                # whose scale-up was never delivered (a silent stockout) is never lowered and its phantom
                # upcoming nodes hold the pending pods for ever; kubetide counts it as zero nodes.
                if acceptable.current_target <= 0:
                    continue
                readiness = Readiness()
            found = incorrect_size(self.incorrect_sizes.get(gid), readiness, acceptable, now)
            if found is not None:
                out[gid] = found
        self.incorrect_sizes = out

    def forget_incorrect_size(self, gid: str) -> None:
        """The group's target was just changed by this loop: its size is judged afresh next loop, so one
        failure never decreases a target twice."""
        self.incorrect_sizes.pop(gid, None)

    def recalculate(self) -> None:
        """After scale-ups and deletions: fresh target sizes, acceptable ranges recomputed."""
        self._targets = {gid: g.target_size() for gid, g in self._groups.items()}
        self._update_ranges()

    # -- queries -----------------------------------------------------------------------------------
    def _raw_upcoming(self, gid: str) -> int:
        """``GetUpcomingNodes``' count: the target less the Ready, Unready and long-unregistered nodes
        (NotStarted, unregistered and Deleted nodes are still to come)."""
        acceptable = self.acceptable_ranges.get(gid)
        if acceptable is None:
            return 0
        r = self.per_group_readiness.get(gid, Readiness())
        return acceptable.current_target - (
            len(r.ready) + len(r.unready) + len(r.suspended) + len(r.long_unregistered)
        )

    def _not_provisioned(self, gid: str) -> int:
        """``areThereUpcomingNodesInNodeGroup``: the target less the registered nodes that have started
        (``getProvisionedAndTargetSizesForNodeGroup``); above 0 while a scale-up is unfulfilled."""
        acceptable = self.acceptable_ranges.get(gid)
        if acceptable is None:
            return 0
        r = self.per_group_readiness.get(gid)
        provisioned = 0 if r is None else len(r.registered) - len(r.not_started)
        return acceptable.current_target - provisioned

    def is_node_group_scaling_up(self, gid: str) -> bool:
        return self._not_provisioned(gid) > 0 and gid in self.scale_up_requests

    def upcoming_nodes(self, now: float) -> tuple[dict[str, int], dict[str, tuple[str, ...]]]:
        """``GetUpcomingNodes`` (1.31): counts per group and the registered (NotStarted) upcoming node
        names, for every group whose target is above its nodes, with or without a scale-up request and
        backed off or not: a group whose scale-up timed out keeps its placeholders until
        ``fixNodeGroupSize`` lowers its target."""
        counts: dict[str, int] = {}
        registered: dict[str, tuple[str, ...]] = {}
        only_requested = self.options.revert_timed_out_scale_ups
        for gid in self.acceptable_ranges:
            n = self._raw_upcoming(gid)
            if n <= 0:
                continue
            if only_requested and (gid not in self.scale_up_requests or self.backoff.is_backed_off(gid, now)):
                continue  # 1.36+ (--revert-timed-out-scale-ups): no phantom nodes of a failed scale-up
            counts[gid] = n
            registered[gid] = self.per_group_readiness.get(gid, Readiness()).not_started
        return counts, registered

    def is_cluster_healthy(self) -> bool:
        o = self.options
        return is_cluster_healthy(
            self.total_readiness, o.ok_total_unready_count, o.max_total_unready_percentage
        )

    def is_node_group_healthy(self, gid: str) -> bool:
        o = self.options
        return is_node_group_healthy(
            self.acceptable_ranges.get(gid),
            self.per_group_readiness.get(gid),
            o.ok_total_unready_count,
            o.max_total_unready_percentage,
        )

    def is_safe_to_scale_up(self, gid: str, now: float) -> bool:
        """``NodeGroupScaleUpSafety``: healthy and not backed off."""
        return self.is_node_group_healthy(gid) and not self.backoff.is_backed_off(gid, now)

    def scale_up_activity(self, gid: str, now: float) -> ScaleUpActivity:
        if self.backoff.is_backed_off(gid, now):
            return ScaleUpActivity.BACKOFF
        if self.is_node_group_scaling_up(gid):
            return ScaleUpActivity.IN_PROGRESS
        return ScaleUpActivity.NO_ACTIVITY

    def cluster_scale_up_activity(self, now: float) -> ScaleUpActivity:
        if any(self.is_node_group_scaling_up(gid) for gid in self.acceptable_ranges):
            return ScaleUpActivity.IN_PROGRESS
        return ScaleUpActivity.NO_ACTIVITY

    def unregistered_nodes(self) -> list[UnregisteredNode]:
        return list(self.unregistered.values())

    def unregistered_to_delete(
        self, now: float, force: bool = False, foreign_too: bool = False
    ) -> dict[str, list[UnregisteredNode]]:
        """``removeOldUnregisteredNodes``' choice per group (ZeroOrMax override not applied here);
        instances kubetide did not launch only with ``foreign_too`` (``--delete-unregistered-foreign-instances``)."""
        by_group: dict[str, list[UnregisteredNode]] = {}
        for u in self.unregistered.values():
            if u.foreign and not foreign_too:
                continue
            by_group.setdefault(u.group, []).append(u)
        out = {}
        for gid, nodes in by_group.items():
            group = self._groups.get(gid)
            if group is None:
                continue
            provision = self.group_options(gid).max_node_provision_time
            chosen = unregistered_to_delete(
                nodes, self._targets.get(gid, 0), group.min_size(), now, provision, force
            )
            if chosen:
                out[gid] = chosen
        return out

    def kept_foreign(self, now: float) -> list[UnregisteredNode]:
        """Instances kubetide did not launch, unregistered past ``--max-node-provision-time``: the ones
        CA would have terminated (kept unless ``--delete-unregistered-foreign-instances``)."""
        return [
            u
            for u in self.unregistered.values()
            if u.foreign and u.since + self.group_options(u.group).max_node_provision_time < now
        ]

    def newly_kept_foreign(self, now: float) -> list[UnregisteredNode]:
        """:meth:`kept_foreign` not reported yet by this process (each is reported once)."""
        fresh = [u for u in self.kept_foreign(now) if u.instance_id not in self._announced_foreign]
        self._announced_foreign.update(u.instance_id for u in fresh)
        return fresh

    def size_fixes(self, now: float) -> dict[str, int]:
        """``fixNodeGroupSize``: the negative ``DecreaseTargetSize`` delta per group to apply now."""
        out = {}
        for gid, incorrect in self.incorrect_sizes.items():
            delta = size_fix_delta(incorrect, now, self.group_options(gid).max_node_provision_time)
            if delta is not None:
                out[gid] = delta
        return out

    def persisted_state(self) -> PersistedState:
        """What a restarted autoscaler must read back (see :mod:`.persisted`)."""
        return PersistedState(
            dict(self.scale_up_requests),
            dict(self._registered_at_request),
            self.backoff.entries(),
            dict(self.unregistered),
            self._failing,
            dict(self.incorrect_sizes),
        )

    def restore(self, state: PersistedState) -> None:
        """At start, before the first update: the previous process's requests, backoff, unregistered
        first-seen times and already-failing instances."""
        self.scale_up_requests.update(state.scale_ups)
        self._registered_at_request.update(state.registered_at_request)
        for gid, entry in state.backoff.items():
            self.backoff.restore(gid, entry)
        self.unregistered.update(state.unregistered)
        self.incorrect_sizes.update(state.incorrect)
        self._restored = True
        self._failing = self._failing | state.failing

    def instance_state(self, instance_id: str) -> InstanceState | None:
        """The cloud state of the instance with this id (a Node's providerID), as read this loop."""
        inst = self._instance_index.get(instance_id) if instance_id else None
        return inst.status.state if inst is not None and inst.status is not None else None

    def instances_with_creation_errors(self) -> dict[str, list[Instance]]:
        """``deleteCreatedNodesWithErrors``' input: every failed instance, per group (retried each loop)."""
        return {gid: list(failed) for gid, failed in self._failed.items() if failed}


def _id(group: NodeGroup | None) -> str | None:
    return group.id() if group is not None else None


_Count = tuple[dict[ReadinessBucket, list[str]], list[str]]


def _new_count() -> _Count:
    """Names per bucket (every bucket) and the registered names, none yet."""
    return {b: [] for b in ReadinessBucket}, []
