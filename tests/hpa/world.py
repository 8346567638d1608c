"""A tiny in-memory world for HPA tests: a scale target whose pods are all Running and Ready, and a
cpu usage per pod that tests set. Implements both controller ports (a recording fake)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kubetide.hpa.ports import MetricsError, PodMetric, Scale
from kubetide.model.hpa import HPA, CrossVersionObjectReference
from kubetide.model.pod import Container, Pod
from kubetide.model.resources import Resources
from kubetide.model.selectors import LabelSelector

REQUEST_MILLI = 1000


def hpa(
    min_replicas: int = 1,
    max_replicas: int = 20,
    utilization: int = 50,
    behavior: dict[str, Any] | None = None,
) -> HPA:
    spec: dict[str, Any] = {
        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
        "minReplicas": min_replicas,
        "maxReplicas": max_replicas,
        "metrics": [
            {
                "type": "Resource",
                "resource": {
                    "name": "cpu",
                    "target": {"type": "Utilization", "averageUtilization": utilization},
                },
            }
        ],
    }
    if behavior is not None:
        spec["behavior"] = behavior
    return HPA.from_manifest({"metadata": {"name": "web", "namespace": "default"}, "spec": spec})


@dataclass
class World:
    replicas: int
    usage_per_pod: int = 500  # milli-cpu each pod uses
    writes: list[tuple[float, int]] = field(default_factory=list)
    now: float = 0.0

    def pods(self) -> list[Pod]:
        return [
            Pod(
                name=f"web-{i}",
                labels={"app": "web"},
                phase="Running",
                ready=True,
                start_time=-10_000.0,
                ready_transition=-10_000.0,
                containers=(Container("app", Resources({"cpu": REQUEST_MILLI})),),
            )
            for i in range(self.replicas)
        ]

    # ScaleTargetPort
    def get_scale(self, namespace: str, ref: CrossVersionObjectReference) -> Scale:
        return Scale(self.replicas, self.replicas, "app=web")

    def update_scale(self, namespace: str, ref: CrossVersionObjectReference, replicas: int) -> None:
        self.writes.append((self.now, replicas))
        self.replicas = replicas

    def list_pods(self, namespace: str, selector: LabelSelector) -> Sequence[Pod]:
        return self.pods()

    # MetricsSource
    def resource_metrics(
        self, namespace: str, selector: LabelSelector, resource: str, container: str
    ) -> Mapping[str, PodMetric]:
        if self.replicas == 0:
            raise MetricsError("no metrics returned from resource metrics API")
        return {f"web-{i}": PodMetric(self.usage_per_pod, self.now - 5, 30.0) for i in range(self.replicas)}

    def pod_metrics(
        self, namespace: str, name: str, selector: LabelSelector, metric_selector: LabelSelector | None
    ) -> Mapping[str, PodMetric]:
        raise MetricsError("no custom metrics here")

    def object_metric(
        self,
        namespace: str,
        name: str,
        described_object: CrossVersionObjectReference,
        metric_selector: LabelSelector | None,
    ) -> int:
        raise MetricsError("no object metrics here")

    def external_metric(
        self, namespace: str, name: str, metric_selector: LabelSelector | None
    ) -> Sequence[int]:
        raise MetricsError("no external metrics here")


class ResourceMetricsOnly:
    """The custom, object and external metrics APIs of a fake that serves resource metrics only."""

    def pod_metrics(self, *args: Any) -> Mapping[str, PodMetric]:
        raise MetricsError("none")

    def object_metric(self, *args: Any) -> int:
        raise MetricsError("none")

    def external_metric(self, *args: Any) -> Sequence[int]:
        raise MetricsError("none")
