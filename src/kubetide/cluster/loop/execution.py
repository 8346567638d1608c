"""One execution of a plan by the actuator: the ports it writes through, the cluster state it tells of
each outcome (as upstream's executors call ``RegisterScaleUp`` and friends), and the outcome it records.
The executors of each part of a plan (:mod:`.housekeeping_actuator`, :mod:`.scaleup_actuator`,
:mod:`.scaledown_actuator`, :mod:`.drain_actuator`) take it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from kubetide.cloud.provider import NodeGroup
from kubetide.cluster.clusterstate.registry import ClusterStateRegistry
from kubetide.cluster.loop.drain import DrainSettings, DrainState
from kubetide.cluster.loop.events import backoff_event
from kubetide.cluster.loop.outcome import LoopOutcome
from kubetide.cluster.loop.world import CAEvent
from kubetide.model.api import ApiError, ClusterPort

__all__ = ["Execution"]


@dataclass
class Execution:
    """``drains``: the drain of each node being deleted (upstream's drain goroutines' state), kept by the
    actuator from one execution to the next."""

    now: float
    groups: Mapping[str, NodeGroup]
    port: ClusterPort
    registry: ClusterStateRegistry
    settings: DrainSettings
    drains: dict[str, DrainState]
    outcome: LoopOutcome = field(default_factory=LoopOutcome)

    def emit(self, event: CAEvent) -> None:
        self.outcome.events.append(event)

    def backed_off(self, gid: str) -> None:
        """The cluster state backed ``gid`` off: its event, counted."""
        event = backoff_event(self.registry, gid, self.now)
        if event is not None:
            self.outcome.stats.backoffs += 1
            self.emit(event)

    def api_call(
        self,
        reason: str,
        obj: str,
        what: str,
        data: dict[str, object],
        write: Callable[..., object],
        *args: object,
    ) -> bool:
        """Run one API write, ``write(*args)``; on :class:`ApiError` report it (a Warning with CA's
        ``reason``), count it, and tell the caller (False) so it does not go on as if it had been made."""
        try:
            write(*args)
        except ApiError as exc:
            self.outcome.api_errors += 1
            self.outcome.fail(getattr(write, "__name__", "write"), obj, exc)
            self.emit(CAEvent("Warning", reason, obj, f"{what}: {exc}", data))
            return False
        return True
