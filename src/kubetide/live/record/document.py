"""The scenario of a recording, written again at every flush: what the files hold, as one scenario.

Pure: the recorder's settings and state in, the document (plain data, the scenario format) out. The
objects at the start are ``objects.yaml``, the changes ``actions.jsonl``; the recorded day is named in
``spec.recording`` (the report draws it beside the replay, ``kubetide replay compare`` compares them).
How a workload's measured series become its traffic is the load model's choice:

- ``per-pod``: each Ready pod of the replay uses what the recorded pods used on average at that moment
  (``perPod.cpu``, ``perPod.memory``): the day replays as it was, whatever the number of pods; a what-if
  that adds pods does not spread the load over them;
- ``shared``: the recorded CPU of all pods together is spread over the replay's Ready pods (``rps`` in
  cores with ``cpuPerRequest: 1``), as traffic behind a Service is: a what-if spreads the load, but a
  replay whose pods become Ready at other moments sees other utilizations than the recorded ones.

Custom and external metrics are the recorded series themselves (``traffic[].metrics``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from kubetide.live.record.files import Layout
from kubetide.live.record.metrics import Feed
from kubetide.live.record.settings import RecordSettings

__all__ = ["scenario_document", "traffic_entries"]

API_VERSION = "kubetide.io/v1alpha1"


def _csv(path: str, column: str) -> dict[str, Any]:
    return {"type": "csv", "path": path, "column": column}


def traffic_entries(
    load_model: str,
    files: Mapping[str, Mapping[str, str]],
    feeds: Mapping[str, Mapping[str, Feed]],
) -> list[dict[str, Any]]:
    """``spec.traffic`` from the series files that hold rows: ``files[workload][series] = path``."""
    out = []
    for workload in sorted(files):
        series = files[workload]
        entry: dict[str, Any] = {"target": workload}
        per_pod: dict[str, Any] = {}
        if load_model == "shared" and "cpu_total" in series:
            entry["rps"] = _csv(series["cpu_total"], "cpu_total")
            entry["cpuPerRequest"] = "1"
        elif "cpu" in series:
            per_pod["cpu"] = _csv(series["cpu"], "cpu")
        if "memory" in series:
            per_pod["memory"] = _csv(series["memory"], "memory")
        if per_pod:
            entry["perPod"] = per_pod
        metrics = []
        for name, feed in sorted((feeds.get(workload) or {}).items()):
            if name not in series:
                continue
            metric: dict[str, Any] = {"name": feed.name, "kind": feed.kind}
            if feed.selector:
                metric["selector"] = dict(feed.selector)
            if feed.described_object:
                metric["describedObject"] = feed.described_object
            metric["series"] = _csv(series[name], name)
            metrics.append(metric)
        if metrics:
            entry["metrics"] = metrics
        if "rps" in entry or per_pod or metrics:
            out.append(entry)
    return out


def _autoscalers(settings: RecordSettings, phases: Mapping[str, float]) -> dict[str, Any]:
    """The recorded autoscalers' settings, each loop at the phase the recorded one ran at."""
    out = {name: dict(section) for name, section in settings.autoscalers.items()}
    keys = {"clusterAutoscaler": "firstLoopAt", "hpa": "firstSyncAt"}
    for name, phase in phases.items():
        if name in out:
            out[name][keys[name]] = _seconds(phase)
    return out


def scenario_document(
    settings: RecordSettings,
    phases: Mapping[str, float],
    node_groups: Sequence[Mapping[str, Any]],
    duration: float,
    *,
    has_objects: bool,
    traffic: Sequence[Mapping[str, Any]],
    recorded_from: str,
    recorded_until: str,
    first_sample_after: float | None = None,
) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "duration": max(1, math.ceil(duration)),
        "nodeGroups": [dict(g) for g in node_groups],
        "objects": [Layout.OBJECTS] if has_objects else [],
        "actions": [Layout.ACTIONS],
    }
    if traffic:
        spec["traffic"] = [dict(t) for t in traffic]
    spec["metrics"] = {"resolution": _seconds(settings.interval)}
    if first_sample_after is not None:  # measured: how long a new pod ran before its first sample
        spec["metrics"]["firstSampleAfter"] = _seconds(round(first_sample_after, 1))
    spec["autoscalers"] = _autoscalers(settings, phases)
    spec["recording"] = {"samples": Layout.SAMPLES, "events": Layout.EVENTS}
    return {
        "apiVersion": API_VERSION,
        "kind": "Scenario",
        "metadata": {
            "name": settings.name,
            "annotations": {
                "kubetide.io/recorded-from": recorded_from,
                "kubetide.io/recorded-until": recorded_until,
                "kubetide.io/load-model": settings.load_model,
            },
        },
        "spec": spec,
    }


def _seconds(value: float) -> str:
    return f"{round(value, 3):g}s"
