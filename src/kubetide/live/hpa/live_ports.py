"""The live HPA's pods as the loop reads them: every pod from one watch (the controller's pod lister),
grouped by namespace once per cache change, so a loop over many HPAs reads memory.

Its writes (the scale, the status) are guarded with every other port's (:mod:`kubetide.live.guard.hpa`).
"""

from __future__ import annotations

from collections.abc import Sequence

from kubetide.kube.cache import Informer
from kubetide.kube.discovery import ServedVersions, resource_kinds
from kubetide.kube.rest import Rest
from kubetide.model.pod import Pod

__all__ = ["NamespacedPods", "PodCache"]


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
