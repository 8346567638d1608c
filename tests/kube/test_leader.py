"""Leader election against an in-memory Lease with optimistic concurrency, on an injected clock."""

from __future__ import annotations

import json
import re
import threading
from typing import Any

import httpx2

from kubetide.kube import leader as leader_module
from kubetide.kube.leader import LeaderElector
from kubetide.kube.rest import Rest

PATH = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/cluster-autoscaler"


class LeaseServer:
    """One Lease, as the API server keeps it: 404 until created, 409 on a stale resourceVersion."""

    def __init__(self) -> None:
        self.lease: dict[str, Any] | None = None
        self.rv = 0
        self.writes: list[dict[str, Any]] = []

    def handle(self, request: httpx2.Request) -> httpx2.Response:
        if request.method == "GET":
            if self.lease is None:
                return httpx2.Response(404, json={"kind": "Status", "reason": "NotFound", "code": 404})
            return httpx2.Response(200, json=self.lease)
        body = json.loads(request.content)
        if request.method == "POST" and self.lease is not None:
            return httpx2.Response(409, json={"kind": "Status", "reason": "AlreadyExists", "code": 409})
        if request.method == "PUT":
            assert self.lease is not None
            if body["metadata"].get("resourceVersion") != self.lease["metadata"]["resourceVersion"]:
                return httpx2.Response(409, json={"kind": "Status", "reason": "Conflict", "code": 409})
        self.rv += 1
        body["metadata"]["resourceVersion"] = str(self.rv)
        self.lease = body
        self.writes.append(body["spec"])
        return httpx2.Response(200, json=body)

    def rest(self) -> Rest:
        return Rest(httpx2.Client(transport=httpx2.MockTransport(self.handle), base_url="https://k8s.test"))


class Clock:
    def __init__(self) -> None:
        self.now = 1_795_000_000.0

    def __call__(self) -> float:
        return self.now


def _elector(server: LeaseServer, clock: Clock, identity: str) -> LeaderElector:
    return LeaderElector(server.rest(), name="cluster-autoscaler", identity=identity, clock=clock)


def test_lease_handover_follows_client_gos_observed_time_rule() -> None:
    server, clock = LeaseServer(), Clock()
    a, b = _elector(server, clock, "a"), _elector(server, clock, "b")
    assert a.try_acquire_or_renew()  # creates the Lease
    assert server.lease is not None and server.lease["spec"]["holderIdentity"] == "a"
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z", server.lease["spec"]["renewTime"])
    assert not b.try_acquire_or_renew()
    clock.now += 10
    assert a.try_acquire_or_renew()  # renewed: b sees a change and restarts its count
    assert not b.try_acquire_or_renew()
    clock.now += 14  # a is gone; 14 s since b saw the last change < 15 s
    assert not b.try_acquire_or_renew()
    clock.now += 2
    assert b.try_acquire_or_renew()
    spec = server.lease["spec"]
    assert spec["holderIdentity"] == "b" and spec["leaseTransitions"] == 1
    assert spec["acquireTime"] == spec["renewTime"]
    clock.now += 2
    assert not a.try_acquire_or_renew()  # a comes back: the lease is b's
    assert b.try_acquire_or_renew()
    assert server.lease["spec"]["acquireTime"] == spec["acquireTime"]  # a renewal keeps acquireTime


def test_release_lets_a_standby_take_over_at_once() -> None:
    server, clock = LeaseServer(), Clock()
    a, b = _elector(server, clock, "a"), _elector(server, clock, "b")
    assert a.try_acquire_or_renew()
    assert not b.try_acquire_or_renew()
    assert a.release()
    assert server.lease is not None
    assert server.lease["spec"]["holderIdentity"] == "" and server.lease["spec"]["leaseDurationSeconds"] == 1
    assert b.try_acquire_or_renew()
    assert server.lease["spec"]["leaseTransitions"] == 1


def test_of_two_candidates_racing_for_an_expired_lease_only_one_wins() -> None:
    server, clock = LeaseServer(), Clock()
    a, b, c = (_elector(server, clock, x) for x in "abc")
    assert a.try_acquire_or_renew()
    assert not b.try_acquire_or_renew() and not c.try_acquire_or_renew()
    clock.now += 16
    stale = server.lease
    assert b.try_acquire_or_renew()
    # c read the same expired record as b before b's write landed: its write is a 409, not leadership
    real, server.lease = server.lease, stale
    c_sees = c.rest.request("GET", PATH)
    server.lease = real
    c._lease = c_sees
    assert not c._write({"holderIdentity": "c", "leaseDurationSeconds": 15})
    assert server.lease is not None and server.lease["spec"]["holderIdentity"] == "b"


def test_run_leads_and_stop_releases() -> None:
    server = LeaseServer()
    elector = LeaderElector(
        server.rest(),
        name="cluster-autoscaler",
        identity="a",
        lease_duration_s=1.5,
        renew_deadline_s=1.0,
        retry_period_s=0.05,
    )
    started, stopped = [], []
    elector.start(lambda: started.append(1), lambda: stopped.append(1))
    for _ in range(200):
        # Both: the elector sets "leading" just before it calls on_started_leading on its own thread.
        if elector.is_leader() and started:
            break
        elector._stop.wait(0.01)
    assert elector.is_leader() and started == [1]
    elector.stop(release=True)
    assert not elector.is_leader() and stopped == [1]
    assert server.lease is not None and server.lease["spec"]["holderIdentity"] == ""


def test_a_standby_takes_a_released_lease_without_waiting_out_its_retry() -> None:
    # The retry wait polls the Lease every RELEASE_POLL_S: once the holder releases it, the standby's
    # wait ends at the next poll instead of after client-go's 2-4.4 s.

    server, clock = LeaseServer(), Clock()
    holder = _elector(server, clock, "a")
    assert holder.try_acquire_or_renew()
    standby = _elector(server, clock, "b")
    assert not standby.try_acquire_or_renew()
    polls: list[float] = []

    class Stop(threading.Event):
        def wait(self, timeout: float | None = None) -> bool:
            assert timeout is not None and timeout <= leader_module.RELEASE_POLL_S
            polls.append(timeout)
            clock.now += timeout
            if len(polls) == 2:
                holder.release()  # the leader stops with SIGTERM between two polls
            return False

    standby._stop = Stop()
    standby._wait_retry()
    assert len(polls) == 2  # ended at the poll after the release, ~1 s in, not after the jittered retry
    assert standby.try_acquire_or_renew()
    assert server.lease is not None and server.lease["spec"]["holderIdentity"] == "b"
