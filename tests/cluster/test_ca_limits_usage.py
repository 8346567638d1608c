"""The cluster's resource usage (``--cores-total``, ``--memory-total``, ``--gpu-total``) is the sum of
what each node counts for, however the nodes' capacities repeat; GPUs count by type, as CA 1.31's
``GpuCustomResourcesProcessor.GetNodeGpuTarget`` (processors/customresources/gpu_processor.go) says:
the type is the node's GPU label value, the count its allocatable ``nvidia.com/gpu``."""

from __future__ import annotations

from dataclasses import replace

import pytest
from ca_loop_harness import template
from hypothesis import given
from hypothesis import strategies as st

from kubetide.cluster.scaleup.limits import (
    CORES,
    NODES,
    ResourceLimits,
    UnknownGpuTarget,
    gpu_target,
    gpu_usage,
    node_resources,
)
from kubetide.model.node import NodeView
from kubetide.model.resources import MEMORY, Resources
from kubetide.testing.cloud import RecordingCloud

LABEL = "cloud.google.com/gke-accelerator"
_CAPACITIES = st.builds(
    lambda cpu, mem, gpu: Resources({"cpu": cpu, "memory": mem, "nvidia.com/gpu": gpu}),
    st.sampled_from([0, 999, 1000, 1001, 4000]),
    st.sampled_from([0, 1, 2**30]),
    st.integers(0, 2),
)


@given(st.lists(_CAPACITIES, max_size=12))
def test_usage_is_the_sum_of_every_node(capacities: list[Resources]) -> None:
    limits = ResourceLimits({}, {CORES: 10**6, MEMORY: 10**15})
    nodes = [NodeView(f"n{i}", capacity=c) for i, c in enumerate(capacities)]
    expected: dict[str, int] = {}
    for node in nodes:
        for r, v in node_resources(node).items():
            expected[r] = expected.get(r, 0) + v
    usage = limits.usage(nodes)
    assert usage == expected
    assert usage.get(NODES, 0) == len(nodes)


def _gpu_node(name: str, kind: str | None, gpus: int) -> NodeView:
    alloc = Resources({"cpu": 4000, "memory": 2**30, "nvidia.com/gpu": gpus})
    return NodeView(name, labels={LABEL: kind} if kind else {}, allocatable=alloc, capacity=alloc)


@given(st.lists(st.tuples(st.sampled_from([None, "t4", "a100"]), st.integers(0, 4)), max_size=10))
def test_gpus_are_counted_by_type_from_the_label_and_allocatable(nodes: list[tuple[str | None, int]]) -> None:
    """customResourcesTotal: ``result[ResourceType] += ResourceCount``, skipping no type or no count; a
    node without the label has no GPU target, whatever its allocatable."""
    views = [_gpu_node(f"n{i}", kind, gpus) for i, (kind, gpus) in enumerate(nodes) if kind is None or gpus]
    expected: dict[str, int] = {}
    for kind, gpus in nodes:
        if kind is not None and gpus:
            expected[kind] = expected.get(kind, 0) + gpus
    assert gpu_usage((gpu_target(n, LABEL, None), 1) for n in views) == expected


def test_a_gpu_node_whose_gpus_are_not_allocatable_yet_counts_its_templates() -> None:
    """GetNodeGpuTarget: label set, allocatable 0: the group's TemplateNodeInfo capacity; no group: an
    error (the totals are then unknown, LimitUnknown)."""
    gpu_template = replace(
        template("gpu"),
        node=replace(
            template("gpu").node,
            capacity=Resources({"cpu": 4000, "memory": 2**30, "nvidia.com/gpu": 4}),
        ),
    )
    cloud = RecordingCloud().with_group("gpu", 0, 5, target=1, template=gpu_template)
    group = cloud.node_groups()[0]
    starting = _gpu_node("g", "t4", 0)
    assert gpu_target(starting, LABEL, group) == ("t4", 4)
    with pytest.raises(UnknownGpuTarget):
        gpu_target(starting, LABEL, None)
    assert gpu_target(_gpu_node("g", "t4", 2), LABEL, None) == ("t4", 2)
    assert gpu_target(_gpu_node("g", None, 2), LABEL, None) is None
    assert gpu_target(_gpu_node("g", "t4", 2), "", None) is None  # a cloud without a GPU label


def test_gpus_are_limited_only_when_a_limit_names_another_resource() -> None:
    """ContainsCustomResources(resourceLimiter.GetResources()): anything but cpu and memory is a GPU."""
    assert not ResourceLimits({CORES: 1}, {CORES: 10, MEMORY: 10}).gpus_limited
    assert ResourceLimits({"t4": 1}, {CORES: 10, MEMORY: 10}).gpus_limited
    assert ResourceLimits({}, {CORES: 10, "t4": 8}).gpus_limited
