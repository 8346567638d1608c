"""Escalator's node-group options: which keys a group has, their defaults, and whether a group is valid.

This decides what a ``node_groups:`` entry of Escalator's ``nodegroups_config.yaml`` means, with the
YAML key names, the (few) defaults and the start-up validation messages of Escalator's
``ValidateNodeGroup``, because a config written for Escalator must behave the same here. The code has
almost no defaults: a missing number is 0 and a missing duration is "" (which parses to 0), exactly
what Go's zero values give. Stricter than Escalator, as the README says: unknown keys are errors (Go's
decoder ignores them; the documented ``scale_up_cool_down_timeout`` is accepted and ignored), and so
are values its documentation rules out that its code lets through (:func:`documented_limits`).

:func:`node_groups_from_entries` reads a whole ``node_groups`` list and reports every problem with its
location (entry index, key); live mode's ``--nodegroups`` file and the simulator's scenario section
both go through it, so one config is valid in both or in neither, with the same messages.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from kubetide.model.durations import DurationError, parse_go_duration
from kubetide.model.numbers import INT64_MAX, INT64_MIN

__all__ = [
    "DEFAULT_NODE_GROUP",
    "IGNORED_KEYS",
    "KNOWN_KEYS",
    "TAINT_EFFECTS",
    "AwsOptions",
    "DurationError",
    "Location",
    "NodeGroupOptions",
    "documented_limits",
    "escalator_dry_mode",
    "node_group_from_yaml",
    "node_groups_from_entries",
    "parse_go_duration",
    "validate_node_group",
    "validate_node_group_fields",
]

# The group name that switches to the "pods without a selector" filter (upstream DefaultNodeGroup).
DEFAULT_NODE_GROUP = "default"
TAINT_EFFECTS = ("NoSchedule", "NoExecute", "PreferNoSchedule")
AWS_LIFECYCLES = ("on-demand", "spot")


def _duration_or_zero(text: str) -> float:
    # Escalator's *Duration() getters swallow parse errors and return 0, which then fails "> 0" checks.
    try:
        return parse_go_duration(text)
    except DurationError:
        return 0.0


@dataclass(frozen=True, slots=True)
class AwsOptions:
    """The ``aws:`` block. Kept for fidelity; the decision core never reads it (no AWS API here)."""

    launch_template_id: str = ""
    launch_template_version: str = ""
    fleet_instance_ready_timeout: str = ""  # "" means 1m
    lifecycle: str = ""  # "" means on-demand
    instance_type_overrides: tuple[str, ...] = ()
    resource_tagging: bool = False


@dataclass(frozen=True, slots=True)
class NodeGroupOptions:
    """One ``node_groups`` entry, field names as Escalator's YAML keys; durations kept as written."""

    name: str = ""
    label_key: str = ""
    label_value: str = ""
    cloud_provider_group_name: str = ""
    min_nodes: int = 0
    max_nodes: int = 0
    dry_mode: bool = False
    scale_on_starve: bool = False
    taint_upper_capacity_threshold_percent: int = 0
    taint_lower_capacity_threshold_percent: int = 0
    scale_up_threshold_percent: int = 0
    slow_node_removal_rate: int = 0
    fast_node_removal_rate: int = 0
    soft_delete_grace_period: str = ""
    hard_delete_grace_period: str = ""
    scale_up_cool_down_period: str = ""
    taint_effect: str = ""  # "" means NoSchedule
    max_node_age: str = ""  # "" or "0": off
    unhealthy_node_grace_period: str = ""  # "": health checks off
    health_check_newest_nodes_percent: int = 0
    max_unhealthy_nodes_percent: int = 0
    aws: AwsOptions = field(default_factory=AwsOptions)

    @property
    def soft_delete_grace_s(self) -> float:
        return _duration_or_zero(self.soft_delete_grace_period)

    @property
    def hard_delete_grace_s(self) -> float:
        return _duration_or_zero(self.hard_delete_grace_period)

    @property
    def scale_up_cool_down_s(self) -> float:
        return _duration_or_zero(self.scale_up_cool_down_period)

    @property
    def max_node_age_s(self) -> float:
        return _duration_or_zero(self.max_node_age)

    @property
    def unhealthy_node_grace_s(self) -> float:
        return _duration_or_zero(self.unhealthy_node_grace_period)

    @property
    def health_check_enabled(self) -> bool:
        """Unhealthy-node tainting and group health only run when the grace period parses to > 0."""
        return self.unhealthy_node_grace_s > 0

    @property
    def effective_taint_effect(self) -> str:
        return self.taint_effect or "NoSchedule"

    @property
    def auto_discover_min_max(self) -> bool:
        """Both 0 (or omitted): min and max come from the cloud group, re-read on every run."""
        return self.min_nodes == 0 and self.max_nodes == 0

    def with_discovered_min_max(self, min_size: int, max_size: int) -> NodeGroupOptions:
        """The options a run uses: the cloud group's min/max when auto-discovering, else unchanged."""
        if not self.auto_discover_min_max:
            return self
        return replace(self, min_nodes=min_size, max_nodes=max_size)


def escalator_dry_mode(global_dry_mode: bool, group: NodeGroupOptions) -> bool:
    """``--drymode`` or the group's ``dry_mode``: either one turns dry mode on for the group."""
    return global_dry_mode or group.dry_mode


_INT_KEYS = (
    "min_nodes",
    "max_nodes",
    "taint_upper_capacity_threshold_percent",
    "taint_lower_capacity_threshold_percent",
    "scale_up_threshold_percent",
    "slow_node_removal_rate",
    "fast_node_removal_rate",
    "health_check_newest_nodes_percent",
    "max_unhealthy_nodes_percent",
)
_STR_KEYS = (
    "name",
    "label_key",
    "label_value",
    "cloud_provider_group_name",
    "soft_delete_grace_period",
    "hard_delete_grace_period",
    "scale_up_cool_down_period",
    "taint_effect",
    "max_node_age",
    "unhealthy_node_grace_period",
)
_BOOL_KEYS = ("dry_mode", "scale_on_starve")


def _type_problem(value: Any, kind: type) -> str | None:
    """Why Go's decoder refuses ``value`` for a field of ``kind`` (Go's int is int64), or None."""
    if kind is int:
        if isinstance(value, bool) or not isinstance(value, int):
            return f"must be an integer, got {value!r}"
        if not INT64_MIN <= value <= INT64_MAX:
            return f"must be an integer between {INT64_MIN} and {INT64_MAX}, got {value}"
    if kind is str and not isinstance(value, str):
        return f"must be a string, got {value!r}"
    if kind is bool and not isinstance(value, bool):
        return f"must be a boolean, got {value!r}"
    return None


_AWS_TYPES: dict[str, type[Any]] = {
    "launch_template_id": str,
    "launch_template_version": str,
    "fleet_instance_ready_timeout": str,
    "lifecycle": str,
    "instance_type_overrides": list,
    "resource_tagging": bool,
}


def _decode(entry: Mapping[str, Any]) -> tuple[NodeGroupOptions, list[tuple[str, str]]]:
    """The options of one entry and every value of the wrong type, as ``(key, message)`` (``aws.x``
    for the aws block); a wrong value is left at its zero value."""
    values: dict[str, Any] = {}
    problems: list[tuple[str, str]] = []
    for keys, kind in ((_INT_KEYS, int), (_STR_KEYS, str), (_BOOL_KEYS, bool)):
        for key in keys:
            if entry.get(key) is not None:
                problem = _type_problem(entry[key], kind)
                if problem:
                    problems.append((key, problem))
                else:
                    values[key] = entry[key]
    aws = entry.get("aws") or {}
    if not isinstance(aws, Mapping):
        problems.append(("aws", f"must be a mapping, got {aws!r}"))
        aws = {}
    typed: dict[str, Any] = {}
    for key, kind in _AWS_TYPES.items():
        value = aws.get(key)
        if value is None:
            continue
        if kind is list:
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                problems.append((f"aws.{key}", f"must be a list of strings, got {value!r}"))
                continue
            value = tuple(value)
        elif (problem := _type_problem(value, kind)) is not None:
            problems.append((f"aws.{key}", problem))
            continue
        typed[key] = value
    values["aws"] = AwsOptions(**typed)
    return NodeGroupOptions(**values), problems


def node_group_from_yaml(entry: Mapping[str, Any]) -> NodeGroupOptions:
    """One decoded ``node_groups`` entry. Unknown keys are ignored; a value of the wrong type is a
    ``ValueError`` (Go's decoder fails the whole file on one)."""
    group, problems = _decode(entry)
    if problems:
        key, message = problems[0]
        raise ValueError(f"{key}: {message}")
    return group


def _parses(text: str) -> bool:
    try:
        parse_go_duration(text)
    except DurationError:
        return False
    return True


def validate_node_group(group: NodeGroupOptions) -> tuple[str, ...]:
    """Every problem Escalator's ``ValidateNodeGroup`` reports, in its order and wording (any is fatal)."""
    return tuple(message for _, message in validate_node_group_fields(group))


def validate_node_group_fields(group: NodeGroupOptions) -> tuple[tuple[str, str], ...]:
    """:func:`validate_node_group`'s problems, each with the key it is about (the message's first word,
    except where upstream's message names another option)."""
    problems: list[tuple[str, str]] = []

    def check(ok: bool, message: str, key: str | None = None) -> None:
        if not ok:
            problems.append((key or message.split(" ", 1)[0], message))

    check(len(group.name) > 0, "name cannot be empty")
    check(len(group.label_key) > 0, "label_key cannot be empty")
    check(len(group.label_value) > 0, "label_value cannot be empty")
    check(len(group.cloud_provider_group_name) > 0, "cloud_provider_group_name cannot be empty")

    upper, lower = group.taint_upper_capacity_threshold_percent, group.taint_lower_capacity_threshold_percent
    check(upper > 0, "taint_upper_capacity_threshold_percent must be larger than 0")
    check(lower > 0, "taint_lower_capacity_threshold_percent must be larger than 0")
    check(group.scale_up_threshold_percent > 0, "scale_up_threshold_percent must be larger than 0")
    check(
        lower < upper,
        "taint_lower_capacity_threshold_percent must be less than taint_upper_capacity_threshold_percent",
    )
    check(
        upper < group.scale_up_threshold_percent,
        "taint_upper_capacity_threshold_percent must be less than scale_up_threshold_percent",
    )
    if not group.auto_discover_min_max:
        check(group.min_nodes < group.max_nodes, "min_nodes must be less than max_nodes")
        check(group.max_nodes > 0, "max_nodes must be larger than 0")
        check(group.min_nodes >= 0, "min_nodes must be not less than 0")
    # Upstream says "less than" but checks <=: equal rates are accepted.
    check(
        group.slow_node_removal_rate <= group.fast_node_removal_rate,
        "slow_node_removal_rate must be less than fast_node_removal_rate",
    )

    check(len(group.soft_delete_grace_period) > 0, "soft_delete_grace_period must not be empty")
    check(len(group.hard_delete_grace_period) > 0, "hard_delete_grace_period must not be empty")
    check(
        group.soft_delete_grace_s > 0,
        "soft_delete_grace_period failed to parse into a time.Duration. check your formatting.",
    )
    check(
        group.hard_delete_grace_s > 0,
        "hard_delete_grace_period failed to parse into a time.Duration. check your formatting.",
    )
    check(
        group.soft_delete_grace_s < group.hard_delete_grace_s,
        "soft_delete_grace_period must be less than hard_delete_grace_period",
    )
    check(len(group.scale_up_cool_down_period) > 0, "scale_up_cool_down_period must not be empty")
    # Upstream's message names the wrong option here; kept word for word so logs match.
    check(
        group.scale_up_cool_down_s > 0,
        "soft_delete_grace_period failed to parse into a time.Duration. check your formatting.",
        "scale_up_cool_down_period",
    )
    check(
        group.taint_effect == "" or group.taint_effect in TAINT_EFFECTS,
        "taint_effect must be valid kubernetes taint",
    )
    check(
        group.max_node_age == "" or _parses(group.max_node_age),
        "max_node_age failed to parse into a time.Duration. check your formatting.",
    )
    if group.unhealthy_node_grace_period != "":
        check(
            group.unhealthy_node_grace_s > 0,
            "unhealthy_node_grace_period failed to parse into a time.Duration. check your formatting.",
        )
        check(
            1 <= group.health_check_newest_nodes_percent <= 100,
            "health_check_newest_nodes_percent must be between 1 and 100",
        )
    check(
        0 <= group.max_unhealthy_nodes_percent <= 99,
        "max_unhealthy_nodes_percent must be between 0 and 99",
    )
    check(
        group.aws.lifecycle == "" or group.aws.lifecycle in AWS_LIFECYCLES,
        "aws.lifecycle must be 'on-demand' or 'spot' if provided.",
    )
    return tuple(problems)


# Every key a node_groups entry may have (upstream's JSON tags); Go ignores anything else, kubetide
# refuses it (a typo'd threshold would run another experiment). ``scale_up_cool_down_timeout`` is
# documented upstream but read by nothing: accepted so a documented config loads, and ignored.
KNOWN_KEYS = (*_INT_KEYS, *_STR_KEYS, *_BOOL_KEYS, "aws")
IGNORED_KEYS = ("scale_up_cool_down_timeout",)
_AWS_KEYS = tuple(_AWS_TYPES)
_MESSAGE_KEYS = (*KNOWN_KEYS, *(f"aws.{k}" for k in _AWS_KEYS))

Location = tuple[int | str, ...]  # (entry index, key, ...) in a node_groups list


def _location_of(key: str) -> tuple[str, ...]:
    """Where a problem about ``key`` is (``aws.lifecycle`` is two levels); () when it is no key."""
    return tuple(key.split(".")) if key in _MESSAGE_KEYS else ()


def documented_limits(group: NodeGroupOptions) -> tuple[tuple[str, str], ...]:
    """Values Escalator's documentation rules out but its ``ValidateNodeGroup`` lets through, as
    ``(key, message)``. Removal rates are "the amount of nodes to taint" (docs/configuration/
    nodegroup.md): one of 0 never removes a node, a negative one turns scale-down into a scale-up to
    the cloud group's maximum. A negative ``max_node_age`` is no age."""
    problems: list[tuple[str, str]] = []
    for key in ("slow_node_removal_rate", "fast_node_removal_rate"):
        if getattr(group, key) <= 0:
            problems.append(
                (
                    key,
                    f"{key} must be larger than 0 (the number of nodes to taint), got {getattr(group, key)}",
                )
            )
    if group.max_node_age and _parses(group.max_node_age) and group.max_node_age_s < 0:
        problems.append(("max_node_age", f"max_node_age must not be negative, got {group.max_node_age!r}"))
    return tuple(problems)


def _unknown_keys(entry: Mapping[str, Any]) -> list[tuple[tuple[str, ...], str]]:
    problems: list[tuple[tuple[str, ...], str]] = []
    known = (*KNOWN_KEYS, *IGNORED_KEYS)
    for key in entry:
        if key not in known:
            close = difflib.get_close_matches(str(key), known, n=1, cutoff=0.6)
            hint = f"did you mean {close[0]!r}?" if close else f"known: {', '.join(known)}"
            problems.append(((str(key),), f"unknown Escalator node group key ({hint})"))
    aws = entry.get("aws")
    for key in aws if isinstance(aws, Mapping) else ():
        if key not in _AWS_KEYS:
            close = difflib.get_close_matches(str(key), _AWS_KEYS, n=1, cutoff=0.6)
            hint = f"did you mean {close[0]!r}?" if close else f"known: {', '.join(_AWS_KEYS)}"
            problems.append((("aws", str(key)), f"unknown Escalator aws key ({hint})"))
    return problems


def node_groups_from_entries(
    entries: Any,
) -> tuple[list[NodeGroupOptions], list[tuple[Location, str]]]:
    """Every entry of a ``node_groups`` list decoded and validated: the groups that decoded, and every
    problem as ``((index, key...), message)`` (a location of ``()`` is the list itself), in entry order:
    unknown keys and values of the wrong type, then Escalator's messages, then the limits its
    documentation sets (:func:`documented_limits`), then a name used twice. Any problem is fatal, as at
    upstream start-up.
    """
    if not isinstance(entries, list) or not entries:
        return [], [((), "must be a non-empty list of node groups")]
    groups: list[NodeGroupOptions] = []
    problems: list[tuple[Location, str]] = []
    names: dict[str, int] = {}
    for i, entry in enumerate(entries):
        if not isinstance(entry, Mapping):
            problems.append(((i,), f"must be a mapping, got {entry!r}"))
            continue
        problems += [((i, *where), message) for where, message in _unknown_keys(entry)]
        group, wrong = _decode(entry)
        if wrong:
            problems += [((i, *key.split(".")), message) for key, message in wrong]
            continue
        problems += [((i, *_location_of(k)), m) for k, m in validate_node_group_fields(group)]
        problems += [((i, k), m) for k, m in documented_limits(group)]
        if group.name and group.name in names:
            problems.append(((i, "name"), f"{group.name!r} is also node_groups[{names[group.name]}]"))
        names.setdefault(group.name, i)
        groups.append(group)
    return groups, problems
