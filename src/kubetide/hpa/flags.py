"""kube-controller-manager's HPA controller flags: names, kinds, defaults (durations in seconds) and what
each means. ``kubetide run hpa`` takes them on its command line and a scenario under
``autoscalers.hpa.flags``, so both accept exactly the same names and values.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from kubetide.hpa.config import HPAConfig

__all__ = ["HPA_FLAGS", "HPAFlag", "config_from_flags"]


def _positive(value: float) -> str | None:
    return "must be > 0" if value <= 0 else None


def _non_negative(value: float) -> str | None:
    return "must be >= 0" if not value >= 0 else None  # NaN too


@dataclass(frozen=True, slots=True)
class HPAFlag:
    name: str
    kind: Literal["duration", "float"]
    default: float
    help: str
    attr: str  # the HPAConfig field it sets
    check: Callable[[Any], str | None] | None = None


HPA_FLAGS: tuple[HPAFlag, ...] = (
    HPAFlag(
        "horizontal-pod-autoscaler-sync-period",
        "duration",
        15.0,
        "how often each HPA is reconciled",
        "sync_period",
        _positive,
    ),
    HPAFlag(
        "horizontal-pod-autoscaler-tolerance",
        "float",
        0.1,
        "ratio within which no scaling happens",
        "tolerance",
        _non_negative,
    ),
    HPAFlag(
        "horizontal-pod-autoscaler-downscale-stabilization",
        "duration",
        300.0,
        "scale-down look-back window",
        "downscale_stabilization",
        _non_negative,
    ),
    HPAFlag(
        "horizontal-pod-autoscaler-cpu-initialization-period",
        "duration",
        300.0,
        "after pod start: CPU samples of unready pods are skipped",
        "cpu_initialization_period",
        _non_negative,
    ),
    HPAFlag(
        "horizontal-pod-autoscaler-initial-readiness-delay",
        "duration",
        30.0,
        "after pod start: readiness changes count as initial",
        "initial_readiness_delay",
        _non_negative,
    ),
)


def config_from_flags(values: Mapping[str, float]) -> HPAConfig:
    """The controller's settings from typed flag values (absent flags take their defaults)."""
    settings = {f.attr: float(values.get(f.name, f.default)) for f in HPA_FLAGS}
    return HPAConfig(
        tolerance=settings["tolerance"],
        downscale_stabilization=settings["downscale_stabilization"],
        cpu_initialization_period=settings["cpu_initialization_period"],
        initial_readiness_delay=settings["initial_readiness_delay"],
        sync_period=settings["sync_period"],
    )
