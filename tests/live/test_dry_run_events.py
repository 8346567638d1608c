"""A dry run's Events say what would have been done: the loop words an action as done ("size set to 3")
although the dry run changed nothing (issue 29)."""

from __future__ import annotations

import pytest

from kubetide.live.guard import DryRunEventRecorder, dry_run_message
from kubetide.testing.apiserver import FakeApi


@pytest.mark.parametrize(
    ("reason", "message", "expected"),
    [
        (
            "ScaledUpGroup",
            "Scale-up: setting group spot size to 3 instead of 2 (max: 10)",
            "Scale-up (dry run): would set group spot size to 3 instead of 2 (max: 10)",
        ),
        (
            "ScaledUpGroup",
            "Scale-up: group spot size set to 3 instead of 2 (max: 10)",
            "Scale-up (dry run): would set group spot size to 3 instead of 2 (max: 10)",
        ),
        (
            "TriggeredScaleUp",
            "pod triggered scale-up: [{spot 2->3 (max: 10)}]",
            "pod would trigger scale-up (dry run): [{spot 2->3 (max: 10)}]",
        ),
        (
            "ScaleDownEmpty",
            'Scale-down: removing empty node "n1"',
            'Scale-down (dry run): would remove empty node "n1"',
        ),
        (
            "ScaleDown",
            "marked the node as toBeDeleted/unschedulable",
            "dry run: would mark the node as toBeDeleted/unschedulable (nothing was changed)",
        ),
        ("ScaleDown", "deleting pod for node scale down", "dry run: would delete pod for node scale down"),
        (
            "DeleteUnregistered",
            "Removed unregistered node i-1",
            "dry run: would remove unregistered node i-1",
        ),
        (
            "SuccessfulRescale",
            "New size: 4; reason: cpu resource utilization (percentage of request) above target",
            "dry run: would set new size 4; reason: cpu resource utilization (percentage of request) above target",
        ),
        ("FixNodeGroupSize", "something new", "dry run, nothing was changed: something new"),
        # Not an action: as written.
        ("NotTriggerScaleUp", "pod didn't trigger scale-up: 1 max node group size reached", None),
        ("ScaleDownFailed", "failed to drain the node", None),
    ],
)
def test_action_texts_say_would(reason: str, message: str, expected: str | None) -> None:
    assert dry_run_message(reason, message) == (expected or message)


def test_the_dry_run_recorder_writes_the_conditional() -> None:
    api = FakeApi().add("POST", "/api/v1/namespaces/kube-system/events", (201, {}))
    recorder = DryRunEventRecorder(api.rest(), "cluster-autoscaler", host="h")
    recorder.emit(
        "Normal",
        "ScaledUpGroup",
        "ConfigMap/kube-system/cluster-autoscaler-status",
        "Scale-up: group spot size set to 3 instead of 2 (max: 10)",
    )
    (event,) = api.bodies("POST", "/api/v1/namespaces/kube-system/events")
    assert event["message"] == "Scale-up (dry run): would set group spot size to 3 instead of 2 (max: 10)"
