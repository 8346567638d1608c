"""What every ``kubetide run`` component shares at run time: signals, leader election, health, the loop.

A component is its caches and one runner (:class:`Component`, :mod:`kubetide.runners`); this module
runs it the way CA's ``main`` does: serve ``/metrics`` and ``/health-check``, start the caches, then run
the runner on the real-time clock (:class:`~kubetide.clock.RealTimeClock`). Every loop and wake-up the
runner schedules passes through :meth:`Runtime.gated`: it runs only as the leader (when leader election
is on) and only while every cache the component reads is synced (:mod:`kubetide.kube.sync_gate`: after a
watch failure, loops are skipped until the caches have listed again). A lease just acquired runs a loop
at once. A loop that raises is one log line and one count in ``kubetide_loop_errors_total``; the next
runs at its time. The writes of a loop go through ports guarded by :meth:`Runtime.may_act`, so a replica
that loses the Lease or receives SIGTERM stops writing at once: the rest of that loop is abandoned, each
refused write reported, and the process releases the Lease and exits 0.
"""

from __future__ import annotations

import logging
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from types import FrameType
from typing import Protocol

from kubetide.clock import Callback, Clock, GatedClock, RealTimeClock
from kubetide.commands.run.settings import LiveSettings
from kubetide.kube.failures import log_failure
from kubetide.kube.http import HealthTracker, JsonPage, StatusServer
from kubetide.kube.leader import LeaderElector
from kubetide.kube.metrics import LOOP_ERRORS
from kubetide.kube.rest import Rest
from kubetide.kube.sync_gate import SyncGate
from kubetide.runners import Runner

__all__ = ["Component", "HealthLimits", "Runtime"]

log = logging.getLogger("kubetide.run")


class Component(Protocol):
    """One autoscaler, ready to run live."""

    def start(self, stop: threading.Event, clock: Clock) -> Runner | None:
        """Start the caches and wait until they are synced, then build the ports and the runner on
        ``clock``; None when ``stop`` was set meanwhile."""
        ...

    def report(self) -> str:
        """What the last loop decided, for ``--once``."""
        ...

    def unsynced(self) -> list[str]:
        """The caches the loop reads that are not synced now (a watch failed and they have not listed
        again); the loop is skipped while any is."""
        ...

    def stop(self) -> None: ...


@dataclass(frozen=True, slots=True)
class HealthLimits:
    max_inactivity: float = 600.0
    max_failing: float = 900.0
    max_startup: float = 1200.0


class Runtime:
    def __init__(
        self,
        settings: LiveSettings,
        rest: Rest,
        limits: HealthLimits,
        *,
        wall_clock: Callable[[], float] = time.time,
        waiter: threading.Event | None = None,
    ) -> None:
        """``wall_clock`` and ``waiter``: the real-time clock's time and what it waits on (tests pass a
        fake time whose waits advance it)."""
        self.settings = settings
        self.rest = rest
        self.stop_event = threading.Event()
        self.leading = threading.Event()
        self.health = HealthTracker(
            max_inactivity_s=limits.max_inactivity,
            max_failing_s=limits.max_failing,
            max_startup_s=limits.max_startup,
        )
        self.elector: LeaderElector | None = None
        self.sync_gate = SyncGate(settings.component)
        self._wall_clock = wall_clock
        self.clock = RealTimeClock(time=wall_clock, on_error=self._loop_failed, waiter=waiter)
        self._component: Component | None = None
        self._loop_now: Callback | None = None  # the runner's loop, gated: run at once on a new lease
        self.pages: dict[str, JsonPage] = {}
        self.terms = 0  # times this replica became leader: a component reloads its state on a new one

    def serve(self, path: str, page: JsonPage) -> None:
        """Serve ``page`` as JSON at ``path`` on ``--address``, beside /metrics (before :meth:`run`)."""
        self.pages[path] = page

    def may_act(self) -> bool:
        """Writes are allowed: this replica leads (or runs alone) and no stop was asked for."""
        return self.leading.is_set() and not self.stop_event.is_set()

    def _on_signal(self, signum: int, _frame: FrameType | None) -> None:
        log.info("received %s: abandoning the current loop, releasing the lease", signal.Signals(signum).name)
        self.stop_event.set()
        self.clock.stop()

    def _started_leading(self) -> None:
        self.terms += 1
        self.leading.set()
        self.health.start_monitoring(self._wall_clock())
        loop_now = self._loop_now
        if loop_now is not None:  # act now, not at the next period
            self.clock.call_soon(loop_now, "main")

    def _stopped_leading(self) -> None:
        self.leading.clear()
        self.health.stop_monitoring()

    def run(self, component: Component) -> int:
        """Run until SIGTERM/SIGINT (or one loop with ``--once``); the exit status."""
        signal.signal(signal.SIGTERM, self._on_signal)
        signal.signal(signal.SIGINT, self._on_signal)
        server = (
            None
            if self.settings.once
            else StatusServer(self.settings.address, self.health, pages=self.pages).start()
        )
        self._component = component
        gated = GatedClock(self.clock, self.gated)
        try:
            runner = component.start(self.stop_event, gated)
            if runner is None:
                return 0
            if self.settings.once:
                self.leading.set()
                runner.tick(self.clock.now)
                print(component.report(), flush=True)
                return 0
            runner.start()  # the first loop at once (skipped until this replica leads)
            self._elect()
            self._loop_now = self.gated(runner.tick, "main")
            self.clock.run()
            return 0
        finally:
            if self.elector is not None:
                self.elector.stop(release=True)
            component.stop()
            if server is not None:
                server.stop()
            log.info("stopped")

    def _elect(self) -> None:
        leader = self.settings.leader
        if not leader.enabled:
            self._started_leading()
            return
        self.elector = LeaderElector(
            self.rest,
            name=leader.name,
            namespace=leader.namespace,
            lease_duration_s=leader.lease_duration,
            renew_deadline_s=leader.renew_deadline,
            retry_period_s=leader.retry_period,
        )
        log.info(
            "waiting for the lease %s/%s (identity %s)", leader.namespace, leader.name, self.elector.identity
        )
        self.elector.start(self._started_leading, self._stopped_leading)

    def gated(self, callback: Callback, name: str = "") -> Callback:
        """``callback`` run only when this replica may act and every cache it reads is synced, its
        health tracked: what the runner's clock runs, for every loop and wake-up it schedules."""

        def run(now: float) -> None:
            component = self._component
            unsynced = component.unsynced() if component is not None else []
            if not self.may_act() or not self.sync_gate.allows(unsynced):
                return
            self.health.loop_started(now)
            callback(now)
            self.health.loop_succeeded(self._wall_clock())

        return run

    def _loop_failed(self, exc: BaseException, name: str) -> None:
        """A loop that raised: one line naming the cause (the traceback at ``-v=4``), counted; the
        clock goes on and the next loop runs at its time."""
        LOOP_ERRORS.labels(loop="main").inc()
        log_failure(log, "main loop: iteration failed (next one at the next period)", exc, logging.ERROR)
