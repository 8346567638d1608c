"""The batch autoscaler (Escalator's loop) against the real control plane, checked with kubectl.

A kwok group of 2-CPU nodes, selected by the Escalator group's ``label_key``/``label_value``; the
workload's pods use a nodeSelector for it. (a) Pods requesting more than the group holds make the
group grow: new Node objects appear and the pods run. (b) When the workload goes, idle nodes get the
removal taint ``atlassian.com/escalator`` and are deleted after the soft grace period. (c) With
tainted nodes present and new load arriving, the tainted nodes are untainted before the group grows.
kubetide runs with the ServiceAccount of deploy/rbac, not as admin.

Shortened timings (Escalator's examples use minutes): ``--scaninterval=2s``,
``scale_up_cool_down_period: 2s``, ``soft_delete_grace_period: 15s`` (long enough to see the taint
and to bring load back while it holds), ``hard_delete_grace_period: 5m``, removal rates slow 1 / fast 2.

Determinism: only outcomes are awaited (node counts, taints, Running pods), never which node the
scheduler picks or the order in which the ReplicaSet controller creates or deletes pods; every pod
requests 900m so two fit a node whatever the placement; the thresholds leave a wide margin around
the utilisation each phase produces (0%, 60%, 90%).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from .support import Kubectl, KubetideProcess

TAINT = "atlassian.com/escalator"
CPU = "900m"


def configs(tmp_path: Path, group: str) -> tuple[Path, Path]:
    cloud = {
        "nodeGroups": [
            {
                "name": group,
                "minSize": 0,
                "maxSize": 6,
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
    node_groups = {
        "node_groups": [
            {
                "name": group,
                "label_key": "pool",
                "label_value": group,
                "cloud_provider_group_name": group,
                "min_nodes": 0,
                "max_nodes": 6,
                "taint_lower_capacity_threshold_percent": 30,
                "taint_upper_capacity_threshold_percent": 45,
                "scale_up_threshold_percent": 70,
                "slow_node_removal_rate": 1,
                "fast_node_removal_rate": 2,
                "soft_delete_grace_period": "15s",
                "hard_delete_grace_period": "5m",
                "scale_up_cool_down_period": "2s",
            }
        ]
    }
    cloud_path, groups_path = tmp_path / "cloud.yaml", tmp_path / "nodegroups.yaml"
    cloud_path.write_text(yaml.safe_dump(cloud))
    groups_path.write_text(yaml.safe_dump(node_groups))
    return cloud_path, groups_path


def deployment(name: str, namespace: str, group: str, replicas: int) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {
                    "nodeSelector": {"pool": group},
                    "terminationGracePeriodSeconds": 1,
                    "containers": [
                        {"name": "main", "image": "batch", "resources": {"requests": {"cpu": CPU}}}
                    ],
                },
            },
        },
    }


@pytest.fixture
def group(kubectl: Kubectl) -> Iterator[str]:
    """A kwok group of its own; its nodes are deleted afterwards, whatever the test left."""
    name = f"esc-{uuid.uuid4().hex[:5]}"
    yield name
    kubectl("delete", "nodes", "-l", f"kubetide.io/node-group={name}", "--wait=false")


@pytest.fixture
def namespace(kubectl: Kubectl) -> Iterator[str]:
    name = f"esc-{uuid.uuid4().hex[:6]}"
    kubectl("create", "namespace", name)
    yield name
    kubectl("delete", "namespace", name, "--wait=false")


def nodes(kubectl: Kubectl, group: str) -> list[dict[str, Any]]:
    return list(kubectl.json("get", "nodes", "-l", f"kubetide.io/node-group={group}")["items"])


def tainted(node: dict[str, Any]) -> bool:
    return any(t["key"] == TAINT for t in node["spec"].get("taints") or [])


def running(kubectl: Kubectl, namespace: str, app: str) -> int:
    pods = kubectl.json("-n", namespace, "get", "pods", "-l", f"app={app}")["items"]
    return sum(
        1
        for p in pods
        if p["status"].get("phase") == "Running" and not p["metadata"].get("deletionTimestamp")
    )


def test_scale_up_taint_delete_and_untaint_before_growing(
    kubectl: Kubectl,
    kubetide: Callable[..., KubetideProcess],
    service_accounts: dict[str, Path],
    wait_for: Callable[..., Any],
    tmp_path: Path,
    group: str,
    namespace: str,
) -> None:
    cloud, node_groups = configs(tmp_path, group)
    esc = kubetide(
        "escalator",
        f"--nodegroups={node_groups}",
        "--cloud-provider=kwok",
        f"--cloud-config={cloud}",
        "--scaninterval=2s",
        "--leader-elect-config-namespace=kubetide",
        "--loglevel=5",
        kubeconfig=service_accounts["escalator"],
    )

    # (a) 4 x 900m = 3600m against an empty group: the group grows until the requests
    # are under 70% of its capacity (3 nodes, 60%), and every pod runs.
    kubectl.create(deployment("work", namespace, group, replicas=4))
    wait_for(lambda: running(kubectl, namespace, "work") == 4, 120, message="4 work pods running")
    grown = nodes(kubectl, group)
    assert len(grown) >= 2, [n["metadata"]["name"] for n in grown]
    assert all(n["spec"]["providerID"].startswith(f"kwok://{group}/") for n in grown)
    assert not any(tainted(n) for n in grown)
    assert (esc.metric("escalator_run_count") or 0) >= 1
    wait_for(
        lambda: esc.metric("escalator_node_group_pods", node_group=group) == 4,
        10,
        message="escalator_node_group_pods shows the 4 pods",
    )

    # (b) The workload goes: idle nodes get the removal taint, then are deleted once the soft grace
    # period has passed with nothing on them (min_nodes 0: Escalator never scales up to a minimum, it
    # only refuses to run below it, so the group starts and ends empty).
    kubectl("-n", namespace, "delete", "deployment", "work")
    wait_for(lambda: any(tainted(n) for n in nodes(kubectl, group)), 60, message="a node tainted")
    wait_for(lambda: not nodes(kubectl, group), 90, message="idle tainted nodes deleted")

    # (c) Grow again, let the idle nodes be tainted, then bring more load than every node of the group
    # holds (6 x 900m = 5400m against 3 nodes, 90%): the tainted nodes are untainted first (they are
    # kept, not replaced) and only then does the group grow.
    kubectl.create(deployment("again", namespace, group, replicas=4))
    wait_for(lambda: running(kubectl, namespace, "again") == 4, 120, message="4 'again' pods running")
    kubectl("-n", namespace, "delete", "deployment", "again")

    def some_tainted() -> set[str] | None:
        names = {n["metadata"]["name"] for n in nodes(kubectl, group) if tainted(n)}
        return names or None

    marked = wait_for(some_tainted, 60, message="idle nodes tainted again")
    kubectl.create(deployment("burst", namespace, group, replicas=6))
    wait_for(lambda: running(kubectl, namespace, "burst") == 6, 120, message="6 burst pods running")
    # 5400m is 90% of three nodes: the group grows whether or not the scheduler has already packed
    # the six pods onto them (two fit each), so the growth is awaited, not assumed.
    final = wait_for(
        lambda: (
            {n["metadata"]["name"]: n for n in nodes(kubectl, group)}
            if len(nodes(kubectl, group)) >= 4
            else None
        ),
        60,
        message="the group grown to 4 nodes",
    )
    assert marked <= set(final), f"tainted nodes {marked} were replaced, not untainted: {sorted(final)}"
    assert not any(tainted(n) for n in final.values())
    lines = esc.log().splitlines()
    untaints = [i for i, line in enumerate(lines) if f"nodegroup={group} untaint" in line]
    increases = [i for i, line in enumerate(lines) if f"nodegroup={group} increase" in line]
    assert untaints and increases
    last_taint = max(i for i, line in enumerate(lines) if f"nodegroup={group} taint" in line)
    growth_after = [i for i in increases if i > last_taint]
    assert growth_after and min(untaints) < min(growth_after), "\n".join(lines[last_taint:])
    status, body = esc.get("/health-check")
    assert status == 200, body
    assert esc.alive()
