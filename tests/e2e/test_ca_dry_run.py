"""`--dry-run`: the cluster autoscaler decides as usual but changes nothing a user owns.

A pending pod needs a new node (it selects `pool`, which the group's template has and the existing node
lacks): the dry run would scale up, every loop, since its node never comes. Once the pods are gone the
group's one node is empty, so unneeded, and the dry run would delete it. A dry-run CA runs several loops;
the nodes and the kwok provider's targets are the same afterwards, and its /metrics and log say what it
would have done (its own Lease, Events and status ConfigMap are its business).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .support import Kubectl, KubetideProcess
from .test_cluster_autoscaler import (
    CA_NAMESPACE,
    cloud_config,
    deployment,
    group_nodes,
    start_ca,
)

# Set once by the TTL controller, not by the autoscaler; the test does not wait for it.
FOREIGN_ANNOTATIONS = {"node.alpha.kubernetes.io/ttl"}


def snapshot(kubectl: Kubectl, group: str, namespace: str) -> dict[str, Any]:
    nodes = {
        n["metadata"]["name"]: {
            "spec": n["spec"],
            "labels": n["metadata"].get("labels") or {},
            "annotations": {
                k: v
                for k, v in (n["metadata"].get("annotations") or {}).items()
                if k not in FOREIGN_ANNOTATIONS
            },
        }
        for n in group_nodes(kubectl, group)  # other tests' nodes come and go meanwhile
    }
    deployments = {
        d["metadata"]["name"]: d["spec"]["replicas"]
        for d in kubectl.json("-n", namespace, "get", "deployments")["items"]
    }
    pods = sorted(p["metadata"]["name"] for p in kubectl.json("-n", namespace, "get", "pods")["items"])
    state = kubectl.json("-n", CA_NAMESPACE, "get", "configmap", "kubetide-kwok-state", "--ignore-not-found")
    return {
        "nodes": nodes,
        "deployments": deployments,
        "pods": pods,
        "kwok": json.loads(((state or {}).get("data") or {}).get("state") or "{}")
        .get("groups", {})
        .get(group),
    }


def test_dry_run_changes_nothing_and_says_what_it_would_do(
    kubectl: Kubectl,
    kubetide: Callable[..., KubetideProcess],
    service_accounts: dict[str, Path],
    wait_for: Callable[..., Any],
    tmp_path: Path,
    group: str,
    namespace: str,
) -> None:
    # A node of the group without the `pool` label: no pod of the test goes there, so it stays empty.
    node = f"{group}-manual"
    kubectl.create(
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": node, "labels": {"kubetide.io/node-group": group}},
            "spec": {"providerID": f"kwok://{group}/{node}"},
            "status": {
                "allocatable": {"cpu": "2", "memory": "8Gi", "pods": "110"},
                "capacity": {"cpu": "2", "memory": "8Gi", "pods": "110"},
            },
        }
    )

    def settled() -> bool:
        (n,) = group_nodes(kubectl, group)
        ready = any(
            c["type"] == "Ready" and c["status"] == "True" for c in n["status"].get("conditions") or []
        )
        return ready and not n["spec"].get("taints")

    wait_for(settled, 60, message="the node Ready, without the not-ready taint")
    kubectl.create(deployment("web", namespace, group, replicas=2, cpu="1500m"))
    wait_for(
        lambda: len(kubectl.json("-n", namespace, "get", "pods")["items"]) == 2, 60, message="2 pending pods"
    )
    before = snapshot(kubectl, group, namespace)

    ca = start_ca(
        kubetide, service_accounts, cloud_config(tmp_path, group), group, "--dry-run", "--leader-elect=false"
    )

    def actions(action: str) -> float:
        return ca.metric("kubetide_dry_run_actions_total", component="cluster-autoscaler", action=action) or 0

    wait_for(lambda: actions("increase_size") > 0, 60, message="a scale-up it would have made")
    # A loop that scales up ends before scale-down (CA's RunOnce returns after postScaleUp), and a dry
    # run's scale-up never delivers its node, so it is asked for again every loop while the pods wait.
    # Without them, the empty node is unneeded and its deletion is what the dry run would do next.
    assert actions("delete_nodes") == 0
    kubectl("-n", namespace, "delete", "deployment", "web")
    wait_for(
        lambda: not kubectl.json("-n", namespace, "get", "pods")["items"], 60, message="the web pods gone"
    )
    before["deployments"], before["pods"] = {}, []
    wait_for(lambda: actions("delete_nodes") > 0, 60, message="a scale-down it would have made")
    first = ca.metric("cluster_autoscaler_last_activity", activity="main") or 0
    wait_for(
        lambda: (ca.metric("cluster_autoscaler_last_activity", activity="main") or 0) >= first + 6,
        30,
        message="three more loops",
    )
    assert ca.alive()
    after = snapshot(kubectl, group, namespace)
    assert after == before
    log = ca.log()
    assert "dry run: would increase node group" in log, log
    assert f"dry run: would delete nodes {node}" in log, log
    assert "dry run: would" in log and "taint" in log.lower(), log
