"""Two batch autoscalers (Escalator's loop) with leader election: only the leader runs; SIGTERM hands
over within 5 s and the new leader grows the group for new load.

"Acts" is what a user would check: Escalator's ``escalator_run_count`` on each replica's ``/metrics`` (a
standby exports none), the Lease's holder, and the group's Node objects. Pods request 900m of a 2-CPU
node and the scale-up threshold is 70%, so the node counts awaited never depend on the scheduler.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from .support import Kubectl, KubetideProcess
from .test_ca_leader_election import elect, holder, sigterm_hand_over
from .test_escalator import configs, deployment, group, namespace, nodes, running

__all__ = ["group", "namespace"]  # fixtures shared with the escalator tests


@pytest.fixture
def lease(kubectl: Kubectl, group: str) -> Iterator[str]:
    name = f"esc-{group}"
    yield name
    kubectl("-n", "kubetide", "delete", "lease", name, "--ignore-not-found")


def runs(esc: KubetideProcess) -> float | None:
    return esc.metric("escalator_run_count")


def test_one_batch_autoscaler_acts_and_hands_over(
    kubectl: Kubectl,
    kubetide: Callable[..., KubetideProcess],
    service_accounts: dict[str, Path],
    wait_for: Callable[..., Any],
    tmp_path: Path,
    group: str,
    namespace: str,
    lease: str,
) -> None:
    cloud, node_groups = configs(tmp_path, group)

    def start() -> KubetideProcess:
        return kubetide(
            "escalator",
            f"--nodegroups={node_groups}",
            "--cloud-provider=kwok",
            f"--cloud-config={cloud}",
            "--scaninterval=2s",
            "--leader-elect",
            "--leader-elect-config-namespace=kubetide",
            f"--leader-elect-config-name={lease}",
            kubeconfig=service_accounts["escalator"],
        )

    a, b = start(), start()
    ids, leader_id, leader, standby = elect(kubectl, lease, a, b, wait_for, runs, lease_namespace="kubetide")

    # 2 x 900m against an empty group: the leader grows it; the standby never runs.
    kubectl.create(deployment("work", namespace, group, replicas=2))
    wait_for(lambda: running(kubectl, namespace, "work") == 2, 120, message="2 work pods running")
    grown = len(nodes(kubectl, group))
    assert grown >= 1
    assert runs(standby) is None, "the standby ran"
    assert holder(kubectl, lease, "kubetide") == leader_id

    # SIGTERM: exit 0, the Lease released, the standby leads and runs within 5 s.
    sigterm_hand_over(kubectl, lease, ids, leader, standby, wait_for, runs, lease_namespace="kubetide")

    # The new leader grows the group for more load than it holds (6 x 900m needs at least 4 nodes
    # under the 70% threshold), and every pod runs.
    kubectl("-n", namespace, "scale", "deployment", "work", "--replicas=6")
    wait_for(lambda: running(kubectl, namespace, "work") == 6, 120, message="6 work pods running")
    assert len(nodes(kubectl, group)) > grown
