"""CA's world from the caches: PDB selector semantics per policy version, controllers, rebuild on change."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from kubetide.cluster.loop.start import _pods_by_node
from kubetide.kube.discovery import ServedVersions
from kubetide.live.cluster_autoscaler.world import CAWorldSource, pdb_from_manifest, pod_view
from kubetide.model.pod import Pod
from kubetide.testing.apiserver import FakeApi, obj


def _pdb(selector: Any, allowed: int = 1) -> dict[str, Any]:
    spec = {} if selector is None else {"selector": selector}
    return obj("pdb", "1", "web", spec=spec, status={"disruptionsAllowed": allowed})


POD = Pod("p", "web", labels={"app": "web"})


def test_empty_pdb_selector_matches_nothing_in_v1beta1_and_everything_in_v1() -> None:
    assert not pdb_from_manifest(_pdb({}), empty_selector_matches_all=False).covers(POD)
    assert pdb_from_manifest(_pdb({}), empty_selector_matches_all=True).covers(POD)
    for matches_all in (False, True):
        assert not pdb_from_manifest(_pdb(None), empty_selector_matches_all=matches_all).covers(POD)
        pdb = pdb_from_manifest(
            _pdb({"matchLabels": {"app": "web"}}, 2), empty_selector_matches_all=matches_all
        )
        assert pdb.covers(POD) and pdb.disruptions_allowed == 2


def _add(informer: Any, manifest: dict[str, Any]) -> None:
    informer._apply({"type": "ADDED", "object": manifest}, "1")


def test_world_holds_every_part_and_is_rebuilt_only_on_change() -> None:
    source = CAWorldSource(FakeApi().rest(), ServedVersions("v2beta2", "v1beta1"), namespace="kube-system")
    assert source.pods._params["fieldSelector"] == "status.phase!=Succeeded,status.phase!=Failed"
    _add(source.nodes, obj("n1", "1", status={"capacity": {"cpu": "2"}}))
    pending = obj(
        "p1",
        "2",
        "web",
        spec={"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]},
        status={
            "phase": "Pending",
            "conditions": [
                {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": "0/1 nodes"}
            ],
        },
    )
    _add(source.pods, pending)
    _add(source.pdbs, _pdb({}))
    _add(source.config_maps, obj("cluster-autoscaler-status", "3", "kube-system", data={"status": "x"}))
    _add(source.controllers[0], obj("rs", "4", "web", spec={"replicas": 3}))
    _add(source.controllers[3], obj("job", "5", "web", spec={"parallelism": 2}))
    world = source.world()
    assert [n.name for n in world.nodes] == ["n1"]
    assert world.pods[0].unschedulable_message == "0/1 nodes"
    assert not world.pdbs[0].covers(world.pods[0])  # v1beta1: the empty selector selects nothing
    assert world.config_maps == {"kube-system/cluster-autoscaler-status": {"status": "x"}}
    assert world.controllers == {("ReplicaSet", "web", "rs"): 3, ("Job", "web", "job"): 2}
    assert source.world() is world
    source.nodes._apply({"type": "DELETED", "object": obj("n1", "6")}, "5")
    assert source.world().nodes == []


def _pod_manifest(name: str, cpu: str) -> dict[str, Any]:
    container = {"name": "app", "image": "x", "resources": {"requests": {"cpu": cpu, "memory": "64Mi"}}}
    return obj(name, "1", namespace="web", spec={"containers": [container]})


def test_pod_views_with_equal_requests_share_one_requests_object() -> None:
    """A loop groups pods by their request's identity first (30,000 pods, a few hundred distinct
    requests), so the cache hands out one object per distinct value, with its hash computed."""
    a, b, c = (pod_view(_pod_manifest(n, cpu)) for n, cpu in (("a", "250m"), ("b", "250m"), ("c", "1")))
    assert a.requests is b.requests
    assert a.requests == b.requests and a.requests["cpu"] == 250
    assert c.requests is not a.requests and c.requests["cpu"] == 1000


def test_a_daemonset_becomes_its_replicas_and_a_pod_from_its_template() -> None:
    from kubetide.live.cluster_autoscaler.world import daemonset_view

    manifest = {
        "metadata": {"name": "agent", "namespace": "kube-system", "uid": "u-1"},
        "spec": {
            "template": {
                "metadata": {"labels": {"app": "agent"}},
                "spec": {
                    "containers": [
                        {"name": "a", "resources": {"requests": {"cpu": "250m", "memory": "64Mi"}}}
                    ],
                    "tolerations": [{"operator": "Exists"}],
                },
            }
        },
        "status": {"desiredNumberScheduled": 0},
    }
    key, replicas, pod = daemonset_view(manifest)
    assert key == ("DaemonSet", "kube-system", "agent") and replicas == 0
    assert pod is not None and pod.requests["cpu"] == 250 and pod.labels == {"app": "agent"}
    assert pod.controller is not None and (pod.controller.kind, pod.controller.uid) == ("DaemonSet", "u-1")
    bad = {**manifest, "spec": {"template": {"spec": {"containers": "nope"}}}}
    assert daemonset_view(bad)[2] is None  # a template that is no pod: counted, no exemplar


def test_the_caches_the_loop_reads_that_are_not_synced_are_named() -> None:
    source = CAWorldSource(FakeApi().rest(), ServedVersions("v2beta2", "v1beta1"), namespace="kube-system")
    names = [informer.name for informer in source.informers]
    assert source.unsynced() == names  # nothing listed yet: every cache
    for informer in source.informers:
        informer._synced.set()
    assert source.unsynced() == []
    source.pdbs._synced.clear()  # its watch failed: unsynced until it lists again
    assert source.unsynced() == ["poddisruptionbudgets"]


def test_world_indexes_equal_the_loops_own_buckets_through_changes() -> None:
    """The pods by node and the unbound pods the source keeps are what the loop's walk over the pod
    list gives (kubetide.cluster.loop.start._pods_by_node), after every change."""
    source = CAWorldSource(FakeApi().rest(), ServedVersions())
    for n in ("n1", "n2"):
        _add(source.nodes, obj(n, "1", status={"capacity": {"cpu": "8"}}))

    def pod(name: str, rv: int, node: str = "", phase: str = "Running") -> dict[str, Any]:
        spec: dict[str, Any] = {"containers": [{"name": "c"}], **({"nodeName": node} if node else {})}
        return obj(name, str(rv), "web", spec=spec, status={"phase": phase})

    steps: list[tuple[str, dict[str, Any]]] = [
        ("ADDED", pod("a", 2, "n1")),
        ("ADDED", pod("b", 3)),
        ("ADDED", pod("c", 4, "n2")),
        ("ADDED", pod("d", 5, "n1", "Succeeded")),
        ("ADDED", pod("e", 6, "gone")),
        ("MODIFIED", pod("b", 7, "n1")),  # bound: leaves the unbound pods, lands before "d" on n1
        ("ADDED", pod("f", 8)),
        ("DELETED", pod("a", 9, "n1")),
        ("ADDED", pod("a", 10, "n2")),  # added again: now last
        ("MODIFIED", pod("c", 11, "n2", "Failed")),
    ]
    for kind, manifest in steps:
        source.pods._apply({"type": kind, "object": manifest}, "1")
        world = source.world()
        names = [n.name for n in world.nodes]
        plain = replace(world, pods_by_node=None, unbound_pods=None)
        expected, walked = _pods_by_node(plain, names)
        assert world.pods_by_node is not None and world.unbound_pods is not None
        assert {n: list(world.pods_by_node.get(n, ())) for n in names} == {
            n: list(p) for n, p in expected.items()
        }
        assert list(world.unbound_pods) == list(walked.unbound_pods or ())
    by_node, unbound = world.pods_by_node, world.unbound_pods
    assert by_node is not None and unbound is not None
    assert [p.name for p in by_node["n1"]] == ["b"]
    assert [p.name for p in unbound] == ["f"]
