"""The cluster autoscaler with ``--cloud-provider=aws`` against the real control plane and moto's ASGs.

moto's server runs in this process behind the tests' fault proxy (tests/live/providers/aws/conftest.py); a
second ``kubetide node-agent --aws-endpoint-url`` registers a Node per moto instance (providerID as AWS
writes it) and the cluster's own node agent makes them Ready and runs their pods. Pending pods bring up
instances; a stockout the first group reports in its scaling activities fails over to the second group
within a loop; a scale-down terminates exactly the drained instance; and a drained instance is
terminated only once its evicted pod is gone (issue 23 item 2: it used to be 11 ms after the eviction).
"""

from __future__ import annotations

import contextlib
import re
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import boto3
import pytest
from moto.server import ThreadedMotoServer

from live.providers.aws.awsproxy import AwsProxy, activity

from .support import Kubectl, KubetideProcess, free_port
from .test_ca_drain_wait import graceful
from .test_ca_restart import tainted
from .test_cluster_autoscaler import CA_NAMESPACE, FAST, deployment, running_pods

REGION = "us-east-1"
INSUFFICIENT = (
    "We currently do not have sufficient m5.large capacity in the Availability Zone you requested "
    "(us-east-1a). Launching EC2 instance failed."
)


@pytest.fixture
def aws_proxy(monkeypatch: pytest.MonkeyPatch) -> Iterator[AwsProxy]:
    for key in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.setenv(key, "testing")  # inherited by the kubetide processes
    monkeypatch.setenv("AWS_REGION", REGION)
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    proxy = AwsProxy(server.get_host_and_port())
    try:
        yield proxy
    finally:
        proxy.close()
        server.stop()


def _groups(proxy: AwsProxy, cluster: str, pool: str) -> tuple[str, str, Any]:
    session = boto3.session.Session(aws_access_key_id="testing", aws_secret_access_key="testing")
    ec2 = session.client("ec2", endpoint_url=proxy.url, region_name=REGION)
    autoscaling = session.client("autoscaling", endpoint_url=proxy.url, region_name=REGION)
    ec2.create_launch_template(
        LaunchTemplateName=f"lt-{cluster}",
        LaunchTemplateData={"InstanceType": "m5.large", "ImageId": "ami-12c6146b"},
    )
    names = []
    for prefix in ("spot", "general"):
        name = f"{prefix}-{cluster}"
        tags = {
            "k8s.io/cluster-autoscaler/enabled": "true",
            f"k8s.io/cluster-autoscaler/{cluster}": "owned",
            "k8s.io/cluster-autoscaler/node-template/label/pool": pool,
        }
        autoscaling.create_auto_scaling_group(
            AutoScalingGroupName=name,
            MinSize=0,
            MaxSize=3,
            DesiredCapacity=0,
            LaunchTemplate={"LaunchTemplateName": f"lt-{cluster}", "Version": "$Latest"},
            AvailabilityZones=["us-east-1a"],
            Tags=[
                {"Key": k, "Value": v, "PropagateAtLaunch": False, "ResourceId": name}
                for k, v in tags.items()
            ],
        )
        names.append(name)
    return names[0], names[1], autoscaling


def _instances(autoscaling: Any, name: str) -> list[str]:
    (group,) = autoscaling.describe_auto_scaling_groups(AutoScalingGroupNames=[name])["AutoScalingGroups"]
    return [i["InstanceId"] for i in group["Instances"]]


@contextlib.contextmanager
def _node_registrar(kubeconfig_path: Path, proxy: AwsProxy, discovery: str, cluster: str) -> Iterator[None]:
    """A ``kubetide node-agent`` that registers a Node per moto instance (Nodes only: the cluster's own
    node agent already runs every kubetide.io/node-group node)."""
    logs = kubeconfig_path.parent / "logs"
    agent_log = (logs / f"test-aws-agent-{cluster}.log").open("w")
    agent = subprocess.Popen(
        [
            str(Path(sys.executable).parent / "kubetide"),
            "node-agent",
            f"--kubeconfig={kubeconfig_path}",
            f"--address=127.0.0.1:{free_port()}",
            "--node-selector=kubetide.io/none-of-these",
            f"--aws-endpoint-url={proxy.url}",
            f"--aws-region={REGION}",
            discovery,
        ],
        stdout=agent_log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        yield
    finally:
        agent.terminate()
        agent.wait(20)
        agent_log.close()


def _discovery(cluster: str) -> str:
    return (
        "--node-group-auto-discovery=asg:tag=k8s.io/cluster-autoscaler/enabled,"
        f"k8s.io/cluster-autoscaler/{cluster}"
    )


def test_aws_scale_up_fails_over_on_a_stockout_and_scale_down_terminates_the_drained_instance(
    kubectl: Kubectl,
    kubeconfig_path: Path,
    kubetide: Callable[..., KubetideProcess],
    service_accounts: dict[str, Path],
    wait_for: Callable[..., Any],
    namespace: str,
    aws_proxy: AwsProxy,
) -> None:
    cluster = uuid.uuid4().hex[:6]
    pool = f"aws-{cluster}"
    spot, general, autoscaling = _groups(aws_proxy, cluster, pool)
    aws_proxy.stocked_out[spot] = None  # the spot group accepts its desired capacity, launches nothing
    discovery = _discovery(cluster)
    priorities = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "cluster-autoscaler-priority-expander", "namespace": CA_NAMESPACE},
        "data": {"priorities": "10:\n  - ^spot-.*\n1:\n  - .*\n"},
    }
    kubectl(
        "-n",
        CA_NAMESPACE,
        "delete",
        "configmap",
        "cluster-autoscaler-priority-expander",
        "--ignore-not-found",
    )
    kubectl.create(priorities)
    try:
        with _node_registrar(kubeconfig_path, aws_proxy, discovery, cluster):
            ca = kubetide(
                "cluster-autoscaler",
                "--cloud-provider=aws",
                f"--aws-endpoint-url={aws_proxy.url}",
                discovery,
                "--expander=priority,least-waste",
                "--leader-elect=false",
                *FAST,
                kubeconfig=service_accounts["cluster-autoscaler"],
            )
            kubectl.create(deployment("web", namespace, pool, replicas=1))
            wait_for(
                lambda: aws_proxy.stocked_out.get(spot) == 1,
                60,
                message="CA asking the spot group for a node",
            )
            # AWS reports the stockout; within a loop CA backs the group off and scales the next one.
            aws_proxy.activities[spot] = [
                activity("Failed", INSUFFICIENT, datetime.now(UTC) + timedelta(seconds=1))
            ]
            wait_for(
                lambda: len(_instances(autoscaling, general)) == 1,
                30,
                message="an instance of the general group",
            )
            assert aws_proxy.stocked_out[spot] == 0, ca.log()
            # The backoff's Event prints a duration, as CA prints times, not epoch seconds (1.79582e+09s).
            # It is logged when the loop that scaled the general group ends, after that instance shows.
            backoff = rf"NodeGroupBackoff NodeGroup/{spot}: node group {spot} backed off for \d+m\d+s"
            wait_for(lambda: re.search(backoff, ca.log()), 30, message="the backoff Event, with a duration")
            (instance,) = _instances(autoscaling, general)
            wait_for(
                lambda: len(running_pods(kubectl, namespace, "web")) == 1, 120, message="the web pod running"
            )
            (running,) = running_pods(kubectl, namespace, "web")
            node = kubectl.json("get", "node", running["spec"]["nodeName"])
            assert node["spec"]["providerID"] == f"aws:///us-east-1a/{instance}"

            # The pod goes: its node is empty, unneeded, and CA terminates exactly that instance.
            kubectl("-n", namespace, "scale", "deployment", "web", "--replicas=0")
            wait_for(lambda: _instances(autoscaling, general) == [], 120, message="the instance terminated")
            terminated = [
                p["InstanceId"] for a, p in aws_proxy.requests if a == "TerminateInstanceInAutoScalingGroup"
            ]
            assert terminated == [instance]
            wait_for(
                lambda: not kubectl.json("get", "nodes", "-l", f"pool={pool}")["items"],
                60,
                message="its Node gone",
            )
            assert ca.alive(), ca.log()
    finally:
        kubectl("delete", "nodes", "-l", f"pool={pool}", "--wait=false")
        kubectl(
            "-n",
            CA_NAMESPACE,
            "delete",
            "configmap",
            "cluster-autoscaler-priority-expander",
            "--ignore-not-found",
        )


def test_aws_a_drained_instance_is_terminated_only_once_its_evicted_pod_is_gone(
    kubectl: Kubectl,
    kubeconfig_path: Path,
    kubetide: Callable[..., KubetideProcess],
    service_accounts: dict[str, Path],
    wait_for: Callable[..., Any],
    namespace: str,
    aws_proxy: AwsProxy,
) -> None:
    """The pods stop 12 s after their deletion (tests/e2e/test_ca_drain_wait.py's ``graceful``): CA
    evicts the drained node's pod and calls TerminateInstanceInAutoScalingGroup only after it is gone."""
    cluster = uuid.uuid4().hex[:6]
    pool = f"aws-{cluster}"
    spot, general, autoscaling = _groups(aws_proxy, cluster, pool)
    discovery = _discovery(cluster)

    def terminations() -> list[str]:
        return [p["InstanceId"] for a, p in aws_proxy.requests if a == "TerminateInstanceInAutoScalingGroup"]

    def pool_nodes() -> list[dict[str, Any]]:
        return list(kubectl.json("get", "nodes", "-l", f"pool={pool}")["items"])

    try:
        with _node_registrar(kubeconfig_path, aws_proxy, discovery, cluster):
            ca = kubetide(
                "cluster-autoscaler",
                "--cloud-provider=aws",
                f"--aws-endpoint-url={aws_proxy.url}",
                discovery,
                "--leader-elect=false",
                *FAST,
                kubeconfig=service_accounts["cluster-autoscaler"],
            )
            kubectl.create(graceful(deployment("web", namespace, pool, replicas=2)))
            wait_for(lambda: len(running_pods(kubectl, namespace, "web")) == 2, 120, message="2 web pods")
            kubectl.create(graceful(deployment("extra", namespace, pool, replicas=1)))
            wait_for(lambda: len(running_pods(kubectl, namespace, "extra")) == 1, 120, message="extra pod")
            assert len(_instances(autoscaling, spot) + _instances(autoscaling, general)) == 2
            kubectl("-n", namespace, "scale", "deployment", "web", "--replicas=1")

            def evicted() -> dict[str, Any] | None:
                draining = {n["metadata"]["name"] for n in pool_nodes() if tainted(n)}
                for pod in kubectl.json("-n", namespace, "get", "pods")["items"]:
                    if pod["metadata"].get("deletionTimestamp") and pod["spec"].get("nodeName") in draining:
                        return dict(pod)
                return None

            pod = wait_for(evicted, 150, message="a pod evicted from a node CA tainted")
            node = kubectl.json("get", "node", pod["spec"]["nodeName"])
            instance = node["spec"]["providerID"].rsplit("/", 1)[-1]
            seen: list[list[str]] = []  # the terminations asked for while the evicted pod was still there

            def pod_gone() -> bool:
                name = pod["metadata"]["name"]
                if kubectl.json("-n", namespace, "get", "pod", name, "--ignore-not-found"):
                    seen.append(terminations())
                    return False
                return True

            wait_for(pod_gone, 60, message="the evicted pod gone")
            assert seen and all(t == [] for t in seen), seen
            wait_for(lambda: terminations() == [instance], 30, message="the drained instance terminated")
            wait_for(lambda: len(pool_nodes()) == 1, 60, message="its Node gone")
            assert ca.alive(), ca.log()
    finally:
        kubectl("delete", "nodes", "-l", f"pool={pool}", "--wait=false")


def test_aws_an_atomic_request_gets_an_instant_fleet_all_at_once_or_nothing(
    kubectl: Kubectl,
    kubeconfig_path: Path,
    kubetide: Callable[..., KubetideProcess],
    service_accounts: dict[str, Path],
    wait_for: Callable[..., Any],
    namespace: str,
    aws_proxy: AwsProxy,
) -> None:
    # Issue 27: a best-effort-atomic ProvisioningRequest on AWS. While EC2 cannot give the whole fleet
    # (MinTargetCapacity unmet: nothing launched) the request gets no instance and Provisioned=False;
    # once it can, one instant fleet brings both instances at once, attached to the group, and the
    # condition says which route was taken.
    cluster = uuid.uuid4().hex[:6]
    pool = f"aws-{cluster}"
    first, second, autoscaling = _groups(aws_proxy, cluster, pool)
    for name in (first, second):
        aws_proxy.fleet_capacity[name] = 0
    discovery = _discovery(cluster)
    template = {
        "apiVersion": "v1",
        "kind": "PodTemplate",
        "metadata": {"name": "batch", "namespace": namespace},
        "template": {
            "metadata": {"labels": {"app": "batch"}},
            "spec": {
                "nodeSelector": {"pool": pool},
                "containers": [
                    {"name": "main", "image": "nginx", "resources": {"requests": {"cpu": "1200m"}}}
                ],
            },
        },
    }
    request = {
        "apiVersion": "autoscaling.x-k8s.io/v1",
        "kind": "ProvisioningRequest",
        "metadata": {"name": "atomic", "namespace": namespace},
        "spec": {
            "provisioningClassName": "best-effort-atomic-scale-up.autoscaling.x-k8s.io",
            "podSets": [{"podTemplateRef": {"name": "batch"}, "count": 2}],
        },
    }

    def provisioned(status: str) -> dict[str, Any] | None:
        obj = kubectl.json("-n", namespace, "get", "provisioningrequest", "atomic")
        found = {c["type"]: c for c in (obj.get("status") or {}).get("conditions") or []}
        return found if found.get("Provisioned", {}).get("status") == status else None

    try:
        with _node_registrar(kubeconfig_path, aws_proxy, discovery, cluster):
            ca = kubetide(
                "cluster-autoscaler",
                "--cloud-provider=aws",
                f"--aws-endpoint-url={aws_proxy.url}",
                discovery,
                "--leader-elect=false",
                "--enable-provisioning-requests=true",
                "--provisioning-request-initial-backoff-time=2s",
                "--initial-node-group-backoff-duration=2s",
                *FAST,
                kubeconfig=service_accounts["cluster-autoscaler"],
            )
            kubectl.create(template)
            kubectl.create(request)
            found = wait_for(lambda: provisioned("False"), 60, message="Provisioned=False while EC2 has none")
            assert found["Provisioned"]["reason"] == "CapacityIsNotFound"
            fleets = [p for a, p in aws_proxy.requests if a == "CreateFleet"]
            assert fleets and all(p["OnDemandOptions.MinTargetCapacity"] == "2" for p in fleets)
            assert _instances(autoscaling, first) == [] == _instances(autoscaling, second)
            assert not [a for a, _ in aws_proxy.requests if a in ("AttachInstances", "SetDesiredCapacity")]

            aws_proxy.fleet_capacity.clear()  # EC2 has the capacity now
            found = wait_for(lambda: provisioned("True"), 90, message="Provisioned=True by a fleet")
            message = found["Provisioned"]["message"]
            assert "all-or-nothing: an instant EC2 Fleet launched 2 instance(s) at once" in message, message
            counts = sorted(len(_instances(autoscaling, g)) for g in (first, second))
            assert counts == [0, 2]  # both in one group, at once
            assert not [a for a, _ in aws_proxy.requests if a == "SetDesiredCapacity"]
            wait_for(
                lambda: len(kubectl.json("get", "nodes", "-l", f"pool={pool}")["items"]) == 2,
                60,
                message="both instances registered as Nodes",
            )
            assert ca.alive(), ca.log()
    finally:
        kubectl("delete", "nodes", "-l", f"pool={pool}", "--wait=false")
