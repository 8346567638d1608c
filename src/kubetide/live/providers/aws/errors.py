"""What went wrong with an AWS call, in one line a user can act on.

Every exception boto3 raises while calling or answering (botocore's ``ClientError`` and
``BotoCoreError`` families, its ``ResponseParserError``, which is neither, urllib3's, and a malformed
answer our conversion trips on) becomes one :class:`AwsCallError`: the AWS operation, AWS's error code
(or the exception's name) and a message that says what to check: credentials, region, endpoint,
permission. Nothing else leaves the provider.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import boto3
from botocore.exceptions import BotoCoreError, ClientError

__all__ = ["AwsCallError", "aws_errors", "operation_name"]

_CREDENTIALS_MISSING = frozenset(
    {"NoCredentialsError", "PartialCredentialsError", "CredentialRetrievalError", "NoAuthTokenError"}
)
_CREDENTIALS_REJECTED = frozenset(
    {
        "UnrecognizedClientException",
        "InvalidClientTokenId",
        "SignatureDoesNotMatch",
        "InvalidSignatureException",
        "ExpiredToken",
        "ExpiredTokenException",
        "RequestExpired",
        "AuthFailure",
        "IncompleteSignature",
        "MissingAuthenticationToken",
    }
)
_DENIED = frozenset({"AccessDenied", "AccessDeniedException", "UnauthorizedOperation"})
_UNREACHABLE = frozenset(
    {
        "EndpointConnectionError",
        "ConnectTimeoutError",
        "ConnectionClosedError",
        "ReadTimeoutError",
        "ProxyConnectionError",
        "SSLError",
        "HTTPClientError",
        "EndpointResolutionError",
    }
)


def operation_name(method: str) -> str:
    """boto3's method name as AWS names the operation (``describe_auto_scaling_groups`` ->
    ``DescribeAutoScalingGroups``)."""
    return "".join(part[:1].upper() + part[1:] for part in method.split("_"))


class AwsCallError(Exception):
    """An AWS call failed after botocore's retries; ``code`` is AWS's error code (or the exception's
    name); ``str()`` is one line saying what went wrong and what to check."""

    def __init__(self, operation: str, code: str, message: str, *, hint: str = "") -> None:
        self.operation = operation
        self.code = code
        self.detail = message
        self.hint = hint
        super().__init__(self._line())

    def _line(self) -> str:
        what = f"{self.operation}: {self.code}" + (f": {self.detail}" if self.detail else "")
        return f"{self.hint} ({what})" if self.hint else what


def _region_hint(region: str, endpoint: str) -> str:
    if not region:
        return ""
    known = set()
    session = boto3.session.Session()
    for partition in session.get_available_partitions():
        known.update(session.get_available_regions("autoscaling", partition))
    if region not in known and "amazonaws.com" in endpoint:
        return f"; region {region!r} is not one botocore knows: is --aws-region right?"
    return ""


def _hint(code: str, operation: str, service: str, region: str, endpoint: str) -> str:
    if code in _CREDENTIALS_MISSING:
        return (
            "no usable AWS credentials (looked in the environment, the shared files, the pod's web "
            "identity token and the instance role)"
        )
    if code in _CREDENTIALS_REJECTED:
        return f"AWS rejected the credentials at {endpoint or 'the endpoint'}"
    if code in _DENIED:
        return f"not allowed: {service}:{operation} (see the README's IAM policy)"
    if code in _UNREACHABLE:
        return f"cannot reach the AWS endpoint {endpoint or '(default)'}{_region_hint(region, endpoint)}"
    if code == "InvalidRegionError":
        return f"invalid AWS region {region!r}"
    if code == "ResponseParserError":
        return f"the endpoint {endpoint or '(default)'} did not answer as AWS does"
    if code == "MalformedAnswer":
        return "AWS's answer lacked a field kubetide needs"
    return ""


@contextmanager
def aws_errors(method: str, client: object = None, *, region: str = "") -> Iterator[None]:
    """Any failure of the call ``method`` (and of reading its answer) as :class:`AwsCallError`."""
    operation = operation_name(method)
    meta = getattr(client, "meta", None)
    endpoint = str(getattr(meta, "endpoint_url", "") or "")
    service = str(getattr(getattr(meta, "service_model", None), "signing_name", "") or "")

    def error(code: str, message: str) -> AwsCallError:
        hint = _hint(code, operation, service, region, endpoint)
        return AwsCallError(operation, code, " ".join(message.split()), hint=hint)

    try:
        yield
    except AwsCallError:
        raise
    except ClientError as exc:
        err = exc.response.get("Error", {})
        raise error(str(err.get("Code", "")) or type(exc).__name__, str(err.get("Message", ""))) from exc
    except BotoCoreError as exc:
        raise error(type(exc).__name__, str(exc)) from exc
    except (KeyError, TypeError, ValueError) as exc:  # our reading of an answer that lacks a field
        raise error("MalformedAnswer", f"{type(exc).__name__}: {exc}") from exc
    except Exception as exc:
        # botocore's ResponseParserError is no BotoCoreError; urllib3's errors may pass through too.
        if not type(exc).__module__.startswith(("botocore", "boto3", "urllib3")) and not isinstance(
            exc, OSError
        ):
            raise
        raise error(type(exc).__name__, str(exc)) from exc
