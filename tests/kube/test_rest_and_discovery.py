"""Served-version discovery, REST paths, status errors and the retry policy."""

from __future__ import annotations

import pytest

from kubetide.kube.discovery import DiscoveryError, ResourceKind, ServedVersions, discover, resource_kinds
from kubetide.kube.rest import Backoff, KubeStatusError, resource_of, retrying
from kubetide.testing.apiserver import FakeApi, status


def _apis(*groups: tuple[str, tuple[str, ...]]) -> tuple[int, dict[str, object]]:
    return 200, {"groups": [{"name": n, "versions": [{"version": v} for v in vs]} for n, vs in groups]}


def test_discovery_prefers_ga_versions_and_falls_back_to_the_betas_1_20_serves() -> None:
    old = _apis(
        ("autoscaling", ("v1", "v2beta1", "v2beta2")),
        ("policy", ("v1beta1",)),
        ("coordination.k8s.io", ("v1",)),
    )
    assert discover(FakeApi().add("GET", "/apis", old).rest()) == ServedVersions("v2beta2", "v1beta1", "v1")
    new = _apis(("autoscaling", ("v2", "v1")), ("policy", ("v1",)), ("coordination.k8s.io", ("v1",)))
    versions = discover(FakeApi().add("GET", "/apis", new).rest())
    assert versions == ServedVersions("v2", "v1", "v1") and versions.pdb_empty_selector_matches_all
    with pytest.raises(DiscoveryError):
        discover(FakeApi().add("GET", "/apis", _apis(("autoscaling", ("v1",)))).rest())


def test_paths_and_metric_labels() -> None:
    kinds = resource_kinds(ServedVersions("v2beta2", "v1beta1"))
    assert (
        kinds["poddisruptionbudgets"].path("web")
        == "/apis/policy/v1beta1/namespaces/web/poddisruptionbudgets"
    )
    assert kinds["pods"].path("web", "p", "eviction") == "/api/v1/namespaces/web/pods/p/eviction"
    assert ResourceKind("", "v1", "Node", "nodes", namespaced=False).path("x", "n1") == "/api/v1/nodes/n1"
    assert resource_of("/api/v1/namespaces/web/pods/p/eviction") == "pods/eviction"
    assert resource_of("/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/ca") == "leases"
    assert resource_of("/apis") == "discovery"


def test_status_errors_carry_reason_and_retry_covers_only_transient_ones() -> None:
    api = FakeApi().add("GET", "/api/v1/nodes/n", status(503, "ServiceUnavailable"), status(403, "Forbidden"))
    rest = api.rest()
    slept: list[float] = []
    with pytest.raises(KubeStatusError) as err:
        retrying(lambda: rest.request("GET", "/api/v1/nodes/n"), sleep=slept.append)
    assert (err.value.status, err.value.reason) == (403, "Forbidden")
    assert len(api.requests) == 2 and len(slept) == 1


def test_backoff_is_capped_exponential_with_jitter() -> None:
    b = Backoff(base=1.0, cap=8.0, factor=2.0, jitter=0.5, rng=lambda: 1.0)
    assert [b.next() for _ in range(6)] == [1.5, 3.0, 6.0, 12.0, 12.0, 12.0]
    b.reset()
    assert b.next() == 1.5
