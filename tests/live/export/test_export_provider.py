"""``scenario from-cluster`` with kubetide's provider configuration: the groups, bounds and each node's
group are the provider's (groups with no node included, from its template); what a node carries that
its group cannot is named in a note; a bare pod bound to a node stays bound to the simulated node that
stands for it."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from kubetide.live.export import ClusterObjects, ExportOptions, build_scenario
from kubetide.live.export.provider import provider_groups
from kubetide.live.providers.kwok import KwokCloudProvider, parse_cloud_config
from kubetide.sim.cloud.instances import node_name
from kubetide.sim.scenario import BUILTIN_CATALOG, parse_scenario
from kubetide.sim.simulation import Simulation
from kubetide.testing.kwok_api import FakeKwokApi

from .export_fixtures import node

CLOUD = {
    "nodeGroups": [
        {
            "name": "general",
            "minSize": 1,
            "maxSize": 4,
            "template": {
                "metadata": {"labels": {"pool": "general"}},
                "status": {"allocatable": {"cpu": "2", "memory": "8Gi", "pods": "110"}},
            },
        },
        {
            "name": "gpu",
            "minSize": 0,
            "maxSize": 3,
            "template": {
                "metadata": {"labels": {"pool": "gpu"}},
                "spec": {"taints": [{"key": "gpu", "value": "yes", "effect": "NoSchedule"}]},
                "status": {"capacity": {"cpu": "8", "memory": "32Gi", "pods": "110", "nvidia.com/gpu": "1"}},
            },
        },
    ]
}


def kwok_node(name: str, group: str, **extra: Any) -> dict[str, Any]:
    manifest = node(name, {"kubetide.io/node-group": group, "pool": group})
    manifest["spec"]["providerID"] = f"kwok://{group}/{name}"
    manifest["metadata"].update(extra)
    return manifest


def nodes() -> list[dict[str, Any]]:
    kept = kwok_node(
        "general-b",
        "general",
        annotations={
            "cluster-autoscaler.kubernetes.io/scale-down-disabled": "true",
            "node.alpha.kubernetes.io/ttl": "0",
        },
    )
    return [kwok_node("general-a", "general"), kept, node("bastion", {"role": "bastion"})]


def bare_pod(name: str, on: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "nodeName": on,
            "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "500m"}}}],
        },
        "status": {"phase": "Running"},
    }


def export(pods: list[dict[str, Any]]) -> Any:
    cluster = ClusterObjects(nodes=nodes(), pods=pods)
    provider = KwokCloudProvider(FakeKwokApi(), parse_cloud_config(CLOUD))
    options = ExportOptions(
        name="kwok",
        duration="2m",
        catalog=frozenset(BUILTIN_CATALOG),
        provider=provider_groups(provider, cluster.nodes),
        initial_node_name=node_name,
    )
    return build_scenario(cluster, options)


def test_groups_and_bounds_come_from_the_provider_with_empty_groups_from_its_template() -> None:
    result = export([])
    groups = {g["name"]: g for g in result.document["spec"]["nodeGroups"]}
    assert set(groups) == {"general", "gpu", "nodes"}
    general, gpu, bastion = groups["general"], groups["gpu"], groups["nodes"]
    assert (general["minSize"], general["maxSize"], general["initialSize"]) == (1, 4, 2)
    # No node of gpu: its machine is the kwok template, as CA scales it from zero.
    assert (gpu["minSize"], gpu["maxSize"], gpu["initialSize"]) == (0, 3, 0)
    assert gpu["capacity"] == {"cpu": "8", "memory": str(32 * 2**30), "nvidia.com/gpu": "1", "pods": "110"}
    assert gpu["labels"] == {"pool": "gpu"} and gpu["taints"] == [
        {"key": "gpu", "effect": "NoSchedule", "value": "yes"}
    ]
    # A node of no group of the provider: kept, fixed at its size.
    assert (bastion["minSize"], bastion["maxSize"], bastion["initialSize"]) == (1, 1, 1)
    notes = "\n".join(result.notes)
    assert "node group gpu: no node now; its machine is the provider's template" in notes
    assert "(bastion), kept at that size" in notes
    assert "assumed" not in notes  # no bounds are guessed: the provider has them all
    parse_scenario(result.document)  # it loads


def test_what_a_node_carries_and_its_group_cannot_is_named() -> None:
    notes = "\n".join(export([]).notes)
    assert (
        "node group general: annotation cluster-autoscaler.kubernetes.io/scale-down-disabled=true dropped "
        "from node(s) general-b: a node group's nodes are all alike; CA never removes such a node; the "
        "simulated one may be removed"
    ) in notes
    assert "node.alpha.kubernetes.io/ttl" not in notes  # the control plane's bookkeeping


def test_a_bare_pod_stays_on_the_node_standing_for_its_own() -> None:
    result = export([bare_pod("debug", "general-b"), bare_pod("stray", "gone-node")])
    pods = {o["metadata"]["name"]: o for o in result.document["spec"]["objects"] if o["kind"] == "Pod"}
    # general-a and general-b are the first two nodes of the group: general-1 and general-2.
    assert pods["debug"]["spec"]["nodeName"] == node_name("general", 2)
    assert "nodeName" not in pods["stray"]["spec"]
    assert "Pod/default/stray: its node gone-node is not simulated" in "\n".join(result.notes)
    simulation = Simulation(parse_scenario(result.document))
    simulation.run()
    (debug,) = [p for p in simulation.cluster.pods.values() if p.name == "debug"]
    assert debug.node == "general-2"


def owned_pod(name: str, on: str, owner_kind: str, owner: str, **labels: str) -> dict[str, Any]:
    pod = bare_pod(name, on)
    pod["metadata"]["ownerReferences"] = [{"kind": owner_kind, "name": owner, "controller": True}]
    pod["metadata"]["labels"] = labels
    return pod


def workload(kind: str, name: str, **spec: Any) -> dict[str, Any]:
    template = {
        "metadata": {"labels": {"app": name}},
        "spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "500m"}}}]},
    }
    if kind == "Job":
        template["spec"]["restartPolicy"] = "Never"
        body: dict[str, Any] = {"template": template, **spec}
    else:
        body = {"selector": {"matchLabels": {"app": name}}, "template": template, **spec}
    version = "batch/v1" if kind == "Job" else "apps/v1"
    return {
        "apiVersion": version,
        "kind": kind,
        "metadata": {"name": name, "namespace": "default"},
        "spec": body,
    }


def test_a_workloads_pods_start_on_the_nodes_standing_for_theirs() -> None:
    # Upstream CA reads the cluster as it is; a replay that let the simulated scheduler repack the
    # workloads' pods would start from a cluster that never was (issue 23: placement follows the cluster's).
    pods = [
        owned_pod("web-7d9f-a", "general-b", "ReplicaSet", "web-7d9f", **{"pod-template-hash": "7d9f"}),
        owned_pod("web-7d9f-b", "general-b", "ReplicaSet", "web-7d9f", **{"pod-template-hash": "7d9f"}),
        owned_pod("web-7d9f-c", "general-b", "ReplicaSet", "web-7d9f", **{"pod-template-hash": "7d9f"}),
        owned_pod("web-7d9f-d", "gone-node", "ReplicaSet", "web-7d9f", **{"pod-template-hash": "7d9f"}),
        owned_pod("db-0", "general-b", "StatefulSet", "db"),
        owned_pod("batch-x", "general-a", "Job", "batch"),
        owned_pod("orphan-rs-1", "general-a", "ReplicaSet", "orphan-rs"),  # no pod-template-hash
    ]
    job = workload("Job", "batch", parallelism=1, completions=3)
    job["metadata"]["annotations"] = {"kubetide.io/duration": "10m"}
    cluster = ClusterObjects(
        nodes=nodes(),
        pods=pods,
        deployments=[workload("Deployment", "web", replicas=4)],
        statefulsets=[workload("StatefulSet", "db", replicas=1)],
        jobs=[job],
    )
    provider = KwokCloudProvider(FakeKwokApi(), parse_cloud_config(CLOUD))
    options = ExportOptions(
        name="kwok",
        duration="2m",
        catalog=frozenset(BUILTIN_CATALOG),
        provider=provider_groups(provider, cluster.nodes),
        initial_node_name=node_name,
    )
    result = build_scenario(cluster, options)
    objects = {o["metadata"]["name"]: o for o in result.document["spec"]["objects"]}
    a, b = node_name("general", 1), node_name("general", 2)

    def placement(name: str) -> Any:
        return json.loads(objects[name]["metadata"]["annotations"]["kubetide.io/placement"])

    assert placement("web") == {b: 3}  # the simulated scheduler would have spread them
    assert placement("db") == {b: 1} and placement("batch") == {a: 1}
    assert "1 pod(s) of workloads run on nodes that are not simulated" in "\n".join(result.notes)
    simulation = Simulation(parse_scenario(result.document))
    simulation.run()
    on: dict[str, list[str]] = {}
    for pod in simulation.cluster.pods.values():
        if pod.owner is not None and pod.node is not None:
            on.setdefault(pod.owner, []).append(pod.node)
    # general-b is full with web's three and db's one (4 x 500m of 2 CPUs): the fourth goes elsewhere.
    web = Counter(on["Deployment/default/web"])
    assert web[b] == 3 and web.total() == 4
    assert on["StatefulSet/default/db"] == [b]
    assert on["Job/default/batch"] == [a]  # its pod runs 10m: still the first one
