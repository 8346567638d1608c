"""Pod templates: parsed once into a Pod view, then stamped per pod (a ``replace``, not a re-parse)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kubetide.model.durations import parse_duration
from kubetide.model.fields import Node
from kubetide.model.pod import OwnerRef, Pod

STARTUP_DELAY_ANNOTATION = "kubetide.io/startup-delay"
DURATION_ANNOTATION = "kubetide.io/duration"
DEFAULT_STARTUP_DELAY = 5.0


@dataclass(frozen=True, slots=True)
class PodTemplate:
    view: Pod  # name left empty; stamped per pod
    startup_delay: float
    readiness_delay: float
    run_for: float | None  # Job pods

    def stamp(self, name: str, namespace: str, owner: OwnerRef | None, uid: str) -> Pod:
        return self.view.evolve(name=name, namespace=namespace, uid=uid, owners=(owner,) if owner else ())


def parse_template(
    template: Mapping[str, Any], namespace: str, path: str, job_duration: str | None = None
) -> PodTemplate:
    """A pod template (``spec.template`` of a workload, or a bare Pod manifest)."""
    meta = dict(template.get("metadata") or {})
    meta.setdefault("name", "template")
    meta["namespace"] = namespace
    view = Pod.from_manifest({"metadata": meta, "spec": template.get("spec") or {}}, path)
    annotations = view.annotations
    startup = annotations.get(STARTUP_DELAY_ANNOTATION)
    duration = annotations.get(DURATION_ANNOTATION, job_duration)
    readiness = 0.0
    for c in Node(template, path).get("spec").get("containers").list():
        probe = c.get("readinessProbe")
        if probe.value is not None:
            readiness = max(readiness, float(probe.get("initialDelaySeconds").number(0)))
    return PodTemplate(
        view,
        parse_duration(startup) if startup is not None else DEFAULT_STARTUP_DELAY,
        readiness,
        parse_duration(duration) if duration is not None else None,
    )
