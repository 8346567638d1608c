"""Traffic (§5): load on a workload, turned by the simulator into per-pod usage and custom metrics.

A ``metrics`` entry without its own ``series`` is derived from the traffic's ``rps``: for ``Pods``
metrics it is rps divided over the Ready pods; for ``Object`` and ``External`` metrics, the rps itself.
That the ``target`` names an object in the scenario is checked in :mod:`kubetide.sim.scenario.checks`.

``perPod`` (kubetide's extension) is usage measured per pod rather than derived from requests: each
Ready pod uses ``perPod.cpu`` cores (on top of ``baseCpu`` and its share of ``rps x cpuPerRequest``)
and each Running pod ``perPod.memory`` bytes (instead of ``memoryPerPod``) at every moment, however
many pods there are: what ``kubetide record`` measured on a real day. With it, ``rps`` may be left
out (no requests: 0).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from kubetide.sim.scenario.base import ObjectRef, QuantityValue, SpecModel, errors_at
from kubetide.sim.scenario.series_spec import SeriesSpec

__all__ = ["MetricFeedSpec", "PerPodUsage", "Traffic"]


class MetricFeedSpec(SpecModel):
    """A custom (``Pods``, ``Object``) or external (``External``) metric the metrics APIs will serve."""

    name: Annotated[str, Field(min_length=1)]
    kind: Literal["Pods", "Object", "External"]
    selector: dict[str, str] = Field(default_factory=dict)  # metric labels, matched by the HPA's selector
    series: SeriesSpec | None = None  # None: derived from the traffic's rps
    describedObject: ObjectRef | None = None  # Object metrics: the object they describe (default: target)


class PerPodUsage(SpecModel):
    """Usage of each pod as series over time: ``cpu`` in cores per Ready pod, ``memory`` in bytes per
    Running pod (kubetide's extension; what a recorded day measured)."""

    cpu: SeriesSpec | None = None
    memory: SeriesSpec | None = None


class Traffic(SpecModel):
    target: ObjectRef
    rps: SeriesSpec | None = None  # required unless perPod gives the usage
    cpuPerRequest: QuantityValue | None = None  # cpu per request/s, shared evenly over Ready pods
    baseCpu: QuantityValue | None = None  # per pod, always
    memoryPerPod: QuantityValue | None = None
    capacityPerPod: Annotated[float, Field(gt=0)] | None = None  # rps one pod serves before overload
    metrics: list[MetricFeedSpec] = Field(default_factory=list)
    perPod: PerPodUsage | None = None

    @model_validator(mode="after")
    def _some_load(self) -> Traffic:
        if self.rps is None and (
            self.perPod is None or (self.perPod.cpu is None and self.perPod.memory is None)
        ):
            raise errors_at("Traffic", [(("rps",), "is required (or perPod.cpu or perPod.memory)", None)])
        return self
