"""Escalator's node-group options: YAML decoding, defaults and ValidateNodeGroup's messages."""

from __future__ import annotations

import pytest

from kubetide.escalator.config import (
    DurationError,
    node_group_from_yaml,
    node_groups_from_entries,
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


def _problems(**changes: object) -> list[tuple[object, str]]:
    return node_groups_from_entries([dict(DOC_EXAMPLE, **changes)])[1]


@pytest.mark.parametrize(
    ("key", "value"),
    [("slow_node_removal_rate", -3), ("slow_node_removal_rate", 0), ("fast_node_removal_rate", 0)],
)
def test_removal_rates_escalators_docs_rule_out_are_refused_at_load(key: str, value: int) -> None:
    """Upstream's ValidateNodeGroup only checks slow <= fast: a negative slow rate passed, and made
    scaleNodeGroup's delta positive below the taint threshold (a scale-up to the cloud group's max)."""
    bad = (
        {key: value, "slow_node_removal_rate": min(value, 2)}
        if key == "fast_node_removal_rate"
        else {key: value}
    )
    problems = _problems(**bad)
    assert ((0, key), f"{key} must be larger than 0 (the number of nodes to taint), got {value}") in problems


def test_a_negative_max_node_age_is_refused() -> None:
    assert ((0, "max_node_age"), "max_node_age must not be negative, got '-1h'") in _problems(
        max_node_age="-1h"
    )


def test_every_problem_of_every_entry_at_once_with_unknown_keys_and_wrong_types() -> None:
    entries = [
        dict(DOC_EXAMPLE, min_nodes="1", max_nodez=3, aws={"lifecycle": 5, "resource_taging": True}),
        dict(DOC_EXAMPLE, name="other", scale_up_threshold_percent=2**64, dry_mode="yes"),
    ]
    _, problems = node_groups_from_entries(entries)
    assert problems == [
        ((0, "max_nodez"), "unknown Escalator node group key (did you mean 'max_nodes'?)"),
        ((0, "aws", "resource_taging"), "unknown Escalator aws key (did you mean 'resource_tagging'?)"),
        ((0, "min_nodes"), "must be an integer, got '1'"),
        ((0, "aws", "lifecycle"), "must be a string, got 5"),
        (
            (1, "scale_up_threshold_percent"),
            f"must be an integer between {-(2**63)} and {2**63 - 1}, got {2**64}",
        ),
        ((1, "dry_mode"), "must be a boolean, got 'yes'"),
    ]


@pytest.mark.parametrize("text", ["١m", "１0s", " 1m", "1m ", "2562048h"])
def test_durations_go_would_refuse(text: str) -> None:
    """Go's time.ParseDuration: ASCII digits, no spaces, at most int64 nanoseconds."""
    with pytest.raises(DurationError):
        parse_go_duration(text)
    assert any(loc == (0, "soft_delete_grace_period") for loc, _ in _problems(soft_delete_grace_period=text))
