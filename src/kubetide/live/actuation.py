""":class:`KubeClusterPort`: the :class:`~kubetide.model.api.ClusterPort` writes against a real API server.

Node changes are made as Cluster Autoscaler makes them: read the node, change only our part (one
taint, ``spec.unschedulable``), write it back with the read ``resourceVersion`` so a concurrent write
by another controller fails with 409 instead of being overwritten, and on conflict read again and
retry (a few times). Annotations use a JSON merge patch, which touches only the keys given.
Evictions go through the Eviction subresource of the served ``policy`` version, with CA's
``deleteOptions.gracePeriodSeconds`` when given: 429 means a PodDisruptionBudget holds the pod
(REFUSED), 404 that it is gone (GONE).

Transient failures (no response, 429 on plain writes, 5xx) are retried with capped exponential
backoff; what still fails is an :class:`~kubetide.model.api.ApiError` (a 404 on the object a
:class:`~kubetide.model.api.NotFoundError`). A dry run and the leader check wrap this port
(:mod:`kubetide.live.guard`): every call that reaches it is made.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import time
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from kubetide.cluster.capacity.objects import CapacityWrite
from kubetide.kube.discovery import ServedVersions, resource_kinds
from kubetide.kube.events import EventRecorder, UidLookup
from kubetide.kube.rest import MERGE_PATCH, KubeStatusError, Rest, retrying
from kubetide.live.cluster_autoscaler.capacity import write_capacity
from kubetide.model.api import ApiError, EvictionOutcome, NotFoundError, PortCapabilities
from kubetide.model.pod import Pod
from kubetide.model.scheduling_terms import Taint

__all__ = ["CONFLICT_RETRIES", "KubeClusterPort"]

log = logging.getLogger(__name__)
T = TypeVar("T")
Json = dict[str, Any]
CONFLICT_RETRIES = 5  # CA retries a conflicting taint update a few times within its 5 s budget


class KubeClusterPort:
    """Implements ``kubetide.model.api.ClusterPort`` (structurally)."""

    def __init__(
        self,
        rest: Rest,
        versions: ServedVersions,
        *,
        component: str,
        uid_of: UidLookup | None = None,
        events: EventRecorder | None = None,
        attempts: int = 5,
        sleep: Callable[[float], None] = time.sleep,
    ):
        self.rest, self.versions, self.component = rest, versions, component
        self.events = events or EventRecorder(rest, component, uid_of=uid_of, sleep=sleep)
        self._attempts, self._sleep = attempts, sleep

    # -- nodes -----------------------------------------------------------------------------------

    def add_node_taint(self, node: str, taint: Taint) -> None:
        def mutate(obj: Json) -> bool:
            taints = _taints(obj)
            kept = [t for t in taints if not (t.get("key") == taint.key and t.get("effect") == taint.effect)]
            new = taint.to_manifest()
            if len(kept) == len(taints) - 1 and new in taints:
                return False  # already there, as wanted
            obj.setdefault("spec", {})["taints"] = [*kept, new]
            return True

        self._update_node(node, f"add-taint {taint.key}={taint.value}:{taint.effect}", mutate)

    def remove_node_taint(self, node: str, key: str) -> None:
        def mutate(obj: Json) -> bool:
            taints = _taints(obj)
            kept = [t for t in taints if t.get("key") != key]
            if len(kept) == len(taints):
                return False
            obj["spec"]["taints"] = kept
            return True

        self._update_node(node, f"remove-taint {key}", mutate)

    def set_node_unschedulable(self, node: str, unschedulable: bool) -> None:
        def mutate(obj: Json) -> bool:
            spec = obj.setdefault("spec", {})
            if bool(spec.get("unschedulable", False)) == unschedulable:
                return False
            spec["unschedulable"] = unschedulable
            return True

        self._update_node(node, "cordon" if unschedulable else "uncordon", mutate)

    def annotate_node(self, node: str, annotations: Mapping[str, str | None]) -> None:
        patch = {"metadata": {"annotations": dict(annotations)}}
        self._call(
            f"annotate node {node}",
            lambda: self.rest.request("PATCH", f"/api/v1/nodes/{node}", body=patch, content_type=MERGE_PATCH),
        )

    def delete_node(self, node: str) -> None:
        with contextlib.suppress(NotFoundError):  # already gone: deletion is idempotent
            self._call(f"delete node {node}", lambda: self.rest.request("DELETE", f"/api/v1/nodes/{node}"))

    def _update_node(self, node: str, action: str, mutate: Callable[[Json], bool]) -> None:
        path = f"/api/v1/nodes/{node}"
        for _ in range(CONFLICT_RETRIES):
            obj = self._call(f"get node {node}", lambda: self.rest.request("GET", path))
            if not mutate(obj):
                return
            try:
                # PUT with the read resourceVersion: a concurrent writer makes this a 409, not a loss.
                self._call(
                    f"{action} on node {node}", functools.partial(self.rest.request, "PUT", path, body=obj)
                )
                log.info("node %s: %s", node, action)
                return
            except _Conflict:
                log.info("node %s changed while we wrote it (%s): reading it again", node, action)
        raise ApiError(f"{action} on node {node}: conflicting updates {CONFLICT_RETRIES} times in a row")

    # -- pods ------------------------------------------------------------------------------------

    def evict(self, pod: Pod, grace_period_s: int | None = None) -> EvictionOutcome:
        body: Json = {
            "apiVersion": f"policy/{self.versions.policy}",
            "kind": "Eviction",
            "metadata": {"name": pod.name, "namespace": pod.namespace},
        }
        if grace_period_s is not None:  # CA's DeleteOptions: the API server sets the pod's deletion time
            body["deleteOptions"] = {"gracePeriodSeconds": grace_period_s}
        path = f"/api/v1/namespaces/{pod.namespace}/pods/{pod.name}/eviction"
        try:
            retrying(
                lambda: self.rest.request("POST", path, body=body),
                attempts=self._attempts,
                sleep=self._sleep,
                retry_on=lambda e: e.retriable and e.status != 429,  # 429 here is the PDB's answer
            )
        except KubeStatusError as exc:
            if exc.status == 429:
                log.info("eviction of pod %s refused: %s", pod.key, exc.message or exc.reason)
                return EvictionOutcome.REFUSED
            if exc.status == 404:
                return EvictionOutcome.GONE
            raise ApiError(f"evict pod {pod.key}: {exc}") from exc
        grace = "the pod's own" if grace_period_s is None else f"{grace_period_s}s"
        log.info("evicted pod %s (grace period %s)", pod.key, grace)
        return EvictionOutcome.EVICTED

    def capabilities(self) -> PortCapabilities:
        return PortCapabilities(config_maps=self)

    # -- the autoscaler's own ConfigMaps (a declared capability) -------------------------------------

    def write_config_map(self, namespace: str, name: str, data: Mapping[str, str]) -> None:
        """Create or replace the ConfigMap's data (its other fields kept); a conflict re-reads and
        retries."""
        path = f"/api/v1/namespaces/{namespace}/configmaps"

        def attempt() -> None:
            try:
                current = self.rest.request("GET", f"{path}/{name}")
            except KubeStatusError as exc:
                if exc.status != 404:
                    raise
                body = {
                    "apiVersion": "v1",
                    "kind": "ConfigMap",
                    "metadata": {"name": name, "namespace": namespace},
                }
                self.rest.request("POST", path, body={**body, "data": dict(data)})
                return
            self.rest.request("PUT", f"{path}/{name}", body={**current, "data": dict(data)})

        try:
            retrying(
                attempt,
                attempts=self._attempts,
                sleep=self._sleep,
                retry_on=lambda e: e.retriable or e.status == 409,
            )
        except KubeStatusError as exc:
            raise ApiError(f"ConfigMap {namespace}/{name}: {exc}") from exc

    # -- the capacity APIs' statuses, managed PodTemplates and deletions (``CapacityPort``) -------

    def write_capacity(self, write: CapacityWrite) -> None:
        write_capacity(
            self.rest, resource_kinds(self.versions), write, attempts=self._attempts, sleep=self._sleep
        )

    # -- events ----------------------------------------------------------------------------------

    def emit_event(self, type_: str, reason: str, obj: str, message: str) -> None:
        self.events.emit(type_, reason, obj, message)

    # -- helpers ---------------------------------------------------------------------------------

    def _call(self, what: str, fn: Callable[[], T]) -> T:
        try:
            return retrying(fn, attempts=self._attempts, sleep=self._sleep)
        except KubeStatusError as exc:
            if exc.status == 404:
                raise NotFoundError(f"{what}: not found") from exc
            if exc.status == 409:
                raise _Conflict(f"{what}: {exc}") from exc
            raise ApiError(f"{what}: {exc}") from exc


class _Conflict(ApiError):
    """409: the object changed since it was read."""


def _taints(obj: Json) -> list[Json]:
    taints = (obj.get("spec") or {}).get("taints") or []
    return [t for t in taints if isinstance(t, dict)]
