"""CA flags: one table, CA's names and defaults, and the scenario registry generated from it."""

from __future__ import annotations

import pytest

from kubetide.cluster.flags import CA_FLAGS, parse_flags
from kubetide.cluster.goformat import go_duration
from kubetide.cluster.options import FLAGS, AutoscalingOptions

# A sample of the spec's §8 table: flag -> default (durations in seconds).
SPEC_DEFAULTS = {
    "scan-interval": 10.0,
    "max-node-provision-time": 900.0,
    "max-node-startup-time": 900.0,
    "ok-total-unready-count": 3,
    "max-total-unready-percentage": 45.0,
    "initial-node-group-backoff-duration": 300.0,
    "max-node-group-backoff-duration": 1800.0,
    "node-group-backoff-reset-timeout": 10800.0,
    "expander": "least-waste",
    "max-nodes-per-scaleup": 1000,
    "memory-difference-ratio": 0.015,
    "cores-total": "0:320000",
    "memory-total": "0:6400000",
    "scale-down-unneeded-time": 600.0,
    "scale-down-unready-time": 1200.0,
    "scale-down-delay-after-add": 600.0,
    "scale-down-delay-after-delete": 0.0,
    "scale-down-delay-after-failure": 180.0,
    "max-scale-down-parallelism": 10,
    "max-drain-parallelism": 1,
    "max-empty-bulk-delete": 10,
    # The spec's 1h is CA 1.33's default for a flag CA 1.31 does not have: a kube-system pod without a
    # PDB always blocks its node there (simulator/drainability/rules/system/rule.go, Drainable), which
    # 0 (never) keeps.
    "blocking-system-pod-distruption-timeout": 0.0,
    "max-bulk-soft-taint-count": 10,
    "node-info-cache-expire-time": 87600 * 3600.0,
}


def test_defaults_follow_the_spec() -> None:
    flags = AutoscalingOptions().to_flags()
    for name, default in SPEC_DEFAULTS.items():
        assert flags[name] == default, name


def test_flag_names_are_unique_and_cover_the_scenario_registry() -> None:
    names = [f.name for f in FLAGS]
    assert len(names) == len(set(names))
    assert set(CA_FLAGS) == set(names)
    assert all(CA_FLAGS[f.name].default == f.default for f in FLAGS)


def test_from_flags_round_trip_and_unknown_names() -> None:
    values, problems = parse_flags({"scale-down-unneeded-time": "5m", "expander": "priority,least-waste"})
    assert problems == []
    options = AutoscalingOptions.from_flags(values)
    assert options.scale_down_unneeded_time == 300.0
    assert options.expanders == ("priority", "least-waste")
    assert options.flag("scale-down-unneeded-time") == 300.0
    with pytest.raises(KeyError):
        AutoscalingOptions.from_flags({"scan-intervall": 10.0})


def test_list_flags() -> None:
    values, problems = parse_flags({"balancing-ignore-label": "a,b", "ignore-daemonsets-utilization": True})
    assert problems == []
    options = AutoscalingOptions.from_flags(values)
    assert options.balancing_ignore_label == ("a", "b") and options.ignore_daemonsets_utilization


def test_node_group_defaults() -> None:
    d = AutoscalingOptions(scale_down_unneeded_time=60.0).node_group_defaults()
    assert d.scale_down_unneeded_time == 60.0 and d.max_node_provision_time == 900.0


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (180, "3m0s"),
        (121, "2m1s"),
        (3600, "1h0m0s"),
        (0, "0s"),
        (0.5, "500ms"),
        (1.5, "1.5s"),
        (900, "15m0s"),
    ],
)
def test_go_duration(seconds: float, text: str) -> None:
    assert go_duration(seconds) == text
