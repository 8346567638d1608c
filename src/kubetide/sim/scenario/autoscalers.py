"""Autoscaler settings (§8): HPA controller options, Cluster Autoscaler flags, Escalator node groups.

A section that is written is enabled unless it says ``enabled: false``; the HPA is enabled by default
exactly when an HPA object exists (``enabled: null`` until :meth:`HpaSettings.is_enabled` resolves it).
Names and defaults are upstream's: kube-controller-manager's ``--horizontal-pod-autoscaler-*`` flags,
Cluster Autoscaler's flags (registry in :mod:`kubetide.cluster.flags`), and the keys, values and
validation of Escalator's ``nodegroups_config.yaml`` (through :mod:`kubetide.escalator.config`).
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar

from pydantic import Field, model_validator

from kubetide.cluster.flags import CA_FLAGS, FlagSpec, parse_flags
from kubetide.escalator.config import NodeGroupOptions, node_groups_from_entries
from kubetide.hpa.config import HPAConfig
from kubetide.hpa.flags import HPA_FLAGS, config_from_flags
from kubetide.sim.scenario.base import Duration, SpecModel, errors_at

__all__ = [
    "Autoscalers",
    "ClusterAutoscalerSettings",
    "EscalatorSettings",
    "HpaSettings",
]


HPA_REGISTRY: dict[str, FlagSpec] = {
    f.name: FlagSpec(f.name, f.kind, f.default, f.help, check=f.check) for f in HPA_FLAGS
}
# The short camelCase keys, aliases of kube-controller-manager's flags (same defaults).
HPA_ALIASES: dict[str, str] = {
    "syncPeriod": "horizontal-pod-autoscaler-sync-period",
    "tolerance": "horizontal-pod-autoscaler-tolerance",
    "downscaleStabilization": "horizontal-pod-autoscaler-downscale-stabilization",
    "cpuInitializationPeriod": "horizontal-pod-autoscaler-cpu-initialization-period",
    "initialReadinessDelay": "horizontal-pod-autoscaler-initial-readiness-delay",
}


class HpaSettings(SpecModel):
    enabled: bool | None = None  # None: enabled when any HorizontalPodAutoscaler exists
    # kube-controller-manager's flag names (``horizontal-pod-autoscaler-sync-period: 15s``).
    flags: dict[str, Any] = Field(default_factory=dict)
    syncPeriod: Annotated[Duration, Field(gt=0)] = 15.0
    tolerance: Annotated[float, Field(ge=0)] = 0.1
    downscaleStabilization: Annotated[Duration, Field(ge=0)] = 300.0
    cpuInitializationPeriod: Annotated[Duration, Field(ge=0)] = 300.0
    initialReadinessDelay: Annotated[Duration, Field(ge=0)] = 30.0

    @model_validator(mode="after")
    def _flags(self) -> HpaSettings:
        _, problems = parse_flags(self.flags, HPA_REGISTRY)
        found: list[tuple[tuple[str | int, ...], str, Any]] = [
            (("flags", name), msg.replace("Cluster Autoscaler", "HPA controller"), self.flags[name])
            for name, msg in problems
        ]
        for alias, flag in HPA_ALIASES.items():
            if alias in self.model_fields_set and flag in self.flags:
                found.append(
                    ((alias,), f"set twice: here and as flags.{flag} (keep one)", getattr(self, alias))
                )
        if found:
            raise errors_at("flags", found)
        return self

    def is_enabled(self, has_hpa_objects: bool) -> bool:
        return has_hpa_objects if self.enabled is None else self.enabled

    def config(self) -> HPAConfig:
        """The controller's settings: the flags, else their camelCase aliases, else the defaults."""
        values, _ = parse_flags(self.flags, HPA_REGISTRY)
        for alias, flag in HPA_ALIASES.items():
            values.setdefault(flag, float(getattr(self, alias)))
        return config_from_flags(values)


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


class EscalatorSettings(SpecModel):
    """Escalator's loop period and its ``node_groups`` entries, as written in its ``nodegroups`` ConfigMap
    (snake_case keys, Go duration strings), decoded and validated by :mod:`kubetide.escalator.config`,
    the code live mode uses, with Escalator's messages. ``cloud_provider_group_name`` names a
    ``spec.nodeGroups[].name``."""

    enabled: bool = True
    scanInterval: Annotated[Duration, Field(gt=0)] = 60.0
    drymode: bool = False  # Escalator's --drymode: every group decides and logs, nothing is changed
    nodeGroups: list[Any] = Field(default_factory=list)

    @model_validator(mode="after")
    def _node_groups(self) -> EscalatorSettings:
        if not self.nodeGroups and not self.enabled:
            return self
        _, found = node_groups_from_entries(self.nodeGroups)
        problems = [(("nodeGroups", *loc), message, None) for loc, message in found]
        if problems:  # the loader lists them in document order
            raise errors_at("nodeGroups", problems)
        return self

    @property
    def groups(self) -> tuple[NodeGroupOptions, ...]:
        """The decoded groups, in config order (valid: the model does not load otherwise)."""
        return tuple(node_groups_from_entries(self.nodeGroups)[0]) if self.nodeGroups else ()


class Autoscalers(SpecModel):
    unknown_key_noun: ClassVar[str] = "autoscaler (not implemented in kubetide)"

    hpa: HpaSettings = Field(default_factory=HpaSettings)
    clusterAutoscaler: ClusterAutoscalerSettings | None = None  # None: not running
    escalator: EscalatorSettings | None = None  # None: not running
