"""Reason texts and their aggregation, in kube-scheduler's and Cluster Autoscaler's formats."""

from __future__ import annotations

from collections import Counter

from kubetide.scheduling.reasons import (
    FilterFailure,
    count_reasons,
    format_reason_counts,
    not_trigger_scale_up_message,
    unschedulable_message,
)


def test_fit_error_counts_each_reason_per_node_and_sorts_the_strings() -> None:
    failures = [
        FilterFailure("NodeResourcesFit", ("Insufficient cpu",)),
        FilterFailure("NodeResourcesFit", ("Insufficient cpu", "Insufficient memory")),
        FilterFailure("NodeResourcesFit", ("Insufficient cpu",)),
        FilterFailure("TaintToleration", ("node(s) had untolerated taint {dedicated: batch}",), True),
        FilterFailure("TaintToleration", ("node(s) had untolerated taint {dedicated: batch}",), True),
        None,
    ]
    counts = count_reasons(failures)
    assert counts == {
        "Insufficient cpu": 3,
        "Insufficient memory": 1,
        "node(s) had untolerated taint {dedicated: batch}": 2,
    }
    assert unschedulable_message(5, counts) == (
        "0/5 nodes are available: 1 Insufficient memory, "
        "2 node(s) had untolerated taint {dedicated: batch}, 3 Insufficient cpu."
    )


def test_fit_error_with_preemption_verdict() -> None:
    # The shape kube-scheduler prints for equal-priority pods on a full cluster.
    msg = unschedulable_message(
        3,
        {"node(s) were unschedulable": 1, "Too many pods": 2},
        {"Preemption is not helpful for scheduling": 1, "No preemption victims found for incoming pod": 2},
    )
    assert msg == (
        "0/3 nodes are available: 1 node(s) were unschedulable, 2 Too many pods. preemption: 0/3 nodes are "
        "available: 1 Preemption is not helpful for scheduling, 2 No preemption victims found for incoming pod."
    )


def test_sorting_is_by_string_as_upstream() -> None:
    assert format_reason_counts(Counter({"b": 10, "a": 3})) == "10 b, 3 a"


def test_not_trigger_scale_up_counts_once_per_node_group() -> None:
    # Conformance ca-not-trigger-reasons: reasons counted over existing node groups.
    msg = not_trigger_scale_up_message(
        {
            "group 1": ["not schedulable"],
            "group 2": ["not schedulable"],
            "group 3": ["also not schedulable"],
            "group 4": ["max limit reached"],
            "group 5": ["not ready"],
            "group 6": ["max limit reached"],
        }
    )
    assert msg.startswith("pod didn't trigger scale-up: ")
    for part in ("2 not schedulable", "1 also not schedulable", "2 max limit reached", "1 not ready"):
        assert part in msg
