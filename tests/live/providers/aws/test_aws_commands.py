"""The commands on the aws provider as a user runs them (the installed ``kubetide`` binary), against moto's
server behind the fault proxy: what a mistake at start prints and how they exit, and that the highest
verbosity writes no secret.

The API server they are given does not answer (a closed loopback port): each check here happens before,
or while, the command waits for it. The end-to-end tier (tests/e2e/test_aws_config.py) runs the same
commands against the real control plane.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import yaml

from .conftest import REGION, AwsProxy

KUBETIDE = str(Path(sys.executable).parent / "kubetide")
SECRETS = {
    "AWS_ACCESS_KEY_ID": "AKIAZZSECRETKEYID4242",
    "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYSECRETKEY42",
    "AWS_SESSION_TOKEN": "IQoJb3JpZ2luX2VjSESSIONTOKENSECRET4242xyz",
}
KUBE_TOKEN = "kube-token-SECRET-0123456789abcdef"
ESCALATOR_GROUP = {
    "name": "batch",
    "label_key": "pool",
    "label_value": "batch",
    "cloud_provider_group_name": "no-such-asg",
    "min_nodes": 0,
    "max_nodes": 5,
    "taint_lower_capacity_threshold_percent": 30,
    "taint_upper_capacity_threshold_percent": 45,
    "scale_up_threshold_percent": 70,
    "slow_node_removal_rate": 1,
    "fast_node_removal_rate": 2,
    "soft_delete_grace_period": "1m",
    "hard_delete_grace_period": "10m",
    "scale_up_cool_down_period": "2m",
}


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def kubeconfig(tmp_path: Path) -> Path:
    """A kubeconfig with a token, for an API server that does not answer."""
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "c", "cluster": {"server": f"http://127.0.0.1:{_closed_port()}"}}],
        "users": [{"name": "u", "user": {"token": KUBE_TOKEN}}],
        "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}],
        "current-context": "c",
    }
    path = tmp_path / "kubeconfig"
    path.write_text(yaml.safe_dump(config))
    return path


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    return {**env, **SECRETS, "AWS_REGION": REGION, **extra}


class Run:
    """One kubetide process; ``until`` waits for a line of its output (with a deadline) or its exit."""

    def __init__(self, argv: list[str], env: dict[str, str]) -> None:
        self.log = tempfile.TemporaryFile(mode="w+")  # noqa: SIM115  (written by the process until stop)
        self.final: str | None = None
        self.proc = subprocess.Popen(
            [KUBETIDE, *argv], stdout=self.log, stderr=subprocess.STDOUT, env=env, start_new_session=True
        )

    def output(self) -> str:
        if self.final is not None:
            return self.final
        self.log.flush()
        self.log.seek(0)
        return self.log.read()

    def until(self, pattern: str, timeout: float = 60.0) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            text = self.output()
            if re.search(pattern, text) or self.proc.poll() is not None:
                return text
            threading.Event().wait(0.2)
        raise AssertionError(f"no {pattern!r} within {timeout}s:\n{self.output()}")

    def stop(self) -> str:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, 15)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, 9)
                self.proc.wait(10)
        if self.final is None:
            self.final = self.output()
            self.log.close()
        return self.final


@pytest.fixture
def run() -> Iterator[Callable[..., Run]]:
    started: list[Run] = []

    def start(*argv: str, **env: str) -> Run:
        r = Run(list(argv), _env(**env))
        started.append(r)
        return r

    yield start
    for r in started:
        r.stop()


def _exited(r: Run, timeout: float = 60.0) -> tuple[int, str]:
    code = r.proc.wait(timeout)
    out = r.output()
    assert "Traceback" not in out, out
    return code, out


# --- mistakes at start


def test_a_mistyped_nodes_group_exits_2_with_once(
    run: Callable[..., Run], proxy: AwsProxy, kubeconfig: Path, make_group: Callable[..., str]
) -> None:
    real = make_group()
    code, out = _exited(
        run(
            "run",
            "cluster-autoscaler",
            "--cloud-provider=aws",
            f"--aws-endpoint-url={proxy.url}",
            f"--nodes=0:3:{real}",
            "--nodes=0:3:no-such-asg",
            f"--kubeconfig={kubeconfig}",
            "--once",
        )
    )
    assert code == 2
    assert (
        f"  --nodes: ASG no-such-asg does not exist in AWS region {REGION} (DescribeAutoScalingGroups "
        "does not list it): check the name and the region" in out
    )
    assert real not in out
    assert proxy.seen["DescribeAutoScalingGroups"] == 1  # one call checked both


def test_a_mistyped_nodes_group_while_running_is_an_error_line_not_an_exit(
    run: Callable[..., Run], proxy: AwsProxy, kubeconfig: Path
) -> None:
    r = run(
        "run",
        "cluster-autoscaler",
        "--cloud-provider=aws",
        f"--aws-endpoint-url={proxy.url}",
        "--nodes=0:3:no-such-asg",
        f"--kubeconfig={kubeconfig}",
        "--address=127.0.0.1:0",
    )
    out = r.until("cannot discover the API")
    assert r.proc.poll() is None, out  # still running: the ASG may yet be created
    assert re.search(r" E cluster-autoscaler \S+: ASG no-such-asg does not exist in AWS region", out), out


def test_escalator_refuses_to_start_on_a_missing_group_as_escalator_does(
    run: Callable[..., Run], proxy: AwsProxy, kubeconfig: Path, tmp_path: Path
) -> None:
    # Escalator's start-up fails when a configured cloud_provider_group_name does not exist
    # (spec/escalator.md §1), so without --once too.
    groups = tmp_path / "nodegroups.yaml"
    groups.write_text(yaml.safe_dump({"node_groups": [ESCALATOR_GROUP]}))
    code, out = _exited(
        run(
            "run",
            "escalator",
            f"--nodegroups={groups}",
            f"--aws-endpoint-url={proxy.url}",
            f"--kubeconfig={kubeconfig}",
        )
    )
    assert code == 2
    assert (
        f"--nodegroups {groups}: node_groups[0].cloud_provider_group_name: ASG no-such-asg does not exist "
        f"in AWS region {REGION}" in out
    )


@pytest.mark.parametrize(
    ("setup", "expected"),
    [
        ("no-credentials", "--cloud-provider=aws: no usable AWS credentials (looked in the environment"),
        ("unreachable", "--cloud-provider=aws: cannot reach the AWS endpoint http://127.0.0.1:"),
        ("garbage", "--cloud-provider=aws: the endpoint http://127.0.0.1:"),
        ("bad-region", "--aws-region: invalid AWS region 'us east 1'"),
    ],
)
def test_a_cloud_that_cannot_be_used_at_start_is_one_line_and_exit_2(
    run: Callable[..., Run], proxy: AwsProxy, kubeconfig: Path, setup: str, expected: str
) -> None:
    endpoint, env = proxy.url, {}
    region = REGION
    if setup == "no-credentials":
        env = {
            "AWS_ACCESS_KEY_ID": "",
            "AWS_SECRET_ACCESS_KEY": "",
            "AWS_SESSION_TOKEN": "",
            "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent/credentials",
            "AWS_CONFIG_FILE": "/nonexistent/config",
            "AWS_EC2_METADATA_DISABLED": "true",
        }
    elif setup == "unreachable":
        endpoint = f"http://127.0.0.1:{_closed_port()}"
    elif setup == "garbage":
        proxy.garbage["DescribeAutoScalingGroups"] = 10
    else:
        region = "us east 1"
    for once in ("--once", "--leader-elect=false"):  # at start, as CA's BuildAWS: exit either way
        code, out = _exited(
            run(
                "run",
                "cluster-autoscaler",
                "--cloud-provider=aws",
                f"--aws-endpoint-url={endpoint}",
                f"--aws-region={region}",
                "--nodes=0:3:g",
                f"--kubeconfig={kubeconfig}",
                once,
                "--address=127.0.0.1:0",
                **env,
            )
        )
        assert code == 2, out
        (line,) = [line for line in out.splitlines() if line.startswith("  --")]
        assert line.startswith(f"  {expected}"), out


def test_an_auto_discovery_that_finds_nothing_is_a_warning_with_the_tags(
    run: Callable[..., Run], proxy: AwsProxy, kubeconfig: Path
) -> None:
    cluster = uuid.uuid4().hex[:6]
    r = run(
        "run",
        "cluster-autoscaler",
        "--cloud-provider=aws",
        f"--aws-endpoint-url={proxy.url}",
        f"--node-group-auto-discovery=asg:tag=k8s.io/cluster-autoscaler/enabled,k8s.io/cluster-autoscaler/{cluster}",
        f"--kubeconfig={kubeconfig}",
        "--once",
    )
    out = r.until("auto-discovery found no ASG")
    tags = ", ".join(sorted([f"k8s.io/cluster-autoscaler/{cluster}", "k8s.io/cluster-autoscaler/enabled"]))
    assert (
        f"auto-discovery found no ASG in AWS region {REGION} with the tags {tags}: check the tags and the region"
        in out
    ), out


def test_node_agent_names_a_missing_group(run: Callable[..., Run], proxy: AwsProxy, kubeconfig: Path) -> None:
    code, out = _exited(
        run(
            "node-agent",
            f"--kubeconfig={kubeconfig}",
            "--address=127.0.0.1:0",
            f"--aws-endpoint-url={proxy.url}",
            "--aws-group=no-such-asg",
        )
    )
    assert code == 2
    assert f"error: --aws-group: ASG no-such-asg does not exist in AWS region {REGION}" in out


# --- no secret at the highest verbosity


def _assert_no_secret(out: str) -> None:
    for name, value in [*SECRETS.items(), ("kubeconfig token", KUBE_TOKEN)]:
        assert value not in out, f"{name} in the output:\n{out}"


def test_the_highest_verbosity_writes_no_secret(
    run: Callable[..., Run], proxy: AwsProxy, kubeconfig: Path, make_group: Callable[..., str], tmp_path: Path
) -> None:
    group = make_group(desired=1)
    loud = ("--v=10", "--library-log-level=debug")
    groups = tmp_path / "nodegroups.yaml"
    groups.write_text(
        yaml.safe_dump({"node_groups": [{**ESCALATOR_GROUP, "cloud_provider_group_name": group}]})
    )
    runs = {
        "cluster-autoscaler": run(
            "run",
            "cluster-autoscaler",
            "--cloud-provider=aws",
            f"--aws-endpoint-url={proxy.url}",
            f"--nodes=0:3:{group}",
            f"--kubeconfig={kubeconfig}",
            "--address=127.0.0.1:0",
            *loud,
        ),
        "escalator": run(
            "run",
            "escalator",
            f"--nodegroups={groups}",
            f"--aws-endpoint-url={proxy.url}",
            f"--kubeconfig={kubeconfig}",
            "--address=127.0.0.1:0",
            "-v=5",
            "--library-log-level=debug",
        ),
        "hpa": run("run", "hpa", f"--kubeconfig={kubeconfig}", "--address=127.0.0.1:0", *loud),
        "node-agent": run(
            "node-agent",
            f"--kubeconfig={kubeconfig}",
            "--address=127.0.0.1:0",
            f"--aws-endpoint-url={proxy.url}",
            f"--aws-group={group}",
            *loud,
        ),
    }
    waits = {
        "cluster-autoscaler": "cannot discover the API",
        "escalator": "cannot discover the API",
        "hpa": "cannot discover the API",
        "node-agent": "Sending http request",
    }
    for name, r in runs.items():
        out = r.until(waits[name])
        assert r.proc.poll() is None, f"{name} exited:\n{out}"
        out = r.stop()
        # The libraries did log at debug, the signed AWS requests too (else this proves nothing) ...
        assert re.search(r" (D|DEBUG) .*(httpcore|httpx)", out), f"{name}: no library debug line:\n{out}"
        if name != "hpa":
            assert "botocore.auth" in out and "x-amz-security-token:" in out, f"{name}:\n{out}"
        # ... and no secret reached the output.
        _assert_no_secret(out)
    one_shots = [
        ("hpa", "explain", "--cluster", f"--kubeconfig={kubeconfig}", "--hpa=default/web"),
        ("scenario", "from-cluster", f"--kubeconfig={kubeconfig}"),
    ]
    for argv in one_shots:
        code, out = _exited(run(*argv))
        assert code == 1, out  # the API server does not answer: one line, exit 1
        _assert_no_secret(out)
