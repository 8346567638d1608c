"""The loop that scales up ends there (issue 23 item 9): ``static_autoscaler.go`` RunOnce, ``postScaleUp``
returns when ``scaleUpStatus.Result == status.ScaleUpSuccessful`` (and on a scale-up error), before the
scale-down pass: nothing is marked unneeded, no soft taint is set, no node group is raised to its
minimum in that loop; the status is still written (deferred) and the scale-down result is InCooldown."""

from __future__ import annotations

from ca_loop_harness import Harness, node, pod, template

from kubetide.cluster.options import AutoscalingOptions
from kubetide.cluster.scaledown.taints import DELETION_CANDIDATE_TAINT
from kubetide.testing.cloud import RecordingCloud


def _world(**flags: object) -> Harness:
    cloud = (
        RecordingCloud()
        .with_group("small", 0, 10, target=1, template=template("small"))
        .with_group("big", 0, 10, template=template("big", cpu=8000))
    )
    options = AutoscalingOptions.from_flags(dict(flags))
    h = Harness(cloud, options)
    h.add_node(node("idle", "small"), "small")  # empty: unneeded as soon as scale-down looks at it
    h.add_pod(pod("wide", 3000))  # fits only the big group's template
    return h


def _soft_tainted(h: Harness) -> list[str]:
    return [name for name, taints in h.taint_calls if any(t.key == DELETION_CANDIDATE_TAINT for t in taints)]


def test_the_scale_up_loop_marks_nothing_unneeded_and_taints_nothing() -> None:
    """static_autoscaler.go RunOnce: ``if scaleUpStatus.Result == status.ScaleUpSuccessful { ...
    scaleDownStatus.Result = ScaleDownInCooldown; return }`` before ``scaleDownPlanner.UpdateClusterState``
    and ``updateSoftDeletionTaints``."""
    h = _world()
    result = h.run(0.0)
    assert result.scale_up_result == "Successful"
    assert h.cloud.calls_to("increase_size")[0].group == "big"
    assert h.ca is not None and h.ca.unneeded == {}
    assert result.scale_down_result == "InCooldown"
    assert _soft_tainted(h) == []
    assert result.status is not None  # the status ConfigMap is still written (deferred upstream)
    # The next loop (the pod waits on the upcoming node: no scale-up) plans scale-down: the timer starts
    # here, one loop later than before.
    later = h.run(10.0)
    assert later.scale_up_result == "NotNeeded"
    assert set(h.ca.unneeded) == {"idle"} and h.ca.unneeded["idle"].since == 10.0
    assert _soft_tainted(h) == ["idle"]


def test_a_loop_without_scale_up_still_plans_scale_down() -> None:
    """The other branches of RunOnce (no pods to help) go on to the scale-down pass."""
    h = _world()
    del h.pods["wide"]
    result = h.run(0.0)
    assert result.scale_up_result == "NotNeeded"
    assert h.ca is not None and set(h.ca.unneeded) == {"idle"}


def test_a_failed_scale_up_ends_the_loop_too() -> None:
    """static_autoscaler.go postScaleUp: ``if typedErr != nil { return true, typedErr }``: an error of
    ``ScaleUp`` (here IncreaseSize refused) returns from RunOnce before scale-down as well."""
    h = _world()
    h.cloud.with_failure("increase_size", group="big")
    result = h.run(0.0)
    assert result.scale_up_result == "Error"
    assert h.ca is not None and h.ca.unneeded == {}
    assert result.scale_down_result == ""  # ScaleDownNotTried


def test_min_size_enforcement_waits_for_a_loop_without_scale_up() -> None:
    """RunOnce calls ScaleUpToNodeGroupMinSize after the scale-down pass, so not in a loop that scaled up."""
    h = _world(**{"enforce-node-group-min-size": True})
    h.cloud.groups["small"].min = 2
    h.run(0.0)
    assert [c.group for c in h.cloud.calls_to("increase_size")] == ["big"]
    h.run(10.0)
    assert [c.group for c in h.cloud.calls_to("increase_size")] == ["big", "small"]
