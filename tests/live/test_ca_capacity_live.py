"""The capacity APIs in live mode: what the caches give the loop (a broken object reported, never hiding
the others; nothing read with every flag off) and how the loop's writes reach the API server (a status
on the status subresource with the read resourceVersion, a conflict retried; a managed PodTemplate
created or updated; a deletion of what is gone already is done; a dry run writes nothing)."""

from __future__ import annotations

from typing import Any

import pytest

from kubetide.cluster.capacity.objects import BrokenObject, CapacityWrite
from kubetide.cluster.options import AutoscalingOptions
from kubetide.kube.discovery import ServedVersions, resource_kinds
from kubetide.live.actuation import KubeClusterPort
from kubetide.live.cluster_autoscaler.capacity import write_capacity
from kubetide.live.cluster_autoscaler.world import CAWorldSource
from kubetide.live.guard import GuardedClusterPort, WriteGate
from kubetide.model.api import ApiError
from kubetide.testing.apiserver import FakeApi, obj, status

KINDS = resource_kinds(ServedVersions())
ALL_ON = AutoscalingOptions(
    capacity_buffer_controller_enabled=True,
    capacity_buffer_pod_injection_enabled=True,
    enable_provisioning_requests=True,
    capacity_quotas_enabled=True,
)
BUFFER_PATH = "/apis/autoscaling.x-k8s.io/v1beta1/namespaces/web/capacitybuffers/spare"


def _add(informer: Any, manifest: dict[str, Any]) -> None:
    informer._apply({"type": "ADDED", "object": manifest}, "1")


def _buffer(name: str, rv: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "autoscaling.x-k8s.io/v1beta1",
        "kind": "CapacityBuffer",
        **obj(name, rv, "web", spec=spec),
    }


def test_with_every_flag_off_ca_reads_what_it_read_before() -> None:
    source = CAWorldSource(FakeApi().rest(), ServedVersions(), options=AutoscalingOptions())
    assert source.capacity is None
    assert {i.kind.plural for i in source.informers}.isdisjoint(
        {"capacitybuffers", "provisioningrequests", "capacityquotas", "podtemplates", "deployments"}
    )
    assert source.world().capacity is None


def test_only_what_a_flag_turns_on_is_watched() -> None:
    options = AutoscalingOptions(enable_provisioning_requests=True)
    source = CAWorldSource(FakeApi().rest(), ServedVersions(), options=options)
    watched = {i.kind.plural for i in source.informers}
    assert {"provisioningrequests", "podtemplates"} <= watched
    assert watched.isdisjoint({"capacitybuffers", "capacityquotas", "deployments"})


def test_the_world_holds_the_objects_and_reports_a_broken_one_beside_them() -> None:
    source = CAWorldSource(FakeApi().rest(), ServedVersions(), options=ALL_ON)
    caches = source.capacity
    assert caches is not None and caches.buffers is not None and caches.templates is not None
    assert caches.quotas is not None
    _add(caches.buffers, _buffer("good", "1", podTemplateRef={"name": "t"}, replicas=2))
    # Both refs and a negative count: the CRD's rules (which a 1.20 server does not run) refuse it.
    broken = _buffer(
        "bad", "2", podTemplateRef={"name": "t"}, scalableRef={"kind": "Deployment", "name": "w"}
    )
    broken["spec"]["replicas"] = -1
    _add(caches.buffers, broken)
    _add(caches.templates, obj("t", "3", "web", template={"spec": {"containers": [{"name": "c"}]}}))
    _add(caches.quotas, obj("q", "4", spec={"limits": {"resources": {"nodes": "3"}}}))
    world = source.world()
    capacity = world.capacity
    assert capacity is not None
    assert [b.name for b in capacity.buffers] == ["good"]
    assert list(capacity.pod_templates) == ["web/t"]
    assert [q.name for q in capacity.quotas] == ["q"]
    (bad,) = capacity.broken
    assert isinstance(bad, BrokenObject) and (bad.kind, bad.namespace, bad.name) == (
        "CapacityBuffer",
        "web",
        "bad",
    )
    assert "podTemplateRef and scalableRef cannot both be set" in bad.message
    assert "spec.replicas" in bad.message
    assert source.world() is world  # nothing changed: the same world
    # A PodTemplate whose pod does not read is reported too (a request naming it would else say missing).
    _add(caches.templates, obj("bad-t", "5", "web", template={"spec": {"containers": [{"name": 1}]}}))
    capacity = source.world().capacity
    assert capacity is not None
    assert [(b.kind, b.name) for b in capacity.broken] == [
        ("CapacityBuffer", "bad"),
        ("PodTemplate", "bad-t"),
    ]


def test_a_scalable_ref_reads_the_deployments_scale_and_its_newest_pod() -> None:
    options = AutoscalingOptions(capacity_buffer_controller_enabled=True)
    source = CAWorldSource(FakeApi().rest(), ServedVersions(), options=options)
    caches = source.capacity
    assert caches is not None and caches.buffers is not None
    ref = {"apiGroup": "apps", "kind": "Deployment", "name": "api"}
    _add(caches.buffers, _buffer("b", "1", scalableRef=ref, percentage=50))
    selector = {"matchLabels": {"app": "api"}}
    _add(
        caches.workloads["deployments"],
        obj("api", "2", "web", spec={"replicas": 4, "selector": selector}, status={"replicas": 4}),
    )
    for i, created in enumerate(("2026-01-01T00:00:00Z", "2026-01-02T00:00:00Z")):
        pod = obj(f"api-{i}", str(3 + i), "web", spec={"containers": [{"name": "c"}], "nodeName": "n1"})
        pod["metadata"].update(labels={"app": "api", "version": str(i)}, creationTimestamp=created)
        _add(source.pods, pod)
    capacity = source.world().capacity
    assert capacity is not None
    scalable = capacity.scalables[("apps", "Deployment", "web", "api")]
    assert scalable.scale_replicas == 4 and scalable.template_replicas == 4
    assert scalable.recent_pod is not None
    assert scalable.recent_pod["metadata"]["labels"]["version"] == "1"  # the most recent pod


def test_a_status_is_put_on_the_status_subresource_and_a_conflict_read_again() -> None:
    current = _buffer("spare", "7", replicas=1)
    api = (
        FakeApi()
        .add("GET", BUFFER_PATH, (200, current))
        .add("PUT", BUFFER_PATH + "/status", status(409, "Conflict"), (200, current))
    )
    body = {"replicas": 1, "conditions": [{"type": "ReadyForProvisioning", "status": "True"}]}
    write = CapacityWrite("status", "CapacityBuffer", "web", "spare", "autoscaling.x-k8s.io/v1beta1", body)
    write_capacity(api.rest(), KINDS, write, sleep=lambda _: None)
    puts = api.bodies("PUT", BUFFER_PATH + "/status")
    assert len(puts) == 2 and puts[-1]["status"] == body
    assert puts[-1]["metadata"]["resourceVersion"] == "7"  # optimistic concurrency, as CA's update


def test_a_status_of_an_object_gone_since_the_loop_read_it_is_dropped() -> None:
    api = FakeApi().add("GET", BUFFER_PATH, status(404, "NotFound"))
    write = CapacityWrite("status", "CapacityBuffer", "web", "spare", "autoscaling.x-k8s.io/v1beta1", {})
    write_capacity(api.rest(), KINDS, write, sleep=lambda _: None)
    assert api.bodies("PUT", BUFFER_PATH + "/status") == []


def test_a_managed_pod_template_is_created_then_updated() -> None:
    path = "/api/v1/namespaces/web/podtemplates/capacitybuffer-spare-pod-template"
    owner = [{"kind": "CapacityBuffer", "name": "spare", "uid": "u", "controller": True}]
    body = {
        "apiVersion": "v1",
        "kind": "PodTemplate",
        "metadata": {
            "name": "capacitybuffer-spare-pod-template",
            "namespace": "web",
            "ownerReferences": owner,
        },
        "template": {"spec": {"containers": [{"name": "c"}]}},
    }
    write = CapacityWrite(
        "pod-template", "PodTemplate", "web", "capacitybuffer-spare-pod-template", "v1", body
    )
    api = (
        FakeApi()
        .add("GET", path, status(404, "NotFound"))
        .add("POST", "/api/v1/namespaces/web/podtemplates", (201, body))
    )
    write_capacity(api.rest(), KINDS, write, sleep=lambda _: None)
    assert api.bodies("POST", "/api/v1/namespaces/web/podtemplates") == [body]
    existing = obj("capacitybuffer-spare-pod-template", "9", "web", template={"spec": {}})
    api = FakeApi().add("GET", path, (200, existing)).add("PUT", path, (200, existing))
    write_capacity(api.rest(), KINDS, write, sleep=lambda _: None)
    (put,) = api.bodies("PUT", path)
    assert put["template"] == body["template"] and put["metadata"]["ownerReferences"] == owner
    assert put["metadata"]["resourceVersion"] == "9"


def test_deleting_a_request_gone_already_is_done_and_a_refusal_is_reported() -> None:
    path = "/apis/autoscaling.x-k8s.io/v1/namespaces/web/provisioningrequests/old"
    write = CapacityWrite("delete", "ProvisioningRequest", "web", "old", "autoscaling.x-k8s.io/v1")
    write_capacity(
        FakeApi().add("DELETE", path, status(404, "NotFound")).rest(), KINDS, write, sleep=lambda _: None
    )
    refused = FakeApi().add("DELETE", path, status(403, "Forbidden", "no"))
    with pytest.raises(ApiError, match="ProvisioningRequest/web/old"):
        write_capacity(refused.rest(), KINDS, write, sleep=lambda _: None)


def test_a_dry_run_makes_no_capacity_write() -> None:
    api = FakeApi()
    port = KubeClusterPort(api.rest(), ServedVersions(), component="cluster-autoscaler")
    guarded = GuardedClusterPort(port, WriteGate("cluster-autoscaler", lambda: True, dry_run=True))
    guarded.write_capacity(
        CapacityWrite("delete", "ProvisioningRequest", "web", "old", "autoscaling.x-k8s.io/v1")
    )
    assert api.requests == []


def _custom_scale_api(replicas: int) -> FakeApi:
    """An API server that serves a CRD ``Rollout`` (argoproj.io/v1alpha1) with a scale subresource."""
    api = FakeApi()
    api.add(
        "GET",
        "/apis/argoproj.io",
        (200, {"preferredVersion": {"groupVersion": "argoproj.io/v1alpha1", "version": "v1alpha1"}}),
    )
    resources = [
        {"name": "rollouts", "kind": "Rollout", "namespaced": True},
        {"name": "rollouts/scale", "kind": "Scale", "namespaced": True},
        {"name": "rollouts/status", "kind": "Rollout", "namespaced": True},
        {"name": "analysisruns", "kind": "AnalysisRun", "namespaced": True},
    ]
    api.add("GET", "/apis/argoproj.io/v1alpha1", (200, {"resources": resources}))
    api.add(
        "GET",
        "/apis/argoproj.io/v1alpha1/namespaces/web/rollouts/api/scale",
        (200, {"spec": {"replicas": replicas}, "status": {"replicas": replicas, "selector": "app=api"}}),
    )
    return api


def test_a_scalable_ref_to_a_custom_resource_reads_its_scale_subresource_and_newest_pod() -> None:
    # CA 1.36 capacitybuffer/client/client.go GetScaleObject (RESTMapping of the group and kind, then the
    # scale subresource) and scalable_object_resolvers.go ScaleObjectPodResolver (the newest pod the
    # Scale's status.selector picks, and status.replicas).
    api = _custom_scale_api(6)
    options = AutoscalingOptions(capacity_buffer_controller_enabled=True)
    source = CAWorldSource(api.rest(), ServedVersions(), options=options)
    caches = source.capacity
    assert caches is not None and caches.buffers is not None
    ref = {"apiGroup": "argoproj.io", "kind": "Rollout", "name": "api"}
    _add(caches.buffers, _buffer("b", "1", scalableRef=ref, percentage=50))
    for i, (created, app) in enumerate((("2026-01-03T00:00:00Z", "other"), ("2026-01-02T00:00:00Z", "api"))):
        pod = obj(f"p-{i}", str(3 + i), "web", spec={"containers": [{"name": "c"}], "nodeName": "n1"})
        pod["metadata"].update(labels={"app": app}, creationTimestamp=created)
        _add(source.pods, pod)
    capacity = source.world().capacity
    assert capacity is not None
    scalable = capacity.scalables[("argoproj.io", "Rollout", "web", "api")]
    assert scalable.scale_replicas == 6
    assert scalable.recent_pod is not None and scalable.recent_pod["metadata"]["name"] == "p-1"
    # Read again each loop (no watch tells of a change); discovery is not asked again.
    source.world()
    paths = [r.url.path for r in api.requests]
    assert paths.count("/apis/argoproj.io/v1alpha1/namespaces/web/rollouts/api/scale") == 2
    assert paths.count("/apis/argoproj.io/v1alpha1") == 1


def test_a_custom_kind_without_a_scale_subresource_or_not_served_has_none() -> None:
    api = _custom_scale_api(6)
    api.add(
        "GET",
        "/apis/argoproj.io/v1alpha1",
        (200, {"resources": [{"name": "analysisruns", "kind": "AnalysisRun", "namespaced": True}]}),
    )
    options = AutoscalingOptions(capacity_buffer_controller_enabled=True)
    source = CAWorldSource(api.rest(), ServedVersions(), options=options)
    caches = source.capacity
    assert caches is not None and caches.buffers is not None
    _add(
        caches.buffers,
        _buffer("b", "1", scalableRef={"apiGroup": "argoproj.io", "kind": "AnalysisRun", "name": "x"}),
    )
    _add(
        caches.buffers,
        _buffer("c", "2", scalableRef={"apiGroup": "nowhere.io", "kind": "Thing", "name": "y"}),
    )
    capacity = source.world().capacity
    assert capacity is not None and capacity.scalables == {}
