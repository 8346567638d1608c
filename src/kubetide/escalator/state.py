"""What Escalator keeps in memory between runs of a node group, as a frozen value passed in and out.

Upstream's ``NodeGroupState`` holds: the scale lock (a cool-down timer taken after a cloud increase;
while it runs a group does nothing), the allocatable of the first node seen (used to size a scale-up
from zero), the dry-mode taint trackers, and the last decided delta and scale-out time. All of it is
lost on restart, which is why a group at zero nodes scales up by one after a restart.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from kubetide.escalator.requests import ZERO, CpuMem

__all__ = ["GroupMemory", "ScaleLock"]


@dataclass(frozen=True, slots=True)
class ScaleLock:
    """Upstream ``scaleLock``: a pure timer; it never checks whether the requested nodes arrived."""

    is_locked: bool = False
    requested_nodes: int = 0
    lock_time: float | None = None  # None: never locked (Go's zero time, long ago)

    def held(self, now: float, cool_down_s: float) -> bool:
        """``now - lockTime < scale_up_cool_down_period``."""
        return self.lock_time is not None and now - self.lock_time < cool_down_s

    def locked(self, nodes: int, now: float) -> ScaleLock:
        return ScaleLock(True, nodes, now)

    def released(self) -> ScaleLock:
        """Unlocked; the lock time stays (only ``is_locked`` and ``requested_nodes`` reset upstream)."""
        return replace(self, is_locked=False, requested_nodes=0)


UNLOCKED = ScaleLock()


@dataclass(frozen=True, slots=True)
class GroupMemory:
    """One group's in-memory state; ``GroupMemory()`` is a fresh start."""

    lock: ScaleLock = UNLOCKED
    cached_node: CpuMem = ZERO  # allocatable of nodes[0] at the last run that saw a node
    taint_tracker: tuple[str, ...] = ()  # dry mode: nodes "tainted"
    force_taint_tracker: tuple[str, ...] = ()  # dry mode: nodes "force-tainted"
    scale_delta: int = 0  # the delta the last run returned
    last_scale_out: float | None = None
