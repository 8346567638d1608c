"""Controller settings of kube-controller-manager's HPA controller and the feature gates that change
its results, with Kubernetes' production defaults."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class FeatureGates:
    hpa_configurable_tolerance: bool = True  # beta, on by default
    hpa_scale_to_zero: bool = True  # beta and on by default in the newest master (spec hpa.md §1)
    pod_level_resources: bool = False


@dataclass(frozen=True, slots=True)
class HPAConfig:
    """``--horizontal-pod-autoscaler-*`` flags (seconds) and the hard-coded no-behavior scale-up cap."""

    tolerance: float = 0.1
    downscale_stabilization: float = 300.0
    cpu_initialization_period: float = 300.0
    initial_readiness_delay: float = 30.0
    sync_period: float = 15.0
    scale_up_limit_factor: float = 2.0
    scale_up_limit_minimum: float = 4.0
    gates: FeatureGates = field(default_factory=FeatureGates)
