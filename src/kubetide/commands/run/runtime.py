"""What every ``kubetide run`` component shares at run time: signals, leader election, health, the loop.

A component is its caches and one loop driver (:class:`Component`); this module runs it the way CA's
``main`` does: serve ``/metrics`` and ``/health-check``, start the caches, then (as the leader, when
leader election is on) call ``tick`` every period on the wall clock, but only while every cache the
component reads is synced (:mod:`kubetide.kube.sync_gate`: after a watch failure, loops are skipped
until the caches have listed again). The writes of a tick go through
ports guarded by :meth:`Runtime.may_act`, so a replica that loses the Lease or receives SIGTERM stops
writing at once: the rest of that loop is abandoned, each refused write reported, and the process
releases the Lease and exits 0.
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

from kubetide.commands.run.settings import LiveSettings
from kubetide.kube.http import HealthTracker, JsonPage, StatusServer
from kubetide.kube.leader import LeaderElector
from kubetide.kube.loop import run_every
from kubetide.kube.rest import Rest
from kubetide.kube.sync_gate import SyncGate

__all__ = ["Component", "HealthLimits", "Runtime"]

log = logging.getLogger("kubetide.run")


class Component(Protocol):
    """One autoscaler, ready to run live."""

    period: float  # seconds between loops

    def start(self, stop: threading.Event) -> bool:
        """Start the caches and wait until they are synced; False when ``stop`` was set meanwhile."""
        ...

    def tick(self, now: float) -> None:
        """One loop. Raises when the loop as a whole failed (counted; health judges it)."""
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
    def __init__(self, settings: LiveSettings, rest: Rest, limits: HealthLimits) -> None:
        self.settings = settings
        self.rest = rest
        self.stop_event = threading.Event()
        self.wake = threading.Event()
        self.leading = threading.Event()
        self.health = HealthTracker(
            max_inactivity_s=limits.max_inactivity,
            max_failing_s=limits.max_failing,
            max_startup_s=limits.max_startup,
        )
        self.elector: LeaderElector | None = None
        self.sync_gate = SyncGate(settings.component)
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
        self.wake.set()

    def _started_leading(self) -> None:
        self.terms += 1
        self.leading.set()
        self.health.start_monitoring(time.time())
        self.wake.set()  # act now, not at the next period

    def _stopped_leading(self) -> None:
        self.leading.clear()
        self.health.stop_monitoring()

    def run(self, component: Component, clock: Callable[[], float] = time.time) -> int:
        """Run until SIGTERM/SIGINT (or one loop with ``--once``); the exit status."""
        signal.signal(signal.SIGTERM, self._on_signal)
        signal.signal(signal.SIGINT, self._on_signal)
        server = (
            None
            if self.settings.once
            else StatusServer(self.settings.address, self.health, pages=self.pages).start()
        )
        try:
            if not component.start(self.stop_event):
                return 0
            if self.settings.once:
                self.leading.set()
                component.tick(clock())
                print(component.report(), flush=True)
                return 0
            self._elect()
            run_every(
                component.period, self._guarded(component), self.stop_event, name="main", wake=self.wake
            )
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

    def _guarded(self, component: Component) -> Callable[[float], None]:
        def tick(now: float) -> None:
            if not self.may_act() or not self.sync_gate.allows(component.unsynced()):
                return
            self.health.loop_started(now)
            component.tick(now)
            self.health.loop_succeeded(time.time())

        return tick
