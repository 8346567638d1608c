"""The aws provider as an EKS team runs it, against the real control plane and moto's ASGs (issue 29).

- Every command at its highest verbosity, libraries at debug too, with AWS credentials in the
  environment and real ServiceAccount tokens in the kubeconfigs: no secret in any output.
- A group named on the command line that AWS does not have: the process runs on, says so in one log
  line, and the status ConfigMap shows the group Unhealthy with the reason (an Event and a gauge too)
  until the ASG exists; the node agent's own label on the Nodes it registers is no template mismatch.
- A dry run's Events say what would have been done.

moto's server and the fault proxy run in the test (tests/live/providers/aws/awsproxy.py), as in test_aws.py.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import boto3
import pytest
import yaml
from moto.server import ThreadedMotoServer

from live.providers.aws.awsproxy import AwsProxy

from .support import Kubectl, KubetideProcess, free_port
from .test_cluster_autoscaler import CA_NAMESPACE, FAST, deployment

REGION = "us-east-1"
SECRETS = {
    "AWS_ACCESS_KEY_ID": "AKIAZZE2ESECRETKEY424",
    "AWS_SECRET_ACCESS_KEY": "e2eSecretAccessKey/K7MDENG/bPxRfiCYEXAMPLE42",
    "AWS_SESSION_TOKEN": "IQoJb3JpZ2luX2VjE2ESESSIONTOKEN4242forIRSAexample",
}
KUBETIDE = str(Path(sys.executable).parent / "kubetide")
LOUD = ("--v=10", "--library-log-level=debug")


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[AwsProxy, Any, str]]:
    """moto behind the proxy, the environment's credentials secret-looking (moto takes any), and boto3's
    Auto Scaling client and launch template for the test's own setup."""
    for key, value in SECRETS.items():
        monkeypatch.setenv(key, value)  # inherited by the kubetide processes
    monkeypatch.setenv("AWS_REGION", REGION)
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    proxy = AwsProxy(server.get_host_and_port())
    session = boto3.session.Session()
    ec2 = session.client("ec2", endpoint_url=proxy.url, region_name=REGION)
    # moto's state is the process's, shared by the servers of every test: names must be unique.
    template = f"lt-e2e-{uuid.uuid4().hex[:6]}"
    ec2.create_launch_template(
        LaunchTemplateName=template,
        LaunchTemplateData={"InstanceType": "m5.large", "ImageId": "ami-12c6146b"},
    )
    try:
        yield proxy, session.client("autoscaling", endpoint_url=proxy.url, region_name=REGION), template
    finally:
        proxy.close()
        server.stop()


def _asg(aws: tuple[AwsProxy, Any, str], name: str, pool: str, desired: int = 0, min_size: int = 0) -> str:
    _, autoscaling, template = aws
    tag = {
        "Key": "k8s.io/cluster-autoscaler/node-template/label/pool",
        "Value": pool,
        "PropagateAtLaunch": False,
    }
    autoscaling.create_auto_scaling_group(
        AutoScalingGroupName=name,
        MinSize=min_size,
        MaxSize=3,
        DesiredCapacity=desired,
        LaunchTemplate={"LaunchTemplateName": template, "Version": "$Latest"},
        AvailabilityZones=["us-east-1a"],
        Tags=[{**tag, "ResourceId": name, "ResourceType": "auto-scaling-group"}],
    )
    return name


@pytest.fixture
def node_agent(kubeconfig_path: Path) -> Iterator[Callable[..., KubetideProcess]]:
    """A second ``kubetide node-agent`` that only registers Nodes for moto's instances: its
    ``--node-selector`` matches nothing, as the cluster's own agent runs every kubetide.io/node-group node."""
    started: list[KubetideProcess] = []
    logs = kubeconfig_path.parent / "logs"

    def start(*args: str, name: str = "aws-agent") -> KubetideProcess:
        port = free_port()
        argv = [
            KUBETIDE, "node-agent", f"--kubeconfig={kubeconfig_path}", f"--address=127.0.0.1:{port}",
            "--node-selector=kubetide.io/none-of-these", *args,
        ]  # fmt: skip
        proc = KubetideProcess(
            f"{name}-{len(started)}", argv, logs / f"test-{name}-{uuid.uuid4().hex[:4]}.log", port
        )
        started.append(proc)
        return proc

    yield start
    for proc in started:
        proc.stop()


def _no_secret(text: str, secrets: dict[str, str]) -> None:
    for name, value in secrets.items():
        assert value not in text, f"{name} found in the output"


def test_no_command_writes_a_secret_at_its_highest_verbosity(
    kubectl: Kubectl,
    kubeconfig_path: Path,
    e2e_env: dict[str, str],
    kubetide: Callable[..., KubetideProcess],
    node_agent: Callable[..., KubetideProcess],
    service_accounts: dict[str, Path],
    wait_for: Callable[..., Any],
    namespace: str,
    tmp_path: Path,
    aws: tuple[AwsProxy, Any, str],
) -> None:
    proxy = aws[0]
    pool = f"sec-{uuid.uuid4().hex[:5]}"
    group = _asg(aws, f"grp-{pool}", pool, desired=1)
    tokens = {
        f"token of {name}": yaml.safe_load(path.read_text())["users"][0]["user"]["token"]
        for name, path in service_accounts.items()
    }
    secrets = {**SECRETS, **tokens, "admin token": e2e_env["KUBE_ADMIN_TOKEN"]}
    endpoint = f"--aws-endpoint-url={proxy.url}"
    nodegroups = tmp_path / "nodegroups.yaml"
    nodegroups.write_text(
        yaml.safe_dump(
            {
                "node_groups": [
                    {
                        "name": pool,
                        "label_key": "pool",
                        "label_value": pool,
                        "cloud_provider_group_name": group,
                        "min_nodes": 0,
                        "max_nodes": 3,
                        "taint_lower_capacity_threshold_percent": 30,
                        "taint_upper_capacity_threshold_percent": 45,
                        "scale_up_threshold_percent": 70,
                        "slow_node_removal_rate": 1,
                        "fast_node_removal_rate": 2,
                        "soft_delete_grace_period": "1m",
                        "hard_delete_grace_period": "10m",
                        "scale_up_cool_down_period": "2m",
                    }
                ]
            }
        )
    )
    try:
        agent = node_agent(endpoint, f"--aws-region={REGION}", f"--aws-group={group}", *LOUD)
        ca = kubetide(
            "cluster-autoscaler", "--cloud-provider=aws", endpoint, f"--nodes=0:3:{group}",
            "--leader-elect=false", *FAST, *LOUD, kubeconfig=service_accounts["cluster-autoscaler"],
        )  # fmt: skip
        hpa = kubetide("hpa", "--leader-elect=false", *LOUD, kubeconfig=service_accounts["hpa"])
        escalator = kubetide(
            "escalator", f"--nodegroups={nodegroups}", endpoint, "--scaninterval=2s", "-v=5",
            "--library-log-level=debug", "--leader-elect=false", "--leader-elect-config-namespace=kubetide",
            kubeconfig=service_accounts["escalator"],
        )  # fmt: skip
        # Each has done its work: signed AWS calls, API calls with its token, a loop.
        wait_for(lambda: "registered Node" in agent.log(), 60, message="the agent registering the instance")
        wait_for(lambda: "loop: scale-up" in ca.log(), 60, message="a CA loop")
        wait_for(lambda: "caches synced" in hpa.log(), 60, message="the HPA's caches")
        wait_for(lambda: f"nodegroup={pool}" in escalator.log(), 60, message="an escalator loop")
        one_shots = [
            subprocess.run(
                [KUBETIDE, "scenario", "from-cluster", f"--kubeconfig={kubeconfig_path}", "-n", namespace],
                capture_output=True, text=True, timeout=120, env={**os.environ},
            ),
            subprocess.run(
                [KUBETIDE, "hpa", "explain", "--cluster", f"--kubeconfig={service_accounts['hpa']}",
                 f"--hpa={namespace}/none", f"--prometheus-url={e2e_env['PROMETHEUS_URL']}"],
                capture_output=True, text=True, timeout=120, env={**os.environ},
            ),
        ]  # fmt: skip
    finally:
        kubectl("delete", "nodes", "-l", f"pool={pool}", "--wait=false")
    assert one_shots[0].returncode == 0, one_shots[0].stderr
    assert one_shots[1].returncode == 1 and "cannot read HPA" in one_shots[1].stderr, one_shots[1].stderr
    for proc in (agent, ca, hpa, escalator):
        text = proc.log()
        proc.stop()
        assert "Traceback" not in text, text
        # The libraries logged at debug, so the redaction was put to work ...
        assert re.search(r"httpcore2?\.", text), f"{proc.name}: no library debug line"
        if proc is not hpa:
            assert "botocore.auth" in text and "x-amz-security-token:[REDACTED]" in text, proc.name
        # ... and nothing secret got through.
        _no_secret(text, secrets)
    for done in one_shots:
        _no_secret(done.stdout + done.stderr, secrets)


def test_a_group_aws_lacks_is_unhealthy_in_the_status_until_it_exists(
    kubectl: Kubectl,
    kubetide: Callable[..., KubetideProcess],
    node_agent: Callable[..., KubetideProcess],
    service_accounts: dict[str, Path],
    wait_for: Callable[..., Any],
    aws: tuple[AwsProxy, Any, str],
) -> None:
    proxy = aws[0]
    pool = f"miss-{uuid.uuid4().hex[:5]}"
    real = _asg(aws, f"real-{pool}", pool, desired=1, min_size=1)  # its node stays: it is the template
    typo = f"no-such-{pool}"
    status_name = f"ca-status-{pool}"
    agent = node_agent(f"--aws-endpoint-url={proxy.url}", f"--aws-region={REGION}", f"--aws-group={real}")
    try:
        ca = kubetide(
            "cluster-autoscaler", "--cloud-provider=aws", f"--aws-endpoint-url={proxy.url}",
            f"--nodes=1:3:{real}", f"--nodes=0:3:{typo}", f"--status-config-map-name={status_name}",
            "--leader-elect=false", *FAST, kubeconfig=service_accounts["cluster-autoscaler"],
        )  # fmt: skip

        def status() -> dict[str, Any]:
            cm = kubectl.json("-n", CA_NAMESPACE, "get", "configmap", status_name)
            return dict(yaml.safe_load(cm["data"]["status"]))

        def group_health(name: str) -> str:
            return str(next(g["health"]["status"] for g in status()["nodeGroups"] if g["name"] == name))

        wait_for(lambda: group_health(typo) == "Unhealthy", 60, message="the missing group Unhealthy")
        current = status()
        assert current["message"].startswith(f"ASG {typo} does not exist in AWS region {REGION}"), current
        assert group_health(real) == "Healthy"
        assert ca.alive(), ca.log()
        lines = [line for line in ca.log().splitlines() if f"ASG {typo} does not exist" in line]
        assert len(lines) == 1 and " E cluster-autoscaler " in lines[0], ca.log()  # once, not each loop
        assert ca.metric("kubetide_aws_node_group_missing", node_group=typo) == 1.0
        events = kubectl.json(
            "-n", CA_NAMESPACE, "get", "events", "--field-selector", f"involvedObject.name={status_name}"
        )["items"]
        assert any(e["reason"] == "NodeGroupNotFound" and typo in e["message"] for e in events), events

        # The node agent's kubetide.io/node-group label is kubetide's own, not a template mismatch: once
        # the Node is stable (CA's 60 s before a real node serves as the template), a loop compares them.
        node = wait_for(
            lambda: kubectl.json("get", "nodes", "-l", f"pool={pool}")["items"],
            60,
            message="the instance's Node",
        )[0]
        created = datetime.fromisoformat(node["metadata"]["creationTimestamp"].replace("Z", "+00:00"))
        loops_after = ca.log().count("loop: scale-up")
        wait_for(
            lambda: (
                (datetime.now(UTC) - created).total_seconds() > 65
                and ca.log().count("loop: scale-up") > loops_after + 2
            ),
            120,
            interval=2,
            message="loops after the Node became a template",
        )
        assert kubectl.json("get", "nodes", "-l", f"pool={pool}")["items"], "the Node went: nothing compared"
        assert "NodeTemplateMismatch" not in ca.log(), ca.log()

        # The ASG is created (Terraform was late): Healthy, the message gone.
        _asg(aws, typo, pool)
        wait_for(lambda: group_health(typo) == "Healthy", 60, message="the group Healthy once it exists")
        assert "message" not in status()
        assert f"ASG {typo} exists now" in ca.log()
        assert ca.metric("kubetide_aws_node_group_missing", node_group=typo) is None
    finally:
        agent.stop()
        kubectl("delete", "nodes", "-l", f"pool={pool}", "--wait=false")
        kubectl("-n", CA_NAMESPACE, "delete", "configmap", status_name, "--ignore-not-found")


def test_a_dry_run_s_events_say_would(
    kubectl: Kubectl,
    kubetide: Callable[..., KubetideProcess],
    service_accounts: dict[str, Path],
    wait_for: Callable[..., Any],
    namespace: str,
    aws: tuple[AwsProxy, Any, str],
) -> None:
    proxy, autoscaling, _ = aws
    pool = f"dry-{uuid.uuid4().hex[:5]}"
    group = _asg(aws, f"grp-{pool}", pool)
    status_name = f"ca-status-{pool}"
    try:
        ca = kubetide(
            "cluster-autoscaler", "--cloud-provider=aws", f"--aws-endpoint-url={proxy.url}", f"--nodes=0:3:{group}",
            f"--status-config-map-name={status_name}", "--dry-run", "--leader-elect=false", *FAST,
            kubeconfig=service_accounts["cluster-autoscaler"],
        )  # fmt: skip
        kubectl.create(deployment("web", namespace, pool, replicas=1))

        def events(ns: str, name: str) -> list[dict[str, Any]]:
            items = kubectl.json("-n", ns, "get", "events", "--field-selector", f"involvedObject.name={name}")
            return list(items["items"])

        scaled = wait_for(
            lambda: [e for e in events(CA_NAMESPACE, status_name) if e["reason"] == "ScaledUpGroup"],
            60,
            message="the dry run's ScaledUpGroup Event",
        )
        assert (
            scaled[0]["message"]
            == f"Scale-up (dry run): would set group {group} size to 1 instead of 0 (max: 3)"
        )
        (pod,) = kubectl.json("-n", namespace, "get", "pods", "-l", "app=web")["items"]
        triggered = [
            e for e in events(namespace, pod["metadata"]["name"]) if e["reason"] == "TriggeredScaleUp"
        ]
        assert triggered and triggered[0]["message"].startswith("pod would trigger scale-up (dry run): ")
        (asg,) = autoscaling.describe_auto_scaling_groups(AutoScalingGroupNames=[group])["AutoScalingGroups"]
        assert asg["DesiredCapacity"] == 0 and proxy.seen["SetDesiredCapacity"] == 0, ca.log()
    finally:
        kubectl("-n", CA_NAMESPACE, "delete", "configmap", status_name, "--ignore-not-found")
