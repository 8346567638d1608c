"""The live HPA against the real control plane, as a user would check it with kubectl.

A kubetide HorizontalPodAutoscaler (``autoscaling.kubetide.io/v1``, ``syncPeriod: 5s``) scales a
Deployment from the CPU usage the node agent reports and the cluster's Prometheus scrapes (no metrics
adapter: ``--prometheus-url``). Each test runs on a Node of its own (the node agent makes it Ready and
runs its pods), in a namespace of its own, with kubetide under the ServiceAccount of deploy/rbac.

Usage is driven through each pod's ``kubetide.io/usage`` annotation. The pod template carries a fixed
*baseline* usage from the start and never changes (a template change would roll the Deployment and
replace the pods the test just patched); the test changes the load by patching the running pods, so
which pods carry which usage is known at every step.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from .support import Kubectl, KubetideProcess, restart_apiserver

USAGE = "kubetide.io/usage"
REQUEST = "100m"  # per pod; the HPA's target is 50% of it
BASELINE = "50m"  # the template's usage: exactly on target, so one pod stays one pod

# kube-controller-manager's flags, shortened so a scale-down or a new pod's first sample counts within
# seconds; a 15 s rate window over Prometheus' 5 s scrapes follows a change of usage within ~20 s.
FAST = [
    "--horizontal-pod-autoscaler-downscale-stabilization=5s",
    "--horizontal-pod-autoscaler-cpu-initialization-period=1s",
    "--horizontal-pod-autoscaler-initial-readiness-delay=1s",
    "--prometheus-rate-window=15s",
    "--leader-elect=false",
    "--v=4",
]

Wait = Callable[..., Any]


# --- fixtures --------------------------------------------------------------------------------------


@pytest.fixture
def namespace(kubectl: Kubectl, group: str) -> Iterator[str]:
    """A namespace of the test's own, deleted (and waited for) before its Node goes: the node agent
    finishes the pods, so the namespace never hangs in Terminating on pods of a deleted node."""
    name = f"hpa-{uuid.uuid4().hex[:6]}"
    kubectl("create", "namespace", name)
    yield name
    kubectl("delete", "namespace", name, "--timeout=120s", timeout=150)


@pytest.fixture
def group(kubectl: Kubectl) -> Iterator[str]:
    """A Node of the test's own (label ``kubetide.io/node-group``: the node agent runs its pods)."""
    name = f"hpa-{uuid.uuid4().hex[:6]}"
    resources = {"cpu": "4", "memory": "16Gi", "pods": "110"}
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    kubectl.create(
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {
                "name": name,
                "labels": {"kubernetes.io/hostname": name, "kubetide.io/node-group": name},
            },
            "status": {
                "allocatable": resources,
                "capacity": resources,
                "conditions": [
                    {
                        "type": "Ready",
                        "status": "True",
                        "reason": "KubeletReady",
                        "message": "created by the HPA e2e test",
                        "lastHeartbeatTime": now,
                        "lastTransitionTime": now,
                    }
                ],
            },
        }
    )
    yield name
    kubectl("delete", "node", name, "--wait=false")


# --- manifests -------------------------------------------------------------------------------------


def deployment(name: str, namespace: str, group: str, replicas: int = 1) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}, "annotations": {USAGE: json.dumps({"cpu": BASELINE})}},
                "spec": {
                    "nodeSelector": {"kubetide.io/node-group": group},
                    "terminationGracePeriodSeconds": 1,
                    "containers": [
                        {"name": "main", "image": "nginx", "resources": {"requests": {"cpu": REQUEST}}}
                    ],
                },
            },
        },
    }


def kubetide_hpa(name: str, namespace: str, target: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "autoscaling.kubetide.io/v1",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": target},
            "minReplicas": 1,
            "maxReplicas": 3,
            "syncPeriod": "5s",
            "metrics": [
                {
                    "type": "Resource",
                    "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}},
                }
            ],
            **spec,
        },
    }


# --- helpers ---------------------------------------------------------------------------------------


def start_hpa(
    kubetide: Callable[..., KubetideProcess], accounts: dict[str, Path], env: dict[str, str]
) -> KubetideProcess:
    return kubetide("hpa", f"--prometheus-url={env['PROMETHEUS_URL']}", *FAST, kubeconfig=accounts["hpa"])


def running_pods(kubectl: Kubectl, namespace: str, app: str) -> list[dict[str, Any]]:
    pods = kubectl.json("-n", namespace, "get", "pods", "-l", f"app={app}")["items"]
    return [
        p
        for p in pods
        if p["status"].get("phase") == "Running" and not p["metadata"].get("deletionTimestamp")
    ]


def set_usage(kubectl: Kubectl, namespace: str, app: str, cpu: str) -> None:
    """Patch the usage annotation of every running pod of ``app`` (the template keeps its baseline)."""
    for pod in running_pods(kubectl, namespace, app):
        kubectl(
            "-n", namespace, "annotate", "pod", pod["metadata"]["name"], "--overwrite",
            f"{USAGE}={json.dumps({'cpu': cpu})}",
        )  # fmt: skip


def khpa(kubectl: Kubectl, namespace: str, name: str) -> dict[str, Any]:
    return dict(
        kubectl.json("-n", namespace, "get", "horizontalpodautoscalers.autoscaling.kubetide.io", name)
    )


def conditions(hpa: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["type"]: c for c in (hpa.get("status") or {}).get("conditions") or []}


def events_on(kubectl: Kubectl, namespace: str, obj: dict[str, Any]) -> list[dict[str, Any]]:
    """The Events `kubectl describe` shows for ``obj``: those naming its uid."""
    uid = obj["metadata"]["uid"]
    return list(
        kubectl.json("-n", namespace, "get", "events", "--field-selector", f"involvedObject.uid={uid}")[
            "items"
        ]
    )


def event_with(kubectl: Kubectl, namespace: str, obj: dict[str, Any], reason: str, text: str = "") -> Any:
    found = [e for e in events_on(kubectl, namespace, obj) if e["reason"] == reason and text in e["message"]]
    return found[0] if found else None


def wait_replicas(
    kubectl: Kubectl, wait_for: Wait, namespace: str, name: str, replicas: int, timeout: float
) -> None:
    """The Deployment asks for ``replicas`` and that many pods run (and the HPA status says so)."""

    def settled() -> bool:
        spec = kubectl.json("-n", namespace, "get", "deployment", name)["spec"]["replicas"]
        return spec == replicas and len(running_pods(kubectl, namespace, name)) == replicas

    wait_for(settled, timeout, message=f"deployment {name} at {replicas} running replicas")


def wait_status(kubectl: Kubectl, wait_for: Wait, namespace: str, hpa: str, replicas: int) -> dict[str, Any]:
    def seen() -> dict[str, Any] | None:
        obj = khpa(kubectl, namespace, hpa)
        status = obj.get("status") or {}
        ok = status.get("currentReplicas") == replicas and status.get("desiredReplicas") == replicas
        return obj if ok and status.get("currentMetrics") else None

    return dict(wait_for(seen, 60, message=f"HPA {hpa} status at {replicas} replicas with metrics"))


# --- the tests -------------------------------------------------------------------------------------


def test_scales_up_and_down_from_prometheus_metrics(
    kubectl: Kubectl,
    kubetide: Callable[..., KubetideProcess],
    service_accounts: dict[str, Path],
    e2e_env: dict[str, str],
    wait_for: Wait,
    namespace: str,
    group: str,
) -> None:
    """`kubectl describe khpa web`: 1 pod at target stays 1; its usage at 4x the target scales the
    Deployment to its maximum of 3 (ScalingLimited TooManyReplicas); usage far below the target brings
    it back to 1. Each rescale is a `SuccessfulRescale` Event "New size: N; reason: ..."."""
    kubectl.create(deployment("web", namespace, group))
    wait_replicas(kubectl, wait_for, namespace, "web", 1, 60)
    kubectl.create(kubetide_hpa("web", namespace, "web"))
    hpa = start_hpa(kubetide, service_accounts, e2e_env)

    # At target: the HPA reads the metric, is able to scale, and leaves the one pod alone.
    obj = wait_status(kubectl, wait_for, namespace, "web", 1)
    cond = conditions(obj)
    assert cond["AbleToScale"]["status"] == "True", cond
    assert cond["ScalingActive"]["status"] == "True", cond
    assert cond["ScalingActive"]["reason"] == "ValidMetricFound", cond
    metric = obj["status"]["currentMetrics"][0]
    assert metric["type"] == "Resource" and metric["resource"]["name"] == "cpu", metric

    # Load: 200m on a 100m request is 200% against a 50% target: 4 replicas wanted, 3 allowed.
    set_usage(kubectl, namespace, "web", "200m")
    wait_replicas(kubectl, wait_for, namespace, "web", 3, 120)
    obj = khpa(kubectl, namespace, "web")
    assert obj["status"]["desiredReplicas"] == 3, obj["status"]
    up = wait_for(
        lambda: event_with(
            kubectl, namespace, obj, "SuccessfulRescale", "New size: 3; reason: cpu resource utilization"
        ),
        30,
        message="SuccessfulRescale to 3 on the HPA",
    )
    assert up["type"] == "Normal" and up["message"].endswith("above target"), up
    cond = wait_for(
        lambda: (
            (c := conditions(khpa(kubectl, namespace, "web")))["ScalingLimited"]["status"] == "True" and c
        ),
        60,
        message="ScalingLimited True while 4 replicas are wanted",
    )
    assert cond["ScalingLimited"]["reason"] == "TooManyReplicas", cond
    assert cond["AbleToScale"]["status"] == "True", cond

    # Idle: 10m on every pod, 10% against 50%: back to the minimum after the (shortened) stabilization.
    set_usage(kubectl, namespace, "web", "10m")
    wait_replicas(kubectl, wait_for, namespace, "web", 1, 120)
    obj = wait_status(kubectl, wait_for, namespace, "web", 1)
    down = wait_for(
        lambda: event_with(
            kubectl, namespace, obj, "SuccessfulRescale", "New size: 1; reason: All metrics below target"
        ),
        30,
        message="SuccessfulRescale to 1 on the HPA",
    )
    assert down["type"] == "Normal", down
    cond = wait_for(
        lambda: (
            (c := conditions(khpa(kubectl, namespace, "web")))["ScalingLimited"]["status"] == "False" and c
        ),
        60,
        message="ScalingLimited False at 1 replica",
    )
    assert cond["ScalingLimited"]["reason"] == "DesiredWithinRange", cond
    assert cond["AbleToScale"]["status"] == "True", cond
    assert hpa.alive(), hpa.log()[-3000:]


def test_a_malformed_hpa_never_stops_the_others(
    kubectl: Kubectl,
    kubetide: Callable[..., KubetideProcess],
    service_accounts: dict[str, Path],
    e2e_env: dict[str, str],
    wait_for: Wait,
    namespace: str,
    group: str,
) -> None:
    """Beside a working HPA, one naming a missing Deployment shows AbleToScale False FailedGetScale
    and a Warning Event, and one with `syncPeriod: 0s` (a Go duration the CRD's pattern lets through,
    but not a period) a Warning Event InvalidSpec; the working one still scales its Deployment. A
    `syncPeriod: soon` never gets that far: the CRD's schema refuses it at `kubectl create`."""
    kubectl.create(deployment("web", namespace, group))
    wait_replicas(kubectl, wait_for, namespace, "web", 1, 60)
    with pytest.raises(AssertionError, match=r"spec\.syncPeriod"):
        kubectl.create(kubetide_hpa("soon", namespace, "web", syncPeriod="soon"))
    kubectl.create(kubetide_hpa("missing", namespace, "nowhere"))
    kubectl.create(kubetide_hpa("invalid", namespace, "web", syncPeriod="0s"))
    kubectl.create(kubetide_hpa("web", namespace, "web"))
    hpa = start_hpa(kubetide, service_accounts, e2e_env)

    missing = khpa(kubectl, namespace, "missing")
    cond = wait_for(
        lambda: (c := conditions(khpa(kubectl, namespace, "missing"))).get("AbleToScale") and c,
        60,
        message="the HPA on a missing Deployment gets AbleToScale",
    )
    assert cond["AbleToScale"]["status"] == "False", cond
    assert cond["AbleToScale"]["reason"] == "FailedGetScale", cond
    warning = wait_for(
        lambda: event_with(kubectl, namespace, missing, "FailedGetScale"), 30, message="FailedGetScale Event"
    )
    assert warning["type"] == "Warning" and "nowhere" in warning["message"], warning

    invalid = khpa(kubectl, namespace, "invalid")
    event = wait_for(
        lambda: event_with(kubectl, namespace, invalid, "InvalidSpec"), 60, message="InvalidSpec Event"
    )
    assert event["type"] == "Warning" and "syncPeriod" in event["message"], event

    set_usage(kubectl, namespace, "web", "200m")
    wait_replicas(kubectl, wait_for, namespace, "web", 3, 120)
    web = wait_status(kubectl, wait_for, namespace, "web", 3)
    assert event_with(kubectl, namespace, web, "SuccessfulRescale", "New size: 3")
    assert hpa.alive(), hpa.log()[-3000:]


def test_the_loops_survive_an_api_server_restart(
    kubectl: Kubectl,
    kubetide: Callable[..., KubetideProcess],
    service_accounts: dict[str, Path],
    e2e_env: dict[str, str],
    wait_for: Wait,
    namespace: str,
    group: str,
) -> None:
    """The API server goes away for ~15 s and comes back: the same kubetide process (never restarted)
    counts the failures in `kubetide_api_errors_total`, skips its loops until its pod cache has listed
    again, and scales the Deployment on the next load."""
    kubectl.create(deployment("web", namespace, group))
    wait_replicas(kubectl, wait_for, namespace, "web", 1, 60)
    kubectl.create(kubetide_hpa("web", namespace, "web"))
    hpa = start_hpa(kubetide, service_accounts, e2e_env)
    wait_status(kubectl, wait_for, namespace, "web", 1)
    errors_before = total(hpa, "kubetide_api_errors_total")

    restart_apiserver(15)

    assert hpa.alive(), hpa.log()[-3000:]
    assert total(hpa, "kubetide_api_errors_total") > errors_before
    # The loops during the outage were skipped (the pod cache had to list again), not run on it.
    assert total(hpa, "kubetide_loops_skipped_total") > 0
    set_usage(kubectl, namespace, "web", "200m")
    wait_replicas(kubectl, wait_for, namespace, "web", 3, 180)
    web = wait_status(kubectl, wait_for, namespace, "web", 3)
    assert event_with(kubectl, namespace, web, "SuccessfulRescale", "New size: 3")
    assert hpa.alive(), hpa.log()[-3000:]


def total(proc: KubetideProcess, name: str) -> float:
    """The sum of every series of one metric on /metrics."""
    _, text = proc.get("/metrics")
    values = [
        float(line.rpartition(" ")[2])
        for line in text.splitlines()
        if line.startswith(name + "{") or line.startswith(name + " ")
    ]
    return sum(values)


def test_a_standard_and_a_kubetide_hpa_on_one_deployment_are_both_warned(
    kubectl: Kubectl,
    kubetide: Callable[..., KubetideProcess],
    service_accounts: dict[str, Path],
    e2e_env: dict[str, str],
    wait_for: Wait,
    namespace: str,
    group: str,
) -> None:
    """An autoscaling/v2beta2 HPA and a kubetide HPA on the same Deployment: `kubectl describe` of
    each shows a Warning ConflictingHPA naming both."""
    kubectl.create(deployment("web", namespace, group))
    own = kubectl.create(kubetide_hpa("mine", namespace, "web"))
    standard_manifest = kubetide_hpa("theirs", namespace, "web")
    standard_manifest["apiVersion"] = "autoscaling/v2beta2"
    del standard_manifest["spec"]["syncPeriod"]
    standard = kubectl.create(standard_manifest)
    hpa = start_hpa(kubetide, service_accounts, e2e_env)

    for obj in (own, standard):
        event = wait_for(
            lambda obj=obj: event_with(kubectl, namespace, obj, "ConflictingHPA"),
            60,
            message=f"ConflictingHPA on {obj['apiVersion']} {obj['metadata']['name']}",
        )
        assert event["type"] == "Warning", event
        assert "theirs" in event["message"] and "mine" in event["message"], event
        assert event["involvedObject"]["apiVersion"] == obj["apiVersion"], event
    assert hpa.alive(), hpa.log()[-3000:]
