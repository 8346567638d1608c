"""A drain on the real control plane waits for the evicted pods, as CA 1.31's does (issue 23 items 2, 3).

The pods take 12 s to stop once deleted (``kubetide.io/termination-delay``: the cluster's node agent,
playing the kubelet, confirms the deletion then), within their 30 s grace period. CA evicts the pod of
the node it drains once, with ``gracePeriodSeconds`` = min(30, ``--max-graceful-termination-sec`` 25),
and keeps the Node object and the kwok instance until the pod is gone; only then does it delete them.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from .support import Kubectl, KubetideProcess
from .test_ca_restart import tainted
from .test_cluster_autoscaler import (
    cloud_config,
    deployment,
    group_nodes,
    kwok_target,
    running_pods,
    start_ca,
)

GRACE_S = 30
STOPS_AFTER = "12s"


def graceful(manifest: dict[str, Any]) -> dict[str, Any]:
    template = manifest["spec"]["template"]
    template["spec"]["terminationGracePeriodSeconds"] = GRACE_S
    template["metadata"]["annotations"] = {"kubetide.io/termination-delay": STOPS_AFTER}
    return manifest


def test_the_node_stays_until_its_evicted_pod_is_gone_and_the_pod_is_evicted_once(
    kubectl: Kubectl,
    kubetide: Callable[..., KubetideProcess],
    service_accounts: dict[str, Path],
    wait_for: Callable[..., Any],
    tmp_path: Path,
    group: str,
    namespace: str,
) -> None:
    kubectl.create(graceful(deployment("web", namespace, group, replicas=2)))
    ca = start_ca(
        kubetide,
        service_accounts,
        cloud_config(tmp_path, group),
        group,
        "--leader-elect=false",
        "--max-graceful-termination-sec=25",
    )
    wait_for(lambda: len(running_pods(kubectl, namespace, "web")) == 2, 120, message="2 web pods running")
    kubectl.create(graceful(deployment("extra", namespace, group, replicas=1)))
    wait_for(lambda: len(running_pods(kubectl, namespace, "extra")) == 1, 120, message="the extra pod")
    assert len(group_nodes(kubectl, group)) == 2
    # One web pod goes (its ReplicaSet deletes it: 12 s Terminating), then each node runs one pod at
    # 45% that fits beside the other: CA drains one of them.
    kubectl("-n", namespace, "scale", "deployment", "web", "--replicas=1")
    wait_for(
        lambda: len(kubectl.json("-n", namespace, "get", "pods", "-l", "app=web")["items"]) == 1,
        60,
        message="the web pod the ReplicaSet deleted gone",
    )

    def evicted() -> tuple[str, dict[str, Any]] | None:
        draining = {n["metadata"]["name"] for n in group_nodes(kubectl, group) if tainted(n)}
        for pod in kubectl.json("-n", namespace, "get", "pods")["items"]:
            if pod["metadata"].get("deletionTimestamp") and pod["spec"].get("nodeName") in draining:
                return str(pod["spec"]["nodeName"]), pod
        return None

    drained, pod = wait_for(evicted, 120, message="a pod evicted from a node CA tainted")
    name = pod["metadata"]["name"]
    assert pod["metadata"]["deletionGracePeriodSeconds"] == 25  # min(30, --max-graceful-termination-sec)

    seen: list[str] = []  # what was observed while the evicted pod was still there

    def pod_gone() -> bool:
        present = kubectl.json("-n", namespace, "get", "pod", name, "--ignore-not-found")
        nodes = {n["metadata"]["name"] for n in group_nodes(kubectl, group)}
        if present:
            seen.append(f"node={'kept' if drained in nodes else 'GONE'} target={kwok_target(kubectl, group)}")
            return False
        return True

    wait_for(pod_gone, 60, interval=0.5, message=f"the evicted pod {name} gone")
    assert seen and set(seen) == {"node=kept target=2"}, seen  # no DeleteNodes before the pod went
    wait_for(
        lambda: drained not in {n["metadata"]["name"] for n in group_nodes(kubectl, group)},
        30,
        message="the drained node deleted once its pod was gone",
    )
    assert kwok_target(kubectl, group) == 1

    # Evicted once, though the drain lasted several 2 s loops (CA's evictor; kubetide used to evict the
    # terminating pod again every loop).
    assert ca.log().count(f"evicted pod {namespace}/{name} ") == 1, ca.log()
    assert ca.metric("cluster_autoscaler_evicted_pods_total", eviction_result="succeeded") == 1
    announced = [
        e
        for e in kubectl.json("-n", namespace, "get", "events")["items"]
        if e["involvedObject"].get("name") == name and e["message"] == "deleting pod for node scale down"
    ]
    assert sum(int(e.get("count") or 1) for e in announced) == 1, announced
    assert (ca.metric("cluster_autoscaler_scaled_down_nodes_total", reason="underutilized") or 0) == 1
    assert ca.alive(), ca.log()


def agent(namespace: str, group: str) -> dict[str, Any]:
    """A DaemonSet on the group's nodes whose pods take 40 s to stop once deleted (grace 60 s), with no
    toleration of CA's ToBeDeletedByClusterAutoscaler taint (as most DaemonSets)."""
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": "agent", "namespace": namespace},
        "spec": {
            "selector": {"matchLabels": {"app": "agent"}},
            "template": {
                "metadata": {
                    "labels": {"app": "agent"},
                    "annotations": {"kubetide.io/termination-delay": "40s"},
                },
                "spec": {
                    "nodeSelector": {"pool": group},
                    "terminationGracePeriodSeconds": 60,
                    "containers": [
                        {"name": "a", "image": "agent", "resources": {"requests": {"cpu": "10m"}}}
                    ],
                },
            },
        },
    }


def test_a_drained_nodes_daemonset_pod_is_evicted_not_waited_for_and_not_replaced_there(
    kubectl: Kubectl,
    kubetide: Callable[..., KubetideProcess],
    service_accounts: dict[str, Path],
    wait_for: Callable[..., Any],
    tmp_path: Path,
    group: str,
    namespace: str,
) -> None:
    """--daemonset-eviction-for-occupied-nodes (default true): CA evicts the DaemonSet pod of the node it
    drains (drain.go DrainNode, best-effort) with its grace period, deletes the node once the web pod is
    gone without waiting for the DaemonSet pod, and the real DaemonSet controller creates no pod on the
    node meanwhile (NodeShouldRunDaemonPod: the NoSchedule taint is not tolerated) — what the simulated
    DaemonSet controller models."""
    kubectl.create(agent(namespace, group))
    kubectl.create(graceful(deployment("web", namespace, group, replicas=2)))
    ca = start_ca(kubetide, service_accounts, cloud_config(tmp_path, group), group, "--leader-elect=false")
    wait_for(lambda: len(running_pods(kubectl, namespace, "web")) == 2, 120, message="2 web pods running")
    kubectl.create(graceful(deployment("extra", namespace, group, replicas=1)))
    wait_for(lambda: len(running_pods(kubectl, namespace, "extra")) == 1, 120, message="the extra pod")
    wait_for(
        lambda: len(running_pods(kubectl, namespace, "agent")) == 2, 120, message="an agent pod per node"
    )
    kubectl("-n", namespace, "scale", "deployment", "web", "--replicas=1")

    def agents_on(node: str) -> list[dict[str, Any]]:
        pods = kubectl.json("-n", namespace, "get", "pods", "-l", "app=agent")["items"]
        return [p for p in pods if p["spec"].get("nodeName") == node or _pinned_to(p) == node]

    def evicted_agent() -> tuple[str, dict[str, Any]] | None:
        for n in group_nodes(kubectl, group):
            if tainted(n):
                for p in agents_on(n["metadata"]["name"]):
                    if p["metadata"].get("deletionTimestamp"):
                        return str(n["metadata"]["name"]), p
        return None

    drained, evicted = wait_for(evicted_agent, 180, message="the agent pod of a node CA drains evicted")
    assert evicted["metadata"]["deletionGracePeriodSeconds"] == 60  # its own: under the 600 s cap
    name = evicted["metadata"]["name"]
    seen: list[str] = []

    def node_gone() -> bool:
        if drained in {n["metadata"]["name"] for n in group_nodes(kubectl, group)}:
            seen.append(",".join(sorted(p["metadata"]["name"] for p in agents_on(drained))))
            return False
        return True

    wait_for(node_gone, 60, interval=0.5, message="the drained node deleted")
    assert seen and set(seen) == {name}, seen  # never a second agent pod on the draining node
    # Deleted before the agent pod's 40 s were over: it was not waited for.
    still = kubectl.json("-n", namespace, "get", "pod", name, "--ignore-not-found")
    assert still and still["metadata"].get("deletionTimestamp"), still
    announced = [
        e
        for e in kubectl.json("-n", namespace, "get", "events")["items"]
        if e["involvedObject"].get("name") == name and e["message"] == "deleting pod for node scale down"
    ]
    assert announced
    assert ca.metric("cluster_autoscaler_evicted_pods_total", eviction_result="succeeded") == 1  # web only
    assert ca.alive(), ca.log()


def _pinned_to(pod: dict[str, Any]) -> str | None:
    """The node a DaemonSet pod is made for (its required node affinity on metadata.name)."""
    terms = (
        pod["spec"]
        .get("affinity", {})
        .get("nodeAffinity", {})
        .get("requiredDuringSchedulingIgnoredDuringExecution", {})
    ).get("nodeSelectorTerms", [])
    for term in terms:
        for field in term.get("matchFields", []):
            if field.get("key") == "metadata.name" and field.get("values"):
                return str(field["values"][0])
    return None
