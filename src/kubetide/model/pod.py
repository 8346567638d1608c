"""Typed, immutable view of a Pod: what the autoscalers and the scheduler read from it.

Built from a manifest as ``kubectl get pod -o yaml`` prints it. The effective request is computed as
Kubernetes does (``k8s.io/component-helpers/resource.PodRequests``): the larger of the app containers'
sum and the init containers' peak, where restartable init containers (sidecars) run alongside
everything after them, plus the pod overhead; pod-level requests replace cpu/memory when the
``PodLevelResources`` feature is on.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

from kubetide.model.fields import Node
from kubetide.model.resources import CPU, EMPTY, MEMORY, Resources
from kubetide.model.scheduling_terms import (
    NodeSelectorTerm,
    PodAffinityTerm,
    Toleration,
    TopologySpreadConstraint,
)

__all__ = ["Container", "HostPort", "OwnerRef", "Pod"]

PHASES = ("Pending", "Running", "Succeeded", "Failed", "Unknown")
_POD_LEVEL_RESOURCES = (CPU, MEMORY)


@dataclass(frozen=True, slots=True)
class HostPort:
    port: int
    protocol: str = "TCP"
    host_ip: str = "0.0.0.0"

    def conflicts(self, other: HostPort) -> bool:
        if self.port != other.port or self.protocol != other.protocol:
            return False
        wildcard = "0.0.0.0"
        return self.host_ip == other.host_ip or wildcard in (self.host_ip, other.host_ip)


@dataclass(frozen=True, slots=True)
class Container:
    name: str
    requests: Resources = EMPTY
    limits: Resources = EMPTY
    host_ports: tuple[HostPort, ...] = ()
    restartable: bool = False  # an init container with restartPolicy: Always (a sidecar)
    # Exact milli-values of the requests (the HPA divides by MilliValue(), even for memory).
    requests_milli: dict[str, int] | None = field(default=None, hash=False, compare=False)

    def request_milli(self, resource: str) -> int | None:
        if self.requests_milli is not None:
            return self.requests_milli.get(resource)
        if resource not in self.requests:
            return None
        value = self.requests[resource]
        return value if resource == CPU else value * 1000

    @classmethod
    def parse(cls, node: Node, init: bool = False) -> Container:
        resources = node.get("resources")
        ports = []
        for p in node.get("ports").list():
            host_port = p.get("hostPort").int(0, minimum=0)
            if host_port:
                ports.append(
                    HostPort(host_port, p.get("protocol").str("TCP"), p.get("hostIP").str("0.0.0.0"))
                )
        restart = node.get("restartPolicy").str(None)
        if restart is not None and not init:
            raise node.get("restartPolicy").error("is only allowed on init containers")
        requests = resources.get("requests")
        return cls(
            node.get("name").str(),
            Resources.parse(requests.value, requests.path),
            Resources.parse(resources.get("limits").value, resources.get("limits").path),
            tuple(ports),
            restart == "Always",
            {name: q.milli for name, q in ((k, v.quantity()) for k, v in requests.items())},
        )


@dataclass(frozen=True, slots=True)
class OwnerRef:
    kind: str
    name: str
    uid: str = ""
    controller: bool = False


@dataclass(frozen=True)
class Pod:
    name: str
    namespace: str = "default"
    uid: str = ""
    labels: dict[str, str] = field(default_factory=dict, hash=False, compare=False)
    annotations: dict[str, str] = field(default_factory=dict, hash=False, compare=False)
    owners: tuple[OwnerRef, ...] = ()
    containers: tuple[Container, ...] = ()
    init_containers: tuple[Container, ...] = ()
    overhead: Resources = EMPTY
    pod_requests: Resources | None = None  # spec.resources.requests (pod-level resources)
    node_name: str = ""
    node_selector: dict[str, str] = field(default_factory=dict, hash=False, compare=False)
    required_node_affinity: tuple[NodeSelectorTerm, ...] | None = None  # None: no required affinity
    pod_affinity: tuple[PodAffinityTerm, ...] = ()
    pod_anti_affinity: tuple[PodAffinityTerm, ...] = ()
    tolerations: tuple[Toleration, ...] = ()
    topology_spread: tuple[TopologySpreadConstraint, ...] = ()
    priority: int = 0
    scheduler_name: str = "default-scheduler"
    volumes: tuple[dict[str, Any], ...] = field(default=(), hash=False, compare=False)
    phase: str = "Pending"
    ready: bool | None = None  # None: no Ready condition
    ready_transition: float | None = None  # seconds since epoch of the Ready condition's last change
    start_time: float | None = None
    creation_time: float | None = None
    deletion_time: float | None = None
    # PodScheduled=False with reason Unschedulable: kube-scheduler's message (None when not set).
    unschedulable_message: str | None = None
    restart_policy: str = "Always"  # spec.restartPolicy: Always | OnFailure | Never
    termination_grace_s: float | None = None  # spec.terminationGracePeriodSeconds (None: unset, 30 s)
    # Exact milli-values of the pod-level requests, when known (the HPA divides by MilliValue()).
    pod_requests_milli: dict[str, int] | None = field(default=None, hash=False, compare=False)

    @classmethod
    def from_manifest(cls, manifest: Any, path: str = "") -> Pod:
        root = Node(manifest, path)
        meta, spec, status = root.get("metadata"), root.get("spec"), root.get("status")
        affinity = spec.get("affinity")
        required = affinity.get("nodeAffinity").get("requiredDuringSchedulingIgnoredDuringExecution")
        ready, transition, unschedulable = None, None, None
        for cond in status.get("conditions").list():
            kind = cond.get("type").str()
            if kind == "Ready":
                ready = cond.get("status").str() == "True"
                transition = cond.get("lastTransitionTime").time(None)
            elif (
                kind == "PodScheduled"
                and cond.get("status").str() == "False"
                and cond.get("reason").str("") == "Unschedulable"
            ):
                unschedulable = cond.get("message").str("")
        pod_res = spec.get("resources").get("requests")
        return cls(
            name=meta.get("name").str(),
            namespace=meta.get("namespace").str("default"),
            uid=meta.get("uid").str(""),
            labels=meta.get("labels").string_map(),
            annotations=meta.get("annotations").string_map(),
            owners=tuple(
                OwnerRef(
                    o.get("kind").str(),
                    o.get("name").str(),
                    o.get("uid").str(""),
                    o.get("controller").bool(False),
                )
                for o in meta.get("ownerReferences").list()
            ),
            containers=tuple(Container.parse(c) for c in spec.get("containers").list()),
            init_containers=tuple(Container.parse(c, init=True) for c in spec.get("initContainers").list()),
            overhead=Resources.parse(spec.get("overhead").value, spec.get("overhead").path),
            pod_requests=Resources.parse(pod_res.value, pod_res.path) if pod_res.value is not None else None,
            node_name=spec.get("nodeName").str(""),
            node_selector=spec.get("nodeSelector").string_map(),
            required_node_affinity=(
                tuple(NodeSelectorTerm.parse(t) for t in required.get("nodeSelectorTerms").list())
                if required.value is not None
                else None
            ),
            pod_affinity=_terms(affinity.get("podAffinity")),
            pod_anti_affinity=_terms(affinity.get("podAntiAffinity")),
            tolerations=tuple(Toleration.parse(t) for t in spec.get("tolerations").list()),
            topology_spread=tuple(
                TopologySpreadConstraint.parse(t) for t in spec.get("topologySpreadConstraints").list()
            ),
            priority=spec.get("priority").int(0),
            scheduler_name=spec.get("schedulerName").str("default-scheduler"),
            volumes=tuple(v.mapping() for v in spec.get("volumes").list()),  # type: ignore[misc]
            phase=status.get("phase").enum(PHASES, "Pending"),
            ready=ready,
            ready_transition=transition,
            start_time=status.get("startTime").time(None),
            creation_time=meta.get("creationTimestamp").time(None),
            deletion_time=meta.get("deletionTimestamp").time(None),
            restart_policy=spec.get("restartPolicy").enum(("Always", "OnFailure", "Never"), "Always"),
            termination_grace_s=spec.get("terminationGracePeriodSeconds").number(None),
            unschedulable_message=unschedulable,
        )

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    def evolve(self, **changes: Any) -> Pod:
        """A copy with ``changes`` (like ``dataclasses.replace``, ~10x cheaper: no ``__init__``).

        Cached derived values (effective requests, equivalence keys) are not carried over."""
        clone = object.__new__(Pod)
        state = {k: v for k, v in self.__dict__.items() if k in _POD_FIELDS}
        state.update(changes)
        clone.__dict__.update(state)
        return clone

    @property
    def controller(self) -> OwnerRef | None:
        for owner in self.owners:
            if owner.controller:
                return owner
        return None

    def pod_request_milli(self, resource: str) -> int | None:
        """The pod-level request of ``resource`` in milli-units (None: not declared at pod level)."""
        if self.pod_requests_milli is not None:
            return self.pod_requests_milli.get(resource)
        if self.pod_requests is None or resource not in self.pod_requests:
            return None
        value = self.pod_requests[resource]
        return value if resource == CPU else value * 1000

    @property
    def terminal(self) -> bool:
        return self.phase in ("Succeeded", "Failed")

    @property
    def requests(self) -> Resources:
        """The effective request the scheduler reserves, with overhead (pod-level resources off).

        Computed once per pod (kept in its ``__dict__``, where callers may also put a precomputed
        value) and once per template: pods whose containers, init containers and overhead are the
        same objects (the pods of one controller, as the simulator and the live caches build them)
        share one sum."""
        cached: Resources | None = self.__dict__.get("requests")
        if cached is None:
            cached = self.__dict__["requests"] = _template_requests(self)
        return cached

    @property
    def host_ports(self) -> tuple[HostPort, ...]:
        cached: tuple[HostPort, ...] | None = self.__dict__.get("host_ports")
        if cached is None:
            cached = self.__dict__["host_ports"] = tuple(
                p for c in (*self.init_containers, *self.containers) for p in c.host_ports
            )
        return cached


# (id(containers), id(init_containers), id(overhead)) -> (the three objects, their request). The
# objects are kept so their ids stay theirs; bounded, cleared when full.
_BY_TEMPLATE: dict[tuple[int, int, int], tuple[object, object, object, Resources]] = {}
_BY_TEMPLATE_MAX = 16_384


def _template_requests(pod: Pod) -> Resources:
    parts = (pod.containers, pod.init_containers, pod.overhead)
    ident = (id(parts[0]), id(parts[1]), id(parts[2]))
    hit = _BY_TEMPLATE.get(ident)
    if hit is not None and hit[0] is parts[0] and hit[1] is parts[1] and hit[2] is parts[2]:
        return hit[3]
    requests = pod_requests(pod, pod_level_resources=False)
    if len(_BY_TEMPLATE) >= _BY_TEMPLATE_MAX:
        _BY_TEMPLATE.clear()
    _BY_TEMPLATE[ident] = (*parts, requests)
    return requests


def _terms(node: Node) -> tuple[PodAffinityTerm, ...]:
    return tuple(
        PodAffinityTerm.parse(t) for t in node.get("requiredDuringSchedulingIgnoredDuringExecution").list()
    )


def pod_requests(pod: Pod, *, pod_level_resources: bool = False, overhead: bool = True) -> Resources:
    """``PodRequests``: max(sum of containers + sidecars, init peak) + overhead."""
    if not pod.init_containers and not (pod_level_resources and pod.pod_requests is not None):
        # The common pod: no init peak to take, so the sum (one container: its own request object).
        containers = pod.containers
        reqs = containers[0].requests if len(containers) == 1 else Resources()
        if len(containers) > 1:
            for c in containers:
                reqs = reqs + c.requests
        return reqs + pod.overhead if overhead and pod.overhead else reqs
    reqs = Resources()
    for c in pod.containers:
        reqs = reqs + c.requests
    sidecars = Resources()
    init_peak = Resources()
    for c in pod.init_containers:
        if c.restartable:
            reqs = reqs + c.requests
            sidecars = sidecars + c.requests
            use = sidecars
        else:
            use = c.requests + sidecars
        init_peak = init_peak.max_with(use)
    reqs = reqs.max_with(init_peak)
    if pod_level_resources and pod.pod_requests is not None:
        merged = dict(reqs)
        for name in _POD_LEVEL_RESOURCES:
            if name in pod.pod_requests:
                merged[name] = pod.pod_requests[name]
        reqs = Resources(merged)
    if overhead and pod.overhead:
        reqs = reqs + pod.overhead
    return reqs


_POD_FIELDS = frozenset(f.name for f in fields(Pod))
