"""Builders for scenario documents in tests: a small valid document and helpers to load and break it."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from kubetide.model.errors import ManifestError
from kubetide.sim.scenario import Scenario, parse_scenario

_DEPLOYMENT: dict[str, Any] = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "web"},
    "spec": {
        "replicas": 2,
        "selector": {"matchLabels": {"app": "web"}},
        "template": {
            "metadata": {"labels": {"app": "web"}},
            "spec": {
                "containers": [{"name": "web", "resources": {"requests": {"cpu": "250m", "memory": "256Mi"}}}]
            },
        },
    },
}

_DOC: dict[str, Any] = {
    "apiVersion": "kubetide.io/v1alpha1",
    "kind": "Scenario",
    "metadata": {"name": "test"},
    "spec": {
        "duration": "6h",
        "seed": 7,
        "nodeGroups": [
            {"name": "general", "instanceType": "m5.large", "minSize": 1, "maxSize": 10},
            {"name": "spot", "instanceType": "c5d.large", "minSize": 0, "maxSize": 5},
        ],
        "objects": [_DEPLOYMENT],
        "traffic": [
            {
                "target": "Deployment/default/web",
                "rps": {"type": "step", "steps": [{"at": 0, "value": 100}, {"at": "2h", "value": 300}]},
                "cpuPerRequest": "2m",
            }
        ],
        "autoscalers": {"clusterAutoscaler": {"flags": {"scan-interval": "10s"}}},
    },
}


def doc(**spec_changes: Any) -> dict[str, Any]:
    """A fresh valid document; keyword arguments replace keys of ``spec``."""
    out = copy.deepcopy(_DOC)
    out["spec"].update(copy.deepcopy(spec_changes))
    return out


def deployment(name: str = "web", **spec: Any) -> dict[str, Any]:
    out = copy.deepcopy(_DEPLOYMENT)
    out["metadata"]["name"] = name
    out["spec"].update(spec)
    return out


def load(data: Any, base_dir: Path | None = None, overrides: tuple[str, ...] = ()) -> Scenario:
    return parse_scenario(data, base_dir=base_dir, overrides=overrides)


def problems(data: Any, base_dir: Path | None = None, overrides: tuple[str, ...] = ()) -> list[str]:
    """Every problem reported for ``data``, as ``path: message`` lines (fails if it is valid)."""
    try:
        parse_scenario(data, base_dir=base_dir, overrides=overrides)
    except ManifestError as exc:
        return [str(e) for e in exc.errors]
    raise AssertionError("expected the scenario to be invalid")
