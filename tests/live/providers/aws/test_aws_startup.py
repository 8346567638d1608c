"""The aws provider's check at start and its errors, against moto's server behind the fault proxy: a
named group AWS does not have, an auto-discovery that finds nothing, missing credentials, an endpoint
that does not answer, one that answers garbage, a region botocore refuses. Each is one line that says
what to check; no botocore exception leaves the provider.

CA 1.31 for comparison (cloudprovider/aws): ``asgCache.regenerate`` keeps an explicitly configured ASG
registered even when ``DescribeAutoScalingGroups`` does not list it (silently, target 0), and
``BuildAWS`` exits (``klog.Fatalf("Failed to create AWS Manager")``) when the first refresh fails.
"""

from __future__ import annotations

import logging
import socket
import uuid
from collections.abc import Callable
from typing import Any

import boto3
import pytest
import yaml
from botocore.exceptions import EndpointConnectionError

from kubetide.cloud.instance import CloudProviderError
from kubetide.cluster.status import (
    ClusterAutoscalerStatus,
    ClusterWideStatus,
    Condition,
    NodeGroupStatus,
    render_status_yaml,
)
from kubetide.commands.run.aws_watch import with_missing_groups
from kubetide.live.providers.aws import AwsApi, AwsCloudProvider, AwsConfigError, build_aws_provider
from kubetide.live.providers.aws.errors import AwsCallError, aws_errors
from kubetide.live.providers.aws.specs import ExplicitGroup

from .conftest import REGION, AwsProxy

MakeGroup = Callable[..., str]
MakeApi = Callable[..., AwsApi]
PRESENCE = "kubetide.live.providers.aws.presence"


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_a_named_group_aws_lacks_is_reported_once_and_again_when_it_appears(
    make_group: MakeGroup, make_api: MakeApi, aws: Any, caplog: pytest.LogCaptureFixture
) -> None:
    real = make_group()
    typo = f"no-such-asg-{uuid.uuid4().hex[:6]}"
    provider = AwsCloudProvider(make_api(), [ExplicitGroup(real, 0, 3), ExplicitGroup(typo, 0, 3)])
    with caplog.at_level(logging.INFO, logger=PRESENCE):
        check = provider.startup_check()
        provider.refresh()
    assert not check.failure and not check.ok
    (missing,) = check.missing
    assert missing.name == typo
    assert f"ASG {typo} does not exist in AWS region {REGION}" in missing.reason
    errors = [r for r in caplog.records if r.levelno == logging.ERROR and typo in r.getMessage()]
    assert len(errors) == 1  # once, not every loop
    # As CA, the group stays registered (a target of 0); its template says why there is none.
    assert {g.id() for g in provider.node_groups()} == {real, typo}
    (group,) = [g for g in provider.node_groups() if g.id() == typo]
    with pytest.raises(CloudProviderError, match="does not exist in AWS region"):
        group.template_node_info()
    caplog.clear()
    _create_plain_group(aws, typo)
    with caplog.at_level(logging.INFO, logger=PRESENCE):
        provider.refresh()
    assert provider.missing_groups() == {}
    assert any(f"ASG {typo} exists now" in r.getMessage() for r in caplog.records)


def _create_plain_group(aws: Any, name: str) -> None:
    template = f"lt-{name}"
    aws.ec2.create_launch_template(
        LaunchTemplateName=template,
        LaunchTemplateData={"InstanceType": "m5.large", "ImageId": "ami-12c6146b"},
    )
    aws.autoscaling.create_auto_scaling_group(
        AutoScalingGroupName=name,
        MinSize=0,
        MaxSize=3,
        DesiredCapacity=0,
        AvailabilityZones=["us-east-1a"],
        LaunchTemplate={"LaunchTemplateName": template, "Version": "$Latest"},
    )


def test_the_status_shows_a_missing_group_unhealthy_with_the_reason(
    make_api: MakeApi,
) -> None:
    typo = f"no-such-asg-{uuid.uuid4().hex[:6]}"
    provider = AwsCloudProvider(make_api(), [ExplicitGroup(typo, 0, 3)], clock=lambda: 1_800_000_000.0)
    provider.refresh()
    healthy = Condition("Healthy", 1_800_000_060.0, 1_799_000_000.0, cloud_provider_target=0, max_size=3)
    status = ClusterAutoscalerStatus(
        ClusterWideStatus(healthy, Condition("NoActivity"), Condition("NoCandidates")),
        (NodeGroupStatus(typo, healthy, Condition("NoActivity"), Condition("NoCandidates")),),
    )
    marked = with_missing_groups(status, provider.missing_groups())
    (group,) = marked.node_groups
    assert (group.health.status, group.scale_up.status) == ("Unhealthy", "Unhealthy")
    assert group.health.last_transition_time == 1_800_000_000.0  # since the refresh that missed it
    written = yaml.safe_load(render_status_yaml(marked, 1_800_000_060.0))
    assert written["message"].startswith(f"ASG {typo} does not exist in AWS region {REGION}")
    assert written["nodeGroups"][0]["health"]["status"] == "Unhealthy"
    assert with_missing_groups(status, {}) is status


def test_an_auto_discovery_that_finds_nothing_is_a_warning_naming_the_tags(
    make_api: MakeApi, caplog: pytest.LogCaptureFixture
) -> None:
    tag = f"k8s.io/cluster-autoscaler/{uuid.uuid4().hex[:8]}"
    provider = AwsCloudProvider(make_api(), discovery=[{"k8s.io/cluster-autoscaler/enabled": "", tag: ""}])
    with caplog.at_level(logging.WARNING, logger=PRESENCE):
        check = provider.startup_check()
        provider.refresh()
    assert check.ok and provider.node_groups() == []
    tags = ", ".join(sorted(["k8s.io/cluster-autoscaler/enabled", tag]))
    assert check.empty_discoveries == (tags,)
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warnings == [
        f"auto-discovery found no ASG in AWS region {REGION} with the tags {tags}: check the tags and the region"
    ]


def test_a_valid_but_wrong_region_discovers_nothing_and_misses_the_named_groups(
    make_group: MakeGroup, proxy: AwsProxy
) -> None:
    tags = {"k8s.io/cluster-autoscaler/enabled": "true", f"owner-{uuid.uuid4().hex[:6]}": "x"}
    name = make_group(tags=tags)  # in us-east-1
    session = boto3.session.Session(aws_access_key_id="testing", aws_secret_access_key="testing")
    api = AwsApi(region="eu-west-1", endpoint_url=proxy.url, session=session)
    provider = AwsCloudProvider(api, [ExplicitGroup(name, 0, 3)], [dict.fromkeys(tags, "")])
    check = provider.startup_check()
    assert [m.name for m in check.missing] == [name]
    assert "in AWS region eu-west-1" in check.missing[0].reason
    assert len(check.empty_discoveries) == 1


def test_missing_credentials_are_one_line(monkeypatch: pytest.MonkeyPatch, proxy: AwsProxy) -> None:
    for key in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/credentials")
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent/config")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    provider = build_aws_provider(["0:3:g"], region=REGION, endpoint_url=proxy.url)
    check = provider.startup_check()
    assert check.failure.startswith("no usable AWS credentials (looked in the environment")
    assert "NoCredentialsError" in check.failure and "\n" not in check.failure
    assert proxy.seen["DescribeAutoScalingGroups"] == 0  # nothing was sent


def test_an_unreachable_endpoint_is_one_line() -> None:
    session = boto3.session.Session(aws_access_key_id="testing", aws_secret_access_key="testing")
    url = f"http://127.0.0.1:{_closed_port()}"
    api = AwsApi(region=REGION, endpoint_url=url, session=session, max_attempts=1)
    check = AwsCloudProvider(api, [ExplicitGroup("g", 0, 3)]).startup_check()
    assert check.failure.startswith(f"cannot reach the AWS endpoint {url}")
    assert "EndpointConnectionError" in check.failure


def test_an_unknown_region_is_named_when_its_endpoint_does_not_answer() -> None:
    # No call leaves this machine: the exception is botocore's own, raised inside the wrapper.
    client = boto3.session.Session(aws_access_key_id="x", aws_secret_access_key="y").client(
        "autoscaling", region_name="eu-west-9"
    )
    with (
        pytest.raises(AwsCallError) as err,
        aws_errors("describe_auto_scaling_groups", client, region="eu-west-9"),
    ):
        raise EndpointConnectionError(endpoint_url=client.meta.endpoint_url)
    assert str(err.value).startswith(
        "cannot reach the AWS endpoint https://autoscaling.eu-west-9.amazonaws.com; region 'eu-west-9' is "
        "not one botocore knows: is --aws-region right?"
    )


def test_a_region_botocore_refuses_is_a_flag_problem() -> None:
    with pytest.raises(AwsConfigError) as err:
        build_aws_provider(["0:3:g"], region="eu west 1", endpoint_url="http://127.0.0.1:1")
    ((flag, problem),) = err.value.errors
    assert flag == "aws-region" and problem.startswith("invalid AWS region 'eu west 1'")


def test_an_answer_that_is_not_aws_s_stays_inside_the_error_wrapper(
    make_group: MakeGroup, make_api: MakeApi, proxy: AwsProxy
) -> None:
    name = make_group()
    provider = AwsCloudProvider(make_api(), [ExplicitGroup(name, 0, 3)])
    proxy.garbage["DescribeAutoScalingGroups"] = 10  # more than botocore's attempts
    check = provider.startup_check()
    assert check.failure.startswith(f"the endpoint {proxy.url} did not answer as AWS does")
    assert "ResponseParserError" in check.failure
    with pytest.raises(CloudProviderError, match="ResponseParserError"):
        provider.refresh()
    proxy.garbage.clear()
    provider.refresh()
    assert [g.id() for g in provider.node_groups()] == [name]


def test_access_denied_names_the_permission() -> None:
    client = boto3.session.Session(aws_access_key_id="x", aws_secret_access_key="y").client(
        "pricing", region_name="us-east-1"
    )
    from botocore.exceptions import ClientError

    denied = ClientError({"Error": {"Code": "AccessDeniedException", "Message": "no"}}, "GetProducts")
    with pytest.raises(AwsCallError) as err, aws_errors("get_products", client, region=REGION):
        raise denied
    assert str(err.value) == (
        "not allowed: pricing:GetProducts (see the README's IAM policy) (GetProducts: AccessDeniedException: no)"
    )
