"""What a log line must never carry: credentials, replaced by ``[REDACTED]`` before any handler writes.

Every handler the commands install gets :class:`RedactingFilter`. It renders the record's message (and
its traceback, stack and string ``extra`` fields) and removes two kinds of secret:

- values known to be secret: the AWS credentials in the environment, and the kubeconfig's tokens,
  passwords and client keys (:func:`register_kubeconfig_secrets`), wherever they appear;
- secrets by their shape, for those no one told us about (credentials botocore fetches from IRSA, STS or
  the instance role, tokens an exec plugin returns): the values of ``Authorization``,
  ``X-Amz-Security-Token``, ``X-Amz-Signature``/``Credential`` (headers, canonical requests, signed
  URLs), ``SessionToken``/``SecretAccessKey`` in STS answers, bearer tokens, JWTs, EKS tokens
  (``k8s-aws-v1.``), AWS access key ids and PEM private keys.

So a library asked for DEBUG (``--library-log-level=debug``: botocore logs every signed request) still
writes no secret. Over-redacting a harmless value is the accepted cost.
"""

from __future__ import annotations

import logging
import os
import re
import threading
from collections.abc import Iterable
from typing import Any

__all__ = [
    "REDACTED",
    "RedactingFilter",
    "install",
    "redact",
    "register_environment_secrets",
    "register_kubeconfig_secrets",
    "register_secret",
]

REDACTED = "[REDACTED]"
_MIN_SECRET_LEN = 8  # shorter values would redact ordinary words (moto's dummy "testing")
_ENV_SECRETS = (
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_SECURITY_TOKEN",
    "AWS_CONTAINER_AUTHORIZATION_TOKEN",
)
# Names whose value is a secret, in headers (``Name: value``), dict reprs (``'Name': b'value'``),
# query strings (``Name=value``) and YAML/JSON (``name: value``).
_SECRET_NAMES = (
    r"x-amz-security-token|x-amz-signature|x-amz-credential|authorization|proxy-authorization|"
    r"x-aws-ec2-metadata-token|cookie|set-cookie|aws_secret_access_key|aws_session_token|"
    r"aws_security_token|secretaccesskey|sessiontoken|securitytoken|webidentitytoken|"
    r"client-key-data|client_key_data|id-token|refresh-token|access-token|token|password|"
    r"signature|credential"
)
_QUOTED = re.compile(rf"""(?ix)(["']?\b(?:{_SECRET_NAMES})\b["']?\s*[:=]\s*b?)(["'])(?:(?!\2).)*\2""")
_UNQUOTED = re.compile(
    rf"""(?i)(\b(?:{_SECRET_NAMES})\b\s*[:=]\s*)(?!\[REDACTED\])"""
    rf"""(?:(?:bearer|basic|aws4-hmac-sha256)\s+)?(?![\s"'])[^\s&,;"'<>}}\]]+"""
)
_SHAPES = (
    # STS and IMDS answers: <SessionToken>...</SessionToken>, "SecretAccessKey": "..."
    (
        re.compile(r"(?is)(<(SecretAccessKey|SessionToken|Token|WebIdentityToken)>).*?(</\2>)"),
        rf"\1{REDACTED}\3",
    ),
    (re.compile(r"(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]{8,}"), rf"\1 {REDACTED}"),
    (re.compile(r"\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*"), REDACTED),  # a JWT
    (re.compile(r"\bk8s-aws-v1\.[A-Za-z0-9_=-]+"), REDACTED),  # `aws eks get-token`
    (re.compile(r"\b(?:AKIA|ASIA|AROA|AIDA)[A-Z0-9]{12,}\b"), REDACTED),  # access key ids
    (
        re.compile(r"(?s)-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(-----END [A-Z ]*PRIVATE KEY-----|$)"),
        REDACTED,
    ),
    # botocore.auth logs the request signature alone on the line after "Signature:".
    (re.compile(r"(?i)(signature:\s*)[0-9a-f]{64}"), rf"\1{REDACTED}"),
)

_lock = threading.Lock()
_known: frozenset[str] = frozenset()
_known_pattern: re.Pattern[str] | None = None


def register_secret(value: object) -> None:
    """Redact ``value`` wherever it appears in a log line from now on (short values are ignored)."""
    global _known, _known_pattern
    if not isinstance(value, str) or len(value.strip()) < _MIN_SECRET_LEN:
        return
    with _lock:
        if value in _known:
            return
        _known = _known | {value, value.strip()}
        # Longest first, so a secret containing another is removed whole.
        ordered = sorted(_known, key=len, reverse=True)
        _known_pattern = re.compile("|".join(re.escape(v) for v in ordered))


def register_environment_secrets(environ: dict[str, str] | None = None) -> None:
    env = os.environ if environ is None else environ
    for name in _ENV_SECRETS:
        register_secret(env.get(name))


def register_kubeconfig_secrets(config: Any) -> None:
    """The secrets of every user of a lightkube ``KubeConfig`` (tokens, passwords, client keys, the
    auth provider's tokens, an exec plugin's environment)."""
    for user in (getattr(config, "users", None) or {}).values():
        for attr in ("token", "password", "client_key_data"):
            register_secret(getattr(user, attr, None))
        token_file = getattr(user, "token_file", None)
        if token_file:  # the in-cluster token (rotated ones are caught by their JWT shape)
            try:
                with open(token_file, encoding="utf-8") as f:
                    register_secret(f.read(65536))
            except (OSError, UnicodeDecodeError):
                pass
        _register_nested(getattr(user, "auth_provider", None))
        exec_config = getattr(user, "exec", None)
        for item in getattr(exec_config, "env", None) or ():
            register_secret(getattr(item, "value", None))


def _register_nested(value: object) -> None:
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(item, str) and re.search(r"(?i)token|secret|password|key", str(key)):
                register_secret(item)
            else:
                _register_nested(item)
    elif isinstance(value, list):
        for item in value:
            _register_nested(item)


def redact(text: str) -> str:
    """``text`` with every known secret and every secret-shaped value replaced by ``[REDACTED]``."""
    pattern = _known_pattern
    if pattern is not None:
        text = pattern.sub(REDACTED, text)
    text = _QUOTED.sub(rf"\1\2{REDACTED}\2", text)
    text = _UNQUOTED.sub(rf"\1{REDACTED}", text)
    for shape, replacement in _SHAPES:
        text = shape.sub(replacement, text)
    return text


_STANDARD = frozenset(vars(logging.makeLogRecord({})).keys()) | {"message", "asctime"}
_PLAIN = logging.Formatter()


class RedactingFilter(logging.Filter):
    """Rewrites each record in place, secrets removed; never drops one."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a bad format string: keep what there is, as logging would show it
            message = f"{record.msg!r} {record.args!r}"
        record.msg, record.args = redact(message), None
        if record.exc_info and not record.exc_text:
            record.exc_text = _PLAIN.formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact(record.exc_text)
        if record.stack_info:
            record.stack_info = redact(record.stack_info)
        for key, value in list(vars(record).items()):
            if key not in _STANDARD and not key.startswith("_"):
                setattr(record, key, _redact_value(value))
        return True


def _redact_value(value: object) -> object:
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {k: _redact_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_redact_value(v) for v in value]
    return value


def install(handlers: Iterable[logging.Handler]) -> None:
    """Add the filter to each handler (once) and register the environment's AWS secrets."""
    register_environment_secrets()
    for handler in handlers:
        if not any(isinstance(f, RedactingFilter) for f in handler.filters):
            handler.addFilter(RedactingFilter())
