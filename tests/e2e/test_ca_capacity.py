"""The capacity APIs (issue 27) against the real control plane: CA's CRDs installed from deploy/rbac,
kubetide's cluster autoscaler with CA's flags, the objects and their statuses as kubectl shows them.

- A CapacityBuffer keeps a node ready: its fake pod asks for the node, keeps it from scale-down, and a
  real pod of the same shape runs on it at once (long before a new node could come); the buffer then
  asks for another node, and, sized through its scale subresource (kubetide's CRD), for a third.
- A best-effort-atomic ProvisioningRequest on a group that can give only part of it gets no node at all
  (Provisioned=False, CapacityIsNotFound), and Failed once its ValidUntilSeconds has passed.
- check-capacity requests are answered Provisioned or not from the nodes there are, without scaling.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .support import Kubectl, KubetideProcess
from .test_cluster_autoscaler import CA_NAMESPACE, FAST, cloud_config, group_nodes

BUFFER_FLAGS = ["--capacity-buffer-controller-enabled=true", "--capacity-buffer-pod-injection-enabled=true"]
PROVREQ_FLAGS = ["--enable-provisioning-requests=true", "--provisioning-request-initial-backoff-time=2s"]


def pod_spec(group: str, cpu: str) -> dict[str, Any]:
    return {
        "nodeSelector": {"pool": group},
        "terminationGracePeriodSeconds": 1,
        "containers": [{"name": "main", "image": "nginx", "resources": {"requests": {"cpu": cpu}}}],
    }


def pod_template(name: str, namespace: str, group: str, cpu: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "PodTemplate",
        "metadata": {"name": name, "namespace": namespace},
        "template": {"metadata": {"labels": {"app": name}}, "spec": pod_spec(group, cpu)},
    }


def provisioning_request(
    name: str, namespace: str, class_name: str, template: str, count: int, **parameters: str
) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "provisioningClassName": class_name,
        "podSets": [{"podTemplateRef": {"name": template}, "count": count}],
    }
    if parameters:
        spec["parameters"] = parameters
    return {
        "apiVersion": "autoscaling.x-k8s.io/v1",
        "kind": "ProvisioningRequest",
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
    }


def conditions(kubectl: Kubectl, resource: str, namespace: str, name: str) -> dict[str, dict[str, Any]]:
    obj = kubectl.json("-n", namespace, "get", resource, name)
    return {c["type"]: c for c in (obj.get("status") or {}).get("conditions") or []}


def ready_nodes(kubectl: Kubectl, group: str) -> list[str]:
    return [
        n["metadata"]["name"]
        for n in group_nodes(kubectl, group)
        if any(c["type"] == "Ready" and c["status"] == "True" for c in n["status"].get("conditions") or [])
    ]


def start_ca(
    kubetide: Callable[..., KubetideProcess],
    accounts: dict[str, Path],
    config: Path,
    group: str,
    max_size: int,
    *extra: str,
) -> KubetideProcess:
    return kubetide(
        "cluster-autoscaler",
        "--cloud-provider=kwok",
        f"--cloud-config={config}",
        f"--nodes=0:{max_size}:{group}",
        "--leader-elect=false",
        *FAST,
        *extra,
        kubeconfig=accounts["cluster-autoscaler"],
    )


def loops(ca: KubetideProcess) -> float:
    return ca.metric("cluster_autoscaler_last_activity", activity="main") or 0.0


def test_a_buffer_keeps_a_node_ready_and_a_real_pod_lands_on_it_at_once(
    kubectl: Kubectl,
    kubetide: Callable[..., KubetideProcess],
    service_accounts: dict[str, Path],
    wait_for: Callable[..., Any],
    tmp_path: Path,
    group: str,
    namespace: str,
) -> None:
    # A new node takes 20 s to come: a pod that runs within 10 s ran on a node that was already there.
    config = cloud_config(tmp_path, group, max_size=4, provisioning_delay="20s")
    kubectl.create(pod_template("spare", namespace, group, "1500m"))
    kubectl.create(
        {
            "apiVersion": "autoscaling.x-k8s.io/v1beta1",
            "kind": "CapacityBuffer",
            "metadata": {"name": "spare", "namespace": namespace},
            "spec": {"podTemplateRef": {"name": "spare"}, "replicas": 1},
        }
    )
    ca = start_ca(kubetide, service_accounts, config, group, 4, *BUFFER_FLAGS)

    def buffer_ready() -> dict[str, Any] | None:
        obj = kubectl.json("-n", namespace, "get", "capacitybuffer", "spare")
        found = {c["type"]: c["status"] for c in (obj.get("status") or {}).get("conditions") or []}
        if found.get("ReadyForProvisioning") == "True" and found.get("Provisioning") == "True":
            return dict(obj["status"])
        return None

    status = wait_for(buffer_ready, 60, message="the buffer ReadyForProvisioning and Provisioning")
    assert status["replicas"] == 1
    managed = kubectl.json("-n", namespace, "get", "podtemplate", status["podTemplateRef"]["name"])
    assert managed["metadata"]["ownerReferences"][0]["kind"] == "CapacityBuffer"
    assert managed["template"]["spec"]["containers"][0]["resources"]["requests"]["cpu"] == "1500m"

    (spare_node,) = wait_for(lambda: ready_nodes(kubectl, group), 90, message="the buffer's node Ready")
    # The node runs no pod at all, and scale-down would take it after 6 s unneeded: the buffer's fake
    # pod keeps it, loop after loop.
    first = loops(ca)
    wait_for(lambda: loops(ca) >= first + 10, 60, message="five more loops")
    assert [n["metadata"]["name"] for n in group_nodes(kubectl, group)] == [spare_node]

    kubectl.create(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "real", "namespace": namespace},
            "spec": pod_spec(group, "1500m"),
        }
    )
    created = time.monotonic()

    def running() -> str | None:
        pod = kubectl.json("-n", namespace, "get", "pod", "real")
        return str(pod["spec"]["nodeName"]) if pod["status"].get("phase") == "Running" else None

    assert wait_for(running, 60, message="the real pod running") == spare_node
    assert time.monotonic() - created < 15, "the pod waited as long as a new node takes"
    # The buffer is short again: CA asks for a second node for its fake pod.
    wait_for(lambda: len(ready_nodes(kubectl, group)) == 2, 90, message="a second node for the buffer")
    events = kubectl.json("-n", namespace, "get", "events", "--field-selector", "involvedObject.name=spare")
    assert "TriggeredScaleUp" in {e["reason"] for e in events["items"]}

    # Beyond CA: the buffer's scale subresource, as an HPA or KEDA would use it.
    kubectl("-n", namespace, "scale", "capacitybuffer", "spare", "--replicas=2")
    path = f"/apis/autoscaling.x-k8s.io/v1beta1/namespaces/{namespace}/capacitybuffers/spare/scale"
    scale = json.loads(kubectl("get", "--raw", path))
    assert (scale["kind"], scale["spec"]["replicas"]) == ("Scale", 2)
    wait_for(
        lambda: (
            kubectl.json("-n", namespace, "get", "capacitybuffer", "spare")["status"].get("replicas") == 2
        ),
        60,
        message="the buffer's status counts 2 pods",
    )
    wait_for(lambda: len(ready_nodes(kubectl, group)) == 3, 90, message="a third node for the bigger buffer")
    assert ca.alive()


def test_an_atomic_request_a_group_can_give_only_part_of_gets_no_node_and_fails(
    kubectl: Kubectl,
    kubetide: Callable[..., KubetideProcess],
    service_accounts: dict[str, Path],
    wait_for: Callable[..., Any],
    tmp_path: Path,
    group: str,
    namespace: str,
) -> None:
    # Three pods of 1.5 CPU need three 2-CPU nodes; the group has two at most.
    config = cloud_config(tmp_path, group, max_size=2, provisioning_delay="0s")
    kubectl.create(pod_template("batch", namespace, group, "1500m"))
    kubectl.create(
        provisioning_request(
            "all-or-nothing",
            namespace,
            "best-effort-atomic-scale-up.autoscaling.x-k8s.io",
            "batch",
            3,
            ValidUntilSeconds="25",
        )
    )
    ca = start_ca(kubetide, service_accounts, config, group, 2, *PROVREQ_FLAGS)

    def not_found() -> dict[str, Any] | None:
        found = conditions(kubectl, "provisioningrequest", namespace, "all-or-nothing")
        provisioned = found.get("Provisioned", {})
        return found if provisioned.get("status") == "False" else None

    found = wait_for(not_found, 60, message="Provisioned=False on the request")
    assert found["Provisioned"]["reason"] == "CapacityIsNotFound"
    assert found["Accepted"]["status"] == "True"

    def failed() -> dict[str, Any] | None:
        found = conditions(kubectl, "provisioningrequest", namespace, "all-or-nothing")
        return found if found.get("Failed", {}).get("status") == "True" else None

    found = wait_for(failed, 90, message="Failed once ValidUntilSeconds passed")
    assert found["Failed"]["reason"] == "ValidUntilSecondsExpired"
    # All or nothing: not one node was added, at any time (the kwok provider's target never moved).
    assert group_nodes(kubectl, group) == []
    assert (ca.metric("cluster_autoscaler_scaled_up_nodes_total") or 0) == 0
    assert ca.alive()


def test_check_capacity_answers_from_the_nodes_there_are_without_scaling(
    kubectl: Kubectl,
    kubetide: Callable[..., KubetideProcess],
    service_accounts: dict[str, Path],
    wait_for: Callable[..., Any],
    tmp_path: Path,
    group: str,
    namespace: str,
) -> None:
    config = cloud_config(tmp_path, group, max_size=5, provisioning_delay="0s")
    ca = start_ca(kubetide, service_accounts, config, group, 5, *PROVREQ_FLAGS)
    # One node, half used by a real pod: 1.5 CPU free.
    kubectl.create(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "base", "namespace": namespace},
            "spec": pod_spec(group, "500m"),
        }
    )
    wait_for(lambda: len(ready_nodes(kubectl, group)) == 1, 90, message="one node for the base pod")
    kubectl.create(pod_template("one-cpu", namespace, group, "1"))
    check = "check-capacity.autoscaling.x-k8s.io"
    kubectl.create(provisioning_request("fits", namespace, check, "one-cpu", 1))
    kubectl.create(provisioning_request("too-big", namespace, check, "one-cpu", 2, noRetry="true"))

    def answered(name: str, kind: str) -> dict[str, Any] | None:
        found = conditions(kubectl, "provisioningrequest", namespace, name)
        return found if found.get(kind, {}).get("status") == "True" else None

    fits = wait_for(lambda: answered("fits", "Provisioned"), 60, message="the small request Provisioned")
    assert fits["Provisioned"]["reason"] == "CapacityIsFound"
    too_big = wait_for(lambda: answered("too-big", "Failed"), 60, message="the big request Failed")
    assert too_big["Failed"]["reason"] == "CapacityIsNotFound"
    assert "Provisioned" not in too_big
    first = loops(ca)
    wait_for(lambda: loops(ca) >= first + 6, 60, message="three more loops")
    assert len(group_nodes(kubectl, group)) == 1, "check-capacity never scales"
    status = kubectl.json("-n", CA_NAMESPACE, "get", "configmap", "cluster-autoscaler-status")
    assert status["data"]["status"]
    assert ca.alive()
