"""The status ConfigMap's value: CA 1.30+'s ``clusterstate/api`` types as yaml.v2 writes them."""

from __future__ import annotations

from ca_loop_harness import Harness, node, pod, template

from kubetide.cluster.options import AutoscalingOptions
from kubetide.cluster.status import (
    ClusterAutoscalerStatus,
    ClusterWideStatus,
    Condition,
    NodeCount,
    NodeGroupStatus,
    format_last_updated,
    format_rfc3339,
    render_status_yaml,
)
from kubetide.testing.cloud import RecordingCloud

T0 = 1_700_000_000.0  # 2023-11-14T22:13:20Z

EXPECTED = """\
time: 2023-11-14 22:13:30.25 +0000 UTC
autoscalerStatus: Running
clusterWide:
  health:
    status: Healthy
    nodeCounts:
      registered:
        total: 3
        ready: 3
        notStarted: 0
      longUnregistered: 0
      unregistered: 0
    lastProbeTime: "2023-11-14T22:13:30.25Z"
    lastTransitionTime: "2023-11-14T22:13:20Z"
  scaleUp:
    status: NoActivity
    lastProbeTime: "2023-11-14T22:13:30.25Z"
    lastTransitionTime: "2023-11-14T22:13:20Z"
  scaleDown:
    status: CandidatesPresent
    candidates: 2
    lastProbeTime: "2023-11-14T22:13:30.25Z"
    lastTransitionTime: "2023-11-14T22:13:20Z"
nodeGroups:
- name: ng
  health:
    status: Healthy
    nodeCounts:
      registered:
        total: 3
        ready: 3
        notStarted: 0
      longUnregistered: 0
      unregistered: 0
    cloudProviderTarget: 3
    minSize: 1
    maxSize: 10
    lastProbeTime: "2023-11-14T22:13:30.25Z"
    lastTransitionTime: "2023-11-14T22:13:20Z"
  scaleUp:
    status: NoActivity
    lastProbeTime: "2023-11-14T22:13:30.25Z"
    lastTransitionTime: "2023-11-14T22:13:20Z"
  scaleDown:
    status: CandidatesPresent
    candidates: 2
    lastProbeTime: "2023-11-14T22:13:30.25Z"
    lastTransitionTime: "2023-11-14T22:13:20Z"
- name: spot
  health:
    status: Healthy
    cloudProviderTarget: 0
    minSize: 0
    maxSize: 5
    lastProbeTime: "2023-11-14T22:13:30.25Z"
    lastTransitionTime: "2023-11-14T22:13:20Z"
  scaleUp:
    status: NoActivity
    lastProbeTime: "2023-11-14T22:13:30.25Z"
    lastTransitionTime: "2023-11-14T22:13:20Z"
  scaleDown:
    status: NoCandidates
    lastProbeTime: "2023-11-14T22:13:30.25Z"
    lastTransitionTime: "2023-11-14T22:13:20Z"
"""


def test_the_loop_returns_the_status_and_it_renders_as_ca_writes_it() -> None:
    cloud = (
        RecordingCloud()
        .with_group("ng", 1, 10, target=3, template=template("ng"))
        .with_group("spot", 0, 5, template=template("spot"))
    )
    h = Harness(cloud, AutoscalingOptions.from_flags({"max-drain-parallelism": 0}))
    for name in ("n1", "n2", "n3"):
        h.add_node(node(name, "ng", created=T0 - 10_000), "ng")
    h.add_pod(pod("big", 1500, node_name="n1", created=T0 - 100))
    h.run(T0)
    result = h.run(T0 + 10.25)
    assert result.status is not None
    # Empty groups carry no nodeCounts (yaml.v2 omits a zero struct); transitions keep the first loop's time.
    assert render_status_yaml(result.status, T0 + 10.25) == EXPECTED


def test_backoff_info_unready_and_being_deleted_counts_and_quoting() -> None:
    probe = T0 + 0.000001
    counts = NodeCount(total=4, ready=2, not_started=0, being_deleted=1, unready=1)
    status = ClusterAutoscalerStatus(
        ClusterWideStatus(
            Condition("Healthy", probe, T0, counts),
            Condition("NoActivity", probe, T0),
            Condition("NoCandidates", probe, T0),
        ),
        (
            NodeGroupStatus(
                "gpu",
                Condition("Healthy", probe, T0, counts, 4, 0, 8),
                Condition(
                    "Backoff",
                    probe,
                    probe,
                    backoff_error_code="STOCKOUT",
                    backoff_error_message="zone us-east-1a: no capacity",
                ),
                Condition("NoCandidates", probe, T0),
            ),
        ),
    )
    text = render_status_yaml(status, probe)
    assert text.startswith("time: 2023-11-14 22:13:20.000001 +0000 UTC\nautoscalerStatus: Running\n")
    assert (
        "      registered:\n        total: 4\n        ready: 2\n        notStarted: 0\n"
        "        beingDeleted: 1\n        unready:\n          total: 1\n          resourceUnready: 0\n"
    ) in text
    assert (
        "  scaleUp:\n    status: Backoff\n    backoffInfo:\n      errorCode: STOCKOUT\n"
        "      errorMessage: 'zone us-east-1a: no capacity'\n"
        '    lastProbeTime: "2023-11-14T22:13:20.000001Z"\n'
    ) in text


def test_time_formats() -> None:
    assert format_rfc3339(T0) == "2023-11-14T22:13:20Z"
    assert format_rfc3339(T0 + 0.5) == "2023-11-14T22:13:20.5Z"
    assert format_last_updated(T0) == "2023-11-14 22:13:20 +0000 UTC"
    assert format_last_updated(T0 + 0.123) == "2023-11-14 22:13:20.123 +0000 UTC"


def test_long_messages_are_folded_as_yaml_v2_folds_them() -> None:
    wide = ClusterWideStatus(
        Condition("Healthy", T0, T0), Condition("NoActivity", T0, T0), Condition("NoCandidates", T0, T0)
    )
    message = (
        "Scale-up timed out for node group very-long-node-group-name-in-zone-a after 15m1s: "
        + " ".join(f"word{i}" for i in range(12))
    )
    group = NodeGroupStatus(
        "ng",
        Condition("Healthy", T0, T0, NodeCount(), 0, 0, 1),
        Condition("Backoff", T0, T0, backoff_error_code="timeout", backoff_error_message=message),
        Condition("NoCandidates", T0, T0),
    )
    text = render_status_yaml(ClusterAutoscalerStatus(wide, (group,)), T0)
    # Folded at the first space met once past column 80 (so a line may end a word beyond it), continued at the value's indentation + 2 (8 here).
    assert (
        "      errorMessage: 'Scale-up timed out for node group very-long-node-group-name-in-zone-a\n"
        "        after 15m1s: word0 word1 word2 word3 word4 word5 word6 word7 word8 word9 word10\n"
        "        word11'\n"
    ) in text
