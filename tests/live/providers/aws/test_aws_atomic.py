"""All-or-nothing increases of an Auto Scaling group, against moto's server behind the fault proxy.

CA's ``NodeGroup.AtomicIncreaseSize`` (cloudprovider/cloud_provider.go, CA 1.36.1): "returns error if
requesting the entire delta fails ... If the method returns error, no new nodes should be added to the
node group"; CA's aws provider does not implement it. kubetide's does: an instant EC2 Fleet with
``MinTargetCapacity`` attached to the group, else a scale-up rolled back on a failed launch.

moto always launches an instant fleet's whole target and never fails a launch, so the proxy makes it
fail (``fleet_capacity``: fewer or no instances, with EC2's ``InsufficientInstanceCapacity``;
``launch_cap``: a group that launches only part of its desired capacity). A refused ``AttachInstances``
is moto's own (it refuses to go past the group's maximum).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from kubetide.cloud.instance import CloudProviderError
from kubetide.live.providers.aws import AwsApi, AwsCloudProvider
from kubetide.live.providers.aws.atomic import FLEET_TAG
from kubetide.live.providers.aws.specs import ExplicitGroup

from .conftest import AwsProxy, activity

MakeGroup = Callable[..., str]
MakeApi = Callable[..., AwsApi]


def _provider(api: AwsApi, name: str, max_size: int = 5) -> AwsCloudProvider:
    provider = AwsCloudProvider(api, [ExplicitGroup(name, 0, max_size)])
    provider.refresh()
    return provider


def _group(aws: Any, name: str) -> dict[str, Any]:
    (group,) = aws.autoscaling.describe_auto_scaling_groups(AutoScalingGroupNames=[name])["AutoScalingGroups"]
    return dict(group)


def _fleet_instances(aws: Any, name: str) -> dict[str, str]:
    """Instance id -> state of the instances launched by a fleet for group ``name``."""
    answer = aws.ec2.describe_instances(Filters=[{"Name": f"tag:{FLEET_TAG}", "Values": [name]}])
    return {i["InstanceId"]: i["State"]["Name"] for r in answer["Reservations"] for i in r["Instances"]}


def _params(proxy: AwsProxy, action: str) -> list[dict[str, str]]:
    return [p for a, p in proxy.requests if a == action]


def test_an_instant_fleet_launches_all_of_it_and_attaches_it_to_the_group(
    make_group: MakeGroup, make_api: MakeApi, proxy: AwsProxy, aws: Any
) -> None:
    name = make_group("fleet")
    provider = _provider(make_api(), name)
    (group,) = provider.node_groups()
    route = group.atomic_increase_size(3)
    assert route == (
        f"all-or-nothing: an instant EC2 Fleet launched 3 instance(s) at once (MinTargetCapacity 3) "
        f"and attached them to ASG {name}"
    )
    (fleet,) = _params(proxy, "CreateFleet")
    assert fleet["Type"] == "instant"
    assert fleet["TargetCapacitySpecification.TotalTargetCapacity"] == "3"
    assert fleet["TargetCapacitySpecification.DefaultTargetCapacityType"] == "on-demand"
    # CreateFleet takes MinTargetCapacity only with a single instance type or zone: both are asked.
    assert fleet["OnDemandOptions.MinTargetCapacity"] == "3"
    assert fleet["OnDemandOptions.SingleInstanceType"] == "true"
    assert fleet["OnDemandOptions.SingleAvailabilityZone"] == "true"
    assert not _params(proxy, "SetDesiredCapacity")  # AttachInstances raised the desired capacity
    launched = _fleet_instances(aws, name)
    asg = _group(aws, name)
    assert asg["DesiredCapacity"] == 3 == group.target_size()
    assert sorted(i["InstanceId"] for i in asg["Instances"]) == sorted(launched)
    provider.refresh()
    assert group.target_size() == 3
    assert sorted(i.id.rpartition("/")[2] for i in group.nodes()) == sorted(launched)


def test_a_fleet_that_cannot_give_all_of_it_launches_nothing_and_the_increase_fails(
    make_group: MakeGroup, make_api: MakeApi, proxy: AwsProxy, aws: Any
) -> None:
    name = make_group("stockout")
    proxy.fleet_capacity[name] = 0  # EC2: MinTargetCapacity not reachable, nothing launched
    provider = _provider(make_api(), name)
    (group,) = provider.node_groups()
    with pytest.raises(
        CloudProviderError, match=r"launched 0 of 3 instance\(s\) \(InsufficientInstanceCapacity"
    ):
        group.atomic_increase_size(3)
    assert _group(aws, name)["DesiredCapacity"] == 0 == group.target_size()
    assert not _params(proxy, "AttachInstances")
    assert not _fleet_instances(aws, name)


def test_part_of_a_fleet_is_never_kept(
    make_group: MakeGroup, make_api: MakeApi, proxy: AwsProxy, aws: Any
) -> None:
    name = make_group("partial")
    proxy.fleet_capacity[name] = 2  # a fleet that breaks its MinTargetCapacity: kubetide still keeps none
    provider = _provider(make_api(), name)
    (group,) = provider.node_groups()
    with pytest.raises(CloudProviderError, match=r"launched 2 of 3 instance\(s\).*; terminated i-"):
        group.atomic_increase_size(3)
    assert set(_fleet_instances(aws, name).values()) == {"terminated"}
    assert len(_fleet_instances(aws, name)) == 2
    assert _group(aws, name)["DesiredCapacity"] == 0 == group.target_size()
    assert not _group(aws, name)["Instances"]


def test_an_attach_the_group_refuses_terminates_the_fleet(
    make_group: MakeGroup, make_api: MakeApi, proxy: AwsProxy, aws: Any
) -> None:
    name = make_group("attach", max_size=10)
    provider = _provider(make_api(), name, max_size=5)  # --nodes allows 5 ...
    aws.autoscaling.update_auto_scaling_group(AutoScalingGroupName=name, MaxSize=1)  # ... AWS now 1
    (group,) = provider.node_groups()
    with pytest.raises(
        CloudProviderError, match=f"attach the fleet's instances to ASG {name}.*; terminated i-"
    ):
        group.atomic_increase_size(3)
    assert _params(proxy, "AttachInstances")  # moto's ResourceContention (retried, as a 5xx is)
    launched = _fleet_instances(aws, name)
    assert len(launched) == 3 and set(launched.values()) == {"terminated"}
    assert _group(aws, name)["DesiredCapacity"] == 0 == group.target_size()


def test_the_group_maximum_is_checked_before_anything_is_launched(
    make_group: MakeGroup, make_api: MakeApi, proxy: AwsProxy
) -> None:
    name = make_group("max")
    provider = _provider(make_api(), name, max_size=2)
    (group,) = provider.node_groups()
    with pytest.raises(CloudProviderError, match="size increase too large - desired:3 max:2"):
        group.atomic_increase_size(3)
    assert not _params(proxy, "CreateFleet")


def test_a_spot_launch_template_asks_the_fleet_for_spot(
    make_group: MakeGroup, make_api: MakeApi, proxy: AwsProxy, aws: Any
) -> None:
    name = make_group("spot")
    aws.ec2.create_launch_template_version(
        LaunchTemplateName=f"lt-{name}",
        SourceVersion="1",
        LaunchTemplateData={
            "InstanceType": "m5.xlarge",
            "ImageId": "ami-12c6146b",
            "InstanceMarketOptions": {"MarketType": "spot"},
        },
    )
    provider = _provider(make_api(), name)
    (group,) = provider.node_groups()
    group.atomic_increase_size(2)
    (fleet,) = _params(proxy, "CreateFleet")
    assert fleet["TargetCapacitySpecification.DefaultTargetCapacityType"] == "spot"
    assert fleet["SpotOptions.MinTargetCapacity"] == "2"
    assert "OnDemandOptions.MinTargetCapacity" not in fleet


# --- where a fleet cannot be used: scale up, roll back on a failed launch


def test_a_mixed_instances_group_is_raised_and_rolled_back_when_its_launch_fails(
    make_group: MakeGroup, make_api: MakeApi, proxy: AwsProxy, aws: Any
) -> None:
    name = make_group("mixed", overrides=["m5.xlarge", "m5a.xlarge"])
    proxy.launch_cap[name] = 1  # one instance comes, two never do
    provider = _provider(make_api(), name)
    (group,) = provider.node_groups()
    route = group.atomic_increase_size(3)
    assert route == (
        f"not all-or-nothing in the cloud (the group has a mixed instances policy): ASG {name} raised with "
        "SetDesiredCapacity, rolled back if a launch fails (the instances that came terminated)"
    )
    assert not _params(proxy, "CreateFleet")
    provider.refresh()  # one came, the launch goes on: nothing is rolled back yet
    assert group.target_size() == 3
    (came,) = [i["InstanceId"] for i in _group(aws, name)["Instances"]]
    assert not _params(proxy, "TerminateInstanceInAutoScalingGroup")
    failed = datetime.now(UTC) + timedelta(seconds=1)  # after the increase (StartTime has whole seconds)
    proxy.activities[name] = [
        activity("Failed", "We currently do not have sufficient m5.xlarge capacity", failed)
    ]
    provider.refresh()
    (terminated,) = _params(proxy, "TerminateInstanceInAutoScalingGroup")
    assert terminated["InstanceId"] == came
    assert terminated["ShouldDecrementDesiredCapacity"] == "true"  # as CA's DeleteNodes
    assert _params(proxy, "SetDesiredCapacity")[-1]["DesiredCapacity"] == "0"
    assert group.target_size() == 0
    assert not [i for i in group.nodes() if i.status and i.status.error_info]  # no failed placeholders left
    provider.refresh()
    assert group.target_size() == 0 and not group.nodes()


def test_a_rolled_back_route_that_delivered_is_never_rolled_back(
    make_group: MakeGroup, make_api: MakeApi, proxy: AwsProxy, aws: Any
) -> None:
    name = make_group("mixed", overrides=["m5.xlarge", "m5a.xlarge"])
    provider = _provider(make_api(), name)
    (group,) = provider.node_groups()
    group.atomic_increase_size(2)
    provider.refresh()  # both came: the increase is delivered and forgotten
    proxy.activities[name] = [
        activity("Failed", "a later launch failed", datetime.now(UTC) + timedelta(seconds=1))
    ]
    aws.autoscaling.set_desired_capacity(AutoScalingGroupName=name, DesiredCapacity=2)
    provider.refresh()
    assert not _params(proxy, "TerminateInstanceInAutoScalingGroup")
    assert len(_group(aws, name)["Instances"]) == 2


def test_a_launch_configuration_group_takes_the_rollback_route(
    make_api: MakeApi, proxy: AwsProxy, aws: Any
) -> None:
    aws.autoscaling.create_launch_configuration(
        LaunchConfigurationName="lc-atomic", ImageId="ami-12c6146b", InstanceType="m5.xlarge"
    )
    aws.autoscaling.create_auto_scaling_group(
        AutoScalingGroupName="lc-atomic-group",
        LaunchConfigurationName="lc-atomic",
        MinSize=0,
        MaxSize=5,
        DesiredCapacity=0,
        AvailabilityZones=["us-east-1a"],
    )
    provider = _provider(make_api(), "lc-atomic-group")
    (group,) = provider.node_groups()
    route = group.atomic_increase_size(2)
    assert "(the group launches from a launch configuration)" in (route or "")
    assert _group(aws, "lc-atomic-group")["DesiredCapacity"] == 2
