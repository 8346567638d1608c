"""Whether a live loop may decide now: only on caches that are synced, as CA runs only on synced
informers.

After a watch breaks (an API server restart, a network cut), a cache holds what it had before the
outage until it has listed again: nodes deleted meanwhile, a PDB's allowance already spent, pods that
have gone. A loop on it would decide on a world that no longer exists. The gate skips such loops,
counts each in ``kubetide_loops_skipped_total{component,reason="cacheNotSynced"}``, and logs once when
skipping starts (naming the caches) and once when every cache is synced again.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence

from kubetide.kube.metrics import LOOPS_SKIPPED

__all__ = ["CACHE_NOT_SYNCED", "SyncGate"]

CACHE_NOT_SYNCED = "cacheNotSynced"
log = logging.getLogger("kubetide.run")


class SyncGate:
    """One component's gate; :meth:`allows` is asked before each loop."""

    def __init__(self, component: str, clock: Callable[[], float] = time.monotonic) -> None:
        self.component = component
        self._clock = clock
        self._since: float | None = None  # when the loops started being skipped
        self.skipped = 0  # loops skipped in the current outage

    def allows(self, unsynced: Sequence[str]) -> bool:
        """False (the loop is skipped and counted) when any cache the loop reads is not synced."""
        if unsynced:
            LOOPS_SKIPPED.labels(component=self.component, reason=CACHE_NOT_SYNCED).inc()
            self.skipped += 1
            if self._since is None:
                self._since = self._clock()
                log.warning(
                    "%s: loops skipped until these caches have listed again after a watch failure: %s",
                    self.component,
                    ", ".join(unsynced),
                )
            return False
        if self._since is not None:
            log.info(
                "%s: caches synced again; %d loop%s skipped over %.1fs",
                self.component,
                self.skipped,
                "" if self.skipped == 1 else "s",
                self._clock() - self._since,
            )
            self._since, self.skipped = None, 0
        return True
