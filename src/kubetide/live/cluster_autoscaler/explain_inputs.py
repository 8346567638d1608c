"""What ``kubetide explain --cluster`` reads: a running cluster autoscaler's ``/debug/plan``, on its
``--address`` (directly, or through ``kubectl port-forward``). Read only: a GET, nothing written."""

from __future__ import annotations

import httpx2

from kubetide.cluster.explain import ExplanationFormatError
from kubetide.kube.urls import http_url_problem
from kubetide.live.cluster_autoscaler.published import PAGE_PATH, PublishedPage, read_page

__all__ = ["PlanPageUnreachable", "address_problem", "fetch_page"]


class PlanPageUnreachable(Exception):
    """The address did not answer as a cluster autoscaler's ``/debug/plan`` does."""


def address_problem(url: str) -> str | None:
    """Why ``url`` cannot be a kubetide's metrics address (``http(s)://host:port``), or None."""
    return http_url_problem(url, "http://127.0.0.1:8085", "the address alone")


def fetch_page(url: str, client: httpx2.Client | None = None) -> PublishedPage:
    where = f"{url.rstrip('/')}{PAGE_PATH}"
    own = client is None
    http = client or httpx2.Client(timeout=10.0)
    try:
        answer = http.get(where)
    except httpx2.HTTPError as exc:
        raise PlanPageUnreachable(f"{where}: {exc}") from None
    finally:
        if own:
            http.close()
    if answer.status_code != 200:
        raise PlanPageUnreachable(f"{where}: HTTP {answer.status_code}, not a cluster autoscaler's plan page")
    try:
        body = answer.json()
    except ValueError as exc:
        raise PlanPageUnreachable(f"{where}: not JSON ({exc})") from None
    try:
        return read_page(body, where)
    except ExplanationFormatError as exc:
        raise PlanPageUnreachable(str(exc)) from None
