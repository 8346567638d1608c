"""The cluster autoscaler on a real control plane that misbehaves: the API server restarts under it, and
the kwok provider's state ConfigMap was left by another run.

- After a watch failure, no loop decides until every cache it reads has listed again (CA decides only
  on synced informers): the loops in between are skipped, counted in
  ``kubetide_loops_skipped_total{component,reason="cacheNotSynced"}`` and logged once; then the loop
  recovers and scales up again. The outage is one line per cache in the log, no traceback.
- A stale state asking for five nodes of a group of max 3 never takes the group past 3; the state is
  corrected from the Node objects and written back.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .support import Kubectl, KubetideProcess, restart_apiserver
from .test_cluster_autoscaler import (
    CA_NAMESPACE,
    FAST,
    cloud_config,
    deployment,
    group_nodes,
    running_pods,
)

SKIPPED = "kubetide_loops_skipped_total"
STATE = "kubetide-kwok-state"


def main_loops(ca: KubetideProcess) -> float:
    return ca.metric("cluster_autoscaler_last_activity", activity="main") or 0


def ca(
    kubetide: Callable[..., KubetideProcess], accounts: dict[str, Path], config: Path, group: str, *extra: str
) -> KubetideProcess:
    return kubetide(
        "cluster-autoscaler",
        "--cloud-provider=kwok",
        f"--cloud-config={config}",
        f"--nodes=0:3:{group}",
        "--leader-elect=false",
        *extra,
        kubeconfig=accounts["cluster-autoscaler"],
    )


def lines_with(log: list[str], text: str) -> list[int]:
    return [i for i, line in enumerate(log) if text in line]


def test_no_loop_decides_on_caches_that_have_not_listed_again_after_an_api_server_restart(
    kubectl: Kubectl,
    kubetide: Callable[..., KubetideProcess],
    service_accounts: dict[str, Path],
    wait_for: Callable[..., Any],
    tmp_path: Path,
    group: str,
    namespace: str,
) -> None:
    config = cloud_config(tmp_path, group, max_size=3)
    acting = ca(kubetide, service_accounts, config, group, *FAST)  # --v=4: each loop logs "loop: ..."
    # Beside it, at the default verbosity, a dry run: what a user's log shows of the outage.
    quiet_flags = [f for f in FAST if not f.startswith("--v=")]
    watching = ca(kubetide, service_accounts, config, group, *quiet_flags, "--dry-run")
    kubectl.create(deployment("web", namespace, group, replicas=1))
    wait_for(lambda: len(running_pods(kubectl, namespace, "web")) == 1, 120, message="the web pod running")
    wait_for(lambda: main_loops(watching), 60, message="the dry run's first loop")
    assert not acting.metric(SKIPPED, component="cluster-autoscaler", reason="cacheNotSynced")

    restart_apiserver(8)

    before = main_loops(acting)
    wait_for(lambda: main_loops(acting) >= before + 6, 90, message="three loops after the restart")
    assert (acting.metric(SKIPPED, component="cluster-autoscaler", reason="cacheNotSynced") or 0) >= 1
    assert (watching.metric(SKIPPED, component="cluster-autoscaler", reason="cacheNotSynced") or 0) >= 1

    log = acting.log().splitlines()
    (skipping,) = lines_with(log, "loops skipped until these caches have listed again")  # logged once
    (resumed,) = lines_with(log, "caches synced again;")
    assert skipping < resumed
    loops = lines_with(log, "kubetide.cluster-autoscaler: loop: ")
    assert not [i for i in loops if skipping < i < resumed], "a loop ran while a cache was not synced"
    assert any(i > resumed for i in loops), "no loop after the caches synced again"
    # Every cache that broke (the nodes and PodDisruptionBudgets among them) listed again before the
    # first loop that ran after the outage.
    first_loop_after = min(i for i in loops if i > resumed)
    broken = {log[i].split(": watch broken")[0].rsplit(" ", 1)[-1] for i in lines_with(log, ": watch broken")}
    assert {"nodes", "poddisruptionbudgets"} <= broken, broken
    for cache in broken:
        synced = [i for i in lines_with(log, f" {cache}: synced again after ") if i > skipping]
        assert synced and synced[0] < first_loop_after, f"{cache} had not listed again"

    # The user's log: one line per broken watch naming the cause, no traceback at the default level.
    quiet = watching.log()
    assert "Traceback" not in quiet, quiet[-3000:]
    assert quiet.count("loops skipped until these caches have listed again") == 1
    assert ": watch broken, listing again in " in quiet

    # It recovers: a pod that needs a second node gets it.
    kubectl.create(deployment("more", namespace, group, replicas=1, cpu="1500m"))
    wait_for(lambda: len(running_pods(kubectl, namespace, "more")) == 1, 120, message="the new pod running")
    assert len(group_nodes(kubectl, group)) == 2
    assert acting.alive() and watching.alive()


def kwok_state(kubectl: Kubectl) -> dict[str, Any]:
    cm = kubectl.json("-n", CA_NAMESPACE, "get", "configmap", STATE, "--ignore-not-found")
    return json.loads(((cm or {}).get("data") or {}).get("state") or '{"groups": {}}')  # type: ignore[no-any-return]


def test_a_stale_kwok_state_never_takes_a_group_past_its_max(
    kubectl: Kubectl,
    kubetide: Callable[..., KubetideProcess],
    service_accounts: dict[str, Path],
    wait_for: Callable[..., Any],
    tmp_path: Path,
    group: str,
) -> None:
    """The field report: a state ConfigMap left by another run asks for five nodes of a group of max 3
    (all due long ago). The provider creates at most three, and the state follows the nodes."""
    state = kwok_state(kubectl)
    state["groups"][group] = {
        "target": 5,
        "pending": [{"name": f"{group}-stale{i}", "due": 1_600_000_000 + i} for i in range(5)],
    }
    manifest = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": STATE, "namespace": CA_NAMESPACE},
        "data": {"state": json.dumps(state)},
    }
    kubectl("apply", "-f", "-", input=json.dumps(manifest))
    config = cloud_config(tmp_path, group, max_size=3)
    # A long unneeded time: the empty nodes stay, so the test sees what the stale state led to.
    flags = [f for f in FAST if not f.startswith("--scale-down-unneeded-time")]
    autoscaler = ca(kubetide, service_accounts, config, group, *flags, "--scale-down-unneeded-time=10m")

    seen: list[int] = []

    def settled() -> bool:
        seen.append(len(group_nodes(kubectl, group)))
        recorded = kwok_state(kubectl)["groups"].get(group, {})
        return main_loops(autoscaler) > 0 and recorded.get("target") == 3 and recorded.get("pending") == []

    wait_for(settled, 60, interval=0.2, message="the state corrected to the nodes")
    first = main_loops(autoscaler)
    wait_for(lambda: seen.append(len(group_nodes(kubectl, group))) or main_loops(autoscaler) >= first + 6, 60,
             interval=0.2, message="three more loops")  # fmt: skip
    assert max(seen) <= 3, seen
    nodes = group_nodes(kubectl, group)
    assert len(nodes) == 3 and {n["metadata"]["name"] for n in nodes} == {
        f"{group}-stale{i}" for i in range(3)
    }
    recorded = kwok_state(kubectl)["groups"][group]
    assert recorded == {"target": 3, "pending": []}
    assert "kwok state corrected from the Node objects" in autoscaler.log()
    assert autoscaler.alive()
