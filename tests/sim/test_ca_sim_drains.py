"""Drains in the simulator: an evicted pod terminates on its node for its grace period, and CA deletes the
node only once it is gone (drain.go ``waitPodsToDisappear``), evicting each pod once; expendable pods are
not evicted and go with the node (issue 23 items 2, 3 and 10)."""

from __future__ import annotations

from typing import Any

from scenario_builders import deployment, doc, load

from kubetide.model.pod import Pod
from kubetide.sim.simulation import Simulation


def _sim(grace: int | None = None, *, extra: list[dict[str, Any]] | None = None, **flags: Any) -> Simulation:
    """Two nodes, one web pod each; CA removes one (its pod moves to the other)."""
    web = deployment(replicas=2)
    if grace is not None:
        web["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] = grace
    group = {"name": "general", "instanceType": "m5.large", "minSize": 1, "maxSize": 5, "initialSize": 2}
    scenario = doc(
        duration="20m",
        nodeGroups=[group],
        objects=[web, *(extra or [])],
        traffic=[],
        autoscalers={
            "clusterAutoscaler": {
                "enabled": True,
                "flags": {"scan-interval": "10s", "scale-down-unneeded-time": "1m", **flags},
            }
        },
    )
    return Simulation(load(scenario))


def _evictions(sim: Simulation) -> list[tuple[float, str, int | None]]:
    """Every eviction CA asks for: (time, pod, grace period)."""
    assert sim.ca is not None
    port = sim.ca.port
    real = port.evict
    asked: list[tuple[float, str, int | None]] = []

    def evict(pod: Pod, grace_period_s: int | None = None) -> Any:
        asked.append((sim.engine.now, pod.name, grace_period_s))
        return real(pod, grace_period_s)

    port.evict = evict  # type: ignore[method-assign]
    return asked


def _ca(sim: Simulation, message: str) -> list[Any]:
    return [e for e in sim.events.events if e.source == "cluster-autoscaler" and e.message == message]


def test_the_node_stays_until_its_evicted_pod_has_terminated() -> None:
    sim = _sim(grace=120)
    asked = _evictions(sim)
    sim.run_until(100.0)
    ((evicted_at, name, grace),) = asked
    assert grace == 120  # min(terminationGracePeriodSeconds, --max-graceful-termination-sec 600)
    (marked,) = _ca(sim, "marked the node as toBeDeleted/unschedulable")
    node = marked.data["node"]
    assert evicted_at == marked.t + 5.0  # --node-delete-delay-after-taint
    sim.engine.run(evicted_at + 119.0)
    pod = sim.cluster.pods[f"default/{name}"]
    assert pod.terminating_until == evicted_at + 120 and pod.node == node and node in sim.cluster.nodes
    assert not _ca(sim, "nodes removed by cluster autoscaler")
    replacement = [p for p in sim.cluster.workloads["Deployment/default/web"].pods.values() if p is not pod]
    assert len(replacement) == 2 and all(p.node != node and p.phase == "Running" for p in replacement)
    sim.engine.run(sim.duration)
    (removed,) = _ca(sim, "nodes removed by cluster autoscaler")
    assert removed.t == evicted_at + 120 and removed.data["node"] == node
    assert len(asked) == 1  # evicted once, though the drain took 12 loops


def test_max_graceful_termination_sec_caps_the_grace_period_asked_for() -> None:
    sim = _sim(grace=3600, **{"max-graceful-termination-sec": 45})
    asked = _evictions(sim)
    sim.run()
    ((evicted_at, _, grace),) = asked
    (removed,) = _ca(sim, "nodes removed by cluster autoscaler")
    assert grace == 45 and removed.t == evicted_at + 45


def test_a_pod_that_outlives_the_wait_fails_the_drain_and_the_node_is_untainted() -> None:
    """--max-graceful-termination-sec 0 caps nothing (the pod gets its 300 s) and waits 0 + 30 s."""
    sim = _sim(grace=300, **{"max-graceful-termination-sec": 0, "unremovable-node-recheck-timeout": "1h"})
    asked = _evictions(sim)
    sim.run()
    evicted_at, _, grace = asked[0]
    assert grace == 300
    failed = [e for e in sim.events.events if e.reason == "ScaleDownFailed"]
    assert [(e.t, e.message) for e in failed][:1] == [
        (
            evicted_at + 30,
            f"failed to drain and delete node: Failed to drain node /{failed[0].data['node']}: "
            "pods remaining after timeout",
        )
    ]
    assert not _ca(sim, "nodes removed by cluster autoscaler")


def _expendable() -> dict[str, Any]:
    batch = deployment("batch", replicas=2)
    spec = batch["spec"]["template"]["spec"]
    spec["priority"] = -100  # below --expendable-pods-priority-cutoff (-10)
    spec["terminationGracePeriodSeconds"] = 600
    spec["containers"][0]["resources"]["requests"]["cpu"] = "100m"
    return batch


def test_expendable_pods_are_not_evicted_nor_waited_for_and_go_with_the_node() -> None:
    sim = _sim(grace=30, extra=[_expendable()])
    asked = _evictions(sim)
    sim.run_until(100.0)
    (marked,) = _ca(sim, "marked the node as toBeDeleted/unschedulable")
    node = marked.data["node"]
    on_node = [p for p in sim.cluster.nodes[node].pods.values() if p.spec.priority < -10]
    assert on_node  # an expendable pod runs on the node being drained
    sim.engine.run(sim.duration)
    assert [n for _, n, _ in asked if n.startswith("batch")] == []
    (evicted_at, _, _), *_ = asked
    (removed,) = _ca(sim, "nodes removed by cluster autoscaler")
    assert removed.t == evicted_at + 30  # the web pod's 30 s, not the batch pod's 600
    assert all(p.deleted for p in on_node)  # garbage-collected with the Node
    assert len(sim.cluster.workloads["Deployment/default/batch"].pods) == 2  # and replaced


def _agent(tolerate_all: bool = False) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "terminationGracePeriodSeconds": 60,
        "containers": [{"name": "a", "image": "agent", "resources": {"requests": {"cpu": "50m"}}}],
    }
    if tolerate_all:
        spec["tolerations"] = [{"operator": "Exists"}]
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": "agent", "namespace": "default"},
        "spec": {
            "selector": {"matchLabels": {"app": "agent"}},
            "template": {"metadata": {"labels": {"app": "agent"}}, "spec": spec},
        },
    }


def test_a_drained_nodes_daemonset_pod_is_evicted_terminates_and_is_not_replaced() -> None:
    """--daemonset-eviction-for-occupied-nodes (default true): drain.go DrainNode evicts the node's
    DaemonSet pod best-effort with the others; it terminates for its grace period (60 s), the node goes
    once the web pod is gone (30 s) without waiting for it, and the DaemonSet controller does not put a
    new pod on the node (its ToBeDeletedByClusterAutoscaler:NoSchedule taint is not tolerated)."""
    sim = _sim(grace=30, extra=[_agent()])
    asked = _evictions(sim)
    sim.run_until(0.0)
    while not asked and sim.engine.now < sim.duration:
        sim.engine.run(sim.engine.now + 10.0)
    (marked,) = _ca(sim, "marked the node as toBeDeleted/unschedulable")
    node = marked.data["node"]
    drain = marked.t + 5.0
    sim.engine.run(drain + 29.0)
    agents = sim.cluster.workloads["DaemonSet/default/agent"].pods.values()
    (on_node,) = [p for p in agents if p.pinned == node]  # the evicted one, still terminating
    assert on_node.terminating_until == drain + 60.0
    sim.engine.run(sim.duration)
    assert sorted((t, name.split("-")[0], grace) for t, name, grace in asked) == [
        (drain, "agent", 60),
        (drain, "web", 30),
    ]
    (removed,) = _ca(sim, "nodes removed by cluster autoscaler")
    assert removed.t == drain + 30.0 and removed.data["node"] == node
    assert on_node.deleted and [p.pinned for p in agents] == list(sim.cluster.nodes)


def test_without_the_flag_the_daemonset_pod_goes_with_the_node() -> None:
    sim = _sim(grace=30, extra=[_agent()], **{"daemonset-eviction-for-occupied-nodes": False})
    asked = _evictions(sim)
    sim.run()
    assert [name.split("-")[0] for _, name, _ in asked] == ["web"]
    assert len(_ca(sim, "nodes removed by cluster autoscaler")) == 1
