"""The few API-server calls the node agent makes, behind a protocol, so its logic is tested in memory.

Objects cross this boundary as plain JSON dicts (camelCase, as the API server sends them): the agent
reads a handful of fields and writes patches, and dicts keep lightkube's types inside this module.
Errors are translated into :class:`ApiError` with the HTTP status code, so callers can tell a 410 (relist)
or a 404 (gone already) from a failure worth retrying.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from typing import Any, Protocol, cast

import httpx2
from lightkube import ApiError as LightkubeApiError
from lightkube import Client, operators
from lightkube.core.generic_client import ALL_NS
from lightkube.resources.coordination_v1 import Lease
from lightkube.resources.core_v1 import Node, Pod
from lightkube.types import PatchType

__all__ = ["AgentApi", "ApiError", "LightkubeAgentApi", "Obj", "WatchEvent"]

Obj = dict[str, Any]
WatchEvent = tuple[str, Obj]  # ("ADDED" | "MODIFIED" | "DELETED", object)

LEASE_NAMESPACE = "kube-node-lease"
WATCH_TIMEOUT_S = 290  # below the API server's default cap, so watches end cleanly and restart


class ApiError(Exception):
    """An API call failed; ``code`` is the HTTP status (0 when the server was not reached)."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(f"{code}: {message}" if code else message)
        self.code = code


class AgentApi(Protocol):
    """What the agent asks of the API server. Every method raises :class:`ApiError` on failure."""

    def list_nodes(self, label_selector: str) -> tuple[list[Obj], str]:
        """The nodes matching the selector and the list's resourceVersion."""
        ...

    def watch_nodes(self, label_selector: str, resource_version: str) -> Iterator[WatchEvent]:
        """Changes after ``resource_version``; ApiError(410) when it is too old."""
        ...

    def list_pods(self) -> tuple[list[Obj], str]:
        """Every pod of every namespace (a field selector cannot name many nodes)."""
        ...

    def watch_pods(self, resource_version: str) -> Iterator[WatchEvent]: ...

    def patch_node_status(self, name: str, patch: Obj) -> Obj:
        """A strategic-merge patch of the node's status subresource; returns the updated Node."""
        ...

    def get_lease(self, name: str) -> Obj | None:
        """The node's Lease in kube-node-lease, None if it does not exist."""
        ...

    def create_lease(self, lease: Obj) -> None: ...

    def patch_lease(self, name: str, patch: Obj) -> None:
        """A merge patch of the Lease (MicroTime strings pass through unchanged)."""
        ...

    def patch_pod_status(self, namespace: str, name: str, patch: Obj) -> Obj:
        """A strategic-merge patch of the pod's status subresource; returns the updated Pod."""
        ...

    def delete_pod_now(self, namespace: str, name: str) -> None:
        """Delete with grace period 0, as the kubelet does once the containers have stopped."""
        ...


def _translate(exc: Exception) -> ApiError:
    if isinstance(exc, LightkubeApiError):
        code = exc.status.code or 0
        return ApiError(code, exc.status.message or str(exc))
    return ApiError(0, f"{type(exc).__name__}: {exc}")


_ERRORS = (LightkubeApiError, httpx2.HTTPError, OSError)


class LightkubeAgentApi:
    """:class:`AgentApi` over a lightkube client (build it with ``kubetide.kube.client.make_client``)."""

    def __init__(self, client: Client) -> None:
        self._client = client

    def list_nodes(self, label_selector: str) -> tuple[list[Obj], str]:
        try:
            listing = self._client.list(Node, labels=cast(Any, _parse_selector(label_selector)))
            items = [n.to_dict() for n in listing]
            return items, listing.resourceVersion
        except _ERRORS as exc:
            raise _translate(exc) from exc

    def watch_nodes(self, label_selector: str, resource_version: str) -> Iterator[WatchEvent]:
        stream = self._client.watch(
            Node,
            labels=cast(Any, _parse_selector(label_selector)),
            resource_version=resource_version,
            server_timeout=WATCH_TIMEOUT_S,
        )
        try:
            for kind, obj in stream:
                yield kind, obj.to_dict()
        except _ERRORS as exc:
            raise _translate(exc) from exc

    def list_pods(self) -> tuple[list[Obj], str]:
        try:
            listing = self._client.list(Pod, namespace=ALL_NS)
            items = [p.to_dict() for p in listing]
            return items, listing.resourceVersion
        except _ERRORS as exc:
            raise _translate(exc) from exc

    def watch_pods(self, resource_version: str) -> Iterator[WatchEvent]:
        stream = self._client.watch(
            Pod, namespace=ALL_NS, resource_version=resource_version, server_timeout=WATCH_TIMEOUT_S
        )
        try:
            for kind, obj in stream:
                yield kind, obj.to_dict()
        except _ERRORS as exc:
            raise _translate(exc) from exc

    def patch_node_status(self, name: str, patch: Obj) -> Obj:
        try:
            node = self._client.patch(Node.Status, name, patch, patch_type=PatchType.STRATEGIC)
            result: Obj = node.to_dict()
            return result
        except _ERRORS as exc:
            raise _translate(exc) from exc

    def get_lease(self, name: str) -> Obj | None:
        try:
            lease = self._client.get(Lease, name, namespace=LEASE_NAMESPACE)
        except LightkubeApiError as exc:
            if exc.status.code == 404:
                return None
            raise _translate(exc) from exc
        except _ERRORS as exc:
            raise _translate(exc) from exc
        result: Obj = lease.to_dict()
        return result

    def create_lease(self, lease: Obj) -> None:
        obj = cast(Lease, Lease.from_dict(lease))
        spec = obj.spec
        if spec is not None and isinstance(spec.renewTime, datetime) and spec.renewTime.microsecond == 0:
            # lightkube re-encodes datetimes and drops a zero fraction; MicroTime wants six digits.
            spec.renewTime = spec.renewTime.replace(microsecond=1)
        try:
            self._client.create(obj, namespace=LEASE_NAMESPACE)
        except _ERRORS as exc:
            raise _translate(exc) from exc

    def patch_lease(self, name: str, patch: Obj) -> None:
        try:
            self._client.patch(Lease, name, patch, namespace=LEASE_NAMESPACE, patch_type=PatchType.MERGE)
        except _ERRORS as exc:
            raise _translate(exc) from exc

    def patch_pod_status(self, namespace: str, name: str, patch: Obj) -> Obj:
        try:
            pod = self._client.patch(
                Pod.Status, name, patch, namespace=namespace, patch_type=PatchType.STRATEGIC
            )
            result: Obj = pod.to_dict()
            return result
        except _ERRORS as exc:
            raise _translate(exc) from exc

    def delete_pod_now(self, namespace: str, name: str) -> None:
        try:
            self._client.delete(Pod, name, namespace=namespace, grace_period=0)
        except _ERRORS as exc:
            raise _translate(exc) from exc


def _parse_selector(selector: str) -> list[tuple[str, Any]] | None:
    """lightkube builds label selectors from (key, operator) pairs; ours is kubectl's string form:
    ``key``, ``!key``, ``key=value``, ``key!=value``, ``key in (a,b)``, ``key notin (a,b)``."""
    if not selector.strip():
        return None
    result: list[tuple[str, Any]] = []
    for term in _split_terms(selector):
        term = term.strip()
        if " notin " in term:
            key, values = term.split(" notin ", 1)
            result.append((key.strip(), operators.not_in(_values(values))))
        elif " in " in term:
            key, values = term.split(" in ", 1)
            result.append((key.strip(), operators.in_(_values(values))))
        elif "!=" in term:
            key, value = term.split("!=", 1)
            result.append((key.strip(), operators.not_equal(value.strip())))
        elif "==" in term or "=" in term:
            key, value = term.replace("==", "=").split("=", 1)
            result.append((key.strip(), operators.equal(value.strip())))
        elif term.startswith("!"):
            result.append((term[1:].strip(), operators.not_exists()))
        else:
            result.append((term, operators.exists()))
    return result


def _split_terms(selector: str) -> list[str]:
    terms, depth, current = [], 0, ""
    for char in selector:
        depth += char == "("
        depth -= char == ")"
        if char == "," and depth == 0:
            terms.append(current)
            current = ""
        else:
            current += char
    terms.append(current)
    return [t for t in terms if t.strip()]


def _values(text: str) -> list[str]:
    return [v.strip() for v in text.strip().strip("()").split(",") if v.strip()]
