"""The HPA loop: which HPAs are due now, and for each one decide, write the scale, complete, emit the
events and write the status, so that one HPA failing in any way never stops the others.

Upstream's work queue re-adds every HPA one sync period after its last reconcile
(``--horizontal-pod-autoscaler-sync-period``, 15 s); the driver keeps that next due time per HPA key
(``namespace/name``), with the kubetide resource's ``spec.syncPeriod`` in place of the flag when set.
``tick(now)`` is called often by the caller's clock and reconciles only the HPAs that are due, in key
order. An HPA seen for the first time is due at once (upstream waits one period after the informer's
add; reconciling at once is what a user watching a new HPA expects, and changes no decision). An HPA
no longer listed is forgotten: its recommendations, scale events and selector go, as upstream's
delete handler drops them.

The driver reads no clock and does no I/O of its own: it acts only through the ports, so the
simulator and the live adapter run this same loop. Live mode passes a ``timer`` (a monotonic clock)
for kube-controller-manager's reconciliation duration metric; without one every duration is 0.

**Shadow mode** (``shadow=True``) decides every due HPA exactly as the acting loop would and writes
nothing: no scale, no status, no Event (each sync's would-be Events and status are in its result). Its
memory follows its own decisions, as if it had acted: every decided rescale is completed as a
successful write, so its recommendations and scale events are the ones it would have had, and its
view of each HPA carries the status it would have written (conditions such as ScaledToZero, which
later decisions read), while the scale and the metrics are the cluster's, moved by whoever acts.

**Restored memory**: :meth:`restore` hands the driver what a previous controller remembered of an
HPA (published by the live controller, :mod:`kubetide.hpa.memory`); it is installed at the next tick
if that HPA is listed with the same uid (a deleted HPA's memory never goes to a new one of the same
name), and dropped otherwise.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Protocol

from kubetide.hpa.conditions import EventReason
from kubetide.hpa.config import HPAConfig
from kubetide.hpa.controller import HorizontalController
from kubetide.hpa.decision import RESCALED, HPADecision, RescaleOutcome, SyncResult
from kubetide.hpa.ports import EventPort, MetricsSource, ScaleTargetPort
from kubetide.hpa.quiet import QuietLane
from kubetide.hpa.state import HPAState
from kubetide.model.errors import ManifestError
from kubetide.model.hpa import HPA, HPAStatus

__all__ = ["HPADriver", "HPASource", "HPASourceError", "StatusWriteError", "Synced"]

# The caller's clock may compute tick times by multiplication (the simulator does, so they never drift);
# ``last + period`` can then land an ulp after the next tick. Anything due within this is due now.
_SLACK = 1e-6


class HPASourceError(Exception):
    """The HPAs could not be listed at all (the API server is unreachable, the watch is broken)."""


class StatusWriteError(Exception):
    """Writing one HPA's status failed (a conflict, the object is gone, the API server refused it)."""


class HPASource(Protocol):
    """Where the HPAs live: the simulated cluster, or the API server's (kubetide or standard) HPAs."""

    def list_hpas(self) -> Mapping[str, HPA | ManifestError]:
        """Every HPA by key (``namespace/name``), as the informer's cache holds it.

        An object that does not read as an HPA (a malformed ``spec.syncPeriod``, a string where a
        number belongs) is listed as the ManifestError naming the field, so the driver can report it
        on the object instead of skipping it silently. Raises HPASourceError when nothing can be listed.
        """
        ...

    def write_status(self, hpa: HPA, status: HPAStatus) -> None:
        """Replace ``hpa``'s status (the status subresource). Raises StatusWriteError on failure; the
        driver reports it as upstream does (a ``FailedUpdateStatus`` Warning event) and goes on."""
        ...


@dataclass(frozen=True, slots=True)
class Synced:
    """One HPA's turn in a tick: its result, or why it has none."""

    key: str
    result: SyncResult | None  # None when the object did not read as an HPA
    status_written: bool = False
    problem: str | None = None  # the status write failure, the manifest error, the unexpected error
    seconds: float = 0.0  # how long the reconcile took, by the driver's timer (0 without one)
    decision: HPADecision | None = None  # what the sync decided (None: it broke before deciding)


class HPADriver:
    """Runs :class:`HorizontalController` over every HPA of an :class:`HPASource`, each on its period."""

    def __init__(
        self,
        source: HPASource,
        metrics: MetricsSource,
        targets: ScaleTargetPort,
        events: EventPort,
        config: HPAConfig | None = None,
        timer: Callable[[], float] | None = None,
        quiet_lane: bool = False,
        shadow: bool = False,
    ) -> None:
        if shadow and quiet_lane:
            raise ValueError("the quiet lane writes statuses: a shadow driver cannot take it")
        self.source = source
        self.timer = timer
        self.metrics = metrics
        self.targets = targets
        self.events = events
        self.config = config or HPAConfig()
        self.controller = HorizontalController(metrics, targets, self.config)
        self._due: dict[str, float] = {}
        self._registered: set[str] = set()  # keys registered with the controller's selector registry
        self.quiet_lane = quiet_lane
        self._lane = QuietLane(self.controller) if quiet_lane else None
        self.syncs = 0  # HPAs reconciled (both lanes)
        self.quiet_syncs = 0  # of which the quiet lane finished (not listed in tick's results)
        self.shadow = shadow
        self._own_status: dict[str, HPAStatus] = {}  # shadow: the status it would have written
        self._restored: dict[str, tuple[str, HPAState]] = {}  # key -> (uid, memory), for the next tick

    def restart(self) -> None:
        """A controller-manager restart: the in-memory recommendations, scale events, selectors and
        due times are gone; every HPA is due at the next tick."""
        self.controller = HorizontalController(self.metrics, self.targets, self.config)
        self._lane = QuietLane(self.controller) if self.quiet_lane else None
        self._due.clear()
        self._registered.clear()
        self._own_status.clear()
        self._restored.clear()

    def restore(self, key: str, uid: str, memory: HPAState) -> None:
        """Remember ``memory`` for the HPA ``key`` from the next tick on, if it is then listed with
        ``uid`` and has no memory of this driver's yet."""
        self._restored[key] = (uid, memory)

    def next_due(self, key: str) -> float | None:
        """When the HPA is next reconciled (None: at the next tick, or unknown)."""
        return self._due.get(key)

    def keys(self) -> list[str]:
        """The HPAs of the last tick's listing (``namespace/name``), valid or not."""
        return list(self._due)

    def tick(self, now: float) -> tuple[Synced, ...]:
        """Reconcile every due HPA. Raises HPASourceError (reconciling nothing) if listing fails."""
        listed = self.source.list_hpas()
        lane = self._lane
        for gone in [key for key in self._due if key not in listed]:
            del self._due[gone]
            self.controller.forget(gone)
            self._registered.discard(gone)
            self._own_status.pop(gone, None)
            if lane is not None:
                lane.forget(gone)
        if self._restored:
            self._install_restored(listed)
        registered = self._registered
        for key, item in listed.items():
            # The informer knows every HPA, due or not; registering is needed once per key.
            if key not in registered and isinstance(item, HPA):
                self.controller.register(item)
                registered.add(key)
        done: list[Synced] = []
        due_at, timer, default_period = self._due, self.timer, self.config.sync_period
        for key in sorted(listed):
            due = due_at.get(key)
            if due is not None and now < due - _SLACK:
                continue
            item = listed[key]
            self.syncs += 1
            started = timer() if timer is not None else 0.0
            if isinstance(item, ManifestError):
                due_at[key] = now + default_period
                synced = self._invalid(key, item)
            else:
                if self.shadow and key in self._own_status:
                    item = item.with_status(self._own_status[key])
                period = item.sync_period  # spec.syncPeriod, else the controller's
                due_at[key] = now + (period if period is not None else default_period)
                if lane is not None:
                    quiet = lane.sync(item, now)
                    if quiet is not None:
                        self.quiet_syncs += 1
                        if quiet.status is not None:
                            problem = self._write_status(item, quiet.status)
                            if problem is not None:
                                done.append(Synced(key, None, problem=problem))
                        continue
                synced = self.sync(item, now)
            if timer is not None:
                synced = replace(synced, seconds=timer() - started)
            done.append(synced)
        return tuple(done)

    def sync(self, hpa: HPA, now: float) -> Synced:
        """One HPA, now: decide, act, complete, emit, write the status. Never raises. A shadow
        driver decides and completes only (see the module's docstring)."""
        decision: HPADecision | None = None
        try:
            decision = self.controller.decide(hpa, now)
            result = self.controller.complete(decision, self._act(decision), now)
        except Exception as exc:  # a bug or a port breaking its contract: this HPA only
            result = self.controller.failed(hpa, f"{type(exc).__name__}: {exc}", now)
        if self.shadow:
            self._own_status[hpa.key] = result.status
            return Synced(hpa.key, result, decision=decision)
        obj = f"HorizontalPodAutoscaler/{hpa.namespace}/{hpa.name}"
        for event in result.events:
            self._emit(event.type, event.reason, obj, event.message)
        if result.status == hpa.status:
            return Synced(hpa.key, result, decision=decision)  # upstream skips a write that changes nothing
        problem = self._write_status(hpa, result.status)
        if problem is not None:
            return Synced(hpa.key, result, problem=problem, decision=decision)
        return Synced(hpa.key, result, status_written=True, decision=decision)

    def _write_status(self, hpa: HPA, status: HPAStatus) -> str | None:
        """Write the status; on failure a ``FailedUpdateStatus`` Warning and the problem."""
        try:
            self.source.write_status(hpa, status)
        except Exception as exc:  # StatusWriteError, or anything else: report and go on
            message = f"{exc}" if isinstance(exc, StatusWriteError) else f"{type(exc).__name__}: {exc}"
            obj = f"HorizontalPodAutoscaler/{hpa.namespace}/{hpa.name}"
            self._emit("Warning", EventReason.FAILED_UPDATE_STATUS, obj, message)
            return f"failed to update status for {hpa.key}: {message}"
        return None

    def _act(self, decision: HPADecision) -> RescaleOutcome | None:
        """The scale write a decision wants, and its outcome; a shadow's counts as made."""
        if self.shadow:
            return RESCALED if decision.rescale else None
        try:
            return self.controller.write(decision)
        except Exception as exc:  # outside the port's contract, but still a failed write
            return RescaleOutcome(f"{type(exc).__name__}: {exc}")

    def _install_restored(self, listed: Mapping[str, HPA | ManifestError]) -> None:
        """Give each listed HPA the memory restored for it, if it is its own and none was made since."""
        restored, self._restored = self._restored, {}
        for key, (uid, memory) in restored.items():
            item = listed.get(key)
            if isinstance(item, HPA) and item.uid == uid and self.controller.memory(key) is None:
                self.controller.restore(key, memory)

    def _invalid(self, key: str, error: ManifestError) -> Synced:
        namespace, _, name = key.partition("/")
        self._emit(
            "Warning", EventReason.INVALID_SPEC, f"HorizontalPodAutoscaler/{namespace}/{name}", str(error)
        )
        return Synced(key, None, problem=str(error))

    def _emit(self, type_: str, reason: str, obj: str, message: str) -> None:
        # The port promises not to raise; a broken one must still not stop the loop.
        with contextlib.suppress(Exception):
            self.events.emit_event(type_, reason, obj, message)
