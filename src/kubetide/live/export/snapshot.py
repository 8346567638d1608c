"""What the exporter reads from a cluster: lists of API objects as plain dicts, grouped by kind.

A plain-data boundary between the I/O (:mod:`~kubetide.live.export.read`) and the pure conversion, so
the conversion is tested from recorded API responses without a server. Every object carries its
``apiVersion`` and ``kind`` (a List response leaves them out of its items; the reader puts them back).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["ClusterObjects", "Manifest"]

Manifest = Mapping[str, Any]


@dataclass(frozen=True)
class ClusterObjects:
    """Every object the export looks at, as the API server returned them (status, defaults and all)."""

    nodes: list[Manifest] = field(default_factory=list)
    deployments: list[Manifest] = field(default_factory=list)
    statefulsets: list[Manifest] = field(default_factory=list)
    daemonsets: list[Manifest] = field(default_factory=list)
    jobs: list[Manifest] = field(default_factory=list)
    pods: list[Manifest] = field(default_factory=list)
    hpas: list[Manifest] = field(default_factory=list)  # autoscaling/v2 or v2beta2, as served
    kubetide_hpas: list[Manifest] = field(default_factory=list)  # autoscaling.kubetide.io/v1, if installed
    pdbs: list[Manifest] = field(default_factory=list)  # policy/v1 or v1beta1, as served
    configmaps: list[Manifest] = field(default_factory=list)
