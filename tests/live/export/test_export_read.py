"""Listing the cluster: served versions discovered (a 404 means "not served"), raw items kept whole."""

from __future__ import annotations

from typing import Any

import pytest
from lightkube.core.exceptions import ApiError
from lightkube.models.meta_v1 import Status

from kubetide.live.export.read import read_cluster


class FakeClient:
    """Serves the listed (apiVersion, kind) pairs; every other list is a 404, as the API server answers."""

    def __init__(self, served: dict[tuple[str, str], list[dict[str, Any]]], fail: int = 404) -> None:
        self.served = served
        self.fail = fail
        self.calls: list[tuple[str, str, Any]] = []

    def list(self, res: Any, namespace: str | None = None, fields: Any = None) -> list[dict[str, Any]]:
        info = res._api_info.resource
        api_version = f"{info.group}/{info.version}" if info.group else info.version
        self.calls.append((api_version, info.kind, namespace))
        if (api_version, info.kind) not in self.served:
            raise ApiError(
                status=Status(code=self.fail, reason="NotFound", message="the server could not find")
            )
        return self.served[(api_version, info.kind)]


def test_the_served_versions_are_used_and_items_get_their_kind_back() -> None:
    hpa = {"metadata": {"name": "web", "namespace": "default"}, "spec": {"maxReplicas": 3, "future": 1}}
    pdb = {"metadata": {"name": "web", "namespace": "default"}, "spec": {"selector": {}}}
    client = FakeClient(
        {
            ("v1", "Node"): [],
            ("apps/v1", "Deployment"): [],
            ("apps/v1", "StatefulSet"): [],
            ("apps/v1", "DaemonSet"): [],
            ("batch/v1", "Job"): [],
            ("v1", "Pod"): [],
            ("v1", "ConfigMap"): [],
            ("autoscaling/v2beta2", "HorizontalPodAutoscaler"): [hpa],
            ("policy/v1beta1", "PodDisruptionBudget"): [pdb],
        }
    )
    cluster = read_cluster(client)  # type: ignore[arg-type]
    assert cluster.hpas == [{"apiVersion": "autoscaling/v2beta2", "kind": "HorizontalPodAutoscaler", **hpa}]
    assert cluster.pdbs[0]["apiVersion"] == "policy/v1beta1"
    assert cluster.kubetide_hpas == []  # the CRD is not installed
    tried = [(v, k) for v, k, _ in client.calls if k == "HorizontalPodAutoscaler"]
    assert tried == [
        ("autoscaling/v2", "HorizontalPodAutoscaler"),
        ("autoscaling/v2beta2", "HorizontalPodAutoscaler"),
        ("autoscaling.kubetide.io/v1", "HorizontalPodAutoscaler"),
    ]
    assert ("apps/v1", "Deployment", "*") in client.calls  # every namespace, filtered afterwards


def test_an_error_other_than_not_served_is_raised() -> None:
    client = FakeClient({("v1", "Node"): []}, fail=403)
    with pytest.raises(ApiError):
        read_cluster(client)  # type: ignore[arg-type]
