"""The HPA's scale-target port against the API server: the ``scale`` subresource of the target, and its
pods from a watch cache (``pods.py``).

Targets: ``apps/v1`` Deployments, ReplicaSets and StatefulSets and core ReplicationControllers are
mapped without a request; any other kind (a CRD with a scale subresource, Argo Rollouts, ...) is found
through discovery of its group version: the resource whose ``kind`` matches, which must list a
``<plural>/scale`` subresource. The result is cached per group version and kind.

Updates write the Scale object last read for the target with its ``resourceVersion`` (as upstream
updates the scale it read); a 409 conflict re-reads and retries a few times, since the HPA's
decision does not depend on what changed concurrently in the object (its replica count was just read).
Errors are :class:`ScaleError` with the API server's message (``deployments.apps "web" not found``);
the controller adds "the HPA controller was unable to get the target's current scale: ".
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kubetide.hpa.ports import Scale, ScaleError
from kubetide.live.hpa.api import ApiFailure, KubeApi
from kubetide.live.hpa.kinds import GroupResource
from kubetide.live.hpa.pods import PodLister, PodStore
from kubetide.model.hpa import CrossVersionObjectReference
from kubetide.model.pod import Pod
from kubetide.model.selectors import LabelSelector

__all__ = ["ApiScaleTargets"]

# Scale targets known without discovery, by (group, kind); versions as the 1.16+ API server serves.
_BUILT_IN: dict[tuple[str, str], GroupResource] = {
    ("apps", "Deployment"): GroupResource("apps", "v1", "deployments"),
    ("apps", "ReplicaSet"): GroupResource("apps", "v1", "replicasets"),
    ("apps", "StatefulSet"): GroupResource("apps", "v1", "statefulsets"),
    ("", "ReplicationController"): GroupResource("", "v1", "replicationcontrollers"),
}
_BY_KIND = {kind: resource for (_, kind), resource in _BUILT_IN.items()}
CONFLICT_RETRIES = 3


class ApiScaleTargets:
    """``ScaleTargetPort`` over the scale subresource, with pods from ``pod_store``."""

    def __init__(self, api: KubeApi, pod_store: PodStore) -> None:
        self.api = api
        self.pods = PodLister(pod_store)
        self._discovered: dict[tuple[str, str], GroupResource] = {}
        self._last_read: dict[tuple[str, str, str], dict[str, Any]] = {}

    def get_scale(self, namespace: str, ref: CrossVersionObjectReference) -> Scale:
        path = self.scale_path(namespace, ref)
        body = self._get(path)
        self._last_read[(namespace, ref.kind, ref.name)] = body
        try:
            spec, status = body.get("spec") or {}, body.get("status") or {}
            return Scale(
                int(spec.get("replicas", 0)), int(status.get("replicas", 0)), str(status.get("selector", ""))
            )
        except (AttributeError, TypeError, ValueError) as exc:
            raise ScaleError(f"malformed scale subresource at {path}: {exc}") from None

    def update_scale(self, namespace: str, ref: CrossVersionObjectReference, replicas: int) -> None:
        path = self.scale_path(namespace, ref)
        key = (namespace, ref.kind, ref.name)
        body = self._last_read.get(key) or self._get(path)
        for attempt in range(CONFLICT_RETRIES + 1):
            updated = {**body, "spec": {**(body.get("spec") or {}), "replicas": replicas}}
            try:
                self._last_read[key] = self.api.put(path, updated)
                return
            except ApiFailure as exc:
                if exc.status != 409 or attempt == CONFLICT_RETRIES:
                    raise ScaleError(str(exc)) from None
            body = self._get(path)

    def list_pods(self, namespace: str, selector: LabelSelector) -> Sequence[Pod]:
        return self.pods.list_pods(namespace, selector)

    # --- resolving the target ---------------------------------------------------------------------

    def scale_path(self, namespace: str, ref: CrossVersionObjectReference) -> str:
        resource = self.resolve(ref)
        return f"{resource.prefix}/namespaces/{namespace}/{resource.resource}/{ref.name}/scale"

    def resolve(self, ref: CrossVersionObjectReference) -> GroupResource:
        """The target's resource: built-in kinds directly, others through discovery (cached)."""
        group, _, version = ref.api_version.rpartition("/")
        if not ref.api_version and ref.kind in _BY_KIND:
            return _BY_KIND[ref.kind]
        known = _BUILT_IN.get((group, ref.kind))
        if known is not None:
            return known
        key = (ref.api_version, ref.kind)
        if key not in self._discovered:
            self._discovered[key] = self._discover(group, version, ref.kind)
        return self._discovered[key]

    def _discover(self, group: str, version: str, kind: str) -> GroupResource:
        prefix = GroupResource(group, version, "").prefix
        if not version:
            raise ScaleError(
                f"unable to determine resource for scale target reference: no version for kind {kind!r}"
            )
        try:
            listing = self.api.get(prefix)
        except ApiFailure as exc:
            raise ScaleError(f"unable to determine resource for scale target reference: {exc}") from None
        resources = [r for r in listing.get("resources") or [] if isinstance(r, dict)]
        names = {str(r.get("name", "")) for r in resources}
        for r in resources:
            name = str(r.get("name", ""))
            if r.get("kind") == kind and "/" not in name:
                if f"{name}/scale" not in names:
                    raise ScaleError(f"{name}.{group or 'core'} has no scale subresource")
                return GroupResource(group, version, name)
        raise ScaleError(
            f"unable to determine resource for scale target reference: no matches for kind {kind!r} "
            f"in version {group + '/' if group else ''}{version}"
        )

    def _get(self, path: str) -> dict[str, Any]:
        try:
            body = self.api.get(path)
        except ApiFailure as exc:
            raise ScaleError(str(exc)) from None
        if not isinstance(body, dict):
            raise ScaleError(f"malformed scale subresource at {path}: not an object")
        return body
