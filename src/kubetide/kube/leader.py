"""Leader election on a ``coordination.k8s.io/v1`` Lease, with client-go's semantics.

Only the leader acts (live contract §1). The record is the Lease's spec: ``holderIdentity``,
``leaseDurationSeconds``, ``acquireTime`` and ``renewTime`` (MicroTime, six fractional digits),
``leaseTransitions``. As client-go's ``tryAcquireOrRenew``:

- expiry is judged by the observed-time rule: a candidate notes, on ITS clock, when it last saw the
  record change, and takes the lease only when ``leaseDurationSeconds`` passed since then without a
  change. Clock skew between replicas therefore does not matter, only their rates.
- an empty ``holderIdentity`` (a released lease) can be taken at once;
- writes carry the read ``resourceVersion``, so of two candidates racing for an expired lease one wins
  and the other gets a 409;
- the leader renews every retry period; if it cannot renew within the renew deadline it stops leading
  at once (``on_stopped_leading``) and competes again like any candidate;
- :meth:`LeaderElector.stop` with ``release=True`` (client-go's ``ReleaseOnCancel``) writes an empty
  holder with a 1 s duration; standbys notice a released lease within ``RELEASE_POLL_S`` (a read
  between client-go's jittered retries), so one takes over well within the contract's 5 s.
"""

from __future__ import annotations

import logging
import random
import socket
import threading
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from kubetide.kube.rest import KubeStatusError, Rest

__all__ = ["LeaderElector", "micro_time"]

log = logging.getLogger(__name__)
Json = dict[str, Any]
JITTER_FACTOR = 1.2  # client-go's JitterFactor for the acquire loop
RELEASE_POLL_S = 0.5  # how often a standby checks for a released lease between retries


def micro_time(t: float) -> str:
    """A MicroTime as the API server writes it: ``2026-11-23T20:25:00.123456Z``."""
    return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def default_identity() -> str:
    return f"{socket.gethostname()}_{uuid.uuid4()}"


class LeaderElector:
    """Competes for one Lease; :meth:`run` in its own thread, :meth:`is_leader` from any thread."""

    def __init__(
        self,
        rest: Rest,
        *,
        name: str,
        namespace: str = "kube-system",
        identity: str | None = None,
        lease_duration_s: float = 15.0,
        renew_deadline_s: float = 10.0,
        retry_period_s: float = 2.0,
        clock: Callable[[], float] = time.time,
    ):
        if not lease_duration_s > renew_deadline_s > retry_period_s * JITTER_FACTOR:
            raise ValueError("need lease duration > renew deadline > retry period x 1.2 (client-go's rule)")
        self.rest, self.name, self.namespace = rest, name, namespace
        self.identity = identity or default_identity()
        self.lease_duration_s, self.renew_deadline_s = lease_duration_s, renew_deadline_s
        self.retry_period_s, self._clock = retry_period_s, clock
        self._path = f"/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases/{name}"
        self._lease: Json | None = None  # the last Lease read or written (its resourceVersion)
        self._observed: Json = {}  # the last record seen (spec)
        self._observed_time = 0.0  # when, on our clock, it last changed
        self._leading = threading.Event()
        self._stop = threading.Event()
        self._release_on_stop = True
        self._thread: threading.Thread | None = None

    # -- the record ------------------------------------------------------------------------------

    def is_leader(self) -> bool:
        return self._leading.is_set()

    def _holds(self) -> bool:
        return self._observed.get("holderIdentity") == self.identity

    def _lease_valid(self, now: float) -> bool:
        return self._observed_time + float(self._observed.get("leaseDurationSeconds") or 0) > now

    def _set_observed(self, spec: Json, lease: Json) -> None:
        self._observed, self._lease, self._observed_time = spec, lease, self._clock()

    def try_acquire_or_renew(self) -> bool:
        """One attempt, as client-go's ``tryAcquireOrRenew``: True when we hold the lease now."""
        now = self._clock()
        record: Json = {
            "holderIdentity": self.identity,
            "leaseDurationSeconds": int(self.lease_duration_s),
            "acquireTime": micro_time(now),
            "renewTime": micro_time(now),
            "leaseTransitions": 0,
        }
        # 1. Fast path: the leader renews on the version it last wrote.
        if self._holds() and self._lease_valid(now) and self._lease is not None:
            record["acquireTime"] = self._observed.get("acquireTime")
            record["leaseTransitions"] = self._observed.get("leaseTransitions") or 0
            if self._write(record):
                return True
        # 2. Read the record (create it when there is none).
        try:
            lease = self.rest.request("GET", self._path, timeout=self.renew_deadline_s / 2)
        except KubeStatusError as exc:
            if exc.status != 404:
                log.warning("lease %s/%s: cannot read it: %s", self.namespace, self.name, exc)
                return False
            return self._create(record)
        spec = dict(lease.get("spec") or {})
        # 3. The observed-time rule: note when WE saw the record change.
        if spec != self._observed:
            self._set_observed(spec, lease)
        else:
            self._lease = lease
        if spec.get("holderIdentity") and self._lease_valid(now) and not self._holds():
            return False
        # 4. Take or renew it.
        if self._holds():
            record["acquireTime"] = spec.get("acquireTime")
            record["leaseTransitions"] = spec.get("leaseTransitions") or 0
        else:
            record["leaseTransitions"] = int(spec.get("leaseTransitions") or 0) + 1
        return self._write(record)

    def _create(self, record: Json) -> bool:
        body = {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {"name": self.name, "namespace": self.namespace},
            "spec": record,
        }
        try:
            lease = self.rest.request("POST", self._path.rsplit("/", 1)[0], body=body)
        except KubeStatusError as exc:
            log.warning("lease %s/%s: cannot create it: %s", self.namespace, self.name, exc)
            return False
        self._set_observed(record, lease)
        return True

    def _write(self, record: Json) -> bool:
        assert self._lease is not None
        body = {**self._lease, "spec": record}
        try:
            lease = self.rest.request("PUT", self._path, body=body, timeout=self.renew_deadline_s / 2)
        except KubeStatusError as exc:
            log.info("lease %s/%s: update failed: %s", self.namespace, self.name, exc)
            return False
        self._set_observed(record, lease)
        return True

    def release(self) -> bool:
        """Give the lease up (client-go's ``release``): empty holder, 1 s duration."""
        if not self._holds() or self._lease is None:
            return True
        now = micro_time(self._clock())
        record = {
            "holderIdentity": "",
            "leaseDurationSeconds": 1,
            "acquireTime": now,
            "renewTime": now,
            "leaseTransitions": self._observed.get("leaseTransitions") or 0,
        }
        released = self._write(record)
        log.info("lease %s/%s: released=%s", self.namespace, self.name, released)
        return released

    # -- the loop --------------------------------------------------------------------------------

    def start(self, on_started_leading: Callable[[], None], on_stopped_leading: Callable[[], None]) -> None:
        self._thread = threading.Thread(
            target=self.run,
            args=(on_started_leading, on_stopped_leading),
            name="leader-election",
            daemon=True,
        )
        self._thread.start()

    def run(self, on_started_leading: Callable[[], None], on_stopped_leading: Callable[[], None]) -> None:
        """Acquire, lead while renewing, and compete again after losing, until :meth:`stop`.

        The callbacks run on this thread and must return quickly (start or signal the work)."""
        while not self._stop.is_set():
            if not self._acquire():
                break
            self._leading.set()
            log.info("lease %s/%s: %s became leader", self.namespace, self.name, self.identity)
            on_started_leading()
            self._renew()
            self._leading.clear()
            if self._stop.is_set() and self._release_on_stop:
                self.release()
            log.info("lease %s/%s: %s stopped leading", self.namespace, self.name, self.identity)
            on_stopped_leading()

    def stop(self, release: bool = True, timeout: float = 10.0) -> None:
        self._release_on_stop = release
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout)

    def _acquire(self) -> bool:
        while not self._stop.is_set():
            if self.try_acquire_or_renew():
                return True
            self._wait_retry()
        return False

    def _wait_retry(self) -> None:
        """client-go's jittered retry period, cut short when the holder releases the lease.

        client-go's standby only looks every 2 to 4.4 s, so after a release the takeover alone can eat
        most of the 5 s the live contract allows. A standby here also glances at the Lease every
        ``RELEASE_POLL_S`` (a GET; no write) and competes at once when it finds it released; expiry is
        still judged by the observed-time rule, so a killed leader is replaced exactly as in client-go.
        """
        deadline = self._clock() + self.retry_period_s * (1 + random.random() * JITTER_FACTOR)
        while not self._stop.is_set():
            left = deadline - self._clock()
            if left <= 0 or self._stop.wait(min(RELEASE_POLL_S, left)):
                return
            if self._released():
                return

    def _released(self) -> bool:
        try:
            lease = self.rest.request("GET", self._path, timeout=self.retry_period_s)
        except KubeStatusError:
            return False
        return not (lease.get("spec") or {}).get("holderIdentity")

    def _renew(self) -> None:
        while not self._stop.wait(self.retry_period_s):
            deadline = self._clock() + self.renew_deadline_s
            while not self.try_acquire_or_renew():
                if self._stop.is_set():
                    return
                if self._observed.get("holderIdentity") not in (self.identity, ""):
                    log.error(
                        "lease %s/%s: taken over by %s",
                        self.namespace,
                        self.name,
                        self._observed.get("holderIdentity"),
                    )
                    return  # another replica holds it: stop acting at once
                if self._clock() + self.retry_period_s > deadline:
                    log.error("lease %s/%s: failed to renew within the deadline", self.namespace, self.name)
                    return
                self._stop.wait(self.retry_period_s)
