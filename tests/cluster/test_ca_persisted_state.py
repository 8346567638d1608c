"""The cluster state a restarted autoscaler reads back (issue 8 items 4 and 9)."""

from __future__ import annotations

from kubetide.cloud.instance import ErrorClass, InstanceErrorInfo
from kubetide.cluster.backoff import BackoffEntry
from kubetide.cluster.clusterstate.persisted import (
    STATE_KEY,
    PersistedState,
    decode_state,
    encode_state,
)
from kubetide.cluster.clusterstate.requests import ScaleUpRequest
from kubetide.cluster.clusterstate.unregistered import UnregisteredNode


def test_the_state_round_trips_through_the_config_map_data() -> None:
    state = PersistedState(
        {"spot": ScaleUpRequest("spot", 3, 10.0, 910.0)},
        {"spot": 2},
        {"spot": BackoffEntry(300.0, 1210.5, 910.5, InstanceErrorInfo(ErrorClass.Other, "timeout", "m"))},
        {"i-1": UnregisteredNode("i-1", "spot", 12.0)},
        frozenset({"i-2"}),
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
