"""``kubetide scenario from-cluster``: flags, errors as one line, and a file that validates."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner, Result

from kubetide.cli import main
from kubetide.commands import scenario as command
from kubetide.sim.scenario import load_scenario

from .export_fixtures import recorded_cluster

KUBECONFIG = """apiVersion: v1
kind: Config
clusters:
- cluster: {server: "https://127.0.0.1:1", insecure-skip-tls-verify: true}
  name: nowhere
contexts:
- context: {cluster: nowhere, user: admin}
  name: nowhere
current-context: nowhere
users:
- name: admin
  user: {token: abc}
"""


def run(*args: str) -> Result:
    return CliRunner().invoke(main, ["scenario", "from-cluster", *args])


@pytest.fixture
def recorded(monkeypatch: pytest.MonkeyPatch) -> None:
    """The command reads the recorded cluster instead of a server."""
    monkeypatch.setattr(command, "make_client", lambda kubeconfig: object())
    monkeypatch.setattr(command, "read_cluster", lambda client: recorded_cluster())


def test_a_missing_kubeconfig_is_one_line_and_exit_1(tmp_path: Path) -> None:
    result = run("--kubeconfig", str(tmp_path / "none"))
    assert result.exit_code == 1
    assert result.stderr.count("\n") == 1 and "no such file" in result.stderr
    assert "Traceback" not in result.output + result.stderr


@pytest.mark.parametrize("text", ["garbage: [", "foo: 1", "- a list", "clusters: 3"])
def test_a_malformed_kubeconfig_is_one_line_and_exit_1(tmp_path: Path, text: str) -> None:
    config = tmp_path / "kubeconfig"
    config.write_text(text)
    result = run("--kubeconfig", str(config))
    assert result.exit_code == 1, result.exception
    assert result.stderr.startswith("kubetide scenario from-cluster: cannot use the cluster configuration")
    assert result.stderr.count("\n") == 1


def test_an_unreachable_server_is_one_line_and_exit_1(tmp_path: Path) -> None:
    config = tmp_path / "kubeconfig"
    config.write_text(KUBECONFIG)
    result = run("--kubeconfig", str(config))
    assert result.exit_code == 1, result.output
    assert result.stderr.startswith("kubetide scenario from-cluster: cannot reach the API server")
    assert result.stderr.count("\n") == 1 and not isinstance(result.exception, AssertionError)


@pytest.mark.parametrize(
    "args",
    [
        ("--nodes", "3:general"),
        ("--nodes", "5:2:general"),
        ("--duration", "forever"),
        ("--name", "my/cluster"),
        ("--unknown",),
    ],
)
def test_bad_flags_exit_2(args: tuple[str, ...]) -> None:
    assert run(*args).exit_code == 2


def test_an_unknown_group_in_nodes_exits_2_naming_it(recorded: None) -> None:
    result = run("--nodes", "1:5:spot")
    assert result.exit_code == 2
    assert "'spot'" in result.stderr and "general" in result.stderr


def test_the_written_file_validates_with_notes_on_stderr(recorded: None, tmp_path: Path) -> None:
    out = tmp_path / "shop.yaml"
    result = run("--output", str(out), "--name", "shop", "--duration", "2h", "--nodes", "1:6:general")
    assert result.exit_code == 0, result.stderr
    assert result.stdout == ""
    scenario = load_scenario(out)
    assert scenario.name == "shop" and scenario.spec.duration == 7200
    general = scenario.node_group("general")
    assert (general.minSize, general.maxSize, general.initialSize) == (1, 6, 2)
    notes = [line for line in result.stderr.splitlines() if line.startswith("note: ")]
    assert any("assumed: batch 0..10, custom.big-zone-b 0..10." in n for n in notes)
    assert result.stderr.splitlines()[-1].endswith("3 node group(s), 11 object(s)")


def test_stdout_gets_only_the_yaml(recorded: None) -> None:
    result = run("--namespace", "shop")
    assert result.exit_code == 0
    document: dict[str, Any] = yaml.safe_load(result.stdout)
    assert document["kind"] == "Scenario" and document["metadata"]["name"] == "cluster"
    assert document["spec"]["duration"] == "24h"


KWOK = """nodeGroups:
  - name: general
    minSize: 1
    maxSize: 6
    template: {status: {allocatable: {cpu: "2", memory: 8Gi, pods: "110"}}}
  - name: spare
    minSize: 0
    maxSize: 2
    template: {status: {allocatable: {cpu: "4", memory: 16Gi, pods: "110"}}}
"""


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--cloud-config", "x.yaml"), "--cloud-config: only with --cloud-provider"),
        (("--cloud-provider", "kwok"), "--cloud-config: the kwok provider needs its node groups file"),
        (
            ("--cloud-provider", "kwok", "--cloud-config", "missing.yaml"),
            "--cloud-config: cannot read missing.yaml",
        ),
    ],
)
def test_provider_flags_are_checked_exit_2(recorded: None, args: tuple[str, ...], message: str) -> None:
    result = run(*args)
    assert result.exit_code == 2 and message in result.stderr, result.stderr


def test_the_kwok_providers_groups_and_bounds_are_written(recorded: None, tmp_path: Path) -> None:
    """The recorded cluster's nodes belong to no kwok group: they stay as fixed groups; the kwok groups
    come with their bounds, the one named by --nodes with the flag's (as CA's --nodes)."""
    config = tmp_path / "cloud.yaml"
    config.write_text(KWOK)
    out = tmp_path / "kwok.yaml"
    result = run(
        "--cloud-provider", "kwok", "--cloud-config", str(config), "--nodes", "0:3:spare", "-o", str(out)
    )
    assert result.exit_code == 0, result.stderr
    groups = {g.name: g for g in load_scenario(out).spec.nodeGroups}
    assert (groups["spare"].minSize, groups["spare"].maxSize, groups["spare"].initialSize) == (0, 3, 0)
    # --nodes chose the kwok groups, as CA's --nodes does: the recorded EKS nodes of "general" are in
    # no kwok group, so they stay as they are.
    assert (groups["general"].minSize, groups["general"].maxSize, groups["general"].initialSize) == (2, 2, 2)
    assert "kept at that size: no autoscaler changes them" in result.stderr
