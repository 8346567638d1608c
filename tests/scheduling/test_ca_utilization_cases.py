"""Cluster Autoscaler's utilization conformance cases (``kind: utilization``)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from kubetide.model.pod import Container, Pod
from kubetide.model.resources import Resources
from kubetide.scheduling.utilization import node_utilization

from .builders import node, owner, pod

CASES = [
    c
    for c in json.loads((Path(__file__).parent / "data" / "ca_cases.json").read_text())
    if c["kind"] == "utilization"
]
NOW = 10_000.0


def _container(spec: dict[str, Any], name: str) -> Container:
    req = {"cpu": spec.get("cpu_m") or 0, "memory": spec.get("mem_bytes") or 0}
    return Container(name, Resources(req), restartable=spec.get("restart_policy") == "Always")


def _pod(spec: dict[str, Any], k: int) -> Pod:
    if "containers" in spec:
        return Pod(
            f"p{k}",
            containers=tuple(_container(c, f"c{i}") for i, c in enumerate(spec["containers"])),
            init_containers=tuple(
                _container(c, f"i{i}") for i, c in enumerate(spec.get("init_containers", []))
            ),
        )
    extra = {"nvidia.com/gpu": spec["gpu"]} if "gpu" in spec else None
    owners, annotations = owner(), {}
    if spec.get("daemonset", "").startswith("owner"):
        owners = owner("ds", "DaemonSet")
    elif spec.get("daemonset"):
        annotations["cluster-autoscaler.kubernetes.io/daemonset-pod"] = "true"
    if spec.get("mirror"):
        annotations["kubernetes.io/config.mirror"] = "x"
    p = pod(
        f"p{k}",
        spec.get("cpu_m") or 0,
        spec.get("mem_bytes") or 0,
        owners=owners,
        annotations=annotations,
        extra=extra,
    )
    if "deletion_timestamp_s_ago" in spec:
        object.__setattr__(p, "deletion_time", NOW - spec["deletion_timestamp_s_ago"])
    return p


@pytest.mark.parametrize("case", [pytest.param(c, id=c["id"]) for c in CASES])
def test_utilization(case: dict[str, Any]) -> None:
    inp, exp = case["input"], case["expected"]
    alloc = inp["node_allocatable"]
    extra = {"nvidia.com/gpu": alloc["gpu"]} if "gpu" in alloc else None
    n = node("n", alloc["cpu_m"] or 0, alloc["mem_bytes"] or 0, extra=extra)
    pods = [_pod(p, k) for k, p in enumerate(inp["pods"])]
    flags = inp["flags"]
    kwargs: dict[str, Any] = {
        "gpu_resource": "nvidia.com/gpu" if "gpu_config" in flags else None,
        "ignore_daemonsets": flags.get("ignore_daemonsets", False),
        "ignore_mirror": flags.get("ignore_mirror", False),
    }
    if exp.get("error"):
        with pytest.raises(ValueError):
            node_utilization(n, pods, NOW, **kwargs)
        return
    u = node_utilization(n, pods, NOW, **kwargs)
    assert u.utilization == pytest.approx(exp["utilization"])
    if "cpu_util" in exp:
        assert u.cpu == pytest.approx(exp["cpu_util"])
    if "resource" in exp:
        assert u.resource == exp["resource"]
    if "pod_effective_requests" in exp:
        assert [[p.requests["cpu"], p.requests["memory"]] for p in pods] == exp["pod_effective_requests"]


def test_an_ignored_daemonset_pod_comes_off_allocatable_even_when_long_terminating() -> None:
    """Upstream checks DaemonSet and mirror pods before long-terminating ones."""
    ds = pod("ds", 1000, 0, owners=owner("ds", "DaemonSet"))
    object.__setattr__(ds, "deletion_time", NOW - 3600)
    util = node_utilization(node("n", cpu=4000), [ds, pod("a", 1500, 0)], NOW, ignore_daemonsets=True)
    assert util.cpu == 1500 / 3000


def test_everything_allocatable_taken_by_ignored_pods_is_go_float_division() -> None:
    """Go divides float64s: by zero it gives +Inf (a node that is never underutilized) or NaN (which
    no threshold comparison holds for), where Python would raise."""
    full = pod("ds", 4000, 0, owners=owner("ds", "DaemonSet"))
    util = node_utilization(node("n", cpu=4000), [full, pod("a", 500, 0)], NOW, ignore_daemonsets=True)
    assert util.cpu == math.inf and util.resource == "cpu" and util.utilization == math.inf
    util = node_utilization(node("n", cpu=4000), [full], NOW, ignore_daemonsets=True)
    # cpu is NaN: "cpu > mem" is false, so upstream reports memory's utilization (0 here)
    assert math.isnan(util.cpu) and util.resource == "memory" and util.utilization == 0.0


def test_gpu_utilization_takes_ignored_daemonset_gpus_off_allocatable() -> None:
    gpus = {"nvidia.com/gpu": 4}
    ds = pod("ds", 0, 0, owners=owner("ds", "DaemonSet"), extra={"nvidia.com/gpu": 1})
    job = pod("job", 0, 0, extra={"nvidia.com/gpu": 1})
    n = node("g", extra=gpus)
    assert node_utilization(n, [ds, job], NOW, gpu_resource="nvidia.com/gpu").utilization == 2 / 4
    ignored = node_utilization(n, [ds, job], NOW, gpu_resource="nvidia.com/gpu", ignore_daemonsets=True)
    assert ignored.utilization == 1 / 3
