"""The live HPAs as the HPA loop reads them: :class:`kubetide.hpa.driver.HPASource` over the API server.

:class:`~kubetide.live.hpa.hpas.ApiHPAObjects` lists the objects (with the malformed ones and the
standard/kubetide pairs on one workload set apart); this adapter hands the loop what its port
promises: every HPA by key, a malformed one as the :class:`ManifestError` the loop reports on it, and
the status written back in the API's shape (for kubetide's own resource, with the strings its
``kubectl get`` columns show, :mod:`.columns`). A pair of HPAs fighting over one workload gets a Warning
Event on both, once per pair while it lasts (not every loop: the API would aggregate them, but a user
reading ``kubectl describe`` wants one clear line).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from kubetide.hpa.ports import EventPort
from kubetide.live.hpa.columns import reference_column, targets_column
from kubetide.live.hpa.hpas import CONFLICT_REASON, ApiHPAObjects, ObjectRef
from kubetide.model.errors import FieldError, ManifestError
from kubetide.model.hpa import HPA, HPAStatus

__all__ = ["LoopHPASource", "status_manifest"]


def _time(t: float) -> str:
    """metav1.Time: RFC 3339 with whole seconds, as the API server stores it."""
    return datetime.fromtimestamp(int(t), UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def status_manifest(status: HPAStatus) -> dict[str, Any]:
    """``status`` of an autoscaling/v2 (or v2beta2: the same shape) HorizontalPodAutoscaler."""
    out: dict[str, Any] = {
        "currentReplicas": status.current_replicas,
        "desiredReplicas": status.desired_replicas,
    }
    if status.last_scale_time is not None:
        out["lastScaleTime"] = _time(status.last_scale_time)
    if status.current_metrics:
        out["currentMetrics"] = [dict(m) for m in status.current_metrics]
    if status.conditions:
        out["conditions"] = [
            {
                "type": c.type,
                "status": c.status,
                "lastTransitionTime": _time(
                    c.last_transition_time if c.last_transition_time is not None else 0
                ),
                "reason": c.reason,
                "message": c.message,
            }
            for c in status.conditions
        ]
    return out


class LoopHPASource:
    """:class:`~kubetide.hpa.driver.HPASource` over :class:`ApiHPAObjects`; their errors are the loop's
    already (``HPASourceError`` when nothing is listed, ``StatusWriteError``), so they pass through."""

    def __init__(self, source: ApiHPAObjects, events: EventPort) -> None:
        self.source = source
        self.events = events
        self._warned: set[tuple[str, str]] = set()  # the conflicting pairs already reported

    def list_hpas(self) -> Mapping[str, HPA | ManifestError]:
        listing = self.source.list_hpas()
        out: dict[str, HPA | ManifestError] = {}
        for entry in listing.entries:
            out[entry.hpa.key] = entry.hpa
        for problem in listing.problems:
            out[problem.ref.key] = ManifestError([FieldError("", problem.message)])
        pairs = set()
        for conflict in listing.conflicts:
            pair = (conflict.kubetide.key, f"{conflict.standard.api_version}/{conflict.standard.key}")
            pairs.add(pair)
            if pair in self._warned:
                continue
            for ref in (conflict.kubetide, conflict.standard):
                self.events.emit_event("Warning", CONFLICT_REASON, self._object(ref), conflict.message)
        self._warned = pairs
        return out

    def _object(self, ref: ObjectRef) -> str:
        """The Event's object: the other kind's HPA qualified as ``Kind.version.group``, so its Event
        carries its own apiVersion and uid (``kubectl describe`` of it shows the Event)."""
        if ref.api_version == self.source.api_version:
            return f"HorizontalPodAutoscaler/{ref.key}"
        group, _, version = ref.api_version.rpartition("/")
        return f"HorizontalPodAutoscaler.{version}.{group}/{ref.key}"

    def write_status(self, hpa: HPA, status: HPAStatus) -> None:
        manifest = status_manifest(status)
        if hpa.is_kubetide:  # the CRD's REFERENCE and TARGETS columns, as kubectl get hpa prints them
            manifest["reference"] = reference_column(hpa)
            manifest["targets"] = targets_column(hpa, status.current_metrics)
        self.source.write_status(hpa.key, manifest)
