"""GET and PUT of JSON documents for the HPA's live ports, with the messages client-go would print.

The HPA's ports read aggregated APIs (metrics.k8s.io, custom and external metrics), scale subresources
of any group and a CRD: typed models would buy nothing and lack v2beta2. Requests go through the one
raw-JSON path every live component uses (:class:`~kubetide.kube.rest.Rest`: lightkube's configuration
and auth, failures counted in ``kubetide_api_errors_total``); this wrapper only turns a failure into
:class:`ApiFailure`, whose message is the API's Status message or client-go's text for the code, so
the ports can wrap it in the controller's wording.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import httpx2

from kubetide.kube.rest import KubeStatusError, Rest

__all__ = ["ApiFailure", "KubeApi"]

# client-go's texts for a response without a Status body (k8s.io/apimachinery/pkg/api/errors).
_STATUS_TEXT = {
    401: "Unauthorized",
    403: "forbidden",
    404: "the server could not find the requested resource",
    409: "the object has been modified; please apply your changes to the latest version and try again",
    429: "the server has received too many requests and has asked us to try again later",
    500: "an error on the server has prevented the request from succeeding",
    503: "the server is currently unable to handle the request",
    504: "the server was unable to return a response in the time allotted, but may still be processing the request",
}


class ApiFailure(Exception):
    """A request failed; ``status`` is the HTTP code (0 when no response came back)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class KubeApi:
    """GET and PUT of JSON documents by path (``/apis/GROUP/VERSION/...``)."""

    def __init__(self, rest: Rest | httpx2.Client) -> None:
        self.rest = rest if isinstance(rest, Rest) else Rest(rest)

    def get(self, path: str, params: Mapping[str, str] | None = None) -> Any:
        return self._send("GET", path, params, None)

    def put(self, path: str, body: Any) -> Any:
        return self._send("PUT", path, None, body)

    def _send(self, method: str, path: str, params: Mapping[str, str] | None, body: Any) -> Any:
        try:
            return self.rest.request(method, path, params=params, body=body)
        except KubeStatusError as exc:
            raise ApiFailure(exc.status, _message(exc, method, path)) from None
        except ValueError:  # a body that is not JSON
            raise ApiFailure(200, f"{method} {path}: the response is not JSON") from None


def _message(exc: KubeStatusError, method: str, path: str) -> str:
    """The Status message when the server sent one, else client-go's text for the code."""
    if exc.status == 0:
        return f"{method} {path}: {exc.message or exc.reason}"
    if exc.message:
        return exc.message
    text = _STATUS_TEXT.get(exc.status, f"unexpected status {exc.status}")
    return f"{text} ({method.lower()} {path})"
