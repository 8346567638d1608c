"""The cluster autoscaler against the real control plane, as a user would check it with kubectl.

Pending pods make it add kwok nodes; the real scheduler binds the pods and the node agent runs them.
When a node's pod fits elsewhere, the node is drained through the eviction API and deleted, but not
while a PDB allows no disruption of that pod. The status ConfigMap, Events and /metrics show what happened. kubetide runs with
the ServiceAccount of deploy/rbac, not as admin.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from .support import Kubectl, KubetideProcess

# CA's --namespace as deploy/ runs it (CA's default): its Lease, status ConfigMap (where CA's tooling
# looks: kube-system/cluster-autoscaler-status), state ConfigMaps and the kwok provider's state.
CA_NAMESPACE = "kube-system"
# Shortened timings (CA's defaults are minutes; the README lists these).
FAST = [
    "--scan-interval=2s",
    "--scale-down-unneeded-time=6s",
    "--scale-down-delay-after-add=0s",
    "--scale-down-delay-after-delete=0s",
    "--scale-down-delay-after-failure=5s",
    "--unremovable-node-recheck-timeout=5s",
    "--max-pod-eviction-time=5m",
    f"--namespace={CA_NAMESPACE}",
    "--v=4",  # the loop's reasons in the log, for a failing test's reader
]


def cloud_config(tmp_path: Path, group: str, max_size: int = 5, provisioning_delay: str = "0s") -> Path:
    config = {
        "nodeGroups": [
            {
                "name": group,
                "minSize": 0,
                "maxSize": max_size,
                "provisioningDelay": provisioning_delay,
                "template": {
                    "metadata": {"labels": {"pool": group}},
                    "status": {
                        "allocatable": {"cpu": "2", "memory": "8Gi", "pods": "110"},
                        "capacity": {"cpu": "2", "memory": "8Gi", "pods": "110"},
                    },
                },
            }
        ]
    }
    path = tmp_path / "cloud.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def deployment(name: str, namespace: str, group: str, replicas: int, cpu: str = "900m") -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name, "tier": "e2e"}},
                "spec": {
                    "nodeSelector": {"pool": group},
                    "terminationGracePeriodSeconds": 1,
                    "containers": [
                        {"name": "main", "image": "nginx", "resources": {"requests": {"cpu": cpu}}}
                    ],
                },
            },
        },
    }


def group_nodes(kubectl: Kubectl, group: str) -> list[dict[str, Any]]:
    return list(kubectl.json("get", "nodes", "-l", f"kubetide.io/node-group={group}")["items"])


def kwok_target(kubectl: Kubectl, group: str) -> int | None:
    """The group's target size in the kwok provider's state ConfigMap (None before it knows the group)."""
    cm = kubectl.json("-n", CA_NAMESPACE, "get", "configmap", "kubetide-kwok-state")
    groups = json.loads((cm.get("data") or {}).get("state") or "{}").get("groups", {})
    return int(groups[group]["target"]) if group in groups else None


def running_pods(kubectl: Kubectl, namespace: str, app: str) -> list[dict[str, Any]]:
    pods = kubectl.json("-n", namespace, "get", "pods", "-l", f"app={app}")["items"]
    return [
        p
        for p in pods
        if p["status"].get("phase") == "Running" and not p["metadata"].get("deletionTimestamp")
    ]


def start_ca(
    kubetide: Callable[..., KubetideProcess], accounts: dict[str, Path], config: Path, group: str, *extra: str
) -> KubetideProcess:
    return kubetide(
        "cluster-autoscaler",
        "--cloud-provider=kwok",
        f"--cloud-config={config}",
        f"--nodes=0:5:{group}",
        *FAST,
        *extra,
        kubeconfig=accounts["cluster-autoscaler"],
    )


def test_scale_up_then_drain_through_a_pdb_and_delete(
    kubectl: Kubectl,
    kubetide: Callable[..., KubetideProcess],
    service_accounts: dict[str, Path],
    wait_for: Callable[..., Any],
    tmp_path: Path,
    group: str,
    namespace: str,
) -> None:
    # Two pods of 900m fit one 2-CPU node; a third pod needs a second node. The PDB covers all of them.
    kubectl.create(deployment("web", namespace, group, replicas=2))
    kubectl.create(
        {
            "apiVersion": "policy/v1beta1",
            "kind": "PodDisruptionBudget",
            "metadata": {"name": "e2e", "namespace": namespace},
            # 3: never a disruption allowed, even while the pods come and go (a budget that fits the
            # current pods exactly would allow one while a pod being deleted still counts as healthy).
            "spec": {"minAvailable": 3, "selector": {"matchLabels": {"tier": "e2e"}}},
        }
    )
    ca = start_ca(kubetide, service_accounts, cloud_config(tmp_path, group), group, "--leader-elect=false")
    wait_for(lambda: len(running_pods(kubectl, namespace, "web")) == 2, 120, message="2 web pods running")
    assert len(group_nodes(kubectl, group)) == 1
    kubectl.create(deployment("extra", namespace, group, replicas=1))
    wait_for(
        lambda: len(running_pods(kubectl, namespace, "extra")) == 1, 120, message="the extra pod running"
    )
    nodes = group_nodes(kubectl, group)
    assert len(nodes) == 2, [n["metadata"]["name"] for n in nodes]
    assert all(n["spec"]["providerID"].startswith(f"kwok://{group}/") for n in nodes)
    reasons = {e["reason"] for e in kubectl.json("-n", namespace, "get", "events")["items"]}
    assert "TriggeredScaleUp" in reasons
    assert (ca.metric("cluster_autoscaler_scaled_up_nodes_total") or 0) >= 2

    # One web pod goes: each node now runs one pod at 45%, and either pod fits beside the other. But the
    # PDB allows no disruption: CA leaves both nodes alone (the pod blocks its
    # node, as CA's drain rules say), loop after loop.
    kubectl("-n", namespace, "scale", "deployment", "web", "--replicas=1")
    wait_for(lambda: len(running_pods(kubectl, namespace, "web")) == 1, 60, message="1 web pod running")
    wait_for(
        lambda: (
            kubectl.json("-n", namespace, "get", "pdb", "e2e").get("status", {}).get("currentHealthy") == 2
        ),
        60,
        message="the PDB sees its 2 healthy pods",
    )
    first = ca.metric("cluster_autoscaler_last_activity", activity="main") or 0
    wait_for(
        lambda: (ca.metric("cluster_autoscaler_last_activity", activity="main") or 0) >= first + 12,
        60,
        message="six more loops",
    )
    assert len(group_nodes(kubectl, group)) == 2
    assert not any(
        t["key"] == "ToBeDeletedByClusterAutoscaler"
        for n in group_nodes(kubectl, group)
        for t in n["spec"].get("taints") or []
    )

    # Relax the PDB: one node is tainted (ToBeDeletedByClusterAutoscaler), its pod evicted through the
    # eviction API, the replacement runs on the other node, and the node is deleted, all within a loop
    # or two: the test watches for the outcome, not for the moment of the taint.
    before = {n["metadata"]["name"] for n in group_nodes(kubectl, group)}
    kubectl("-n", namespace, "patch", "pdb", "e2e", "--type=merge", "-p", '{"spec":{"minAvailable":1}}')

    def one_left() -> set[str] | None:
        names = {n["metadata"]["name"] for n in group_nodes(kubectl, group)}
        return names if len(names) == 1 else None

    (drained,) = before - wait_for(one_left, 120, message="one node drained and deleted")

    def moved() -> bool:
        pods = running_pods(kubectl, namespace, "web") + running_pods(kubectl, namespace, "extra")
        return len(pods) == 2 and all(p["spec"]["nodeName"] != drained for p in pods)

    wait_for(moved, 90, message="both pods running on the remaining node")

    node_events = kubectl.json(
        "get", "events", "-n", "default", "--field-selector", f"involvedObject.name={drained}"
    )
    assert "ScaleDown" in {e["reason"] for e in node_events["items"]}
    assert (ca.metric("cluster_autoscaler_scaled_down_nodes_total", reason="underutilized") or 0) >= 1

    def status() -> dict[str, Any] | None:
        cm = kubectl.json("-n", CA_NAMESPACE, "get", "configmap", "cluster-autoscaler-status")
        assert "cluster-autoscaler.kubernetes.io/last-updated" in cm["metadata"]["annotations"]
        doc: dict[str, Any] = yaml.safe_load(cm["data"]["status"])
        groups = {g["name"]: g for g in doc["nodeGroups"]}
        return doc if groups[group]["health"]["cloudProviderTarget"] == 1 else None

    document = wait_for(status, 30, message="the status ConfigMap shows the group at 1 node")
    assert document["clusterWide"]["health"]["status"] == "Healthy"

    # The group's shape learned from its real nodes, kept in the cluster for a restart (issue 8).
    def learned() -> dict[str, Any] | None:
        cm = kubectl.json(
            "-n",
            CA_NAMESPACE,
            "get",
            "configmap",
            "kubetide-cluster-autoscaler-templates",
            "--ignore-not-found",
        )
        if not cm:
            return None
        groups = json.loads(cm["data"]["templates"])["groups"]
        assert isinstance(groups, dict)
        found: dict[str, Any] | None = groups.get(group)
        if found is None:
            raise AssertionError(f"groups in the ConfigMap: {sorted(groups)}")
        return found

    # A shape is learned from a node Ready for over a minute (CA's rule): the remaining node was created
    # less than a minute ago when the drain ends, so allow that minute and a few loops.
    template = wait_for(learned, 100, message="the learned templates ConfigMap holds the group")
    assert template["node"]["allocatable"]["cpu"] > 0 and template["node"]["labels"]
    status_code, body = ca.get("/health-check")
    assert status_code == 200, body
    assert ca.alive()
