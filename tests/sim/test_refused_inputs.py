"""Input Kubernetes (or Go, or the simulator's bounds) refuses: ``kubetide validate`` and ``kubetide
simulate`` both exit 2 naming the field, in seconds, never with a traceback and never running.

One case per class of issue 26 (names, labels, annotations, containers, selectors, resources, restart
policies, enums, HPA metric sources and behavior, int32 ranges, quantities, NaN, Unicode digits,
sizes that would not end, Escalator's documented limits); the model tests check each rule in detail.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from scenario_builders import deployment, doc

from kubetide.cli import main

Change = Callable[[dict[str, Any]], object]


def _spec(d: dict[str, Any]) -> dict[str, Any]:
    return d["spec"]


def _template(d: dict[str, Any]) -> dict[str, Any]:
    return d["spec"]["objects"][0]["spec"]["template"]


def _container(d: dict[str, Any]) -> dict[str, Any]:
    return _template(d)["spec"]["containers"][0]


def _hpa(**spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
        "minReplicas": 1,
        "maxReplicas": 10,
        "metrics": [
            {
                "type": "Resource",
                "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 60}},
            }
        ],
    }
    body.update(spec)
    return {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "web"},
        "spec": body,
    }


def _job(**template_spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "nightly"},
        "spec": {"template": {"spec": {"containers": [{"name": "w"}], **template_spec}}},
    }


def _escalator(**changes: Any) -> dict[str, Any]:
    group = {
        "name": "batch",
        "label_key": "kubetide.io/node-group",
        "label_value": "spot",
        "cloud_provider_group_name": "spot",
        "min_nodes": 0,
        "max_nodes": 5,
        "taint_upper_capacity_threshold_percent": 40,
        "taint_lower_capacity_threshold_percent": 10,
        "scale_up_threshold_percent": 70,
        "slow_node_removal_rate": 1,
        "fast_node_removal_rate": 2,
        "scale_up_cool_down_period": "2m",
        "soft_delete_grace_period": "1m",
        "hard_delete_grace_period": "10m",
    }
    group.update(changes)
    return {"clusterAutoscaler": {"enabled": False}, "escalator": {"nodeGroups": [group]}}


CASES: list[tuple[str, Change, str]] = [
    (
        "name",
        lambda d: d["spec"]["objects"][0]["metadata"].update(name="Web_App"),
        "spec.objects[0].metadata.name",
    ),
    (
        "namespace",
        lambda d: d["spec"]["objects"][0]["metadata"].update(namespace="Shop"),
        "spec.objects[0].metadata.namespace",
    ),
    (
        "label value",
        lambda d: _template(d)["metadata"]["labels"].update(tier="x" * 64),
        "spec.objects[0].spec.template.metadata.labels.tier",
    ),
    (
        "label key",
        lambda d: _template(d)["metadata"]["labels"].update({"bad key": "x"}),
        'spec.objects[0].spec.template.metadata.labels["bad key"]',
    ),
    (
        "annotations size",
        lambda d: d["spec"]["objects"][0]["metadata"].update(annotations={"a": "x" * 300_000}),
        "spec.objects[0].metadata.annotations",
    ),
    (
        "duplicate containers",
        lambda d: _template(d)["spec"].update(initContainers=[{"name": "web"}]),
        "spec.objects[0].spec.template.spec.initContainers[0].name",
    ),
    (
        "selector and template",
        lambda d: d["spec"]["objects"][0]["spec"].update(selector={"matchLabels": {"app": "api"}}),
        "spec.objects[0].spec.template.metadata.labels",
    ),
    (
        "limits below requests",
        lambda d: _container(d)["resources"].update(limits={"cpu": "100m"}),
        "spec.objects[0].spec.template.spec.containers[0].resources.requests.cpu",
    ),
    (
        "a Job's Always",
        lambda d: d["spec"]["objects"].append(_job(restartPolicy="Always")),
        "spec.objects[1].spec.template.spec.restartPolicy",
    ),
    (
        "a Deployment's Never",
        lambda d: _template(d)["spec"].update(restartPolicy="Never"),
        "spec.objects[0].spec.template.spec.restartPolicy",
    ),
    (
        "strategy.type",
        lambda d: d["spec"]["objects"][0]["spec"].update(strategy={"type": "Canary"}),
        "spec.objects[0].spec.strategy.type",
    ),
    (
        "metric type",
        lambda d: d["spec"]["objects"].append(_hpa(metrics=[{"type": "Cpu"}])),
        "spec.objects[1].spec.metrics[0].type",
    ),
    (
        "metric source not its type",
        lambda d: d["spec"]["objects"].append(
            _hpa(
                metrics=[
                    {
                        "type": "Pods",
                        "resource": {
                            "name": "cpu",
                            "target": {"type": "Utilization", "averageUtilization": 5},
                        },
                    }
                ]
            )
        ),
        "spec.objects[1].spec.metrics[0].pods",
    ),
    (
        "periodSeconds",
        lambda d: d["spec"]["objects"].append(
            _hpa(
                behavior={
                    "scaleDown": {"policies": [{"type": "Percent", "value": 10, "periodSeconds": 1801}]}
                }
            )
        ),
        "spec.objects[1].spec.behavior.scaleDown.policies[0].periodSeconds",
    ),
    (
        "stabilization window",
        lambda d: d["spec"]["objects"].append(
            _hpa(behavior={"scaleUp": {"stabilizationWindowSeconds": 3601}})
        ),
        "spec.objects[1].spec.behavior.scaleUp.stabilizationWindowSeconds",
    ),
    (
        "int32 replicas",
        lambda d: d["spec"]["objects"][0]["spec"].update(replicas=2**31),
        "spec.objects[0].spec.replicas",
    ),
    (
        "huge exponent capacity",
        lambda d: d["spec"]["nodeGroups"][0].update(capacity={"cpu": "1e999999999", "memory": "8Gi"}),
        "spec.nodeGroups[0].capacity.cpu",
    ),
    (
        "capacity beyond int64 milli-units",
        lambda d: d["spec"]["nodeGroups"][0].update(capacity={"cpu": "1e17", "memory": "8Gi"}),
        "spec.nodeGroups[0].capacity.cpu",
    ),
    (
        "quantity of 5000 digits",
        lambda d: _container(d)["resources"]["requests"].update(memory="9" * 5000),
        "spec.objects[0].spec.template.spec.containers[0].resources.requests.memory",
    ),
    (
        "NaN price",
        lambda d: d["spec"]["nodeGroups"][0].update(pricePerHour=float("nan")),
        "spec.nodeGroups[0].pricePerHour",
    ),
    (
        "NaN CA flag",
        lambda d: d["spec"]["autoscalers"]["clusterAutoscaler"]["flags"].update(
            {"max-total-unready-percentage": float("nan")}
        ),
        "spec.autoscalers.clusterAutoscaler.flags.max-total-unready-percentage",
    ),
    (
        "infinite HPA tolerance",
        lambda d: d["spec"]["autoscalers"].update(hpa={"tolerance": float("inf")}),
        "spec.autoscalers.hpa.tolerance",
    ),
    ("Unicode digits in duration", lambda d: d["spec"].update(duration="١h"), "spec.duration"),
    (
        "fullwidth digits in a flag",
        lambda d: d["spec"]["autoscalers"]["clusterAutoscaler"]["flags"].update({"scan-interval": "１0s"}),
        "spec.autoscalers.clusterAutoscaler.flags.scan-interval",
    ),
    ("duration beyond Go's", lambda d: d["spec"].update(duration="100000000h"), "spec.duration"),
    ("duration beyond the bound", lambda d: d["spec"].update(duration="2000000h"), "spec.duration"),
    (
        "scan interval too short",
        lambda d: d["spec"]["autoscalers"]["clusterAutoscaler"]["flags"].update({"scan-interval": "1ms"}),
        "spec.autoscalers.clusterAutoscaler.flags.scan-interval",
    ),
    (
        "too many nodes",
        lambda d: d["spec"]["nodeGroups"][0].update(maxSize=10**9),
        "spec.nodeGroups[0].maxSize",
    ),
    (
        "a node group's label",
        lambda d: d["spec"]["nodeGroups"][0].update(labels={"pool": "general purpose"}),
        "spec.nodeGroups[0].labels.pool",
    ),
    (
        "a node group's taints",
        lambda d: d["spec"]["nodeGroups"][0].update(
            taints=[{"key": "a", "effect": "NoSchedule"}, {"key": "a", "value": "b", "effect": "NoSchedule"}]
        ),
        "spec.nodeGroups[0].taints[1]",
    ),
    (
        "too many pods",
        lambda d: d["spec"]["objects"][0]["spec"].update(replicas=2**30),
        "spec.objects[0].spec.replicas",
    ),
    (
        "negative Escalator rate",
        lambda d: d["spec"].update(
            autoscalers=_escalator(slow_node_removal_rate=-3, fast_node_removal_rate=5)
        ),
        "spec.autoscalers.escalator.nodeGroups[0].slow_node_removal_rate",
    ),
    (
        "NaN Escalator percent",
        lambda d: d["spec"].update(autoscalers=_escalator(scale_up_threshold_percent=float("nan"))),
        "spec.autoscalers.escalator.nodeGroups[0].scale_up_threshold_percent",
    ),
]


def _run(command: str, path: Path, tmp_path: Path) -> tuple[int, str, float]:
    extra = ["--output-dir", str(tmp_path / "out")] if command == "simulate" else []
    start = time.monotonic()
    result = CliRunner().invoke(main, [command, str(path), *extra])
    elapsed = time.monotonic() - start
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stderr, elapsed


@pytest.mark.parametrize(("what", "change", "field"), CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("command", ["validate", "simulate"])
def test_refused_with_the_field_named(
    command: str, what: str, change: Change, field: str, tmp_path: Path
) -> None:
    data = doc(objects=[deployment()])
    change(data)
    path = tmp_path / "scenario.yaml"
    path.write_text(yaml.safe_dump(data, allow_unicode=True))
    code, err, elapsed = _run(command, path, tmp_path)
    assert code == 2, err
    assert f"  {field}: " in err, err
    assert "Traceback" not in err
    assert elapsed < 60, f"{what}: {elapsed:.1f}s"  # "in seconds": refused before any run, never a hang
    assert not (tmp_path / "out").exists()  # nothing ran
