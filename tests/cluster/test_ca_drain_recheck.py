"""A drain re-checks drainability right before it evicts and deletes (issue 8 item 6), as CA's later
versions do: a pod that cannot be moved and landed on a draining node aborts that node's deletion."""

from __future__ import annotations

from dataclasses import replace

from ca_loop_harness import Harness, node, pod, template

from kubetide.cluster.options import AutoscalingOptions
from kubetide.cluster.scaledown.taints import TO_BE_DELETED_TAINT
from kubetide.testing.cloud import RecordingCloud


def draining() -> Harness:
    cloud = RecordingCloud().with_group("ng", 1, 10, target=2, template=template("ng"))
    h = Harness(cloud, AutoscalingOptions.from_flags({"max-scale-down-parallelism": 1}))
    for name in ("n1", "n2"):
        h.add_node(node(name, "ng"), "ng")
    h.add_pod(pod("big", 1500, node_name="n1"))
    h.add_pod(pod("small", 200, node_name="n2"))
    h.refuse_evictions = True  # a PDB holds the drain for a while
    h.run(0.0)
    h.run(610.0)
    assert any(t.key == TO_BE_DELETED_TAINT for t in h.nodes["n2"].taints)
    return h


def test_a_bare_pod_landing_on_a_draining_node_aborts_its_deletion() -> None:
    h = draining()
    h.add_pod(replace(pod("bare", 100, node_name="n2"), owners=()))
    h.refuse_evictions = False
    result = h.run(620.0)
    assert "bare" not in h.evicted
    assert h.cloud.calls_to("delete_nodes") == []
    assert not any(t.key == TO_BE_DELETED_TAINT for t in h.nodes["n2"].taints)
    (failed,) = [e for e in result.events if e.reason == "ScaleDownFailed"]
    assert failed.object == "Node/n2"
    assert "default/bare" in failed.message and "NotReplicated" in failed.message


def test_a_pod_held_by_a_pdb_does_not_abort_the_drain() -> None:
    h = draining()
    h.refuse_evictions = False
    h.run(620.0)  # retried at 625 (every 10 s from the drain's start): accepted
    assert h.evicted == ["small"]
    h.run(630.0)  # the evicted pod is gone at the next look
    assert [c.args for c in h.cloud.calls_to("delete_nodes")] == [("n2",)]
