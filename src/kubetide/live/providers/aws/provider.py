"""The ``aws`` cloud provider: Auto Scaling groups as CA's node groups, with CA's aws provider's semantics.

``refresh()`` (once per loop) describes the managed groups: the ``--nodes`` ones by name, the
auto-discovered ones by tag filter, 100 to a call, and the scaling activities of only those groups whose
desired capacity is ahead of their instances (the groups with a scale-up in flight). Every other call of
the loop reads that snapshot. Desired-but-not-launched capacity is listed as CA's placeholder instances
``i-placeholder-<asg>-<n>``; when the group's activities show the launch failed, they carry the typed
error (:mod:`kubetide.live.providers.aws.activities`) so CA fails over in the same loop.

Writes: ``increase_size`` is ``SetDesiredCapacity``; ``atomic_increase_size`` (kubetide's: CA's aws
provider has none) is an instant EC2 Fleet attached to the group, or a scale-up rolled back on a failed
launch (:mod:`kubetide.live.providers.aws.atomic`); ``delete_nodes`` is one
``TerminateInstanceInAutoScalingGroup`` per instance with the desired capacity decremented (placeholders
are dropped by lowering the desired capacity to the launched instances, as CA does); and
``decrease_target_size`` is ``SetDesiredCapacity``. After each write the snapshot is updated at once (as
CA's cache), so the rest of the loop sees the new target. AWS failures raise CloudProviderError.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace

from kubetide.cloud.instance import (
    CloudProviderError,
    Instance,
    InstanceErrorInfo,
    InstanceState,
    InstanceStatus,
    NodeGroupAutoscalingOptions,
    NodeTemplate,
    NotImplementedByProvider,
)
from kubetide.cloud.provider import BulkNodeLookup, CloudProvider, NodeGroup, PricingModel, StaticNodeGroup
from kubetide.live.providers.aws.activities import failed_launch
from kubetide.live.providers.aws.api import AsgInfo, AsgInstance, AwsApi, AwsCallError, InstanceTypeInfo
from kubetide.live.providers.aws.atomic import (
    PendingIncrease,
    came_since,
    fleet_refusal,
    launch_by_fleet,
    rollback_route,
)
from kubetide.live.providers.aws.presence import GroupPresence, MissingGroup, StartupCheck
from kubetide.live.providers.aws.pricing import AwsPricing
from kubetide.live.providers.aws.specs import ExplicitGroup
from kubetide.live.providers.aws.template import options_from_tags, template_node
from kubetide.model.node import NodeView

__all__ = ["PLACEHOLDER_PREFIX", "AwsCloudProvider", "AwsNodeGroup", "parse_provider_id", "provider_id"]

log = logging.getLogger(__name__)

PLACEHOLDER_PREFIX = "i-placeholder-"
_SCHEME = "aws:///"
_TERMINATING = ("Terminating", "Terminating:Wait", "Terminating:Proceed", "Terminated")
# In the group but not serving it: put in Standby or being detached by someone, or parked in a warm
# pool. CA counts them Running and, with no Node, terminates them as unregistered.
_OUT_OF_SERVICE = ("EnteringStandby", "Standby", "Detaching", "Detached")
_TEMPLATE_TTL = 600.0  # seconds a group's instance type is trusted (CA's asgInstanceTypeCache: 10 min)


def provider_id(zone: str, instance_id: str) -> str:
    """The providerID AWS's cloud controller writes on an instance's Node."""
    return f"{_SCHEME}{zone}/{instance_id}"


def parse_provider_id(value: str) -> str | None:
    """The instance id of an ``aws:///<zone>/<id>`` providerID; None for anything else."""
    if not value.startswith(_SCHEME):
        return None
    _, sep, instance = value[len(_SCHEME) :].rpartition("/")
    return instance if sep and instance else None


@contextmanager
def _cloud_errors(what: str) -> Iterator[None]:
    try:
        yield
    except AwsCallError as exc:
        raise CloudProviderError(f"{what}: {exc}") from exc


@dataclass
class _GroupState:
    """One group as the last refresh saw it, updated in place by this process's own writes."""

    info: AsgInfo | None  # None: a --nodes group AWS does not know (kept, as CA keeps it)
    desired: int
    last_update: float = 0.0  # our last size change: activities older than it are history
    launch_error: InstanceErrorInfo | None = None


class AwsNodeGroup(StaticNodeGroup):
    static_reason = "Auto Scaling groups are not autoprovisioned"

    def __init__(self, provider: AwsCloudProvider, name: str, min_size: int, max_size: int) -> None:
        self._provider = provider
        self._name = name
        self._min = min_size
        self._max = max_size

    def id(self) -> str:
        return self._name

    def min_size(self) -> int:
        return self._min

    def max_size(self) -> int:
        return self._max

    def _set_bounds(self, min_size: int, max_size: int) -> None:
        self._min, self._max = min_size, max_size

    def target_size(self) -> int:
        return self._provider._state(self._name).desired

    def increase_size(self, delta: int) -> None:
        self._provider._increase(self, delta)

    def atomic_increase_size(self, delta: int) -> str:
        return self._provider._atomic_increase(self, delta)

    def delete_nodes(self, nodes: Sequence[NodeView]) -> None:
        self._provider._delete(self, nodes, force=False)

    def force_delete_nodes(self, nodes: Sequence[NodeView]) -> None:
        self._provider._delete(self, nodes, force=True)

    def decrease_target_size(self, delta: int) -> None:
        self._provider._decrease_target(self, delta)

    def nodes(self) -> list[Instance]:
        return self._provider._instances(self._name)

    def template_node_info(self) -> NodeTemplate:
        return NodeTemplate(self._provider._template(self._name))

    def get_options(self, defaults: NodeGroupAutoscalingOptions) -> NodeGroupAutoscalingOptions | None:
        info = self._provider._state(self._name).info
        return options_from_tags(info.tags, defaults, self._name) if info is not None else None

    def debug(self) -> str:
        return f"{self._name} (min: {self._min}, max: {self._max}, target: {self.target_size()})"


class AwsCloudProvider:
    def __init__(
        self,
        api: AwsApi,
        explicit: Sequence[ExplicitGroup] = (),
        discovery: Sequence[dict[str, str]] = (),
        *,
        pricing: PricingModel | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.api = api
        self._pricing = pricing
        self._explicit = {g.name: g for g in explicit}
        self._discovery = list(discovery)
        self._clock = clock
        self._lock = threading.RLock()  # CA's loop and the batch autoscaler may share one provider
        self._groups: dict[str, AwsNodeGroup] = {
            g.name: AwsNodeGroup(self, g.name, _bound(g.min_size, 0), _bound(g.max_size, 0)) for g in explicit
        }
        self._states: dict[str, _GroupState] = {g.name: _GroupState(None, 0) for g in explicit}
        self._by_instance: dict[str, str] = {}
        self._types: dict[str, InstanceTypeInfo] = {}  # instance type facts never change
        self._group_types: dict[str, tuple[str, float]] = {}  # group -> (instance type, when looked up)
        self.presence = GroupPresence(api.region)
        self._pending: dict[str, PendingIncrease] = {}  # rollback-route increases not yet delivered

    # --- CloudProvider

    def name(self) -> str:
        return "aws"

    def node_groups(self) -> list[NodeGroup]:
        with self._lock:
            return list(self._groups.values())

    def node_group_for_node(self, node: NodeView) -> NodeGroup | None:
        instance = parse_provider_id(node.provider_id)
        with self._lock:
            group = self._by_instance.get(instance) if instance is not None else None
            return self._groups.get(group) if group is not None else None

    def has_instance(self, node: NodeView) -> bool:
        # As CA's aws provider: not offered, CA falls back to the ToBeDeleted taint.
        raise NotImplementedByProvider("the aws provider does not look instances up one by one")

    def gpu_label(self) -> str:
        return "k8s.amazonaws.com/accelerator"  # CA's aws provider's GPULabel

    def pricing(self) -> PricingModel:
        if self._pricing is None:
            raise NotImplementedByProvider("the aws provider was built without prices")
        return self._pricing

    def refresh(self) -> None:
        """Describe the managed groups (and the activities of those launching); replace the snapshot."""
        with self._lock, _cloud_errors("aws refresh"):
            found: dict[str, AsgInfo] = {}
            if self._explicit:
                found.update((g.name, g) for g in self.api.groups_by_names(list(self._explicit)))
            discovered: list[tuple[dict[str, str], int]] = []
            for tags in self._discovery:
                matching = self.api.groups_by_tags(tags)
                discovered.append((tags, len(matching)))
                found.update((g.name, g) for g in matching)
            now = self._clock()
            self.presence.update(self._explicit, found, discovered, now)
            groups: dict[str, AwsNodeGroup] = {}
            states: dict[str, _GroupState] = {}
            by_instance: dict[str, str] = {}
            for name in sorted(set(found) | set(self._explicit)):
                info = found.get(name)
                explicit = self._explicit.get(name)
                group = self._groups.get(name)
                lo = _bound(explicit.min_size if explicit else None, info.min_size if info else 0)
                hi = _bound(explicit.max_size if explicit else None, info.max_size if info else 0)
                if group is None:
                    log.info("registering ASG %s (min %d, max %d)", name, lo, hi)
                    group = AwsNodeGroup(self, name, lo, hi)
                group._set_bounds(lo, hi)
                groups[name] = group
                previous = self._states.get(name)
                state = _GroupState(info, info.desired if info is not None else 0)
                state.last_update = previous.last_update if previous is not None else 0.0
                if info is not None:
                    for inst in info.instances:
                        by_instance[inst.id] = name
                    if info.desired > len(info.instances):
                        state.launch_error = self._launch_error(info, state.last_update)
                states[name] = state
            for name in set(self._groups) - set(groups):
                log.info("unregistering ASG %s: no longer discovered", name)
            self._groups, self._states, self._by_instance = groups, states, by_instance
            self._settle_pending()
            log.debug("aws refresh at %.0f: %d groups, %d instances", now, len(groups), len(by_instance))

    def cleanup(self) -> None:
        pass

    def bulk_lookup(self) -> BulkNodeLookup | None:
        return None  # node by node

    # --- what the user named and AWS lacks, and prices (for the start-up check and the status)

    def startup_check(self) -> StartupCheck:
        """One refresh (one ``DescribeAutoScalingGroups`` per 100 named groups and per discovery spec):
        are the credentials, the region and the endpoint good, and does AWS have the named groups?"""
        try:
            self.refresh()
        except CloudProviderError as exc:
            cause = exc.__cause__
            return self.presence.startup_check(str(cause) if isinstance(cause, AwsCallError) else str(exc))
        return self.presence.startup_check()

    def missing_groups(self) -> dict[str, MissingGroup]:
        """The named groups the last refresh did not find."""
        with self._lock:
            return dict(self.presence.missing)

    def unpriced_groups(self) -> dict[str, str]:
        """Group -> why the price expander has no price for its new nodes (existing groups only)."""
        pricing = self._pricing
        if not isinstance(pricing, AwsPricing):
            return {}
        out: dict[str, str] = {}
        for group in self.node_groups():
            if group.id() in self.presence.missing:
                continue
            try:
                node = self._template(group.id())
            except CloudProviderError as exc:
                out[group.id()] = f"no template to price: {exc}"
                continue
            why = pricing.why_unpriced(node)
            if why:
                out[group.id()] = why
        return out

    # --- node group operations

    def _state(self, name: str) -> _GroupState:
        with self._lock:
            return self._states.get(name) or _GroupState(None, 0)

    def _launch_error(self, info: AsgInfo, since: float) -> InstanceErrorInfo | None:
        try:
            error = failed_launch(self.api.scaling_activities(info.name), since)
        except AwsCallError as exc:
            # As CA: not knowing is not a failure; the placeholders stay plain (Creating).
            log.warning("%s: could not read scaling activities: %s", info.name, exc)
            return None
        if error is not None:
            log.warning("ASG %s cannot provision any more nodes: %s", info.name, error.key)
        return error

    def _increase(self, group: AwsNodeGroup, delta: int) -> None:
        if delta <= 0:
            raise CloudProviderError("size increase must be positive")
        with self._lock, _cloud_errors(f"increase size of {group.id()}"):
            state = self._state(group.id())
            desired = state.desired + delta
            if desired > group.max_size():
                raise CloudProviderError(
                    f"size increase too large - desired:{desired} max:{group.max_size()}"
                )
            self._set_desired(group.id(), state, desired)

    def _atomic_increase(self, group: AwsNodeGroup, delta: int) -> str:
        """All of ``delta`` or nothing (see :mod:`~kubetide.live.providers.aws.atomic`); which route."""
        if delta <= 0:
            raise CloudProviderError("size increase must be positive")
        name = group.id()
        with self._lock, _cloud_errors(f"atomic increase of {name}"):
            state = self._state(name)
            desired = state.desired + delta
            if desired > group.max_size():
                raise CloudProviderError(
                    f"size increase too large - desired:{desired} max:{group.max_size()}"
                )
            info = state.info
            why = fleet_refusal(info, delta)
            if info is not None and info.launch_template is not None and not why:
                spot = self.api.launch_template_spot(info.launch_template)
                route = launch_by_fleet(self.api, info, self._instance_type(info).name, delta, spot=spot)
                state.desired = desired
                state.last_update = self._clock()
                state.launch_error = None
                self._states[name] = state
                return route
            before = frozenset(i.id for i in info.instances) if info is not None else frozenset()
            self._set_desired(name, state, desired)
            self._pending[name] = PendingIncrease(before, delta, desired)
            return rollback_route(name, why)

    def _settle_pending(self) -> None:
        """After a refresh: forget the rollback-route increases that came (or whose target someone else
        lowered); roll back those whose launch failed before all of them came."""
        for name, pending in list(self._pending.items()):
            state = self._states.get(name)
            info = state.info if state is not None else None
            if state is None or info is None:
                del self._pending[name]
                continue
            came = came_since(info, pending, _TERMINATING)
            if len(came) >= pending.delta or state.desired < pending.target:
                del self._pending[name]
                continue
            if state.launch_error is None:
                continue  # still launching
            try:
                self._roll_back(name, state, came, pending)
            except AwsCallError as exc:
                log.error(
                    "ASG %s: rollback of a failed all-or-nothing increase failed, retried: %s", name, exc
                )
                continue
            del self._pending[name]

    def _roll_back(self, name: str, state: _GroupState, came: list[str], pending: PendingIncrease) -> None:
        log.warning(
            "ASG %s: all-or-nothing increase of %d failed after %d instance(s) came (%s): rolling back",
            name,
            pending.delta,
            len(came),
            state.launch_error.key if state.launch_error else "",
        )
        lifecycle: dict[str, str] = {}
        for instance in came:
            self.api.terminate_instance(instance)  # desired capacity decremented, as CA's DeleteNodes
            state.desired = max(0, state.desired - 1)
            lifecycle[instance] = "Terminating"
        # The capacity still asked for and never launched: dropped, as CA drops failed placeholders.
        self._set_desired(name, state, max(0, state.desired - (pending.delta - len(came))))
        _mark_lifecycle(state, lifecycle)

    def _set_desired(self, name: str, state: _GroupState, desired: int) -> None:
        log.info("Setting asg %s size to %d", name, desired)
        now = self._clock()
        self.api.set_desired_capacity(name, desired)
        state.desired = desired
        state.last_update = now
        state.launch_error = None  # a new request: older failures are history
        self._states[name] = state

    def _delete(self, group: AwsNodeGroup, nodes: Sequence[NodeView], *, force: bool) -> None:
        name = group.id()
        with self._lock, _cloud_errors(f"delete nodes of {name}"):
            state = self._state(name)
            ids: list[str] = []
            for node in nodes:
                instance = parse_provider_id(node.provider_id)
                if instance is None or (
                    self._by_instance.get(instance) != name
                    # i-placeholder-<asg>-<n>: by the whole name, so group "a" does not take "ab"'s
                    and instance.rpartition("-")[0] != PLACEHOLDER_PREFIX + name
                ):
                    raise CloudProviderError(f"node {node.name} ({node.provider_id}) is not in ASG {name}")
                ids.append(instance)
            if not force and state.desired - len(ids) < group.min_size():
                raise CloudProviderError("min size reached, nodes will not be deleted")
            lifecycle = {i.id: i.lifecycle_state for i in (state.info.instances if state.info else ())}
            if any(i.startswith(PLACEHOLDER_PREFIX) for i in ids):
                # As CA: drop every placeholder at once by matching the desired capacity to the
                # instances AWS has launched, read afresh (one may have come up since the refresh).
                fresh = self.api.groups_by_names([name])
                launched = len(fresh[0].instances) if fresh else len(lifecycle)
                self._set_desired(name, state, launched)
            for instance in ids:
                if instance.startswith(PLACEHOLDER_PREFIX):
                    continue
                if lifecycle.get(instance) in _TERMINATING:
                    log.info("instance %s is already terminating, skipped", instance)
                    continue
                self.api.terminate_instance(instance)
                log.info("%s: terminated instance %s (desired capacity decremented)", name, instance)
                state.desired = max(0, state.desired - 1)
                lifecycle[instance] = "Terminating"
            _mark_lifecycle(state, lifecycle)

    def _decrease_target(self, group: AwsNodeGroup, delta: int) -> None:
        if delta >= 0:
            raise CloudProviderError("size decrease must be negative")
        name = group.id()
        with self._lock, _cloud_errors(f"decrease target size of {name}"):
            state = self._state(name)
            existing = len(state.info.instances) if state.info is not None else 0
            desired = state.desired + delta
            if desired < existing:
                raise CloudProviderError(
                    f"attempt to delete existing nodes targetSize:{state.desired} delta:{delta} "
                    f"existingNodes: {existing}"
                )
            if desired < group.min_size():
                raise CloudProviderError(f"target {desired} would be below min size {group.min_size()}")
            self._set_desired(name, state, desired)

    def _instances(self, name: str) -> list[Instance]:
        with self._lock:
            state = self._state(name)
            if state.info is None:
                return []
            result = [
                Instance(provider_id(i.zone, i.id), _status(i), out_of_service=_out_of_service(i))
                for i in state.info.instances
            ]
            zone = state.info.zones[0] if state.info.zones else ""
            for n in range(len(state.info.instances), state.desired):
                result.append(
                    Instance(
                        provider_id(zone, f"{PLACEHOLDER_PREFIX}{name}-{n}"),
                        InstanceStatus(InstanceState.Creating, state.launch_error),
                    )
                )
            return result

    def _template(self, name: str) -> NodeView:
        with self._lock, _cloud_errors(f"template of {name}"):
            info = self._state(name).info
            if info is None:
                raise CloudProviderError(f"ASG {name} does not exist in AWS region {self.api.region}")
            itype = self._instance_type(info)
            return template_node(info, itype, self.api.region)

    def _instance_type(self, info: AsgInfo) -> InstanceTypeInfo:
        now = self._clock()
        cached = self._group_types.get(info.name)
        if cached is not None and now - cached[1] < _TEMPLATE_TTL:
            type_name = cached[0]
        else:
            type_name = info.override_instance_type
            if not type_name and info.launch_template is not None:
                type_name = self.api.launch_template_instance_type(info.launch_template)
            if not type_name and info.launch_configuration:
                type_name = self.api.launch_configuration_instance_type(info.launch_configuration)
            if not type_name:
                raise CloudProviderError(f"ASG {info.name}: no instance type in its launch template")
            self._group_types[info.name] = (type_name, now)
        if type_name not in self._types:
            # Describe the types of every known group at once: one call instead of one per group.
            wanted = {type_name} | {t for t, _ in self._group_types.values()} - set(self._types)
            self._types.update((t.name, t) for t in self.api.instance_types(sorted(wanted)))
        found = self._types.get(type_name)
        if found is None:
            raise CloudProviderError(f"ASG {info.name}: EC2 does not describe instance type {type_name}")
        return found


def _mark_lifecycle(state: _GroupState, lifecycle: dict[str, str]) -> None:
    """The snapshot's instances with the lifecycle states this process's own writes gave them."""
    if state.info is not None:
        state.info = replace(
            state.info,
            instances=tuple(
                replace(i, lifecycle_state=lifecycle.get(i.id, i.lifecycle_state))
                for i in state.info.instances
            ),
        )


def _bound(flag: int | None, asg: int) -> int:
    return flag if flag is not None else asg


def _status(instance: AsgInstance) -> InstanceStatus:
    state = instance.lifecycle_state
    if state in _TERMINATING:
        return InstanceStatus(InstanceState.Deleting)
    if state.startswith("Pending"):
        return InstanceStatus(InstanceState.Creating)
    return InstanceStatus(InstanceState.Running)


def _out_of_service(instance: AsgInstance) -> bool:
    state = instance.lifecycle_state
    return state in _OUT_OF_SERVICE or state.startswith("Warmed:")


def _conforms(provider: AwsCloudProvider, group: AwsNodeGroup) -> tuple[CloudProvider, NodeGroup]:
    return provider, group  # mypy checks that both implement the port
