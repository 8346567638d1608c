"""`kubetide run hpa --shadow`: kubetide's HPA beside the HPA controller that acts, with other settings,
deciding on its own replica counts and changing nothing.

The e2e cluster's kube-controller-manager runs without its HPA controller
(`--controllers=*,-horizontalpodautoscaling`, hack/e2e_cluster.py), so kubetide's own HPA acts (the
tolerance 0.1, a 5 s downscale stabilization) and a shadow watches with a tolerance of 0.5 and a 60 s
stabilization, under the read-only ServiceAccount of deploy/shadow. Load a little over the target
makes the acting HPA scale up where the shadow, within its tolerance, keeps its own count of 1; load
far over it brings both to 3; load far under it makes the acting HPA scale down at once where the
shadow holds its own 3 for its stabilization window. Each disagreement is recorded with both counts,
the running controller's rescale (its time and reason, from its SuccessfulRescale Event) and
kubetide's reasons; each closes when the two agree again; the journal's timeline holds kubetide's own
count beside the running one; and the API server's audit log shows the shadow wrote nothing but its
Events.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .support import Kubectl, KubetideProcess
from .test_ca_shadow import SHADOW_ACCOUNT, audited_writes, records, shadow_kubeconfig, shadow_report
from .test_hpa import (
    FAST,
    deployment,
    group,  # noqa: F401 - the fixture: a Node of the test's own
    kubetide_hpa,
    namespace,  # noqa: F401 - the fixture: a namespace of the test's own
    set_usage,
    start_hpa,
    wait_replicas,
)

Wait = Callable[..., Any]
SHADOW_FLAGS = [
    *[f for f in FAST if not f.startswith("--horizontal-pod-autoscaler-downscale-stabilization")],
    "--horizontal-pod-autoscaler-downscale-stabilization=60s",
    "--horizontal-pod-autoscaler-tolerance=0.5",
    "--shadow",
    "--shadow-match-window=15s",
    "--shadow-events",
]


def timeline(directory: Path) -> list[dict[str, Any]]:
    path = directory / "timeline.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_an_hpa_shadow_with_its_own_counts_finds_and_explains_where_it_differs_and_changes_nothing(
    kubectl: Kubectl,
    kubeconfig_path: Path,
    kubetide: Callable[..., KubetideProcess],
    service_accounts: dict[str, Path],
    e2e_env: dict[str, str],
    wait_for: Wait,
    tmp_path: Path,
    namespace: str,  # noqa: F811
    group: str,  # noqa: F811
) -> None:
    shadow_config = shadow_kubeconfig(kubectl, kubeconfig_path, wait_for)
    kubectl.create(deployment("web", namespace, group))
    wait_replicas(kubectl, wait_for, namespace, "web", 1, 60)
    kubectl.create(kubetide_hpa("web", namespace, "web"))
    acting = start_hpa(kubetide, service_accounts, e2e_env)
    shadow_dir = tmp_path / "shadow"
    shadow = kubetide(
        "hpa",
        f"--prometheus-url={e2e_env['PROMETHEUS_URL']}",
        *SHADOW_FLAGS,
        f"--shadow-dir={shadow_dir}",
        kubeconfig=shadow_config,
        name="hpa-shadow",
    )
    key = f"{namespace}/web"

    def loops_with(running: int, kubetide_count: int) -> bool:
        return (shadow_dir / "timeline.jsonl").exists() and any(
            e.get("hpas", {}).get(key) == {"running": running, "kubetide": kubetide_count}
            for e in timeline(shadow_dir)
        )

    wait_for(lambda: loops_with(1, 1), 90, message="the shadow's first loops, both at 1 replica")

    def replicas_records() -> list[dict[str, Any]]:
        return [r for r in records(shadow_dir) if r.get("type") == "disagreement" and r["subject"] == key]

    def closed(record: dict[str, Any]) -> bool:
        return any(r.get("type") == "closed" and r["id"] == record["id"] for r in records(shadow_dir))

    # 1. 70m on a 100m request: 140 % of the 50 % target. Out of the acting HPA's tolerance (0.1): it
    #    scales up (to 2, then 3 as the new pods at the 50m baseline keep the average over 1.1); within
    #    the shadow's (0.5), whose own count stays 1.
    set_usage(kubectl, namespace, "web", "70m")
    first = wait_for(
        lambda: next(iter(replicas_records()), None), 120, message="the tolerance's disagreement"
    )
    assert first["kind"] == "replicas" and first["component"] == "horizontal-pod-autoscaler", first
    message = first["message"]
    assert message.startswith(f"the HPA controller rescaled {key} to "), message
    assert "(cpu resource utilization (percentage of request) above target)" in message, message
    assert re.search(
        r"kubetide would have had 1: cpu resource utilization \(percentage of request\): 1 replicas "
        r"\(usage ratio \d\.\d\d, within-tolerance\); ",
        message,
    ), message
    assert "proposal 1, ReadyForNewScale 1, DesiredWithinRange 1" in message, message
    assert first["delta"][key] in (-1, -2), first
    assert loops_with(2, 1) or loops_with(3, 1)  # the journal's timeline: kubetide's own count

    # 2. 200m on every pod: 400 %, out of both tolerances; both at the maximum of 3, and they agree.
    wait_replicas(kubectl, wait_for, namespace, "web", 3, 120)
    set_usage(kubectl, namespace, "web", "200m")
    wait_for(lambda: closed(first), 120, message="the tolerance's disagreement closed at 3 replicas each")
    assert loops_with(3, 3)

    # 3. 10m: the acting HPA (5 s stabilization) scales down to 1 at once; the shadow holds its own 3
    #    for its 60 s window, then comes down too.
    set_usage(kubectl, namespace, "web", "10m")

    def second_record() -> dict[str, Any] | None:
        found = replicas_records()
        return found[1] if len(found) > 1 else None

    second = wait_for(second_record, 120, message="the stabilization's disagreement")
    # (The acting HPA may pass 2 on its way down, as the rate window follows the load.)
    message = second["message"]
    assert re.match(
        rf"the HPA controller rescaled {key} to [12] at \S+ \(All metrics below target\)", message
    )
    assert "kubetide would have had 3, its own count since " in message, message
    # Its window still holds the high recommendations of step 2 (upstream keeps them before the limit).
    assert re.search(r"; proposal 1, ScaleDownStabilized \d+, \w+ 3$", message), message
    assert second["delta"][key] in (1, 2), second
    assert loops_with(1, 3)
    wait_for(lambda: closed(second), 150, message="the stabilization's disagreement closed: both at 1")
    assert loops_with(1, 1)

    # Counted, said on the HPA, drawn.
    counted = shadow.metric(
        "kubetide_shadow_disagreements_total", component="horizontal-pod-autoscaler", kind="replicas"
    )
    assert counted == 2.0, counted
    events = kubectl.json("-n", namespace, "get", "events", "--field-selector", "reason=ShadowDisagreement")
    assert {e["involvedObject"]["name"] for e in events["items"]} == {"web"}, events
    assert f"Replicas of {key}" in shadow_report(shadow_dir, tmp_path / "report.html")

    # The shadow changed nothing: the acting HPA did every rescale, the shadow's account wrote Events only.
    assert acting.alive() and shadow.alive(), shadow.log()[-3000:]
    writes = audited_writes(SHADOW_ACCOUNT)
    assert writes, "the audit log shows the shadow's Events"
    assert all("/events" in uri and verb in ("create", "patch") for verb, uri in writes), writes
