"""The API calls of the kwok provider (Nodes and its state ConfigMap), behind a protocol so the provider
is tested in memory. Objects are JSON dicts; failures are :class:`KubeCallError` with the HTTP status."""

from __future__ import annotations

from typing import Any, Protocol, cast

import httpx2
from lightkube import ApiError, Client, operators
from lightkube.resources.core_v1 import ConfigMap, Node

__all__ = ["KubeCallError", "KwokApi", "LightkubeKwokApi", "Obj"]

Obj = dict[str, Any]


class KubeCallError(Exception):
    """An API call failed: ``code`` is the HTTP status (409 conflict or exists, 404 not found; 0 when
    the server was not reached)."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(f"{code}: {message}" if code else message)
        self.code = code


class KwokApi(Protocol):
    def list_nodes(self, label: str) -> list[Obj]:
        """Every Node that has the label ``label`` (any value)."""
        ...

    def create_node(self, node: Obj) -> None:
        """KubeCallError(409) when a Node of that name exists."""
        ...

    def delete_node(self, name: str) -> None:
        """KubeCallError(404) when it is gone already."""
        ...

    def get_configmap(self, namespace: str, name: str) -> Obj | None: ...

    def create_configmap(self, namespace: str, configmap: Obj) -> None:
        """KubeCallError(409) when it exists (someone else created it first)."""
        ...

    def replace_configmap(self, namespace: str, configmap: Obj) -> None:
        """Replace it if its ``metadata.resourceVersion`` is still current; KubeCallError(409) if not."""
        ...


_ERRORS = (ApiError, httpx2.HTTPError, OSError)


def _translate(exc: Exception) -> KubeCallError:
    if isinstance(exc, ApiError):
        return KubeCallError(exc.status.code or 0, exc.status.message or str(exc))
    return KubeCallError(0, f"{type(exc).__name__}: {exc}")


class LightkubeKwokApi:
    def __init__(self, client: Client) -> None:
        self._client = client

    def list_nodes(self, label: str) -> list[Obj]:
        try:
            return [n.to_dict() for n in self._client.list(Node, labels={label: operators.exists()})]
        except _ERRORS as exc:
            raise _translate(exc) from exc

    def create_node(self, node: Obj) -> None:
        try:
            self._client.create(cast(Node, Node.from_dict(node)))
        except _ERRORS as exc:
            raise _translate(exc) from exc

    def delete_node(self, name: str) -> None:
        try:
            self._client.delete(Node, name)
        except _ERRORS as exc:
            raise _translate(exc) from exc

    def get_configmap(self, namespace: str, name: str) -> Obj | None:
        try:
            result: Obj = self._client.get(ConfigMap, name, namespace=namespace).to_dict()
            return result
        except ApiError as exc:
            if exc.status.code == 404:
                return None
            raise _translate(exc) from exc
        except _ERRORS as exc:
            raise _translate(exc) from exc

    def create_configmap(self, namespace: str, configmap: Obj) -> None:
        try:
            self._client.create(cast(ConfigMap, ConfigMap.from_dict(configmap)), namespace=namespace)
        except _ERRORS as exc:
            raise _translate(exc) from exc

    def replace_configmap(self, namespace: str, configmap: Obj) -> None:
        try:
            self._client.replace(cast(ConfigMap, ConfigMap.from_dict(configmap)))  # namespace: in metadata
        except _ERRORS as exc:
            raise _translate(exc) from exc
