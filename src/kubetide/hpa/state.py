"""What the controller remembers per HPA between syncs: recent recommendations for stabilization, and
recent scale events for rate-limit policies. Upstream keeps them in memory only (a restart forgets
them); kubetide's live controller also publishes them (:mod:`kubetide.hpa.memory`)."""

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


@dataclass(frozen=True, slots=True)
class Remembered:
    """A copy of an HPA's memory at one moment, e.g. what a sync started from. The entries are shared
    with the memory, which replaces them rather than changing them (only a scale event's ``outdated``
    mark changes in place, and nothing but the bookkeeping reads it)."""

    recommendations: tuple[Recommendation, ...] | None
    scale_up_events: tuple[ScaleEvent, ...] = ()
    scale_down_events: tuple[ScaleEvent, ...] = ()

    @staticmethod
    def of(state: HPAState | None) -> Remembered:
        if state is None:
            return NEVER_SYNCED
        recs = state.recommendations
        return Remembered(
            tuple(recs) if recs is not None else None,
            tuple(state.scale_up_events),
            tuple(state.scale_down_events),
        )

    def state(self) -> HPAState:
        """A memory to install in a controller (its own lists)."""
        recs = self.recommendations
        return HPAState(
            list(recs) if recs is not None else None,
            [ScaleEvent(e.replica_change, e.timestamp, e.outdated) for e in self.scale_up_events],
            [ScaleEvent(e.replica_change, e.timestamp, e.outdated) for e in self.scale_down_events],
        )


NEVER_SYNCED = Remembered(None)
