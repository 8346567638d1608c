"""kubectl get khpa prints what kubectl get hpa prints: REFERENCE and TARGETS as kubectl 1.20's
printHorizontalPodAutoscaler / formatHPAMetrics (pkg/printers/internalversion/printers.go) compute
them, written by the controller into the status the CRD's printer columns read."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from kubetide.live.hpa.columns import reference_column, targets_column
from kubetide.live.hpa.loop_source import LoopHPASource
from kubetide.model.hpa import HPA, HPAStatus

CRD = Path(__file__).resolve().parents[3] / "deploy" / "rbac" / "crd-horizontalpodautoscalers.yaml"


def hpa(*metrics: dict[str, Any], api_version: str = "autoscaling.kubetide.io/v1") -> HPA:
    return HPA.from_manifest(
        {
            "apiVersion": api_version,
            "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "web", "namespace": "shop"},
            "spec": {
                "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                "minReplicas": 1,
                "maxReplicas": 10,
                "metrics": list(metrics),
            },
        }
    )


CPU = {
    "type": "Resource",
    "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}},
}
MEMORY = {
    "type": "Resource",
    "resource": {"name": "memory", "target": {"type": "AverageValue", "averageValue": "100Mi"}},
}
QUEUE = {
    "type": "External",
    "external": {"metric": {"name": "queue"}, "target": {"type": "AverageValue", "averageValue": "30"}},
}
HITS = {
    "type": "Object",
    "object": {
        "metric": {"name": "hits"},
        "describedObject": {"apiVersion": "v1", "kind": "Service", "name": "web"},
        "target": {"type": "Value", "value": "2k"},
    },
}
PODS = {
    "type": "Pods",
    "pods": {"metric": {"name": "rps"}, "target": {"type": "AverageValue", "averageValue": "10"}},
}


def test_reference_is_kind_slash_name() -> None:
    assert reference_column(hpa(CPU)) == "Deployment/web"


def test_targets_before_and_after_the_first_sync() -> None:
    assert targets_column(hpa(CPU), ()) == "<unknown>/50%"
    current = [
        {
            "type": "Resource",
            "resource": {"name": "cpu", "current": {"averageUtilization": 76, "averageValue": "380m"}},
        }
    ]
    assert targets_column(hpa(CPU), current) == "76%/50%"


def test_each_metric_type_and_more_than_two_metrics() -> None:
    current = [
        {"type": "Resource", "resource": {"name": "memory", "current": {"averageValue": "80Mi"}}},
        {"type": "External", "external": {"metric": {"name": "queue"}, "current": {"averageValue": "12"}}},
    ]
    assert targets_column(hpa(MEMORY, QUEUE), current) == "80Mi/100Mi, 12/30 (avg)"
    assert targets_column(hpa(HITS, PODS), ()) == "<unknown>/2k, <unknown>/10"
    assert targets_column(hpa(CPU, MEMORY, QUEUE, PODS), ()) == "<unknown>/50%, <unknown>/100Mi + 2 more..."


class Recorded:
    """The HPA objects' status write (ApiHPAObjects.write_status), recorded."""

    api_version = "autoscaling.kubetide.io/v1"

    def __init__(self) -> None:
        self.written: list[dict[str, Any]] = []

    def write_status(self, key: str, status: dict[str, Any]) -> None:
        self.written.append(status)


def test_the_status_of_a_kubetide_hpa_carries_the_columns_and_a_standard_one_does_not() -> None:
    source = Recorded()
    loop = LoopHPASource(source, events=None)  # type: ignore[arg-type]
    current = ({"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": 76}}},)
    loop.write_status(hpa(CPU), HPAStatus(current_replicas=3, desired_replicas=3, current_metrics=current))
    loop.write_status(
        hpa(CPU, api_version="autoscaling/v2"), HPAStatus(current_replicas=3, desired_replicas=3)
    )
    kubetide, standard = source.written
    assert (kubetide["reference"], kubetide["targets"]) == ("Deployment/web", "76%/50%")
    assert "reference" not in standard and "targets" not in standard  # not an autoscaling/v2 field


def test_the_crd_columns_are_kubectl_get_hpas() -> None:
    crd = yaml.safe_load(CRD.read_text())
    (version,) = crd["spec"]["versions"]
    columns = [(c["name"].upper(), c["jsonPath"]) for c in version["additionalPrinterColumns"]]
    assert columns == [
        ("REFERENCE", ".status.reference"),
        ("TARGETS", ".status.targets"),
        ("MINPODS", ".spec.minReplicas"),
        ("MAXPODS", ".spec.maxReplicas"),
        ("REPLICAS", ".status.currentReplicas"),
        ("AGE", ".metadata.creationTimestamp"),
    ]
    spec = version["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
    assert spec["minReplicas"]["default"] == 1  # as the built-in API defaults it
