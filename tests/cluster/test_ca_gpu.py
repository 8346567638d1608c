"""GPU nodes as CA tells them: utilization from GPU requests alone against
--scale-down-gpu-utilization-threshold, and a labelled node whose GPUs are not allocatable yet counted
as starting."""

from __future__ import annotations

from dataclasses import replace

from ca_loop_harness import GIB, Harness, node, pod, template

from kubetide.cluster.gpu import gpu_resource, with_unready_gpus_unready
from kubetide.cluster.options import AutoscalingOptions
from kubetide.model.pod import Container
from kubetide.model.resources import Resources
from kubetide.testing.cloud import Call, RecordingCloud

LABEL = "example.com/accelerator"


def gpu_node(name: str, gpus: int = 1, *, labelled: bool = False, created: float = -10_000.0) -> object:
    n = node(name, "gpu", cpu=4000, created=created)
    alloc = Resources({"cpu": 4000, "memory": 4 * GIB, "pods": 110, "nvidia.com/gpu": gpus})
    labels = {**n.labels, LABEL: "tesla"} if labelled else n.labels
    return replace(n, allocatable=alloc, capacity=alloc, labels=labels)


def gpu_pod(name: str, cpu: int, gpus: int, node_name: str = "") -> object:
    p = pod(name, cpu, node_name=node_name)
    requests = Resources({"cpu": cpu, "memory": 256 * 2**20, "nvidia.com/gpu": gpus})
    return p.evolve(containers=(Container("c", requests=requests),))


def test_which_nodes_are_gpu_nodes() -> None:
    assert gpu_resource(gpu_node("a"), "") == "nvidia.com/gpu"  # by allocatable alone
    assert gpu_resource(gpu_node("b", 0, labelled=True), LABEL) == "nvidia.com/gpu"  # by the label
    assert gpu_resource(gpu_node("c", 0), LABEL) is None
    nodes = with_unready_gpus_unready(
        [gpu_node("d", 0, labelled=True), gpu_node("e", 1, labelled=True)], LABEL
    )
    assert [n.ready for n in nodes] == [False, True]


def test_a_gpu_node_busy_on_cpu_but_not_on_gpus_is_underutilized() -> None:
    cloud = RecordingCloud().with_group("gpu", 1, 5, target=2, template=template("gpu"))
    h = Harness(cloud, AutoscalingOptions.from_flags({}))
    h.add_node(gpu_node("g1"), "gpu")
    h.add_node(gpu_node("g2"), "gpu")
    h.add_pod(gpu_pod("trainer", 100, 1, node_name="g1"))  # g1: 100% of its GPU
    h.add_pod(gpu_pod("cpu-hog", 3200, 0, node_name="g2"))  # g2: 80% cpu, 0% GPU
    result = h.run(0.0)
    assert "g2" in result.unneeded  # GPU utilization 0 < --scale-down-gpu-utilization-threshold (0.5)
    assert result.unremovable.get("g1") == "NotUnderutilized"
    h.run(700.0)  # past --scale-down-unneeded-time: the pod moves to g1 and g2 goes
    h.run(710.0)  # once the evicted pod is gone
    assert [c.args for c in h.cloud.calls_to("delete_nodes")] == [("g2",)]


def test_the_gpu_threshold_is_its_own() -> None:
    cloud = RecordingCloud().with_group("gpu", 1, 5, target=2, template=template("gpu"))
    h = Harness(cloud, AutoscalingOptions.from_flags({"scale-down-gpu-utilization-threshold": 0.4}))
    h.add_node(gpu_node("g1", 2), "gpu")
    h.add_node(gpu_node("g2", 2), "gpu")
    h.add_pod(gpu_pod("half", 100, 1, node_name="g2"))  # 50% of g2's GPUs, 2.5% of its cpu
    result = h.run(0.0)
    assert result.unremovable.get("g2") == "NotUnderutilized" and "g1" in result.unneeded


def _gpus_not_yet_allocatable(labelled: bool) -> Harness:
    cloud = RecordingCloud().with_group("gpu", 0, 5, target=1, template=template("gpu"))
    cloud.gpu_label_key = LABEL
    tmpl = cloud.groups["gpu"].template
    assert tmpl is not None
    alloc = Resources({"cpu": 4000, "memory": 4 * GIB, "pods": 110, "nvidia.com/gpu": 1})
    cloud.groups["gpu"].template = replace(tmpl, node=replace(tmpl.node, allocatable=alloc, capacity=alloc))
    h = Harness(cloud, AutoscalingOptions.from_flags({"scale-down-enabled": False}))
    h.add_node(gpu_node("g1", 0, labelled=labelled, created=-30.0), "gpu")  # joined 30 s ago, plugin starting
    h.add_pod(gpu_pod("trainer", 100, 1))
    return h


def test_a_labelled_node_without_its_gpus_yet_is_starting_so_no_second_one_is_bought() -> None:
    h = _gpus_not_yet_allocatable(labelled=True)
    h.run(0.0)
    assert h.cloud.calls_to("increase_size") == []


def test_without_the_label_the_node_has_no_gpu_and_one_is_added() -> None:
    h = _gpus_not_yet_allocatable(labelled=False)
    h.run(0.0)
    assert h.cloud.calls_to("increase_size") == [Call("increase_size", "gpu", (1,))]


# -- --gpu-total: GPUs counted by type (core/scaledown/resource/limits.go, core/scaleup/resource/manager.go,
# processors/customresources/gpu_processor.go GetNodeGpuTarget) -------------------------------------------


def _gpu_template(gpus: int = 1) -> object:
    t = template("gpu", cpu=4000)
    alloc = Resources({"cpu": 4000, "memory": 4 * GIB, "pods": 110, "nvidia.com/gpu": gpus})
    labels = {**t.node.labels, LABEL: "tesla"}
    return replace(t, node=replace(t.node, allocatable=alloc, capacity=alloc, labels=labels))


def _gpu_cluster(gpu_total: str, nodes: int) -> Harness:
    cloud = RecordingCloud().with_group("gpu", 0, 10, target=nodes, template=_gpu_template())
    cloud.gpu_label_key = LABEL
    h = Harness(cloud, AutoscalingOptions.from_flags({"gpu-total": [gpu_total]}))
    for i in range(nodes):
        h.add_node(gpu_node(f"g{i}", labelled=True), "gpu")
    return h


def test_a_gpu_minimum_keeps_the_gpu_nodes_it_needs() -> None:
    """LimitsLeft: the "tesla" total (3 nodes x 1 GPU, from the label and allocatable) less the minimum 2
    leaves 1; TryDecrementBy takes 1 GPU per node: one node may go, the next is
    MinimalResourceLimitExceeded. (kubetide looked "tesla" up as a node resource, so never counted GPUs.)"""
    h = _gpu_cluster("tesla:2:10", 3)
    h.run(0.0)
    result = h.run(601.0)
    reasons = sorted(result.unremovable.get(f"g{i}", "") for i in range(3))
    assert reasons.count("MinimalResourceLimitExceeded") == 2
    assert len(h.cloud.calls_to("delete_nodes")) == 1


def test_no_gpu_minimum_no_gpu_limit() -> None:
    h = _gpu_cluster("tesla:0:10", 3)
    h.run(0.0)
    h.run(601.0)
    assert len(h.cloud.calls_to("delete_nodes")) == 3


def test_a_gpu_maximum_stops_a_scale_up_of_gpu_nodes() -> None:
    """ResourcesLeft: each group's target times its template's GPU target ("tesla": 1); a group whose
    template would take more GPUs than left is skipped, with 1.31's reason ``max cluster tesla limit
    reached`` (skippedreasons.go NewMaxResourceLimitReached)."""
    for gpu_max, scaled in ((2, False), (3, True)):
        h = _gpu_cluster(f"tesla:0:{gpu_max}", 2)
        for i in range(2):
            h.add_pod(gpu_pod(f"busy{i}", 100, 1, node_name=f"g{i}"))
        h.add_pod(gpu_pod("trainer", 100, 1).evolve(creation_time=-100.0))
        result = h.run(0.0)
        assert bool(h.cloud.calls_to("increase_size")) is scaled, gpu_max
        if not scaled:
            (event,) = [e for e in result.events if e.reason == "NotTriggerScaleUp"]
            assert "max cluster tesla limit reached" in event.message
