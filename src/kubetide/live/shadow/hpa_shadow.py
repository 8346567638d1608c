"""The HPA's shadow: kubetide's HPA controller decides every due HPA beside the controller that acts
(a shadow :class:`~kubetide.hpa.driver.HPADriver`: no scale, no status, no Event written; its memory
follows its own decisions), and each decision's desired replicas are compared with the running
controller's, as the HPA's ``status.desiredReplicas`` shows them at the same moment.

A difference that lasts a whole match window is a disagreement (``replicas``); it ends when the two
agree again. The running controller's count is read from the listing the shadow decided on (the
cluster's status, not the shadow's own), at every tick, so a rescale of the running controller
between two of kubetide's syncs is seen when it happens.
"""

from __future__ import annotations

from collections.abc import Mapping

from kubetide.hpa.decision import SyncResult
from kubetide.hpa.driver import HPADriver, HPASource, HPASourceError
from kubetide.live.shadow.compare import Compared, ShadowLoop, Step
from kubetide.live.shadow.shadow import ShadowLoopFailed, ShadowRecorder, ShadowTick
from kubetide.model.errors import ManifestError
from kubetide.model.hpa import HPA, HPAStatus

__all__ = ["HPAShadow", "ListingKept", "hpa_why", "reconciled"]


class ListingKept:
    """An :class:`HPASource` that keeps its last listing (the cluster's HPAs, their statuses as the
    running controller wrote them). A shadow driver writes no status; should it try, the write goes
    to the inner source's guard, which refuses it."""

    def __init__(self, inner: HPASource) -> None:
        self.inner = inner
        self.last: Mapping[str, HPA | ManifestError] = {}

    def list_hpas(self) -> Mapping[str, HPA | ManifestError]:
        self.last = self.inner.list_hpas()
        return self.last

    def write_status(self, hpa: HPA, status: HPAStatus) -> None:
        self.inner.write_status(hpa, status)


def reconciled(status: HPAStatus) -> bool:
    """Whether a controller has written this status at all (a new HPA's is empty: nothing to compare)."""
    return bool(status.conditions) or status.last_scale_time is not None or status.desired_replicas > 0


def hpa_why(result: SyncResult) -> str:
    """kubetide's reasons for its count, in words: each metric's proposal, then the stabilization and
    the limits."""
    if result.error:
        return f"its sync failed: {result.error}"
    parts = [
        f"{m.name or m.spec.type}: {m.replicas} replicas"
        if m.replicas is not None
        else f"{m.name}: {m.failure_reason}"
        for m in result.metrics
    ]
    n = result.normalization
    if n is not None:
        parts.append(
            f"proposal {n.proposal}, {n.stabilization_reason} {n.stabilized}, {n.limit_reason} {n.desired}"
        )
    return "; ".join(parts)


class HPAShadow:
    """``driver`` must be a shadow driver over ``listing``."""

    def __init__(self, driver: HPADriver, listing: ListingKept, recorder: ShadowRecorder) -> None:
        if not driver.shadow:
            raise ValueError("the HPA shadow needs a shadow driver (HPADriver(shadow=True))")
        self.driver = driver
        self.listing = listing
        self.recorder = recorder
        self._kubetide: dict[str, tuple[int, str]] = {}  # key -> kubetide's last count and reasons

    def tick(self, now: float) -> ShadowTick:
        try:
            synced = self.driver.tick(now)
        except HPASourceError as exc:
            raise ShadowLoopFailed(f"failed to list the HPAs: {exc}") from exc
        for s in synced:
            if s.result is not None:
                self._kubetide[s.key] = (s.result.desired_replicas, hpa_why(s.result))
        listed = self.listing.last
        self._kubetide = {k: v for k, v in self._kubetide.items() if k in listed}
        replicas: dict[str, Compared] = {}
        for key, (count, why) in self._kubetide.items():
            hpa = listed[key]
            if isinstance(hpa, HPA) and reconciled(hpa.status):
                replicas[key] = Compared(hpa.status.desired_replicas, count, why)
        timeline = {"hpas": {k: {"running": c.running, "kubetide": c.kubetide} for k, c in replicas.items()}}
        return self.recorder.step(Step(ShadowLoop(now, replicas=replicas)), timeline)
