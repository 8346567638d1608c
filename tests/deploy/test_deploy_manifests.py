"""deploy/: the kustomize bases read (every listed file exists and parses), the CRD is the packaged one,
and every kubetide pod is marked safe-to-evict false with two replicas under leader election."""

from __future__ import annotations

from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"


def _docs(path: Path) -> list[dict]:
    return [d for d in yaml.safe_load_all(path.read_text()) if d]


def test_kustomizations_list_files_that_exist_and_parse() -> None:
    for kustomization in (DEPLOY / "kustomization.yaml", DEPLOY / "rbac" / "kustomization.yaml"):
        spec = yaml.safe_load(kustomization.read_text())
        # kubectl 1.20's built-in kustomize (v2.0.3) knows resources and bases, not patches or labels.
        assert set(spec) <= {"resources", "bases"}
        for entry in spec.get("resources", []):
            assert _docs(kustomization.parent / entry), entry
        for base in spec.get("bases", []):
            assert (kustomization.parent / base / "kustomization.yaml").exists()


def test_the_crd_is_the_packaged_one() -> None:
    packaged = (
        ROOT / "src" / "kubetide" / "data" / "crd-horizontalpodautoscalers.autoscaling.kubetide.io.yaml"
    )
    assert (DEPLOY / "rbac" / "crd-horizontalpodautoscalers.yaml").read_text() == packaged.read_text()


def test_deployments_run_two_replicas_not_evicted_by_the_autoscaler() -> None:
    for name in ("cluster-autoscaler", "hpa", "escalator"):
        (deployment,) = _docs(DEPLOY / f"{name}.yaml")
        assert deployment["kind"] == "Deployment"
        assert deployment["spec"]["replicas"] == 2
        template = deployment["spec"]["template"]
        assert (
            template["metadata"]["annotations"]["cluster-autoscaler.kubernetes.io/safe-to-evict"] == "false"
        )
        assert template["spec"]["serviceAccountName"] == f"kubetide-{name}"
        args = template["spec"]["containers"][0]["args"]
        assert not any(a.startswith("--leader-elect=false") for a in args)


def test_deployment_args_are_valid_command_lines() -> None:
    from kubetide.commands.run import cluster_autoscaler, escalator, hpa
    from kubetide.commands.run.settings import parse_line

    for name, module in (("cluster-autoscaler", cluster_autoscaler), ("hpa", hpa), ("escalator", escalator)):
        (deployment,) = _docs(DEPLOY / f"{name}.yaml")
        args = deployment["spec"]["template"]["spec"]["containers"][0]["args"]
        assert parse_line(args, module.REGISTRY).problems == [], name


def test_the_cluster_autoscaler_writes_its_status_where_cas_tooling_looks() -> None:
    """kube-system/cluster-autoscaler-status, CA's --namespace and --status-config-map-name defaults;
    the Role that lets it write there is bound in that namespace."""
    from kubetide.commands.run import cluster_autoscaler
    from kubetide.commands.run.settings import parse_line

    (deployment,) = _docs(DEPLOY / "cluster-autoscaler.yaml")
    args = deployment["spec"]["template"]["spec"]["containers"][0]["args"]
    values = parse_line(args, cluster_autoscaler.REGISTRY).values
    assert (values["namespace"], values["status-config-map-name"]) == (
        "kube-system",
        "cluster-autoscaler-status",
    )
    rbac = _docs(DEPLOY / "rbac" / "cluster-autoscaler.yaml")
    (role,) = [d for d in rbac if d["kind"] == "Role"]
    (binding,) = [d for d in rbac if d["kind"] == "RoleBinding"]
    assert role["metadata"]["namespace"] == binding["metadata"]["namespace"] == "kube-system"
    assert any("configmaps" in r["resources"] and "update" in r["verbs"] for r in role["rules"])


def test_the_shadow_may_only_read_but_for_events() -> None:
    """deploy/shadow/rbac: get, list and watch; the one write is Events (--shadow-events), in a role of
    its own that can be left out. The shadow Deployment's command line is valid and takes no Lease."""
    from kubetide.commands.run import cluster_autoscaler
    from kubetide.commands.run.settings import parse_line

    rbac = DEPLOY / "shadow" / "rbac"
    spec = yaml.safe_load((rbac / "kustomization.yaml").read_text())
    assert set(spec) <= {"resources", "bases"} and spec["resources"] == ["shadow.yaml", "shadow-events.yaml"]
    reads = {"get", "list", "watch"}
    roles = [d for d in _docs(rbac / "shadow.yaml") if d["kind"] in ("ClusterRole", "Role")]
    assert roles and all(set(rule["verbs"]) <= reads for role in roles for rule in role["rules"])
    (events,) = [d for d in _docs(rbac / "shadow-events.yaml") if d["kind"] == "ClusterRole"]
    assert events["rules"] == [{"apiGroups": [""], "resources": ["events"], "verbs": ["create", "patch"]}]
    overlay = yaml.safe_load((DEPLOY / "shadow" / "kustomization.yaml").read_text())
    assert overlay == {"bases": ["rbac"], "resources": ["cluster-autoscaler.yaml"]}
    (deployment,) = _docs(DEPLOY / "shadow" / "cluster-autoscaler.yaml")
    pod = deployment["spec"]["template"]["spec"]
    assert deployment["spec"]["replicas"] == 1 and pod["serviceAccountName"] == "kubetide-shadow"
    parsed = parse_line(pod["containers"][0]["args"], cluster_autoscaler.REGISTRY)
    assert parsed.problems == [] and parsed.values["shadow"] and "leader-elect" not in parsed.given
