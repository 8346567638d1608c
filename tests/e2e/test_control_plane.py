"""The control plane under the end-to-end tests is real: kube-scheduler binds, kube-controller-manager
reconciles (ReplicaSets, the node lifecycle taints), and Prometheus answers queries.

Without kubelets pods stay Pending after binding, and bound pods must be deleted with grace period 0.
"""

from __future__ import annotations

import json
import urllib.parse
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any

import pytest

from .support import Kubectl

NOT_READY = "node.kubernetes.io/not-ready"
UNREACHABLE = "node.kubernetes.io/unreachable"


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def node_manifest(name: str) -> dict[str, Any]:
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    resources = {"cpu": "4", "memory": "16Gi", "pods": "110"}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, "kubetide.io/e2e": "smoke"}},
        "status": {
            "allocatable": resources,
            "capacity": resources,
            "conditions": [
                {
                    "type": "Ready",
                    "status": "True",
                    "reason": "KubeletReady",
                    "message": "created by the e2e smoke test",
                    "lastHeartbeatTime": now,
                    "lastTransitionTime": now,
                }
            ],
        },
    }


def pod_manifest(name: str, node_name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            # Only our node fits, whatever other tests left in the cluster.
            "nodeSelector": {"kubernetes.io/hostname": node_name},
            # No kubelet renews this node: tolerate the taints the node lifecycle controller may add.
            "tolerations": [
                {"key": NOT_READY, "operator": "Exists"},
                {"key": UNREACHABLE, "operator": "Exists"},
            ],
            "containers": [{"name": "main", "image": "registry.invalid/pause:3.2"}],
        },
    }


@pytest.fixture
def node(kubectl: Kubectl) -> Iterator[str]:
    name = unique("e2e-smoke-node")
    kubectl.create(node_manifest(name))
    yield name
    kubectl("delete", "node", name, "--ignore-not-found", "--wait=false")


def test_scheduler_binds_a_pod_to_the_node_that_fits(
    kubectl: Kubectl, node: str, wait_for: Callable[..., Any]
) -> None:
    pod = unique("e2e-smoke-pod")
    # The ServiceAccount admission plugin rejects pods until `default` has its token.
    wait_for(
        lambda: kubectl.json("get", "serviceaccount", "default", "-n", "default").get("secrets"),
        timeout=60,
        message="the default ServiceAccount has a token",
    )
    try:
        kubectl.create(pod_manifest(pod, node))
        bound = wait_for(
            lambda: kubectl.json("get", "pod", pod, "-n", "default")["spec"].get("nodeName"),
            timeout=30,
            message=f"kube-scheduler binds pod {pod}",
        )
        assert bound == node
    finally:
        # Bound pods without a kubelet stay Terminating unless forced.
        kubectl("delete", "pod", pod, "-n", "default", "--ignore-not-found", "--grace-period=0", "--force")


def test_node_lifecycle_controller_lifts_the_not_ready_taint(
    kubectl: Kubectl, node: str, wait_for: Callable[..., Any]
) -> None:
    # The TaintNodesByCondition admission plugin taints every new Node not-ready; only the node
    # lifecycle controller (in kube-controller-manager) lifts it once it sees Ready=True.
    def taint_keys() -> list[str]:
        return [taint["key"] for taint in kubectl.json("get", "node", node)["spec"].get("taints", [])]

    wait_for(
        lambda: NOT_READY not in taint_keys(), timeout=30, message=f"{NOT_READY} taint lifted from {node}"
    )


def test_controller_manager_creates_replica_set_and_pods(
    kubectl: Kubectl, wait_for: Callable[..., Any]
) -> None:
    name = unique("e2e-smoke-deploy")
    labels = {"app": name}
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    # Fits no node, so the pods stay unbound and are deleted at once.
                    "nodeSelector": {"kubetide.io/e2e": "no-such-node"},
                    "containers": [{"name": "main", "image": "registry.invalid/pause:3.2"}],
                },
            },
        },
    }
    try:
        kubectl.create(deployment)
        replica_sets = wait_for(
            lambda: kubectl.json("get", "replicasets", "-n", "default", "-l", f"app={name}")["items"],
            timeout=30,
            message=f"a ReplicaSet for Deployment {name}",
        )
        assert [owner["name"] for owner in replica_sets[0]["metadata"]["ownerReferences"]] == [name]
        pods = wait_for(
            lambda: len(kubectl.json("get", "pods", "-n", "default", "-l", f"app={name}")["items"]) == 2,
            timeout=30,
            message=f"2 pods of Deployment {name}",
        )
        assert pods
    finally:
        kubectl("delete", "deployment", name, "-n", "default", "--ignore-not-found", "--wait=false")


def test_prometheus_answers_queries(e2e_env: dict[str, str], wait_for: Callable[..., Any]) -> None:
    url = f"{e2e_env['PROMETHEUS_URL']}/api/v1/query?" + urllib.parse.urlencode({"query": "up"})

    def scraped_itself() -> list[dict[str, Any]]:
        # Loopback: never through an http(s)_proxy set for the package registries.
        with urllib.request.build_opener(urllib.request.ProxyHandler({})).open(url, timeout=5) as response:
            answer = json.load(response)
        assert answer["status"] == "success"
        return [
            r for r in answer["data"]["result"] if r["metric"]["job"] == "prometheus" and r["value"][1] == "1"
        ]

    assert wait_for(scraped_itself, timeout=30, message="Prometheus reports its own scrape target up")
