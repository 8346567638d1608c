"""HPA benchmark: the pure reconcile cost of one HPA over 100 pods with a CPU utilization metric.

Ports answer from memory (no I/O), so the figure is the controller's own compute: the budget is
50 us median, i.e. 10,000 HPAs per 15 s sync in 0.5 s.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Mapping, Sequence
from typing import Any

from kubetide.hpa.controller import HorizontalController
from kubetide.hpa.ports import MetricsError, PodMetric, Scale
from kubetide.model.hpa import HPA, CrossVersionObjectReference
from kubetide.model.pod import Container, Pod
from kubetide.model.resources import Resources
from kubetide.model.selectors import LabelSelector

TARGET_SECONDS = 50e-6


class _Ports:
    """Both controller ports over a fixed 100-pod Deployment at ~52 % of its cpu request."""

    def __init__(self, n: int = 100) -> None:
        self.pods = [
            Pod(
                name=f"web-{i}",
                labels={"app": "web"},
                phase="Running",
                ready=True,
                start_time=-1e4,
                ready_transition=-1e4,
                containers=(Container("app", Resources({"cpu": 500})),),
            )
            for i in range(n)
        ]
        self.samples = {p.name: PodMetric(255 + (i % 11), -5.0, 30.0) for i, p in enumerate(self.pods)}
        self.replicas = n

    def get_scale(self, namespace: str, ref: CrossVersionObjectReference) -> Scale:
        return Scale(self.replicas, self.replicas, "app=web")

    def update_scale(self, namespace: str, ref: CrossVersionObjectReference, replicas: int) -> None:
        self.replicas = replicas

    def list_pods(self, namespace: str, selector: LabelSelector) -> Sequence[Pod]:
        return self.pods

    def resource_metrics(
        self, namespace: str, selector: LabelSelector, resource: str, container: str
    ) -> Mapping[str, PodMetric]:
        return self.samples

    def pod_metrics(
        self, namespace: str, name: str, selector: LabelSelector, metric_selector: LabelSelector | None
    ) -> Mapping[str, PodMetric]:
        raise MetricsError("not used")

    def object_metric(
        self,
        namespace: str,
        name: str,
        described: CrossVersionObjectReference,
        selector: LabelSelector | None,
    ) -> int:
        raise MetricsError("not used")

    def external_metric(self, namespace: str, name: str, selector: LabelSelector | None) -> Sequence[int]:
        raise MetricsError("not used")


def run(runs: int = 5, iterations: int = 2000) -> list[dict[str, Any]]:
    hpa = HPA.from_manifest(
        {
            "metadata": {"name": "web"},
            "spec": {
                "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                "minReplicas": 1,
                "maxReplicas": 300,
                "metrics": [
                    {
                        "type": "Resource",
                        "resource": {
                            "name": "cpu",
                            "target": {"type": "Utilization", "averageUtilization": 50},
                        },
                    }
                ],
            },
        }
    )
    ports = _Ports()
    controller = HorizontalController(ports, ports)
    medians = []
    decision = None
    clock = 0.0
    for _ in range(runs):
        times = []
        for _ in range(iterations):
            clock += 15.0
            start = time.perf_counter()
            result = controller.reconcile(hpa, clock)
            times.append(time.perf_counter() - start)
            decision = result.desired_replicas
        medians.append(statistics.median(times))
    return [
        {
            "workload": "HPA-100pods-cpu",
            "median_seconds": statistics.median(medians),
            "runs": runs,
            "iterations_per_run": iterations,
            "target_seconds": TARGET_SECONDS,
            "desired_replicas": decision,
        }
    ]
