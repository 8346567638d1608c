"""The ``cluster-autoscaler-status`` ConfigMap, written as CA writes it at the end of every loop.

``data.status`` holds the status YAML (CA 1.30+'s format, rendered by :mod:`kubetide.cluster.status`)
and the annotation ``cluster-autoscaler.kubernetes.io/last-updated`` the time, so ``kubectl get cm
cluster-autoscaler-status -o yaml`` and tools reading it (dashboards, kube-state-metrics' ConfigMap
checks) see what they see with CA. Created when missing; written with its resourceVersion (a conflict
re-reads and retries); a failure is reported to the caller and never stops the loop.
"""

from __future__ import annotations

from typing import Any

from kubetide.cluster.status import LAST_UPDATED_ANNOTATION
from kubetide.kube.rest import KubeStatusError, Rest, retrying

__all__ = ["LAST_UPDATED_ANNOTATION", "StatusConfigMap"]

Json = dict[str, Any]


class StatusConfigMap:
    def __init__(self, rest: Rest, namespace: str, name: str) -> None:
        self.rest = rest
        self.namespace = namespace
        self.name = name
        self._collection = f"/api/v1/namespaces/{namespace}/configmaps"

    def write(self, status_yaml: str, last_updated: str) -> None:
        """Create or update the ConfigMap; KubeStatusError when it could not be written after retries."""

        def attempt() -> None:
            try:
                current = self.rest.request("GET", f"{self._collection}/{self.name}")
            except KubeStatusError as exc:
                if exc.status != 404:
                    raise
                self.rest.request("POST", self._collection, body=self._object({}, status_yaml, last_updated))
                return
            self.rest.request(
                "PUT",
                f"{self._collection}/{self.name}",
                body=self._object(current, status_yaml, last_updated),
            )

        retrying(attempt, retry_on=lambda e: e.retriable or e.status == 409)

    def _object(self, current: dict[str, object], status_yaml: str, last_updated: str) -> dict[str, object]:
        metadata = dict(current.get("metadata") or {})  # type: ignore[call-overload]
        metadata.update(name=self.name, namespace=self.namespace)
        metadata["annotations"] = {
            **(metadata.get("annotations") or {}),
            LAST_UPDATED_ANNOTATION: last_updated,
        }
        data = {**(current.get("data") or {}), "status": status_yaml}  # type: ignore[dict-item]
        return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": metadata, "data": data}
