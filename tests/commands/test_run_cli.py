"""`kubetide run ...` command lines: help that explains, and every bad flag named at once (exit 2),
before anything connects to a cluster."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from click.testing import CliRunner

from kubetide.cli import main


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["run", *args])
    assert "Traceback" not in result.output + result.stderr
    return result.exit_code, result.stdout, result.stderr


def test_run_lists_the_components() -> None:
    code, out, _ = run("--help")
    assert code == 0
    for name in ("cluster-autoscaler", "hpa", "escalator"):
        assert name in out


@pytest.mark.parametrize(
    ("component", "flag"),
    [("cluster-autoscaler", "--scale-down-unneeded-time"), ("hpa", "--horizontal-pod-autoscaler-tolerance")],
)
def test_help_lists_upstream_flags_with_defaults(component: str, flag: str) -> None:
    code, out, _ = run(component, "--help")
    assert code == 0
    assert flag in out and "(default" in out


@pytest.mark.parametrize("component", ["cluster-autoscaler", "hpa", "escalator"])
def test_help_explains_every_flag(component: str) -> None:
    """Each flag's entry has a line saying what it does, not only its default."""
    code, out, _ = run(component, "--help")
    assert code == 0
    lines = out.splitlines()
    bare = [
        flag.split()[0]
        for flag, below in itertools.pairwise(lines)
        if flag.startswith("  --") and below.strip().startswith("(default")
    ]
    assert bare == [], f"flags without a help text: {bare}"


def test_cluster_autoscaler_reports_every_bad_flag_and_exits_2() -> None:
    code, _, err = run(
        "cluster-autoscaler",
        "--scan-intervall=10s",
        "--max-nodes-total=-3",
        "--expander=cheapest",
        "--cloud-provider=gce",
    )
    assert code == 2
    assert "--scan-intervall: unknown flag (did you mean --scan-interval?)" in err
    assert "--max-nodes-total: must be >= 0" in err
    assert "--expander: must be one of" in err
    assert "--cloud-provider: 'gce' is not available: use one of kwok, aws" in err
    assert err.startswith("kubetide run cluster-autoscaler: 4 problems:")


def test_kwok_needs_its_file_and_a_bad_file_names_the_fields(tmp_path: Path) -> None:
    code, _, err = run("cluster-autoscaler", "--cloud-provider=kwok")
    assert code == 2 and "--cloud-config: the kwok provider needs its node groups file" in err
    bad = tmp_path / "cloud.yaml"
    bad.write_text("nodeGroups:\n  - name: a\n    minSize: 3\n    maxSize: 1\n")
    config = tmp_path / "kubeconfig"
    config.write_text(
        "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: 'https://127.0.0.1:1'}}]\n"
        "users: [{name: u, user: {token: t}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\n"
        "current-context: x\n"
    )
    code, _, err = run(
        "cluster-autoscaler", "--cloud-provider=kwok", f"--cloud-config={bad}", f"--kubeconfig={config}"
    )
    assert code == 2
    assert "nodeGroups[0]" in err


def test_hpa_rules_need_prometheus() -> None:
    code, _, err = run("hpa", "--prometheus-rules=rules.yaml")
    assert code == 2 and "--prometheus-rules: needs --prometheus-url" in err


def test_klog_flags_are_accepted(tmp_path: Path) -> None:
    # Accepted and mapped to logging: the only problem left is the missing kubeconfig (exit 1).
    code, _, err = run("hpa", "--v=2", "--logtostderr", f"--kubeconfig={tmp_path / 'missing'}")
    assert code == 1 and "no such file" in err


def test_cluster_autoscaler_aws_flags_are_checked_before_connecting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AWS_REGION", raising=False)
    monkeypatch.delenv("AWS_DEFAULT_REGION", raising=False)
    code, _, err = run(
        "cluster-autoscaler",
        "--cloud-provider=aws",
        "--nodes=3:1:workers",
        "--node-group-auto-discovery=mig:foo",
        "--kubeconfig=/nonexistent",
    )
    assert code == 2
    assert "--nodes: '3:1:workers': max size must be greater or equal to min size" in err
    assert "--node-group-auto-discovery: 'mig:foo': unsupported discoverer" in err
    assert "--aws-region: no AWS region: set --aws-region or AWS_REGION" in err
    code, _, err = run("cluster-autoscaler", "--cloud-provider=aws", "--aws-region=us-east-1")
    assert code == 2
    assert "--nodes: the aws provider needs groups" in err


def test_an_auto_discovery_spec_keeps_its_commas() -> None:
    from kubetide.cluster.flags import CA_FLAGS, value_from_text

    spec = "asg:tag=k8s.io/cluster-autoscaler/enabled,k8s.io/cluster-autoscaler/prod"
    assert value_from_text(CA_FLAGS["node-group-auto-discovery"], [spec, "asg:tag=x"]) == [spec, "asg:tag=x"]


def test_a_flag_kubetide_does_not_implement_is_refused_unless_default() -> None:
    """Live mode refuses what it would otherwise ignore, as scenarios do; the default is accepted."""
    code, _, err = run("cluster-autoscaler", "--cloud-provider=kwok", "--salvo-scale-up=true")
    assert code == 2
    assert "--salvo-scale-up: not implemented by kubetide yet: only its default (False) is accepted" in err
    code, _, err = run("cluster-autoscaler", "--cloud-provider=kwok", "--salvo-scale-up=false")
    assert "salvo-scale-up" not in err


@pytest.mark.parametrize("component", ["cluster-autoscaler", "hpa", "escalator"])
def test_unicode_digits_in_verbosity_and_port_are_refused_not_a_traceback(component: str) -> None:
    """Go's strconv reads ASCII digits only: ``--v=４`` and a port of ``８０８５`` are not numbers
    (Python's ``str.isdigit`` takes them, and ``int()`` then either reads or raises)."""
    code, _, err = run(component, "--v=\uff14", "--address=127.0.0.1:\uff18\uff10\uff18\uff15")
    assert code == 2, err
    assert "--v" in err and "--address" in err, err
