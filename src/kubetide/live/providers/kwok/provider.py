"""The ``kwok`` cloud provider: node groups whose machines are Node objects kubetide creates and deletes.

``increase_size`` raises the target and records the creations (names chosen at once, each due after the
group's ``provisioningDelay``) in the shared state ConfigMap; they are carried out at once when the delay
is zero, else by the next ``refresh()`` after they fall due. CA calls ``refresh()`` at the start of every
loop (and so must any other user), so delays are honoured to within a loop: we chose that over a
background thread because the provider then has no thread of its own to stop, every write happens in the
caller's loop (under its leader election), and tests drive time through an injected clock.
``delete_nodes`` lowers the target first, then deletes the Node objects (a failure in between leaves a
node the autoscaler will delete again, never a node re-created).

Target semantics as an ASG's desired capacity: the persisted target counts existing nodes and creations in
flight; a group the state does not know yet adopts its existing nodes as its target. The Node objects are
the truth: at every refresh, and under every change, the state is reconciled with them
(:mod:`.reconcile`: no creation in flight past a group's max, the target its nodes plus those in
flight), so a state left by another run never grows a group past its max. API failures raise
CloudProviderError, as the port requires.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TypeVar

from kubetide.cloud.instance import (
    CloudProviderError,
    ErrorClass,
    Instance,
    InstanceErrorInfo,
    InstanceState,
    InstanceStatus,
    NodeGroupAutoscalingOptions,
    NodeTemplate,
    NotImplementedByProvider,
)
from kubetide.cloud.provider import BulkNodeLookup, CloudProvider, NodeGroup, PricingModel, StaticNodeGroup
from kubetide.live.guard.gate import WriteGate
from kubetide.live.providers.kwok.api import KubeCallError, KwokApi, Obj
from kubetide.live.providers.kwok.config import KwokGroupConfig
from kubetide.live.providers.kwok.nodes import (
    GROUP_LABEL,
    PROVIDER_SCHEME,
    new_node_name,
    node_manifest,
    provider_id,
    template_view,
)
from kubetide.live.providers.kwok.reconcile import Correction, reconcile
from kubetide.live.providers.kwok.state import STATE_CONFIGMAP, GroupState, KwokState, Pending, StateStore
from kubetide.model.node import NodeView

__all__ = ["KwokCloudProvider", "KwokNodeGroup"]

log = logging.getLogger(__name__)
T = TypeVar("T")


@contextmanager
def _cloud_errors(what: str) -> Iterator[None]:
    try:
        yield
    except KubeCallError as exc:
        raise CloudProviderError(f"{what}: {exc}") from exc


class KwokNodeGroup(StaticNodeGroup):
    static_reason = "kwok node groups are static"

    def __init__(self, provider: KwokCloudProvider, config: KwokGroupConfig) -> None:
        self._provider = provider
        self.config = config

    def id(self) -> str:
        return self.config.name

    def min_size(self) -> int:
        return self.config.min_size

    def max_size(self) -> int:
        return self.config.max_size

    def target_size(self) -> int:
        return self._provider._group_state(self._provider._state, self.config.name).target

    def increase_size(self, delta: int) -> None:
        self._provider._increase(self, delta)

    def atomic_increase_size(self, delta: int) -> None:
        self._provider._increase(self, delta)  # one state write: all of it or none of it

    def delete_nodes(self, nodes: Sequence[NodeView]) -> None:
        self._provider._delete(self, nodes, force=False)

    def force_delete_nodes(self, nodes: Sequence[NodeView]) -> None:
        self._provider._delete(self, nodes, force=True)

    def decrease_target_size(self, delta: int) -> None:
        self._provider._decrease_target(self, delta)

    def nodes(self) -> list[Instance]:
        return self._provider._instances(self.config.name)

    def template_node_info(self) -> NodeTemplate:
        return NodeTemplate(template_view(self.config))

    def get_options(self, defaults: NodeGroupAutoscalingOptions) -> NodeGroupAutoscalingOptions | None:
        return None

    def debug(self) -> str:
        return (
            f"{self.config.name} (min: {self.config.min_size}, max: {self.config.max_size}, "
            f"target: {self.target_size()})"
        )


class KwokCloudProvider:
    def __init__(
        self,
        api: KwokApi,
        groups: Sequence[KwokGroupConfig],
        *,
        namespace: str = "kube-system",
        clock: Callable[[], float] = time.time,
        rng: random.Random | None = None,
        gate: WriteGate | None = None,
    ) -> None:
        """``gate``: the component's (:mod:`kubetide.live.guard`): what ``refresh()`` writes by itself
        (the state corrected, the creations due) goes through it, as every other write of the process
        does, so a dry run or a replica that does not lead creates no node another replica asked for
        and corrects its own copy of the state only. None: every write is made (a caller of its own)."""
        self._api = api
        self._gate = gate
        self._store = StateStore(api, namespace)
        self._groups = {g.name: KwokNodeGroup(self, g) for g in groups}
        self._clock = clock
        self._rng = rng or random.Random()
        self._state = KwokState()
        self._nodes: dict[str, dict[str, Obj]] | None = None  # group -> node name -> Node, last listing
        self._lock = threading.RLock()  # the batch autoscaler and CA may share one provider object
        # Creations the API server refused, by node name: listed as failed instances so CA backs the
        # group off and deletes them, as it does for a cloud's failed VMs (kept in memory only: the
        # next attempt, in this process or another, decides afresh).
        self._create_errors: dict[str, InstanceErrorInfo] = {}
        self._corrections: list[Correction] = []  # the last reconciliation's, each logged once

    # --- CloudProvider

    def name(self) -> str:
        return "kwok"

    def node_groups(self) -> list[NodeGroup]:
        return list(self._groups.values())

    def node_group_for_node(self, node: NodeView) -> NodeGroup | None:
        parsed = _parse_provider_id(node.provider_id)
        return self._groups.get(parsed[0]) if parsed is not None else None

    def has_instance(self, node: NodeView) -> bool:
        parsed = _parse_provider_id(node.provider_id)
        if parsed is None:
            raise CloudProviderError(f"node {node.name} has no kwok providerID ({node.provider_id!r})")
        group, name = parsed
        with self._lock:
            nodes = self._listing()
            pending = {p.name for p in self._group_state(self._state, group).pending}
            return name in nodes.get(group, {}) or name in pending

    def pricing(self) -> PricingModel:
        raise NotImplementedByProvider("the kwok provider has no prices")

    def gpu_label(self) -> str:
        return ""  # kwok nodes are GPU nodes by their allocatable nvidia.com/gpu alone

    def refresh(self) -> None:
        """Re-read the shared state and the nodes, reconcile the state with the nodes (written back when
        it was wrong), then carry out the creations that are due."""
        with self._lock, _cloud_errors("kwok refresh"):
            self._state = self._store.read()
            self._nodes = self._list_nodes()
            recorded = self._state.dump()
            corrections = reconcile(self._state, self._nodes, self._configs())
            for correction in corrections:
                if correction not in self._corrections:  # each once while it lasts, not every loop
                    level = logging.WARNING if correction.serious else logging.INFO
                    log.log(level, "kwok state corrected from the Node objects: %s", correction.text)
            self._corrections = corrections
            if self._state.dump() != recorded and self._admit(
                "write_kwok_state",
                f"write the corrected kwok state to ConfigMap {self._store.namespace}/{STATE_CONFIGMAP}",
            ):
                _, self._state = self._update(lambda state: None)
            now = self._clock()
            due = self._due(now)
            if due and self._admit("create_nodes", f"create the kwok nodes due: {', '.join(sorted(due))}"):
                self._carry_out(now)

    def _admit(self, action: str, what: str) -> bool:
        """Whether refresh() makes a write of its own (made, said in a dry run, refused when not leading).
        Quiet in a dry run: while the state stays as it is, every loop would say it again."""
        return self._gate is None or self._gate.admit(action, what, _not_leading, quiet=True)

    def cleanup(self) -> None:
        pass

    def bulk_lookup(self) -> BulkNodeLookup | None:
        return None  # node by node

    # --- node group operations (called through KwokNodeGroup)

    def _increase(self, group: KwokNodeGroup, delta: int) -> None:
        config = group.config
        if delta <= 0:
            raise CloudProviderError(f"size increase must be positive, got {delta}")
        with self._lock, _cloud_errors(f"increase size of {config.name}"):
            now = self._clock()
            existing = self._listing()

            def change(state: KwokState) -> list[str]:
                current = self._group_state(state, config.name)
                if current.target + delta > config.max_size:
                    raise CloudProviderError(
                        f"size increase too large - desired:{current.target + delta} max:{config.max_size}"
                    )
                taken = set(existing.get(config.name, {})) | {p.name for p in current.pending}
                names = []
                for _ in range(delta):
                    names.append(new_node_name(config.name, self._rng, taken))
                    taken.add(names[-1])
                current.pending += [Pending(n, now + config.provisioning_delay) for n in names]
                current.target += delta
                return names

            names, self._state = self._update(change)
            log.info(
                "%s: target raised by %d to %d (%s)",
                config.name,
                delta,
                self.target(config.name),
                ", ".join(names),
            )
            if config.provisioning_delay <= 0:
                self._carry_out(now)

    def _delete(self, group: KwokNodeGroup, nodes: Sequence[NodeView], *, force: bool) -> None:
        config = group.config
        names = []
        for node in nodes:
            parsed = _parse_provider_id(node.provider_id)
            if parsed is None or parsed[0] != config.name:
                raise CloudProviderError(f"node {node.name} is not in group {config.name}")
            names.append(parsed[1])
        with self._lock, _cloud_errors(f"delete nodes of {config.name}"):
            existing = self._listing()

            def change(state: KwokState) -> None:
                current = self._group_state(state, config.name, existing)
                if not force and current.target - len(names) < config.min_size:
                    raise CloudProviderError("min size reached, nodes will not be deleted")
                current.pending = [p for p in current.pending if p.name not in names]
                current.target = max(0, current.target - len(names))
                for name in names:
                    self._create_errors.pop(name, None)

            _, self._state = self._update(change)
            failures = []
            for name in names:
                try:
                    self._api.delete_node(name)
                except KubeCallError as exc:
                    if exc.code != 404:
                        failures.append(f"{name}: {exc}")
                        continue
                existing.get(config.name, {}).pop(name, None)
            log.info("%s: deleted %s, target now %d", config.name, ", ".join(names), self.target(config.name))
            if failures:
                raise CloudProviderError(f"could not delete nodes of {config.name}: {'; '.join(failures)}")

    def _decrease_target(self, group: KwokNodeGroup, delta: int) -> None:
        config = group.config
        if delta >= 0:
            raise CloudProviderError(f"size decrease must be negative, got {delta}")
        with self._lock, _cloud_errors(f"decrease target size of {config.name}"):
            existing = self._listing()

            def change(state: KwokState) -> None:
                current = self._group_state(state, config.name, existing)
                count = len(existing.get(config.name, {}))
                new_target = current.target + delta
                if new_target < count:
                    raise CloudProviderError(
                        f"attempt to delete existing nodes targetSize:{current.target} delta:{delta} "
                        f"existingNodes: {count}"
                    )
                if new_target < config.min_size:
                    raise CloudProviderError(f"target {new_target} would be below min size {config.min_size}")
                in_flight = [p for p in current.pending if p.name not in existing.get(config.name, {})]
                current.pending = sorted(in_flight, key=lambda p: p.due)[: new_target - count]
                current.target = new_target

            _, self._state = self._update(change)

    def _instances(self, group: str) -> list[Instance]:
        with self._lock:
            existing = self._listing().get(group, {})
            result = [
                Instance(provider_id(group, n), InstanceStatus(InstanceState.Running))
                for n in sorted(existing)
            ]
            result += [
                Instance(
                    provider_id(group, p.name),
                    InstanceStatus(InstanceState.Creating, self._create_errors.get(p.name)),
                )
                for p in self._group_state(self._state, group).pending
                if p.name not in existing
            ]
            return result

    def _update(self, change: Callable[[KwokState], T]) -> tuple[T, KwokState]:
        """A change of the shared state, made on the state as re-read and reconciled with the nodes
        last listed: a stale record never lets a change take a group past its max."""
        listing, configs = self._listing(), self._configs()

        def reconciled(state: KwokState) -> T:
            reconcile(state, listing, configs)
            return change(state)

        return self._store.update(reconciled)

    def _configs(self) -> dict[str, KwokGroupConfig]:
        return {name: group.config for name, group in self._groups.items()}

    def target(self, group: str) -> int:
        return self._group_state(self._state, group).target

    # --- helpers

    def _group_state(
        self, state: KwokState, group: str, existing: dict[str, dict[str, Obj]] | None = None
    ) -> GroupState:
        """The group's state; a group not in the ConfigMap yet adopts its existing nodes as its target."""
        current = state.groups.get(group)
        if current is None:
            nodes = existing if existing is not None else (self._nodes or {})
            current = state.groups[group] = GroupState(target=len(nodes.get(group, {})))
        return current

    def _listing(self) -> dict[str, dict[str, Obj]]:
        if self._nodes is None:
            self._nodes = self._list_nodes()
        return self._nodes

    def _list_nodes(self) -> dict[str, dict[str, Obj]]:
        result: dict[str, dict[str, Obj]] = {g: {} for g in self._groups}
        for node in self._api.list_nodes(GROUP_LABEL):
            parsed = _parse_provider_id(str((node.get("spec") or {}).get("providerID", "")))
            if (
                parsed is not None
                and parsed[0] in result
                and not (node.get("metadata") or {}).get("deletionTimestamp")
            ):
                result[parsed[0]][parsed[1]] = node
        return result

    def _due(self, now: float) -> list[str]:
        """The creations in flight whose time has come."""
        return [
            p.name
            for name in self._groups
            for p in self._group_state(self._state, name).pending
            if p.due <= now
        ]

    def _carry_out(self, now: float) -> None:
        """Create the Nodes whose creation is due, then drop them from the state. A creation that fails
        stays in flight and is tried again at the next refresh."""
        existing = self._listing()
        done: set[str] = set()
        for name, group in self._groups.items():
            for pending in self._group_state(self._state, name).pending:
                if pending.due > now:
                    continue
                if pending.name not in existing[name]:
                    manifest = node_manifest(group.config, pending.name)
                    try:
                        self._api.create_node(manifest)
                        log.info("%s: created node %s", name, pending.name)
                    except KubeCallError as exc:
                        if exc.code != 409:  # 409: another replica created it first, which is as good
                            log.warning("%s: creating node %s failed: %s", name, pending.name, exc)
                            self._create_errors[pending.name] = InstanceErrorInfo(
                                ErrorClass.Other, f"api-{exc.code}", f"creating node {pending.name}: {exc}"
                            )
                            continue
                    self._create_errors.pop(pending.name, None)
                    existing[name][pending.name] = manifest
                done.add(pending.name)
        if not done:
            return

        def change(state: KwokState) -> None:
            for group_state in state.groups.values():
                group_state.pending = [p for p in group_state.pending if p.name not in done]

        _, self._state = self._update(change)


def _not_leading() -> CloudProviderError:
    return CloudProviderError("not the leader any more: kwok write refused")


def _parse_provider_id(value: str) -> tuple[str, str] | None:
    if not value.startswith(PROVIDER_SCHEME):
        return None
    group, sep, name = value[len(PROVIDER_SCHEME) :].partition("/")
    return (group, name) if sep and group and name else None


def _conforms(provider: KwokCloudProvider, group: KwokNodeGroup) -> tuple[CloudProvider, NodeGroup]:
    return provider, group  # mypy checks that both implement the port
