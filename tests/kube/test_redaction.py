"""No secret in any log line at any level, and ``-v`` as kubetide's own verbosity (issue 29).

The shapes are those botocore, STS, IMDS, kubeconfig readers and exec plugins really print; the values
known as secrets (the environment's AWS credentials, the kubeconfig's token) are removed wherever they
appear, the others by their shape.
"""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from kubetide.commands.run.logs import configure_logging
from kubetide.kube import redaction
from kubetide.kube.client import load_kubeconfig
from kubetide.kube.redaction import REDACTED, redact, register_secret

TOKEN = "IQoJb3JpZ2luX2VjEXAMPLESESSIONTOKEN0123456789"


@pytest.fixture
def logging_restored() -> Iterator[None]:
    root = logging.getLogger()
    saved = (list(root.handlers), root.level, logging.getLogger("kubetide").level)
    yield
    root.handlers[:] = saved[0]
    root.setLevel(saved[1])
    logging.getLogger("kubetide").setLevel(saved[2])


@pytest.mark.parametrize(
    ("line", "kept"),
    [
        # botocore.auth's canonical request and the prepared request's headers
        (f"host:127.0.0.1:5000\nx-amz-date:20261127T230250Z\nx-amz-security-token:{TOKEN}\n", "x-amz-date"),
        (
            f"headers={{'X-Amz-Date': b'20261127T230250Z', 'X-Amz-Security-Token': b'{TOKEN}', "
            "'Authorization': b'AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20261127/us-east-1/"
            "autoscaling/aws4_request, SignedHeaders=host, Signature=0123abcd'}",
            "X-Amz-Date",
        ),
        ("Signature:\n1ff52396594bfd84c8cdbfc7feaaac9714ac14c683c7a06d06fe8bcb39590ffb", "Signature"),
        # a presigned URL
        (
            "GET https://sts.amazonaws.com/?Action=GetCallerIdentity&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F"
            f"20261127&X-Amz-Security-Token={TOKEN}&X-Amz-Signature=abcdef0123",
            "Action=GetCallerIdentity",
        ),
        # STS and IMDS answers
        (
            f"<Credentials><AccessKeyId>ASIAEXAMPLEKEY123456</AccessKeyId><SecretAccessKey>wJalrXUtnFEMI/K7MDENG"
            f"</SecretAccessKey><SessionToken>{TOKEN}</SessionToken></Credentials>",
            "<Credentials>",
        ),
        (f'{{"Code": "Success", "SecretAccessKey": "wJalrXUtnFEMI/K7MDENG", "Token": "{TOKEN}"}}', "Success"),
        # kubeconfig users, HTTP headers, exec plugin tokens, service account JWTs, keys
        (f"user: {{token: {TOKEN}}}", "user"),
        ("Authorization: Bearer abcdefghijklmnop.qrstuvwxyz", "Authorization"),
        (
            "got k8s-aws-v1.aHR0cHM6Ly9zdHMuYW1hem9uYXdzLmNvbS8_QWN0aW9uPUdldENhbGxlcklkZW50aXR5 from exec",
            "exec",
        ),
        ("token eyJhbGciOiJSUzI1NiIsImtpZCI6IkFCQyJ9.eyJpc3MiOiJrdWJlcm5ldGVzIn0.c2lnbmF0dXJl", "token"),
        ("-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\n-----END RSA PRIVATE KEY-----", ""),
    ],
)
def test_secret_shapes_are_redacted(line: str, kept: str) -> None:
    out = redact(line)
    for secret in (
        TOKEN,
        "AKIAIOSFODNN7EXAMPLE",
        "ASIAEXAMPLEKEY123456",
        "wJalrXUtnFEMI",
        "0123abcd",
        "abcdef0123",
        "abcdefghijklmnop",
        "aHR0cHM6Ly9zdHMu",
        "eyJhbGciOiJSUzI1NiIs",
        "MIIEpAIBAAKCAQEA",
        "1ff52396594bfd84",
    ):
        assert secret not in out, out
    assert REDACTED in out and kept in out


@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=40))
def test_a_registered_secret_never_survives(prefix: str) -> None:
    secret = "s3cr3t-registered-VALUE-9f8e7d"
    register_secret(secret)
    assert secret not in redact(f"{prefix}{secret}{prefix}")


def test_the_kubeconfig_s_credentials_are_registered(tmp_path: Path) -> None:
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "c", "cluster": {"server": "https://127.0.0.1:1"}}],
        "users": [
            {"name": "t", "user": {"token": "plain-kubeconfig-token-4711"}},
            {"name": "p", "user": {"username": "admin", "password": "hunter2hunter2"}},
        ],
        "contexts": [{"name": "c", "context": {"cluster": "c", "user": "t"}}],
        "current-context": "c",
    }
    path = tmp_path / "kubeconfig"
    path.write_text(yaml.safe_dump(config))
    load_kubeconfig(str(path))
    assert redact("sent plain-kubeconfig-token-4711 and hunter2hunter2") == f"sent {REDACTED} and {REDACTED}"


def test_v_is_kubetide_s_verbosity_and_libraries_stay_at_warning(logging_restored: None) -> None:
    stream = io.StringIO()
    configure_logging("text", 10, "ca", stream)
    logging.getLogger("botocore.endpoint").debug("Sending http request")
    logging.getLogger("httpx2").info("HTTP Request: GET")
    logging.getLogger("kubetide.live.providers.aws.provider").debug("aws refresh: 3 groups")
    logging.getLogger("urllib3").warning("a library warning")
    out = stream.getvalue()
    assert "aws refresh: 3 groups" in out and "a library warning" in out
    assert "Sending http request" not in out and "HTTP Request" not in out
    configure_logging("text", 2, "ca", stream, library_level="debug")
    logging.getLogger("kubetide.run").debug("own debug line")
    logging.getLogger("botocore.endpoint").debug("library debug line")
    out = stream.getvalue()
    assert "library debug line" in out and "own debug line" not in out


def test_every_part_of_a_record_is_redacted(logging_restored: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "env-secret-access-key-123456")
    stream = io.StringIO()
    configure_logging("json", 4, "ca", stream)
    log = logging.getLogger("kubetide.test")
    log.info(
        "key %s", "env-secret-access-key-123456", extra={"detail": {"auth": f"x-amz-security-token={TOKEN}"}}
    )
    try:
        raise RuntimeError(f"failed with token={TOKEN}")
    except RuntimeError:
        log.exception("boom")
    lines = [json.loads(line) for line in stream.getvalue().splitlines()]
    text = json.dumps(lines)
    assert "env-secret-access-key-123456" not in text and TOKEN not in text
    assert lines[0]["msg"] == f"key {REDACTED}"
    assert "RuntimeError: failed with token=[REDACTED]" in lines[1]["error"]
    redaction.register_environment_secrets({})  # no-op on an empty environment
