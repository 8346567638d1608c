"""A real AWS endpoint for the aws provider's tests: moto's server on a free loopback port, and a small
HTTP proxy in front of it that injects what moto cannot produce (throttling, failed scaling activities,
capacity that is asked for but never launched). The provider is never patched: it talks HTTP to the proxy
exactly as it would to AWS."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from typing import Any

import boto3
import pytest
from moto.server import ThreadedMotoServer

from kubetide.live.providers.aws import AwsApi

from .awsproxy import REGION, AwsProxy, activity

__all__ = ["REGION", "AwsProxy", "activity"]


@pytest.fixture(scope="session")
def moto_endpoint() -> Iterator[tuple[str, int]]:
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        yield server.get_host_and_port()
    finally:
        server.stop()


@pytest.fixture(scope="session")
def _proxy(moto_endpoint: tuple[str, int]) -> Iterator[AwsProxy]:
    proxy = AwsProxy(moto_endpoint)
    try:
        yield proxy
    finally:
        proxy.close()


@pytest.fixture
def proxy(_proxy: AwsProxy) -> AwsProxy:
    _proxy.reset()
    return _proxy


def _session() -> Any:
    return boto3.session.Session(aws_access_key_id="testing", aws_secret_access_key="testing")


@pytest.fixture
def aws(proxy: AwsProxy) -> Any:
    """boto3 clients for the test's own setup (straight through the proxy, like the provider)."""

    class Clients:
        autoscaling = _session().client("autoscaling", endpoint_url=proxy.url, region_name=REGION)
        ec2 = _session().client("ec2", endpoint_url=proxy.url, region_name=REGION)

    return Clients


@pytest.fixture
def make_api(proxy: AwsProxy) -> Callable[..., AwsApi]:
    def make(**kwargs: Any) -> AwsApi:
        return AwsApi(region=REGION, endpoint_url=proxy.url, session=_session(), **kwargs)

    return make


@pytest.fixture
def make_group(aws: Any) -> Callable[..., str]:
    """Creates an ASG with a unique name (the moto server is shared by a worker's tests)."""

    def make(
        prefix: str = "g",
        *,
        min_size: int = 0,
        max_size: int = 10,
        desired: int = 0,
        instance_type: str = "m5.xlarge",
        tags: dict[str, str] | None = None,
        overrides: list[str] | None = None,
        zone: str = "us-east-1a",
    ) -> str:
        name = f"{prefix}-{uuid.uuid4().hex[:8]}"
        template = f"lt-{name}"
        aws.ec2.create_launch_template(
            LaunchTemplateName=template,
            LaunchTemplateData={"InstanceType": instance_type, "ImageId": "ami-12c6146b"},
        )
        spec = {"LaunchTemplateName": template, "Version": "$Latest"}
        placement: dict[str, Any] = (
            {
                "MixedInstancesPolicy": {
                    "LaunchTemplate": {
                        "LaunchTemplateSpecification": spec,
                        "Overrides": [{"InstanceType": t} for t in overrides],
                    }
                }
            }
            if overrides
            else {"LaunchTemplate": spec}
        )
        aws.autoscaling.create_auto_scaling_group(
            AutoScalingGroupName=name,
            MinSize=min_size,
            MaxSize=max_size,
            DesiredCapacity=desired,
            AvailabilityZones=[zone],
            Tags=[
                {
                    "Key": k,
                    "Value": v,
                    "PropagateAtLaunch": False,
                    "ResourceId": name,
                    "ResourceType": "auto-scaling-group",
                }
                for k, v in (tags or {}).items()
            ],
            **placement,
        )
        return name

    return make
