"""The CapacityBuffer controller and the injection of buffer pods, ported from CA 1.36.1's own tests:
``capacitybuffer/translators/pod_template_translator_test.go`` (TestPodTemplateBufferTranslator),
``capacitybuffer/translators/scalable_objects_translator_test.go`` and
``processors/capacitybuffer/pod_list_processor_test.go`` (TestCapacityBufferFakePodsRegistry).

The API server is the simulator's capacity store (what the controller's writes do to the objects), so a
buffer is translated as the loop translates it: its managed PodTemplate written first, its status named
after the template's generation the loop after.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from ca_loop_harness import Harness
from ca_loop_harness import node as harness_node
from ca_loop_harness import pod as harness_pod
from ca_loop_harness import template as harness_template

from kubetide.cluster.capacity.buffers.controller import (
    buffer_number_of_pods,
    defaulted_template,
    managed_template_name,
    translate_buffers,
)
from kubetide.cluster.capacity.buffers.injection import (
    FAKE_POD_ANNOTATION,
    FAKE_POD_VALUE,
    BufferPodMaker,
    is_buffer_pod,
)
from kubetide.cluster.capacity.objects import CapacityObjects, ScalableObject
from kubetide.cluster.options import AutoscalingOptions
from kubetide.model.capacity.buffer import CapacityBuffer, parse_windows
from kubetide.model.capacity.conditions import Condition, find_condition, parse_conditions
from kubetide.model.capacity.podtemplate import PodTemplateView
from kubetide.model.errors import ManifestError
from kubetide.model.fields import Node
from kubetide.sim.cluster.capacity import CapacityStore
from kubetide.testing.cloud import RecordingCloud

READY = "ReadyForProvisioning"
NO_REPLICAS = (
    "Buffer not ready for provisioning: couldn't get number of replicas for buffer: replicas, percentage "
    "and limits are not defined"
)
RESOURCES_NOT_FOUND = (
    "Buffer not ready for provisioning: couldn't get number of replicas for buffer: resources in "
    "configured limits not found in the pod template"
)


def template(name: str, requests: dict[str, str] | None = None, **extra: Any) -> dict[str, Any]:
    container: dict[str, Any] = {"name": "c", "image": "pause"}
    if requests is not None:
        container["resources"] = {"requests": requests}
    container.update(extra)
    return {
        "apiVersion": "v1",
        "kind": "PodTemplate",
        "metadata": {"name": name, "namespace": "default"},
        "template": {"spec": {"containers": [container]}},
    }


def buffer(name: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "autoscaling.x-k8s.io/v1beta1",
        "kind": "CapacityBuffer",
        "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
        "spec": spec,
    }


def store_with(*manifests: dict[str, Any]) -> CapacityStore:
    store = CapacityStore()
    for manifest in manifests:
        store.apply(manifest, 0.0)
    return store


def converge(store: CapacityStore, now: float = 10.0, loops: int = 3) -> dict[str, CapacityBuffer]:
    """The controller's loops until its writes settle; each buffer as the API server then holds it."""
    for _ in range(loops):
        objects = store.objects(0, dict)
        assert objects is not None
        translation = translate_buffers(objects.buffers, objects, now)
        for write in translation.writes:
            store.write(write, now)
        if not translation.writes:
            break
    objects = store.objects(0, dict)
    assert objects is not None
    return {b.name: b for b in objects.buffers}


def ready(b: CapacityBuffer) -> str | None:
    found = find_condition(b.status.conditions, READY)
    return None if found is None else found.status


# -- TestPodTemplateBufferTranslator --------------------------------------------------------------


def test_one_buffer_with_a_pod_template_ref_is_ready_with_its_replicas() -> None:
    store = store_with(template("some"), buffer("a", podTemplateRef={"name": "some"}, replicas=3))
    (a,) = converge(store).values()
    assert ready(a) == "True"
    assert a.status.replicas == 3
    assert a.status.pod_template_ref == managed_template_name("a") == "capacitybuffer-a-pod-template"
    assert a.status.provisioning_strategy == "buffer.x-k8s.io/active-capacity"
    condition = find_condition(a.status.conditions, READY)
    assert condition is not None and condition.reason == "AttributesSetSuccessfully"
    assert condition.message == "ready"
    managed = store.manifests["PodTemplate/default/capacitybuffer-a-pod-template"]
    assert managed["metadata"]["ownerReferences"][0]["name"] == "a"
    assert a.status.pod_template_generation == managed["metadata"]["generation"]


def test_a_buffer_with_a_missing_pod_template_is_not_ready_and_the_other_is() -> None:
    store = store_with(
        template("some"),
        buffer("a", podTemplateRef={"name": "some"}, replicas=3),
        buffer("b", podTemplateRef={"name": "randomRef"}, replicas=5),
    )
    buffers = converge(store)
    assert ready(buffers["a"]) == "True"
    assert ready(buffers["b"]) == "False"
    condition = find_condition(buffers["b"].status.conditions, READY)
    assert condition is not None
    assert condition.message == (
        "Buffer not ready for provisioning: capacity buffer client can't get pod template: "
        'podtemplates "randomRef" not found'
    )
    assert condition.reason == "error"
    assert buffers["b"].status.pod_template_ref is None and buffers["b"].status.replicas is None


def test_a_buffer_with_neither_replicas_nor_limits_names_its_template_but_has_no_replicas() -> None:
    # Test 2 buffers, one with no replicas: the CRD's rule refuses it, so it comes as a view.
    store = store_with(template("some"), buffer("a", podTemplateRef={"name": "some"}, replicas=3))
    objects = store.objects(0, dict)
    assert objects is not None
    lone = CapacityBuffer(name="b", uid="uid-b", pod_template_ref="some")
    objects = CapacityObjects(buffers=(lone,), pod_templates=objects.pod_templates)
    translation = translate_buffers(objects.buffers, objects, 1.0)
    (write,) = translation.writes
    assert write.action == "pod-template"
    store.write(write, 1.0)
    objects = store.objects(0, dict)
    assert objects is not None
    objects = CapacityObjects(buffers=(lone,), pod_templates=objects.pod_templates)
    status = translate_buffers(objects.buffers, objects, 2.0).statuses["default/b"]
    condition = find_condition(status.conditions, READY)
    assert condition is not None and condition.status == "False" and condition.message == NO_REPLICAS
    assert status.pod_template_ref == "capacitybuffer-b-pod-template" and status.replicas is None
    assert status.pod_template_generation == 1


def test_a_buffer_with_neither_ref_is_left_alone() -> None:
    lone = CapacityBuffer(name="b", replicas=5)
    translation = translate_buffers((lone,), CapacityObjects(buffers=(lone,)), 1.0)
    assert translation.writes == ()
    assert translation.statuses["default/b"] == lone.status


@pytest.mark.parametrize(
    ("requests", "replicas", "limits", "expected"),
    [
        ({"memory": "4Gi", "cpu": "100m"}, None, {"memory": "5Gi", "cpu": "200m"}, 1),  # no replicas
        ({"memory": "4Gi", "cpu": "100m"}, 3, {"memory": "9Gi", "cpu": "200m"}, 2),  # higher replicas
        ({"memory": "4Gi", "cpu": "100m"}, 1, {"memory": "9Gi", "cpu": "200m"}, 1),  # lower replicas
        (
            {"nvidia.com/gpu": "4", "memory": "16Gi", "cpu": "1000m"},
            5,
            {"memory": "100Gi", "cpu": "5000m", "nvidia.com/gpu": "10"},
            2,
        ),
        (
            {"nvidia.com/gpu": "4", "memory": "16Gi", "cpu": "1000m"},
            5,
            {"memory": "100Gi", "cpu": "5000m", "nvidia.com/gpu": "2"},
            0,
        ),
        ({"memory": "8Gi", "cpu": "200m"}, 3, {"cpu": "100m"}, 0),  # limits less than one pod
        ({"memory": "4Gi", "cpu": "100m"}, 2**31 - 1, None, 2**31 - 1),  # replicas MaxInt32
    ],
)
def test_limits_cap_the_number_of_pods(
    requests: dict[str, str], replicas: int | None, limits: dict[str, str] | None, expected: int
) -> None:
    spec: dict[str, Any] = {"podTemplateRef": {"name": "t"}}
    if replicas is not None:
        spec["replicas"] = replicas
    if limits is not None:
        spec["limits"] = limits
    store = store_with(template("t", requests), buffer("a", **spec))
    (a,) = converge(store).values()
    assert ready(a) == "True"
    assert a.status.replicas == expected


def test_limits_naming_no_resource_the_pod_requests_are_an_error() -> None:
    store = store_with(
        template("t", {"memory": "4Gi", "cpu": "100m"}),
        buffer("a", podTemplateRef={"name": "t"}, replicas=3, limits={"nvidia.com/gpu": "100m"}),
    )
    (a,) = converge(store).values()
    condition = find_condition(a.status.conditions, READY)
    assert condition is not None and condition.status == "False"
    assert condition.message == RESOURCES_NOT_FOUND
    assert a.status.pod_template_ref == "capacitybuffer-a-pod-template" and a.status.replicas is None


def test_percentage_is_of_the_workloads_replicas_rounded_down() -> None:
    # replicas.go getBufferNumberOfPods: int32(percentage * replicas) / 100, the smallest wins.
    view = PodTemplateView.from_manifest(template("t", {"cpu": "100m"}))
    b = CapacityBuffer(name="a", percentage=15)
    assert buffer_number_of_pods(b, view.pod, 10) == 1
    assert buffer_number_of_pods(b, view.pod, 6) == 0
    assert buffer_number_of_pods(CapacityBuffer(name="a", percentage=50, replicas=2), view.pod, 10) == 2
    with pytest.raises(ValueError, match="replicas, percentage and limits are not defined"):
        buffer_number_of_pods(CapacityBuffer(name="a", percentage=50), view.pod, None)


def test_the_managed_template_requests_what_containers_limit() -> None:
    # DefaultingResolver: a container without requests requests its limits; the token volume goes.
    raw = {
        "spec": {
            "containers": [
                {
                    "name": "c",
                    "resources": {"limits": {"cpu": "1", "memory": "1Gi"}},
                    "volumeMounts": [{"name": "kube-api-access-x", "mountPath": "/var/run"}],
                }
            ],
            "volumes": [{"name": "kube-api-access-x"}],
            "nodeName": "n1",
        }
    }
    out = defaulted_template(raw)
    (container,) = out["spec"]["containers"]
    assert container["resources"]["requests"] == {"cpu": "1", "memory": "1Gi"}
    assert "volumeMounts" not in container and "volumes" not in out["spec"]
    assert "nodeName" not in out["spec"]


def test_a_template_change_writes_the_managed_template_then_the_status_follows_its_generation() -> None:
    store = store_with(template("t", {"cpu": "100m"}), buffer("a", podTemplateRef={"name": "t"}, replicas=1))
    (a,) = converge(store).values()
    first = a.status.pod_template_generation
    store.apply(template("t", {"cpu": "200m"}), 20.0)
    (a,) = converge(store, now=30.0).values()
    assert a.status.pod_template_generation == (first or 0) + 1
    managed = store.manifests["PodTemplate/default/capacitybuffer-a-pod-template"]
    assert managed["template"]["spec"]["containers"][0]["resources"]["requests"]["cpu"] == "200m"


# -- scalable_objects_translator_test.go -----------------------------------------------------------


def _scalable_objects(found: ScalableObject | None, b: CapacityBuffer) -> CapacityObjects:
    scalables = {("apps", "Deployment", "default", "web"): found} if found is not None else {}
    return CapacityObjects(buffers=(b,), scalables=scalables)


def test_a_scalable_ref_takes_the_most_recent_pod_and_the_scale_replicas() -> None:
    recent = {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c"}]}}
    b = CapacityBuffer.from_manifest(
        buffer("a", scalableRef={"apiGroup": "apps", "kind": "Deployment", "name": "web"}, percentage=50)
    )
    objects = _scalable_objects(ScalableObject(4, recent, None, 4), b)
    (write,) = translate_buffers((b,), objects, 1.0).writes
    assert write.action == "pod-template"
    assert write.body["template"]["metadata"] == {"labels": {"app": "web"}}


def test_a_scalable_ref_to_nothing_is_not_ready_with_both_resolvers_errors() -> None:
    b = CapacityBuffer.from_manifest(
        buffer("a", scalableRef={"apiGroup": "apps", "kind": "Deployment", "name": "web"}, replicas=1)
    )
    status = translate_buffers((b,), _scalable_objects(None, b), 1.0).statuses["default/a"]
    condition = find_condition(status.conditions, READY)
    assert condition is not None and condition.status == "False"
    assert condition.message.startswith("Buffer not ready for provisioning: failed to resolve live pod: ")
    assert 'failed to resolve scalable object: failed to get Deployment: deployments "web" not found' in (
        condition.message
    )


def test_a_kind_ca_cannot_read_is_not_supported() -> None:
    b = CapacityBuffer.from_manifest(
        buffer("a", scalableRef={"apiGroup": "example.com", "kind": "Widget", "name": "w"}, replicas=1)
    )
    status = translate_buffers((b,), CapacityObjects(buffers=(b,)), 1.0).statuses["default/a"]
    condition = find_condition(status.conditions, READY)
    assert condition is not None
    assert "kind example.com/Widget is not supported to use pod template" in condition.message


# -- TestCapacityBufferFakePodsRegistry (pod_list_processor_test.go) --------------------------------


def _ready_buffers(*specs: tuple[str, int]) -> tuple[list[CapacityBuffer], dict[str, PodTemplateView]]:
    store = store_with(template("t", {"cpu": "100m"}))
    for name, replicas in specs:
        store.apply(buffer(name, podTemplateRef={"name": "t"}, replicas=replicas), 0.0)
    buffers = converge(store)
    objects = store.objects(0, dict)
    assert objects is not None
    return list(buffers.values()), dict(objects.pod_templates)


def test_ready_buffers_inject_their_replicas_as_fake_pods() -> None:
    buffers, templates = _ready_buffers(("buffer1", 3), ("buffer2", 5))
    made = BufferPodMaker().inject(buffers, {}, templates, 20.0)
    assert len(made.pods) == 8
    assert {k: len(v) for k, v in made.by_buffer.items()} == {"default/buffer1": 3, "default/buffer2": 5}
    pod = made.by_buffer["default/buffer1"][0]
    assert is_buffer_pod(pod) and pod.annotations[FAKE_POD_ANNOTATION] == FAKE_POD_VALUE
    assert pod.annotations["cluster-autoscaler.kubernetes.io/safe-to-evict"] == "true"
    assert pod.name == "capacity-buffer-buffer1-1" and pod.node_name == ""
    assert pod.owners[-1].kind == "CapacityBuffer"
    for write in made.writes:
        (condition,) = [c for c in write.body["conditions"] if c["type"] == "Provisioning"]
        assert condition["status"] == "True" and condition["reason"] == "FakePodsInjected"


def test_a_buffer_with_zero_replicas_injects_none_and_says_so() -> None:
    buffers, templates = _ready_buffers(("empty", 0))
    made = BufferPodMaker().inject(buffers, {}, templates, 20.0)
    assert made.pods == ()
    (write,) = made.writes
    (condition,) = [c for c in write.body["conditions"] if c["type"] == "Provisioning"]
    assert (condition["status"], condition["reason"]) == ("False", "BufferIsEmpty")


def test_a_buffer_not_ready_but_provisioning_true_injects_nothing() -> None:
    buffers, templates = _ready_buffers(("b", 1))
    (b,) = buffers
    provisioning = BufferPodMaker().inject(buffers, {}, templates, 20.0).writes[0].body["conditions"]
    # Then the buffer turned not ready (ReadyForProvisioning False) while Provisioning was True.
    conditions = tuple(
        c if c.type != READY else Condition(READY, "False", "error", "x", 25.0)
        for c in parse_conditions(Node(provisioning))
    )
    not_ready = replace(b, status=replace(b.status, conditions=conditions))
    made = BufferPodMaker().inject([not_ready], {}, templates, 30.0)
    assert made.pods == ()
    (write,) = made.writes
    (condition,) = [c for c in write.body["conditions"] if c["type"] == "Provisioning"]
    assert (condition["status"], condition["reason"]) == ("False", "NotReadyForProvisioning")


def test_a_buffer_of_another_strategy_is_left_alone() -> None:
    b = CapacityBuffer(name="b", provisioning_strategy="other")
    made = BufferPodMaker().inject([b], {}, {}, 1.0)
    assert made.pods == () and made.writes == () and not made.buffers


def test_the_same_pods_are_handed_out_while_nothing_changed() -> None:
    buffers, templates = _ready_buffers(("b", 2))
    maker = BufferPodMaker()
    first = maker.inject(buffers, {}, templates, 20.0).pods
    again = maker.inject(buffers, {}, templates, 30.0).pods
    assert first == again and all(a is b for a, b in zip(first, again, strict=True))


# -- kubetide beyond CA: schedules and one-shot buffers ---------------------------------------------


def test_a_buffer_outside_its_windows_or_past_its_expiry_injects_nothing() -> None:
    windows = parse_windows("Mon-Fri 08:00-18:00")
    monday_9 = 4 * 86400 + 9 * 3600  # 1970-01-05 was a Monday
    saturday_9 = 9 * 86400 + 9 * 3600
    b = CapacityBuffer(name="b", windows=windows, expires_at=monday_9 + 3600)
    assert b.active(monday_9) == (True, "")
    assert b.active(saturday_9) == (False, "Expired")
    assert CapacityBuffer(name="b", windows=windows).active(saturday_9) == (False, "OutsideActiveWindows")
    assert CapacityBuffer(name="b", windows=windows).active(4 * 86400 + 18 * 3600) == (
        False,
        "OutsideActiveWindows",
    )
    overnight = parse_windows("Fri 22:00-06:00")
    assert CapacityBuffer(name="b", windows=overnight).active(9 * 86400 + 5 * 3600)[0]  # Saturday 05:00
    assert not CapacityBuffer(name="b", windows=overnight).active(9 * 86400 + 7 * 3600)[0]
    assert not CapacityBuffer(name="b", windows=overnight).active(8 * 86400 + 5 * 3600)[0]  # Fri 05:00


def test_bad_windows_are_refused_with_the_annotations_path() -> None:
    manifest = buffer("a", podTemplateRef={"name": "t"}, replicas=1)
    manifest["metadata"]["annotations"] = {"kubetide.io/active-windows": "Mon-Fri 8-18"}
    with pytest.raises(ManifestError) as raised:
        CapacityBuffer.from_manifest(manifest, "spec.objects[0]")
    assert "spec.objects[0].metadata.annotations" in str(raised.value)


# -- where the fake pods go among the real pending pods (README: where kubetide differs from CA) ------


@pytest.mark.parametrize("ca_ordering", [False, True])
def test_buffer_pods_come_after_the_real_pods_unless_ca_ordering(ca_ordering: bool) -> None:
    # CA 1.36 builder/autoscaler.go: CapacityBufferPodListProcessor runs before the default pod list
    # processors, so filterOutSchedulable (filter_out_schedulable.go, filterOutSchedulableByPacking)
    # sorts the fake pods with the real ones by priority. kubetide's default places them after every real
    # pending pod. A buffer of priority 100 and a real pending pod of priority 0 compete for one free slot.
    spare = template("spare", {"cpu": "1500m", "memory": "256Mi"})
    spare["template"]["spec"]["priority"] = 100
    store = store_with(spare, buffer("headroom", podTemplateRef={"name": "spare"}, replicas=1))
    converge(store)
    objects = store.objects(0, dict)
    assert objects is not None
    cloud = RecordingCloud().with_group("ng", 0, 5, target=1, template=harness_template("ng"))
    options = AutoscalingOptions(
        capacity_buffer_controller_enabled=True,
        capacity_buffer_pod_injection_enabled=True,
        capacity_buffer_ca_ordering=ca_ordering,
    )
    h = Harness(cloud, options)
    h.add_node(harness_node("ng-0", "ng"), "ng")
    real = replace(harness_pod("real", 1500), namespace="default")
    h.add_pod(real)
    assert h.ca is not None
    result = h.ca.run_once(replace(h.world(), capacity=objects), 1000.0)
    assert result.scale_up_result == "Successful"
    assert cloud.groups["ng"].target == 2  # one slot short either way
    triggered = {e.object for e in result.events if e.reason == "TriggeredScaleUp"}
    if ca_ordering:  # the buffer pod (priority 100) took the slot: the real pod asks for the new node
        assert triggered == {"Pod/default/real"}
    else:  # the real pod took it: the buffer asks for the new node
        assert triggered == {"CapacityBuffer/default/headroom"}
