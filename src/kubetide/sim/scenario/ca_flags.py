"""Cluster Autoscaler flags a scenario may set: names, types and upstream defaults, in one registry.

``spec.autoscalers.clusterAutoscaler.flags`` uses CA's own flag names (``scan-interval: 10s``). Each
known flag is a :class:`FlagSpec` in :data:`CA_FLAGS`; the cluster-autoscaler implementation registers
what it supports with :func:`register_flag` (or by extending ``_UPSTREAM`` below), and the scenario
then rejects unknown names (suggesting the closest) and ill-typed values. Names, kinds and
defaults come from :data:`kubetide.cluster.options.FLAGS` (upstream's ``config/flags``); this module
adds the scenario-side checks.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from kubetide.cluster.options import EXPANDER_NAMES, FLAGS
from kubetide.model.durations import DurationError, parse_duration

__all__ = ["CA_FLAGS", "EXPANDERS", "FlagSpec", "parse_flags", "register_flag"]

FlagKind = Literal["duration", "bool", "int", "float", "string", "list"]
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


def _fraction(value: Any) -> str | None:
    return "must be between 0 and 1" if not 0 <= value <= 1 else None


# The flag list itself is :data:`kubetide.cluster.options.FLAGS` (the one source of truth for names,
# kinds and defaults); this registry adds what only the scenario checks: choices and value ranges.
_CHOICES: dict[str, tuple[str, ...]] = {"expander": EXPANDERS}
_CHECKS: dict[str, Callable[[Any], str | None]] = {
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
}
_UPSTREAM = tuple(
    FlagSpec(f.name, f.kind, f.default, f.help, _CHOICES.get(f.name, ()), _CHECKS.get(f.name)) for f in FLAGS
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
    elif spec.kind == "list":
        # CA's repeatable flags: a YAML list of strings, or one comma-separated string.
        items = value.split(",") if isinstance(value, str) else value
        if not isinstance(items, list | tuple) or not all(isinstance(i, str) for i in items):
            raise ValueError(f"must be a list of strings, got {value!r}")
        parsed = tuple(i.strip() for i in items if i.strip())
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
