"""A cluster autoscaler restarted in the middle of a scale-up and of a drain: nothing repeated, nothing
forgotten. The kwok provider keeps targets and creations in flight in its state ConfigMap; a drain in
progress is the ToBeDeletedByClusterAutoscaler taint on the node.
"""

from __future__ import annotations

import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .support import Kubectl, KubetideProcess
from .test_cluster_autoscaler import (
    cloud_config,
    deployment,
    group_nodes,
    kwok_target,
    running_pods,
    start_ca,
)

TO_BE_DELETED = "ToBeDeletedByClusterAutoscaler"


def loops(ca: KubetideProcess) -> float:
    return ca.metric("cluster_autoscaler_last_activity", activity="main") or 0


def more_loops(ca: KubetideProcess, wait_for: Callable[..., Any], n: int = 3) -> None:
    first = loops(ca)
    wait_for(lambda: loops(ca) >= first + 2 * n, 30, message=f"{n} more loops")


def taint_value(node: dict[str, Any]) -> str | None:
    """The ToBeDeleted taint's value: the unix time the drain started."""
    return next((t.get("value") for t in node["spec"].get("taints") or [] if t["key"] == TO_BE_DELETED), None)


def tainted(node: dict[str, Any]) -> bool:
    return taint_value(node) is not None


def test_restart_during_a_scale_up(
    kubectl: Kubectl,
    kubetide: Callable[..., KubetideProcess],
    service_accounts: dict[str, Path],
    wait_for: Callable[..., Any],
    tmp_path: Path,
    group: str,
    namespace: str,
) -> None:
    config = cloud_config(tmp_path, group, provisioning_delay="15s")
    first = start_ca(kubetide, service_accounts, config, group, "--leader-elect=false")
    # Two pods of 1500m: one node each, two nodes asked for at once.
    kubectl.create(deployment("web", namespace, group, replicas=2, cpu="1500m"))
    wait_for(lambda: kwok_target(kubectl, group) == 2, 60, interval=0.2, message="the scale-up asked")
    assert first.stop(signal.SIGTERM) == 0
    assert group_nodes(kubectl, group) == [], "the nodes came before the restart: lengthen the delay"

    second = start_ca(kubetide, service_accounts, config, group, "--leader-elect=false")
    wait_for(lambda: len(running_pods(kubectl, namespace, "web")) == 2, 120, message="2 web pods running")
    assert len(group_nodes(kubectl, group)) == 2
    assert kwok_target(kubectl, group) == 2
    more_loops(second, wait_for)
    assert len(group_nodes(kubectl, group)) == 2
    assert kwok_target(kubectl, group) == 2
    assert not second.metric("cluster_autoscaler_scaled_up_nodes_total"), "the second CA scaled up again"


def test_restart_during_a_drain(
    kubectl: Kubectl,
    kubetide: Callable[..., KubetideProcess],
    service_accounts: dict[str, Path],
    wait_for: Callable[..., Any],
    tmp_path: Path,
    group: str,
    namespace: str,
) -> None:
    config = cloud_config(tmp_path, group)
    first = start_ca(kubetide, service_accounts, config, group, "--leader-elect=false")

    # Two db pods of 300m: one node (the only one), both there.
    kubectl.create(deployment("db", namespace, group, replicas=2, cpu="300m"))
    wait_for(lambda: len(running_pods(kubectl, namespace, "db")) == 2, 120, message="2 db pods running")
    (drained,) = (n["metadata"]["name"] for n in group_nodes(kubectl, group))
    # An anchor of 1500m does not fit beside them: a second node, kept with scale-down-disabled.
    kubectl.create(deployment("anchor", namespace, group, replicas=1, cpu="1500m"))
    wait_for(lambda: len(running_pods(kubectl, namespace, "anchor")) == 1, 120, message="the anchor running")
    (kept,) = {n["metadata"]["name"] for n in group_nodes(kubectl, group)} - {drained}
    kubectl("annotate", "node", kept, "cluster-autoscaler.kubernetes.io/scale-down-disabled=true")

    # The PDB covers exactly the two db pods there now (a label their replacements lack): one
    # disruption allowed, so CA starts draining; after the first eviction none, so the second waits.
    held = [p["metadata"]["name"] for p in running_pods(kubectl, namespace, "db")]
    kubectl("-n", namespace, "label", "pod", *held, "hold=yes")
    kubectl.create(
        {
            "apiVersion": "policy/v1beta1",
            "kind": "PodDisruptionBudget",
            "metadata": {"name": "hold", "namespace": namespace},
            "spec": {"minAvailable": 1, "selector": {"matchLabels": {"hold": "yes"}}},
        }
    )
    wait_for(
        lambda: kubectl.json("-n", namespace, "get", "pdb", "hold")["status"].get("disruptionsAllowed") == 1,
        60,
        message="the PDB allowing one disruption",
    )
    # Without the anchor, the db pods fit on the kept node: the first node is unneeded, then drained.
    kubectl("-n", namespace, "delete", "deployment", "anchor")

    def half_drained() -> bool:
        node = kubectl.json("get", "node", drained)
        left = [
            p
            for p in kubectl.json("-n", namespace, "get", "pods", "-l", "hold=yes")["items"]
            if not p["metadata"].get("deletionTimestamp")
        ]
        return tainted(node) and len(left) == 1

    wait_for(half_drained, 90, message="the drain under way: tainted, one held pod evicted, one refused")
    (still_held,) = (
        p["metadata"]["name"]
        for p in kubectl.json("-n", namespace, "get", "pods", "-l", "hold=yes")["items"]
        if not p["metadata"].get("deletionTimestamp")
    )
    assert first.stop(signal.SIGTERM) == 0
    started = taint_value(kubectl.json("get", "node", drained))
    assert started is not None, "the drain's taint went with the first CA"

    # The second CA would need 10 minutes of unneeded time to decide this drain afresh: a deletion
    # within the next two minutes, under the first CA's taint, is the first CA's drain carried on.
    second = start_ca(
        kubetide, service_accounts, config, group, "--leader-elect=false", "--scale-down-unneeded-time=10m"
    )
    wait_for(lambda: loops(second), 60, message="the second CA's first loop")
    kubectl("-n", namespace, "patch", "pdb", "hold", "--type=merge", "-p", '{"spec":{"minAvailable":0}}')

    seen: set[str | None] = set()  # the drained node's ToBeDeleted taint values until it goes

    def drained_node_gone() -> bool:
        nodes = {n["metadata"]["name"]: n for n in group_nodes(kubectl, group)}
        if drained in nodes:
            seen.add(taint_value(nodes[drained]))
        return set(nodes) == {kept}

    wait_for(drained_node_gone, 120, message="the drained node deleted, the kept one left")
    assert seen <= {started}, f"the drain was restarted, not continued: taints {seen}, first {started}"
    wait_for(
        lambda: (
            len(running_pods(kubectl, namespace, "db")) == 2
            and all(p["spec"]["nodeName"] == kept for p in running_pods(kubectl, namespace, "db"))
        ),
        90,
        message="both db pods running on the kept node",
    )
    assert still_held not in {p["metadata"]["name"] for p in running_pods(kubectl, namespace, "db")}
    more_loops(second, wait_for)
    (node,) = group_nodes(kubectl, group)
    assert node["metadata"]["name"] == kept and not tainted(node)
    assert kwok_target(kubectl, group) == 1
    assert (second.metric("cluster_autoscaler_scaled_down_nodes_total") or 0) <= 1
