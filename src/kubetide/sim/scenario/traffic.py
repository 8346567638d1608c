"""Traffic (§5): load on a workload, turned by the simulator into per-pod usage and custom metrics.

A ``metrics`` entry without its own ``series`` is derived from the traffic's ``rps``: for ``Pods``
metrics it is rps divided over the Ready pods; for ``Object`` and ``External`` metrics, the rps itself.
That the ``target`` names an object in the scenario is checked in :mod:`kubetide.sim.scenario.checks`.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from kubetide.sim.scenario.base import ObjectRef, QuantityValue, SpecModel
from kubetide.sim.scenario.series_spec import SeriesSpec

__all__ = ["MetricFeedSpec", "Traffic"]


class MetricFeedSpec(SpecModel):
    """A custom (``Pods``, ``Object``) or external (``External``) metric the metrics APIs will serve."""

    name: Annotated[str, Field(min_length=1)]
    kind: Literal["Pods", "Object", "External"]
    selector: dict[str, str] = Field(default_factory=dict)  # metric labels, matched by the HPA's selector
    series: SeriesSpec | None = None  # None: derived from the traffic's rps
    describedObject: ObjectRef | None = None  # Object metrics: the object they describe (default: target)


class Traffic(SpecModel):
    target: ObjectRef
    rps: SeriesSpec
    cpuPerRequest: QuantityValue | None = None  # cpu per request/s, shared evenly over Ready pods
    baseCpu: QuantityValue | None = None  # per pod, always
    memoryPerPod: QuantityValue | None = None
    capacityPerPod: Annotated[float, Field(gt=0)] | None = None  # rps one pod serves before overload
    metrics: list[MetricFeedSpec] = Field(default_factory=list)
