"""``kubetide scenario from-cluster`` against the real control plane, with the kwok provider's config:
the groups and bounds are the provider's (a group with no node included), a Node's scale-down-disabled
annotation is named as dropped, and a bare pod stays on the simulated node standing for its own."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from kubetide.sim.scenario import load_scenario
from kubetide.sim.simulation import Simulation

from .support import Kubectl

KUBETIDE = str(Path(sys.executable).parent / "kubetide")


def kwok_node(group: str, name: str) -> dict[str, Any]:
    """A Node as the kwok provider makes one (the cluster's node agent makes it Ready)."""
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubetide.io/node-group": group, "pool": group}},
        "spec": {"providerID": f"kwok://{group}/{name}"},
        "status": {
            "capacity": {"cpu": "2", "memory": "8Gi", "pods": "110"},
            "allocatable": {"cpu": "2", "memory": "8Gi", "pods": "110"},
        },
    }


def test_groups_bounds_dropped_annotations_and_placement_follow_the_cluster(
    kubectl: Kubectl,
    kubeconfig_path: Path,
    wait_for: Callable[..., Any],
    tmp_path: Path,
    group: str,
    namespace: str,
) -> None:
    spare = f"{group}-spare"
    config = {
        "nodeGroups": [
            {
                "name": name,
                "minSize": 0,
                "maxSize": size,
                "template": {
                    "metadata": {"labels": {"pool": name}},
                    "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "110"}},
                },
            }
            for name, size, cpu in ((group, 4, "2"), (spare, 3, "4"))
        ]
    }
    cloud_config = tmp_path / "cloud.yaml"
    cloud_config.write_text(yaml.safe_dump(config))
    first, second = f"{group}-aaaaa", f"{group}-bbbbb"
    for name in (first, second):
        kubectl.create(kwok_node(group, name))
    kubectl("annotate", "node", second, "cluster-autoscaler.kubernetes.io/scale-down-disabled=true")
    wait_for(
        lambda: all(
            any(c["type"] == "Ready" and c["status"] == "True" for c in kubectl.json("get", "node", n)["status"].get("conditions") or [])
            for n in (first, second)
        ),
        60,
        message="both nodes Ready",
    )  # fmt: skip
    kubectl.create(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "debug", "namespace": namespace},
            "spec": {
                "nodeName": second,
                "containers": [{"name": "c", "image": "busybox", "resources": {"requests": {"cpu": "500m"}}}],
            },
        }
    )
    out = tmp_path / "mine.yaml"
    result = subprocess.run(
        [KUBETIDE, "scenario", "from-cluster", f"--kubeconfig={kubeconfig_path}", "-n", namespace,
         "--cloud-provider=kwok", f"--cloud-config={cloud_config}", "--duration=2m", "-o", str(out)],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    notes = result.stderr

    scenario = load_scenario(out)
    groups = {g.name: g for g in scenario.spec.nodeGroups}
    # The provider's groups and bounds; the group with no node from its template.
    assert (groups[group].minSize, groups[group].maxSize, groups[group].initialSize) == (0, 4, 2)
    assert (groups[spare].minSize, groups[spare].maxSize, groups[spare].initialSize) == (0, 3, 0)
    assert groups[spare].capacity["cpu"].milli == 4000
    assert f"node group {spare}: no node now; its machine is the provider's template" in notes
    assert "assumed" not in notes
    # The annotation the group cannot carry is named, with the node.
    assert (
        f"annotation cluster-autoscaler.kubernetes.io/scale-down-disabled=true dropped from node(s) {second}"
        in notes
    )
    # The bare pod is bound to the simulated node standing for its node (the group's second one).
    document = yaml.safe_load(out.read_text())
    (pod,) = [o for o in document["spec"]["objects"] if o["kind"] == "Pod"]
    assert pod["spec"]["nodeName"] == f"{group}-2"
    simulation = Simulation(scenario)
    simulation.run()
    (debug,) = [p for p in simulation.cluster.pods.values() if p.name == "debug"]
    assert debug.node == f"{group}-2"
