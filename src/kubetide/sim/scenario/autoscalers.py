"""Autoscaler settings (§8): HPA controller options, Cluster Autoscaler flags, Escalator node groups.

A section that is written is enabled unless it says ``enabled: false``; the HPA is enabled by default
exactly when an HPA object exists (``enabled: null`` until :meth:`HpaSettings.is_enabled` resolves it).
Names and defaults are upstream's: kube-controller-manager's ``--horizontal-pod-autoscaler-*`` flags,
Cluster Autoscaler's flags (registry in :mod:`kubetide.cluster.flags`), and the keys of
Escalator's ``nodegroups_config.yaml``.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from pydantic import Field, model_validator

from kubetide.cluster.flags import CA_FLAGS, parse_flags
from kubetide.sim.scenario.base import Duration, NonNegativeInt, SpecModel, errors_at

__all__ = [
    "Autoscalers",
    "ClusterAutoscalerSettings",
    "EscalatorNodeGroup",
    "EscalatorSettings",
    "HpaSettings",
]

Percent = Annotated[float, Field(ge=0)]


class HpaSettings(SpecModel):
    enabled: bool | None = None  # None: enabled when any HorizontalPodAutoscaler exists
    syncPeriod: Annotated[Duration, Field(gt=0)] = 15.0
    tolerance: Annotated[float, Field(ge=0)] = 0.1
    downscaleStabilization: Duration = 300.0
    cpuInitializationPeriod: Duration = 300.0
    initialReadinessDelay: Duration = 30.0

    def is_enabled(self, has_hpa_objects: bool) -> bool:
        return has_hpa_objects if self.enabled is None else self.enabled


class ClusterAutoscalerSettings(SpecModel):
    enabled: bool = True
    flags: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _flags(self) -> ClusterAutoscalerSettings:
        _, problems = parse_flags(self.flags, scenario=True)
        if problems:
            raise errors_at("flags", [(("flags", name), msg, self.flags[name]) for name, msg in problems])
        return self

    def flag(self, name: str) -> Any:
        """The typed value of a known flag: as written, else its default (durations in seconds)."""
        values, _ = parse_flags({name: self.flags[name]} if name in self.flags else {})
        return values[name] if name in values else CA_FLAGS[name].default


class EscalatorNodeGroup(SpecModel):
    """One entry of Escalator's ``node_groups`` (its own snake_case keys)."""

    name: Annotated[str, Field(min_length=1)]
    label_key: Annotated[str, Field(min_length=1)]
    label_value: str
    cloud_provider_group_name: Annotated[str, Field(min_length=1)]  # a spec.nodeGroups[].name
    min_nodes: NonNegativeInt = 0
    max_nodes: NonNegativeInt = 0
    dry_mode: bool = False
    scale_on_starve: bool = False
    taint_upper_capacity_threshold_percent: Percent
    taint_lower_capacity_threshold_percent: Percent
    scale_up_threshold_percent: Percent
    slow_node_removal_rate: NonNegativeInt
    fast_node_removal_rate: NonNegativeInt
    scale_up_cool_down_period: Duration = 0.0
    scale_up_cool_down_timeout: Duration = 0.0
    soft_delete_grace_period: Duration
    hard_delete_grace_period: Duration
    taint_effect: Literal["NoSchedule", "NoExecute", "PreferNoSchedule"] = "NoSchedule"
    max_node_age: Duration = 0.0  # 0: disabled
    unhealthy_node_grace_period: Duration = 0.0
    health_check_newest_nodes_percent: Percent = 0.0
    max_unhealthy_nodes_percentage: Percent = 0.0
    aws: dict[str, Any] = Field(default_factory=dict)  # accepted and ignored: no AWS API in the simulator

    @model_validator(mode="after")
    def _escalator_rules(self) -> EscalatorNodeGroup:
        # The consistency rules Escalator's ValidateNodeGroup enforces at start-up.
        problems: list[tuple[tuple[str | int, ...], str, Any]] = []
        lower, upper = (
            self.taint_lower_capacity_threshold_percent,
            self.taint_upper_capacity_threshold_percent,
        )
        if upper <= lower:
            problems.append(
                (
                    ("taint_upper_capacity_threshold_percent",),
                    f"must be > taint_lower_capacity_threshold_percent (got {upper:g} <= {lower:g})",
                    upper,
                )
            )
        if self.scale_up_threshold_percent <= upper:
            problems.append(
                (
                    ("scale_up_threshold_percent",),
                    f"must be > taint_upper_capacity_threshold_percent (got {self.scale_up_threshold_percent:g} <= {upper:g})",
                    self.scale_up_threshold_percent,
                )
            )
        if self.max_nodes < self.min_nodes:
            problems.append(
                (
                    ("max_nodes",),
                    f"must be >= min_nodes (got {self.max_nodes} < {self.min_nodes})",
                    self.max_nodes,
                )
            )
        if self.hard_delete_grace_period < self.soft_delete_grace_period:
            problems.append(
                (
                    ("hard_delete_grace_period",),
                    "must be >= soft_delete_grace_period",
                    self.hard_delete_grace_period,
                )
            )
        if problems:
            raise errors_at("EscalatorNodeGroup", problems)
        return self


class EscalatorSettings(SpecModel):
    enabled: bool = True
    scanInterval: Annotated[Duration, Field(gt=0)] = 60.0
    nodeGroups: list[EscalatorNodeGroup] = Field(default_factory=list)


class Autoscalers(SpecModel):
    unknown_key_noun: ClassVar[str] = "autoscaler (not implemented in kubetide)"

    hpa: HpaSettings = Field(default_factory=HpaSettings)
    clusterAutoscaler: ClusterAutoscalerSettings | None = None  # None: not running
    escalator: EscalatorSettings | None = None  # None: not running
