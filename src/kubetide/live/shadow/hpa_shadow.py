"""The HPA's shadow: kubetide's HPA controller decides every due HPA beside the controller that acts
(a shadow :class:`~kubetide.hpa.driver.HPADriver`: no scale, no status, no Event written; its memory
follows its own decisions), on its own replica count, as if it had acted, and that count is compared
with the running controller's, as the HPA's ``status.desiredReplicas`` shows it at the same moment.

**The counterfactual** (:class:`VirtualScales`): each target's replica count as kubetide would have
it. It starts at the target's ``spec.replicas`` when the shadow first sees it (or, after a restart,
at the count the journal's last loop recorded) and then follows kubetide's rescales only, so the
stabilization window, the rate limits and the tolerance act on kubetide's own count and its own
memory. The metrics are the cluster's pods' (the running controller's replicas): a per-pod metric's
proposal is the total usage over the target (``ceil(ratio * ready pods)``, as upstream computes it),
which is what kubetide's count would have needed for the same total load; the tolerance is judged on
the running pods' ratio. Each loop's two counts go to the journal's timeline, which the report draws.

A difference that lasts a whole match window is a disagreement (``replicas``); it ends when the two
agree again. It starts when the later of the two counts last changed: the running controller's
rescale as its ``SuccessfulRescale`` Event says it (``New size: N; reason: ...``: the time and the
reason go into the record), kubetide's own rescale at the shadow's loop. The running controller's
count is read from the listing the shadow decided on (the cluster's status, not the shadow's own),
at every tick, so a rescale of the running controller between two of kubetide's syncs is seen when
it happens.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from kubetide.hpa.decision import SyncResult
from kubetide.hpa.driver import HPADriver, HPASource, HPASourceError
from kubetide.hpa.ports import Scale, ScaleTargetPort
from kubetide.live.shadow.compare import Compared, ShadowLoop, Step
from kubetide.live.shadow.events import HPARescale, RunningEvents, hpa_rescales
from kubetide.live.shadow.shadow import ShadowLoopFailed, ShadowRecorder, ShadowTick
from kubetide.model.errors import ManifestError
from kubetide.model.hpa import HPA, CrossVersionObjectReference, HPAStatus
from kubetide.model.pod import Pod
from kubetide.model.selectors import LabelSelector

__all__ = ["HPAShadow", "ListingKept", "VirtualScales", "hpa_why", "reconciled"]

Listed = Mapping[str, HPA | ManifestError]
TargetKey = tuple[str, str, str]  # namespace, kind, name


class ListingKept:
    """An :class:`HPASource` that keeps its last listing (the cluster's HPAs, their statuses as the
    running controller wrote them). A shadow driver writes no status; should it try, the write goes
    to the inner source's guard, which refuses it. ``on_list`` sees each listing first."""

    def __init__(self, inner: HPASource) -> None:
        self.inner = inner
        self.last: Listed = {}
        self.on_list: Callable[[Listed], None] | None = None

    def list_hpas(self) -> Listed:
        self.last = self.inner.list_hpas()
        if self.on_list is not None:
            self.on_list(self.last)
        return self.last

    def write_status(self, hpa: HPA, status: HPAStatus) -> None:
        self.inner.write_status(hpa, status)


def target_key(hpa: HPA) -> TargetKey:
    ref = hpa.scale_target_ref
    return (hpa.namespace, ref.kind, ref.name)


class VirtualScales:
    """``inner``'s scale targets, each with kubetide's own replica count in place of the cluster's
    (see the module's docstring); pods and writes are ``inner``'s (a shadow's: writes refused)."""

    def __init__(self, inner: ScaleTargetPort) -> None:
        self.inner = inner
        self.counts: dict[TargetKey, int] = {}

    def get_scale(self, namespace: str, ref: CrossVersionObjectReference) -> Scale:
        real = self.inner.get_scale(namespace, ref)
        count = self.counts.setdefault((namespace, ref.kind, ref.name), real.spec_replicas)
        return Scale(count, count, real.selector)

    def update_scale(self, namespace: str, ref: CrossVersionObjectReference, replicas: int) -> None:
        self.inner.update_scale(namespace, ref, replicas)

    def list_pods(self, namespace: str, selector: LabelSelector) -> Sequence[Pod]:
        return self.inner.list_pods(namespace, selector)


def reconciled(status: HPAStatus) -> bool:
    """Whether a controller has written this status at all (a new HPA's is empty: nothing to compare)."""
    return bool(status.conditions) or status.last_scale_time is not None or status.desired_replicas > 0


def hpa_why(result: SyncResult) -> str:
    """kubetide's reasons for its count, in words: each metric's proposal (with its usage ratio and how
    the calculation ended: ``within-tolerance``, ``scaled``, ...), then the stabilization and the
    limits."""
    if result.error:
        return f"its sync failed: {result.error}"
    parts = []
    for m in result.metrics:
        if m.replicas is None:
            parts.append(f"{m.name}: {m.failure_reason}")
            continue
        said = f"{m.name or m.spec.type}: {m.replicas} replicas"
        c = m.calculation
        parts.append(f"{said} (usage ratio {c.ratio:.2f}, {c.outcome})" if c is not None else said)
    n = result.normalization
    if n is not None:
        parts.append(
            f"proposal {n.proposal}, {n.stabilization_reason} {n.stabilized}, {n.limit_reason} {n.desired}"
        )
    return "; ".join(parts)


def restored_counts(last: Mapping[str, object] | None) -> dict[str, int]:
    """kubetide's count of each HPA in the journal's last loop (``hpas.KEY.kubetide``)."""
    hpas = last.get("hpas") if last is not None else None
    out: dict[str, int] = {}
    for key, sides in (hpas if isinstance(hpas, dict) else {}).items():
        count = sides.get("kubetide") if isinstance(sides, dict) else None
        if isinstance(count, int) and not isinstance(count, bool) and count >= 0:
            out[str(key)] = count
    return out


class HPAShadow:
    """``driver`` must be a shadow driver over ``listing`` and ``scales``; ``events``: the running
    controller's Events (None: its rescales are timed by the shadow's loop)."""

    def __init__(
        self,
        driver: HPADriver,
        listing: ListingKept,
        recorder: ShadowRecorder,
        scales: VirtualScales,
        events: RunningEvents | None = None,
    ) -> None:
        if not driver.shadow:
            raise ValueError("the HPA shadow needs a shadow driver (HPADriver(shadow=True))")
        self.driver = driver
        self.listing = listing
        self.recorder = recorder
        self.scales = scales
        self.events = events
        self._why: dict[str, str] = {}  # key -> kubetide's reasons at its last sync
        self._changed: dict[str, float] = {}  # key -> when kubetide's count last changed
        self._rescaled: dict[str, HPARescale] = {}  # key -> the running controller's last rescale
        # After a restart: kubetide's counts as the journal's last loop had them, until bound.
        self._restored = restored_counts(recorder.journal.last_timeline(recorder.component))
        listing.on_list = self._bind

    def _bind(self, listed: Listed) -> None:
        for key in [k for k in self._restored if k in listed]:
            hpa = listed[key]
            if isinstance(hpa, HPA):
                self.scales.counts.setdefault(target_key(hpa), self._restored[key])
            del self._restored[key]

    def tick(self, now: float) -> ShadowTick:
        try:
            synced = self.driver.tick(now)
        except HPASourceError as exc:
            raise ShadowLoopFailed(f"failed to list the HPAs: {exc}") from exc
        if self.events is not None:
            self._rescaled.update(hpa_rescales(self.events.new()))
        listed = self.listing.last
        for s in synced:
            hpa = listed.get(s.key)
            if s.result is None or not isinstance(hpa, HPA):
                continue
            self._why[s.key] = hpa_why(s.result)
            if s.result.scaled:
                self.scales.counts[target_key(hpa)] = s.result.desired_replicas
                self._changed[s.key] = now
        for memory in (self._why, self._changed, self._rescaled):
            for gone in [k for k in memory if k not in listed]:
                del memory[gone]
        replicas: dict[str, Compared] = {}
        for key, why in self._why.items():
            hpa = listed[key]
            count = self.scales.counts.get(target_key(hpa)) if isinstance(hpa, HPA) else None
            if isinstance(hpa, HPA) and count is not None and reconciled(hpa.status):
                running = hpa.status.desired_replicas
                rescale = self._rescaled.get(key)
                said = rescale if rescale is not None and rescale.size == running else None
                replicas[key] = Compared(
                    running,
                    count,
                    why,
                    running_at=said.at if said is not None else None,
                    running_reason=said.reason if said is not None else "",
                    kubetide_at=self._changed.get(key),
                )
        timeline = {"hpas": {k: {"running": c.running, "kubetide": c.kubetide} for k, c in replicas.items()}}
        return self.recorder.step(Step(ShadowLoop(now, replicas=replicas)), timeline)
