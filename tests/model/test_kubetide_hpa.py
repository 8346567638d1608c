"""kubetide's own HorizontalPodAutoscaler (``autoscaling.kubetide.io/v1``): the view the controller reads,
and the CustomResourceDefinition manifest shipped with the package."""

from __future__ import annotations

from importlib.resources import files
from typing import Any

import pytest
import yaml

from kubetide.hpa.config import FeatureGates, HPAConfig
from kubetide.hpa.tolerances import tolerances_for
from kubetide.model.errors import ManifestError
from kubetide.model.hpa import HPA, KUBETIDE_API_VERSION, parse_go_duration

CRD_FILE = "crd-horizontalpodautoscalers.autoscaling.kubetide.io.yaml"


def manifest(api_version: str = KUBETIDE_API_VERSION, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": api_version,
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "web", "namespace": "shop"},
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
            "maxReplicas": 10,
            "metrics": [
                {
                    "type": "Resource",
                    "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 60}},
                }
            ],
            **spec,
        },
    }


def test_the_kubetide_resource_reads_as_the_v2_spec_plus_sync_period() -> None:
    hpa = HPA.from_manifest(manifest(syncPeriod="1m30s", minReplicas=2))
    v2 = HPA.from_manifest(manifest("autoscaling/v2", minReplicas=2))
    assert hpa.is_kubetide and not v2.is_kubetide
    assert hpa.sync_period == 90.0 and v2.sync_period is None
    assert (hpa.scale_target_ref, hpa.min_replicas, hpa.max_replicas, hpa.metrics) == (
        v2.scale_target_ref,
        v2.min_replicas,
        v2.max_replicas,
        v2.metrics,
    )
    assert HPA.from_manifest(manifest()).sync_period is None  # unset: the controller's flag


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("15s", 15.0), ("1m30s", 90.0), ("1.5h", 5400.0), ("300ms", 0.3), ("2h0m1s", 7201.0)],
)
def test_go_durations(text: str, seconds: float) -> None:
    assert parse_go_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize("bad", ["15", "1x", "", "s", "1m 30s", "0s", "-5s", 15])
def test_a_bad_sync_period_is_an_error_naming_the_field(bad: Any) -> None:
    with pytest.raises(ManifestError, match=r"spec\.syncPeriod"):
        HPA.from_manifest(manifest(syncPeriod=bad))


def test_per_direction_tolerances_are_always_honoured_on_the_kubetide_resource() -> None:
    behavior = {"scaleUp": {"tolerance": "0.05"}, "scaleDown": {"tolerance": "0.2"}}
    gate_off = HPAConfig(gates=FeatureGates(hpa_configurable_tolerance=False))
    kubetide = HPA.from_manifest(manifest(behavior=behavior))
    v2 = HPA.from_manifest(manifest("autoscaling/v2", behavior=behavior))
    assert (tolerances_for(kubetide, gate_off).up, tolerances_for(kubetide, gate_off).down) == (0.05, 0.2)
    assert (tolerances_for(v2, gate_off).up, tolerances_for(v2, gate_off).down) == (0.1, 0.1)
    assert (tolerances_for(v2, HPAConfig()).up, tolerances_for(v2, HPAConfig()).down) == (0.05, 0.2)


def _crd() -> dict[str, Any]:
    text = files("kubetide").joinpath("data", CRD_FILE).read_text(encoding="utf-8")
    data = yaml.safe_load(text)
    assert isinstance(data, dict)
    return data


def test_the_crd_manifest_names_the_resource_the_controller_reads() -> None:
    crd = _crd()
    assert (crd["apiVersion"], crd["kind"]) == ("apiextensions.k8s.io/v1", "CustomResourceDefinition")
    spec = crd["spec"]
    assert crd["metadata"]["name"] == f"{spec['names']['plural']}.{spec['group']}"
    assert f"{spec['group']}/{spec['versions'][0]['name']}" == KUBETIDE_API_VERSION
    assert spec["scope"] == "Namespaced"
    assert spec["names"] == {
        "plural": "horizontalpodautoscalers",
        "singular": "horizontalpodautoscaler",
        "kind": "HorizontalPodAutoscaler",
        "listKind": "HorizontalPodAutoscalerList",
        "shortNames": ["khpa"],
    }
    [version] = spec["versions"]
    assert version["served"] is True and version["storage"] is True
    assert version["subresources"] == {"status": {}}  # status, and no scale: the HPA is not a target


def test_the_crd_schema_is_structural_and_keeps_the_v2_fields() -> None:
    schema = _crd()["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    assert schema["type"] == "object"

    def structural(node: dict[str, Any], path: str) -> None:
        assert "type" in node or node.get("x-kubernetes-int-or-string"), f"{path} has no type"
        for name, child in (node.get("properties") or {}).items():
            structural(child, f"{path}.{name}")

    structural(schema, "")
    for part in ("spec", "status"):
        node = schema["properties"][part]
        assert node["type"] == "object" and node["x-kubernetes-preserve-unknown-fields"] is True


def _json_path(obj: Any, path: str) -> list[Any]:
    """The subset of JSONPath a CRD printer column uses: ``.a.b``, ``[n]`` and ``[*]``."""
    current = [obj]
    for token in path.lstrip(".").replace("[", ".[").split("."):
        nxt: list[Any] = []
        for value in current:
            if token == "[*]" and isinstance(value, list):
                nxt.extend(value)
            elif token.startswith("[") and isinstance(value, list):
                index = int(token[1:-1])
                nxt.extend(value[index : index + 1])
            elif isinstance(value, dict) and token in value:
                nxt.append(value[token])
        current = nxt
    return current


def test_the_printer_columns_are_kubectl_get_hpas_and_resolve_on_a_real_object() -> None:
    columns = _crd()["spec"]["versions"][0]["additionalPrinterColumns"]
    assert [c["name"] for c in columns] == ["Reference", "Targets", "MinPods", "MaxPods", "Replicas", "Age"]
    obj = manifest(minReplicas=2)
    obj["metadata"]["creationTimestamp"] = "2026-11-23T20:00:00Z"
    obj["status"] = {
        "currentReplicas": 3,
        "desiredReplicas": 3,
        "currentMetrics": [
            {"type": "External", "external": {"metric": {"name": "queue"}, "current": {"value": "5"}}},
            {"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": 45}}},
        ],
        # What the controller writes for the two columns kubectl computes for the built-in kind only
        # (live/hpa/columns.py; tests/live/hpa/test_columns.py).
        "reference": "Deployment/web",
        "targets": "5/10, 45%/50%",
    }
    first = {c["name"]: (_json_path(obj, c["jsonPath"]) or [None])[0] for c in columns}
    assert first == {
        "Reference": "Deployment/web",
        "Targets": "5/10, 45%/50%",
        "MinPods": 2,
        "MaxPods": 10,
        "Replicas": 3,
        "Age": "2026-11-23T20:00:00Z",
    }
    assert all(c["jsonPath"].startswith(".") for c in columns)  # the API server's "simple JSONPath"
    assert {c["type"] for c in columns} <= {"string", "integer", "number", "boolean", "date"}
    HPA.from_manifest(obj)  # and the object itself reads


def test_the_sync_period_pattern_agrees_with_the_model() -> None:
    import re

    spec = _crd()["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    pattern = re.compile(spec["properties"]["syncPeriod"]["pattern"])
    for text in ("15s", "1m30s", "1.5h", "300ms", "2h0m1s"):
        assert pattern.match(text) and parse_go_duration(text) > 0
    for text in ("15", "1x", "", "1m 30s"):
        assert not pattern.match(text)
        with pytest.raises(ValueError):
            parse_go_duration(text)
