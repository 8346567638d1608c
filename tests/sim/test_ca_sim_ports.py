"""The simulator's side of the CA ports: the world's controllers and the simulated ClusterPort."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scenario_builders import deployment, doc, load
from sim_strategies import DATA_DIR, scenarios

from kubetide.model.api import EvictionOutcome, NotFoundError
from kubetide.model.pod import Pod
from kubetide.model.scheduling_terms import Taint
from kubetide.sim.cluster.node_lifecycle import NOT_READY_TAINT
from kubetide.sim.ports import SimClusterPort, SimWorldSource, _PodIndex
from kubetide.sim.scenario import parse_scenario
from kubetide.sim.simulation import Simulation


def _scenario() -> dict[str, Any]:
    web = deployment(replicas=3)
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "batch"},
        "spec": {
            "parallelism": 2,
            "completions": 4,
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [
                        {"name": "b", "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}
                    ],
                }
            },
        },
    }
    return doc(
        duration="10m",
        nodeGroups=[
            {"name": "general", "instanceType": "m5.large", "minSize": 1, "maxSize": 10, "initialSize": 2},
        ],
        objects=[web, job],
        traffic=[],
        autoscalers={"clusterAutoscaler": {"enabled": True, "flags": {"scan-interval": "10s"}}},
    )


def _started() -> Simulation:
    sim = Simulation(load(_scenario()))
    sim._start()
    sim.engine.run(120.0)
    return sim


def test_the_world_carries_the_controllers_as_ca_listers_see_them() -> None:
    sim = _started()
    assert sim.ca is not None
    world = sim.ca.world()
    assert world.controllers is not None
    # The Deployment's pods are owned by a ReplicaSet of the same name, with the Deployment's replicas.
    assert world.controllers[("ReplicaSet", "default", "web")] == 3
    assert world.controllers[("Job", "default", "batch")] == 2
    for p in world.pods:
        ctrl = p.controller
        assert ctrl is not None and (ctrl.kind, p.namespace, ctrl.name) in world.controllers


def test_the_simulated_port_adds_and_removes_single_taints_and_leaves_the_lifecycle_taint_alone() -> None:
    sim = _started()
    port = SimClusterPort(sim.cluster, sim.events)
    name = next(iter(sim.cluster.nodes))
    mine = Taint("ToBeDeletedByClusterAutoscaler", "120", "NoSchedule")
    other = Taint("example.com/maintenance", "", "NoSchedule")
    before = sim.cluster.nodes[name].view.taints  # CA's own soft taint may be there already
    port.add_node_taint(name, other)
    port.add_node_taint(name, mine)
    assert sim.cluster.nodes[name].view.taints == (*before, other, mine)
    port.remove_node_taint(name, mine.key)
    assert sim.cluster.nodes[name].view.taints == (*before, other)
    assert all(t != NOT_READY_TAINT for n in sim.cluster.nodes.values() for t in n.view.taints)
    port.set_node_unschedulable(name, True)
    assert sim.cluster.nodes[name].view.unschedulable
    try:
        port.add_node_taint("no-such-node", mine)
    except NotFoundError:
        pass
    else:  # pragma: no cover
        raise AssertionError("a missing node must raise NotFoundError")


def test_the_world_keeps_its_node_list_only_while_no_node_changes() -> None:
    sim = _started()
    kept, port = SimWorldSource(sim.cluster), SimClusterPort(sim.cluster, sim.events)
    name = next(iter(sim.cluster.nodes))

    def same() -> None:
        assert kept.nodes() == SimWorldSource(sim.cluster).nodes()

    same()
    port.add_node_taint(name, Taint("example.com/maintenance", "", "NoSchedule"))
    same()
    port.set_node_unschedulable(name, True)
    same()
    port.remove_node_taint(name, "example.com/maintenance")
    same()
    sim.cluster.set_node_ready(sim.engine.now, name, False)
    same()


def test_a_world_held_on_to_keeps_the_pods_it_was_read_with() -> None:
    # A world's pod list is made when first read; the source makes it before it shows other pods.
    sim = _started()
    source = SimWorldSource(sim.cluster)
    held = source.world()
    source.world()  # read again, nothing changed in between, and let go of at once
    then = SimWorldSource(sim.cluster).pods()
    sim.cluster.scale("Deployment/default/web", 6, sim.engine.now)
    sim.engine.run(sim.engine.now + 60)
    later = source.world()
    assert list(held.pods) == then
    assert list(later.pods) == SimWorldSource(sim.cluster).pods() != then


def test_the_simulated_port_evicts_through_the_eviction_api() -> None:
    sim = _started()
    port = SimClusterPort(sim.cluster, sim.events)
    pod = next(p for p in sim.ca.world().pods if p.node_name) if sim.ca else None
    assert pod is not None
    assert port.evict(pod) is EvictionOutcome.EVICTED  # Terminating for its grace period (30 s)
    assert port.evict(pod) is EvictionOutcome.EVICTED  # still there: evicted again, as the API allows
    assert port.evict(pod, 0) is EvictionOutcome.EVICTED  # no grace period: deleted at once
    assert port.evict(pod) is EvictionOutcome.GONE


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios(max_duration=2 * 3600), st.lists(st.floats(0.01, 1.0), min_size=1, max_size=6))
def test_the_world_kept_up_to_date_from_the_change_log_is_the_world_built_afresh(
    document: dict[str, Any], marks: list[float]
) -> None:
    """The world source updates its pods from the cluster's change log between loops; whatever the
    scenario did meanwhile (scaling, evictions, lost nodes, Jobs ending, StatefulSet pods coming
    back under their names), the result is what reading every pod again gives, in the same order; and
    so are the indexes by node and of unbound pods."""
    sim = Simulation(parse_scenario(document, base_dir=DATA_DIR))
    kept = SimWorldSource(sim.cluster)
    sim.run_until(0.0)
    kept.pods()
    for mark in sorted(marks):
        sim.engine.run(max(sim.engine.now, mark * sim.duration))
        world = kept.world()
        fresh = SimWorldSource(sim.cluster).pods()
        assert list(world.pods) == fresh
        by_node: dict[str, list[Pod]] = {}
        for p in fresh:
            if p.node_name and p.phase not in ("Succeeded", "Failed"):
                by_node.setdefault(p.node_name, []).append(p)
        assert world.pods_by_node is not None and world.unbound_pods is not None
        assert {name: list(pods) for name, pods in world.pods_by_node.items()} == by_node
        assert list(world.unbound_pods) == [p for p in fresh if not p.node_name]


def test_the_index_by_node_leaves_out_finished_pods_and_keeps_the_shown_order() -> None:
    index = _PodIndex()
    early, late, done = (
        Pod("early"),
        Pod("late", node_name="n1"),
        Pod("done", node_name="n1", phase="Succeeded"),
    )
    for key, pod in (("early", early), ("late", late), ("done", done)):
        index.put(key, pod)
    assert index.read() == ({"n1": (late,)}, (early,))
    bound = Pod("early", node_name="n1")
    index.put("early", bound)  # bound after "late" was, yet listed first, as in the pods' order
    assert index.read() == ({"n1": (bound, late)}, ())
    index.drop("early")
    index.put("early", bound)  # gone, then back: at the end
    assert index.read() == ({"n1": (late, bound)}, ())
