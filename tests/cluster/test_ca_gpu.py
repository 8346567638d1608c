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
