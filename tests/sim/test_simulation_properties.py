"""Property tests of whole simulations: random valid scenarios, invariants checked at every timeline row
and on the outputs.

``KUBETIDE_SIM_EXAMPLES=5000 pytest tests/sim/test_simulation_properties.py`` hunts for bugs; the
default keeps the file to a few seconds.
"""

from __future__ import annotations

import functools
import json
import math
import os
import tempfile
from collections.abc import Sequence
from functools import partial
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sim_strategies import DATA_DIR, cloud_calls, scenarios

from kubetide.cloud.instance import CloudProviderError
from kubetide.cloud.provider import NodeGroup
from kubetide.model.node import NodeView
from kubetide.model.pod import pod_requests
from kubetide.model.resources import CPU, MEMORY
from kubetide.scheduling.predicates.node_affinity import matches_node_selection
from kubetide.sim.cluster.workloads import DaemonSetWorkload, JobWorkload, ReplicatedWorkload
from kubetide.sim.output.events import CONTRACT_DATA_KEYS, SOURCES
from kubetide.sim.output.writer import write_outputs
from kubetide.sim.ports import SimWorldSource
from kubetide.sim.scenario import parse_scenario
from kubetide.sim.simulation import Simulation, SimulationResult
from scheduling.reference import ref_fits

EXAMPLES = int(os.environ.get("KUBETIDE_SIM_EXAMPLES", "60"))
PROPERTY_SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


class CheckedSimulation(Simulation):
    """A simulation that checks the cluster's invariants at every timeline row, and after every
    scheduling batch that no pending pod fits a node (by the plain reference filters)."""

    def __init__(self, scenario: Any, calls: Sequence[tuple[int, int, str, int]] = ()) -> None:
        super().__init__(scenario)
        for t, group, op, amount in calls:
            self.engine.at(t, partial(self._cloud_call, self.groups[group], op, amount), priority=30)
        schedule = self.cluster.scheduler.schedule

        def checked_schedule(now: float) -> None:
            schedule(now)
            if not self.cluster.scheduler.armed:  # the instant's last batch
                check_nothing_schedulable_left(self, now)

        self.cluster.scheduler.schedule = checked_schedule  # type: ignore[method-assign]

    def _tick(self, now: float) -> None:
        super()._tick(now)
        check_cluster(self, now)
        check_cloud(self, now)
        check_world_nodes(self)
        check_instance_lists(self)

    @functools.cached_property
    def kept_source(self) -> SimWorldSource:
        return SimWorldSource(self.cluster)

    def _cloud_call(self, group: str, op: str, amount: int, now: float) -> None:
        """What an autoscaler does to the cloud; refused calls raise CloudProviderError, nothing else."""
        handle = self.cloud.client("fuzz").node_group(group)
        nodes = sorted(
            (n for n in self.cluster.nodes.values() if n.group == group), key=lambda n: n.view.name
        )
        try:
            if op == "increase":
                handle.increase_size(amount)
            elif op == "decrease":
                handle.decrease_target_size(-amount)
            else:
                chosen = [n.view for n in nodes[: max(amount, 0)]]
                if op == "delete":
                    handle.delete_nodes(chosen)
                else:
                    handle.force_delete_nodes(chosen)
        except CloudProviderError:
            pass
        check_cloud(self, now)


def check_cloud(sim: Simulation, now: float) -> None:
    """The cloud's books against the cluster's Nodes."""
    for name, group in sim.cloud._cloud.groups.items():
        spec = group.spec
        assert spec.min_size <= group.target <= spec.max_size or group.target == spec.initial_size, (
            now,
            name,
        )
        assert group.target >= len(group.not_deleting()), (now, name)
        for inst in group.live.values():
            node = sim.cluster.nodes.get(inst.node_name)
            assert (node is not None) == inst.has_node, (now, inst.node_name)
            if node is not None:
                assert node.ready == inst.node_ready and node.group == name, (now, inst.node_name)
    live_nodes = {
        i.node_name for g in sim.cloud._cloud.groups.values() for i in g.live.values() if i.has_node
    }
    assert live_nodes == set(sim.cluster.nodes), now


def check_inter_pod_constraints(cluster: Any, now: float) -> None:
    """What kube-scheduler guarantees between bound pods: no host port twice on a node, no pod in a
    topology domain where a required anti-affinity term (its own or another pod's) forbids it."""
    bound = [(node, pod) for node in cluster.nodes.values() for pod in node.pods.values()]
    for node in cluster.nodes.values():
        ports = [port for pod in node.pods.values() for port in pod.spec.host_ports]
        keys = [(p.port, p.protocol) for p in ports]
        assert len(keys) == len(set(keys)), (now, node.view.name, keys)
    for node, pod in bound:
        for term in pod.spec.pod_anti_affinity:
            domain = node.view.labels.get(term.topology_key)
            if domain is None:
                continue
            for other_node, other in bound:
                if (
                    other is not pod
                    and other_node.view.labels.get(term.topology_key) == domain
                    and term.namespace_matches(pod.spec.namespace, other.spec.namespace)
                    and term.selector.matches(other.spec.labels)
                ):
                    raise AssertionError((now, pod.key, "anti-affinity", other.key, domain))


def check_nothing_schedulable_left(sim: Simulation, now: float) -> None:
    cluster = sim.cluster
    slots = [node.slot for node in cluster.nodes.values()]
    for key, pod in cluster.pending_pods.items():
        if pod.spec.node_name:
            continue  # waits for its Node: never the scheduler's
        fits = [cluster.snapshot.name(i) for i in slots if ref_fits(cluster.snapshot, pod.spec, i)]
        assert not fits, (now, key, fits)


def check_cluster(sim: Simulation, now: float) -> None:
    cluster = sim.cluster
    snap = cluster.snapshot
    # The scheduling snapshot and the cluster's bookkeeping agree, node by node.
    active = set(int(i) for i in snap.active_indices())
    assert active == {n.slot for n in cluster.nodes.values()}, (now, active)
    for name, node in cluster.nodes.items():
        assert snap.name(node.slot) == name
        in_snapshot = {id(p) for p in snap.pods_on(node.slot)}
        bound = {id(p.spec) for p in node.pods.values()}
        assert in_snapshot == bound, (now, name, len(in_snapshot), len(bound))
        for pod in node.pods.values():
            assert not pod.deleted and pod.node == name and pod.phase not in ("Succeeded", "Failed")
            assert matches_node_selection(pod.spec, name, node.view.labels), (now, pod.key, name)
            if not pod.spec.node_name:  # the kubelet admits spec.nodeName pods whatever the taints
                for taint in node.view.taints:  # the group's own taints (not the lifecycle ones)
                    assert taint.effect == "PreferNoSchedule" or any(
                        t.tolerates(taint) for t in pod.spec.tolerations
                    ), (now, pod.key, name, taint)
            assert cluster.pods.get(pod.key) is pod, (now, pod.key)
        requested = np.zeros(len(snap.resources), np.int64)
        for pod in node.pods.values():
            requests = pod_requests(pod.spec)
            for resource in (CPU, MEMORY):
                requested[snap.column(resource)] += requests[resource]
            requested[3] += 1
        for column, resource in enumerate(snap.resources[:4]):
            assert snap.requested[node.slot][column] == requested[column], (now, name, resource)
        free = snap.free()[node.slot]
        assert (free >= 0).all(), (now, name, dict(zip(snap.resources, free.tolist(), strict=True)))
    check_inter_pod_constraints(cluster, now)
    # Every live pod is either pending or bound to a node that exists (and holds it).
    pending = 0
    for key, pod in cluster.pods.items():
        assert pod.key == key and not pod.deleted
        # The lifecycle in order: created <= bound <= Running (after its start-up delay) <= Ready.
        assert pod.created <= now
        if pod.bound_at is not None:
            assert pod.created <= pod.bound_at <= now and pod.node is not None, (now, key)
        if pod.phase == "Running":
            assert pod.running_at is not None and pod.bound_at is not None, (now, key)
            assert math.isclose(pod.running_at, pod.bound_at + pod.startup_delay), (now, key)
        else:
            assert pod.phase == "Pending" and not pod.ready and pod.running_at is None, (now, key, pod.phase)
        if pod.ready:
            assert pod.ready_at is not None and pod.running_at is not None, (now, key)
            assert pod.ready_at >= pod.running_at + pod.readiness_delay - 1e-9, (now, key)
            assert cluster.nodes[pod.node or ""].ready, (now, key)  # no Ready pods on NotReady nodes
        if pod.node is None:
            assert key in cluster.pending_pods
            pending += 1
        else:
            assert pod.node in cluster.nodes, (now, key, pod.node)
            assert cluster.nodes[pod.node].pods.get(key) is pod, (now, key)
    assert pending == len(cluster.pending_pods) == cluster.stats.pending
    for key, pod in cluster.pending_pods.items():
        assert cluster.pods.get(key) is pod and pod.node is None
    # Controllers.
    for key, workload in cluster.workloads.items():
        for name, pod in workload.pods.items():
            assert pod.name == name and pod.owner == key and cluster.pods.get(pod.key) is pod, (now, key)
        if isinstance(workload, ReplicatedWorkload) and workload.kind != "StatefulSet":
            assert len(workload.pods) == workload.replicas, (now, key)
        if isinstance(workload, ReplicatedWorkload) and workload.kind == "StatefulSet":
            ordinals = sorted(p.ordinal for p in workload.pods.values())
            assert len(ordinals) == len(set(ordinals)) and all(o >= 0 for o in ordinals), (now, key)
            healthy = all(p.phase == "Running" and p.ready for p in workload.pods.values())
            # A pod name taken by a pod that is not the StatefulSet's blocks that ordinal.
            blocked = min(
                (
                    o
                    for o in range(workload.replicas)
                    if f"{workload.namespace}/{workload.name}-{o}" in cluster.pods
                    and cluster.pods[f"{workload.namespace}/{workload.name}-{o}"].owner != key
                ),
                default=None,
            )
            if blocked is not None:
                assert blocked not in ordinals
            elif healthy or not workload.ordered:  # nothing to wait for: at its replicas
                assert ordinals == list(range(workload.replicas)) or (
                    # OrderedReady creates one pod at a time: the last may not be Ready yet.
                    workload.ordered and ordinals == list(range(len(ordinals)))
                ), (now, key, ordinals, workload.replicas)
        if isinstance(workload, JobWorkload):
            assert workload.succeeded <= workload.completions, (now, key)
            active_pods = len(workload.pods)
            assert active_pods <= min(workload.parallelism, workload.completions - workload.succeeded)
        if isinstance(workload, DaemonSetWorkload):
            for pod in workload.pods.values():
                assert pod.node in (None, pod.pinned), (now, key, pod.node, pod.pinned)
            on = [p.pinned for p in workload.pods.values()]
            assert len(on) == len(set(on)), (now, key, on)
            eligible = {n for n, node in cluster.nodes.items() if workload.eligible(node.view)}
            assert set(on) == eligible, (now, key, sorted(on, key=str), sorted(eligible))


def check_instance_lists(sim: CheckedSimulation) -> None:
    """Each group's instance list, kept while nothing changes, is the list made afresh."""
    for group in sim.cloud._cloud.groups.values():
        assert group.instances() == [inst.to_instance() for inst in group.live.values()]


def check_world_nodes(sim: CheckedSimulation) -> None:
    """A world source kept from read to read lists the nodes a fresh one lists (its list is kept
    while the cluster's nodes do not change)."""
    kept, fresh = sim.kept_source.nodes(), SimWorldSource(sim.cluster).nodes()
    assert kept == fresh
    assert [(n.labels, n.annotations) for n in kept] == [(n.labels, n.annotations) for n in fresh]


def run(
    doc: dict[str, Any], calls: Sequence[tuple[int, int, str, int]] = ()
) -> tuple[Simulation, SimulationResult]:
    scenario = parse_scenario(doc, base_dir=DATA_DIR)
    sim = CheckedSimulation(scenario, calls)
    return sim, sim.run()


def check_events(result: SimulationResult, duration: float) -> None:
    last = -math.inf
    for t, source, reason, _obj, _message, data in result.events.rows():
        assert t >= last and 0 <= t <= duration
        last = t
        assert source in SOURCES
        for alternatives in CONTRACT_DATA_KEYS.get((source, reason), ()):
            assert any(k in data for k in alternatives), (source, reason, data)
        json.dumps(dict(data), default=str)


def check_summary(sim: Simulation, result: SimulationResult) -> None:
    summary = result.summary.to_json()
    for key in (
        "scenario",
        "seed",
        "simulated_seconds",
        "wall_seconds",
        "pods",
        "nodes",
        "workloads",
        "autoscalers",
    ):
        assert key in summary
    pods, nodes = summary["pods"], summary["nodes"]
    for key in ("pending_pod_seconds", "max_pending", "time_to_schedule_seconds", "unschedulable_at_end"):
        assert key in pods
    assert set(pods["time_to_schedule_seconds"]) >= {"p50", "p95", "p99", "max"}
    tts = pods["time_to_schedule_seconds"]
    assert 0 <= tts["p50"] <= tts["p95"] <= tts["p99"] <= tts["max"] <= sim.duration
    for key in ("node_seconds", "cost", "max", "final", "by_group"):
        assert key in nodes
    by_group = nodes["by_group"]
    assert set(by_group) == set(sim.groups)
    assert math.isclose(
        nodes["node_seconds"], sum(g["node_seconds"] for g in by_group.values()), abs_tol=1e-6
    )
    assert math.isclose(nodes["cost"], sum(g["cost"] for g in by_group.values()), abs_tol=1e-5)
    assert nodes["final"] == sum(g["final"] for g in by_group.values())
    for group in by_group.values():
        assert 0 <= group["final"] <= group["max"] <= nodes["max"]
        assert group["node_seconds"] >= 0 and group["cost"] >= 0
    for key in ("cluster-autoscaler", "hpa", "escalator"):
        assert key in summary["autoscalers"]
    assert summary["autoscalers"]["hpa"]["rescales"] == result.events.count("hpa", "SuccessfulRescale")
    timeline = result.timeline
    assert len(timeline) == int(sim.duration // sim.resolution) + 1
    assert nodes["final"] <= nodes["max"] <= sum(g["max"] for g in by_group.values())
    # Pending accounting: max and the integral against the timeline.
    pending = timeline.column("pending_pods")
    assert pods["max_pending"] >= pending.max()
    integral = float(pending.sum()) * sim.resolution
    pods_ever = len(sim.cluster.stats.time_to_schedule) + sim.cluster.stats.pending + sim.cluster.store.uids
    assert abs(integral - pods["pending_pod_seconds"]) <= sim.resolution * (pods_ever + pending.max() + 1)
    assert (pending >= 0).all() and (timeline.column("cost_per_hour") >= 0).all()
    for key, workload in summary["workloads"].items():
        if not key.startswith("StatefulSet/"):  # an OrderedReady scale-down may wait with extra pods
            ready = timeline.column(f"ready:{key}")
            assert (ready <= timeline.column(f"replicas:{key}")).all(), key
        assert workload["min_replicas"] <= workload["final_replicas"] <= workload["max_replicas"], key
        replicas = timeline.column(f"replicas:{key}")
        assert workload["min_replicas"] <= replicas.min() and replicas.max() <= workload["max_replicas"], key
        assert 0 <= workload["overloaded_seconds"] <= sim.duration
    if timeline.t[-1] == sim.duration:
        for group in sim.groups:
            assert by_group[group]["final"] == timeline.column(f"nodes:{group}")[-1], group
        for key, workload in summary["workloads"].items():
            assert workload["final_replicas"] == timeline.column(f"replicas:{key}")[-1], key


@st.composite
def scenarios_and_calls(draw: Any) -> tuple[dict[str, Any], list[tuple[int, int, str, int]]]:
    doc = draw(scenarios())
    spec = doc["spec"]
    return doc, draw(cloud_calls(spec["duration"], len(spec["nodeGroups"])))


@PROPERTY_SETTINGS
@given(scenarios_and_calls())
def test_simulation_invariants(case: tuple[dict[str, Any], list[tuple[int, int, str, int]]]) -> None:
    doc, calls = case
    sim, result = run(doc, calls)
    check_events(result, sim.duration)
    check_summary(sim, result)
    check_cloud_lookups(sim)


def check_cloud_lookups(sim: Simulation) -> None:
    """The cloud's index by instance id answers as a search of every group's live instances would."""
    groups = sim.cloud._cloud.groups
    live = {sid: name for name, group in groups.items() for sid in group.live}
    assert sim.cloud._cloud.owners == live
    by_pid = {group.live[sid].provider_id: name for name, group in groups.items() for sid in group.live}
    assert sim.cloud._cloud.owners_by_provider_id == by_pid
    for sid, name in live.items():
        view = NodeView(f"n-{sid}", provider_id=groups[name].live[sid].provider_id)
        found = sim.cloud.node_group_for_node(view)
        assert sim.cloud.has_instance(view) and found is not None and found.id() == name
    # The bulk answers are the per-node ones, node for node, also for a caller that manages one group
    # only, nodes of terminated machines, and nodes with no or a foreign providerID (has_instance
    # raises for those, so has_instances does too).
    views = [
        NodeView(f"n-{sid}", provider_id=groups[name].live[sid].provider_id) for sid, name in live.items()
    ]
    views.append(NodeView("gone", provider_id="sim:///zone-a/i-terminated"))
    # The same instance id under another zone: the per-node lookups read the id alone.
    views += [NodeView(f"alias-{sid}", provider_id=f"sim:///elsewhere/{sid}") for sid in list(live)[:3]]
    clients = [sim.cloud, sim.cloud.client("test", only=list(groups)[:1])]
    for cloud in clients:
        assert cloud.node_group_ids(views) == [_id(cloud.node_group_for_node(v)) for v in views]
        assert cloud.has_instances(views) == [cloud.has_instance(v) for v in views]
        odd = [*views, NodeView("foreign", provider_id="aws:///us-east-1a/i-1"), NodeView("none")]
        assert cloud.node_group_ids(odd) == [_id(cloud.node_group_for_node(v)) for v in odd]
        with pytest.raises(CloudProviderError):
            cloud.has_instances(odd)


def _id(group: NodeGroup | None) -> str | None:
    return group.id() if group is not None else None


@settings(max_examples=max(EXAMPLES // 10, 3), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios_and_calls())
def test_same_seed_same_outputs(case: tuple[dict[str, Any], list[tuple[int, int, str, int]]]) -> None:
    """Twice the same run: byte-identical events.jsonl and timeline.csv, the same summary.json but
    for the wall time; every output file is written without error."""
    doc, calls = case
    outputs = []
    for _ in range(2):
        _, result = run(doc, calls)
        with tempfile.TemporaryDirectory() as directory:
            paths = write_outputs(directory, result.summary, result.timeline, result.events, result.meta)
            summary = json.loads(paths.summary.read_text(), parse_constant=_not_json)
            summary.pop("wall_seconds")
            summary.pop("simulated_seconds_per_wall_second", None)
            assert paths.report.read_text().startswith("<!DOCTYPE html>")
            outputs.append((summary, paths.events.read_bytes(), paths.timeline.read_bytes()))
        for line in outputs[-1][1].splitlines():
            json.loads(line, parse_constant=_not_json)
    assert outputs[0] == outputs[1]


def _not_json(constant: str) -> None:
    raise AssertionError(f"{constant} is not JSON")
