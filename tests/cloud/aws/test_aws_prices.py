"""Prices on AWS: on-demand from the Price List API (answered by the proxy: moto has none), spot from
moto's DescribeSpotPriceHistory, a user file first, and never an invented price."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from kubetide.cloud.instance import CloudProviderError
from kubetide.cloud.providers.aws import AwsApi, AwsConfigError, build_aws_provider
from kubetide.cloud.providers.aws.pricing import AwsPricing, load_price_file
from kubetide.model.node import NodeView
from kubetide.model.pod import Container, Pod
from kubetide.model.resources import Resources

from .conftest import AwsProxy

HOUR = 3600.0


def _node(itype: str, **labels: str) -> NodeView:
    return NodeView(
        name="n",
        labels={
            "node.kubernetes.io/instance-type": itype,
            "topology.kubernetes.io/zone": "us-east-1a",
            **labels,
        },
    )


def test_on_demand_from_the_price_list_cached(make_api: Callable[..., AwsApi], proxy: AwsProxy) -> None:
    proxy.prices["m5.xlarge"] = 0.192
    pricing = AwsPricing(make_api())
    assert pricing.node_price(_node("m5.xlarge"), 0.0, 2 * HOUR) == pytest.approx(0.384)
    pricing.node_price(_node("m5.xlarge"), 0.0, HOUR)
    assert proxy.seen["GetProducts"] == 1


def test_no_price_is_never_invented(make_api: Callable[..., AwsApi], proxy: AwsProxy) -> None:
    pricing = AwsPricing(make_api())
    with pytest.raises(CloudProviderError, match=r"no on-demand price is known for m5\.xlarge"):
        pricing.node_price(_node("m5.xlarge"), 0.0, HOUR)
    with pytest.raises(CloudProviderError, match=r"no node\.kubernetes\.io/instance-type label"):
        pricing.node_price(NodeView(name="bare"), 0.0, HOUR)


def test_spot_nodes_take_the_spot_price(make_api: Callable[..., AwsApi], proxy: AwsProxy) -> None:
    pricing = AwsPricing(make_api())
    price = pricing.node_price(_node("m5.xlarge", **{"eks.amazonaws.com/capacityType": "SPOT"}), 0.0, HOUR)
    assert price > 0  # moto's spot price history
    assert proxy.seen["DescribeSpotPriceHistory"] == 1 and proxy.seen["GetProducts"] == 0


def test_a_price_file_overrides(tmp_path: Path, make_api: Callable[..., AwsApi], proxy: AwsProxy) -> None:
    path = tmp_path / "prices.yaml"
    path.write_text("onDemand: {m5.xlarge: 0.2}\nspot: {m5.xlarge: 0.05}\n")
    pricing = AwsPricing(make_api(), load_price_file(str(path)))
    assert pricing.node_price(_node("m5.xlarge"), 0.0, HOUR) == 0.2
    assert pricing.node_price(_node("m5.xlarge", **{"karpenter.sh/capacity-type": "spot"}), 0.0, HOUR) == 0.05
    assert sum(proxy.seen.values()) == 0
    pod = Pod("p", containers=(Container("c", Resources({"cpu": 1000, "memory": 1024**3})),))
    assert pricing.pod_price(pod, 0.0, HOUR) == pytest.approx(0.033174 + 0.004446)


def test_a_bad_price_file_is_named(tmp_path: Path) -> None:
    path = tmp_path / "prices.yaml"
    path.write_text("onDemand: {m5.xlarge: cheap}\n")
    with pytest.raises(AwsConfigError) as err:
        build_aws_provider(["0:1:g"], region="us-east-1", price_file=str(path))
    assert err.value.errors == [
        ("aws-price-file", f"{path}: onDemand.m5.xlarge: must be a non-negative number, got 'cheap'")
    ]


def test_a_non_utf8_price_file_and_a_bad_endpoint_are_named_not_tracebacks(tmp_path: Path) -> None:
    path = tmp_path / "prices.yaml"
    path.write_bytes(b"onDemand: {m5.xlarge: \xff}\n")
    with pytest.raises(AwsConfigError) as err:
        build_aws_provider(["0:1:g"], region="us-east-1", price_file=str(path), endpoint_url="notaurl")
    assert err.value.errors == [
        ("aws-price-file", f"{path}: cannot read: not UTF-8 text"),
        ("aws-endpoint-url", "must be an http:// or https:// URL like http://127.0.0.1:5000, got 'notaurl'"),
    ]
