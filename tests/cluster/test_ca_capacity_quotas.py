"""CapacityQuotas in the decision core, ported from CA 1.36.1's own tests: ``resourcequotas/tracker_test.go``
(TestCheckQuota, TestConsumeQuota), ``resourcequotas/capacityquota/provider_test.go`` (selectors and
limits), and the controller's status (``resourcequotas/capacityquota/controller.go``).

A tracker's "limits left" are set as CA's tests set them: a quota whose limits are those amounts, over
no nodes. CA's test node ``BuildTestNode("n1", 1000, 200)`` is 1 core, 200 bytes, 1 node.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from kubetide.cluster.capacity.quotas.controller import quota_status_writes, quota_usage
from kubetide.cluster.capacity.quotas.tracker import QuotaTracker
from kubetide.model.capacity.quota import CapacityQuota
from kubetide.model.errors import ManifestError
from kubetide.model.node import NodeView
from kubetide.model.resources import Resources
from kubetide.model.selectors import parse_selector_string

N1 = NodeView("n1", labels={"pool": "a"})
N1_RESOURCES = {"cpu": 1, "memory": 200, "nodes": 1}


def resources_of(_: NodeView) -> Mapping[str, int]:
    return N1_RESOURCES


def quota(name: str, left: dict[str, int], applies: bool = True) -> CapacityQuota:
    selector = None if applies else parse_selector_string("pool=other")
    return CapacityQuota(name=name, selector=selector, limits=left)


def tracker(*quotas: CapacityQuota, minimums: bool = False) -> QuotaTracker:
    return QuotaTracker(quotas, [], resources_of, minimums=minimums)


@pytest.mark.parametrize(
    ("quotas", "delta", "allowed", "exceeded"),
    [
        ([quota("limiter1", {"cpu": 10, "memory": 1000, "nodes": 5})], 2, 2, {}),
        ([quota("limiter1", {"cpu": 1, "memory": 1000, "nodes": 5})], 2, 1, {"limiter1": ("cpu",)}),
        ([quota("limiter1", {"cpu": 1, "memory": 300, "nodes": 5})], 2, 1, {"limiter1": ("cpu", "memory")}),
        (
            [
                quota("limiter1", {"cpu": 1, "memory": 2000, "nodes": 5}),
                quota("limiter2", {"cpu": 10, "memory": 300, "nodes": 5}),
            ],
            2,
            1,
            {"limiter1": ("cpu",), "limiter2": ("memory",)},
        ),
        (
            [
                quota("limiter1", {"cpu": 1, "memory": 2000, "nodes": 5}),
                quota("limiter2", {"cpu": 10, "memory": 300, "nodes": 5}, applies=False),
            ],
            2,
            1,
            {"limiter1": ("cpu",)},
        ),
        ([quota("limiter1", {"cpu": 1, "memory": 100, "nodes": 1}, applies=False)], 2, 2, {}),
        # A resource the quota limits but the node lacks is not counted.
        ([quota("limiter1", {"cpu": 4, "memory": 32 * 2**30, "gpu": 2})], 2, 2, {}),
    ],
)
def test_check_quota(
    quotas: list[CapacityQuota], delta: int, allowed: int, exceeded: dict[str, tuple[str, ...]]
) -> None:
    result = tracker(*quotas).check(N1, delta)
    assert result.allowed == allowed
    assert {
        q.id.removeprefix("CapacityQuota/"): tuple(sorted(q.resources)) for q in result.exceeded
    } == exceeded
    assert result.is_exceeded is bool(exceeded)


def test_a_resource_the_node_has_but_the_quota_does_not_limit_is_free() -> None:
    t = QuotaTracker(
        [quota("limiter1", {"cpu": 4, "memory": 32 * 2**30})],
        [],
        lambda _: {"cpu": 1, "memory": 2000, "nodes": 1, "gpu": 1},
    )
    assert t.check(N1, 2).allowed == 2


def test_a_negative_delta_is_an_error() -> None:
    with pytest.raises(ValueError, match="negative nodeDelta"):
        tracker().check(N1, -1)


@pytest.mark.parametrize(
    ("left", "delta", "allowed", "left_after"),
    [
        ({"cpu": 10, "memory": 1000, "nodes": 5}, 2, 2, {"cpu": 8, "memory": 600, "nodes": 3}),
        ({"cpu": 3, "memory": 1000, "nodes": 5}, 2, 2, {"cpu": 1, "memory": 600, "nodes": 3}),
        (
            {"cpu": 1, "memory": 100, "nodes": 5},
            1,
            0,
            {"cpu": 1, "memory": 100, "nodes": 5},
        ),  # nothing applied
        ({"cpu": 2, "memory": 500, "nodes": 10}, 2, 2, {"cpu": 0, "memory": 100, "nodes": 8}),
    ],
)
def test_consume_quota(left: dict[str, int], delta: int, allowed: int, left_after: dict[str, int]) -> None:
    t = tracker(quota("limiter1", left))
    assert t.consume(N1, delta).allowed == allowed
    (status,) = t.statuses
    assert status.left == left_after


def test_a_partial_delta_is_not_consumed() -> None:
    t = tracker(quota("limiter1", {"cpu": 3, "memory": 300, "nodes": 5}))
    assert t.consume(N1, 2).allowed == 1
    assert t.statuses[0].left == {"cpu": 3, "memory": 300, "nodes": 5}


def test_usage_counts_only_the_selected_nodes_capacity() -> None:
    nodes = [
        NodeView("a", labels={"pool": "a"}, capacity=Resources({"cpu": 4000, "memory": 8 * 2**30})),
        NodeView("b", labels={"pool": "a"}, capacity=Resources({"cpu": 2500, "memory": 4 * 2**30})),
        NodeView("c", labels={"pool": "b"}, capacity=Resources({"cpu": 64000, "memory": 64 * 2**30})),
    ]
    q = CapacityQuota.from_manifest(
        _manifest({"matchLabels": {"pool": "a"}}, {"cpu": "100", "memory": "1Ti", "nodes": "3"})
    )
    assert quota_usage(q, nodes) == {"cpu": "6500m", "memory": "12Gi", "nodes": "2"}
    # Used the tracker's way: cores rounded up per node (totalNodeResources).
    t = QuotaTracker([q], nodes, lambda n: {"cpu": -(-n.capacity["cpu"] // 1000), "nodes": 1})
    assert t.statuses[0].usage == {"cpu": 7, "nodes": 2}


def _manifest(selector: Any, resources: Any, **meta: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {"limits": {"resources": resources}}
    if selector is not None:
        spec["selector"] = selector
    return {
        "apiVersion": "autoscaling.x-k8s.io/v1alpha1",
        "kind": "CapacityQuota",
        "metadata": {"name": "q", **meta},
        "spec": spec,
    }


def test_no_selector_selects_every_node() -> None:
    q = CapacityQuota.from_manifest(_manifest(None, {"nodes": "3"}))
    assert q.applies_to({}) and q.applies_to({"any": "thing"})


def test_limits_must_be_whole_non_negative_quantities_every_problem_named() -> None:
    with pytest.raises(ManifestError) as raised:
        CapacityQuota.from_manifest(
            _manifest({"matchLabels": {"a": "b"}}, {"cpu": "1500m", "memory": "-1", "nodes": "x"}),
            "spec.objects[2]",
        )
    text = str(raised.value)
    for resource in ("cpu", "memory", "nodes"):
        assert f"spec.objects[2].spec.limits.resources.{resource}" in text


def test_the_controller_writes_valid_reconciled_and_usage_once() -> None:
    q = CapacityQuota.from_manifest(_manifest(None, {"nodes": "3"}))
    node = NodeView("a", capacity=Resources({"cpu": 2000}))
    (write,) = quota_status_writes([q], [], [node], 100.0)
    assert write.body["used"] == {"resources": {"nodes": "1"}}
    kinds = {c["type"]: (c["status"], c["reason"]) for c in write.body["conditions"]}
    assert kinds == {
        "Valid": ("True", "ValidationSucceeded"),
        "Reconciled": ("True", "ReconciliationSucceeded"),
    }
    manifest = _manifest(None, {"nodes": "3"})
    manifest["status"] = write.body
    again = CapacityQuota.from_manifest(manifest)
    assert quota_status_writes([again], [], [node], 200.0) == []  # nothing changed: nothing written


def test_kubetide_minimums_keep_the_selected_nodes_from_going() -> None:
    manifest = _manifest(None, {"nodes": "10"}, annotations={"kubetide.io/min-resources": "nodes=2"})
    q = CapacityQuota.from_manifest(manifest)
    assert q.minimums == {"nodes": 2}
    nodes = [NodeView(f"n{i}") for i in range(3)]
    t = QuotaTracker([q], nodes, lambda _: {"nodes": 1}, minimums=True)
    assert t.consume(nodes[0], 1).allowed == 1
    assert t.check(nodes[1], 1).is_exceeded  # a third would leave one node: under the minimum
