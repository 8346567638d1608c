"""kubetide's HorizontalPodAutoscaler custom resource (``autoscaling.kubetide.io/v1``) read as an
autoscaling/v2 object.

The CRD's spec is the autoscaling/v2 spec unchanged plus ``spec.syncPeriod`` (a Go duration); its
per-direction tolerances sit where autoscaling/v2 (KEP-4951) puts them. ``HPA.from_manifest`` on this
branch knows only the ``autoscaling/`` versions, so the object is relabelled as autoscaling/v2 (one
small function, harmless once the model learns the CRD's apiVersion) and ``syncPeriod`` is read here.
"""

from __future__ import annotations

from typing import Any

from kubetide.model.durations import DurationError, parse_duration
from kubetide.model.errors import ManifestError

__all__ = ["CRD_API_VERSION", "CRD_GROUP", "CRD_PLURAL", "as_autoscaling_v2", "sync_period"]

CRD_GROUP = "autoscaling.kubetide.io"
CRD_API_VERSION = f"{CRD_GROUP}/v1"
CRD_PLURAL = "horizontalpodautoscalers"


def as_autoscaling_v2(manifest: dict[str, Any]) -> dict[str, Any]:
    """The CRD object with apiVersion autoscaling/v2 (a shallow copy; the spec is shared, unchanged)."""
    return {**manifest, "apiVersion": "autoscaling/v2"}


def sync_period(manifest: dict[str, Any]) -> float | None:
    """``spec.syncPeriod`` in seconds (None: the controller's flag); ManifestError naming the field."""
    spec = manifest.get("spec")
    value = spec.get("syncPeriod") if isinstance(spec, dict) else None
    if value is None:
        return None
    try:
        seconds = parse_duration(value)
    except DurationError as exc:
        raise ManifestError.at("spec.syncPeriod", str(exc)) from None
    if seconds <= 0:
        raise ManifestError.at("spec.syncPeriod", f"must be positive, got {value!r}")
    return seconds
