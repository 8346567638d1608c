"""The aws provider's loop refresh at account scale: 500 Auto Scaling groups, 10,000 instances, on moto.

Reports the AWS calls of one ``refresh()`` (auto-discovery by tag, as CA's flag) and where its time
goes: ``boto_seconds`` is the time inside boto3 calls (HTTP to moto, moto's own work, botocore's
response parsing), ``kubetide_seconds`` the rest of the refresh, the provider's own work (the issue's
budget: <= 50 ms). Needs the dev extra (moto's server); building the account takes a minute.
"""

from __future__ import annotations

import logging
import statistics
import time
from typing import Any

GROUPS, PER_GROUP, RUNS = 500, 20, 5
TAG = "k8s.io/cluster-autoscaler/enabled"


def run() -> list[dict[str, Any]]:
    import boto3
    from moto.server import ThreadedMotoServer

    from kubetide.live.providers.aws import AwsApi, AwsCloudProvider

    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # moto's server logs every request
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        host, port = server.get_host_and_port()
        url = f"http://{host}:{port}"
        session = boto3.session.Session(aws_access_key_id="bench", aws_secret_access_key="bench")
        ec2 = session.client("ec2", endpoint_url=url, region_name="us-east-1")
        autoscaling = session.client("autoscaling", endpoint_url=url, region_name="us-east-1")
        ec2.create_launch_template(
            LaunchTemplateName="bench",
            LaunchTemplateData={"InstanceType": "m5.large", "ImageId": "ami-12c6146b"},
        )
        for i in range(GROUPS):
            name = f"bench-{i:03d}"
            autoscaling.create_auto_scaling_group(
                AutoScalingGroupName=name,
                MinSize=0,
                MaxSize=100,
                DesiredCapacity=PER_GROUP,
                LaunchTemplate={"LaunchTemplateName": "bench", "Version": "$Latest"},
                AvailabilityZones=["us-east-1a"],
                Tags=[{"Key": TAG, "Value": "true", "PropagateAtLaunch": False, "ResourceId": name}],
            )
        api = AwsApi(region="us-east-1", endpoint_url=url, session=session)
        boto = _BotoTimer(api)
        provider = AwsCloudProvider(api, discovery=[{TAG: ""}])
        provider.refresh()  # warm-up: botocore loads its models
        walls, own, calls = [], [], {}
        for _ in range(RUNS):
            api.calls.clear()
            boto.total = 0.0
            start = time.perf_counter()
            provider.refresh()
            wall = time.perf_counter() - start
            walls.append(wall)
            own.append(wall - boto.total)
            calls = dict(api.calls)
        instances = sum(len(g.nodes()) for g in provider.node_groups())
        return [
            {
                "workload": f"aws-refresh-{GROUPS}x{PER_GROUP}",
                "median_seconds": statistics.median(walls),
                "runs": RUNS,
                "groups": len(provider.node_groups()),
                "instances": instances,
                "calls": calls,
                "kubetide_seconds": round(statistics.median(own), 4),
                "boto_seconds": round(statistics.median(walls) - statistics.median(own), 4),
            }
        ]
    finally:
        server.stop()


class _BotoTimer:
    """Sums the time from botocore's ``before-call`` to ``after-call`` (HTTP, moto, parsing)."""

    def __init__(self, api: Any) -> None:
        self.total = 0.0
        self._start = 0.0
        for client in (api._autoscaling, api._ec2):
            client.meta.events.register("before-call", self._before)
            client.meta.events.register("after-call", self._after)

    def _before(self, **_: Any) -> None:
        self._start = time.perf_counter()

    def _after(self, **_: Any) -> None:
        self.total += time.perf_counter() - self._start
