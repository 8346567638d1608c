"""The live HPA's ports as the loop runs them: pods from a watch cache, writes only while leading.

- :class:`PodCache` / :class:`NamespacedPods`: every pod from one watch (the controller's pod lister),
  grouped by namespace once per cache change, so a loop over many HPAs reads memory.
- :class:`GuardedScaleTargets` and :class:`GuardedHPAs`: the scale and status writes refused once this
  replica stops leading (the rest of the loop is abandoned, each HPA reporting it), and, in a dry run,
  not made at all: the scale write is logged and counted in ``kubetide_dry_run_actions_total`` and
  reported as done (so the decision, its events and the log say what would have happened), the status
  write is skipped.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence

from kubetide.hpa.driver import HPASource, StatusWriteError
from kubetide.hpa.ports import Scale, ScaleError, ScaleTargetPort
from kubetide.kube.cache import Informer
from kubetide.kube.discovery import ServedVersions, resource_kinds
from kubetide.kube.metrics import DRY_RUN_ACTIONS
from kubetide.kube.rest import Rest
from kubetide.model.errors import ManifestError
from kubetide.model.hpa import HPA, CrossVersionObjectReference, HPAStatus
from kubetide.model.pod import Pod
from kubetide.model.selectors import LabelSelector

__all__ = ["GuardedHPAs", "GuardedScaleTargets", "NamespacedPods", "PodCache"]

COMPONENT = "horizontal-pod-autoscaler"
log = logging.getLogger("kubetide.hpa")


class PodCache:
    """A watch cache of every pod (the caches' start/sync/stop shape)."""

    def __init__(self, rest: Rest, versions: ServedVersions) -> None:
        self.pods: Informer[Pod] = Informer(rest, resource_kinds(versions)["pods"], Pod.from_manifest)

    def start(self) -> PodCache:
        self.pods.start()
        return self

    def wait_synced(self, timeout: float) -> bool:
        return self.pods.wait_synced(timeout)

    def stop(self) -> None:
        self.pods.stop()

    def unsynced(self) -> list[str]:
        """The cache's name while it is not synced (a watch failed, no new list yet)."""
        return [] if self.pods.has_synced() else [self.pods.name]


class NamespacedPods:
    """``PodStore`` over a pod informer: a namespace's pods, regrouped only when the cache changed."""

    def __init__(self, informer: Informer[Pod]) -> None:
        self.informer = informer
        self._version = -1
        self._by_namespace: dict[str, tuple[Pod, ...]] = {}

    def pods(self, namespace: str) -> Sequence[Pod]:
        version = self.informer.version
        if version != self._version:
            grouped: dict[str, list[Pod]] = {}
            for pod in self.informer.views():
                grouped.setdefault(pod.namespace, []).append(pod)
            self._by_namespace = {ns: tuple(pods) for ns, pods in grouped.items()}
            self._version = version
        return self._by_namespace.get(namespace, ())

    def version(self, namespace: str) -> int:
        return self.informer.version


class GuardedScaleTargets:
    def __init__(self, inner: ScaleTargetPort, may_act: Callable[[], bool], *, dry_run: bool) -> None:
        self.inner = inner
        self.may_act = may_act
        self.dry_run = dry_run

    def get_scale(self, namespace: str, ref: CrossVersionObjectReference) -> Scale:
        return self.inner.get_scale(namespace, ref)

    def list_pods(self, namespace: str, selector: LabelSelector) -> Sequence[Pod]:
        return self.inner.list_pods(namespace, selector)

    def update_scale(self, namespace: str, ref: CrossVersionObjectReference, replicas: int) -> None:
        if not self.may_act():
            raise ScaleError("not the leader any more: scale not written")
        if self.dry_run:
            DRY_RUN_ACTIONS.labels(component=COMPONENT, action="update_scale").inc()
            log.info("dry run: would scale %s/%s/%s to %d", ref.kind, namespace, ref.name, replicas)
            return
        self.inner.update_scale(namespace, ref, replicas)


class GuardedHPAs:
    def __init__(self, inner: HPASource, may_act: Callable[[], bool], *, dry_run: bool) -> None:
        self.inner = inner
        self.may_act = may_act
        self.dry_run = dry_run

    def list_hpas(self) -> Mapping[str, HPA | ManifestError]:
        return self.inner.list_hpas()

    def write_status(self, hpa: HPA, status: HPAStatus) -> None:
        if not self.may_act():
            raise StatusWriteError("not the leader any more: status not written")
        if self.dry_run:
            DRY_RUN_ACTIONS.labels(component=COMPONENT, action="update_status").inc()
            return
        self.inner.write_status(hpa, status)
