"""The scale subresource of any kind a CapacityBuffer's ``scalableRef`` names (a custom resource: an Argo
Rollout, a KEDA-scaled CRD, ...), as CA 1.36's ``CapacityBufferClient.GetScaleObject`` reads it: the
group's preferred version from discovery (CA's RESTMapper), the resource of that kind, which must list a
``<plural>/scale`` subresource, then ``GET .../<name>/scale``. The buffer then takes ``status.replicas``
and the newest pod ``status.selector`` picks (``ScaleObjectPodResolver``).

Discovery answers are kept for ``ttl`` seconds (a kind not served, too: a CRD installed later is found
then); a failed discovery request is not kept. A failed read is None (the buffer says it has no scale
subresource) and is logged, never raised: one buffer's broken reference never stops the others.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kubetide.kube.discovery import ResourceKind
from kubetide.kube.rest import KubeStatusError, Rest

__all__ = ["ScaleRead", "ScaleRefs"]

log = logging.getLogger(__name__)
_NOT_SERVED = None


@dataclass(frozen=True, slots=True)
class ScaleRead:
    """A Scale's ``status``: its replicas and its selector (the string form)."""

    replicas: int
    selector: str


class ScaleRefs:
    def __init__(
        self, rest: Rest, *, ttl: float = 300.0, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.rest = rest
        self.ttl = ttl
        self.clock = clock
        self._resources: dict[tuple[str, str], tuple[float, ResourceKind | None]] = {}

    def read(self, group: str, kind: str, namespace: str, name: str) -> ScaleRead | None:
        resource = self.resource(group, kind)
        if resource is None:
            return None
        path = resource.path(namespace, name, "scale")
        try:
            body = self.rest.request("GET", path)
        except KubeStatusError as exc:
            level = logging.DEBUG if exc.status == 404 else logging.WARNING
            log.log(level, "scale of %s %s/%s: %s", kind, namespace, name, exc)
            return None
        status = body.get("status") if isinstance(body, dict) else None
        try:
            status = status or {}
            return ScaleRead(int(status.get("replicas") or 0), str(status.get("selector") or ""))
        except (AttributeError, TypeError, ValueError) as exc:
            log.warning("scale of %s %s/%s is malformed: %s", kind, namespace, name, exc)
            return None

    def resource(self, group: str, kind: str) -> ResourceKind | None:
        """The resource of ``group``/``kind`` that has a scale subresource (None: not served, or none)."""
        key = (group, kind)
        now = self.clock()
        known = self._resources.get(key)
        if known is not None and now - known[0] < self.ttl:
            return known[1]
        try:
            found = self._discover(group, kind)
        except KubeStatusError as exc:
            log.warning("discovery of %s.%s failed (tried again next loop): %s", kind, group or "core", exc)
            return None
        self._resources[key] = (now, found)
        return found

    def _discover(self, group: str, kind: str) -> ResourceKind | None:
        if group in ("", "core"):
            group, versions = "", ["v1"]
        else:
            try:
                listing: Any = self.rest.request("GET", f"/apis/{group}")
            except KubeStatusError as exc:
                if exc.status == 404:
                    return _NOT_SERVED
                raise
            preferred = (listing.get("preferredVersion") or {}).get("version")
            versions = [preferred] if preferred else [v.get("version") for v in listing.get("versions") or []]
        for version in [v for v in versions if v]:
            prefix = f"/apis/{group}/{version}" if group else f"/api/{version}"
            resources = [
                r for r in self.rest.request("GET", prefix).get("resources") or [] if isinstance(r, dict)
            ]
            names = {str(r.get("name", "")) for r in resources}
            for r in resources:
                plural = str(r.get("name", ""))
                if r.get("kind") == kind and "/" not in plural:
                    if f"{plural}/scale" not in names:
                        return _NOT_SERVED
                    return ResourceKind(group, str(version), kind, plural, bool(r.get("namespaced", True)))
        return _NOT_SERVED
