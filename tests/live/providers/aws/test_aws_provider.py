"""The aws provider against moto's server (and the fault-injecting proxy in front of it): CA's behaviour."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from kubetide.cloud.instance import CloudProviderError, ErrorClass, InstanceState, NodeGroupAutoscalingOptions
from kubetide.live.providers.aws import (
    AwsApi,
    AwsCloudProvider,
    AwsConfigError,
    build_aws_provider,
    parse_provider_id,
)
from kubetide.live.providers.aws.nodes import register_instances
from kubetide.live.providers.aws.specs import ExplicitGroup
from kubetide.model.node import NodeView
from kubetide.testing.kwok_api import FakeKwokApi

from .conftest import AwsProxy, activity

MakeGroup = Callable[..., str]
MakeApi = Callable[..., AwsApi]


def _cluster_tags() -> tuple[str, dict[str, str]]:
    cluster = uuid.uuid4().hex[:8]
    tags = {"k8s.io/cluster-autoscaler/enabled": "true", f"k8s.io/cluster-autoscaler/{cluster}": "owned"}
    return f"asg:tag=k8s.io/cluster-autoscaler/enabled,k8s.io/cluster-autoscaler/{cluster}", tags


def _explicit(api: AwsApi, *groups: tuple[str, int, int]) -> AwsCloudProvider:
    provider = AwsCloudProvider(api, [ExplicitGroup(n, lo, hi) for n, lo, hi in groups])
    provider.refresh()
    return provider


def _node(instance_id: str, zone: str = "us-east-1a") -> NodeView:
    return NodeView(name=f"ip-{instance_id}", provider_id=f"aws:///{zone}/{instance_id}")


def _instance_ids(provider: AwsCloudProvider, group: str) -> list[str]:
    (ng,) = [g for g in provider.node_groups() if g.id() == group]
    return [parse_provider_id(i.id) or "" for i in ng.nodes()]


# --- which groups


def test_auto_discovery_finds_tagged_groups_with_their_bounds(
    make_group: MakeGroup, make_api: MakeApi
) -> None:
    spec, tags = _cluster_tags()
    a = make_group("a", min_size=1, max_size=7, desired=1, tags=tags)
    b = make_group("b", min_size=0, max_size=3, tags=tags)
    make_group("other", tags={"k8s.io/cluster-autoscaler/enabled": "true"})  # another cluster's
    provider = AwsCloudProvider(make_api(), discovery=[{k: "" for k in tags}])
    provider.refresh()
    assert {(g.id(), g.min_size(), g.max_size()) for g in provider.node_groups()} == {(a, 1, 7), (b, 0, 3)}
    assert build_aws_provider((), [spec], region="us-east-1").name() == "aws"


def test_nodes_flag_bounds_win_over_the_asg(make_group: MakeGroup, make_api: MakeApi) -> None:
    name = make_group(min_size=0, max_size=10)
    provider = _explicit(make_api(), (name, 2, 4))
    (group,) = provider.node_groups()
    assert (group.min_size(), group.max_size()) == (2, 4)


def test_bad_flags_are_named() -> None:
    with pytest.raises(AwsConfigError) as err:
        build_aws_provider(["1:x:g", "3:2:h"], ["mig:tag=x", "asg:tag="], region="us-east-1")
    flags = [f for f, _ in err.value.errors]
    assert flags == ["nodes", "nodes", "node-group-auto-discovery", "node-group-auto-discovery"]
    with pytest.raises(AwsConfigError, match="aws-region"):
        build_aws_provider(["0:1:g"], region="")


# --- sizes


def test_increase_size_sets_desired_capacity_and_instances_map_to_nodes(
    make_group: MakeGroup, make_api: MakeApi
) -> None:
    name = make_group()
    provider = _explicit(make_api(), (name, 0, 3))
    (group,) = provider.node_groups()
    group.increase_size(2)
    assert group.target_size() == 2
    provider.refresh()
    instances = group.nodes()
    assert len(instances) == 2
    assert all(i.id.startswith("aws:///us-east-1a/i-") for i in instances)
    assert all(i.status is not None and i.status.state is InstanceState.Running for i in instances)
    found = provider.node_group_for_node(NodeView(name="n", provider_id=instances[0].id))
    assert found is not None and found.id() == name
    assert provider.node_group_for_node(_node("i-0000000000")) is None
    with pytest.raises(CloudProviderError, match="too large"):
        group.increase_size(2)
    with pytest.raises(CloudProviderError, match="positive"):
        group.increase_size(0)


def test_delete_nodes_terminates_exactly_that_instance_and_decrements(
    make_group: MakeGroup, make_api: MakeApi, proxy: AwsProxy
) -> None:
    name = make_group(desired=3)
    provider = _explicit(make_api(), (name, 1, 5))
    (group,) = provider.node_groups()
    before = _instance_ids(provider, name)
    victim = before[1]
    group.delete_nodes([_node(victim)])
    assert proxy.seen["TerminateInstanceInAutoScalingGroup"] == 1
    assert group.target_size() == 2
    provider.refresh()
    assert sorted(_instance_ids(provider, name)) == sorted(i for i in before if i != victim)
    assert group.target_size() == 2


def test_delete_nodes_refuses_min_size_and_foreign_nodes(make_group: MakeGroup, make_api: MakeApi) -> None:
    name = make_group(desired=2)
    other = make_group(desired=1)
    provider = _explicit(make_api(), (name, 2, 5), (other, 0, 5))
    (group,) = [g for g in provider.node_groups() if g.id() == name]
    with pytest.raises(CloudProviderError, match="min size reached"):
        group.delete_nodes([_node(_instance_ids(provider, name)[0])])
    with pytest.raises(CloudProviderError, match="is not in ASG"):
        group.force_delete_nodes([_node(_instance_ids(provider, other)[0])])
    assert group.target_size() == 2


def test_capacity_not_launched_is_placeholders_and_decrease_target_drops_them(
    make_group: MakeGroup, make_api: MakeApi, proxy: AwsProxy
) -> None:
    name = make_group(desired=1)
    proxy.stocked_out[name] = None
    provider = _explicit(make_api(), (name, 0, 5))
    (group,) = provider.node_groups()
    group.increase_size(2)
    provider.refresh()
    assert group.target_size() == 3
    ids = _instance_ids(provider, name)
    assert ids[1:] == [f"i-placeholder-{name}-1", f"i-placeholder-{name}-2"]
    creating = [i for i in group.nodes() if i.status is not None and i.status.state is InstanceState.Creating]
    assert len(creating) == 2 and all(i.status and i.status.error_info is None for i in creating)
    group.decrease_target_size(-1)
    assert group.target_size() == 2
    with pytest.raises(CloudProviderError, match="attempt to delete existing nodes"):
        group.decrease_target_size(-2)
    with pytest.raises(CloudProviderError, match="negative"):
        group.decrease_target_size(1)


def test_deleting_a_placeholder_lowers_desired_to_the_launched_instances(
    make_group: MakeGroup, make_api: MakeApi, proxy: AwsProxy
) -> None:
    name = make_group(desired=1)
    proxy.stocked_out[name] = None
    provider = _explicit(make_api(), (name, 0, 5))
    (group,) = provider.node_groups()
    group.increase_size(2)
    provider.refresh()
    with pytest.raises(CloudProviderError, match="is not in ASG"):
        group.delete_nodes([_node(f"i-placeholder-{name}x-2")])
    group.delete_nodes([_node(f"i-placeholder-{name}-2")])
    assert group.target_size() == 1
    assert proxy.seen["TerminateInstanceInAutoScalingGroup"] == 0


# --- failed launches


@pytest.mark.parametrize(
    ("message", "code"),
    [
        (
            "We currently do not have sufficient m5.xlarge capacity in the Availability Zone you requested "
            "(us-east-1a). Launching EC2 instance failed.",
            "InsufficientInstanceCapacity",
        ),
        (
            "Could not launch Spot Instances. SpotMaxPriceTooLow - Your max price is below the price.",
            "SpotMaxPriceTooLow",
        ),
        (
            "You have requested more vCPU capacity than your current vCPU limit of 32 allows.",
            "VcpuLimitExceeded",
        ),
        (
            "The security group 'sg-1' does not exist. Launching EC2 instance failed.",
            "placeholder-cannot-be-fulfilled",
        ),
    ],
)
def test_a_failed_launch_marks_the_placeholders_with_its_error(
    make_group: MakeGroup, make_api: MakeApi, proxy: AwsProxy, message: str, code: str
) -> None:
    name = make_group()
    proxy.stocked_out[name] = None
    provider = _explicit(make_api(), (name, 0, 5))
    (group,) = provider.node_groups()
    group.increase_size(2)
    proxy.activities[name] = [activity("Failed", message, datetime.now(UTC) + timedelta(seconds=1))]
    provider.refresh()  # the very next loop: CA backs the group off and fails over
    failed = [i for i in group.nodes() if i.has_creation_error]
    assert len(failed) == 2
    info = failed[0].status.error_info if failed[0].status else None
    assert info is not None and info.error_class is ErrorClass.OutOfResources and info.error_code == code
    assert proxy.seen["DescribeScalingActivities"] == 1


def test_old_failures_and_failures_followed_by_success_are_history(
    make_group: MakeGroup, make_api: MakeApi, proxy: AwsProxy
) -> None:
    name = make_group()
    proxy.stocked_out[name] = None
    provider = _explicit(make_api(), (name, 0, 5))
    (group,) = provider.node_groups()
    group.increase_size(1)
    now = datetime.now(UTC)
    proxy.activities[name] = [activity("Failed", "InsufficientInstanceCapacity", now - timedelta(hours=1))]
    provider.refresh()
    assert not any(i.has_creation_error for i in group.nodes())
    proxy.activities[name] = [
        activity("Successful", "", now + timedelta(seconds=2)),
        activity("Failed", "InsufficientInstanceCapacity", now + timedelta(seconds=1)),
    ]
    provider.refresh()
    assert not any(i.has_creation_error for i in group.nodes())


# --- templates


def test_template_from_instance_type_and_tags(make_group: MakeGroup, make_api: MakeApi) -> None:
    tags = {
        "k8s.io/cluster-autoscaler/node-template/label/pool": "batch",
        "k8s.io/cluster-autoscaler/node-template/taint/dedicated": "batch:NoSchedule",
        "k8s.io/cluster-autoscaler/node-template/resources/ephemeral-storage": "100Gi",
        "k8s.io/cluster-autoscaler/node-template/autoscaling-options/scaledownunneededtime": "2m",
        "k8s.io/cluster-autoscaler/node-template/autoscaling-options/scaledownutilizationthreshold": "0.3",
    }
    name = make_group(tags=tags, instance_type="m5.xlarge")
    provider = _explicit(make_api(), (name, 0, 5))
    (group,) = provider.node_groups()
    node = group.template_node_info().node
    assert node.capacity == node.allocatable
    assert node.allocatable.get("cpu") == 4000
    assert node.allocatable.get("memory") == 16 * 1024**3
    assert node.allocatable.get("pods") == 110
    assert node.allocatable.get("ephemeral-storage") == 100 * 1024**3
    assert node.labels["pool"] == "batch"
    assert node.labels["node.kubernetes.io/instance-type"] == "m5.xlarge"
    assert node.labels["topology.kubernetes.io/zone"] == "us-east-1a"
    assert node.labels["kubernetes.io/arch"] == "amd64"
    assert [(t.key, t.value, t.effect) for t in node.taints] == [("dedicated", "batch", "NoSchedule")]
    assert node.ready
    defaults = NodeGroupAutoscalingOptions(0.5, 0.5, 600.0, 1200.0, 900.0)
    options = group.get_options(defaults)
    assert options is not None
    assert (options.scale_down_unneeded_time, options.scale_down_utilization_threshold) == (120.0, 0.3)


def test_template_takes_the_mixed_policy_first_override_and_a_pods_tag(
    make_group: MakeGroup, make_api: MakeApi, proxy: AwsProxy
) -> None:
    tags = {"k8s.io/cluster-autoscaler/node-template/resources/pods": "58"}
    name = make_group(tags=tags, overrides=["m6g.large", "m5.xlarge"])
    provider = _explicit(make_api(), (name, 0, 5))
    (group,) = provider.node_groups()
    node = group.template_node_info().node
    assert node.labels["kubernetes.io/arch"] == "arm64"
    assert node.allocatable.get("cpu") == 2000 and node.allocatable.get("pods") == 58
    group.template_node_info()
    assert proxy.seen["DescribeInstanceTypes"] == 1  # cached


# --- cost of a loop, and AWS misbehaving


def test_one_refresh_costs_one_call_per_100_groups(make_group: MakeGroup, make_api: MakeApi) -> None:
    _, tags = _cluster_tags()
    for _ in range(150):
        make_group("many", tags=tags)
    api = make_api()
    provider = AwsCloudProvider(api, discovery=[{k: "" for k in tags}])
    provider.refresh()
    assert len(provider.node_groups()) == 150
    assert dict(api.calls) == {"DescribeAutoScalingGroups": 2}


def test_throttling_is_retried_and_persistent_failure_is_a_cloud_error(
    make_group: MakeGroup, make_api: MakeApi, proxy: AwsProxy
) -> None:
    name = make_group(desired=1)
    provider = _explicit(make_api(), (name, 0, 5))
    proxy.seen.clear()
    proxy.throttle["DescribeAutoScalingGroups"] = 1
    provider.refresh()
    assert proxy.seen["DescribeAutoScalingGroups"] == 2
    assert len(_instance_ids(provider, name)) == 1
    impatient = _explicit(make_api(max_attempts=1), (name, 0, 5))
    proxy.throttle["SetDesiredCapacity"] = 1
    (group,) = impatient.node_groups()
    with pytest.raises(CloudProviderError, match="Throttling"):
        group.increase_size(1)
    assert group.target_size() == 1


# --- Nodes for moto's instances (the node agent's side)


def test_node_agent_registers_a_node_per_instance_and_deletes_terminated_ones(
    make_group: MakeGroup, make_api: MakeApi
) -> None:
    name = make_group(desired=2, tags={"k8s.io/cluster-autoscaler/node-template/label/pool": "web"})
    provider = AwsCloudProvider(make_api(), [ExplicitGroup(name, None, None)])
    api = FakeKwokApi()
    created, deleted = register_instances(provider, api)
    assert len(created) == 2 and deleted == []
    nodes = {n["metadata"]["name"]: n for n in api.list_nodes("kubetide.io/node-group")}
    ids = _instance_ids(provider, name)
    assert {n["spec"]["providerID"] for n in nodes.values()} == {f"aws:///us-east-1a/{i}" for i in ids}
    node = NodeView.from_manifest(next(iter(nodes.values())))
    assert node.labels["pool"] == "web" and node.labels["kubetide.io/node-group"] == name
    assert node.capacity.get("cpu") == 4000
    (group,) = provider.node_groups()
    assert (group.min_size(), group.max_size()) == (0, 10)  # the ASG's own bounds
    found = provider.node_group_for_node(node)
    assert found is not None and found.id() == name
    group.delete_nodes([node])
    created, deleted = register_instances(provider, api)
    assert created == [] and deleted == [node.name]
    assert register_instances(provider, api) == ([], [])


def test_instances_in_standby_are_out_of_service(make_group: MakeGroup, make_api: MakeApi, aws: Any) -> None:
    # An instance someone put in Standby has no Node to expect: kubetide keeps it (issue 8), where CA
    # counts it Running and terminates it as unregistered.
    name = make_group(min_size=0, desired=2)
    provider = _explicit(make_api(), (name, 0, 5))
    standby = _instance_ids(provider, name)[0]
    aws.autoscaling.enter_standby(
        InstanceIds=[standby], AutoScalingGroupName=name, ShouldDecrementDesiredCapacity=False
    )
    provider.refresh()
    (group,) = provider.node_groups()
    states = {parse_provider_id(i.id): i.out_of_service for i in group.nodes()}
    assert states[standby] is True
    # Its place in the desired capacity is taken by a replacement, as AWS does.
    assert list(states.values()).count(False) == 2
