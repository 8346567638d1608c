"""The ConfigMap that keeps the live HPA controller's memory across restarts and changes of leader.

One ConfigMap (``kubetide-hpa-memory`` in ``kubetide`` by default) holds every HPA's published memory
(:func:`kubetide.hpa.memory.published`): one data key per HPA, ``<namespace>.<name>`` (a namespace has
no dot, so the first one splits the key), whose value is the memory's JSON document in ``hpa explain
--state``'s format with the HPA's uid; the annotation ``kubetide.io/memory-written-at`` says when it
was written. So ``kubectl get configmap -n kubetide kubetide-hpa-memory -o yaml`` shows what the
controller remembers, ``hpa explain --cluster`` reads it, and a new leader restores it.

A write replaces the data whole (the HPAs deleted since drop out), with the resourceVersion of the
last write; a conflict or a missing ConfigMap reads it again (or creates it) and retries. Reads and
writes raise :class:`MemoryStoreError` with the API's message; a data key that does not read is a
problem named by its key, and the other keys are still read.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kubetide.hpa.memory import read_document
from kubetide.hpa.state import HPAState
from kubetide.kube.rest import KubeStatusError, Rest, retrying
from kubetide.model.errors import ManifestError
from kubetide.model.fields import parse_time

__all__ = [
    "WRITTEN_AT_ANNOTATION",
    "MemoryConfigMap",
    "MemoryStoreError",
    "StoredMemory",
    "data_key",
]

WRITTEN_AT_ANNOTATION = "kubetide.io/memory-written-at"


class MemoryStoreError(Exception):
    """The ConfigMap could not be read or written (the API's reason, e.g. forbidden)."""

    def __init__(self, message: str, status: int = 0) -> None:
        super().__init__(message)
        self.status = status


def data_key(hpa_key: str) -> str:
    """``namespace/name`` as a ConfigMap data key."""
    namespace, _, name = hpa_key.partition("/")
    return f"{namespace}.{name}"


def _hpa_key(key: str) -> str | None:
    namespace, dot, name = key.partition(".")
    return f"{namespace}/{name}" if dot and namespace and name else None


@dataclass(frozen=True, slots=True)
class StoredMemory:
    """What the ConfigMap holds: each HPA's (uid, memory) by ``namespace/name``, the keys that did not
    read (with why), and when it was written (None: not said)."""

    memories: dict[str, tuple[str, HPAState]] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    written_at: float | None = None


class MemoryConfigMap:
    def __init__(
        self,
        rest: Rest,
        namespace: str,
        name: str,
        *,
        attempts: int = 3,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.rest = rest
        self.namespace = namespace
        self.name = name
        self.attempts = attempts
        self.sleep = sleep
        self._collection = f"/api/v1/namespaces/{namespace}/configmaps"
        self._resource_version: str | None = None

    @property
    def where(self) -> str:
        return f"ConfigMap {self.namespace}/{self.name}"

    def read(self) -> StoredMemory | None:
        """The stored memory; None when the ConfigMap does not exist."""
        try:
            obj = retrying(self._get, attempts=self.attempts, sleep=self.sleep)
        except KubeStatusError as exc:
            if exc.status == 404:
                return None
            raise MemoryStoreError(f"cannot read {self.where}: {_reason(exc)}", exc.status) from None
        return parse(obj, self.where)

    def write(self, data: Mapping[str, str], written_at: str) -> None:
        """Replace the data with ``data`` (data key -> JSON document); MemoryStoreError on failure."""

        def attempt() -> None:
            version = self._resource_version
            if version is not None:  # one request when nobody else wrote it since
                body = self._object(data, written_at, version)
                try:
                    answer = self.rest.request("PUT", f"{self._collection}/{self.name}", body=body)
                except KubeStatusError as exc:
                    if exc.status not in (404, 409):
                        raise
                else:
                    self._resource_version = _version(answer)
                    return
            self._resource_version = _version(self._create_or_replace(data, written_at))

        try:
            retrying(
                attempt,
                attempts=self.attempts,
                sleep=self.sleep,
                retry_on=lambda e: e.retriable or e.status == 409,
            )
        except KubeStatusError as exc:
            self._resource_version = None
            raise MemoryStoreError(f"cannot write {self.where}: {_reason(exc)}", exc.status) from None

    def _create_or_replace(self, data: Mapping[str, str], written_at: str) -> Any:
        try:
            current = self._get()
        except KubeStatusError as exc:
            if exc.status != 404:
                raise
            return self.rest.request("POST", self._collection, body=self._object(data, written_at, None))
        body = self._object(data, written_at, _version(current), current)
        return self.rest.request("PUT", f"{self._collection}/{self.name}", body=body)

    def _get(self) -> Any:
        return self.rest.request("GET", f"{self._collection}/{self.name}")

    def _object(
        self, data: Mapping[str, str], written_at: str, version: str | None, current: Any = None
    ) -> dict[str, Any]:
        meta = dict((current or {}).get("metadata") or {})  # labels and annotations others put there
        meta.update(name=self.name, namespace=self.namespace)
        meta["annotations"] = {**(meta.get("annotations") or {}), WRITTEN_AT_ANNOTATION: written_at}
        if version is not None:
            meta["resourceVersion"] = version
        return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": dict(data)}


def parse(obj: Any, where: str) -> StoredMemory:
    """The memories of a ConfigMap object (as the API serves it, or as ``kubectl get -o yaml``
    prints it)."""
    memories: dict[str, tuple[str, HPAState]] = {}
    problems: list[str] = []
    if not isinstance(obj, Mapping):
        return StoredMemory(problems=[f"{where}: not an object"])
    meta = obj.get("metadata") or {}
    annotations = meta.get("annotations") if isinstance(meta, Mapping) else None
    written = annotations.get(WRITTEN_AT_ANNOTATION) if isinstance(annotations, Mapping) else None
    written_at = None
    if isinstance(written, str):
        try:
            written_at = parse_time(written)
        except ValueError:
            problems.append(f"{where}: annotation {WRITTEN_AT_ANNOTATION}: not an RFC 3339 time")
    data = obj.get("data") or {}
    if not isinstance(data, Mapping):
        problems.append(f"{where}: data: not a mapping")
        data = {}
    for key, text in data.items():
        hpa_key = _hpa_key(str(key))
        source = f"{where} data[{key}]"
        if hpa_key is None:
            problems.append(f"{source}: not a <namespace>.<name> key")
            continue
        try:
            memories[hpa_key] = read_document(json.loads(str(text)), source)
        except json.JSONDecodeError as exc:
            problems.append(f"{source}: not JSON ({exc.msg})")
        except ManifestError as exc:
            problems += [str(e) for e in exc.errors]
    return StoredMemory(memories, problems, written_at)


def _version(obj: Any) -> str | None:
    meta = obj.get("metadata") if isinstance(obj, Mapping) else None
    version = meta.get("resourceVersion") if isinstance(meta, Mapping) else None
    return version if isinstance(version, str) else None


def _reason(exc: KubeStatusError) -> str:
    return exc.message or exc.reason
