"""`kubetide explain --cluster`: a running cluster autoscaler asked why, on the real control plane.

The live CA (kwok provider, its ServiceAccount) has two groups a pending pod fits: a small one and a
large one; least-waste picks the small one. The pod's node comes, the pod goes, and the node is
deleted as empty. `kubetide explain --cluster` then reads the CA's /debug/plan and says why the large
group was not chosen (the expander's rating), why the small one was (its new size, the pod that
triggered it), and why the node was deleted (empty, unneeded since when, deleted at); the CA's log
has each loop's plan at -v=4.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from .support import Kubectl, KubetideProcess
from .test_cluster_autoscaler import FAST, deployment, group_nodes, running_pods

KUBETIDE = str(Path(sys.executable).parent / "kubetide")


def kwok_group(name: str, pool: str, cpu: str) -> dict[str, Any]:
    shape = {"cpu": cpu, "memory": "8Gi", "pods": "110"}
    return {
        "name": name,
        "minSize": 0,
        "maxSize": 3,
        "provisioningDelay": "0s",
        "template": {
            "metadata": {"labels": {"pool": pool}},
            "status": {"allocatable": shape, "capacity": shape},
        },
    }


@pytest.fixture
def large(kubectl: Kubectl, group: str) -> Iterator[str]:
    """The large group beside ``group`` (its nodes deleted afterwards, should it have any)."""
    name = f"{group}-large"
    yield name
    kubectl("delete", "nodes", "-l", f"kubetide.io/node-group={name}", "--wait=false")


def explain(ca: KubetideProcess, *args: str) -> str:
    done = subprocess.run(
        [KUBETIDE, "explain", "--cluster", f"--address=http://127.0.0.1:{ca.port}", *args],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_explain_cluster_says_why_a_group_was_chosen_why_not_another_and_why_a_node_went(
    kubectl: Kubectl,
    kubetide: Callable[..., KubetideProcess],
    service_accounts: dict[str, Path],
    wait_for: Callable[..., Any],
    tmp_path: Path,
    group: str,
    large: str,
    namespace: str,
) -> None:
    config = tmp_path / "cloud.yaml"
    config.write_text(
        yaml.safe_dump({"nodeGroups": [kwok_group(group, group, "2"), kwok_group(large, group, "8")]})
    )
    ca = kubetide(
        "cluster-autoscaler",
        "--cloud-provider=kwok",
        f"--cloud-config={config}",
        f"--nodes=0:3:{group}",
        f"--nodes=0:3:{large}",
        "--expander=least-waste",
        "--leader-elect=false",
        *FAST,
        kubeconfig=service_accounts["cluster-autoscaler"],
    )
    # One pod of 900m: either group's node takes it; least-waste keeps the 2-CPU one.
    kubectl.create(deployment("web", namespace, group, replicas=1))
    wait_for(lambda: len(running_pods(kubectl, namespace, "web")) == 1, 120, message="the web pod running")
    (node,) = [n["metadata"]["name"] for n in group_nodes(kubectl, group)]
    assert group_nodes(kubectl, large) == []

    pod = f"{namespace}/{running_pods(kubectl, namespace, 'web')[0]['metadata']['name']}"
    doc = json.loads(explain(ca, "--group", large, "--group", group, "--json"))
    scale_up = doc["lastScaleUp"] or doc["latest"]  # the loop that scaled up may still be the last one
    assert scale_up["scaleUp"]["chosen"] == [{"group": group, "from": 0, "to": 1}]
    assert [p["pod"] for p in scale_up["pods"]] == [pod]
    why_not = doc["groups"][large][-1]
    assert why_not["loopTime"] == scale_up["loopTime"] and why_not["chosen"] is None
    assert [(s["filter"], s["kept"]) for s in why_not["expander"]] == [("least-waste", False)]
    assert why_not["expander"][0]["rating"].startswith("waste ")
    text = explain(ca, "--group", group)
    assert f"Group {group} in the loop at " in text and "  chosen: 0 -> 1" in text
    assert f"  pod {pod} triggered the scale-up" in text

    # The pod goes: the node is empty, unneeded for --scale-down-unneeded-time, deleted.
    kubectl("-n", namespace, "scale", "deployment", "web", "--replicas=0")
    wait_for(lambda: group_nodes(kubectl, group) == [], 120, message=f"{node} deleted")

    def deleted() -> str | None:
        answer = explain(ca, "--node", node)
        return answer if "    deleted at " in answer else None

    answer = wait_for(deleted, 30, message="the deletion's end recorded")
    assert f"  {node} (group {group}): scale-down chose it in the loop at " in answer
    assert ": empty, unneeded since " in answer
    code, body = ca.get(f"/debug/plan?node={node}")
    assert code == 200
    (record,) = json.loads(body)["deletions"]
    assert (record["group"], record["empty"], record["reason"]) == (group, True, "empty")
    assert record["deletedAt"] >= record["decidedAt"] >= record["unneededSince"]

    # Each loop's plan at -v=4: one block per loop, the scale-up's choice and the deletion in it.
    log = ca.log()
    assert f"  scale-up for 1 pod: Successful; expander least-waste kept {group}; chosen {group} 0->1" in log
    assert f"delete {node} ({group}, empty)" in log
