"""Cluster Autoscaler's flags as users write them: names, kinds, upstream defaults and value checks.

Two front ends share this registry: a scenario's ``spec.autoscalers.clusterAutoscaler.flags`` (YAML
values: ``scan-interval: 10s``) and ``kubetide run cluster-autoscaler``'s command line
(``--scan-interval=10s``, converted by :func:`value_from_text`). Either way unknown names are rejected
with the closest known one suggested, and ill-typed or out-of-range values with the reason. Names,
kinds and defaults come from :data:`kubetide.cluster.options.FLAGS` (upstream's ``config/flags``); this
module adds the checks.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, cast

from kubetide.cloud.provider import PricingModel
from kubetide.cluster.compat import CA_VERSIONS
from kubetide.cluster.expander import ExpanderDependencies, ExpanderError, build_strategy
from kubetide.cluster.options import EXPANDER_NAMES, FLAGS
from kubetide.cluster.scaleup.limits import parse_min_max
from kubetide.model.durations import DurationError, parse_duration
from kubetide.model.numbers import (
    INT64_MAX,
    INT64_MIN,
    NumberError,
    finite_float,
    parse_ascii_float,
    parse_ascii_int,
)

__all__ = [
    "CA_FLAGS",
    "EXPANDERS",
    "NOT_IMPLEMENTED",
    "SCENARIO_UNSUPPORTED",
    "FlagSpec",
    "parse_flags",
    "register_flag",
    "value_from_text",
]

# "list": CA's comma-separated or repeated string lists; "multi": CA's MultiStringFlag, each occurrence one
# item, never split at commas (an auto-discovery spec is itself comma-separated).
FlagKind = Literal["duration", "bool", "int", "float", "string", "list", "multi"]
EXPANDERS = EXPANDER_NAMES


@dataclass(frozen=True)
class FlagSpec:
    name: str
    kind: FlagKind
    default: Any
    help: str = ""
    choices: tuple[str, ...] = ()  # for strings; a comma-separated list is checked item by item
    check: Callable[[Any], str | None] | None = None  # extra check: returns a problem or None


def _non_negative(value: Any) -> str | None:
    return "must be >= 0" if value < 0 else None


def _drain_priorities(value: Any) -> str | None:
    """CA's ``priority:seconds,...`` (kubelet's shutdownGracePeriodByPodPriority): integers each."""
    for entry in filter(None, str(value).split(",")):
        priority, sep, seconds = entry.partition(":")
        try:
            ok = bool(sep) and int(seconds) >= 0 and isinstance(int(priority), int)
        except ValueError:
            ok = False
        if not ok:
            return f"must be priority:seconds pairs of integers like 10000:30,0:60 ({entry!r} is not)"
    return None


def _fraction(value: Any) -> str | None:
    return "must be between 0 and 1" if not 0 <= value <= 1 else None


def _positive(value: Any) -> str | None:
    return "must be > 0" if value <= 0 else None


def _min_max(value: Any) -> str | None:
    try:
        parse_min_max(value)
    except ValueError as exc:
        return f"must be <min>:<max> with integers 0 <= min <= max ({exc})"
    return None


def _gpu_total(value: Any) -> str | None:
    for item in value:
        kind, sep, rest = item.partition(":")
        if not kind or not sep or _min_max(rest) is not None:
            return f"each item must be <gpu type>:<min>:<max> with integers 0 <= min <= max, got {item!r}"
    return None


def _expander_chain(value: Any) -> str | None:
    # The chain's own rules (no repeats, random last, grpc unavailable), checked as CA checks them at
    # start; the price expander's pricing is the provider's (the simulated cloud has one).
    try:
        build_strategy(value, ExpanderDependencies(pricing=cast(PricingModel, _PRICED)))
    except ExpanderError as exc:
        return str(exc)
    return None


_PRICED = object()


def _ca_version(value: Any) -> str | None:
    if value in CA_VERSIONS:
        return None
    return f"must be {' or '.join(CA_VERSIONS)} (the Cluster Autoscaler release kubetide decides as)"


# String flags whose values read as YAML numbers (``ca-compatibility-version: 1.36``): taken as the text.
_NUMBER_AS_TEXT = frozenset({"ca-compatibility-version"})

# The flag list itself is :data:`kubetide.cluster.options.FLAGS` (the one source of truth for names,
# kinds and defaults); this registry adds what only the scenario checks: choices and value ranges.
_CHOICES: dict[str, tuple[str, ...]] = {"expander": EXPANDERS}
_CHECKS: dict[str, Callable[[Any], str | None]] = {
    "scan-interval": _positive,
    "cores-total": _min_max,
    "memory-total": _min_max,
    "gpu-total": _gpu_total,
    "expander": _expander_chain,
    "max-nodes-total": _non_negative,
    "scale-down-utilization-threshold": _fraction,
    "scale-down-gpu-utilization-threshold": _fraction,
    "scale-down-candidates-pool-ratio": _fraction,
    "scale-down-candidates-pool-min-count": _non_negative,
    "max-empty-bulk-delete": _non_negative,
    "max-scale-down-parallelism": _non_negative,
    "max-drain-parallelism": _non_negative,
    "max-graceful-termination-sec": _non_negative,
    "max-total-unready-percentage": _non_negative,
    "ok-total-unready-count": _non_negative,
    "max-nodes-per-scaleup": _non_negative,
    "max-bulk-soft-taint-count": _non_negative,
    "drain-priority-config": _drain_priorities,
    "ca-compatibility-version": _ca_version,
}
_UPSTREAM = tuple(
    FlagSpec(f.name, f.kind, f.default, f.help, _CHOICES.get(f.name, ()), _CHECKS.get(f.name)) for f in FLAGS
)

CA_FLAGS: dict[str, FlagSpec] = {f.name: f for f in _UPSTREAM}

# Flags a scenario cannot honour (its node groups and cloud are spec.nodeGroups): rejected there rather
# than accepted and ignored. The live commands take them.
SCENARIO_UNSUPPORTED: Mapping[str, str] = {
    "node-group-auto-discovery": "node groups come from spec.nodeGroups in a scenario",
    "cloud-provider": "a scenario's cloud is the simulated one (spec.nodeGroups)",
    "cloud-config": "a scenario's cloud is the simulated one (spec.nodeGroups)",
}


def register_flag(spec: FlagSpec) -> None:
    """Add or replace a known flag (the cluster-autoscaler package calls this for what it supports)."""
    CA_FLAGS[spec.name] = spec


# Flags whose behaviour kubetide's loop does not implement yet: a scenario may only give their default,
# so a run never silently differs from what the flag asks (the README lists the missing CA features).
# The live command still accepts them, so a CA Deployment's args move over unchanged.
NOT_IMPLEMENTED: frozenset[str] = frozenset(
    {
        "dynamic-node-delete-delay-after-taint-enabled",
        "salvo-scale-up",
        "enable-graceful-degradation",
        "force-ds",
        "drain-priority-config",
        "node-deletion-delay-timeout",
        "node-deletion-batcher-interval",
        # The loop runs every --scan-interval, as CA 1.31's default (false) does; CA 1.36's default
        # (true: the next loop at once after a scale-up or a new unschedulable pod) is not modelled.
        "frequent-loops-enabled",
        # CA 1.31's ScaleDownCandidatesDelayProcessor (per-group delays fed by the scale-state
        # observers) is not modelled: the global cooldown would otherwise be skipped with no delay.
        "scale-down-delay-type-local",
    }
)


def parse_flags(
    raw: Mapping[Any, Any], registry: Mapping[str, FlagSpec] | None = None, *, scenario: bool = False
) -> tuple[dict[str, Any], list[tuple[str, str]]]:
    """Typed values for ``raw`` (durations in seconds) and the problems as ``(flag, message)``.

    ``registry`` defaults to :data:`CA_FLAGS`; the live commands pass it with their own flags added.
    Values other than the default for what is not implemented (:data:`NOT_IMPLEMENTED`) are problems
    everywhere (a flag is never accepted and ignored). ``scenario``: also reject the flags a scenario
    cannot honour (:data:`SCENARIO_UNSUPPORTED`).
    """
    known = CA_FLAGS if registry is None else registry
    values: dict[str, Any] = {}
    problems: list[tuple[str, str]] = []
    for name, value in raw.items():
        if not isinstance(name, str):  # a YAML key such as 0 or true: no flag is named so
            problems.append((str(name), "unknown Cluster Autoscaler flag (a flag name is text)"))
            continue
        if scenario and name in SCENARIO_UNSUPPORTED:
            problems.append((name, f"not supported in a scenario: {SCENARIO_UNSUPPORTED[name]}"))
            continue
        spec = known.get(name)
        if spec is None:
            close = difflib.get_close_matches(name, list(known), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            problems.append((name, f"unknown Cluster Autoscaler flag{hint}"))
            continue
        try:
            values[name] = _parse(spec, value)
        except ValueError as exc:
            problems.append((name, str(exc)))
            continue
        if name in NOT_IMPLEMENTED and values[name] != spec.default:
            problems.append(
                (name, f"not implemented by kubetide yet: only its default ({spec.default!r}) is accepted")
            )
    # main.go: --max-empty-bulk-delete given without --max-scale-down-parallelism sets the parallelism
    # (the removed flag was its alias); given with it, the parallelism wins.
    if "max-empty-bulk-delete" in values and "max-scale-down-parallelism" not in raw:
        values["max-scale-down-parallelism"] = values["max-empty-bulk-delete"]
    allowed = set(values.get("allowed-scheduler-names") or ())
    if allowed:  # upstream's parseAllowedSchedulers
        for scheduler in sorted(set(values.get("bypassed-scheduler-names") or ()) - allowed):
            problems.append(
                (
                    "bypassed-scheduler-names",
                    f"should be a subset of --allowed-scheduler-names: {scheduler} not included in "
                    "--allowed-scheduler-names",
                )
            )
    return values, problems


def _parse(spec: FlagSpec, value: Any) -> Any:
    if spec.kind == "duration":
        if _bare_number(value):
            # Go's flag package rejects a duration without a unit ("missing unit in duration"); "0" is
            # the one exception. Taking 10 as 10s would be a guess CA does not make.
            raise ValueError(f"must be a duration with a unit (e.g. '{value}s'), got {value!r}")
        try:
            parsed: Any = parse_duration(value)
        except DurationError as exc:
            raise ValueError(str(exc)) from None
    elif spec.kind == "bool":
        if not isinstance(value, bool):
            raise ValueError(f"must be true or false, got {value!r}")
        parsed = value
    elif spec.kind == "int":
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"must be an integer, got {value!r}")
        if not INT64_MIN <= value <= INT64_MAX:  # Go's int: strconv refuses more ("value out of range")
            raise ValueError(f"out of range: must be between {INT64_MIN} and {INT64_MAX}, got {value}")
        parsed = value
    elif spec.kind in ("list", "multi"):
        # CA's repeatable flags: a YAML list of strings, or one comma-separated string ("multi": one item).
        items = ([value] if spec.kind == "multi" else value.split(",")) if isinstance(value, str) else value
        if not isinstance(items, list | tuple) or not all(isinstance(i, str) for i in items):
            raise ValueError(f"must be a list of strings, got {value!r}")
        parsed = tuple(i.strip() for i in items if i.strip())
    elif spec.kind == "float":
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValueError(f"must be a number, got {value!r}")
        parsed = finite_float(value)  # NaN and the infinities compare false with every bound
    else:
        if spec.name in _NUMBER_AS_TEXT and isinstance(value, int | float) and not isinstance(value, bool):
            value = str(value)
        if not isinstance(value, str):
            raise ValueError(f"must be a string, got {value!r}")
        parsed = value
        for item in value.split(",") if spec.choices else ():
            if item not in spec.choices:
                raise ValueError(f"must be one of {', '.join(spec.choices)} (comma-separated), got {item!r}")
    problem = spec.check(parsed) if spec.check else None
    if problem:
        raise ValueError(f"{problem}, got {value!r}")
    return parsed


def _bare_number(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int | float):
        return value != 0
    return (
        isinstance(value, str) and bool(re.fullmatch(r"\s*[0-9]+(\.[0-9]*)?\s*", value)) and float(value) != 0
    )


_TRUE = frozenset({"1", "t", "T", "TRUE", "true", "True"})  # Go's strconv.ParseBool
_FALSE = frozenset({"0", "f", "F", "FALSE", "false", "False"})


def value_from_text(spec: FlagSpec, text: str | list[str]) -> Any:
    """A command-line value as the YAML value :func:`parse_flags` takes (a repeated flag gives a list).

    Only the syntax is converted here (Go's bool and number spellings); ranges and choices are checked
    by ``parse_flags``, so the command line and scenario files accept exactly the same values.
    """
    if spec.kind in ("list", "multi"):
        items = text if isinstance(text, list) else [text]
        if spec.kind == "multi":
            return list(items)
        return [part for item in items for part in item.split(",")]
    if isinstance(text, list):
        text = text[-1]  # Go's flag package: the last occurrence of a scalar flag wins
    if spec.kind == "bool":
        if text in _TRUE:
            return True
        if text in _FALSE:
            return False
        return text  # parse_flags reports it
    # Go's spellings only (ASCII digits): Python's int() and float() also take "١٠" and "1_0".
    if spec.kind == "int":
        try:
            return parse_ascii_int(text, low=None, high=None)
        except NumberError:
            return text
    if spec.kind == "float":
        try:
            return parse_ascii_float(text)
        except NumberError:
            return text
    return text
