"""`kubetide run escalator --shadow`: kubetide's batch autoscaler beside the one that acts, with other
thresholds, changing nothing.

kubetide's own Escalator acts (kwok provider, scale up above 70 %, taint below 30 % / 45 %, as in
test_escalator.py); a shadow watches with a scale-up threshold of 50 % and taint thresholds of
10 % / 20 %, under the read-only ServiceAccount of deploy/shadow. Four pods of 900m grow the group to
3 nodes (60 %): the shadow, started then, would scale up (60 % is over its 50 %) where the acting one
does not. Two pods go (30 %): the acting Escalator taints a node (a scale-down by one) where the
shadow, over its 20 %, would not, and its reasons say so. Both disagreements are recorded, explained
and counted, and the API server's audit log shows the shadow wrote nothing.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from .support import Kubectl, KubetideProcess
from .test_ca_shadow import SHADOW_ACCOUNT, audited_writes, records, shadow_kubeconfig
from .test_escalator import (
    configs,
    deployment,
    group,  # noqa: F401 - the fixture: a kwok group of the test's own
    namespace,  # noqa: F401 - the fixture: a namespace of the test's own
    nodes,
    running,
    tainted,
)


def shadow_groups(tmp_path: Path, acting: Path) -> Path:
    """The acting Escalator's node groups file with the shadow's thresholds."""
    doc = yaml.safe_load(acting.read_text())
    (spec,) = doc["node_groups"]
    spec.update(
        scale_up_threshold_percent=50,
        taint_lower_capacity_threshold_percent=10,
        taint_upper_capacity_threshold_percent=20,
    )
    path = tmp_path / "shadow-nodegroups.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


def test_an_escalator_shadow_with_other_thresholds_finds_and_explains_where_it_differs_and_changes_nothing(
    kubectl: Kubectl,
    kubeconfig_path: Path,
    kubetide: Callable[..., KubetideProcess],
    service_accounts: dict[str, Path],
    wait_for: Callable[..., Any],
    tmp_path: Path,
    group: str,  # noqa: F811
    namespace: str,  # noqa: F811
) -> None:
    cloud, node_groups = configs(tmp_path, group)
    common = ["--cloud-provider=kwok", f"--cloud-config={cloud}", "--scaninterval=2s", "--loglevel=5"]
    acting = kubetide(
        "escalator",
        f"--nodegroups={node_groups}",
        *common,
        "--leader-elect-config-namespace=kubetide",
        kubeconfig=service_accounts["escalator"],
    )
    shadow_config = shadow_kubeconfig(kubectl, kubeconfig_path, wait_for)

    # 4 x 900m: the acting Escalator grows the group to 3 nodes (60 %, under its 70 %).
    kubectl.create(deployment("work", namespace, group, replicas=4))
    wait_for(lambda: running(kubectl, namespace, "work") == 4, 120, message="4 work pods running")
    wait_for(lambda: len(nodes(kubectl, group)) == 3, 60, message="the group at 3 nodes")

    shadow_dir = tmp_path / "shadow"
    shadow = kubetide(
        "escalator",
        f"--nodegroups={shadow_groups(tmp_path, node_groups)}",
        *common,
        "--shadow",
        f"--shadow-dir={shadow_dir}",
        "--shadow-match-window=10s",
        kubeconfig=shadow_config,
        name="escalator-shadow",
    )

    def found(kind: str) -> dict[str, Any] | None:
        return next(
            (r for r in records(shadow_dir) if r.get("type") == "disagreement" and r["kind"] == kind), None
        )

    def closed(record: dict[str, Any]) -> bool:
        return any(r.get("type") == "closed" and r["id"] == record["id"] for r in records(shadow_dir))

    # 1. At 60 %, over the shadow's 50 %: it would scale up; the acting one does not.
    up = wait_for(
        lambda: found("scale-up-kubetide-only"), 90, message="the scale-up threshold's disagreement"
    )
    assert up["subject"] == group and up["component"] == "escalator", up
    assert up["message"].startswith(
        f"Escalator did not scale up; kubetide would have scaled up group {group} (3 -> "
    )
    assert "utilisation above scale_up_threshold_percent: scale up (cpu 60%," in up["message"], up
    assert len(nodes(kubectl, group)) == 3  # the shadow added nothing

    # 2. Two pods go: 1800m of 6000m, 30 %, under the acting one's taint_upper 45 %: it taints a node.
    #    The shadow, over its 20 %, would have left the group alone (and no longer wants a scale-up).
    kubectl("-n", namespace, "scale", "deployment", "work", "--replicas=2")
    wait_for(lambda: any(tainted(n) for n in nodes(kubectl, group)), 60, message="a node tainted")
    down = wait_for(
        lambda: found("scale-down-running-only"), 60, message="the taint threshold's disagreement"
    )
    assert down["subject"] == group and down["delta"] == {group: 1}, down
    assert down["message"].startswith(f"Escalator scaled down group {group} (3 -> 2) at "), down
    # (Its reasons at its last loop before the taint, else at the loop that saw it: 30 % or 45 %.)
    assert re.search(
        r"kubetide would not have scaled it down: No need to scale \(cpu (30|45)%,", down["message"]
    )
    assert closed(up), "the shadow's scale-up ended when the load went"

    for kind in ("scale-up-kubetide-only", "scale-down-running-only"):
        assert shadow.metric("kubetide_shadow_disagreements_total", component="escalator", kind=kind) == 1.0

    # The shadow changed nothing: the API server audited no write of its account.
    assert acting.alive() and shadow.alive(), shadow.log()[-3000:]
    assert [w for w in audited_writes(SHADOW_ACCOUNT) if "/events" not in w[1]] == []
