"""What ``kubetide explain --cluster`` reads: a running cluster autoscaler's ``/debug/plan``, on its
``--address`` (directly, or through ``kubectl port-forward``). Read only: a GET, nothing written."""

from __future__ import annotations

from urllib.parse import urlsplit

import httpx2

from kubetide.cluster.explain import ExplanationFormatError
from kubetide.live.cluster_autoscaler.published import PAGE_PATH, PublishedPage, read_page

__all__ = ["PlanPageUnreachable", "address_problem", "fetch_page"]


class PlanPageUnreachable(Exception):
    """The address did not answer as a cluster autoscaler's ``/debug/plan`` does."""


def address_problem(url: str) -> str | None:
    """Why ``url`` cannot be a kubetide's metrics address (``http(s)://host:port``), or None."""
    try:
        parts = urlsplit(url)
        port = parts.port  # ValueError when the port is not a number in range
    except ValueError as exc:
        return f"must be an http:// or https:// URL like http://127.0.0.1:8085 ({exc})"
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return "must be an http:// or https:// URL like http://127.0.0.1:8085"
    if parts.query or parts.fragment:
        return "must be the address alone, without a query or fragment"
    del port
    return None


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
