"""What the controller remembers per HPA between syncs (lost on restart, as upstream): recent
recommendations for stabilization, and recent scale events for rate-limit policies."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(slots=True)
class Recommendation:
    replicas: int
    timestamp: float


@dataclass(slots=True)
class ScaleEvent:
    replica_change: int
    timestamp: float
    outdated: bool = False


@dataclass(slots=True)
class HPAState:
    """``recommendations`` None means never synced: the first sync seeds it with the current count."""

    recommendations: list[Recommendation] | None = None
    scale_up_events: list[ScaleEvent] = field(default_factory=list)
    scale_down_events: list[ScaleEvent] = field(default_factory=list)
