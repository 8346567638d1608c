"""RecordingCloud: the builder-configured fake other components test against."""

from __future__ import annotations

import pytest

from kubetide.cloud import (
    CloudProvider,
    CloudProviderError,
    ErrorClass,
    Instance,
    InstanceErrorInfo,
    InstanceState,
    InstanceStatus,
    NodeTemplate,
    NotImplementedByProvider,
)
from kubetide.model.node import NodeView
from kubetide.testing.cloud import Call, RecordingCloud


def _node(name: str) -> NodeView:
    return NodeView(name, provider_id=f"test:///{name}")


def test_records_calls_and_changes_sizes_at_once() -> None:
    scaled: list[tuple[str, int]] = []
    cloud = (
        RecordingCloud()
        .with_group("ng1", 1, 5, target=2)
        .with_node("ng1", _node("a"))
        .on_scale_up(lambda g, d: scaled.append((g, d)))
    )
    provider: CloudProvider = cloud
    cloud.with_node("ng1", _node("b"))
    (ng,) = provider.node_groups()
    ng.increase_size(2)
    ng.delete_nodes([_node("a")])
    assert ng.target_size() == 3 and scaled == [("ng1", 2)]
    assert [i.id for i in ng.nodes()] == ["test:///b"]
    assert cloud.calls == [Call("increase_size", "ng1", (2,)), Call("delete_nodes", "ng1", ("a",))]
    assert cloud.calls_to("delete_nodes") == [Call("delete_nodes", "ng1", ("a",))]


def test_maps_nodes_to_groups() -> None:
    cloud = RecordingCloud().with_group("ng1", 0, 5).with_group("ng2", 0, 5).with_node("ng2", _node("x"))
    group = cloud.node_group_for_node(_node("x"))
    assert group is not None and group.id() == "ng2"
    assert cloud.node_group_for_node(_node("y")) is None
    assert cloud.has_instance(_node("x")) and not cloud.has_instance(_node("y"))


def test_injected_failures_and_unimplemented_methods() -> None:
    cloud = (
        RecordingCloud()
        .with_group("ng1", 0, 5)
        .with_failure("increase_size", group="ng1")
        .with_failure("has_instance", error=NotImplementedByProvider("has_instance"))
    )
    with pytest.raises(CloudProviderError, match="injected"):
        cloud.groups["ng1"].increase_size(1)
    assert cloud.groups["ng1"].target_size() == 0
    assert cloud.calls == [Call("increase_size", "ng1", (1,))]  # recorded even when it fails
    with pytest.raises(NotImplementedByProvider):
        cloud.has_instance(_node("x"))
    with pytest.raises(NotImplementedByProvider):
        cloud.groups["ng1"].template_node_info()
    with pytest.raises(NotImplementedByProvider):
        cloud.pricing()


def test_instances_with_creation_errors_and_templates() -> None:
    error = InstanceErrorInfo(ErrorClass.OutOfResources, "STOCKOUT", "no")
    failed = Instance("test:///f", InstanceStatus(InstanceState.Creating, error))
    template = NodeTemplate(NodeView("template"))
    cloud = RecordingCloud().with_group("ng1", 0, 5, target=1, template=template).with_instance("ng1", failed)
    ng = cloud.groups["ng1"]
    assert ng.nodes() == [failed] and failed.has_creation_error
    assert ng.template_node_info() is template
    ng.force_delete_nodes([NodeView("test:///f", provider_id="test:///f")])
    assert ng.nodes() == [] and ng.target_size() == 0


def test_min_size_and_existing_instances_are_guarded() -> None:
    cloud = RecordingCloud().with_group("ng1", 1, 5, target=1).with_node("ng1", _node("a"))
    ng = cloud.groups["ng1"]
    with pytest.raises(CloudProviderError, match="min size"):
        ng.delete_nodes([_node("a")])
    with pytest.raises(CloudProviderError, match="existing nodes"):
        ng.decrease_target_size(-1)
    with pytest.raises(CloudProviderError, match="not in group"):
        ng.delete_nodes([_node("zz")])
