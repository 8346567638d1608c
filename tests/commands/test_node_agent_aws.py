"""`kubetide node-agent --cloud-provider=aws`: bad flags named, exit 2, before anything runs."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from kubetide.cli import main

KUBECONFIG = {
    "apiVersion": "v1",
    "kind": "Config",
    "clusters": [{"name": "c", "cluster": {"server": "https://127.0.0.1:1"}}],
    "users": [{"name": "u", "user": {"token": "t"}}],
    "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
    "current-context": "x",
}


def run(tmp_path: Path, *args: str) -> tuple[int, str]:
    path = tmp_path / "kubeconfig"
    path.write_text(yaml.safe_dump(KUBECONFIG))
    result = CliRunner().invoke(main, ["node-agent", f"--kubeconfig={path}", "--address=127.0.0.1:0", *args])
    assert "Traceback" not in result.output + result.stderr
    return result.exit_code, result.stderr


def test_aws_without_a_test_endpoint_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)
    code, err = run(tmp_path, "--cloud-provider=aws", "--aws-group=g")
    assert code == 2
    assert "--cloud-provider=aws: the node agent registers instances of a test endpoint only" in err


def test_aws_flags_are_checked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AWS_REGION", raising=False)
    monkeypatch.delenv("AWS_DEFAULT_REGION", raising=False)
    code, err = run(tmp_path, "--aws-endpoint-url=http://127.0.0.1:1", "--node-group-auto-discovery=asg:nope")
    assert code == 2
    assert "--node-group-auto-discovery: 'asg:nope': must be asg:tag=KEY[=VALUE],..." in err
    assert "--aws-region: no AWS region" in err


def test_the_endpoint_in_the_environment_with_groups_means_aws(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # As the README's moto walkthrough runs it: $AWS_ENDPOINT_URL exported, no --aws-endpoint-url.
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:1")
    monkeypatch.delenv("AWS_REGION", raising=False)
    monkeypatch.delenv("AWS_DEFAULT_REGION", raising=False)
    code, err = run(tmp_path, "--aws-group=g")
    assert code == 2 and "--aws-region: no AWS region" in err  # the aws registrar was built
