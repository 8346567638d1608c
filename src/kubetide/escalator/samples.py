"""One value of one of Escalator's metric series, as the core hands it to the caller to export.

Its own module so that a run's result (:mod:`kubetide.escalator.result`) can carry samples while the
metrics' rules (:mod:`kubetide.escalator.metrics`) read a run's result, without a circle of imports.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

__all__ = ["Labels", "MetricKind", "Sample"]

Labels = tuple[tuple[str, str], ...]


class MetricKind(StrEnum):
    GAUGE = "gauge"
    COUNTER = "counter"
    HISTOGRAM = "histogram"  # a Sample of this kind is one observation


@dataclass(frozen=True, slots=True)
class Sample:
    name: str
    labels: Labels
    value: float
    kind: MetricKind = MetricKind.GAUGE
