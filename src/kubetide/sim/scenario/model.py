"""The scenario document (§1): header, metadata and spec, tying the section models together.

Checks that need more than one section (references, the catalog, the duration) are not here but in
:mod:`kubetide.sim.scenario.checks`, run by the loader after this model validates; build scenarios
with :func:`kubetide.sim.scenario.load_scenario` or :func:`~kubetide.sim.scenario.parse_scenario`.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cached_property
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, PrivateAttr, field_validator

from kubetide.model.validation.names import label_value
from kubetide.sim.scenario.actions import Action
from kubetide.sim.scenario.autoscalers import Autoscalers
from kubetide.sim.scenario.base import (
    FILE_NAME,
    Duration,
    NonNegativeInt,
    QuantityValue,
    SpecModel,
    custom_error,
)
from kubetide.sim.scenario.catalog import BUILTIN_CATALOG, InstanceType, override
from kubetide.sim.scenario.nodegroups import NodeGroupSpec
from kubetide.sim.scenario.objects import object_key
from kubetide.sim.scenario.traffic import Traffic

__all__ = [
    "API_VERSION",
    "KIND",
    "InstanceTypeSpec",
    "Metadata",
    "MetricsSettings",
    "Scenario",
    "ScenarioSpec",
]

API_VERSION = "kubetide.io/v1alpha1"
KIND = "Scenario"


class Metadata(SpecModel):
    # Used as a directory name for outputs: no slashes, no leading dot.
    name: Annotated[str, Field(pattern=FILE_NAME, max_length=253)]
    labels: dict[str, str] = Field(default_factory=dict)
    annotations: dict[str, str] = Field(default_factory=dict)


class InstanceTypeSpec(SpecModel):
    """An addition to the catalog, or the fields of a built-in entry to override."""

    cpu: QuantityValue | None = None
    memory: QuantityValue | None = None
    pods: NonNegativeInt | None = None
    gpu: NonNegativeInt | None = None
    pricePerHour: Annotated[float, Field(ge=0)] | None = None
    zone: str | None = None

    @field_validator("zone")
    @classmethod
    def _zone_is_a_label_value(cls, zone: str | None) -> str | None:
        """The zone becomes the Nodes' ``topology.kubernetes.io/zone`` label."""
        problems = label_value(zone) if zone is not None else ()
        if problems:
            raise custom_error(f"invalid value {zone!r}: {problems[0]}")
        return zone


class MetricsSettings(SpecModel):
    resolution: Annotated[Duration, Field(gt=0)] = 15.0  # metrics-server scrape interval
    window: Annotated[Duration, Field(gt=0)] = 30.0  # usage averaging window of each sample


class ScenarioSpec(SpecModel):
    duration: Annotated[Duration, Field(gt=0)]
    seed: Annotated[int, Field(ge=0)] = 0
    instanceTypes: dict[str, InstanceTypeSpec] = Field(default_factory=dict)
    nodeGroups: list[NodeGroupSpec] = Field(default_factory=list)
    objects: list[dict[str, Any]] = Field(default_factory=list)  # checked by objects.check_object
    traffic: list[Traffic] = Field(default_factory=list)
    actions: list[Action] = Field(default_factory=list)
    metrics: MetricsSettings = Field(default_factory=MetricsSettings)
    autoscalers: Autoscalers = Field(default_factory=Autoscalers)


class Scenario(SpecModel):
    apiVersion: Literal["kubetide.io/v1alpha1"]
    kind: Literal["Scenario"]
    metadata: Metadata
    spec: ScenarioSpec

    # Directory of the scenario file: csv series paths are relative to it.
    _base_dir: Path = PrivateAttr(default_factory=Path.cwd)
    # Where each of spec.objects came from (inline, a List's item, a file's document), for messages;
    # and what was skipped (kinds the simulator does not model), for the commands to print.
    _object_paths: list[str] = PrivateAttr(default_factory=list)
    _notes: list[str] = PrivateAttr(default_factory=list)

    @property
    def name(self) -> str:
        return self.metadata.name

    @property
    def base_dir(self) -> Path:
        return self._base_dir

    @cached_property
    def catalog(self) -> Mapping[str, InstanceType]:
        """The built-in catalog with ``spec.instanceTypes`` applied."""
        merged = dict(BUILTIN_CATALOG)
        for name, spec in self.spec.instanceTypes.items():
            fields: dict[str, Any] = {}
            for ours, theirs in (
                ("cpu", "cpu"),
                ("memory", "memory"),
                ("pods", "pods"),
                ("gpu", "gpu"),
                ("pricePerHour", "price_per_hour"),
                ("zone", "zone"),
            ):
                value = getattr(spec, ours)
                if value is not None:
                    fields[theirs] = str(value) if ours in ("cpu", "memory") else value
            merged[name] = override(merged.get(name), name, fields)
        return merged

    def enabled_autoscalers(self) -> tuple[str, ...]:
        """Which autoscalers run, by their event-source names (``hpa``, ``cluster-autoscaler``, ``escalator``)."""
        autoscalers = self.spec.autoscalers
        out = ["hpa"] if autoscalers.hpa.is_enabled(self.has_hpa_objects()) else []
        if autoscalers.clusterAutoscaler is not None and autoscalers.clusterAutoscaler.enabled:
            out.append("cluster-autoscaler")
        if autoscalers.escalator is not None and autoscalers.escalator.enabled:
            out.append("escalator")
        return tuple(out)

    def has_hpa_objects(self) -> bool:
        """Whether any HorizontalPodAutoscaler exists during the run: at t=0 or applied by an action
        (the HPA controller is then enabled by default)."""
        manifests = [*self.spec.objects, *(a.apply for a in self.spec.actions if a.apply is not None)]
        return any(m.get("kind") == "HorizontalPodAutoscaler" for m in manifests)

    def object_path(self, index: int) -> str:
        """Where ``spec.objects[index]`` (after files and Lists are expanded) is in the user's files."""
        paths = self._object_paths
        return paths[index] if index < len(paths) else f"spec.objects[{index}]"

    @property
    def notes(self) -> list[str]:
        """Objects skipped while loading (Kubernetes kinds the simulator does not model)."""
        return list(self._notes)

    def objects_by_key(self) -> dict[str, dict[str, Any]]:
        """The t=0 objects by ``Kind/namespace/name``."""
        return {object_key(m): m for m in self.spec.objects}

    def node_group(self, name: str) -> NodeGroupSpec:
        for group in self.spec.nodeGroups:
            if group.name == name:
                return group
        raise KeyError(name)
