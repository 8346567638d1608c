"""`kubetide hpa explain --cluster`: a real HPA explained from what the cluster serves, read-only.

The HPA's pods report their usage through the node agent, which Prometheus scrapes; the explanation
reads the metrics from Prometheus (`--prometheus-url`, as a cluster without a metrics adapter needs),
the scale subresource and the pods from the API server, under the HPA's ServiceAccount. Checked: the
proposal follows the usage, and explaining a scale-up writes nothing (the Deployment keeps its size).
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .support import Kubectl
from .test_hpa import deployment, group, kubetide_hpa, namespace, set_usage, wait_replicas

__all__ = ["group", "namespace"]  # fixtures shared with the HPA tests

KUBETIDE = str(Path(sys.executable).parent / "kubetide")


def explain(accounts: dict[str, Path], env: dict[str, str], hpa: str) -> dict[str, Any]:
    done = subprocess.run(
        [
            KUBETIDE, "hpa", "explain", "--kubeconfig", str(accounts["hpa"]), "--hpa", hpa,
            f"--prometheus-url={env['PROMETHEUS_URL']}", "--prometheus-rate-window=15s", "--json",
        ],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout))


def test_explains_a_real_hpa_without_touching_it(
    kubectl: Kubectl,
    service_accounts: dict[str, Path],
    e2e_env: dict[str, str],
    wait_for: Callable[..., Any],
    namespace: str,
    group: str,
) -> None:
    kubectl.create(deployment("web", namespace, group))
    wait_replicas(kubectl, wait_for, namespace, "web", 1, 60)
    kubectl.create(kubetide_hpa("web", namespace, "web"))
    hpa = f"{namespace}/web"

    def proposal() -> int | None:
        metrics = explain(service_accounts, e2e_env, hpa)["metrics"]
        return metrics[0].get("proposal") if metrics else None

    # At its baseline the pod uses exactly the target: one replica proposed, once Prometheus has it.
    assert wait_for(lambda: proposal() == 1, 90, interval=2, message="a proposal of 1 from real metrics")

    # 200m on a 100m request against a 50% target: 4 wanted, 3 allowed (over the 1-minute rate window
    # the measured usage climbs, so 3 may come first as wanted, then as the maximum); explained, not done.
    set_usage(kubectl, namespace, "web", "200m")
    report = wait_for(
        lambda: (r := explain(service_accounts, e2e_env, hpa))["desired_replicas"] == 3 and r,
        90,
        interval=2,
        message="the explanation of a scale-up to 3",
    )
    assert report["scaled"] is True and report["events"][0]["reason"] == "SuccessfulRescale", report
    assert report["now"]["from"] == "the current time"
    assert kubectl.json("-n", namespace, "get", "deployment", "web")["spec"]["replicas"] == 1
    status = kubectl.json("-n", namespace, "get", "khpa", "web").get("status") or {}
    assert not status.get("conditions"), "explaining wrote the HPA's status"
