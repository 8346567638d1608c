"""`--shadow`: kubetide's cluster autoscaler beside the one that acts, with other flags, changing nothing.

kubetide's own cluster autoscaler acts (kwok provider, `--expander=least-waste`, a 6 s unneeded time);
a shadow watches with `--expander=priority` (the big group first) and a one-hour unneeded time, under
the read-only ServiceAccount of deploy/shadow. A pending pod makes the acting autoscaler add a small
node where the shadow would have added a big one; the pod's deletion makes it delete that node after
6 s where the shadow would have kept it for an hour. Both disagreements are recorded, explained,
counted and posted as Events, `kubetide shadow report` draws them, and the API server's audit log
shows that the shadow wrote nothing but those Events. The scale-up's time and pod come from the
acting autoscaler's Events (`ScaledUpGroup`, `TriggeredScaleUp`).
"""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from .conftest import ENV_FILE, REPO_ROOT
from .support import Kubectl, KubetideProcess
from .test_cluster_autoscaler import CA_NAMESPACE, FAST, deployment, group_nodes, running_pods

SHADOW_ACCOUNT = "system:serviceaccount:kubetide:kubetide-shadow"
PRIORITY_CONFIG_MAP = "cluster-autoscaler-priority-expander"


def shadow_kubeconfig(kubectl: Kubectl, admin_kubeconfig: Path, wait_for: Callable[..., Any]) -> Path:
    """deploy/shadow/rbac applied as a user would; a kubeconfig with the kubetide-shadow token."""
    kubectl("apply", "-k", str(REPO_ROOT / "deploy" / "shadow" / "rbac"))

    def token() -> str | None:
        sa = kubectl.json("-n", "kubetide", "get", "serviceaccount", "kubetide-shadow")
        secrets = [s["name"] for s in sa.get("secrets") or []]
        if not secrets:
            return None
        data = kubectl.json("-n", "kubetide", "get", "secret", secrets[0]).get("data") or {}
        return base64.b64decode(data["token"]).decode() if "token" in data else None

    value = wait_for(token, 60, message="the token of ServiceAccount kubetide/kubetide-shadow")
    cluster = yaml.safe_load(admin_kubeconfig.read_text())["clusters"][0]["cluster"]
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "e2e", "cluster": cluster}],
        "users": [{"name": "shadow", "user": {"token": value}}],
        "contexts": [{"name": "shadow", "context": {"cluster": "e2e", "user": "shadow"}}],
        "current-context": "shadow",
    }
    path = ENV_FILE.parent / "kubeconfig-shadow"
    path.write_text(yaml.safe_dump(config))
    return path


def two_groups(tmp_path: Path, group: str) -> Path:
    """A small (2 CPU) and a big (8 CPU) group; a node takes 20 s to come, so the pod waits."""

    def spec(name: str, cpu: str) -> dict[str, Any]:
        resources = {"cpu": cpu, "memory": "16Gi", "pods": "110"}
        return {
            "name": name,
            "minSize": 0,
            "maxSize": 3,
            "provisioningDelay": "20s",
            "template": {
                "metadata": {"labels": {"pool": group}},
                "status": {"allocatable": resources, "capacity": resources},
            },
        }

    path = tmp_path / "cloud.yaml"
    path.write_text(yaml.safe_dump({"nodeGroups": [spec(f"{group}-small", "2"), spec(f"{group}-big", "8")]}))
    return path


def records(directory: Path) -> list[dict[str, Any]]:
    path = directory / "disagreements.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def shadow_report(directory: Path, out: Path) -> str:
    """`kubetide shadow report DIR -o OUT`, as a user runs it; the page."""
    binary = str(Path(sys.executable).parent / "kubetide")
    subprocess.run([binary, "shadow", "report", str(directory), "-o", str(out)], check=True, timeout=60)
    return out.read_text()


def audited_writes(user: str) -> list[tuple[str, str]]:
    """(verb, resource path) of every request of ``user`` the API server audited: everything but reads."""
    out = []
    for line in (ENV_FILE.parent / "audit.log").read_text().splitlines():
        event = json.loads(line)
        if event.get("user", {}).get("username") == user:
            out.append((event["verb"], event["requestURI"]))
    return out


def test_a_shadow_finds_and_explains_what_it_would_have_done_otherwise_and_changes_nothing(
    kubectl: Kubectl,
    kubeconfig_path: Path,
    kubetide: Callable[..., KubetideProcess],
    service_accounts: dict[str, Path],
    wait_for: Callable[..., Any],
    tmp_path: Path,
    group: str,
    namespace: str,
) -> None:
    small, big = f"{group}-small", f"{group}-big"
    config = two_groups(tmp_path, group)
    shadow_config = shadow_kubeconfig(kubectl, kubeconfig_path, wait_for)
    kubectl.create(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": PRIORITY_CONFIG_MAP, "namespace": CA_NAMESPACE},
            "data": {"priorities": f"10:\n  - {big}\n1:\n  - {small}\n"},
        }
    )
    try:
        _run(
            kubectl,
            kubetide,
            service_accounts,
            shadow_config,
            wait_for,
            tmp_path,
            config,
            namespace,
            small,
            big,
        )
    finally:
        kubectl("-n", CA_NAMESPACE, "delete", "configmap", PRIORITY_CONFIG_MAP, "--ignore-not-found")
        kubectl("delete", "nodes", "-l", f"kubetide.io/node-group in ({small},{big})", "--wait=false")


def _run(
    kubectl: Kubectl,
    kubetide: Callable[..., KubetideProcess],
    accounts: dict[str, Path],
    shadow_config: Path,
    wait_for: Callable[..., Any],
    tmp_path: Path,
    config: Path,
    namespace: str,
    small: str,
    big: str,
) -> None:
    nodes = [f"--nodes=0:3:{small}", f"--nodes=0:3:{big}"]
    acting = kubetide(
        "cluster-autoscaler",
        "--cloud-provider=kwok",
        f"--cloud-config={config}",
        *nodes,
        *FAST,
        "--expander=least-waste",
        "--leader-elect=false",
        kubeconfig=accounts["cluster-autoscaler"],
    )
    shadow_dir = tmp_path / "shadow"
    shadow_args = [
        "--cloud-provider=kwok",
        f"--cloud-config={config}",
        *nodes,
        *[f for f in FAST if not f.startswith("--scale-down-unneeded-time")],
        "--scale-down-unneeded-time=1h",
        "--expander=priority",
        "--shadow",
        f"--shadow-dir={shadow_dir}",
        "--shadow-match-window=10s",
        "--shadow-events",
    ]
    shadow = kubetide("cluster-autoscaler", *shadow_args, kubeconfig=shadow_config, name="shadow")
    wait_for(lambda: "caches synced" in shadow.log(), 60, message="the shadow's caches synced")

    # 1. One pod of 1.5 CPU: least-waste adds a small node; the priority expander would add a big one.
    kubectl.create(deployment("web", namespace, group_of(small), replicas=1, cpu="1500m"))
    wait_for(lambda: len(running_pods(kubectl, namespace, "web")) == 1, 120, message="the web pod running")
    (node,) = [n["metadata"]["name"] for n in group_nodes(kubectl, small)]
    assert group_nodes(kubectl, big) == []

    def found(kind: str) -> dict[str, Any] | None:
        return next((r for r in records(shadow_dir) if r.get("kind") == kind), None)

    swap = wait_for(lambda: found("scale-up-group"), 90, message="the expander's disagreement recorded")
    assert swap["subject"] == small and swap["delta"] == {small: -1, big: 1}, swap
    assert f"CA scaled up group {small} (0 -> 1)" in swap["message"], swap
    # Read from the acting autoscaler's Events: its TriggeredScaleUp's pod. (The time is its
    # ScaledUpGroup Event's when the shadow's look that reads the Event also sees the group's new
    # target, else the status ConfigMap's record of the scale-up, written in the same loop: which of
    # the two depends on when the kwok provider's state reaches the shadow, so it is not asserted.)
    assert f" for pod {namespace}/web-" in swap["message"], swap
    assert f"kubetide would have scaled up group {big} (0 -> 1) instead" in swap["message"], swap
    assert "priority kept " + big in swap["message"] and f"{namespace}/web-" in swap["message"], swap

    # 2. The pod goes: the acting autoscaler deletes the empty node after 6 s; the shadow would wait 1 h.
    kubectl("-n", namespace, "delete", "deployment", "web")
    wait_for(lambda: group_nodes(kubectl, small) == [], 120, message="the small node deleted")
    kept = wait_for(lambda: found("scale-down-running-only"), 60, message="the unneeded time's disagreement")
    assert kept["subject"] == node and kept["delta"] == {small: 1}, kept
    assert kept["message"].startswith(f"CA deleted node {node} (group {small}) at "), kept
    assert "kubetide would have kept it: unneeded since " in kept["message"], kept
    assert "not yet for --scale-down-unneeded-time (3600s)" in kept["message"], kept

    # Counted, said on the objects, drawn.
    for kind in ("scale-up-group", "scale-down-running-only"):
        assert (
            shadow.metric("kubetide_shadow_disagreements_total", component="cluster-autoscaler", kind=kind)
            or 0
        ) >= 1
    assert shadow.metric("kubetide_shadow_writes_refused_total") in (None, 0.0)
    events = kubectl.json("get", "events", "-A", "--field-selector", "reason=ShadowDisagreement")["items"]
    about = {(e["involvedObject"]["kind"], e["involvedObject"]["name"]) for e in events}
    assert ("Node", node) in about and ("ConfigMap", "cluster-autoscaler-status") in about, about
    html = shadow_report(shadow_dir, tmp_path / "report.html")
    assert "<svg" in html and node in html and "scale-up-group" in html

    # Its plans explained as a shadow's (its /debug/plan, as kubetide explain --cluster reads it).
    explained = subprocess.run(
        [
            str(Path(sys.executable).parent / "kubetide"),
            "explain",
            "--cluster",
            f"--address=http://127.0.0.1:{shadow.port}",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert explained.returncode == 0, explained.stderr
    assert "(shadow; " in explained.stdout and "what kubetide would have done" in explained.stdout, (
        explained.stdout
    )

    # The shadow changed nothing: the API server audited no request of its account but Event writes.
    assert acting.alive() and shadow.alive()
    writes = audited_writes(SHADOW_ACCOUNT)
    assert writes, "the audit log shows the shadow's Events"
    assert all("/events" in uri and verb in ("create", "patch") for verb, uri in writes), writes


def group_of(small: str) -> str:
    """The `pool` label value both groups' templates carry (the test's group name)."""
    return small.removesuffix("-small")
