"""The ``aws`` cloud provider: Auto Scaling groups behind CA's NodeGroup interface, on boto3.

For the integrator: ``build_aws_provider(nodes, auto_discovery, region=..., endpoint_url=...)`` from the
``--nodes``, ``--node-group-auto-discovery``, ``--aws-region`` and ``--aws-endpoint-url`` flags; it raises
:class:`AwsConfigError` (exit 2, ``.errors`` lists every ``(flag, problem)``). boto3 is the optional
extra ``kubetide[aws]``: importing this package without it raises ImportError, which the commands turn
into a message naming the extra.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from urllib.parse import urlsplit

from kubetide.live.providers.aws.api import AwsApi, AwsCallError
from kubetide.live.providers.aws.pricing import AwsPricing, load_price_file
from kubetide.live.providers.aws.provider import (
    PLACEHOLDER_PREFIX,
    AwsCloudProvider,
    AwsNodeGroup,
    parse_provider_id,
    provider_id,
)
from kubetide.live.providers.aws.specs import (
    AwsConfigError,
    ExplicitGroup,
    parse_auto_discovery,
    parse_nodes,
)

__all__ = [
    "PLACEHOLDER_PREFIX",
    "AwsApi",
    "AwsCallError",
    "AwsCloudProvider",
    "AwsConfigError",
    "AwsNodeGroup",
    "AwsPricing",
    "build_aws_provider",
    "parse_provider_id",
    "provider_id",
    "resolve_region",
]


def resolve_region(flag: str = "") -> str:
    """The region: the flag, else ``AWS_REGION``, else ``AWS_DEFAULT_REGION`` ("" when none is set)."""
    return flag or os.environ.get("AWS_REGION", "") or os.environ.get("AWS_DEFAULT_REGION", "")


def build_aws_provider(
    nodes: Sequence[str] = (),
    auto_discovery: Sequence[str] = (),
    *,
    names: Sequence[str] = (),
    region: str = "",
    endpoint_url: str = "",
    price_file: str = "",
) -> AwsCloudProvider:
    """The provider for CA's group flags (``names``: groups whose bounds are the ASG's, for Escalator);
    the endpoint defaults to ``AWS_ENDPOINT_URL`` (moto in tests)."""
    explicit, problems = parse_nodes(nodes)
    explicit += [ExplicitGroup(n, None, None) for n in names if n not in {g.name for g in explicit}]
    discovery, more = parse_auto_discovery(auto_discovery)
    problems += more
    if not explicit and not discovery and not problems:
        problems.append(
            (
                "nodes",
                "the aws provider needs groups: --nodes=MIN:MAX:ASG or --node-group-auto-discovery=asg:tag=...",
            )
        )
    region = resolve_region(region)
    if not region:
        problems.append(("aws-region", "no AWS region: set --aws-region or AWS_REGION"))
    overrides = None
    if price_file:
        try:
            overrides = load_price_file(price_file)
        except AwsConfigError as exc:
            problems += exc.errors
    endpoint = endpoint_url or os.environ.get("AWS_ENDPOINT_URL") or None
    if endpoint is not None and (problem := _endpoint_problem(endpoint)):
        flag = "aws-endpoint-url" if endpoint_url else "aws-endpoint-url ($AWS_ENDPOINT_URL)"
        problems.append((flag, problem))
    if problems:
        raise AwsConfigError(problems)
    try:
        api = AwsApi(region=region, endpoint_url=endpoint)
    except AwsCallError as exc:  # botocore refuses the region's spelling before any call
        raise AwsConfigError([("aws-region", str(exc))]) from None
    return AwsCloudProvider(api, explicit, discovery, pricing=AwsPricing(api, overrides))


def _endpoint_problem(url: str) -> str | None:
    """Why botocore would refuse ``url`` as an endpoint (it raises a bare ValueError), or None."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return f"must be an http:// or https:// URL like http://127.0.0.1:5000, got {url!r}"
    return None
