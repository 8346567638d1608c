"""DaemonSet pods on the nodes CA deletes: evicted best-effort, as CA 1.31's actuator and evictor do
(``core/scaledown/actuation/drain.go``: DrainNode, EvictDaemonSetPods, podsToEvict, evictPod;
``group_deletion_scheduler.go`` prepareNodeForDeletion; ``utils/daemonset`` PodsToEvict).

``--daemonset-eviction-for-occupied-nodes`` (default true) for drained nodes and
``--daemonset-eviction-for-empty-nodes`` (default false) for empty ones, overridden per pod by the
``cluster-autoscaler.kubernetes.io/enable-ds-eviction`` annotation. Best-effort: retried until
``--max-pod-eviction-time``, then given up with no error, no event, no count; never waited for.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from ca_loop_harness import Harness, node, pod, template
from test_ca_drain_wait import DRAIN, TAINTED, deletions, draining, evicted_at, run_to

from kubetide.cluster.flags import parse_flags
from kubetide.cluster.loop.drain import daemonset_pods_to_evict
from kubetide.cluster.options import AutoscalingOptions
from kubetide.model.pod import Pod
from kubetide.testing.cloud import RecordingCloud

ANNOTATION = "cluster-autoscaler.kubernetes.io/enable-ds-eviction"


def ds_pod(name: str, node_name: str, *, grace: int | None = 30, annotation: str | None = None) -> Pod:
    p = replace(pod(name, 50, node_name=node_name, owner="DaemonSet"), termination_grace_s=grace)
    if annotation is not None:
        p = p.evolve(annotations={ANNOTATION: annotation})
    return p


# -- which DaemonSet pods (utils/daemonset PodsToEvict) ----------------------------------------------


@pytest.mark.parametrize(
    ("annotation", "by_default", "evicted"),
    [
        (None, True, True),
        (None, False, False),
        ("true", False, True),  # the annotation wins over the flag
        ("false", True, False),
        ("True", True, False),  # only "true" evicts: any other value keeps the pod
    ],
)
def test_the_annotation_overrides_the_flag(annotation: str | None, by_default: bool, evicted: bool) -> None:
    pods = [ds_pod("ds", "n", annotation=annotation), pod("web", node_name="n")]
    assert [p.name for p in daemonset_pods_to_evict(pods, by_default)] == (["ds"] if evicted else [])


def test_both_flags_are_accepted_with_any_value() -> None:
    """No longer 'only the default': kubetide honours both."""
    flags = {"daemonset-eviction-for-occupied-nodes": False, "daemonset-eviction-for-empty-nodes": True}
    values, problems = parse_flags(flags)
    assert problems == []
    options = AutoscalingOptions.from_flags(values)
    assert not options.daemonset_eviction_for_occupied_nodes and options.daemonset_eviction_for_empty_nodes


# -- drained (occupied) nodes: DrainNode ----------------------------------------------------------------


def test_a_drained_nodes_daemonset_pods_are_evicted_and_not_waited_for() -> None:
    """DrainNode: the DaemonSet pods are evicted with the others (``deleting pod for node scale down`` on
    each, the grace period capped the same way), but waitPodsToDisappear waits only for the others, and
    evicted_pods_total counts only the others."""
    h = draining(grace=30)
    h.add_pod(ds_pod("ds", "n2", grace=600))
    counted: dict[str, float] = {}
    for t in range(610, 660, 10):
        metrics = h.run(float(t)).metrics
        assert metrics is not None
        for outcome, count in metrics.evicted_pods.items():
            counted[outcome] = counted.get(outcome, 0) + count
    assert evicted_at(h, "ds") == [DRAIN] and evicted_at(h, "small") == [DRAIN]
    assert ("ds", 600) in h.api.grace_periods
    announced = [e.object for e in h.events if e.message == "deleting pod for node scale down"]
    assert announced == ["Pod/default/small", "Pod/default/ds"]
    # "small" is gone at 645 (30 s): the node goes then, the DaemonSet pod still Terminating on it.
    assert deletions(h) == [("n2",)] and h.deletion_passes[-1] == DRAIN + 30.0
    assert counted == {"succeeded": 1}


def test_without_the_occupied_nodes_flag_a_drain_leaves_daemonset_pods() -> None:
    h = draining(grace=0, **{"daemonset-eviction-for-occupied-nodes": False})
    h.add_pod(ds_pod("ds", "n2"))
    h.add_pod(ds_pod("opted-in", "n2", annotation="true"))
    run_to(h, 620.0)
    assert evicted_at(h, "ds") == [] and evicted_at(h, "opted-in") == [DRAIN]
    assert deletions(h) == [("n2",)]


def test_a_refused_daemonset_eviction_is_retried_until_the_deadline_then_dropped() -> None:
    """evictPod with ``fullEvictionPod == false``: retried every 10 s while before retryUntil, then no
    ScaleDownFailed event and no error; initiateEviction waits for every eviction's answer, so the wait
    for the other pods (and the deletion) starts at the deadline."""
    h = draining(grace=0, **{"max-pod-eviction-time": 30.0})
    h.add_pod(ds_pod("ds", "n2"))
    h.api.refuse_pods = {"ds"}
    run_to(h, 660.0)
    assert evicted_at(h, "ds") == [DRAIN, DRAIN + 10.0, DRAIN + 20.0]
    assert evicted_at(h, "small") == [DRAIN]  # once: accepted at once
    assert not any(e.reason == "ScaleDownFailed" for e in h.events)
    assert deletions(h) == [("n2",)] and h.deletion_passes[-1] == DRAIN + 30.0


def test_daemonset_pods_that_come_after_the_drain_started_are_left() -> None:
    """The DaemonSet pods to evict are those of the node when its drain starts (createSnapshot): a new
    one (a DaemonSet tolerating the taint) is not evicted, and the node does not wait for it."""
    h = draining(grace=30)
    h.add_pod(ds_pod("ds", "n2", grace=0))
    run_to(h, 620.0)
    h.add_pod(ds_pod("ds-again", "n2"))
    run_to(h, 650.0, 630.0)
    assert evicted_at(h, "ds") == [DRAIN] and evicted_at(h, "ds-again") == []
    assert deletions(h) == [("n2",)]


# -- empty nodes: EvictDaemonSetPods -------------------------------------------------------------------


def _empty_node(**flags: object) -> Harness:
    """n2 has only a DaemonSet pod: empty, deleted at 610 + 5 s (--node-delete-delay-after-taint)."""
    cloud = RecordingCloud().with_group("ng", 1, 10, target=2, template=template("ng"))
    h = Harness(cloud, AutoscalingOptions.from_flags(dict(flags)))
    h.api.graceful = True
    for name in ("n1", "n2"):
        h.add_node(node(name, "ng"), "ng")
    h.add_pod(pod("big", 1500, node_name="n1"))
    h.add_pod(ds_pod("ds", "n2", grace=120))
    h.run(0.0)
    return h


def test_an_empty_nodes_daemonset_pods_stay_by_default() -> None:
    h = _empty_node()
    run_to(h, 620.0)
    assert h.api.calls_to("evict") == [] and deletions(h) == [("n2",)]


def test_with_the_empty_nodes_flag_they_are_evicted_and_the_node_goes_at_once() -> None:
    """prepareNodeForDeletion (not drain): EvictDaemonSetPods, errors ignored; waitPodsToDisappear has
    no pod to wait for, so the node is deleted in the same round."""
    h = _empty_node(**{"daemonset-eviction-for-empty-nodes": True})
    run_to(h, 620.0)
    assert evicted_at(h, "ds") == [TAINTED + 5.0]
    assert deletions(h) == [("n2",)] and h.deletion_passes == [TAINTED + 5.0]
    (removed,) = [e for e in h.events if e.message == "nodes removed by cluster autoscaler"]
    assert removed.object == "Node/n2"
