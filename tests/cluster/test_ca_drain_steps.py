"""Each round's step of a deletion, decided from the drain's frozen state before anything is done
(``plan_step``), and what the evictions' answers decide next (``look``): CA 1.31's actuator
(``core/scaledown/actuation/drain.go``: ``initiateEviction``, ``evictPod``, ``waitPodsToDisappear``;
``actuator.go``: ``deleteNodesAsync``' sleep of ``--node-delete-delay-after-taint``) as values."""

from __future__ import annotations

from dataclasses import replace

from ca_loop_harness import node, pod

from kubetide.cluster.loop.deletions import Deletion, LookResult, StepKind, look, plan_step
from kubetide.cluster.loop.drain import DrainSettings, DrainState
from kubetide.model.pod import Pod
from kubetide.scheduling.drainability import DrainContext
from kubetide.testing.cloud import RecordingCloud

SETTINGS = DrainSettings(max_pod_eviction_time=120.0, max_graceful_termination_sec=600, delay_after_taint=5.0)
CTX = DrainContext(0.0)


def _deletion(since: float = 100.0) -> Deletion:
    cloud = RecordingCloud().with_group("ng", 0, 5, 2)
    return Deletion(node("n1", "ng"), cloud.groups["ng"], since)


def _pods(*names: str) -> dict[str, list[Pod]]:
    return {"n1": [replace(pod(name, node_name="n1"), termination_grace_s=45) for name in names]}


def test_nothing_before_the_delay_after_taint_and_nothing_twice_in_the_cloud() -> None:
    d = _deletion()
    step = plan_step(d, None, _pods("a"), CTX, SETTINGS, 104.9, deleting_in_cloud=False)
    assert (step.kind, step.due, step.state) == (StepKind.NOT_YET, 105.0, None)
    assert plan_step(d, None, _pods("a"), CTX, SETTINGS, 200.0, deleting_in_cloud=True).kind is StepKind.SKIP


def test_the_first_step_evicts_every_pod_once_with_its_grace_period() -> None:
    step = plan_step(_deletion(), None, _pods("a", "b"), CTX, SETTINGS, 105.0, deleting_in_cloud=False)
    assert step.kind is StepKind.EVICT and step.tick == 0
    assert [(p.name, grace) for p, grace in step.evict] == [("a", 45), ("b", 45)]
    assert [p.name for p in step.announce] == ["a", "b"]
    assert (
        step.state is not None
        and step.state.started == 105.0
        and step.state.tried == {"default/a", "default/b"}
    )


def test_a_refused_eviction_is_retried_at_the_next_retry_time_and_given_up_at_the_deadline() -> None:
    # a was refused at the drain's start (tick 0): asked and announced, not evicted.
    state = DrainState(started=105.0, tried=frozenset({"default/a"}), eviction_tick=0, best_effort=())
    d, pods = _deletion(), _pods("a")
    waiting = plan_step(d, state, pods, CTX, SETTINGS, 110.0, deleting_in_cloud=False)
    assert (waiting.kind, waiting.due) == (StepKind.RETRY_LATER, 115.0)
    retry = plan_step(d, state, pods, CTX, SETTINGS, 115.0, deleting_in_cloud=False)
    assert retry.kind is StepKind.EVICT and retry.announce == () and retry.tick == 1
    # evictPod: no attempt at or after retryUntil (start + --max-pod-eviction-time).
    late = replace(state, eviction_tick=11)
    assert (
        plan_step(d, late, pods, CTX, SETTINGS, 224.9, deleting_in_cloud=False).kind is StepKind.RETRY_LATER
    )
    given_up = plan_step(d, late, pods, CTX, SETTINGS, 225.0, deleting_in_cloud=False)
    assert given_up.kind is StepKind.GIVE_UP and [p.name for p in given_up.refused] == ["a"]


def test_a_pod_that_can_no_longer_be_moved_aborts_the_deletion() -> None:
    bare = replace(pod("bare", node_name="n1"), owners=())
    step = plan_step(_deletion(), None, {"n1": [bare]}, CTX, SETTINGS, 105.0, deleting_in_cloud=False)
    assert step.kind is StepKind.ABORT and "pod default/bare can no longer be moved" in step.message


def test_the_wait_looks_every_poll_until_the_evicted_pods_are_gone_or_the_limit() -> None:
    d, pods = _deletion(), _pods("a")["n1"]
    evicted = DrainState(started=105.0, evicted={"default/a": 45}, eviction_tick=0, best_effort=())
    first = look(d, evicted, pods, SETTINGS, 105.0)
    assert (first.result, first.due, first.state.wait_from) == (LookResult.WAIT, 110.0, 105.0)
    assert look(d, first.state, pods, SETTINGS, 107.0).result is LookResult.WAIT  # this poll time: looked
    assert look(d, first.state, [], SETTINGS, 110.0).result is LookResult.READY
    # waitPodsToDisappear: --max-graceful-termination-sec + 30 s of headroom.
    limit = look(d, replace(first.state, poll_tick=125), pods, SETTINGS, 105.0 + 630.0)
    assert limit.result is LookResult.TIMEOUT and "pods remaining after timeout" in limit.message
