"""A frozen moment of one HPA's world (its manifest, the scale, pods, metric values, the controller's
memory), read from a plain mapping, with ports that serve it. ``kubetide hpa explain`` and the
conformance runner both reconcile against it.

Times are "seconds ago" relative to ``now``; values are integers in milli-units. The format is the
``controller_sync`` input of the conformance cases; every key is optional except ``hpa`` and ``scale``.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any, TypeVar

from kubetide.hpa.config import FeatureGates, HPAConfig
from kubetide.hpa.ports import NEVER, MetricsError, PodMetric, Scale, ScaleError
from kubetide.hpa.state import HPAState, Recommendation, ScaleEvent
from kubetide.model.errors import FieldError, ManifestError
from kubetide.model.fields import Node
from kubetide.model.hpa import HPA, CrossVersionObjectReference
from kubetide.model.pod import Container, Pod
from kubetide.model.resources import CPU, Resources
from kubetide.model.selectors import LabelSelector
from kubetide.model.validation import read_validated

T = TypeVar("T")
NOW = 1_000_000_000.0  # an arbitrary fixed instant; snapshot times are relative to it


@dataclass
class SnapshotMetrics:
    """MetricsSource over fixed values. Source types listed in ``failing`` raise MetricsError."""

    resource: Mapping[str, Sequence[dict[str, Any]]] = field(default_factory=dict)  # pod -> container samples
    pods: Mapping[str, Mapping[str, PodMetric]] = field(default_factory=dict)
    objects: Mapping[str, int] = field(default_factory=dict)
    external: Mapping[str, Sequence[int]] = field(default_factory=dict)
    failing: frozenset[str] = frozenset()
    resource_items: Sequence[tuple[str, float, float, Sequence[tuple[str, dict[str, int]]]]] = ()

    def resource_metrics(
        self, namespace: str, selector: LabelSelector, resource: str, container: str
    ) -> Mapping[str, PodMetric]:
        # Failures are listed per metric source type: a ContainerResource metric names its container.
        if ("ContainerResource" if container else "Resource") in self.failing:
            raise MetricsError("failed to get pod resource metrics")
        if not self.resource_items:
            raise MetricsError("no metrics returned from resource metrics API")
        out: dict[str, PodMetric] = {}
        for pod, timestamp, window, containers in self.resource_items:
            if container:
                for name, usage in containers:
                    if name == container:  # the first container of that name decides, as upstream
                        if resource in usage:
                            out[pod] = PodMetric(usage[resource], timestamp, window)
                        break
                continue
            # Summed over containers; a pod reporting no containers, or one lacking it, is skipped.
            if not containers or any(resource not in usage for _, usage in containers):
                continue
            out[pod] = PodMetric(sum(usage[resource] for _, usage in containers), timestamp, window)
        return out

    def pod_metrics(
        self, namespace: str, name: str, selector: LabelSelector, metric_selector: LabelSelector | None
    ) -> Mapping[str, PodMetric]:
        if "Pods" in self.failing or name not in self.pods or not self.pods[name]:
            raise MetricsError("no metrics returned from custom metrics API")
        return self.pods[name]

    def object_metric(
        self,
        namespace: str,
        name: str,
        described_object: CrossVersionObjectReference,
        metric_selector: LabelSelector | None,
    ) -> int:
        if "Object" in self.failing or name not in self.objects:
            raise MetricsError(f"unable to fetch metrics from custom metrics API: metric {name} not found")
        return self.objects[name]

    def external_metric(
        self, namespace: str, name: str, metric_selector: LabelSelector | None
    ) -> Sequence[int]:
        if "External" in self.failing or not self.external.get(name):
            raise MetricsError("no metrics returned from external metrics API")
        return self.external[name]


@dataclass
class SnapshotTargets:
    """ScaleTargetPort over one fixed scale and pod list; records the replicas written."""

    scale: Scale
    pods: Sequence[Pod]
    get_error: bool = False
    update_error: bool = False
    written: list[int] = field(default_factory=list)

    def get_scale(self, namespace: str, ref: CrossVersionObjectReference) -> Scale:
        if self.get_error:
            raise ScaleError("scale subresource unavailable")
        return self.scale

    def update_scale(self, namespace: str, ref: CrossVersionObjectReference, replicas: int) -> None:
        if self.update_error:
            raise ScaleError("scale update failed")
        self.written.append(replicas)

    def list_pods(self, namespace: str, selector: LabelSelector) -> Sequence[Pod]:
        return self.pods


@dataclass
class HPASnapshot:
    """One HPA's world at one moment, with ports serving it (``read_snapshot`` makes it)."""

    config: HPAConfig
    hpa: HPA
    targets: SnapshotTargets
    metrics: SnapshotMetrics
    state: HPAState
    now: float = NOW


def _ago(node: Node, now: float) -> float | None:
    ago = node.number(None)
    return None if ago is None else now - float(ago)


def read_pod(node: Node, now: float = NOW) -> Pod:
    """A pod in snapshot form: name, phase, ready (null = no Ready condition), times in seconds ago."""

    def containers(key: str, init: bool) -> tuple[Container, ...]:
        out = []
        for c in node.get(key).list():
            requests = {k: v.int() for k, v in c.get("requests_milli").items()}
            out.append(
                Container(
                    c.get("name").str(""),
                    Resources({k: (v if k == CPU else -(-v // 1000)) for k, v in requests.items()}),
                    restartable=init and c.get("restartPolicy").str("") == "Always",
                    requests_milli=requests,
                )
            )
        return tuple(out)

    pod_requests = node.get("pod_requests_milli")
    return Pod(
        name=node.get("name").str(),
        labels=node.get("labels").string_map(),
        phase=node.get("phase").enum(("Pending", "Running", "Succeeded", "Failed", "Unknown"), "Running"),
        ready=node.get("ready").bool(None),
        start_time=_ago(node.get("start_seconds_ago"), now),
        ready_transition=_ago(node.get("ready_transition_seconds_ago"), now),
        deletion_time=now if node.get("deleted").bool(False) else None,
        containers=containers("containers", False),
        init_containers=containers("initContainers", True),
        pod_requests=(
            Resources({k: (v.int() if k == CPU else -(-v.int() // 1000)) for k, v in pod_requests.items()})
            if pod_requests.value
            else None
        ),
        pod_requests_milli={k: v.int() for k, v in pod_requests.items()} if pod_requests.value else None,
    )


def read_resource_items(
    node: Node, now: float = NOW
) -> tuple[tuple[str, float, float, tuple[tuple[str, dict[str, int]], ...]], ...]:
    items = []
    for m in node.list():
        ts = _ago(m.get("timestamp_seconds_ago"), now)
        containers = tuple(
            (c.get("name").str(""), {k: v.int() for k, v in c.get("usage_milli").items()})
            for c in m.get("containers").list()
        )
        items.append(
            (
                m.get("pod").str(),
                NEVER if ts is None else ts,
                float(m.get("window_seconds").number(0)),
                containers,
            )
        )
    return tuple(items)


def read_config(node: Node) -> HPAConfig:
    gates = node.get("feature_gates")
    defaults = HPAConfig()
    return HPAConfig(
        tolerance=float(node.get("tolerance").number(defaults.tolerance)),
        downscale_stabilization=float(
            node.get("downscale_stabilization_window_seconds").number(defaults.downscale_stabilization)
        ),
        cpu_initialization_period=float(
            node.get("cpu_initialization_period_seconds").number(defaults.cpu_initialization_period)
        ),
        initial_readiness_delay=float(
            node.get("delay_of_initial_readiness_status_seconds").number(defaults.initial_readiness_delay)
        ),
        scale_up_limit_factor=float(node.get("scale_up_limit_factor").number(defaults.scale_up_limit_factor)),
        scale_up_limit_minimum=float(
            node.get("scale_up_limit_minimum").number(defaults.scale_up_limit_minimum)
        ),
        gates=FeatureGates(
            hpa_configurable_tolerance=gates.get("HPAConfigurableTolerance").bool(True),
            hpa_scale_to_zero=gates.get("HPAScaleToZero").bool(True),
            pod_level_resources=gates.get("PodLevelResources").bool(False),
        ),
    )


def read_events(node: Node, now: float) -> list[ScaleEvent]:
    return [
        ScaleEvent(
            e.get("replica_change").int(),
            now - float(e.get("seconds_ago").number()),
            e.get("outdated").bool(False),
        )
        for e in node.list()
    ]


def read_recommendations(node: Node, now: float) -> list[Recommendation]:
    return [
        Recommendation(r.get("replicas").int(), now - float(r.get("seconds_ago").number()))
        for r in node.list()
    ]


def read_snapshot(data: Any, now: float = NOW, *, validate: bool = True) -> HPASnapshot:
    """Build a snapshot; wrong fields raise one ManifestError naming each path. Each part (the HPA, the
    scale, every pod, the metrics, the config, the controller's memory) is read on its own, so the
    problems of all of them are reported at once. ``validate``: the HPA must also pass the API
    server's validation (off only for upstream's controller tests, whose fake objects never met one)."""
    root = Node(data)
    root.mapping()
    problems: list[FieldError] = []

    def part(read: Callable[[], T], fallback: T) -> T:
        try:
            return read()
        except ManifestError as exc:
            problems.extend(exc.errors)
            return fallback

    def read_hpa() -> HPA | None:
        hpa_node = root.get("hpa")
        if hpa_node.value is None:
            raise ManifestError(FieldError("hpa", "is required"))
        manifest = dict(hpa_node.mapping())
        manifest.setdefault(
            "metadata",
            {"name": manifest.get("name", "hpa"), "namespace": manifest.get("namespace", "default")},
        )
        manifest.setdefault("kind", "HorizontalPodAutoscaler")
        if not validate:
            return HPA.from_manifest(manifest, "hpa")
        return read_validated(manifest, "hpa", HPA.from_manifest)

    def read_scale() -> Scale | None:
        scale = root.get("scale")
        if scale.value is None:
            raise ManifestError(FieldError("scale", "is required"))
        spec_replicas = scale.get("spec_replicas").int(minimum=0)
        return Scale(
            spec_replicas,
            scale.get("status_replicas").int(spec_replicas, minimum=0),
            scale.get("selector").str(""),
        )

    def read_metrics() -> SnapshotMetrics:
        return SnapshotMetrics(
            pods={
                name: {s.get("pod").str(): PodMetric(s.get("value_milli").int()) for s in samples.list()}
                for name, samples in root.get("pod_custom_metrics").items()
            },
            objects={name: v.int() for name, v in root.get("object_metrics").items()},
            external={
                name: [v.int() for v in vals.list()] for name, vals in root.get("external_metrics").items()
            },
            failing=frozenset(v.str() for v in root.get("metric_fetch_errors").list()),
            resource_items=read_resource_items(root.get("resource_metrics"), now),
        )

    def read_state() -> HPAState:
        state = root.get("controller_state")
        recs = state.get("recommendations")
        return HPAState(
            read_recommendations(recs, now) if recs.value is not None else None,
            read_events(state.get("scale_up_events"), now),
            read_events(state.get("scale_down_events"), now),
        )

    hpa = part(read_hpa, None)
    scale = part(read_scale, None)
    no_nodes: list[Node] = []
    pods: list[Pod] = []
    for pod_node in part(root.get("pods").list, no_nodes):
        pod = part(partial(read_pod, pod_node, now), None)
        if pod is not None:
            pods.append(pod)
    metrics = part(read_metrics, SnapshotMetrics())
    config = part(lambda: read_config(root.get("config")), HPAConfig())
    state = part(read_state, HPAState())
    flags = part(
        lambda: (
            root.get("scale").get("get_error").bool(False),
            root.get("scale").get("update_error").bool(False),
        ),
        (False, False),
    )
    if problems or hpa is None or scale is None:
        raise ManifestError(problems)
    return HPASnapshot(config, hpa, SnapshotTargets(scale, pods, *flags), metrics, state, now)


# The snapshot's keys, so a typo (``tolerence``) is an error naming it rather than a silent default.
# A dict maps a key to its children's schema; a list marks a list of such mappings; "*" any key; None a
# value (or a manifest, checked by its own parser).
_POD_CONTAINER = {"name": None, "requests_milli": None, "restartPolicy": None}
_EVENTS = [{"replica_change": None, "seconds_ago": None, "outdated": None}]
SNAPSHOT_KEYS: dict[str, Any] = {
    "config": {
        "tolerance": None,
        "downscale_stabilization_window_seconds": None,
        "cpu_initialization_period_seconds": None,
        "delay_of_initial_readiness_status_seconds": None,
        "scale_up_limit_factor": None,
        "scale_up_limit_minimum": None,
        "feature_gates": {
            "HPAConfigurableTolerance": None,
            "HPAScaleToZero": None,
            "PodLevelResources": None,
        },
    },
    "hpa": None,
    "scale": {
        "spec_replicas": None,
        "status_replicas": None,
        "selector": None,
        "get_error": None,
        "update_error": None,
    },
    "pods": [
        {
            "name": None,
            "labels": None,
            "phase": None,
            "ready": None,
            "start_seconds_ago": None,
            "ready_transition_seconds_ago": None,
            "deleted": None,
            "containers": [_POD_CONTAINER],
            "initContainers": [_POD_CONTAINER],
            "pod_requests_milli": None,
        }
    ],
    "resource_metrics": [
        {
            "pod": None,
            "timestamp_seconds_ago": None,
            "window_seconds": None,
            "containers": [{"name": None, "usage_milli": None}],
        }
    ],
    "pod_custom_metrics": {"*": [{"pod": None, "value_milli": None}]},
    "object_metrics": None,
    "external_metrics": None,
    "metric_fetch_errors": None,
    "controller_state": {
        "recommendations": [{"replicas": None, "seconds_ago": None}],
        "scale_up_events": _EVENTS,
        "scale_down_events": _EVENTS,
    },
}


def unknown_snapshot_keys(data: Any) -> list[FieldError]:
    """Every key of ``data`` the snapshot format does not have, with the closest known one suggested."""
    problems: list[FieldError] = []
    _walk(data, SNAPSHOT_KEYS, "", problems)
    return problems


def _walk(value: Any, schema: Any, path: str, problems: list[FieldError]) -> None:
    if isinstance(schema, list) and isinstance(value, list):
        for i, item in enumerate(value):
            _walk(item, schema[0], f"{path}[{i}]", problems)
    elif isinstance(schema, dict) and isinstance(value, Mapping):
        for key, child in value.items():
            where = f"{path}.{key}" if path else str(key)
            if "*" in schema:
                _walk(child, schema["*"], where, problems)
            elif key in schema:
                _walk(child, schema[key], where, problems)
            else:
                close = difflib.get_close_matches(str(key), list(schema), n=1)
                hint = f" (did you mean {close[0]!r}?)" if close else f" (known: {', '.join(schema)})"
                problems.append(FieldError(where, f"unknown field{hint}"))
