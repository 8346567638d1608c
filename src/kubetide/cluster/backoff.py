"""Which node groups are backed off after a failed scale-up, and until when (CA's exponential backoff).

A failed scale-up (timeout, cloud instance errors, ``IncreaseSize`` error) backs the group off; a
failure after the previous backoff expired doubles the duration up to the max, a failure during an
active backoff keeps it. Entries whose last failure is older than the reset timeout are forgotten, which
is what brings a group back to the initial duration. A successful scale-up does not clear a backoff.
Keyed by ``NodeGroup.id()``. Comparisons are strict exactly where upstream's are
(``utils/backoff/exponential_backoff.go``): ``now == until`` is still backed off.
"""

from __future__ import annotations

from dataclasses import dataclass

from kubetide.cloud.instance import InstanceErrorInfo

__all__ = ["BackoffEntry", "BackoffStatus", "ExponentialBackoff"]


@dataclass(frozen=True, slots=True)
class BackoffEntry:
    duration: float
    until: float
    last_failed: float
    error_info: InstanceErrorInfo | None


@dataclass(frozen=True, slots=True)
class BackoffStatus:
    """``IsBackedOff`` with the error that caused it (shown in the status ConfigMap and skip reasons)."""

    backed_off: bool
    error_info: InstanceErrorInfo | None = None


class ExponentialBackoff:
    """Per-group backoff state; every method takes ``now`` (seconds)."""

    def __init__(self, initial: float = 300.0, max_duration: float = 1800.0, reset_timeout: float = 10800.0):
        self.initial = initial
        self.max_duration = max_duration
        self.reset_timeout = reset_timeout
        self._entries: dict[str, BackoffEntry] = {}

    def backoff(
        self, key: str, error_info: InstanceErrorInfo | None, now: float, min_duration: float = 0.0
    ) -> float:
        """Record a failure at ``now``; returns the time the group is backed off until.

        ``min_duration`` (kubetide) is a floor for this backoff, above the max if need be; the stored
        duration is the floored one, so the next failure doubles from it."""
        duration = self.initial
        entry = self._entries.get(key)
        if entry is not None:
            # Still inside a backoff: keep its duration. Expired (strictly before now): double it.
            duration = entry.duration
            if entry.until < now:
                duration = min(2 * entry.duration, max(self.max_duration, min_duration))
        duration = max(duration, min_duration)
        until = now + duration
        self._entries[key] = BackoffEntry(duration, until, now, error_info)
        return until

    def status(self, key: str, now: float) -> BackoffStatus:
        entry = self._entries.get(key)
        if entry is None or entry.until < now:
            return BackoffStatus(False)
        return BackoffStatus(True, entry.error_info)

    def is_backed_off(self, key: str, now: float) -> bool:
        return self.status(key, now).backed_off

    def entry(self, key: str) -> BackoffEntry | None:
        return self._entries.get(key)

    def entries(self) -> dict[str, BackoffEntry]:
        """Every entry, for the state a restarted autoscaler reads back."""
        return dict(self._entries)

    def restore(self, key: str, entry: BackoffEntry) -> None:
        self._entries[key] = entry

    def remove_backoff(self, key: str) -> None:
        self._entries.pop(key, None)

    def remove_stale(self, now: float) -> None:
        """Forget groups whose last failure is older than the reset timeout (strictly)."""
        self._entries = {
            k: e for k, e in self._entries.items() if not (e.last_failed + self.reset_timeout < now)
        }

    def __len__(self) -> int:
        return len(self._entries)
