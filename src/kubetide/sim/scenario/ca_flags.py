"""Cluster Autoscaler flags a scenario may set: names, types and upstream defaults, in one registry.

``spec.autoscalers.clusterAutoscaler.flags`` uses CA's own flag names (``scan-interval: 10s``). Each
known flag is a :class:`FlagSpec` in :data:`CA_FLAGS`; the cluster-autoscaler implementation registers
what it supports with :func:`register_flag` (or by extending ``_UPSTREAM`` below), and the scenario
then rejects unknown names (suggesting the closest) and ill-typed values. Defaults are upstream's
(``cluster-autoscaler/config/flags``) unless a comment says otherwise.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from kubetide.sim.durations import DurationError, parse_duration

__all__ = ["CA_FLAGS", "EXPANDERS", "FlagSpec", "parse_flags", "register_flag"]

FlagKind = Literal["duration", "bool", "int", "float", "string"]
EXPANDERS = ("random", "most-pods", "least-waste", "price", "priority", "grpc", "least-nodes")


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


def _fraction(value: Any) -> str | None:
    return "must be between 0 and 1" if not 0 <= value <= 1 else None


_UPSTREAM = (
    FlagSpec("scan-interval", "duration", 10.0, "how often the cluster is reevaluated"),
    FlagSpec("expander", "string", "random", "node group choice for scale-up", EXPANDERS),
    FlagSpec("max-node-provision-time", "duration", 900.0, "a node not registered by then is removed"),
    FlagSpec("max-nodes-total", "int", 0, "cluster-wide node cap (0: none)", check=_non_negative),
    FlagSpec("new-pod-scale-up-delay", "duration", 0.0, "pods younger than this are ignored"),
    FlagSpec("scale-down-enabled", "bool", True),
    FlagSpec("scale-down-unneeded-time", "duration", 600.0),
    FlagSpec("scale-down-unready-time", "duration", 1200.0),
    FlagSpec("scale-down-delay-after-add", "duration", 600.0),
    FlagSpec("scale-down-delay-after-delete", "duration", 0.0, "upstream default: scan-interval"),
    FlagSpec("scale-down-delay-after-failure", "duration", 180.0),
    FlagSpec("scale-down-utilization-threshold", "float", 0.5, check=_fraction),
    FlagSpec("scale-down-gpu-utilization-threshold", "float", 0.5, check=_fraction),
    FlagSpec("scale-down-candidates-pool-ratio", "float", 0.1, check=_fraction),
    FlagSpec("scale-down-candidates-pool-min-count", "int", 50, check=_non_negative),
    FlagSpec("max-empty-bulk-delete", "int", 10, check=_non_negative),
    FlagSpec("max-scale-down-parallelism", "int", 10, check=_non_negative),
    FlagSpec("max-graceful-termination-sec", "int", 600, check=_non_negative),
    FlagSpec("unremovable-node-recheck-timeout", "duration", 300.0),
    FlagSpec("max-total-unready-percentage", "float", 45.0, check=_non_negative),
    FlagSpec("ok-total-unready-count", "int", 3, check=_non_negative),
    FlagSpec("initial-node-group-backoff-duration", "duration", 300.0),
    FlagSpec("max-node-group-backoff-duration", "duration", 1800.0),
    FlagSpec("node-group-backoff-reset-timeout", "duration", 10800.0),
    FlagSpec("balance-similar-node-groups", "bool", False),
    FlagSpec("skip-nodes-with-local-storage", "bool", True),
    FlagSpec("skip-nodes-with-system-pods", "bool", True),
    FlagSpec("skip-nodes-with-custom-controller-pods", "bool", True),
    FlagSpec("expendable-pods-priority-cutoff", "int", -10),
    FlagSpec("ignore-daemonsets-utilization", "bool", False),
    FlagSpec("enforce-node-group-min-size", "bool", False),
    FlagSpec("max-inactivity", "duration", 600.0),
    FlagSpec("max-failing-time", "duration", 900.0),
)

CA_FLAGS: dict[str, FlagSpec] = {f.name: f for f in _UPSTREAM}


def register_flag(spec: FlagSpec) -> None:
    """Add or replace a known flag (the cluster-autoscaler package calls this for what it supports)."""
    CA_FLAGS[spec.name] = spec


def parse_flags(raw: dict[str, Any]) -> tuple[dict[str, Any], list[tuple[str, str]]]:
    """Typed values for ``raw`` (durations in seconds) and the problems as ``(flag, message)``."""
    values: dict[str, Any] = {}
    problems: list[tuple[str, str]] = []
    for name, value in raw.items():
        spec = CA_FLAGS.get(name)
        if spec is None:
            close = difflib.get_close_matches(name, list(CA_FLAGS), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            problems.append((name, f"unknown Cluster Autoscaler flag{hint}"))
            continue
        try:
            values[name] = _parse(spec, value)
        except ValueError as exc:
            problems.append((name, str(exc)))
    return values, problems


def _parse(spec: FlagSpec, value: Any) -> Any:
    if spec.kind == "duration":
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
        parsed = value
    elif spec.kind == "float":
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValueError(f"must be a number, got {value!r}")
        parsed = float(value)
    else:
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
