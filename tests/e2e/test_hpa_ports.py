"""Against a real API server (the e2e control plane, Kubernetes 1.20.2): the scale subresource of a
Deployment, kubetide's CRD and autoscaling/v2beta2 HPAs listed, paired and their status written.

Part of the end-to-end tier (``make e2e``), on the cluster ``make cluster-up`` starts. The aggregated metrics APIs can't be served by that
API server (their Endpoints can't point at loopback): they are tested with the in-memory server only.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kubetide.hpa.ports import Scale
from kubetide.kube.client import make_http_client
from kubetide.kube.rest import Rest
from kubetide.live.hpa.api import KubeApi
from kubetide.live.hpa.hpas import ApiHPAObjects
from kubetide.live.hpa.scale import ApiScaleTargets
from kubetide.model.hpa import CrossVersionObjectReference

# A minimal CRD for kubetide's HPA (the deploy/ manifest may not be on this branch): the status
# subresource and the scale target are what the port needs.
CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "horizontalpodautoscalers.autoscaling.kubetide.io"},
    "spec": {
        "group": "autoscaling.kubetide.io",
        "scope": "Namespaced",
        "names": {
            "plural": "horizontalpodautoscalers",
            "singular": "horizontalpodautoscaler",
            "kind": "HorizontalPodAutoscaler",
            "shortNames": ["khpa"],
        },
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "subresources": {"status": {}},
                "schema": {
                    "openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
                },
            }
        ],
    },
}


class NoStore:
    def pods(self, namespace: str) -> list[Any]:
        return []

    def version(self, namespace: str) -> int:
        return 0


@pytest.fixture
def api(kubeconfig_path: Path) -> Iterator[KubeApi]:
    http = make_http_client(str(kubeconfig_path))
    yield KubeApi(Rest(http))
    http.close()  # its connections too: an unclosed socket is a ResourceWarning, and warnings fail tests


@pytest.fixture
def namespace(api: KubeApi) -> Iterator[str]:
    name = f"hpalive-{uuid.uuid4().hex[:6]}"
    api.rest.http.post(
        "/api/v1/namespaces", json={"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
    ).raise_for_status()
    yield name
    api.rest.http.delete(f"/api/v1/namespaces/{name}")


def _deployment(name: str, replicas: int) -> dict[str, Any]:
    labels = {"app": name}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "containers": [
                        {"name": "app", "image": "nginx", "resources": {"requests": {"cpu": "100m"}}}
                    ]
                },
            },
        },
    }


def _hpa(api_version: str, name: str, target: str) -> dict[str, Any]:
    return {
        "apiVersion": api_version,
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": name},
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": target},
            "minReplicas": 1,
            "maxReplicas": 5,
            "metrics": [
                {
                    "type": "Resource",
                    "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}},
                }
            ],
        },
    }


def test_scale_subresource_of_a_real_deployment(api: KubeApi, namespace: str) -> None:
    api.rest.http.post(
        f"/apis/apps/v1/namespaces/{namespace}/deployments", json=_deployment("web", 2)
    ).raise_for_status()
    targets = ApiScaleTargets(api, NoStore())
    ref = CrossVersionObjectReference("Deployment", "web", "apps/v1")
    scale = targets.get_scale(namespace, ref)
    assert (scale.spec_replicas, scale.selector) == (2, "app=web")
    targets.update_scale(namespace, ref, 3)
    assert api.get(f"/apis/apps/v1/namespaces/{namespace}/deployments/web")["spec"]["replicas"] == 3
    # A stale read: the update conflicts once, is re-read and retried.
    targets.get_scale(namespace, ref)
    # Another writer scales it meanwhile (unconditionally, as `kubectl scale` does: no resourceVersion,
    # so this write never conflicts with the deployment controller's own updates).
    scale_path = f"/apis/apps/v1/namespaces/{namespace}/deployments/web/scale"
    current = api.get(scale_path)
    metadata = {k: v for k, v in current["metadata"].items() if k != "resourceVersion"}
    api.put(scale_path, {**current, "metadata": metadata, "spec": {"replicas": 1}})
    # The deployment controller writes the Deployment's status as it scales to 1 (each write a new
    # resourceVersion): let it settle, so the conflict below is the other writer's alone, not a race with
    # the controller that a loaded machine can lose every retry of.
    deployment = f"/apis/apps/v1/namespaces/{namespace}/deployments/web"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        d = api.get(deployment)
        status = d.get("status") or {}
        if status.get("observedGeneration") == d["metadata"]["generation"] and status.get("replicas") == 1:
            break
        time.sleep(0.2)
    else:
        raise AssertionError(f"the Deployment did not settle at 1 replica: {d.get('status')}")
    targets.update_scale(namespace, ref, 4)
    assert targets.get_scale(namespace, ref) == Scale(
        4, targets.get_scale(namespace, ref).status_replicas, "app=web"
    )


def test_crd_and_v2beta2_hpas_listed_paired_and_status_written(api: KubeApi, namespace: str) -> None:
    crd_path = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
    created = api.rest.http.post(crd_path, json=CRD)
    assert created.status_code in (201, 409), created.text
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        conditions = api.get(f"{crd_path}/{CRD['metadata']['name']}").get("status", {}).get("conditions", [])
        if any(c["type"] == "Established" and c["status"] == "True" for c in conditions):
            break
        time.sleep(0.5)
    api.rest.http.post(
        f"/apis/apps/v1/namespaces/{namespace}/deployments", json=_deployment("web", 1)
    ).raise_for_status()
    ours = f"/apis/autoscaling.kubetide.io/v1/namespaces/{namespace}/horizontalpodautoscalers"
    standard = f"/apis/autoscaling/v2beta2/namespaces/{namespace}/horizontalpodautoscalers"
    api.rest.http.post(ours, json=_hpa("autoscaling.kubetide.io/v1", "mine", "web")).raise_for_status()
    api.rest.http.post(standard, json=_hpa("autoscaling/v2beta2", "std", "web")).raise_for_status()

    source = ApiHPAObjects(api, namespace=namespace)
    listing = source.list_hpas()
    assert [e.hpa.key for e in listing.entries] == [f"{namespace}/mine"] and not listing.problems
    assert [(c.kubetide.name, c.standard.name) for c in listing.conflicts] == [("mine", "std")]
    status = {
        "currentReplicas": 1,
        "desiredReplicas": 2,
        "conditions": [
            {
                "type": "AbleToScale",
                "status": "True",
                "reason": "SucceededGetScale",
                "message": "ok",
                "lastTransitionTime": "2026-11-23T20:00:00Z",
            }
        ],
    }
    source.write_status(f"{namespace}/mine", status)
    source.write_status(
        f"{namespace}/mine", {**status, "desiredReplicas": 3}
    )  # resourceVersion moved: retried
    assert api.get(f"{ours}/mine")["status"]["desiredReplicas"] == 3

    std_source = ApiHPAObjects(api, standard=True, namespace=namespace)
    std_listing = std_source.list_hpas()
    assert std_source.api_version == "autoscaling/v2beta2"
    assert [e.hpa.key for e in std_listing.entries] == [f"{namespace}/std"]
    assert [(c.kubetide.name, c.standard.name) for c in std_listing.conflicts] == [("mine", "std")]
    std_source.write_status(f"{namespace}/std", status)
    written = api.get(f"{standard}/std")["status"]
    assert (written["desiredReplicas"], written["conditions"][0]["reason"]) == (2, "SucceededGetScale")
