"""``--cloud-provider=aws`` for the ``run`` commands: the flags kubetide adds, building the provider, and
the check at start.

CA's aws provider takes its region from the environment (``AWS_REGION``) and has no endpoint flag;
kubetide adds ``--aws-region`` and ``--aws-endpoint-url`` (also ``AWS_ENDPOINT_URL``, as the AWS SDKs
read it) so the same command runs against moto. Credentials come from boto3's usual chain (environment,
shared files, the instance or pod role), never from a flag.

At start one refresh checks credentials, region, endpoint and the named groups (:func:`check_at_start`):
an AWS call that fails exits 2, as CA's ``BuildAWS`` exits when its first refresh fails; a named group AWS
does not have exits 2 with ``--once`` (and always for Escalator, whose start-up fails on it), and is
otherwise reported in the log and the status while the process runs; with ``--expander=price`` a group
without a price exits 2 (README: "Prices").
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, NoReturn

from kubetide.cloud.provider import CloudProvider
from kubetide.cluster.flags import FlagSpec
from kubetide.commands.run.common import exit_invalid

if TYPE_CHECKING:
    from kubetide.live.providers.aws import AwsCloudProvider

__all__ = ["aws_flags", "build_aws", "check_at_start"]

log = logging.getLogger("kubetide.run")


def aws_flags() -> list[FlagSpec]:
    return [
        FlagSpec("aws-region", "string", "", "AWS region of the Auto Scaling groups (else $AWS_REGION)"),
        FlagSpec(
            "aws-endpoint-url",
            "string",
            "",
            "AWS API endpoint, e.g. a moto server for tests (else $AWS_ENDPOINT_URL, else AWS's)",
        ),
        FlagSpec(
            "aws-price-file",
            "string",
            "",
            "YAML {onDemand: {TYPE: USD/h}, spot: {...}} overriding the Price List and spot prices",
        ),
    ]


def _missing_extra(component: str) -> NoReturn:
    exit_invalid(
        component,
        [("cloud-provider", "aws needs boto3, which is not installed: pip install 'kubetide[aws]'")],
    )


def build_aws(
    component: str,
    *,
    nodes: Sequence[str] = (),
    auto_discovery: Sequence[str] = (),
    names: Sequence[str] = (),
    region: str = "",
    endpoint_url: str = "",
    price_file: str = "",
) -> AwsCloudProvider:
    """The aws provider, or exit 2 naming every bad flag (or the missing extra)."""
    try:
        from kubetide.live.providers.aws import AwsConfigError, build_aws_provider
    except ImportError:
        _missing_extra(component)
    try:
        return build_aws_provider(
            nodes,
            auto_discovery,
            names=names,
            region=region,
            endpoint_url=endpoint_url,
            price_file=price_file,
        )
    except AwsConfigError as exc:
        exit_invalid(component, exc.errors)


def check_at_start(
    component: str,
    provider: CloudProvider,
    *,
    group_sources: Mapping[str, str],
    missing_is_fatal: bool,
    priced: bool = False,
) -> None:
    """Exit 2 naming every problem the first refresh finds (see the module's docstring for which);
    ``group_sources`` says where each named group comes from (a flag, a file's field path)."""
    from kubetide.live.providers.aws import AwsCloudProvider

    if not isinstance(provider, AwsCloudProvider):
        return
    check = provider.startup_check()
    if check.failure:
        exit_invalid(component, [("--cloud-provider=aws", check.failure)])
    problems = [(group_sources.get(m.name, "nodes"), m.reason) for m in check.missing if missing_is_fatal]
    if check.missing and not missing_is_fatal:
        log.error(
            "%d named node group(s) do not exist; they stay registered, Unhealthy in the status, until "
            "AWS has them: %s",
            len(check.missing),
            ", ".join(m.name for m in check.missing),
        )
    if priced:
        problems += [
            (
                "expander",
                f"price: node group {group} has no price ({why}); give its instance type a price in "
                "--aws-price-file, or allow pricing:GetProducts and ec2:DescribeSpotPriceHistory",
            )
            for group, why in sorted(provider.unpriced_groups().items())
        ]
    if problems:
        exit_invalid(component, problems)
