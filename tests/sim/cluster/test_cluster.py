"""The simulated cluster: controllers keep their pods, the scheduler binds them, lifecycles advance."""

from __future__ import annotations

from typing import Any

import pytest

from kubetide.model.errors import ManifestError
from kubetide.model.scheduling_terms import Taint
from kubetide.sim.cluster.workloads import JobWorkload
from kubetide.sim.hpa import SimScaleTargets
from kubetide.sim.metrics import MetricsPipeline

from .builders import add_ready_node, cluster, deployment, node


def test_deployment_pods_are_scheduled_then_run_and_become_ready() -> None:
    engine, c, events = cluster()
    add_ready_node(c, node("n1"))
    c.apply(deployment("web", 3), 0.0)
    engine.run(0.0)
    pods = list(c.workloads["Deployment/default/web"].pods.values())
    assert len(pods) == 3 and all(p.node == "n1" for p in pods)
    assert events.reasons("scheduler") == ["Scheduled"] * 3
    engine.run(5.0)  # default start-up delay 5s, no readiness delay
    assert all(p.phase == "Running" and p.ready for p in pods)
    assert c.stats.pending == 0 and c.stats.time_to_schedule == [0.0, 0.0, 0.0]


def test_pods_that_do_not_fit_stay_pending_with_the_scheduler_message() -> None:
    engine, c, events = cluster()
    add_ready_node(c, node("n1", cpu=1000))
    c.apply(deployment("web", 3), 0.0)
    engine.run(1.0)
    assert len(c.pending_pods) == 1
    failed = [e for e in events.items if e[2] == "FailedScheduling"]
    assert len(failed) == 1 and failed[0][4].startswith("0/1 nodes are available: 1 Insufficient cpu.")
    # A new node makes room: the pending pod is bound at once.
    add_ready_node(c, node("n2"), t=1.0)
    engine.run(1.0)
    assert not c.pending_pods
    assert c.stats.time_to_schedule[-1] == 1.0
    c.finish(10.0)
    assert c.stats.pending_seconds == 1.0 and c.stats.max_pending == 3


def test_not_ready_nodes_receive_no_pods() -> None:
    engine, c, _ = cluster()
    c.register_node(0.0, node("n1"), "g", "i-1")
    c.apply(deployment("web", 1), 0.0)
    engine.run(0.0)
    assert len(c.pending_pods) == 1
    c.set_node_ready(3.0, "n1", True)
    engine.run(3.0)
    assert not c.pending_pods


def test_scale_down_deletes_pending_and_unready_pods_first() -> None:
    engine, c, _ = cluster()
    add_ready_node(c, node("n1", cpu=1000))
    c.apply(deployment("web", 2), 0.0)
    engine.run(10.0)
    c.scale("Deployment/default/web", 3, 10.0)  # the third cannot fit: pending
    engine.run(10.0)
    pending = next(iter(c.pending_pods.values()))
    c.scale("Deployment/default/web", 2, 20.0)
    assert pending.deleted and not c.pending_pods
    assert len(c.workloads["Deployment/default/web"].pods) == 2


def test_deleting_a_node_garbage_collects_its_pods_and_owners_replace_them() -> None:
    engine, c, _ = cluster()
    add_ready_node(c, node("n1"))
    add_ready_node(c, node("n2"))
    c.apply(deployment("web", 4), 0.0)
    engine.run(10.0)
    on_n1 = [p for p in c.workloads["Deployment/default/web"].pods.values() if p.node == "n1"]
    c.node_deleted(10.0, "n1")
    engine.run(10.0)
    assert all(p.deleted for p in on_n1)
    pods = c.workloads["Deployment/default/web"].pods.values()
    assert len(pods) == 4 and all(p.node == "n2" for p in pods)


def test_daemonset_runs_one_pod_per_eligible_node() -> None:
    engine, c, _ = cluster()
    ds = {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": "agent", "namespace": "kube-system"},
        "spec": {
            "selector": {"matchLabels": {"app": "agent"}},
            "template": {
                "metadata": {"labels": {"app": "agent"}},
                "spec": {
                    "nodeSelector": {"os": "linux"},
                    "containers": [{"name": "a", "resources": {"requests": {"cpu": "100m"}}}],
                },
            },
        },
    }
    c.apply(ds, 0.0)
    add_ready_node(c, node("n1", labels={"os": "linux"}))
    add_ready_node(c, node("n2", labels={"os": "windows"}))
    engine.run(1.0)
    pods = list(c.workloads["DaemonSet/kube-system/agent"].pods.values())
    assert [p.node for p in pods] == ["n1"]


def test_job_runs_pods_to_completion() -> None:
    engine, c, _ = cluster()
    add_ready_node(c, node("n1", cpu=1000))
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "batch", "namespace": "default"},
        "spec": {
            "parallelism": 2,
            "completions": 4,
            "template": {
                "metadata": {"annotations": {"kubetide.io/duration": "60s"}},
                "spec": {"containers": [{"name": "w", "resources": {"requests": {"cpu": "500m"}}}]},
            },
        },
    }
    c.apply(job, 0.0)
    engine.run(64.0)  # 5s start + 60s run: first two not done yet
    workload = c.workloads["Job/default/batch"]
    assert isinstance(workload, JobWorkload) and workload.succeeded == 0
    engine.run(65.0)
    assert workload.succeeded == 2
    engine.run(200.0)
    assert workload.complete and not workload.pods


def test_statefulset_creates_pods_in_order_once_each_is_ready() -> None:
    engine, c, _ = cluster()
    add_ready_node(c, node("n1"))
    sts = deployment("db", 3)
    sts["kind"] = "StatefulSet"
    c.apply(sts, 0.0)
    engine.run(0.0)
    assert sorted(c.workloads["StatefulSet/default/db"].pods) == ["db-0"]
    engine.run(5.0)
    assert sorted(c.workloads["StatefulSet/default/db"].pods) == ["db-0", "db-1"]
    engine.run(20.0)
    assert sorted(c.workloads["StatefulSet/default/db"].pods) == ["db-0", "db-1", "db-2"]


def _pdb(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {**spec, "selector": {"matchLabels": {"app": "web"}}},
    }


def test_eviction_honours_the_disruption_budget() -> None:
    engine, c, _ = cluster()
    add_ready_node(c, node("n1"))
    c.apply(deployment("web", 2), 0.0)
    c.apply(_pdb(minAvailable=2), 0.0)
    engine.run(10.0)
    pod = next(iter(c.workloads["Deployment/default/web"].pods.values()))
    assert not c.evict(pod, 10.0)
    c.scale("Deployment/default/web", 3, 10.0)
    engine.run(20.0)
    assert c.evict(pod, 20.0) and pod.terminating_until == 50.0  # Terminating for 30 s (the default)
    engine.run(50.0)
    assert pod.deleted


def _grace(manifest: dict[str, Any], seconds: int) -> dict[str, Any]:
    manifest["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] = seconds
    return manifest


def test_an_evicted_pod_terminates_on_its_node_for_its_grace_period_while_it_is_replaced() -> None:
    """The API server sets deletionTimestamp = now + grace period; the kubelet stops the pod then. Until
    it goes, the pod keeps its node's resources; its ReplicaSet stops counting it and replaces it."""
    engine, c, _ = cluster()
    add_ready_node(c, node("n1", cpu=1000))
    add_ready_node(c, node("n2", cpu=1000))
    c.apply(_grace(deployment("web", 1, cpu="600m"), 45), 0.0)
    engine.run(10.0)
    (pod,) = c.workloads["Deployment/default/web"].pods.values()
    home = pod.node
    assert c.evict(pod, 10.0)  # no grace period asked: the pod's own, 45 s
    view = pod.view()
    assert view.deletion_time == 55.0 and view.node_name == home and c.pods[pod.key] is pod
    engine.run(10.0)
    (replacement,) = c.workloads["Deployment/default/web"].pods.values()
    assert replacement is not pod and replacement.node not in (None, home)  # no room left next to it
    assert c.evict(pod, 20.0)  # evicting a terminating pod again: no budget asked, never longer
    assert pod.terminating_until == 55.0
    engine.run(54.9)
    assert not pod.deleted
    engine.run(55.0)
    assert pod.deleted and pod.key not in c.pods and pod.key not in c.nodes[home or ""].pods


def test_an_eviction_s_grace_period_wins_and_zero_deletes_at_once() -> None:
    engine, c, _ = cluster()
    add_ready_node(c, node("n1"))
    c.apply(_grace(deployment("web", 2), 600), 0.0)
    engine.run(10.0)
    first, second = c.workloads["Deployment/default/web"].pods.values()
    assert c.evict(first, 10.0, 20) and first.terminating_until == 30.0
    assert c.evict(first, 12.0, 5) and first.terminating_until == 17.0  # a shorter one replaces it
    engine.run(17.0)
    assert first.deleted
    assert c.evict(second, 17.0, 0) and second.deleted


def test_a_terminating_pod_is_not_counted_by_a_disruption_budget() -> None:
    engine, c, _ = cluster()
    add_ready_node(c, node("n1"))
    c.apply(deployment("web", 3), 0.0)
    c.apply(_pdb(maxUnavailable=1), 0.0)
    engine.run(10.0)
    first, second, _third = c.workloads["Deployment/default/web"].pods.values()
    assert c.evict(first, 10.0)
    # first is Terminating, its replacement not Ready yet: no disruption left
    assert not c.evict(second, 11.0)
    engine.run(20.0)  # the replacement is Running and Ready
    assert c.evict(second, 20.0)


def test_a_statefulset_pod_evicted_comes_back_under_its_name_once_it_is_gone() -> None:
    engine, c, _ = cluster()
    add_ready_node(c, node("n1"))
    sts = _grace(deployment("db", 1), 20)
    sts["kind"] = "StatefulSet"
    c.apply(sts, 0.0)
    engine.run(10.0)
    old = c.workloads["StatefulSet/default/db"].pods["db-0"]
    assert c.evict(old, 10.0)
    engine.run(29.0)
    assert "db-0" not in c.workloads["StatefulSet/default/db"].pods  # the name is still taken
    engine.run(30.0)
    new = c.workloads["StatefulSet/default/db"].pods["db-0"]
    assert new is not old and old.deleted


def test_a_terminating_pod_goes_with_its_node() -> None:
    engine, c, _ = cluster()
    add_ready_node(c, node("n1"))
    c.apply(deployment("web", 1), 0.0)
    engine.run(10.0)
    (pod,) = c.workloads["Deployment/default/web"].pods.values()
    c.evict(pod, 10.0)
    c.node_deleted(15.0, "n1")
    assert pod.deleted
    engine.run(100.0)  # its termination event finds it gone


def test_unschedulable_pods_carry_the_pod_scheduled_condition() -> None:
    engine, c, _ = cluster()
    add_ready_node(c, node("n1", cpu=600))
    c.apply(deployment("web", 2), 0.0)
    engine.run(1.0)
    pending = next(iter(c.pending_pods.values())).view()
    assert pending.unschedulable_message is not None
    assert pending.unschedulable_message.startswith("0/1 nodes are available: 1 Insufficient cpu.")
    bound = next(p for p in c.workloads["Deployment/default/web"].pods.values() if p.node).view()
    assert bound.unschedulable_message is None and bound.node_name == "n1"


def _daemon_set(cpu: str) -> dict[str, object]:
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": "agent", "namespace": "default"},
        "spec": {
            "selector": {"matchLabels": {"app": "agent"}},
            "template": {
                "metadata": {"labels": {"app": "agent"}},
                "spec": {"containers": [{"name": "a", "resources": {"requests": {"cpu": cpu}}}]},
            },
        },
    }


def test_a_daemonset_pod_that_does_not_fit_waits_pending_for_room_on_its_own_node() -> None:
    engine, c, _ = cluster()
    add_ready_node(c, node("n1", cpu=1000))
    c.apply(deployment("web", 1, cpu="800m"), 0.0)
    engine.run(1.0)
    c.apply(_daemon_set("500m"), 1.0)
    add_ready_node(c, node("n2", cpu=1000), t=1.0)
    engine.run(2.0)
    pods = {p.pinned: p for p in c.workloads["DaemonSet/default/agent"].pods.values()}
    assert pods["n1"].node is None and "default/" + pods["n1"].name in c.pending_pods  # never overcommits n1
    assert pods["n2"].node == "n2"
    assert (c.snapshot.free()[c.nodes["n1"].slot] >= 0).all()
    c.scale("Deployment/default/web", 0, 3.0)
    engine.run(3.0)
    assert pods["n1"].node == "n1"  # room on n1 now: scheduled there, never elsewhere


def test_a_pending_daemonset_pod_goes_with_its_node() -> None:
    engine, c, _ = cluster()
    add_ready_node(c, node("n1", cpu=1000))
    c.apply(deployment("web", 1, cpu="800m"), 0.0)
    c.apply(_daemon_set("500m"), 0.0)
    engine.run(1.0)
    assert len(c.pending_pods) == 1
    c.node_deleted(2.0, "n1")
    engine.run(2.0)
    assert not c.workloads["DaemonSet/default/agent"].pods
    assert [p.spec.labels["app"] for p in c.pending_pods.values()] == ["web"]


def _bare_pod(name: str, cpu: str, node_name: str = "") -> dict[str, object]:
    spec: dict[str, object] = {"containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}]}
    if node_name:
        spec["nodeName"] = node_name
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}


def test_a_pod_with_node_name_is_admitted_or_rejected_by_that_nodes_kubelet() -> None:
    engine, c, events = cluster()
    add_ready_node(c, node("n1", cpu=1000))
    add_ready_node(c, node("n2", cpu=4000))
    c.apply(_bare_pod("small", "500m", "n1"), 0.0)
    c.apply(_bare_pod("big", "2", "n1"), 0.0)  # does not fit n1: fails, never runs elsewhere
    engine.run(10.0)
    assert c.pods["default/small"].node == "n1" and c.pods["default/small"].phase == "Running"
    assert "default/big" not in c.pods and not c.pending_pods and c.stats.pending == 0
    assert ("kubelet", "OutOfcpu") in [(e[1], e[2]) for e in events.items]


def test_a_pod_with_node_name_waits_for_that_node_and_the_scheduler_leaves_it_alone() -> None:
    engine, c, _ = cluster()
    add_ready_node(c, node("n1"))
    c.apply(_bare_pod("later", "100m", "n2"), 0.0)
    engine.run(30.0)
    assert c.pods["default/later"].node is None and c.stats.pending == 1
    add_ready_node(c, node("n2"), t=30.0)
    engine.run(40.0)
    assert c.pods["default/later"].node == "n2" and c.stats.pending == 0


def test_reapplying_a_bare_pod_replaces_it() -> None:
    engine, c, _ = cluster()
    add_ready_node(c, node("n1", cpu=1000))
    c.apply(_bare_pod("p", "600m"), 0.0)
    engine.run(10.0)
    c.apply(_bare_pod("p", "700m"), 10.0)
    engine.run(20.0)
    assert c.pods["default/p"].node == "n1" and c.stats.pending == 0 and not c.pending_pods
    assert [p.name for p in c.snapshot.pods_on(c.nodes["n1"].slot)] == ["p"]


def test_an_ordered_statefulset_scales_down_to_its_replicas() -> None:
    engine, c, _ = cluster()
    add_ready_node(c, node("n1"))
    sts = deployment("db", 3)
    sts["kind"] = "StatefulSet"
    c.apply(sts, 0.0)
    engine.run(30.0)
    c.scale("StatefulSet/default/db", 0, 30.0)
    engine.run(31.0)
    assert not c.workloads["StatefulSet/default/db"].pods


def test_an_ordered_statefulset_scales_down_only_while_the_others_are_ready() -> None:
    engine, c, _ = cluster()
    add_ready_node(c, node("n1"))
    sts = deployment("db", 3)
    sts["kind"] = "StatefulSet"
    c.apply(sts, 0.0)
    engine.run(30.0)
    workload = c.workloads["StatefulSet/default/db"]
    workload.pods["db-0"].ready = False  # a predecessor is unhealthy: scale-down waits
    c.scale("StatefulSet/default/db", 1, 30.0)
    assert sorted(workload.pods) == ["db-0", "db-1", "db-2"]


def test_pods_of_a_not_ready_node_are_not_ready_until_it_is_again() -> None:
    engine, c, _ = cluster()
    add_ready_node(c, node("n1"))
    c.apply(deployment("web", 2), 0.0)
    engine.run(10.0)
    pods = list(c.workloads["Deployment/default/web"].pods.values())
    assert all(p.ready for p in pods)
    c.set_node_ready(20.0, "n1", False)
    assert not any(p.ready for p in pods) and all(p.view().ready is False for p in pods)
    assert all(p.view().ready_transition == 20.0 for p in pods)
    c.set_node_ready(50.0, "n1", True)
    assert all(p.ready and p.ready_at == 50.0 for p in pods)


def test_a_pod_on_a_node_that_is_not_ready_yet_waits_for_it() -> None:
    engine, c, _ = cluster()
    c.register_node(0.0, node("n1"), "g", "i-n1")  # registered, not Ready yet
    c.apply(_bare_pod("p", "100m", "n1"), 0.0)
    engine.run(30.0)
    pod = c.pods["default/p"]
    assert pod.phase == "Running" and not pod.ready
    c.set_node_ready(40.0, "n1", True)
    assert pod.ready and pod.ready_at == 40.0


def test_pods_whose_affinity_waits_for_pods_bound_later_in_the_batch_are_retried_at_once() -> None:
    engine, c, _ = cluster()
    add_ready_node(c, node("n1", labels={"topology.kubernetes.io/zone": "a"}))
    follower = deployment("follower", 2, cpu="100m")
    term = {"labelSelector": {"matchLabels": {"app": "leader"}}, "topologyKey": "topology.kubernetes.io/zone"}
    follower["spec"]["template"]["spec"]["affinity"] = {
        "podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}
    }
    c.apply(follower, 0.0)  # queued first: nothing to be near yet
    c.apply(deployment("leader", 1, cpu="100m"), 0.0)
    engine.run(0.0)
    assert not c.pending_pods
    assert all(p.node == "n1" for p in c.workloads["Deployment/default/follower"].pods.values())


def test_pending_pods_with_affinity_are_retried_when_a_pod_they_wait_for_is_bound_later() -> None:
    engine, c, _ = cluster()
    add_ready_node(c, node("n1", labels={"topology.kubernetes.io/zone": "a"}))
    follower = deployment("follower", 2, cpu="100m")
    term = {"labelSelector": {"matchLabels": {"app": "leader"}}, "topologyKey": "topology.kubernetes.io/zone"}
    follower["spec"]["template"]["spec"]["affinity"] = {
        "podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}
    }
    c.apply(follower, 0.0)
    engine.run(10.0)
    assert len(c.pending_pods) == 2
    c.apply(deployment("leader", 1, cpu="100m"), 10.0)  # frees nothing, but binds what they wait for
    engine.run(10.0)
    assert not c.pending_pods


def test_a_statefulset_waits_while_another_pod_has_its_pods_name() -> None:
    engine, c, _ = cluster()
    add_ready_node(c, node("n1"))
    c.apply(_bare_pod("db-0", "100m"), 0.0)
    sts = deployment("db", 2)
    sts["kind"] = "StatefulSet"
    c.apply(sts, 0.0)
    engine.run(30.0)
    assert not c.workloads["StatefulSet/default/db"].pods and c.pods["default/db-0"].owner is None
    c.delete("Pod/default/db-0", 30.0)
    engine.run(60.0)
    assert sorted(c.workloads["StatefulSet/default/db"].pods) == ["db-0", "db-1"]
    assert c.pods["default/db-0"].owner == "StatefulSet/default/db" and c.stats.pending == 0


def test_a_bare_pod_applied_over_a_controllers_pod_takes_its_name_and_the_controller_makes_another() -> None:
    engine, c, _ = cluster()
    add_ready_node(c, node("n1"))
    c.apply(deployment("web", 2), 0.0)
    engine.run(10.0)
    taken = sorted(c.workloads["Deployment/default/web"].pods)[0]
    c.apply(_bare_pod(taken, "100m"), 10.0)
    engine.run(20.0)
    web = c.workloads["Deployment/default/web"]
    assert len(web.pods) == 2 and taken not in web.pods
    assert c.pods[f"default/{taken}"].owner is None and c.stats.pending == 0


def test_deleting_a_controllers_pod_by_name_makes_the_controller_replace_it() -> None:
    engine, c, _ = cluster()
    add_ready_node(c, node("n1"))
    sts = deployment("db", 2)
    sts["kind"] = "StatefulSet"
    sts["spec"]["podManagementPolicy"] = "Parallel"
    c.apply(sts, 0.0)
    engine.run(10.0)
    first = c.pods["default/db-0"]
    c.delete("Pod/default/db-0", 10.0)
    engine.run(20.0)
    assert sorted(c.workloads["StatefulSet/default/db"].pods) == ["db-0", "db-1"]
    assert c.pods["default/db-0"] is not first


def test_daemonset_pods_with_inter_pod_rules_go_through_the_scheduler() -> None:
    engine, c, _ = cluster()
    for name in ("n1", "n2"):
        add_ready_node(c, node(name, labels={"zone": "a"}))
    ds = _daemon_set("100m")
    term = {"labelSelector": {"matchLabels": {"app": "agent"}}, "topologyKey": "zone"}
    ds["spec"]["template"]["spec"]["affinity"] = {
        "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}
    }
    c.apply(ds, 0.0)
    engine.run(1.0)
    pods = list(c.workloads["DaemonSet/default/agent"].pods.values())
    assert sorted(p.node is None for p in pods) == [False, True]  # one per zone: the other waits


def test_a_pod_with_node_name_is_rejected_on_a_host_port_conflict_or_a_selector_mismatch() -> None:
    engine, c, events = cluster()
    add_ready_node(c, node("n1", labels={"pool": "a"}))
    ported = _bare_pod("first", "100m", "n1")
    ported["spec"]["containers"][0]["ports"] = [{"containerPort": 80, "hostPort": 8080}]
    c.apply(ported, 0.0)
    clash = _bare_pod("second", "100m", "n1")
    clash["spec"]["containers"][0]["ports"] = [{"containerPort": 80, "hostPort": 8080}]
    c.apply(clash, 0.0)
    elsewhere = _bare_pod("third", "100m", "n1")
    elsewhere["spec"]["nodeSelector"] = {"pool": "b"}
    c.apply(elsewhere, 0.0)
    engine.run(10.0)
    assert sorted(c.pods) == ["default/first"]
    assert [e[2] for e in events.items if e[1] == "kubelet"] == ["NodePorts", "NodeAffinity"]


def test_pods_of_a_node_not_ready_for_five_minutes_are_evicted_and_replaced() -> None:
    engine, c, events = cluster()
    add_ready_node(c, node("n1"))
    c.apply(deployment("web", 2), 0.0)
    c.apply(_daemon_set("100m"), 0.0)
    engine.run(10.0)
    add_ready_node(c, node("n2"), t=10.0)
    c.set_node_ready(20.0, "n1", False)
    engine.run(319.0)
    assert all(p.node == "n1" for p in c.workloads["Deployment/default/web"].pods.values())
    engine.run(320.0)
    assert all(p.node == "n2" for p in c.workloads["Deployment/default/web"].pods.values())
    assert sorted(p.node for p in c.workloads["DaemonSet/default/agent"].pods.values()) == ["n1", "n2"]
    assert [e[2] for e in events.items if e[1] == "controller"] == ["TaintManagerEviction"] * 2


def test_a_node_ready_again_within_five_minutes_keeps_its_pods() -> None:
    engine, c, events = cluster()
    add_ready_node(c, node("n1"))
    c.apply(deployment("web", 2), 0.0)
    engine.run(10.0)
    c.set_node_ready(20.0, "n1", False)
    c.set_node_ready(200.0, "n1", True)
    c.set_node_ready(250.0, "n1", False)  # a new NotReady spell: its own 300 s
    engine.run(549.0)
    assert len(c.nodes["n1"].pods) == 2 and not [e for e in events.items if e[1] == "controller"]


def _tolerating(name: str, tolerations: list[dict[str, object]]) -> dict[str, object]:
    manifest = _bare_pod(name, "100m")
    manifest["spec"]["tolerations"] = tolerations  # type: ignore[index]
    return manifest


def test_toleration_seconds_decide_when_pods_of_a_not_ready_node_go() -> None:
    """The taint manager evicts each pod after the shortest tolerationSeconds of its tolerations of
    not-ready:NoExecute; no such toleration: the admission plugin's 300 s; one without seconds: never."""
    not_ready = {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"}
    engine, c, events = cluster()
    add_ready_node(c, node("n1"))
    c.apply(_tolerating("quick", [{**not_ready, "tolerationSeconds": 30}]), 0.0)
    c.apply(_tolerating("both", [{**not_ready, "tolerationSeconds": 600}, {"operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 60}]), 0.0)  # fmt: skip
    c.apply(_tolerating("default", []), 0.0)
    c.apply(_tolerating("forever", [not_ready]), 0.0)
    c.apply(_tolerating("now", [{**not_ready, "tolerationSeconds": 0}]), 0.0)
    engine.run(10.0)
    c.set_node_ready(20.0, "n1", False)

    def evicted_at() -> dict[str, float]:
        return {e[3].split("/")[-1]: e[0] for e in events.items if e[2] == "TaintManagerEviction"}

    engine.run(1000.0)
    assert evicted_at() == {"now": 20.0, "quick": 50.0, "both": 80.0, "default": 320.0}
    assert c.pods["default/forever"].node == "n1"


def test_toleration_seconds_need_effect_no_execute() -> None:
    _, c, _ = cluster()
    with pytest.raises(ManifestError, match="only allowed with effect NoExecute"):
        c.apply(_tolerating("bad", [{"key": "x", "operator": "Exists", "tolerationSeconds": 5}]), 0.0)


def test_a_pod_for_another_scheduler_stays_pending_without_a_verdict() -> None:
    engine, c, events = cluster()
    add_ready_node(c, node("n1"))
    other = _bare_pod("custom", "100m")
    other["spec"]["schedulerName"] = "volcano"  # type: ignore[index]
    c.apply(other, 0.0)
    c.apply(_bare_pod("normal", "100m"), 0.0)
    engine.run(30.0)
    assert c.pods["default/normal"].node == "n1"
    pending = c.pods["default/custom"]
    assert pending.node is None and pending.unschedulable is None
    assert "FailedScheduling" not in events.reasons("scheduler")


def test_the_hpa_sees_every_pod_its_target_selector_matches() -> None:
    """Two Deployments whose pods share app=web (stable and canary): the scale target's selector
    app=web lists both, as the API server's label selector does; a selector only one workload's pods
    match keeps the fast path."""
    engine, c, _ = cluster()
    add_ready_node(c, node("n1", cpu=8000))
    stable = deployment("web", 3)
    canary = deployment("web-canary", 1, labels={"app": "web", "track": "canary"})
    canary["spec"]["selector"] = {"matchLabels": {"app": "web", "track": "canary"}}
    c.apply(stable, 0.0)
    c.apply(canary, 0.0)
    engine.run(30.0)
    web = c.workloads["Deployment/default/web"]
    assert c.workload_for_selector("default", web.selector) is None  # shared: no shortcut
    canary_workload = c.workloads["Deployment/default/web-canary"]
    assert c.workload_for_selector("default", canary_workload.selector) is canary_workload
    targets = SimScaleTargets(c)
    assert len(targets.list_pods("default", web.selector)) == 4
    assert len(targets.list_pods("default", canary_workload.selector)) == 1
    metrics = MetricsPipeline(c, [], 30.0)
    metrics.scrape(30.0)
    assert len(metrics.resource_metrics("default", web.selector, "cpu", "")) == 4


# -- the DaemonSet controller and a node being deleted (pkg/controller/daemon) ------------------------

_TO_BE_DELETED = Taint("ToBeDeletedByClusterAutoscaler", "100", "NoSchedule")


def _agents(c: Any) -> dict[str | None, list[Any]]:
    out: dict[str | None, list[Any]] = {}
    for p in c.workloads["DaemonSet/default/agent"].pods.values():
        out.setdefault(p.pinned, []).append(p)
    return out


def test_an_evicted_daemonset_pod_is_not_replaced_on_a_node_with_a_taint_it_does_not_tolerate() -> None:
    """NodeShouldRunDaemonPod: an untolerated NoSchedule taint (CA's ToBeDeletedByClusterAutoscaler is not
    among the tolerations the controller adds to DaemonSet pods) means shouldRun=false, while the pod
    already there may continue running (only NoExecute stops that); while a pod is being deleted it is
    still its node's (nodeToDaemonPods keeps it until it is terminal)."""
    engine, c, _ = cluster()
    add_ready_node(c, node("n1"))
    add_ready_node(c, node("n2"))
    c.apply(_grace(_daemon_set("100m"), 30), 0.0)
    engine.run(1.0)
    c.set_node_taints("n1", (_TO_BE_DELETED,), 1.0)
    assert len(_agents(c)["n1"]) == 1  # the running pod stays
    (old,) = _agents(c)["n1"]
    assert c.evict(old, 2.0) and old.terminating_until == 32.0
    assert _agents(c)["n1"] == [old]  # not replaced while it terminates
    engine.run(40.0)
    assert old.deleted and "n1" not in _agents(c) and len(_agents(c)["n2"]) == 1
    c.set_node_taints("n1", (), 50.0)  # the deletion failed, the node untainted: the controller's node update
    engine.run(51.0)
    assert len(_agents(c)["n1"]) == 1


def test_a_daemonset_that_tolerates_every_taint_replaces_its_pod_once_the_old_one_is_gone() -> None:
    """A DaemonSet with ``tolerations: [{operator: Exists}]`` (common for node agents) should run on the
    tainted node: its evicted pod is replaced, but only once the old one has terminated."""
    engine, c, _ = cluster()
    add_ready_node(c, node("n1"))
    ds = _grace(_daemon_set("100m"), 30)
    ds["spec"]["template"]["spec"]["tolerations"] = [{"operator": "Exists"}]  # type: ignore[index]
    c.apply(ds, 0.0)
    engine.run(1.0)
    c.set_node_taints("n1", (_TO_BE_DELETED,), 1.0)
    (old,) = _agents(c)["n1"]
    assert c.evict(old, 2.0)
    engine.run(31.0)
    assert _agents(c)["n1"] == [old]
    engine.run(32.0)
    (new,) = _agents(c)["n1"]
    assert new is not old and old.deleted
