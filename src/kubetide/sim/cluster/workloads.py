"""Workload controllers: Deployments / ReplicaSets / StatefulSets keep ``replicas`` pods, DaemonSets one
pod per eligible node, Jobs run pods to completion. Each reconciles against the cluster through
:class:`ClusterOps` whenever something it owns changes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from kubetide.model.fields import Node
from kubetide.model.node import NodeView
from kubetide.model.placement import placement_of
from kubetide.model.pod import OwnerRef
from kubetide.model.selectors import LabelSelector
from kubetide.model.workloads import ScaleTarget
from kubetide.sim.cluster.pods import SimPod, deletion_order
from kubetide.sim.cluster.templates import PodTemplate, parse_template

_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"  # Kubernetes' random-suffix alphabet


class ClusterOps(Protocol):
    def create_pod(
        self,
        owner: Workload,
        template: PodTemplate,
        name: str,
        now: float,
        node: str | None = None,
        ordinal: int = -1,
        bound: str | None = None,
    ) -> SimPod | None: ...

    def delete_pod(self, pod: SimPod, now: float, reason: str) -> None: ...


@dataclass(eq=False)
class Workload:
    """Shared state of every pod-owning controller."""

    kind: str
    namespace: str
    name: str
    template: PodTemplate
    selector: LabelSelector
    rng: np.random.Generator
    pods: dict[str, SimPod] = field(default_factory=dict)  # alive (not deleted) pods by name
    # The nodes its next pods are bound to (kubetide.io/placement: where they ran when recorded),
    # one entry per pod, spent in order; then the scheduler places them.
    placement: list[str] = field(default_factory=list)
    version: int = 0  # bumped on every change of its pods, for caches
    key: str = field(init=False)  # "Kind/namespace/name"
    selector_text: str = field(init=False)  # the scale subresource's status.selector

    def __post_init__(self) -> None:
        self.key = f"{self.kind}/{self.namespace}/{self.name}"
        self.selector_text = str(self.selector)  # the scale subresource's status.selector

    @property
    def owner_ref(self) -> OwnerRef:
        return OwnerRef(self.kind, self.name, f"uid-{self.key}", True)

    def random_name(self, prefix: str) -> str:
        while True:
            suffix = "".join(_ALPHABET[i] for i in self.rng.integers(0, len(_ALPHABET), 5))
            name = f"{prefix}-{suffix}"
            if name not in self.pods:
                return name

    def next_node(self) -> str | None:
        """The node the next pod is bound to (None: the scheduler places it)."""
        return self.placement.pop(0) if self.placement else None

    def reconcile(self, ops: ClusterOps, now: float) -> None:  # pragma: no cover - overridden
        raise NotImplementedError


@dataclass(eq=False)
class ReplicatedWorkload(Workload):
    """Deployment / ReplicaSet (random names, delete by rank) or StatefulSet (ordinals)."""

    replicas: int = 1
    ordered: bool = False  # StatefulSet with podManagementPolicy OrderedReady (the default)
    pod_prefix: str = ""

    @property
    def scale_target(self) -> ScaleTarget:
        return ScaleTarget(self.kind, self.name, self.namespace, self.replicas, len(self.pods), self.selector)

    def reconcile(self, ops: ClusterOps, now: float) -> None:
        alive = list(self.pods.values())
        if self.kind == "StatefulSet":
            self._reconcile_ordinals(ops, now, alive)
            return
        diff = self.replicas - len(alive)
        for _ in range(max(diff, 0)):
            ops.create_pod(
                self, self.template, self.random_name(self.pod_prefix), now, bound=self.next_node()
            )
        if diff < 0:
            colocated: dict[str, int] = {}
            for p in alive:
                if p.node is not None:
                    colocated[p.node] = colocated.get(p.node, 0) + 1
            for pod in deletion_order(alive, colocated)[:-diff]:
                ops.delete_pod(pod, now, "ScaleDown")

    def _reconcile_ordinals(self, ops: ClusterOps, now: float, alive: list[SimPod]) -> None:
        by_ordinal = {p.ordinal: p for p in alive}
        # Scale down from the highest ordinal. OrderedReady removes one at a time, each only while
        # every other pod is Running and Ready; a deletion takes no time here, so the next follows
        # at once (a pod turning Ready reconciles again).
        for o in sorted((o for o in by_ordinal if o >= self.replicas), reverse=True):
            if self.ordered and not all(
                p.phase == "Running" and p.ready for q, p in by_ordinal.items() if q != o
            ):
                return
            ops.delete_pod(by_ordinal.pop(o), now, "ScaleDown")
        for o in range(self.replicas):
            if o in by_ordinal:
                if self.ordered and not (by_ordinal[o].phase == "Running" and by_ordinal[o].ready):
                    return  # OrderedReady: wait for each pod before creating the next
                continue
            ops.create_pod(self, self.template, f"{self.name}-{o}", now, ordinal=o, bound=self.next_node())
            if self.ordered:
                return


@dataclass(eq=False)
class DaemonSetWorkload(Workload):
    """One pod per node the template can run on (selector, affinity, taints), bound directly."""

    def eligible(self, node: NodeView) -> bool:
        spec = self.template.view
        if any(node.labels.get(k) != v for k, v in spec.node_selector.items()):
            return False
        terms = spec.required_node_affinity
        if terms is not None and not any(t.matches(node.name, node.labels) for t in terms):
            return False
        return all(
            taint.effect == "PreferNoSchedule" or any(t.tolerates(taint) for t in spec.tolerations)
            for taint in node.taints
        )

    def reconcile_nodes(
        self, ops: ClusterOps, nodes: Mapping[str, NodeView], now: float, prune: bool = True
    ) -> None:
        """Create the missing pods on ``nodes``; with ``prune`` (``nodes`` is every node), delete pods
        whose node is gone."""
        have = {p.pinned: p for p in self.pods.values()}
        for name, node in nodes.items():
            if name not in have and self.eligible(node):
                ops.create_pod(self, self.template, self.random_name(self.name), now, node=name)
        if prune:
            self.prune(ops, nodes, now)

    def prune(self, ops: ClusterOps, nodes: Mapping[str, object], now: float) -> None:
        """Delete the pods whose node is not in ``nodes`` (every node there is)."""
        for pod in [p for p in self.pods.values() if p.pinned not in nodes]:
            ops.delete_pod(pod, now, "NodeGone")


@dataclass(eq=False)
class JobWorkload(Workload):
    """Keeps ``parallelism`` pods running until ``completions`` pods succeeded."""

    parallelism: int = 1
    completions: int = 1
    succeeded: int = 0

    @property
    def complete(self) -> bool:
        return self.succeeded >= self.completions

    def reconcile(self, ops: ClusterOps, now: float) -> None:
        if self.complete:
            return
        active = [p for p in self.pods.values() if p.phase not in ("Succeeded", "Failed")]
        want = min(self.parallelism, self.completions - self.succeeded)
        for _ in range(want - len(active)):
            ops.create_pod(self, self.template, self.random_name(self.name), now, bound=self.next_node())


def build_workload(manifest: Mapping[str, Any], rng: np.random.Generator) -> Workload | None:
    """The controller for a pod-owning manifest (None for other kinds)."""
    kind = manifest["kind"]
    root = Node(manifest)
    meta, spec = root.get("metadata"), root.get("spec")
    namespace = meta.get("namespace").str("default")
    name = meta.get("name").str()
    if kind in ("Deployment", "ReplicaSet", "StatefulSet"):
        target = ScaleTarget.from_manifest(manifest)
        template = parse_template(target.template, namespace, "spec.template")
        prefix = (
            f"{name}-{''.join(_ALPHABET[i] for i in rng.integers(0, len(_ALPHABET), 10))}"
            if kind == "Deployment"
            else name
        )
        return ReplicatedWorkload(
            kind,
            namespace,
            name,
            template,
            target.selector,
            rng,
            replicas=target.replicas,
            ordered=kind == "StatefulSet"
            and spec.get("podManagementPolicy").str("OrderedReady") == "OrderedReady",
            pod_prefix=prefix,
            placement=list(placement_of(manifest)),
        )
    if kind == "DaemonSet":
        template = parse_template(spec.get("template").mapping(), namespace, "spec.template")
        return DaemonSetWorkload(
            kind, namespace, name, template, LabelSelector.parse(spec.get("selector")), rng
        )
    if kind == "Job":
        template = parse_template(
            spec.get("template").mapping(),
            namespace,
            "spec.template",
            meta.get("annotations").get("kubetide.io/duration").str(None),
        )
        parallelism = spec.get("parallelism").int(1, minimum=0)
        return JobWorkload(
            kind,
            namespace,
            name,
            template,
            LabelSelector(),
            rng,
            parallelism=parallelism,
            completions=spec.get("completions").int(parallelism, minimum=0),
            placement=list(placement_of(manifest)),
        )
    return None
