"""CA's function_duration_seconds labels: which functions a loop times, as CA 1.31's RunOnce observes
them (core/static_autoscaler.go: CloudProviderRefresh, UpdateState, ScaleUp only when the orchestrator
is asked, FindUnneeded, ScaleDown only out of cooldown; filter_out_schedulable.go: FilterOutSchedulable).
The core reads no clock: the stopwatch is passed in, and without one nothing is timed."""

from __future__ import annotations

from ca_loop_harness import Harness, node, pod, template

from kubetide.cluster.autoscaler import StaticAutoscaler
from kubetide.cluster.options import AutoscalingOptions
from kubetide.testing.cloud import RecordingCloud


class Stopwatch:
    """Each read is one second after the last: every timed function took a whole number of seconds."""

    def __init__(self) -> None:
        self.reads = 0

    def __call__(self) -> float:
        self.reads += 1
        return float(self.reads)


def harness(stopwatch: Stopwatch | None, **flags: object) -> Harness:
    cloud = RecordingCloud().with_group("general", 1, 10, target=1, template=template("general"))
    h = Harness(cloud, AutoscalingOptions.from_flags({"scale-down-delay-after-add": 0.0, **flags}))
    h.add_node(node("general-1", "general"), "general")
    h.add_pod(pod("busy", 1800, node_name="general-1"))
    h.ca = StaticAutoscaler(h.cloud, h.api, h.options, stopwatch=stopwatch)
    return h


def labels(durations: list[tuple[str, float]]) -> list[str]:
    return [label for label, _ in durations]


def test_a_loop_with_pending_pods_times_each_function_in_runonces_order() -> None:
    h = harness(Stopwatch())
    h.add_pod(pod("huge", 5000))  # fits no group: the orchestrator is asked, scales nothing
    result = h.run(0.0)
    assert result.scale_up is not None and result.scale_up.result == "NoOptionsAvailable"
    assert labels(result.function_durations) == [
        "cloudProviderRefresh",
        "updateClusterState",
        "filterOutSchedulable",
        "scaleUp",
        "findUnneeded",
        "scaleDown",
    ]
    assert all(seconds >= 1 for _, seconds in result.function_durations)
    state = dict(result.function_durations)
    assert state["updateClusterState"] > state["cloudProviderRefresh"]  # it spans the refresh


def test_no_scale_up_timing_without_pods_to_help_and_no_scale_down_timing_in_cooldown() -> None:
    h = harness(Stopwatch(), **{"scale-down-delay-after-add": 600.0})
    h.add_pod(pod("pending", 1500))
    h.run(0.0)  # scales up: scale-down in cooldown from now on
    result = h.run(10.0)  # the pod fits the upcoming node: the orchestrator is not asked
    assert labels(result.function_durations) == [
        "cloudProviderRefresh",
        "updateClusterState",
        "filterOutSchedulable",
        "findUnneeded",
    ]


def test_without_a_stopwatch_nothing_is_timed() -> None:
    h = harness(None)
    h.add_pod(pod("pending", 1500))
    assert h.run(0.0).function_durations == []
