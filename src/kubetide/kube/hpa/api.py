"""Raw JSON requests to the API server, with the auth and TLS of the lightkube client.

The HPA's live ports read aggregated APIs (metrics.k8s.io, custom and external metrics), scale
subresources of any group and a CRD: typed models would buy nothing and lack v2beta2, so every
request goes through this one small class over the client's own httpx connection. Failures become
:class:`ApiFailure` carrying the HTTP status and the message client-go would print, so the ports
can wrap them in the controller's wording.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import httpx2
from lightkube import Client

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

    def __init__(self, http: httpx2.Client) -> None:
        self.http = http

    @classmethod
    def from_client(cls, client: Client) -> KubeApi:
        """Share the connection, auth and TLS of a lightkube client (``kube.client.make_client``)."""
        # lightkube keeps its configured httpx client on the generic client; there is no public getter.
        http: httpx2.Client = client._client._client
        return cls(http)

    def get(self, path: str, params: Mapping[str, str] | None = None) -> Any:
        return self._send("GET", path, params, None)

    def put(self, path: str, body: Any) -> Any:
        return self._send("PUT", path, None, body)

    def _send(self, method: str, path: str, params: Mapping[str, str] | None, body: Any) -> Any:
        try:
            response = self.http.request(method, path, params=dict(params or {}), json=body)
        except httpx2.HTTPError as exc:
            raise ApiFailure(0, f"{method} {path}: {exc}") from None
        if response.status_code >= 400:
            raise ApiFailure(response.status_code, _message(response, method, path))
        try:
            return response.json()
        except ValueError:
            raise ApiFailure(response.status_code, f"{method} {path}: the response is not JSON") from None


def _message(response: httpx2.Response, method: str, path: str) -> str:
    """The Status message when the server sent one, else client-go's text for the code."""
    try:
        status = response.json()
    except ValueError:
        status = None
    if isinstance(status, dict) and isinstance(status.get("message"), str) and status["message"]:
        return str(status["message"])
    text = _STATUS_TEXT.get(response.status_code, f"unexpected status {response.status_code}")
    return f"{text} ({method.lower()} {path})"
