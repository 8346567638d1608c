"""Pending pods over a recording, counted as the simulator counts them: a pod is pending from its
creation until it is bound to a node (``spec.nodeName``), deleted or ended, and pending pod-seconds
add up the time every pod was pending.

The moment a pod was bound is its ``PodScheduled`` condition's transition when the cache has it (to
the second, as the API server keeps it), else when the recorder saw the binding. A pod already pending
when the recording starts (or resumes) counts from then: the time before was not recorded. Only the
pods the scenario has are counted: those of the recorded namespaces, and kube-system's DaemonSets'.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kubetide.live.export.objects import SYSTEM_NAMESPACES
from kubetide.model.fields import parse_time

__all__ = ["PendingTracker"]

_TERMINAL = ("Succeeded", "Failed")


def _seconds(text: Any) -> float | None:
    try:
        return parse_time(str(text)) if text else None
    except ValueError:
        return None


def _scheduled_at(pod: Mapping[str, Any]) -> float | None:
    for condition in (pod.get("status") or {}).get("conditions") or []:
        if condition.get("type") == "PodScheduled" and condition.get("status") == "True":
            return _seconds(condition.get("lastTransitionTime"))
    return None


def _daemonset_pod(pod: Mapping[str, Any]) -> bool:
    owners = (pod.get("metadata") or {}).get("ownerReferences") or []
    return any(isinstance(o, dict) and o.get("kind") == "DaemonSet" and o.get("controller") for o in owners)


@dataclass
class PendingTracker:
    start: float  # the recording's start (Unix seconds)
    namespaces: Collection[str] = ()
    pending: dict[str, float] = field(default_factory=dict)  # pod -> pending since (recording seconds)
    settled: float = 0.0  # pod-seconds of pods no longer pending
    _seen: dict[str, str] = field(default_factory=dict)  # pod -> resourceVersion
    _floor: float = 0.0  # pods pending before this are counted from it (the start, or a resume)

    def counted(self, pod: Mapping[str, Any]) -> bool:
        namespace = (pod.get("metadata") or {}).get("namespace") or "default"
        if self.namespaces:
            return namespace in self.namespaces or (namespace == "kube-system" and _daemonset_pod(pod))
        return namespace not in SYSTEM_NAMESPACES or (namespace == "kube-system" and _daemonset_pod(pod))

    def observe(self, pods: Iterable[Mapping[str, Any]], t: float) -> None:
        present: dict[str, str] = {}
        for pod in pods:
            meta = pod.get("metadata") or {}
            key = f"{meta.get('namespace')}/{meta.get('name')}"
            rv = str(meta.get("resourceVersion", ""))
            present[key] = rv
            if self._seen.get(key) == rv or not self.counted(pod):
                continue
            waiting = not (pod.get("spec") or {}).get("nodeName") and not meta.get("deletionTimestamp")
            waiting = waiting and (pod.get("status") or {}).get("phase") not in _TERMINAL
            if waiting and key not in self.pending:
                created = _seconds(meta.get("creationTimestamp"))
                since = t if created is None else created - self.start
                self.pending[key] = min(max(since, 0.0, self._floor), t)
            elif not waiting and key in self.pending:
                bound = _scheduled_at(pod)
                end = t if bound is None else min(max(bound - self.start, self.pending[key]), t)
                self._settle(key, end)
        for key in set(self._seen) - set(present):
            if key in self.pending:
                self._settle(key, t)
        self._seen = present

    def resume_at(self, t: float, pending_pod_seconds: float) -> None:
        """Continue a recording at ``t`` with the pod-seconds counted before it."""
        self._floor = t
        self.settled = pending_pod_seconds
        self.pending.clear()
        self._seen.clear()

    def _settle(self, key: str, end: float) -> None:
        since = self.pending.pop(key)
        self.settled += max(end - since, 0.0)

    def pod_seconds(self, t: float) -> float:
        return self.settled + sum(max(t - since, 0.0) for since in self.pending.values())
