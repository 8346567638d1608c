"""Escalator's node-group options: YAML decoding, defaults and ValidateNodeGroup's messages."""

from __future__ import annotations

import pytest

from kubetide.escalator.config import (
    DurationError,
    node_group_from_yaml,
    parse_go_duration,
    validate_node_group,
)

DOC_EXAMPLE = {
    "name": "shared",
    "label_key": "customer",
    "label_value": "shared",
    "cloud_provider_group_name": "shared-nodes",
    "min_nodes": 1,
    "max_nodes": 30,
    "taint_upper_capacity_threshold_percent": 40,
    "taint_lower_capacity_threshold_percent": 10,
    "slow_node_removal_rate": 2,
    "fast_node_removal_rate": 5,
    "scale_up_threshold_percent": 70,
    "scale_up_cool_down_period": "2m",
    "soft_delete_grace_period": "1m",
    "hard_delete_grace_period": "10m",
    "taint_effect": "NoExecute",
    "max_node_age": "24h",
    "scale_up_cool_down_timeout": "10m",  # documented, absent from the code: ignored
}


def test_the_documented_example_is_valid() -> None:
    g = node_group_from_yaml(DOC_EXAMPLE)
    assert validate_node_group(g) == ()
    assert (g.soft_delete_grace_s, g.hard_delete_grace_s, g.max_node_age_s) == (60, 600, 86400)
    assert not g.auto_discover_min_max and not g.health_check_enabled


def test_messages_in_escalator_wording() -> None:
    bad = dict(DOC_EXAMPLE, taint_upper_capacity_threshold_percent=80, slow_node_removal_rate=9)
    bad.update(min_nodes=5, max_nodes=5, taint_effect="NoWay", scale_up_cool_down_period="soon")
    assert validate_node_group(node_group_from_yaml(bad)) == (
        "taint_upper_capacity_threshold_percent must be less than scale_up_threshold_percent",
        "min_nodes must be less than max_nodes",
        "slow_node_removal_rate must be less than fast_node_removal_rate",
        "soft_delete_grace_period failed to parse into a time.Duration. check your formatting.",
        "taint_effect must be valid kubernetes taint",
    )


def test_min_and_max_both_zero_are_discovered_from_the_cloud_group() -> None:
    g = node_group_from_yaml(dict(DOC_EXAMPLE, min_nodes=0, max_nodes=0))
    assert validate_node_group(g) == () and g.auto_discover_min_max
    assert (g.with_discovered_min_max(2, 9).min_nodes, g.with_discovered_min_max(2, 9).max_nodes) == (2, 9)


@pytest.mark.parametrize(
    ("text", "seconds"), [("90s", 90), ("1h30m", 5400), ("1.5h", 5400), ("0", 0), ("-2m", -120)]
)
def test_go_durations(text: str, seconds: float) -> None:
    assert parse_go_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "10", "1d", "m"])
def test_bad_go_durations(text: str) -> None:
    with pytest.raises(DurationError):
        parse_go_duration(text)
