"""CA flags: one table, CA's names and defaults, and the scenario registry generated from it."""

from __future__ import annotations

import re

import pytest

from kubetide.cluster.flags import CA_FLAGS, parse_flags
from kubetide.cluster.goformat import go_duration
from kubetide.cluster.options import FLAGS, AutoscalingOptions

# A sample of the spec's §8 table (written from upstream ~1.36): flag -> default (durations in seconds).
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
    "blocking-system-pod-distruption-timeout": 3600.0,
    "cordon-node-before-terminating": True,
    "max-bulk-soft-taint-count": 10,
    "node-info-cache-expire-time": 87600 * 3600.0,
}

# Where CA 1.31's defaults (cluster-autoscaler/main.go at 1.31.5) differ from the spec's.
CA_1_31_DEFAULTS = {
    "expander": "random",  # main.go:194 expander.RandomExpanderName (1.33: least-waste)
    # A flag CA 1.31 does not have (1.33's): a kube-system pod without a PDB always blocks its node
    # (simulator/drainability/rules/system/rule.go, Drainable), which 0 (never) keeps.
    "blocking-system-pod-distruption-timeout": 0.0,
    "cordon-node-before-terminating": False,  # main.go:232
    "frequent-loops-enabled": False,  # main.go:270
    "revert-timed-out-scale-ups": False,  # kubetide's flag: 1.31's updateScaleRequests keeps the target
}


def test_defaults_are_ca_1_31s() -> None:
    flags = AutoscalingOptions().to_flags()
    assert flags["ca-compatibility-version"] == "1.31"
    for name, default in {**SPEC_DEFAULTS, **CA_1_31_DEFAULTS}.items():
        assert flags[name] == default, name
    assert {f.name: f.default for f in FLAGS if f.name in CA_1_31_DEFAULTS} == CA_1_31_DEFAULTS


def test_with_ca_1_36_the_defaults_follow_the_spec() -> None:
    flags = AutoscalingOptions(ca_compatibility_version="1.36").to_flags()
    for name, default in SPEC_DEFAULTS.items():
        assert flags[name] == default, name
    assert flags["revert-timed-out-scale-ups"] is True
    # 1.36's default true (next loop at once after a scale-up) is not implemented: the loop stays periodic.
    assert flags["frequent-loops-enabled"] is False


def test_a_flag_given_is_kept_whatever_the_version() -> None:
    values, problems = parse_flags(
        {"ca-compatibility-version": "1.36", "expander": "most-pods", "revert-timed-out-scale-ups": False}
    )
    assert problems == []
    options = AutoscalingOptions.from_flags(values)
    assert (options.expander, options.revert_timed_out_scale_ups) == ("most-pods", False)
    assert options.blocking_system_pod_distruption_timeout == 3600.0  # not given: 1.36's
    old = AutoscalingOptions.from_flags({"blocking-system-pod-distruption-timeout": 60.0})
    assert old.blocking_system_pod_distruption_timeout == 60.0 and old.expander == "random"


@pytest.mark.parametrize("value", ["1.31", "1.36", 1.31, 1.36])
def test_the_version_flag_takes_the_two_releases(value: object) -> None:
    values, problems = parse_flags({"ca-compatibility-version": value})
    assert problems == [] and values["ca-compatibility-version"] == str(value)


@pytest.mark.parametrize("value", ["1.30", "1.32", 1.3, "latest", ""])
def test_any_other_version_is_refused_naming_the_flag(value: object) -> None:
    _, problems = parse_flags({"ca-compatibility-version": value})
    assert [flag for flag, _ in problems] == ["ca-compatibility-version"]
    assert "must be 1.31 or 1.36" in problems[0][1]
    with pytest.raises(ValueError, match=re.escape("must be one of 1.31, 1.36")):
        AutoscalingOptions(ca_compatibility_version=str(value))


def test_frequent_loops_are_refused_rather_than_ignored() -> None:
    _, problems = parse_flags({"frequent-loops-enabled": True})
    assert [flag for flag, _ in problems] == ["frequent-loops-enabled"]


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
