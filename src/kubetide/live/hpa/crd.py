"""Where kubetide's HorizontalPodAutoscaler custom resource lives on the API server.

The object itself (the autoscaling/v2 spec plus ``spec.syncPeriod`` and per-direction tolerances) is
read by :meth:`kubetide.model.hpa.HPA.from_manifest`, which knows its apiVersion; its manifest is
``kubetide/data/crd-horizontalpodautoscalers.autoscaling.kubetide.io.yaml``.
"""

from __future__ import annotations

from kubetide.model.hpa import KUBETIDE_API_VERSION

__all__ = ["CRD_API_VERSION", "CRD_GROUP", "CRD_PLURAL"]

CRD_API_VERSION = KUBETIDE_API_VERSION
CRD_GROUP = CRD_API_VERSION.split("/")[0]
CRD_PLURAL = "horizontalpodautoscalers"
