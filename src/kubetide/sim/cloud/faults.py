"""Which of a group's scenario faults apply at a given time, and the counts the counted ones have left.

A fault is active in ``[at, until)`` (``until`` None: to the end of the simulation). Counted faults
(``unregistered``, ``missingProviderID``) apply to the next ``count`` instances while their window is
open; overlapping faults of one type are used in the order the scenario lists them. ``unregistered`` is
decided when an instance starts running (it runs, is billed and listed, but never registers), and
``missingProviderID`` when its Node registers. Machines present at t=0 are never affected.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from kubetide.sim.scenario.nodegroups import (
    ApiErrorFault,
    Fault,
    MissingProviderIDFault,
    NodeNotReadyFault,
    StockoutFault,
    UnregisteredFault,
)

__all__ = ["FaultBook", "NotReadyWindow", "Window"]


@dataclass(frozen=True, slots=True)
class Window:
    at: float
    until: float  # inf: to the end

    def active(self, now: float) -> bool:
        return self.at <= now < self.until


@dataclass(frozen=True, slots=True)
class NotReadyWindow:
    window: Window
    count: int


@dataclass(slots=True)
class _Counted:
    window: Window
    left: int


def _window(fault: Fault) -> Window:
    return Window(fault.at, math.inf if fault.until is None else fault.until)


class FaultBook:
    """The faults of one group."""

    def __init__(self, faults: Sequence[Fault]) -> None:
        self._stockouts = [(_window(f), f.mode) for f in faults if isinstance(f, StockoutFault)]
        self._api = [(_window(f), frozenset(f.calls)) for f in faults if isinstance(f, ApiErrorFault)]
        self._unregistered = [
            _Counted(_window(f), f.count) for f in faults if isinstance(f, UnregisteredFault)
        ]
        self._missing_id = [
            _Counted(_window(f), f.count) for f in faults if isinstance(f, MissingProviderIDFault)
        ]
        self.not_ready = [
            NotReadyWindow(_window(f), f.count) for f in faults if isinstance(f, NodeNotReadyFault)
        ]

    def stockout(self, now: float) -> str | None:
        """``"silent"`` or ``"error"`` when a stockout is active (the first listed wins), else None."""
        return next((mode for window, mode in self._stockouts if window.active(now)), None)

    def stockout_ends(self) -> list[float]:
        """When stockouts end (finite ones): the cloud then retries the requests it held back."""
        return sorted({w.until for w, _ in self._stockouts if math.isfinite(w.until)})

    def api_error(self, call: str, now: float) -> bool:
        return any(window.active(now) and call in calls for window, calls in self._api)

    def take_unregistered(self, now: float) -> bool:
        """Whether the instance starting now never registers (uses up one of a fault's count)."""
        return _take(self._unregistered, now)

    def take_missing_provider_id(self, now: float) -> bool:
        """Whether the Node registering now has no providerID (uses up one of a fault's count)."""
        return _take(self._missing_id, now)


def _take(counted: list[_Counted], now: float) -> bool:
    for entry in counted:
        if entry.left > 0 and entry.window.active(now):
            entry.left -= 1
            return True
    return False
