"""Drains as CA 1.31's evictor runs them (``core/scaledown/actuation/drain.go``): each pod evicted once with
CA's grace period, refused evictions retried every 10 s until ``--max-pod-eviction-time``, the node kept
until the evicted pods are gone (looked for every 5 s, up to ``--max-graceful-termination-sec`` + 30 s),
expendable pods left out, and deletions never asked twice, across restarts too (issue 23 items 2, 3,
10; issue 26 "a restart during --node-delete-delay-after-taint").

The fake API here is ``graceful``: an evicted pod stays Terminating until its grace period is over,
as the API server and a kubelet keep it.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from ca_loop_harness import Harness, node, pod, template

from kubetide.cloud.instance import InstanceState
from kubetide.cluster.autoscaler import StaticAutoscaler
from kubetide.cluster.loop.drain import (
    EVICTION_RETRY_S,
    POD_EVICTION_HEADROOM_S,
    WAIT_POLL_S,
    DrainSettings,
    eviction_grace,
    non_expendable,
)
from kubetide.cluster.options import AutoscalingOptions
from kubetide.cluster.scaledown.taints import TO_BE_DELETED_TAINT
from kubetide.model.pod import Pod
from kubetide.testing.cloud import Call, RecordingCloud

TAINTED = 610.0  # the loop that taints n2 (unneeded since 0, --scale-down-unneeded-time 10m)
DRAIN = TAINTED + 5.0  # --node-delete-delay-after-taint (5s): the evictions, and the first look


def draining(grace: float | None = None, **flags: object) -> Harness:
    """n2 (pod "small", terminationGracePeriodSeconds ``grace``) is tainted at 610 and drained at 615."""
    cloud = RecordingCloud().with_group("ng", 1, 10, target=2, template=template("ng"))
    h = Harness(cloud, AutoscalingOptions.from_flags(dict(flags)))
    h.api.graceful = True
    for name in ("n1", "n2"):
        h.add_node(node(name, "ng"), "ng")
    h.add_pod(pod("big", 1500, node_name="n1"))
    h.add_pod(replace(pod("small", 200, node_name="n2"), termination_grace_s=grace))
    h.run(0.0)
    return h


def run_to(h: Harness, end: float, start: float = TAINTED) -> None:
    """Loops every 10 s from ``start`` to ``end`` (the deletion rounds in between follow)."""
    t = start
    while t <= end:
        h.run(t)
        t += 10.0


def evicted_at(h: Harness, name: str) -> list[float]:
    return [t for p, t in h.api.evictions_at if p == name]


def deletions(h: Harness) -> list[tuple[str, ...]]:
    return [c.args for c in h.cloud.calls_to("delete_nodes")]


# -- the grace period an eviction asks for (drain.go evictPod) ----------------------------------------


@pytest.mark.parametrize(
    ("own", "max_graceful", "expected"),
    [
        (None, 600, 30),  # unset: apiv1.DefaultTerminationGracePeriodSeconds
        (45, 600, 45),
        (600, 600, 600),  # `termination > maxTermination` only: equal stays
        (601, 600, 600),
        (900, 0, 900),  # `maxTermination > 0 &&`: 0 caps nothing
        (0, 600, 0),
    ],
)
def test_an_eviction_asks_for_the_pods_grace_period_capped_by_the_flag(
    own: float | None, max_graceful: int, expected: int
) -> None:
    assert eviction_grace(Pod("p", termination_grace_s=own), max_graceful) == expected


def test_the_wait_limit_is_the_flag_plus_cas_headroom() -> None:
    assert DrainSettings(max_graceful_termination_sec=600).wait_limit == 630.0
    assert DrainSettings(max_graceful_termination_sec=0).wait_limit == POD_EVICTION_HEADROOM_S
    assert (EVICTION_RETRY_S, WAIT_POLL_S, POD_EVICTION_HEADROOM_S) == (10.0, 5.0, 30.0)


def test_expendable_pods_are_those_below_the_cutoff() -> None:
    """core/utils/expendable.go IsExpendablePod: ``priority < cutoff`` (at the cutoff is not)."""
    pods = [Pod("low", priority=-11), Pod("at", priority=-10), Pod("plain")]
    assert [p.name for p in non_expendable(pods, -10)] == ["at", "plain"]
    kept = [Pod("a"), Pod("b")]
    assert non_expendable(kept, -10) is kept


# -- item 2: the node stays until the evicted pods are gone --------------------------------------------


def test_the_node_is_deleted_at_the_first_look_that_finds_the_evicted_pod_gone() -> None:
    h = draining(grace=40)
    run_to(h, 640.0)
    assert h.api.grace_periods == [("small", 40)]  # DeleteOptions.GracePeriodSeconds
    assert deletions(h) == []  # Terminating until 655: the node stays
    assert any(t.key == TO_BE_DELETED_TAINT for t in h.nodes["n2"].taints)
    h.run(650.0)
    assert deletions(h) == [("n2",)]
    # looked for at 615 (at once), then every 5 s: the loops at 620, 630... and the passes between
    assert h.deletion_passes == [615.0, 625.0, 635.0, 645.0, 655.0]


def test_the_flag_caps_the_grace_period_and_so_the_wait() -> None:
    h = draining(grace=3600, **{"max-graceful-termination-sec": 20})
    run_to(h, 640.0)
    assert h.api.grace_periods == [("small", 20)]
    assert deletions(h) == [("n2",)] and h.deletion_passes[-1] == DRAIN + 20


def _stuck(h: Harness) -> None:
    """Evicted pods ignore SIGTERM: they stay whatever their grace period says."""

    def advance(now: float) -> None:
        h.api.now = now

    h.api.advance = advance  # type: ignore[method-assign]


@pytest.mark.parametrize(("max_graceful", "fails_at"), [(10, DRAIN + 40), (7, DRAIN + 40), (0, DRAIN + 30)])
def test_pods_still_there_after_the_wait_fail_the_drain_at_the_first_look_past_the_limit(
    max_graceful: int, fails_at: float
) -> None:
    """waitPodsToDisappear: looks while ``elapsed < maxTermination + 30s``; the first poll time not below
    it fails the drain: ScaleDownFailed on the node, the taint removed, nothing deleted."""
    h = draining(grace=600, **{"max-graceful-termination-sec": max_graceful})
    _stuck(h)
    run_to(h, fails_at - 10.0)  # the rounds up to 5 s before it
    assert not any(e.reason == "ScaleDownFailed" for e in h.events)
    assert any(t.key == TO_BE_DELETED_TAINT for t in h.nodes["n2"].taints)
    h.run(fails_at - 5.0)  # the loop, then the deletion pass at fails_at
    (failed,) = [e for e in h.events if e.reason == "ScaleDownFailed"]
    assert failed.object == "Node/n2" and failed.type == "Warning"
    assert failed.message == (
        "failed to drain and delete node: Failed to drain node /n2: pods remaining after timeout"
    )
    assert not any(t.key == TO_BE_DELETED_TAINT for t in h.nodes["n2"].taints)
    assert deletions(h) == [] and h.evicted == ["small"]


def test_a_pod_gone_at_the_last_look_before_the_limit_lets_the_node_go() -> None:
    h = draining(grace=35, **{"max-graceful-termination-sec": 10})  # evicted with 10 s; limit 40 s
    _stuck(h)
    run_to(h, 640.0)
    del h.pods["small"]  # gone just before the look at 650 (35 s after the evictions: the last one)
    run_to(h, 650.0, 650.0)
    assert deletions(h) == [("n2",)]
    assert not any(e.reason == "ScaleDownFailed" for e in h.events)


def test_no_grace_period_means_gone_at_once_and_the_node_goes_in_the_same_round() -> None:
    h = draining(grace=0)
    h.run(TAINTED)
    assert h.api.grace_periods == [("small", 0)] and deletions(h) == [("n2",)]


# -- refused evictions: retried every 10 s from the drain's start, until --max-pod-eviction-time --------


@pytest.mark.parametrize(
    ("max_eviction", "last_try", "gives_up"),
    [(120.0, 110.0, 120.0), (115.0, 110.0, 120.0), (0.0, 0.0, 10.0), (10.0, 0.0, 10.0), (11.0, 10.0, 20.0)],
)
def test_refused_evictions_are_tried_at_each_retry_time_before_the_limit(
    max_eviction: float, last_try: float, gives_up: float
) -> None:
    """drain.go evictPod: ``for first := true; first || time.Now().Before(retryUntil); sleep(10s)``."""
    h = draining(**{"max-pod-eviction-time": max_eviction})
    h.refuse_evictions = True
    run_to(h, DRAIN + gives_up - 10.0)  # the rounds up to 5 s before it
    assert not any(e.reason == "ScaleDownFailed" for e in h.events)
    h.run(DRAIN + gives_up - 5.0)  # the loop, then the deletion pass at the retry time that gives up
    assert h.deletion_passes[-1] == DRAIN + gives_up
    tries = int(last_try // EVICTION_RETRY_S) + 1
    assert evicted_at(h, "small") == [DRAIN + k * EVICTION_RETRY_S for k in range(tries)]
    failed = [e for e in h.events if e.reason == "ScaleDownFailed" and e.object == "Node/n2"]
    assert len(failed) == 1 and failed[0].message.startswith("failed to drain and delete node")
    assert not any(t.key == TO_BE_DELETED_TAINT for t in h.nodes["n2"].taints)


def test_the_eviction_clock_starts_when_the_drain_does_not_at_the_taint() -> None:
    """actuator.go deleteNodesAsync sleeps --node-delete-delay-after-taint, then drain.go initiateEviction
    sets ``retryUntil := time.Now().Add(MaxPodEvictionTime)``: with a 30 s delay the attempts run from
    taint + 30 s and the drain fails at taint + 30 s + the limit (not at taint + the limit)."""
    h = draining(**{"node-delete-delay-after-taint": 30.0, "max-pod-eviction-time": 60.0})
    h.refuse_evictions = True
    run_to(h, TAINTED + 80.0)
    assert evicted_at(h, "small") == [TAINTED + 30.0 + k * EVICTION_RETRY_S for k in range(6)]
    assert not any(e.reason == "ScaleDownFailed" for e in h.events)
    h.run(TAINTED + 90.0)  # 30 + 60: the deadline
    assert [e.object for e in h.events if e.reason == "ScaleDownFailed"][-1] == "Node/n2"
    assert len(evicted_at(h, "small")) == 6


def test_no_eviction_is_attempted_once_the_deadline_has_passed() -> None:
    """drain.go evictPod: ``for first := true; first || time.Now().Before(retryUntil); ...``: after the
    first attempt, none at or after the deadline. A pod that lands on the draining node after the drain's
    deadline (kubetide evicts newcomers, CA would not see them) is not evicted: the drain fails naming it,
    as the node must not go with a pod kubetide has not moved."""
    h = draining(grace=300)  # "small" terminates for 5 minutes: the drain is still waiting at 740
    run_to(h, 730.0)
    assert evicted_at(h, "small") == [DRAIN]
    h.add_pod(replace(pod("late", 100, node_name="n2"), labels={"app": "late"}))
    h.run(740.0)  # DRAIN + 120 (--max-pod-eviction-time) is 735: past the deadline
    assert evicted_at(h, "late") == []
    failed = [e for e in h.events if e.reason == "ScaleDownFailed"]
    assert [e.object for e in failed] == ["Pod/default/late", "Node/n2"]
    assert (
        failed[-1].message
        == "failed to drain and delete node: failed to evict pods from node n2: default/late"
    )
    assert deletions(h) == []


def test_a_drain_resumed_after_a_restart_runs_its_own_eviction_clock() -> None:
    """A restarted process's drain is a new drain (upstream's goroutine died with the process): its
    evictions run from its first round for --max-pod-eviction-time, as initiateEviction's retryUntil."""
    h = draining()
    h.refuse_evictions = True
    run_to(h, 700.0)  # the old drain tried at 615 ... 705 (its deadline would be 735)
    h.restart()
    run_to(h, 830.0, 710.0)
    tries = evicted_at(h, "small")
    assert tries == [DRAIN + k * EVICTION_RETRY_S for k in range(10)] + [710.0 + k * 10.0 for k in range(12)]
    failed = [e for e in h.events if e.reason == "ScaleDownFailed" and e.object == "Node/n2"]
    assert len(failed) == 1  # at 830 = 710 + 120, not at 735


# -- item 3: a pod is evicted once per drain --------------------------------------------------------------


def test_a_terminating_pod_is_evicted_once_however_long_the_drain_takes() -> None:
    h = draining(grace=120)
    run_to(h, 740.0)
    assert [c.target for c in h.api.calls_to("evict")] == ["small"]
    assert deletions(h) == [("n2",)]  # at 735, once it was gone


def test_pods_evicted_while_another_is_refused_are_not_evicted_again() -> None:
    h = draining(grace=60)
    h.add_pod(replace(pod("held", 100, node_name="n2"), labels={"app": "db"}))
    h.api.refuse_pods = {"held"}  # a budget holds it
    run_to(h, 650.0)
    h.api.refuse_pods = set()
    run_to(h, 720.0, 660.0)
    assert evicted_at(h, "small") == [DRAIN]
    assert evicted_at(h, "held") == [DRAIN + k * EVICTION_RETRY_S for k in range(6)]  # 615 ... 665
    # the wait starts once every eviction is accepted (665): "small" goes at 675, "held" at 695
    assert deletions(h) == [("n2",)] and h.deletion_passes[-1] == 695.0


def test_a_pod_already_terminating_when_the_drain_starts_is_evicted_once_and_waited_for() -> None:
    """drain.go podsToEvict takes every pod of the node, terminating ones too (the API server accepts
    their eviction without asking the budget); once asked, it is waited for like the others."""
    h = draining(grace=30)
    h.pods["small"] = replace(h.pods["small"], deletion_time=625.0)  # deleted by someone at 595
    h.run(TAINTED)
    assert evicted_at(h, "small") == [DRAIN]
    assert deletions(h) == []  # the API server kept the earlier, shorter deadline (625)
    h.run(620.0)
    assert deletions(h) == [("n2",)] and h.deletion_passes[-1] == 625.0
    assert evicted_at(h, "small") == [DRAIN]


# -- item 10: expendable pods are not part of the drain ---------------------------------------------------


def test_an_expendable_pod_is_neither_evicted_nor_waited_for_and_goes_with_the_node() -> None:
    h = draining(grace=30)
    h.add_pod(replace(pod("batch", 100, node_name="n2"), priority=-100, termination_grace_s=600))
    run_to(h, 650.0)
    assert [c.target for c in h.api.calls_to("evict")] == ["small"]
    assert not any(e.object == "Pod/default/batch" for e in h.events)
    assert deletions(h) == [("n2",)] and h.deletion_passes[-1] == DRAIN + 30


def test_an_expendable_bare_pod_does_not_abort_the_drain() -> None:
    """createSnapshot leaves expendable pods out before GetPodsToMove: one that could not be moved
    (no controller) blocks nothing."""
    h = draining(grace=0)
    h.add_pod(replace(pod("bare", 100, node_name="n2"), owners=(), priority=-100))
    h.run(TAINTED)
    assert deletions(h) == [("n2",)]
    assert not any(e.reason == "ScaleDownFailed" for e in h.events)


# -- issue 26: deletions are idempotent across restarts ---------------------------------------------------


def _machines_linger(h: Harness) -> None:
    """As on a real cloud: a deleted instance is listed as Deleting, and its Node stays, for a while."""
    h.cloud.scale_down_hooks[:] = [
        lambda group, name: h.cloud.with_node(group, h.nodes[name], InstanceState.Deleting)
    ]


def test_a_restart_during_the_delay_after_taint_deletes_and_counts_the_node_once() -> None:
    h = draining(grace=0, **{"node-delete-delay-after-taint": 25.0})
    _machines_linger(h)
    old = h.ca
    assert old is not None
    first = old.run_once(h.world(), TAINTED)
    assert first.deletions_due_at == TAINTED + 25
    h.restart()  # before the drain
    new = h.ca
    assert new is not None
    new.run_once(h.world(), TAINTED + 10)
    # Both wake-ups come: the new process's, due from the taint's whole second, and the old one's.
    removed = [new.run_deletions(h.world(), TAINTED + 25), new.run_deletions(h.world(), TAINTED + 25.5)]
    later = new.run_once(h.world(), TAINTED + 30)
    assert deletions(h) == [("n2",)]
    assert sum(r.stats.nodes_removed for r in [*removed, later]) == 1
    assert sum(sum(r.deleted_between_loops.values()) for r in removed) == 1


def test_a_new_process_asks_the_cloud_before_deleting_between_loops() -> None:
    """A restarted CA whose first act is a deletion wake-up (its cluster state not read yet) finds the
    instance terminating in its group and leaves the node alone."""
    h = draining(grace=0)
    _machines_linger(h)
    h.run(TAINTED)
    assert deletions(h) == [("n2",)]
    fresh = StaticAutoscaler(h.cloud, h.api, h.options)
    result = fresh.run_deletions(h.world(), TAINTED + 20)
    assert deletions(h) == [("n2",)] and result.stats.nodes_removed == 0
    assert h.cloud.calls_to("delete_nodes") == [Call("delete_nodes", "ng", ("n2",))]


def test_a_restart_mid_wait_evicts_the_terminating_pod_once_more_and_deletes_once() -> None:
    h = draining(grace=60)
    run_to(h, 640.0)
    h.restart()
    run_to(h, 700.0, 650.0)
    assert evicted_at(h, "small") == [DRAIN, 650.0]  # the new process's drain asks once
    assert deletions(h) == [("n2",)] and h.deletion_passes[-1] == 675.0


def test_evictions_are_counted_as_ca_counts_them() -> None:
    """``evicted_pods_total{eviction_result}``: one success per accepted eviction, one failure per pod
    given up; a deletion pass's count joins the next loop's metrics."""
    h = draining(grace=30)
    h.add_pod(replace(pod("held", 100, node_name="n2"), labels={"app": "db"}))
    h.api.refuse_pods = {"held"}
    counted: dict[str, float] = {}
    for t in range(610, 760, 10):
        metrics = h.run(float(t)).metrics
        assert metrics is not None
        for outcome, count in metrics.evicted_pods.items():
            counted[outcome] = counted.get(outcome, 0) + count
    assert counted == {"succeeded": 1, "failed": 1}


def test_a_pod_terminating_for_long_is_evicted_and_waited_for_too() -> None:
    """The long-terminating drain rule only lets the planner ignore such a pod; drain.go podsToEvict
    still takes every pod of the node: a pod stuck Terminating (a finalizer) is evicted once and waited
    for, and the drain fails when it is still there after the wait."""
    h = draining(grace=30, **{"max-graceful-termination-sec": 10})
    h.add_pod(replace(pod("stuck", 100, node_name="n2"), deletion_time=0.0))  # terminating since -30
    _stuck(h)
    run_to(h, 650.0)
    assert evicted_at(h, "stuck") == [DRAIN] and evicted_at(h, "small") == [DRAIN]
    (failed,) = [e for e in h.events if e.reason == "ScaleDownFailed"]
    assert failed.message.endswith("pods remaining after timeout") and deletions(h) == []
