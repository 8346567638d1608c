"""The Cluster Autoscaler's :class:`~kubetide.cluster.loop.world.World`, read from watch caches.

What CA's listers give its loop: every node; the pods that are not terminal (CA lists with the field
selector ``status.phase!=Succeeded,status.phase!=Failed``), pending ones carrying kube-scheduler's
``PodScheduled=False`` message; PodDisruptionBudgets with ``status.disruptionsAllowed``; the ConfigMaps
of CA's namespace; the replicas of the workload controllers pods name (for the drain rules); and,
when a capacity flag is on, the capacity APIs' objects (:mod:`.capacity`). The world is rebuilt only
when a cache changed, so a loop over a quiet cluster costs nothing.

PDB selectors follow the served version (live contract §2): in ``policy/v1beta1`` an empty selector
matches no pods; in ``policy/v1`` it matches every pod of the namespace. A null selector matches none
in both.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kubetide.cluster.loop.world import World
from kubetide.cluster.options import AutoscalingOptions
from kubetide.kube.cache import Informer
from kubetide.kube.discovery import ResourceKind, ServedVersions, resource_kinds
from kubetide.kube.rest import Rest
from kubetide.kube.views import pod_from_json
from kubetide.live.cluster_autoscaler.capacity import CapacityCaches
from kubetide.model.errors import ManifestError
from kubetide.model.fields import Node as Field
from kubetide.model.node import NodeView
from kubetide.model.pod import Pod
from kubetide.model.resources import Resources
from kubetide.model.selectors import LabelSelector, Requirement
from kubetide.scheduling.drainability import PDB
from kubetide.scheduling.equivalence import equivalence_key

__all__ = ["MATCH_NOTHING", "CAWorldSource", "controller_replicas", "pdb_from_manifest"]

Json = dict[str, Any]
NON_TERMINAL_PODS = "status.phase!=Succeeded,status.phase!=Failed"
# A requirement no label set satisfies ("In" with no values): a selector that selects nothing.
MATCH_NOTHING = LabelSelector((Requirement("kubetide.io/selects-nothing", "In", ()),))
# Kind -> how many pods it wants (the drain rules compare it with --min-replica-count).
_REPLICAS: dict[str, Callable[[Json], int]] = {
    "ReplicaSet": lambda o: int((o.get("spec") or {}).get("replicas", 1)),
    "ReplicationController": lambda o: int((o.get("spec") or {}).get("replicas", 1)),
    "StatefulSet": lambda o: int((o.get("spec") or {}).get("replicas", 1)),
    "Job": lambda o: int((o.get("spec") or {}).get("parallelism", 1)),
    "DaemonSet": lambda o: int((o.get("status") or {}).get("desiredNumberScheduled", 0)),
}
_CONTROLLER_PLURALS = ("replicasets", "replicationcontrollers", "statefulsets", "jobs")


# Equal requests share one Resources object (pods of one template ask for the same), so a loop hashes
# each distinct request once and groups pods by identity. Bounded: cleared if it ever grows this large.
_SHARED_REQUESTS: dict[Resources, Resources] = {}
_SHARED_REQUESTS_MAX = 65_536


def pod_view(manifest: Json) -> Pod:
    """A pod's view with its scheduling request and equivalence key already computed: the cache builds
    views once per resourceVersion off the loop's path, so a loop (the first one after start-up
    included) does not pay for 30,000 request sums and signatures."""
    pod = pod_from_json(manifest)
    requests = pod.requests  # a cached property: computed here, read by every later loop
    shared = _SHARED_REQUESTS.get(requests)
    if shared is None:
        if len(_SHARED_REQUESTS) >= _SHARED_REQUESTS_MAX:
            _SHARED_REQUESTS.clear()
        shared = _SHARED_REQUESTS[requests] = requests
    pod.__dict__["requests"] = shared  # where Pod.requests keeps its value
    equivalence_key(pod)  # likewise its scheduling signature, interned and kept on the pod
    return pod


def daemonset_view(manifest: Json) -> tuple[tuple[str, str, str], int, Pod | None]:
    """A DaemonSet as the loop reads it: its pods wanted (the drain rules) and a pod made from its
    template (templates of groups at zero); the pod is None when the template is not a valid pod."""
    meta = manifest["metadata"]
    namespace, name = str(meta.get("namespace", "default")), str(meta["name"])
    replicas = int((manifest.get("status") or {}).get("desiredNumberScheduled", 0))
    template = (manifest.get("spec") or {}).get("template") or {}
    tmeta = template.get("metadata") or {}
    owner = {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "name": name,
        "uid": meta.get("uid", ""),
        "controller": True,
    }
    pod_manifest = {
        "metadata": {
            "name": f"{name}-template",
            "namespace": namespace,
            "labels": tmeta.get("labels") or {},
            "annotations": tmeta.get("annotations") or {},
            "ownerReferences": [owner],
        },
        "spec": template.get("spec") or {},
    }
    try:
        exemplar: Pod | None = Pod.from_manifest(pod_manifest)
    except ManifestError:
        exemplar = None
    return ("DaemonSet", namespace, name), replicas, exemplar


def pdb_from_manifest(manifest: Json, *, empty_selector_matches_all: bool) -> PDB:
    root = Field(manifest)
    selector = root.get("spec").get("selector")
    if selector.value is None:
        parsed = MATCH_NOTHING
    else:
        parsed = LabelSelector.parse(selector)
        if parsed.empty and not empty_selector_matches_all:
            parsed = MATCH_NOTHING
    return PDB(
        namespace=root.get("metadata").get("namespace").str("default"),
        selector=parsed,
        disruptions_allowed=root.get("status").get("disruptionsAllowed").int(0),
    )


def controller_replicas(kind: str) -> Callable[[Json], tuple[tuple[str, str, str], int]]:
    replicas = _REPLICAS[kind]

    def convert(manifest: Json) -> tuple[tuple[str, str, str], int]:
        meta = manifest["metadata"]
        return (kind, str(meta.get("namespace", "default")), str(meta["name"])), replicas(manifest)

    return convert


class CAWorldSource:
    """Caches for CA's world; :meth:`world` is cheap when nothing changed."""

    def __init__(
        self,
        rest: Rest,
        versions: ServedVersions,
        *,
        namespace: str = "kube-system",
        options: AutoscalingOptions | None = None,
    ):
        kinds = resource_kinds(versions)
        matches_all = versions.pdb_empty_selector_matches_all
        self.nodes: Informer[NodeView] = Informer(rest, kinds["nodes"], NodeView.from_manifest)
        self.pods: Informer[Pod] = Informer(
            rest, kinds["pods"], pod_view, field_selector=NON_TERMINAL_PODS, index=_node_of
        )
        self.pdbs: Informer[PDB] = Informer(
            rest,
            kinds["poddisruptionbudgets"],
            lambda m: pdb_from_manifest(m, empty_selector_matches_all=matches_all),
        )
        self.config_maps: Informer[tuple[str, dict[str, str]]] = Informer(
            rest, kinds["configmaps"], _config_map, namespace=namespace
        )
        self.controllers = [_controller_informer(rest, kinds[p]) for p in _CONTROLLER_PLURALS]
        self.daemonsets: Informer[tuple[tuple[str, str, str], int, Pod | None]] = Informer(
            rest, kinds["daemonsets"], daemonset_view
        )
        self.capacity: CapacityCaches | None = None
        if options is not None and _capacity_enabled(options):
            shared = {i.kind.plural: i for i in self.controllers}
            self.capacity = CapacityCaches(rest, kinds, options, self.pods, shared)
        self._built: tuple[tuple[object, ...], World] | None = None

    @property
    def informers(self) -> list[Informer[Any]]:
        own = self.capacity.informers if self.capacity is not None else []
        return [self.nodes, self.pods, self.pdbs, self.config_maps, *self.controllers, self.daemonsets, *own]

    def start(self) -> CAWorldSource:
        for informer in self.informers:
            informer.start()
        return self

    def wait_synced(self, timeout: float) -> bool:
        return all(informer.wait_synced(timeout) for informer in self.informers)

    def has_synced(self) -> bool:
        return all(informer.has_synced() for informer in self.informers)

    def unsynced(self) -> list[str]:
        """The caches not synced now (a watch failed, no new list yet): the loop must not run."""
        return [informer.name for informer in self.informers if not informer.has_synced()]

    def stop(self) -> None:
        for informer in self.informers:
            informer.stop()

    def world(self) -> World:
        """The current world; the same object while no cache changed."""
        versions: tuple[object, ...] = tuple(informer.version for informer in self.informers)
        if self.capacity is not None:
            versions += self.capacity.versions
        if self._built is not None and self._built[0] == versions:
            return self._built[1]
        controllers: dict[tuple[str, str, str], int] = {}
        for informer in self.controllers:
            controllers.update(informer.views())
        daemonsets = []
        for key, replicas, exemplar in self.daemonsets.views():
            controllers[key] = replicas
            if exemplar is not None:
                daemonsets.append(exemplar)
        pods, by_node = self.pods.views_and_index()
        pods_by_node = dict(by_node)
        unbound = pods_by_node.pop(UNBOUND, ())
        world = World(
            nodes=self.nodes.views(),
            pods=pods,
            pods_by_node=pods_by_node,
            unbound_pods=unbound,
            pdbs=self.pdbs.views(),
            config_maps=dict(self.config_maps.views()),
            controllers=controllers,
            daemonsets=daemonsets,
            capacity=self.capacity.objects() if self.capacity is not None else None,
        )
        self._built = (versions, world)
        return world


UNBOUND = ""  # the index's group of the pods bound to no node (a node's name is never empty)


def _node_of(pod: Pod) -> str | None:
    """The pods index's group: World's ``pods_by_node`` (the node's pods that are not Succeeded or
    Failed) and ``unbound_pods`` (the pods bound to no node, whatever their phase), as
    :func:`kubetide.cluster.loop.start` buckets a plain pod list."""
    if not pod.node_name:
        return UNBOUND
    return None if pod.phase in ("Succeeded", "Failed") else pod.node_name


def _capacity_enabled(o: AutoscalingOptions) -> bool:
    return (
        o.capacity_buffer_controller_enabled
        or o.capacity_buffer_pod_injection_enabled
        or o.enable_provisioning_requests
        or o.capacity_quotas_enabled
    )


def _config_map(manifest: Json) -> tuple[str, dict[str, str]]:
    meta = manifest["metadata"]
    data = manifest.get("data") or {}
    return f"{meta.get('namespace', 'default')}/{meta['name']}", {str(k): str(v) for k, v in data.items()}


def _controller_informer(rest: Rest, kind: ResourceKind) -> Informer[tuple[tuple[str, str, str], int]]:
    return Informer(rest, kind, controller_replicas(kind.kind))
