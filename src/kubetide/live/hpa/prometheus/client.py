"""A small Prometheus HTTP API client: instant queries and series lookups, retried with backoff.

Transport failures, timeouts and 5xx/429 answers are retried (``retries`` times, the wait doubling
from ``backoff_s``); a query Prometheus rejects (4xx, ``status: error``) is not, since asking again
gives the same answer. Whatever still fails is a :class:`PrometheusError`, which the metrics source
turns into the controller's MetricsError. ``sleep`` is injectable so tests never sleep.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import httpx2

from kubetide.kube.urls import http_url_problem

__all__ = ["PrometheusClient", "PrometheusError", "Sample", "url_problem"]

DEFAULT_TIMEOUT_S = 10.0


def url_problem(url: str) -> str | None:
    """Why ``url`` cannot be a Prometheus server's base URL (``http(s)://host[:port][/prefix]``), or
    None. Checked at start: a typo must exit 2 rather than fail every query later."""
    return http_url_problem(url, "http://prometheus:9090", "Prometheus' base URL")


class PrometheusError(Exception):
    """A query failed; the message says how (after the retries, for transient failures)."""


@dataclass(frozen=True, slots=True)
class Sample:
    """One element of an instant vector."""

    labels: Mapping[str, str]
    timestamp: float  # seconds since the epoch
    value: float


class PrometheusClient:
    def __init__(
        self,
        url: str = "",
        *,
        http: httpx2.Client | None = None,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        retries: int = 3,
        backoff_s: float = 0.5,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.url = url.rstrip("/")
        self.http = http if http is not None else httpx2.Client(base_url=self.url, timeout=timeout_s)
        self.retries, self.backoff_s, self.sleep = retries, backoff_s, sleep

    def query(self, promql: str) -> list[Sample]:
        """An instant query (POSTed: pod lists make long queries); only vector results are accepted."""
        data = self._call("/api/v1/query", {"query": promql})
        if not isinstance(data, dict) or data.get("resultType") != "vector":
            kind = data.get("resultType") if isinstance(data, dict) else type(data).__name__
            raise PrometheusError(f"query {promql!r} returned a {kind}, not an instant vector")
        samples = []
        for item in data.get("result") or []:
            try:
                ts, text = item["value"]
                value = float(text)
            except (KeyError, TypeError, ValueError) as exc:
                raise PrometheusError(f"malformed sample in the result of {promql!r}: {exc}") from None
            if not math.isnan(value):  # a NaN (0/0 rate) is no sample, as the adapter drops it
                samples.append(Sample(dict(item.get("metric") or {}), float(ts), value))
        return samples

    def series(self, match: str) -> list[Mapping[str, str]]:
        """The label sets of the series ``match`` selects (for naming rules' metrics)."""
        data = self._call("/api/v1/series", {"match[]": match})
        if not isinstance(data, list):
            raise PrometheusError(f"series {match!r}: the answer is not a list")
        return [dict(s) for s in data if isinstance(s, dict)]

    def _call(self, path: str, form: dict[str, str]) -> Any:
        wait = self.backoff_s
        for attempt in range(self.retries + 1):
            try:
                response = self.http.post(path, data=form)
            except httpx2.HTTPError as exc:
                problem = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
            else:
                if response.status_code < 500 and response.status_code != 429:
                    return _data(response, form)
                problem = f"HTTP {response.status_code}: {_error_text(response)}"
            if attempt < self.retries:
                self.sleep(wait)
                wait *= 2
        raise PrometheusError(f"{self.url}{path} failed after {self.retries + 1} attempts: {problem}")


def _data(response: httpx2.Response, form: dict[str, str]) -> Any:
    try:
        body = response.json()
    except ValueError:
        raise PrometheusError(f"HTTP {response.status_code}: the answer is not JSON") from None
    if response.status_code >= 400 or body.get("status") != "success":
        query = form.get("query") or form.get("match[]")
        raise PrometheusError(
            f"{query!r}: {body.get('errorType', 'error')}: {body.get('error', response.status_code)}"
        )
    return body.get("data")


def _error_text(response: httpx2.Response) -> str:
    try:
        return str(response.json().get("error", response.text[:200]))
    except (ValueError, AttributeError):
        return response.text[:200]
