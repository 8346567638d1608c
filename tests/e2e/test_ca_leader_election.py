"""Two cluster autoscalers with leader election: one acts; SIGTERM hands over within 5 s; SIGKILL within
the lease duration plus two retry periods.

Each replica logs its identity ("... (identity X)") before competing; the Lease's holderIdentity names the
one that acts. Pods request 1500m of a 2-CPU node, so each needs a node of its own and the expected node
count never depends on the scheduler's choices.
"""

from __future__ import annotations

import re
import signal
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from .support import Kubectl, KubetideProcess
from .test_cluster_autoscaler import (
    CA_NAMESPACE,
    cloud_config,
    deployment,
    group_nodes,
    kwok_target,
    running_pods,
    start_ca,
)

LEASE_DURATION, RETRY_PERIOD = 15.0, 2.0
# Python start-up, the watch caches' first list and one scan: measured at 2-3 s here.
STARTUP_MARGIN = 5.0


@pytest.fixture
def lease(kubectl: Kubectl, group: str) -> Iterator[str]:
    """A Lease of the test's own, deleted afterwards."""
    name = f"ca-{group}"
    yield name
    kubectl("-n", CA_NAMESPACE, "delete", "lease", name, "--ignore-not-found")


def identity(ca: KubetideProcess) -> str:
    match = re.search(r"waiting for the lease \S+ \(identity (\S+)\)", ca.log())
    assert match, ca.log()
    return match.group(1)


def holder(kubectl: Kubectl, lease: str, namespace: str = CA_NAMESPACE) -> str:
    """The Lease's holder; CA's Lease is in its --namespace, the HPA's and Escalator's in kubetide."""
    return str(kubectl.json("-n", namespace, "get", "lease", lease)["spec"].get("holderIdentity") or "")


Acting = Callable[[KubetideProcess], Any]  # what shows a replica acted (a metric), None while it has not


def elect(
    kubectl: Kubectl,
    lease: str,
    a: KubetideProcess,
    b: KubetideProcess,
    wait_for: Callable[..., Any],
    acting: Acting,
    *,
    lease_namespace: str = CA_NAMESPACE,
) -> tuple[dict[str, KubetideProcess], str, KubetideProcess, KubetideProcess]:
    """Both replicas started: (replicas by identity, the leader's identity, the leader, the standby),
    once the Lease names one of them and it has acted."""
    ids = {wait_for(lambda: identity(a), 60, message="a's identity"): a}
    ids[wait_for(lambda: identity(b), 60, message="b's identity")] = b
    leader_id = wait_for(
        lambda: holder(kubectl, lease, lease_namespace) in ids and holder(kubectl, lease, lease_namespace),
        60,
        message="a leader",
    )
    leader = ids[leader_id]
    standby = b if leader is a else a
    wait_for(lambda: acting(leader), 30, message="the leader acting")
    return ids, leader_id, leader, standby


def sigterm_hand_over(
    kubectl: Kubectl,
    lease: str,
    ids: dict[str, KubetideProcess],
    leader: KubetideProcess,
    standby: KubetideProcess,
    wait_for: Callable[..., Any],
    acting: Acting,
    *,
    lease_namespace: str = CA_NAMESPACE,
) -> None:
    """SIGTERM the leader: it exits 0 and releases the Lease; the standby leads and acts within 5 s."""
    leader_id = next(i for i, p in ids.items() if p is leader)
    assert leader.stop(signal.SIGTERM) == 0
    exited = time.monotonic()
    assert holder(kubectl, lease, lease_namespace) != leader_id, "the Lease still names the stopped leader"
    standby_id = next(i for i, p in ids.items() if p is standby)
    wait_for(
        lambda: holder(kubectl, lease, lease_namespace) == standby_id and acting(standby),
        10,
        interval=0.1,
        message="the standby leading and acting",
    )
    takeover = time.monotonic() - exited
    print(f"SIGTERM takeover: {takeover:.2f}s")
    assert takeover <= 5.0, takeover


def loops(ca: KubetideProcess) -> float | None:
    return ca.metric("cluster_autoscaler_last_activity", activity="main")


def test_one_leader_acts_and_hands_over(
    kubectl: Kubectl,
    kubetide: Callable[..., KubetideProcess],
    service_accounts: dict[str, Path],
    wait_for: Callable[..., Any],
    tmp_path: Path,
    group: str,
    namespace: str,
    lease: str,
) -> None:
    config = cloud_config(tmp_path, group)

    def start() -> KubetideProcess:
        return start_ca(kubetide, service_accounts, config, group, f"--leader-elect-resource-name={lease}")

    a, b = start(), start()
    ids, leader_id, leader, standby = elect(kubectl, lease, a, b, wait_for, loops)

    # Two pods, one node each: the leader asks for 2 nodes, once.
    kubectl.create(deployment("web", namespace, group, replicas=2, cpu="1500m"))
    wait_for(lambda: len(running_pods(kubectl, namespace, "web")) == 2, 120, message="2 web pods running")
    assert len(group_nodes(kubectl, group)) == 2
    assert kwok_target(kubectl, group) == 2
    assert loops(standby) is None, "the standby ran a loop"
    assert not standby.metric("cluster_autoscaler_scaled_up_nodes_total")
    assert "TriggeredScaleUp" not in standby.log()
    assert holder(kubectl, lease) == leader_id

    # SIGTERM: exit 0, the Lease released, the standby leads and acts within 5 s.
    sigterm_hand_over(kubectl, lease, ids, leader, standby, wait_for, loops)
    assert re.search(r"released=True", leader.log()), leader.log()

    # The new leader acts on a new pending pod promptly, and asks for exactly one more node.
    kubectl("-n", namespace, "scale", "deployment", "web", "--replicas=3")
    wait_for(lambda: kwok_target(kubectl, group) == 3, 15, interval=0.2, message="the new leader scaling up")
    wait_for(lambda: len(running_pods(kubectl, namespace, "web")) == 3, 120, message="3 web pods running")
    assert len(group_nodes(kubectl, group)) == 3

    # SIGKILL: the Lease stays with the dead process until it expires; a third replica takes over
    # within the lease duration plus two retry periods.
    standby.stop(signal.SIGKILL)
    killed = time.monotonic()
    c = start()
    c_id = wait_for(lambda: identity(c), 30, message="c's identity")
    wait_for(
        lambda: holder(kubectl, lease) == c_id and loops(c),
        LEASE_DURATION + 2 * RETRY_PERIOD + STARTUP_MARGIN + 10,
        interval=0.2,
        message="the third replica leading",
    )
    replaced = time.monotonic() - killed
    print(f"SIGKILL replacement: {replaced:.2f}s")
    assert replaced <= LEASE_DURATION + 2 * RETRY_PERIOD + STARTUP_MARGIN, replaced
    # It repeats nothing: the target stays at 3, the nodes too, over a few of its loops.
    first = loops(c) or 0
    wait_for(lambda: (loops(c) or 0) >= first + 6, 30, message="three more loops")
    assert kwok_target(kubectl, group) == 3
    assert len(group_nodes(kubectl, group)) == 3
