"""The cluster state a restarted autoscaler reads back (issue 8 items 4 and 9)."""

from __future__ import annotations

from ca_loop_harness import Harness, node, pod, template

from kubetide.cloud.instance import ErrorClass, Instance, InstanceErrorInfo, InstanceState, InstanceStatus
from kubetide.cluster.backoff import BackoffEntry
from kubetide.cluster.clusterstate.incorrect import IncorrectSize
from kubetide.cluster.clusterstate.persisted import (
    STATE_CONFIG_MAP,
    STATE_KEY,
    PersistedState,
    decode_state,
    encode_state,
)
from kubetide.cluster.clusterstate.requests import ScaleUpRequest
from kubetide.cluster.clusterstate.unregistered import UnregisteredNode
from kubetide.testing.cloud import RecordingCloud


def test_the_state_round_trips_through_the_config_map_data() -> None:
    state = PersistedState(
        {"spot": ScaleUpRequest("spot", 3, 10.0, 910.0)},
        {"spot": 2},
        {"spot": BackoffEntry(300.0, 1210.5, 910.5, InstanceErrorInfo(ErrorClass.Other, "timeout", "m"))},
        {"i-1": UnregisteredNode("i-1", "spot", 12.0)},
        frozenset({"i-2"}),
        {"spot": IncorrectSize(0, 3, 20.0)},
    )
    data = encode_state(state)
    assert set(data) == {STATE_KEY}
    assert decode_state(data) == state


def test_missing_or_unreadable_state_is_none() -> None:
    assert decode_state(None) is None
    assert decode_state({}) is None
    assert decode_state({STATE_KEY: "{not json"}) is None
    assert decode_state({STATE_KEY: '{"version": 99}'}) is None
    assert decode_state({STATE_KEY: '{"version": 1, "scaleUps": {"g": {}}}'}) is None


def _restarted_with_a_failed_instance(config_maps: dict[str, dict[str, str]]) -> Harness:
    # The previous process scaled spot up; its instance failed (a stockout reported as an error) before
    # the new process's first loop.
    cloud = (
        RecordingCloud()
        .with_group("spot", 0, 10, target=1, template=template("spot"))
        .with_group("general", 1, 10, target=1, template=template("general"))
    )
    h = Harness(cloud, config_maps=config_maps)
    h.add_node(node("general-1", "general"), "general")
    h.add_pod(pod("busy", 1800, node_name="general-1"))
    error = InstanceErrorInfo(ErrorClass.OutOfResources, "STOCKOUT", "no capacity")
    h.cloud.with_instance("spot", Instance("i-failed", InstanceStatus(InstanceState.Creating, error)))
    return h


def test_with_state_a_restart_still_backs_off_a_group_whose_instances_failed() -> None:
    """The state ConfigMap gives the new process the request, so the failure is one of a scale-up in
    flight (clusterstate.go handleInstanceCreationErrorsForNodeGroup: ``IsNodeGroupScalingUp``)."""
    state = encode_state(PersistedState({"spot": ScaleUpRequest("spot", 1, 50.0, 950.0)}, {"spot": 0}))
    h = _restarted_with_a_failed_instance({f"kube-system/{STATE_CONFIG_MAP}": state})
    result = h.run(100.0)
    assert "ScaleUpFailed" in h.reasons(result)
    assert h.ca is not None and h.ca.registry.backoff.is_backed_off("spot", 100.0)


def test_without_state_a_restart_is_ca_1_31_no_request_no_backoff() -> None:
    """Without the state (CA 1.31 after any restart): no scale-up request, so the failed instance backs
    nothing off (``IsNodeGroupScalingUp`` is false); it is deleted (deleteCreatedNodesWithErrors).
    kubetide no longer adopts a target above the nodes as a request (issue 23 item 13)."""
    h = _restarted_with_a_failed_instance({})
    result = h.run(100.0)
    assert "ScaleUpFailed" not in h.reasons(result)
    assert h.ca is not None and not h.ca.registry.backoff.is_backed_off("spot", 100.0)
    assert [c.args for c in h.cloud.calls_to("delete_nodes")] == [("i-failed",)]
