"""A scenario small enough that a sweep of it runs in a fraction of a second per run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

TINY: dict[str, Any] = {
    "apiVersion": "kubetide.io/v1alpha1",
    "kind": "Scenario",
    "metadata": {"name": "tiny"},
    "spec": {
        "duration": "40m",
        "seed": 7,
        "nodeGroups": [{"name": "general", "instanceType": "m5.large", "minSize": 1, "maxSize": 6}],
        "objects": [
            {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": {"name": "web"},
                "spec": {
                    "replicas": 2,
                    "selector": {"matchLabels": {"app": "web"}},
                    "template": {
                        "metadata": {"labels": {"app": "web"}},
                        "spec": {
                            "containers": [
                                {"name": "web", "resources": {"requests": {"cpu": "250m", "memory": "256Mi"}}}
                            ]
                        },
                    },
                },
            },
            {
                "apiVersion": "autoscaling/v2",
                "kind": "HorizontalPodAutoscaler",
                "metadata": {"name": "web"},
                "spec": {
                    "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                    "minReplicas": 2,
                    "maxReplicas": 12,
                    "metrics": [
                        {
                            "type": "Resource",
                            "resource": {
                                "name": "cpu",
                                "target": {"type": "Utilization", "averageUtilization": 60},
                            },
                        }
                    ],
                },
            },
        ],
        "traffic": [
            {
                "target": "Deployment/default/web",
                "rps": {"type": "step", "steps": [{"at": 0, "value": 100}, {"at": "10m", "value": 700}]},
                "cpuPerRequest": "2m",
            }
        ],
        "autoscalers": {"hpa": {"tolerance": 0.1}, "clusterAutoscaler": {"flags": {"scan-interval": "10s"}}},
    },
}


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.yaml"
    path.write_text(yaml.safe_dump(TINY, sort_keys=False))
    return path
