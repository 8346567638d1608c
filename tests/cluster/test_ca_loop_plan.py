"""Decide, then act: the loop's frozen plan (``LoopPlan``), deciding without acting
(``StaticAutoscaler.decide``), and the one actuator carrying a plan out (``LoopActuator.execute``).

Upstream's order holds in the plan's phases (``static_autoscaler.go`` ``RunOnce``): housekeeping, the
deletions in progress, the scale-up, which ends the loop when it scales (``postScaleUp``), the
scale-down, a refused taint ending the loop before ``--enforce-node-group-min-size``
(``StartDeletion``'s error)."""

from __future__ import annotations

from dataclasses import FrozenInstanceError, replace

import pytest
from ca_loop_harness import Harness, node, pod, template

from kubetide.cluster.loop.deletions import DrainStep, StepKind
from kubetide.cluster.loop.plan import DrainRound, LoopPlan, MinSizeRaises, Notices
from kubetide.cluster.loop.scaledown_plan import ScaleDownPlan
from kubetide.cluster.loop.scaleup_decision import ScaleUpDecision
from kubetide.cluster.options import AutoscalingOptions
from kubetide.cluster.reasons import ScaleDownResult
from kubetide.testing.cloud import RecordingCloud

WRITES = ("increase_size", "delete_nodes", "force_delete_nodes", "decrease_target_size")


def _pending() -> Harness:
    """One full node, one pending pod: a scale-up of ng by one."""
    h = Harness(RecordingCloud().with_group("ng", 1, 5, 1, template=template("ng")))
    h.add_node(node("n0", "ng"), "ng")
    h.add_pod(pod("busy", 1500, node_name="n0"))
    h.add_pod(pod("pending", 1500))
    return h


def _idle(**flags: object) -> Harness:
    """Three nodes, two of them idle: scale-down once they have been unneeded for 10 minutes."""
    h = Harness(
        RecordingCloud().with_group("ng", 1, 5, 3, template=template("ng")),
        AutoscalingOptions.from_flags(dict(flags)),
    )
    for name in ("n0", "n1", "n2"):
        h.add_node(node(name, "ng"), "ng")
    h.add_pod(pod("busy", 1500, node_name="n0"))
    return h


def _writes(h: Harness) -> list[object]:
    return [c for c in h.cloud.calls if c.method in WRITES] + list(h.api.calls)


def test_deciding_changes_nothing_and_says_what_acting_would_do() -> None:
    h = _pending()
    assert h.ca is not None
    plan = h.ca.decide(h.world(), 0.0)
    assert _writes(h) == [] and h.events == []
    decision = plan.scale_up
    assert decision is not None and decision.plan is not None
    assert [(i.group, i.current_size, i.new_size) for i in decision.plan.infos] == [("ng", 1, 2)]
    assert plan.stopped == "scale-up: Successful" and plan.scale_down is None
    # Nothing was made, so nothing is remembered as made: the next loop scales up, as it would have.
    result = h.run(10.0)
    assert result.scale_up_result == "Successful"
    assert [c.args for c in h.cloud.calls_to("increase_size")] == [(1,)]


def test_the_actuator_carries_a_decided_plan_out_and_records_what_it_did() -> None:
    h = _pending()
    assert h.ca is not None
    plan = h.ca.decide(h.world(), 0.0)
    outcome = h.ca.actuator.execute(plan)
    assert [c.args for c in h.cloud.calls_to("increase_size")] == [(1,)]
    assert plan.scale_up is not None and plan.scale_up.plan is not None
    assert outcome.scaled_up == list(plan.scale_up.plan.infos) and outcome.failures == []
    assert "TriggeredScaleUp" in [e.reason for e in outcome.events]


def test_a_failed_increase_is_an_outcome_the_loop_reports() -> None:
    h = _pending()
    h.cloud.with_failure("increase_size")
    result = h.run(0.0)
    assert result.scale_up_result == "Error"
    assert [(f.action, f.target) for f in result.failures] == [("increase_size", "NodeGroup/ng")]
    assert result.plan is not None and result.plan.stopped == "scale-up: Error"


def test_run_once_plans_in_upstreams_order_and_the_plan_is_frozen() -> None:
    h = _idle()
    h.run(0.0)
    result = h.run(610.0)
    plan = result.plan
    assert isinstance(plan, LoopPlan) and plan.stopped is None and plan.now == 610.0
    kinds = [type(p) for p in plan.phases]
    assert kinds.index(ScaleUpDecision) < kinds.index(ScaleDownPlan) < kinds.index(DrainRound)
    scale_down = plan.scale_down
    assert scale_down is not None and scale_down.result is ScaleDownResult.NODE_DELETE_STARTED
    assert sorted(d.node.name for d in scale_down.delete) == ["n1", "n2"]
    assert all(d.empty and d.reason == "empty" for d in scale_down.delete)
    (first_steps,) = [p for p in plan.phases if isinstance(p, DrainRound)]
    assert first_steps.started and all(isinstance(s, DrainStep) for s in first_steps.steps)
    # --node-delete-delay-after-taint (5s by default): the first step waits for it.
    assert {s.kind for s in first_steps.steps} == {StepKind.NOT_YET}
    with pytest.raises(FrozenInstanceError):
        plan.stopped = "changed"  # type: ignore[misc]


def test_deciding_a_scale_down_taints_nothing_and_keeps_the_timers() -> None:
    h = _idle()
    assert h.ca is not None
    h.ca.decide(h.world(), 0.0)
    plan = h.ca.decide(h.world(), 610.0)
    assert plan.scale_down is not None and len(plan.scale_down.delete) == 2
    assert _writes(h) == []
    # The timers are a decision: they went on. The deletions were not made: still unneeded.
    assert {name: u.since for name, u in h.ca.unneeded.items()} == {"n1": 0.0, "n2": 0.0}
    again = h.ca.decide(h.world(), 620.0)
    assert again.scale_down is not None and len(again.scale_down.delete) == 2


def test_a_refused_taint_ends_the_loop_before_the_min_sizes() -> None:
    h = _idle(**{"enforce-node-group-min-size": True})
    h.api.with_failure("add_node_taint", "n1")
    h.run(0.0)
    result = h.run(610.0)
    assert result.scale_down_result == "Error"
    assert result.error == "failed to scale down: couldn't taint a node with ToBeDeleted"
    plan = result.plan
    assert plan is not None and plan.stopped == "a node's ToBeDeleted taint was refused"
    assert not any(isinstance(p, MinSizeRaises) for p in plan.phases)
    assert ("add_node_taint", "Node/n1") in [(f.action, f.target) for f in result.failures]


def test_the_cluster_unhealthy_is_a_notice_that_ends_the_plan() -> None:
    h = _idle(**{"ok-total-unready-count": 0, "max-total-unready-percentage": 0})
    h.nodes["n2"] = replace(h.nodes["n2"], ready=False)
    result = h.run(0.0)
    plan = result.plan
    assert plan is not None and plan.stopped == "the cluster is unhealthy"
    assert isinstance(plan.phases[-1], Notices) and plan.phases[-1].events[0].reason == "ClusterUnhealthy"
    assert plan.scale_up is None
