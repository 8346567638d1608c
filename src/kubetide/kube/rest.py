"""Raw JSON access to the API server: requests, watch streams, status errors, retries with backoff.

Why raw JSON and not lightkube's typed models: the views the cores read
(:meth:`kubetide.model.pod.Pod.from_manifest`) parse plain manifests, so a typed model would be built
only to be turned back into a dict. Measured on 30,000 realistic pods (``python -m kubetide.bench
live``, figures in the README of that suite): lightkube's typed decoding plus the conversion back to
dicts costs about what decoding everything as dicts with msgspec costs, and decoding with a schema of
only the kept fields (:mod:`kubetide.kube.schema`) about a fifth of either; so the caches read raw
bytes and decode with their schema. lightkube still provides the configuration and authentication
(:func:`kubetide.kube.client.make_http_client`).

Errors: every failure is a :class:`KubeStatusError` with the HTTP status (0 for a transport failure:
refused or reset connection, timeout) and the API's ``Status.reason``; each failed attempt is counted
in ``kubetide_api_errors_total{resource,reason}``. :func:`retrying` retries what is worth retrying
(transport failures, 429, 5xx) with capped exponential backoff and jitter.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any, TypeVar

import httpx2
import msgspec

from kubetide.kube.metrics import API_ERRORS
from kubetide.model.numbers import is_ascii_digits

__all__ = ["Backoff", "KubeStatusError", "Rest", "resource_of", "retrying"]

log = logging.getLogger(__name__)
T = TypeVar("T")
Json = dict[str, Any]

MERGE_PATCH = "application/merge-patch+json"
STRATEGIC_PATCH = "application/strategic-merge-patch+json"
_decode = msgspec.json.decode
_encode = msgspec.json.encode


class KubeStatusError(Exception):
    """A failed request: ``status`` is the HTTP status (0: no response), ``reason`` the Status reason."""

    def __init__(
        self, status: int, reason: str, message: str = "", retry_after: float | None = None, body: str = ""
    ):
        detail = message or body
        super().__init__(f"{status} {reason}: {detail}" if detail else f"{status} {reason}")
        self.status, self.reason, self.message, self.retry_after = status, reason, message, retry_after
        self.body = body  # a response that was not a Status, for logs

    @property
    def retriable(self) -> bool:
        return self.status == 0 or self.status == 429 or self.status >= 500


class Backoff:
    """Capped exponential backoff with jitter (client-go's wait.Backoff shape): base * factor**n, capped,
    each delay stretched by up to ``jitter`` of itself so replicas that failed together spread out."""

    def __init__(
        self,
        base: float = 0.5,
        cap: float = 30.0,
        factor: float = 2.0,
        jitter: float = 0.5,
        rng: Callable[[], float] = random.random,
    ):
        self.base, self.cap, self.factor, self.jitter, self._rng = base, cap, factor, jitter, rng
        self._n = 0

    def next(self) -> float:
        delay = min(self.cap, self.base * self.factor**self._n)
        self._n += 1
        return delay * (1 + self.jitter * self._rng())

    def reset(self) -> None:
        self._n = 0


def resource_of(path: str) -> str:
    """The resource a path names (``pods``, ``pods/eviction``, ``nodes``): the metrics' label."""
    parts = path.split("?")[0].strip("/").split("/")
    parts = parts[2:] if parts[:1] == ["api"] else parts[3:]
    if parts[:1] == ["namespaces"] and len(parts) > 2:
        parts = parts[2:]
    if not parts:
        return "discovery"
    return parts[0] + (f"/{parts[2]}" if len(parts) > 2 else "")


class Rest:
    """Requests on one httpx client (lightkube's, or a MockTransport's in tests)."""

    def __init__(self, http: httpx2.Client):
        self.http = http

    def request(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, str | int] | None = None,
        body: Any = None,
        content_type: str = "application/json",
        timeout: float | None = None,
    ) -> Json:
        """One request; the decoded JSON body. KubeStatusError on failure (counted)."""
        content = self.request_bytes(
            method, path, params=params, body=body, content_type=content_type, timeout=timeout
        )
        result: Json = _decode(content) if content else {}
        return result

    def request_bytes(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, str | int] | None = None,
        body: Any = None,
        content_type: str = "application/json",
        timeout: float | None = None,
    ) -> bytes:
        """One request; the raw body, for callers that decode with a schema (the caches)."""
        content = None if body is None else _encode(body)
        headers = {"Content-Type": content_type} if content is not None else {}
        kwargs: dict[str, Any] = {} if timeout is None else {"timeout": timeout}
        try:
            resp = self.http.request(
                method, path, params=dict(params or {}), content=content, headers=headers, **kwargs
            )
        except httpx2.HTTPError as exc:
            raise self._failed(path, KubeStatusError(0, type(exc).__name__, str(exc))) from exc
        if resp.status_code >= 400:
            raise self._failed(path, _status_error(resp.status_code, resp.content, resp.headers))
        return resp.content

    def watch(
        self,
        path: str,
        params: Mapping[str, str | int],
        timeout: float,
        on_open: Callable[[httpx2.Response], None] | None = None,
    ) -> Iterator[str]:
        """The events of a watch stream, one JSON line each, until the server ends it.

        ``timeout`` bounds the wait for each chunk, so a silently dead connection is noticed.
        ``on_open`` receives the response, so another thread can close it to stop the watch at once."""
        try:
            with self.http.stream(
                "GET", path, params={**params, "watch": "true"}, timeout=httpx2.Timeout(10.0, read=timeout)
            ) as resp:
                if on_open is not None:
                    on_open(resp)
                if resp.status_code >= 400:
                    resp.read()
                    raise self._failed(path, _status_error(resp.status_code, resp.content, resp.headers))
                for line in resp.iter_lines():
                    if line:
                        yield line
        except httpx2.HTTPError as exc:
            raise self._failed(path, KubeStatusError(0, type(exc).__name__, str(exc))) from exc

    @staticmethod
    def _failed(path: str, err: KubeStatusError) -> KubeStatusError:
        API_ERRORS.labels(resource=resource_of(path), reason=err.reason).inc()
        return err


def _status_error(code: int, content: bytes, headers: Mapping[str, str]) -> KubeStatusError:
    reason, message = "", ""
    try:
        status = _decode(content)
        if isinstance(status, dict):
            reason, message = str(status.get("reason", "")), str(status.get("message", ""))
    except msgspec.DecodeError:
        # Not a Status (a proxy's page, a bare text): callers word it by the code, as client-go does;
        # the body is kept for logs.
        body = content[:200].decode(errors="replace")
        return KubeStatusError(code, f"HTTP{code}", "", _retry_after(headers), body=body)
    return KubeStatusError(code, reason or f"HTTP{code}", message, _retry_after(headers))


def _retry_after(headers: Mapping[str, str]) -> float | None:
    value = headers.get("Retry-After", "")
    return float(value) if is_ascii_digits(value) else None


def retrying(
    fn: Callable[[], T],
    *,
    attempts: int = 5,
    backoff: Backoff | None = None,
    sleep: Callable[[float], None] = time.sleep,
    retry_on: Callable[[KubeStatusError], bool] = lambda e: e.retriable,
) -> T:
    """``fn()``, retried on the errors ``retry_on`` accepts, up to ``attempts`` calls in all."""
    backoff = backoff or Backoff(base=0.2, cap=5.0)
    for attempt in range(1, attempts + 1):
        try:
            return fn()
        except KubeStatusError as err:
            if attempt == attempts or not retry_on(err):
                raise
            delay = err.retry_after if err.retry_after is not None else backoff.next()
            log.info("retrying after %s (attempt %d of %d, in %.2fs)", err, attempt, attempts, delay)
            sleep(delay)
    raise AssertionError("unreachable")
