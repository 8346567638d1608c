"""Two HPA controllers with leader election: only the leader reconciles; SIGTERM hands over within 5 s
and the new leader reconciles the same HPAs.

"Acts" is what a user would check: kube-controller-manager's
``horizontal_pod_autoscaler_controller_reconciliations_total`` on each replica's ``/metrics`` (a standby
exports none), the Lease's holder, and the Deployment following the HPA's ``minReplicas`` (a rescale
that needs no metric, so the test never waits on Prometheus' scrapes).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from .support import Kubectl, KubetideProcess
from .test_ca_leader_election import elect, holder, sigterm_hand_over
from .test_hpa import FAST, deployment, group, kubetide_hpa, namespace, wait_replicas

__all__ = ["group", "namespace"]  # fixtures shared with the HPA tests

RECONCILED = "horizontal_pod_autoscaler_controller_reconciliations_total"


@pytest.fixture
def lease(kubectl: Kubectl, group: str) -> Iterator[str]:
    name = f"hpa-{group}"
    yield name
    kubectl("-n", "kubetide", "delete", "lease", name, "--ignore-not-found")


def reconciled(hpa: KubetideProcess) -> float | None:
    """Any reconcile at all: the first series of the counter, whatever its labels."""
    return hpa.metric(RECONCILED)


def test_one_hpa_controller_acts_and_hands_over(
    kubectl: Kubectl,
    kubetide: Callable[..., KubetideProcess],
    service_accounts: dict[str, Path],
    e2e_env: dict[str, str],
    wait_for: Callable[..., Any],
    namespace: str,
    group: str,
    lease: str,
) -> None:
    kubectl.create(deployment("web", namespace, group))
    wait_replicas(kubectl, wait_for, namespace, "web", 1, 60)
    kubectl.create(kubetide_hpa("web", namespace, "web"))
    flags = [f for f in FAST if not f.startswith("--leader-elect")]

    def start() -> KubetideProcess:
        return kubetide(
            "hpa",
            f"--prometheus-url={e2e_env['PROMETHEUS_URL']}",
            *flags,
            "--leader-elect=true",
            f"--leader-elect-resource-name={lease}",
            "--leader-elect-resource-namespace=kubetide",
            kubeconfig=service_accounts["hpa"],
        )

    a, b = start(), start()
    ids, leader_id, leader, standby = elect(
        kubectl, lease, a, b, wait_for, reconciled, lease_namespace="kubetide"
    )

    # minReplicas 2: the leader scales the Deployment; the standby reconciles nothing.
    kubectl("-n", namespace, "patch", "khpa", "web", "--type=merge", "-p", '{"spec":{"minReplicas":2}}')
    wait_replicas(kubectl, wait_for, namespace, "web", 2, 60)
    assert reconciled(standby) is None, "the standby reconciled"
    assert "SuccessfulRescale" not in standby.log()
    assert holder(kubectl, lease, "kubetide") == leader_id

    # SIGTERM: exit 0, the Lease released, the standby leads and reconciles within 5 s.
    sigterm_hand_over(kubectl, lease, ids, leader, standby, wait_for, reconciled, lease_namespace="kubetide")

    # The new leader acts on the same HPA.
    kubectl("-n", namespace, "patch", "khpa", "web", "--type=merge", "-p", '{"spec":{"minReplicas":3}}')
    wait_replicas(kubectl, wait_for, namespace, "web", 3, 60)
