"""A provider that declares bulk group and instance lookups (``CloudProvider.bulk_lookup``) gives the
loop what node-by-node lookups give; when a bulk call fails, the loop asks node by node, so a failing
node is handled exactly as without bulk answers. The live guard declares what its cloud declares. (And
the loop's reasons, read in bulk too, are plain strings.)"""

from __future__ import annotations

from collections.abc import Sequence

from ca_loop_harness import Harness, node, pod, template

from kubetide.cloud.instance import CloudProviderError
from kubetide.cloud.provider import BulkNodeLookup
from kubetide.cluster.autoscaler import StaticAutoscaler
from kubetide.cluster.loop.result import LoopResult
from kubetide.live.guard import GuardedCloud, WriteGate
from kubetide.model.node import NodeView
from kubetide.testing.cloud import RecordingCloud


class BulkCloud(RecordingCloud):
    """The recording fake with bulk lookups built from its per-node answers, or failing."""

    def __init__(self, failing: bool) -> None:
        super().__init__()
        self.failing = failing
        self.bulk_calls = 0

    def bulk_lookup(self) -> BulkNodeLookup:
        return self

    def node_group_ids(self, nodes: Sequence[NodeView]) -> list[str | None]:
        self.bulk_calls += 1
        if self.failing:
            raise CloudProviderError("bulk lookup failed (injected)")
        return [g.id() if (g := self.node_group_for_node(n)) is not None else None for n in nodes]

    def has_instances(self, nodes: Sequence[NodeView]) -> list[bool]:
        self.bulk_calls += 1
        if self.failing:
            raise CloudProviderError("bulk lookup failed (injected)")
        return [self.has_instance(n) for n in nodes]


def _loops(cloud: RecordingCloud) -> list[LoopResult]:
    cloud.with_group("ng", 0, 5, 3, template=template("ng"))
    h = Harness(cloud)
    for i in range(3):
        h.add_node(node(f"n{i}", "ng"), "ng")
    h.add_pod(pod("busy", 1500, node_name="n0"))
    h.add_pod(pod("pending", 1500))
    # The third node is gone from the cloud while its Node object stays: deleted, not ready.
    del cloud.node_groups_by_key["n2"]
    results = [h.run(t) for t in (0.0, 10.0, 700.0, 710.0)]
    return results


def _summary(results: list[LoopResult]) -> list[object]:
    return [
        (r.error, r.not_candidates, r.unremovable, [e.reason for e in r.events], r.metrics, r.status)
        for r in results
    ]


def test_bulk_answers_decide_as_node_by_node_answers() -> None:
    bulk = BulkCloud(failing=False)
    assert bulk.bulk_lookup() is bulk and RecordingCloud().bulk_lookup() is None
    assert _summary(_loops(bulk)) == _summary(_loops(RecordingCloud()))
    assert bulk.bulk_calls >= 8  # both bulk lookups, every loop


def test_a_failing_bulk_lookup_falls_back_to_node_by_node() -> None:
    failing = BulkCloud(failing=True)
    assert _summary(_loops(failing)) == _summary(_loops(RecordingCloud()))
    assert failing.bulk_calls >= 8


def test_the_guarded_cloud_declares_what_its_cloud_declares() -> None:
    # Declared, not discovered (a forwarding wrapper once hid a capability): the guard offers its
    # cloud's bulk lookups, which only read; the loop acts through the groups the guard hands out, so a
    # dry run through it still changes nothing in the cloud.
    gate = WriteGate("cluster-autoscaler", lambda: True, dry_run=True)
    assert GuardedCloud(RecordingCloud(), gate).bulk_lookup() is None
    inner = BulkCloud(failing=False)
    wrapped = GuardedCloud(inner, gate)
    assert wrapped.bulk_lookup() is inner
    h = Harness(inner.with_group("ng", 0, 5, 1, template=template("ng")))
    h.add_node(node("n0", "ng"), "ng")
    h.add_pod(pod("busy", 1500, node_name="n0"))
    h.add_pod(pod("pending", 1500))
    result = StaticAutoscaler(wrapped, h.api).run_once(h.world(), 0.0)
    assert result.scale_up_result == "Successful" and inner.bulk_calls >= 2
    assert inner.calls_to("increase_size") == []


def test_unremovable_reasons_are_plain_strings() -> None:
    # The loop's result is logged and serialized as is: its reasons are str, not the rule's enum.
    results = _loops(RecordingCloud())
    reasons = [why for r in results for why in r.unremovable.values()]
    assert reasons and all(type(why) is str for why in reasons)
