"""ProvisioningRequests in the decision core, ported from CA 1.36.1's own tests:
``provisioningrequest/supported_class_test.go`` (TestSupportedProvisioningClass),
``processors/provreq/injector_test.go`` (TestProvisioningRequestPodsInjector),
``processors/provreq/processor_test.go`` (TestRefresh, TestDeleteOldProvReqs),
``processors/provreq/pods_filter_test.go`` and ``provisioningrequest/checkcapacity/provisioningclass_test.go``.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from ca_loop_harness import Harness, node, template

from kubetide.cloud.instance import NotImplementedByProvider
from kubetide.cluster.capacity.objects import CapacityObjects
from kubetide.cluster.capacity.provisioning.classes import atomic_pods_left, check_capacity
from kubetide.cluster.capacity.provisioning.injector import RequestInjector
from kubetide.cluster.capacity.provisioning.lifecycle import (
    BOOKING_TIME_S,
    EXPIRATION_TIME_S,
    book_capacity,
    drop_consuming_pods,
    refresh,
)
from kubetide.cluster.capacity.provisioning.requests import (
    RequestState,
    consumed_request,
    pods_for_request,
    supported_class,
)
from kubetide.cluster.options import AutoscalingOptions
from kubetide.cluster.reasons import ScaleUpResult
from kubetide.model.capacity.conditions import Condition
from kubetide.model.capacity.podtemplate import PodTemplateView
from kubetide.model.capacity.provisioning import ATOMIC_CLASS, CHECK_CAPACITY_CLASS, ProvisioningRequest
from kubetide.model.node import NodeView
from kubetide.model.resources import Resources
from kubetide.scheduling.hinting import HintingSimulator
from kubetide.scheduling.snapshot import ClusterSnapshot
from kubetide.testing.cloud import RecordingCloud

NOW = 1_000_000.0
HOUR, MINUTE, DAY = 3600.0, 60.0, 86400.0


def request(
    name: str,
    class_name: str = CHECK_CAPACITY_CLASS,
    count: int = 10,
    *conditions: Condition,
    created: float = NOW - MINUTE,
    **parameters: str,
) -> ProvisioningRequest:
    return ProvisioningRequest(
        name=name,
        uid=f"uid-{name}",
        creation_time=created,
        class_name=class_name,
        pod_sets=(ProvisioningRequest.from_manifest(_manifest(name, count)).pod_sets[0],),
        parameters=parameters,
        conditions=conditions,
    )


def _manifest(name: str, count: int) -> dict[str, Any]:
    return {
        "apiVersion": "autoscaling.x-k8s.io/v1",
        "kind": "ProvisioningRequest",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "provisioningClassName": CHECK_CAPACITY_CLASS,
            "podSets": [{"podTemplateRef": {"name": "pt"}, "count": count}],
        },
    }


def templates(cpu: str = "100m") -> dict[str, PodTemplateView]:
    view = PodTemplateView.from_manifest(
        {
            "metadata": {"name": "pt", "namespace": "default", "generation": 1},
            "template": {"spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}]}},
        }
    )
    return {view.key: view}


def condition(kind: str, status: str, at: float) -> Condition:
    return Condition(kind, status, "", "", at)


ACCEPTED = condition("Accepted", "True", NOW - MINUTE)
FAILED = condition("Failed", "True", NOW - HOUR)
PROVISIONED = condition("Provisioned", "True", NOW - HOUR)
NOT_PROVISIONED = condition("Provisioned", "False", NOW - HOUR)
UNKNOWN_PROVISIONED = condition("Provisioned", "Unknown", NOW - HOUR)
NOT_PROVISIONED_RECENTLY = condition("Provisioned", "False", NOW - MINUTE)


# -- TestSupportedProvisioningClass ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("class_name", "instance_param", "instance", "want"),
    [
        (CHECK_CAPACITY_CLASS, "", "", True),
        (CHECK_CAPACITY_CLASS, "instance", "instance", True),
        (CHECK_CAPACITY_CLASS, "instance2", "instance", False),
        ("instance" + CHECK_CAPACITY_CLASS, "", "instance", True),
        ("instance2" + CHECK_CAPACITY_CLASS, "", "instance", False),
        (ATOMIC_CLASS, "", "", True),
        (ATOMIC_CLASS, "", "instance", False),
        ("invalid", "", "", False),
    ],
)
def test_supported_provisioning_class(
    class_name: str, instance_param: str, instance: str, want: bool
) -> None:
    pr = ProvisioningRequest(
        name="pr", class_name=class_name, parameters={"processorInstance": instance_param}
    )
    assert supported_class(pr, instance) is want


# -- TestProvisioningRequestPodsInjector ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("requests", "batch", "instance", "want_pods", "want_updated"),
    [
        ([request("new"), request("b", ATOMIC_CLASS, 20, PROVISIONED, ACCEPTED)], False, "", 10, "new"),
        # Batch processing: a check-capacity request is injected, Accepted is left to its batch.
        ([request("new"), request("b", ATOMIC_CLASS, 20, PROVISIONED, ACCEPTED)], True, "", 10, None),
        ([request("new-accepted", CHECK_CAPACITY_CLASS, 10, ACCEPTED)], False, "", 10, "new-accepted"),
        ([request("new-prefixed", "test-prefix." + CHECK_CAPACITY_CLASS)], False, "", 0, None),
        (
            [request("new"), request("b", ATOMIC_CLASS, 20, PROVISIONED, ACCEPTED)],
            False,
            "test-instance",
            0,
            None,
        ),
        (
            [request("new-instance", processorInstance="test-instance")],
            False,
            "test-instance",
            10,
            "new-instance",
        ),
        ([request("new")], False, "test-prefix.", 0, None),
        (
            [request("new-prefixed", "test-prefix." + CHECK_CAPACITY_CLASS)],
            False,
            "test-prefix.",
            10,
            "new-prefixed",
        ),
        (
            [
                request("b", ATOMIC_CLASS, 20, NOT_PROVISIONED, ACCEPTED),
                request("f", ATOMIC_CLASS, 10, FAILED),
            ],
            False,
            "",
            20,
            "b",
        ),
        (
            [request("b", ATOMIC_CLASS, 20, PROVISIONED, ACCEPTED), request("f", ATOMIC_CLASS, 10, FAILED)],
            False,
            "",
            0,
            None,
        ),
        ([request("b", ATOMIC_CLASS, 20, NOT_PROVISIONED_RECENTLY)], False, "", 0, None),  # backed off
        ([request("b", ATOMIC_CLASS, 20, UNKNOWN_PROVISIONED)], False, "", 0, None),
        ([request("u", "unknown-class", 10, ACCEPTED)], False, "", 0, None),
    ],
)
def test_the_pods_of_the_next_request_are_injected(
    requests: list[ProvisioningRequest], batch: bool, instance: str, want_pods: int, want_updated: str | None
) -> None:
    injector = RequestInjector(MINUTE, 10 * MINUTE, 1000, batch_processing=batch, processor_instance=instance)
    states = [RequestState(r) for r in requests]
    found = injector.next_request(states, templates(), NOW)
    assert (len(found[1]) if found else 0) == want_pods
    updated = [s.request.name for s in states if s.changed]
    assert updated == ([want_updated] if want_updated else [])
    for state in states:
        if state.changed:
            accepted = state.condition("Accepted")
            assert accepted is not None and accepted.status == "True"
            assert accepted.last_transition_time == NOW  # AddOrUpdateCondition: replaced, time reset


def test_a_retried_request_waits_twice_as_long_each_time_up_to_the_maximum() -> None:
    injector = RequestInjector(MINUTE, 3 * MINUTE, 1000)
    pr = request("b", ATOMIC_CLASS, 1, condition("Provisioned", "False", NOW))
    assert not injector.available(RequestState(pr), NOW + MINUTE)  # not after the wait: strictly after
    assert injector.available(RequestState(pr), NOW + MINUTE + 1)
    assert not injector.available(RequestState(pr), NOW + 2 * MINUTE)
    assert injector.available(RequestState(pr), NOW + 2 * MINUTE + 1)
    assert injector.available(RequestState(pr), NOW + 3 * MINUTE + 1)  # capped at 3 minutes
    assert not injector.available(RequestState(pr), NOW + 3 * MINUTE)


def test_a_request_whose_template_is_missing_fails() -> None:
    injector = RequestInjector(MINUTE, 10 * MINUTE, 1000)
    state = RequestState(request("new"))
    assert injector.next_request([state], {}, NOW) is None
    failed = state.condition("Failed")
    assert failed is not None and failed.reason == "FailedToCreatePods"
    assert "1 pod templates were referenced, 1 templates were missing: pt" in failed.message


# -- TestRefresh / TestDeleteOldProvReqs ---------------------------------------------------------------


WEEK_AGO = NOW - EXPIRATION_TIME_S - 5 * MINUTE


@pytest.mark.parametrize(
    ("created", "conditions", "want"),
    [
        (NOW, (), {}),
        (WEEK_AGO, (), {"Failed": ("True", "Expired", "ProvisioningRequest is expired")}),
        (
            WEEK_AGO,
            (Condition("Provisioned", "False", "Expired", "x", NOW - DAY),),
            {
                "Provisioned": ("False", "Expired", "x"),
                "Failed": ("True", "Expired", "ProvisioningRequest is expired"),
            },
        ),
        (
            NOW - DAY,
            (Condition("Provisioned", "True", "Expired", "x", NOW - DAY),),
            {
                "Provisioned": ("True", "Expired", "x"),
                "BookingExpired": (
                    "True",
                    "CapacityReservationTimeExpired",
                    "Capacity reservation time is expired",
                ),
            },
        ),
        (
            NOW - DAY,
            (Condition("Failed", "True", "Failed", "Failed", NOW - DAY),),
            {"Failed": ("True", "Failed", "Failed")},
        ),
    ],
)
def test_refresh(
    created: float, conditions: tuple[Condition, ...], want: dict[str, tuple[str, str, str]]
) -> None:
    state = RequestState(request("pr", CHECK_CAPACITY_CLASS, 1, *conditions, created=created))
    assert refresh([state], NOW, "") == []
    assert {c.type: (c.status, c.reason, c.message) for c in state.conditions} == want


def test_the_booking_holds_ten_minutes_exactly() -> None:
    # processor.go Refresh: LastTransitionTime + defaultReservationTime < now expires it (not <=).
    at_edge = RequestState(
        request("pr", CHECK_CAPACITY_CLASS, 1, condition("Provisioned", "True", NOW - BOOKING_TIME_S))
    )
    refresh([at_edge], NOW, "")
    assert at_edge.condition("BookingExpired") is None
    past = RequestState(
        request("pr", CHECK_CAPACITY_CLASS, 1, condition("Provisioned", "True", NOW - BOOKING_TIME_S - 1))
    )
    refresh([past], NOW, "")
    assert past.is_true("BookingExpired")


def test_requests_ended_a_week_ago_are_deleted() -> None:
    old = RequestState(
        request("old", CHECK_CAPACITY_CLASS, 1, condition("Failed", "True", NOW - EXPIRATION_TIME_S - 1))
    )
    recent = RequestState(request("recent", CHECK_CAPACITY_CLASS, 1, condition("Failed", "True", NOW - DAY)))
    assert refresh([old, recent], NOW, "") == [old]


def test_valid_until_seconds_fails_an_unprovisioned_atomic_request() -> None:
    # kubetide: the parameter CA's CRD documents for best-effort-atomic, enforced.
    pr = request("pr", ATOMIC_CLASS, 1, created=NOW - 100, ValidUntilSeconds="60")
    state = RequestState(pr)
    refresh([state], NOW, "")
    failed = state.condition("Failed")
    assert failed is not None and failed.reason == "ValidUntilSecondsExpired"
    still = RequestState(request("pr", ATOMIC_CLASS, 1, created=NOW - 30, ValidUntilSeconds="60"))
    refresh([still], NOW, "")
    assert still.condition("Failed") is None


# -- pods_filter_test.go ---------------------------------------------------------------------------


def test_pods_that_consume_a_request_do_not_trigger_a_scale_up() -> None:
    pods = list(pods_for_request(request("pr", count=3), templates()))
    plain = pods_for_request(request("other", count=1), templates())[0].evolve(annotations={})
    kept, told = drop_consuming_pods([*pods, plain])
    assert kept == [plain]
    assert [name for _, name in told] == ["pr"] * 3
    assert consumed_request(pods[0]) == "pr"


def test_a_requests_pods_are_named_annotated_and_owned_as_ca_makes_them() -> None:
    pods = pods_for_request(request("pr", ATOMIC_CLASS, 2), templates())
    assert [p.name for p in pods] == ["pr-0-0", "pr-0-1"]
    assert pods[0].annotations["autoscaling.x-k8s.io/provisioning-class-name"] == ATOMIC_CLASS
    assert pods[0].owners[0].kind == "ProvisioningRequest"
    assert pods[0].creation_time == NOW - MINUTE


# -- check-capacity and best-effort-atomic on a snapshot ---------------------------------------------


def snapshot_with(*cpus: int) -> ClusterSnapshot:
    snap = ClusterSnapshot()
    for i, cpu in enumerate(cpus):
        alloc = Resources({"cpu": cpu, "memory": 8 * 2**30, "pods": 110})
        snap.add_node(
            NodeView(f"n{i}", labels={"kubernetes.io/hostname": f"n{i}"}, allocatable=alloc, capacity=alloc)
        )
    return snap


def test_check_capacity_is_provisioned_when_every_pod_fits_and_books_it_for_the_next() -> None:
    snap = snapshot_with(2000)
    first = RequestState(request("first", count=1))
    pods = pods_for_request(first.request, templates("1500m"))
    result = check_capacity(
        [(first, pods)], snap, HintingSimulator(), NOW, batched=False, timebox=10, elapsed=lambda: 0
    )
    assert result is ScaleUpResult.SUCCESSFUL
    provisioned = first.condition("Provisioned")
    assert provisioned is not None and (provisioned.status, provisioned.reason) == ("True", "CapacityIsFound")
    assert first.is_true("Accepted")
    assert snap.fork_depth == 0 and not list(snap.all_pods())  # the check leaves the snapshot as it was


def test_check_capacity_in_a_batch_counts_the_earlier_requests_pods() -> None:
    snap = snapshot_with(2000)
    a, b = RequestState(request("a", count=1)), RequestState(request("b", count=1))
    pods_a = pods_for_request(a.request, templates("1500m"))
    pods_b = pods_for_request(b.request, templates("1500m"))
    result = check_capacity(
        [(a, pods_a), (b, pods_b)], snap, HintingSimulator(), NOW, batched=True, timebox=10, elapsed=lambda: 0
    )
    assert result is ScaleUpResult.SUCCESSFUL  # the best of the batch
    assert a.is_true("Provisioned")
    not_found = b.condition("Provisioned")
    assert not_found is not None and (not_found.status, not_found.reason) == ("False", "CapacityIsNotFound")


def test_check_capacity_with_no_retry_fails_instead() -> None:
    state = RequestState(request("big", count=3, noRetry="true"))
    pods = pods_for_request(state.request, templates("1500m"))
    result = check_capacity(
        [(state, pods)],
        snapshot_with(2000),
        HintingSimulator(),
        NOW,
        batched=False,
        timebox=10,
        elapsed=lambda: 0,
    )
    assert result is ScaleUpResult.NO_OPTIONS_AVAILABLE
    assert state.is_true("Failed") and state.condition("Provisioned") is None


def test_the_batch_stops_after_its_timebox() -> None:
    snap = snapshot_with(8000)
    states = [RequestState(request(f"r{i}", count=1)) for i in range(3)]
    batch = [(s, pods_for_request(s.request, templates())) for s in states]
    ticks = iter([0.0, 11.0, 22.0])
    check_capacity(
        batch, snap, HintingSimulator(), NOW, batched=True, timebox=10, elapsed=lambda: next(ticks)
    )
    # checkCapacityBatch: time.Since(start) > timebox is tested after each request, so the one that ran
    # past it is still answered; the rest are not touched (nothing written, not even Accepted).
    assert [s.is_true("Provisioned") for s in states] == [True, True, False]
    assert [s.changed for s in states] == [True, True, False]


def test_atomic_pods_that_all_fit_are_provisioned_without_a_scale_up() -> None:
    state = RequestState(request("a", ATOMIC_CLASS, 1))
    pods = pods_for_request(state.request, templates("1500m"))
    assert atomic_pods_left(state, pods, snapshot_with(2000), HintingSimulator(), NOW) == []
    assert state.is_true("Provisioned")
    state = RequestState(request("b", ATOMIC_CLASS, 2))
    pods = pods_for_request(state.request, templates("1500m"))
    assert len(atomic_pods_left(state, pods, snapshot_with(2000), HintingSimulator(), NOW)) == 1
    assert state.condition("Provisioned") is None


def test_a_provisioned_request_books_its_capacity_less_what_its_pods_took() -> None:
    snap = snapshot_with(2000, 2000)
    state = RequestState(
        request("pr", CHECK_CAPACITY_CLASS, 2, condition("Provisioned", "True", NOW - MINUTE))
    )
    (consumer,) = pods_for_request(state.request, templates("1500m"))[:1]
    placed = book_capacity([state], templates("1500m"), [consumer], snap, HintingSimulator(), NOW, "")
    assert placed == 1
    expired = RequestState(
        request(
            "pr",
            CHECK_CAPACITY_CLASS,
            2,
            condition("Provisioned", "True", NOW - MINUTE),
            condition("BookingExpired", "True", NOW),
        )
    )
    assert (
        book_capacity([expired], templates("1500m"), [], snapshot_with(2000), HintingSimulator(), NOW, "")
        == 0
    )


# -- ScaleUpEnforcer (processors/provreq/scaleup_enforcer.go; static_autoscaler.go RunOnce) ------------


def test_a_new_requests_pods_are_scaled_up_for_at_once_and_scale_down_waits_a_loop() -> None:
    # RunOnce: allPodsAreNew would wait a loop, but ShouldForceScaleUp (a pod of a request is pending)
    # asks the orchestrator anyway; DisableScaleDownForLoop, called first, still holds.
    now = 10_000.0
    cloud = RecordingCloud().with_group("ng", 0, 5, target=1, template=template("ng"))
    h = Harness(cloud, AutoscalingOptions(enable_provisioning_requests=True))
    h.add_node(node("ng-0", "ng"), "ng")
    pr = replace(request("batch", ATOMIC_CLASS, 2), creation_time=now - 1)
    world = replace(
        h.world(), capacity=CapacityObjects(provisioning_requests=(pr,), pod_templates=templates("1500m"))
    )
    assert h.ca is not None
    result = h.ca.run_once(world, now)
    assert result.scale_up_result == "Successful"
    assert result.scale_up is not None and result.scale_up.disables_scale_down
    # One of the two pods fits the empty node there is: the group gets one node for the other.
    assert {(i.group, i.delta) for i in result.scale_up.plan.infos} == {("ng", 1)}  # type: ignore[union-attr]


# -- how the all-or-nothing increase was made (kubetide's: the Provisioned condition says it) ----------


def _provisioned_message(result: Any) -> str:
    (write,) = [w for w in result.capacity_writes if w.kind == "ProvisioningRequest" and w.action == "status"]
    (provisioned,) = [c for c in write.body["conditions"] if c["type"] == "Provisioned"]
    assert provisioned["status"] == "True"
    return str(provisioned["message"])


@pytest.mark.parametrize(
    ("route", "fallback", "want"),
    [
        (None, False, "all-or-nothing: the provider's atomic increase"),
        ("all-or-nothing: an instant EC2 Fleet ...", False, "all-or-nothing: an instant EC2 Fleet ..."),
        (None, True, "not all-or-nothing in the cloud: node group(s) ng raised with IncreaseSize"),
    ],
)
def test_the_provisioned_condition_says_how_the_increase_was_made_all_or_nothing(
    route: str | None, fallback: bool, want: str
) -> None:
    # executor.go (scaleUpExecutor.increaseSize): AtomicIncreaseSize, else IncreaseSize when the
    # provider answers ErrNotImplemented. kubetide's provider may return its route: the message has it.
    now = 10_000.0
    cloud = RecordingCloud().with_group("ng", 0, 5, target=0, template=template("ng"))
    if route is not None:
        cloud.with_atomic_route("ng", route)
    if fallback:
        cloud.with_failure("atomic_increase_size", error=NotImplementedByProvider("no atomic increase"))
    h = Harness(cloud, AutoscalingOptions(enable_provisioning_requests=True))
    pr = replace(request("batch", ATOMIC_CLASS, 2), creation_time=now - 1)
    world = replace(
        h.world(), capacity=CapacityObjects(provisioning_requests=(pr,), pod_templates=templates("1500m"))
    )
    assert h.ca is not None
    result = h.ca.run_once(world, now)
    assert result.scale_up_result == "Successful"
    assert cloud.groups["ng"].target == 2
    assert want in _provisioned_message(result)


@pytest.mark.parametrize("ca_booking", [False, True])
def test_booking_bound_pods_and_revoked_requests_only_with_the_ca_flag(ca_booking: bool) -> None:
    # CA 1.36 processors/provreq/processor.go bookCapacity: every pod of each request that
    # ShouldCapacityBeBooked (conditions.go: Provisioned, not Failed, not BookingExpired; CapacityRevoked
    # is not read), its running pods too. kubetide by default books only the pods not yet bound and
    # nothing once CapacityRevoked; --provisioning-request-book-bound-pods is CA's way.
    provisioned = condition("Provisioned", "True", NOW - MINUTE)
    state = RequestState(request("pr", CHECK_CAPACITY_CLASS, 2, provisioned))
    (consumer,) = pods_for_request(state.request, templates("1500m"))[:1]
    placed = book_capacity(
        [state],
        templates("1500m"),
        [consumer],
        snapshot_with(2000, 2000),
        HintingSimulator(),
        NOW,
        "",
        ca_booking=ca_booking,
    )
    assert placed == (2 if ca_booking else 1)
    revoked = RequestState(
        request("pr", CHECK_CAPACITY_CLASS, 2, provisioned, condition("CapacityRevoked", "True", NOW))
    )
    placed = book_capacity(
        [revoked],
        templates("1500m"),
        [],
        snapshot_with(2000, 2000),
        HintingSimulator(),
        NOW,
        "",
        ca_booking=ca_booking,
    )
    assert placed == (2 if ca_booking else 0)


def test_an_atomic_increase_the_cloud_rolled_back_in_part_ends_the_request_and_its_empty_node() -> None:
    # kubetide (provisioning/delivery.py): the aws provider's rollback route lowers the group's target when
    # a launch fails after one instance came. Upstream's request would stay Provisioned on that one node.
    now = 10_000.0
    cloud = RecordingCloud().with_group("ng", 0, 5, target=0, template=template("ng"))
    h = Harness(cloud, AutoscalingOptions(enable_provisioning_requests=True))
    pr = replace(request("batch", ATOMIC_CLASS, 2), creation_time=now - 1)
    objects = CapacityObjects(provisioning_requests=(pr,), pod_templates=templates("1500m"))
    assert h.ca is not None
    first = h.ca.run_once(replace(h.world(), capacity=objects), now)
    assert cloud.groups["ng"].target == 2
    provisioned = Condition("Provisioned", "True", "CapacityIsProvisioned", "", now)
    objects = replace(objects, provisioning_requests=(replace(pr, conditions=(ACCEPTED, provisioned)),))
    assert _provisioned_message(first)
    # One node came, then the cloud dropped the other (its launch failed and it was rolled back).
    h.add_node(node("ng-a", "ng", created=now + 50), "ng")
    cloud.groups["ng"].target = 1
    second = h.ca.run_once(replace(h.world(), capacity=objects), now + 60)
    (write,) = [w for w in second.capacity_writes if w.kind == "ProvisioningRequest"]
    (found,) = [c for c in write.body["conditions"] if c["type"] == "Provisioned"]
    assert (found["status"], found["reason"]) == ("False", "CapacityPartiallyProvisioned")
    assert "node group ng's target fell to 1 (from 2)" in found["message"]
    assert [c.args for c in cloud.calls_to("delete_nodes")] == [("ng-a",)]
    assert [e.reason for e in second.events if e.object == "NodeGroup/ng"][-1] == "DeletePartiallyProvisioned"
