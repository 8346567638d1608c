"""Decide, then act: ``decide`` writes nothing; ``complete`` turns the caller's scale-write outcome into
upstream's conditions and events and commits the controller's memory as upstream does."""

from __future__ import annotations

import pytest

from kubetide.hpa.controller import HorizontalController
from kubetide.hpa.decision import RESCALED, RescaleOutcome

from .world import World, hpa

BEHAVIOR = {"scaleUp": {"stabilizationWindowSeconds": 0}}


def conditions(status: object) -> dict[str, tuple[str, str]]:
    return {c.type: (c.status, c.reason) for c in status.conditions}  # type: ignore[attr-defined]


def test_decide_writes_neither_the_target_nor_the_memory() -> None:
    world = World(replicas=2, usage_per_pod=900)
    controller = HorizontalController(world, world)
    decision = controller.decide(hpa(utilization=50, behavior=BEHAVIOR), 0.0)
    assert decision.rescale and decision.desired_replicas == 4 and decision.current_replicas == 2
    assert decision.reason == "cpu resource utilization (percentage of request) above target"
    assert world.writes == []
    assert controller.state("default/web").recommendations is None  # not even the first-sync seed
    assert decision.recommendations is not None and [r.replicas for r in decision.recommendations] == [2, 4]
    assert decision.scale_event is not None and decision.scale_event.replica_change == 2
    assert decision.metric_statuses and decision.metric_statuses[0]["type"] == "Resource"


def test_complete_after_a_successful_write_commits_everything() -> None:
    world = World(replicas=2, usage_per_pod=900)
    controller = HorizontalController(world, world)
    target = hpa(utilization=50, behavior=BEHAVIOR)
    decision = controller.decide(target, 0.0)
    result = controller.complete(decision, RESCALED, 1.0)
    assert result.scaled and result.desired_replicas == 4 and result.status.desired_replicas == 4
    assert conditions(result.status)["AbleToScale"] == ("True", "SucceededRescale")
    assert [(e.type, e.reason) for e in result.events] == [("Normal", "SuccessfulRescale")]
    assert result.status.last_scale_time == 1.0
    state = controller.state(target.key)
    assert [r.replicas for r in state.recommendations or []] == [2, 4]
    assert [(e.replica_change, e.timestamp) for e in state.scale_up_events] == [(2, 1.0)]


def test_complete_after_a_failed_write_reports_it_and_keeps_only_the_recommendations() -> None:
    world = World(replicas=2, usage_per_pod=900)
    controller = HorizontalController(world, world)
    target = hpa(utilization=50, behavior=BEHAVIOR)
    decision = controller.decide(target, 0.0)
    result = controller.complete(decision, RescaleOutcome("the server is on fire"), 0.0)
    assert not result.scaled
    assert result.status.desired_replicas == target.status.desired_replicas  # unchanged, as upstream
    assert result.status.current_replicas == 2
    assert conditions(result.status)["AbleToScale"] == ("False", "FailedUpdateScale")
    failed = result.events[-1]
    assert (failed.type, failed.reason) == ("Warning", "FailedRescale")
    assert failed.message == (
        "New size: 4; reason: cpu resource utilization (percentage of request) above target; "
        "error: the server is on fire"
    )
    assert result.error == "failed to rescale Deployment/default/web: the server is on fire"
    state = controller.state(target.key)
    assert [r.replicas for r in state.recommendations or []] == [2, 4]  # stored while normalizing
    assert state.scale_up_events == []  # only a rescale that happened is an event


def test_complete_without_a_rescale_commits_the_recommendations() -> None:
    world = World(replicas=2, usage_per_pod=500)
    controller = HorizontalController(world, world)
    decision = controller.decide(hpa(utilization=50), 0.0)
    assert not decision.rescale
    result = controller.complete(decision, None, 0.0)
    assert not result.scaled and result.events == ()
    assert [r.replicas for r in controller.state("default/web").recommendations or []] == [2, 2]


def test_complete_needs_an_outcome_exactly_when_a_rescale_was_wanted() -> None:
    world = World(replicas=2, usage_per_pod=900)
    controller = HorizontalController(world, world)
    decision = controller.decide(hpa(utilization=50), 0.0)
    with pytest.raises(ValueError, match="outcome"):
        controller.complete(decision, None, 0.0)
    still = controller.decide(hpa(utilization=50, max_replicas=2), 0.0)
    assert not still.rescale
    with pytest.raises(ValueError, match="outcome"):
        controller.complete(still, RESCALED, 0.0)


def test_reconcile_is_decide_write_complete() -> None:
    one, two = World(replicas=2, usage_per_pod=900), World(replicas=2, usage_per_pod=900)
    target = hpa(utilization=50, behavior=BEHAVIOR)
    by_reconcile = HorizontalController(one, one).reconcile(target, 0.0)
    controller = HorizontalController(two, two)
    decision = controller.decide(target, 0.0)
    two.update_scale(target.namespace, target.scale_target_ref, decision.desired_replicas)
    by_hand = controller.complete(decision, RESCALED, 0.0)
    assert by_reconcile == by_hand and one.writes == two.writes
