"""Prices on AWS: on-demand from the Price List API (answered by the proxy: moto has none), spot from
moto's DescribeSpotPriceHistory, a user file first, and never an invented price."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from prometheus_client import REGISTRY

from kubetide.cloud.instance import CloudProviderError
from kubetide.commands.run.aws import check_at_start
from kubetide.commands.run.aws_watch import AwsLoopReport
from kubetide.live.providers.aws import AwsApi, AwsCloudProvider, AwsConfigError, build_aws_provider
from kubetide.live.providers.aws.pricing import AwsPricing, PriceFile, load_price_file
from kubetide.live.providers.aws.specs import ExplicitGroup
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


# --- groups the price expander cannot price (issue 29): named at start (refused), and while running


def _priced_provider(api: AwsApi, groups: list[str], overrides: PriceFile | None = None) -> AwsCloudProvider:
    provider = AwsCloudProvider(
        api, [ExplicitGroup(g, 0, 3) for g in groups], pricing=AwsPricing(api, overrides)
    )
    provider.refresh()
    return provider


def test_groups_without_a_price_are_named_with_the_reason(
    make_group: Callable[..., str], make_api: Callable[..., AwsApi], proxy: AwsProxy
) -> None:
    priced, bare = make_group(instance_type="m5.large"), make_group(instance_type="m5.xlarge")
    spot = make_group(
        instance_type="m5.large",
        tags={"k8s.io/cluster-autoscaler/node-template/label/eks.amazonaws.com/capacityType": "SPOT"},
    )
    proxy.prices["m5.large"] = 0.096
    provider = _priced_provider(make_api(), [priced, bare, spot])
    assert provider.unpriced_groups() == {
        bare: "no on-demand price for m5.xlarge in region us-east-1: the AWS Price List has none"
    }
    proxy.throttle["GetProducts"] = 100  # fails after botocore's retries: the reason is the error
    failing = _priced_provider(make_api(max_attempts=1), [bare])
    (why,) = failing.unpriced_groups().values()
    assert why.startswith(
        "no on-demand price for m5.xlarge in region us-east-1: GetProducts: ThrottlingException"
    )


def test_the_price_expander_refuses_to_start_until_every_group_has_a_price(
    tmp_path: Path,
    make_group: Callable[..., str],
    make_api: Callable[..., AwsApi],
    proxy: AwsProxy,
    capsys: pytest.CaptureFixture[str],
) -> None:
    bare = make_group(instance_type="m5.xlarge")
    provider = _priced_provider(make_api(), [bare])
    with pytest.raises(SystemExit) as exit_:
        check_at_start("cluster-autoscaler", provider, group_sources={}, missing_is_fatal=True, priced=True)
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert f"--expander: price: node group {bare} has no price (no on-demand price for m5.xlarge" in err
    assert "--aws-price-file" in err and "Traceback" not in err
    # Without the price expander nothing is asked; with a price file the group is priced.
    check_at_start("cluster-autoscaler", provider, group_sources={}, missing_is_fatal=True, priced=False)
    path = tmp_path / "prices.yaml"
    path.write_text("onDemand: {m5.xlarge: 0.192}\n")
    check_at_start(
        "cluster-autoscaler",
        _priced_provider(make_api(), [bare], load_price_file(str(path))),
        group_sources={},
        missing_is_fatal=True,
        priced=True,
    )


def test_while_running_a_group_without_a_price_is_logged_evented_and_counted(
    make_group: Callable[..., str], make_api: Callable[..., AwsApi], proxy: AwsProxy
) -> None:
    bare = make_group(instance_type="m5.xlarge")
    provider = _priced_provider(make_api(), [bare])
    events: list[tuple[str, str, str]] = []
    report = AwsLoopReport(provider, priced=True, emit=lambda *e: events.append(e))
    report.after_loop()
    report.after_loop()  # nothing new: no second Event
    assert [(t, r) for t, r, _ in events] == [("Warning", "NodeGroupWithoutPrice")]
    assert f"node group {bare} has no price, so it is never chosen" in events[0][2]
    assert REGISTRY.get_sample_value("kubetide_aws_node_group_without_price", {"node_group": bare}) == 1.0


def test_a_non_utf8_price_file_and_a_bad_endpoint_are_named_not_tracebacks(tmp_path: Path) -> None:
    path = tmp_path / "prices.yaml"
    path.write_bytes(b"onDemand: {m5.xlarge: \xff}\n")
    with pytest.raises(AwsConfigError) as err:
        build_aws_provider(["0:1:g"], region="us-east-1", price_file=str(path), endpoint_url="notaurl")
    assert err.value.errors == [
        ("aws-price-file", f"{path}: cannot read: not UTF-8 text"),
        ("aws-endpoint-url", "must be an http:// or https:// URL like http://127.0.0.1:5000, got 'notaurl'"),
    ]
