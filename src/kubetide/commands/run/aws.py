"""``--cloud-provider=aws`` for the ``run`` commands: the flags kubetide adds, and building the provider.

CA's aws provider takes its region from the environment (``AWS_REGION``) and has no endpoint flag;
kubetide adds ``--aws-region`` and ``--aws-endpoint-url`` (also ``AWS_ENDPOINT_URL``, as the AWS SDKs
read it) so the same command runs against moto. Credentials come from boto3's usual chain (environment,
shared files, the instance or pod role), never from a flag.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NoReturn

from kubetide.cloud.provider import CloudProvider
from kubetide.cluster.flags import FlagSpec
from kubetide.commands.run.common import exit_invalid

__all__ = ["aws_flags", "build_aws"]


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
) -> CloudProvider:
    """The aws provider, or exit 2 naming every bad flag (or the missing extra)."""
    try:
        from kubetide.cloud.providers.aws import AwsConfigError, build_aws_provider
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
