"""Instance creation errors, unregistered nodes and incorrect sizes: behaviour beyond the cases."""

from __future__ import annotations

from ca_builders import cnode

from kubetide.cloud.instance import ErrorClass, Instance, InstanceErrorInfo, InstanceState, InstanceStatus
from kubetide.cluster.clusterstate.incorrect import IncorrectSize, size_fix_delta
from kubetide.cluster.clusterstate.registry import ClusterStateRegistry
from kubetide.cluster.clusterstate.unregistered import UnregisteredNode, unregistered_to_delete
from kubetide.cluster.options import AutoscalingOptions
from kubetide.testing.cloud import RecordingCloud

NOW = 0.0
STOCKOUT = InstanceErrorInfo(ErrorClass.OutOfResources, "STOCKOUT", "zone is out of capacity")


def _failed(iid: str, info: InstanceErrorInfo = STOCKOUT) -> Instance:
    return Instance(iid, InstanceStatus(InstanceState.Creating, info))


def test_new_creation_errors_back_off_at_once_and_shrink_the_request() -> None:
    # Fast failover on stockouts: the group is backed off in the same loop the errors appear.
    cloud = RecordingCloud().with_group("ng1", 0, 10, 3)
    cloud.with_instance("ng1", _failed("i-1")).with_instance("ng1", _failed("i-2"))
    cloud.with_instance("ng1", Instance("i-3", InstanceStatus(InstanceState.Creating)))
    csr = ClusterStateRegistry(cloud, AutoscalingOptions())
    csr.register_scale_up("ng1", 3, NOW)
    result = csr.update_nodes([], NOW + 10)
    (event,) = result.events
    assert event.reason == "ScaleUpFailed"
    assert event.message == (
        "Failed adding 2 nodes to group ng1 due to OutOfResource.STOCKOUT; source errors: zone is out of capacity"
    )
    assert csr.scale_up_requests["ng1"].increase == 1
    assert csr.backoff.is_backed_off("ng1", NOW + 10)
    # The same failing instances next loop are not "unseen": no second event, no second backoff.
    assert csr.update_nodes([], NOW + 20).events == ()


def test_errors_of_a_group_not_scaling_up_are_ignored() -> None:
    cloud = RecordingCloud().with_group("ng1", 0, 10, 1).with_instance("ng1", _failed("i-1"))
    csr = ClusterStateRegistry(cloud, AutoscalingOptions())
    assert csr.update_nodes([], NOW).events == ()
    assert not csr.backoff.is_backed_off("ng1", NOW)


def test_failed_and_deleting_instances_are_not_unregistered() -> None:
    cloud = RecordingCloud().with_group("ng1", 0, 10, 3)
    cloud.with_instance("ng1", _failed("i-1"))
    cloud.with_instance("ng1", Instance("i-2", InstanceStatus(InstanceState.Deleting)))
    cloud.with_instance("ng1", Instance("i-3"))
    csr = ClusterStateRegistry(cloud, AutoscalingOptions())
    csr.update_nodes([], NOW)
    assert [u.instance_id for u in csr.unregistered_nodes()] == ["i-3"]


def test_unregistered_deletion_respects_min_size_unless_forced() -> None:
    nodes = [UnregisteredNode(f"i-{i}", "ng1", NOW - 1000) for i in range(3)]
    assert len(unregistered_to_delete(nodes, target=4, min_size=2, now=NOW, max_node_provision_time=900)) == 2
    assert unregistered_to_delete(nodes, target=2, min_size=2, now=NOW, max_node_provision_time=900) == []
    assert len(unregistered_to_delete(nodes, 2, 2, NOW, 900, force=True)) == 3
    assert unregistered_to_delete(nodes, 4, 2, NOW - 200, 900) == []


def test_fix_node_group_size_only_lowers_after_the_provision_time() -> None:
    short = IncorrectSize(current_size=2, expected_size=5, first_observed=NOW)
    assert size_fix_delta(short, NOW + 900, 900) is None
    assert size_fix_delta(short, NOW + 901, 900) == -3
    assert size_fix_delta(IncorrectSize(6, 5, NOW), NOW + 901, 900) is None


def test_cloud_deleted_nodes_are_not_ready_nor_unready() -> None:
    cloud = RecordingCloud().with_group("ng1", 0, 10, 1)
    gone = cnode("gone", ready=False)  # no instance any more
    csr = ClusterStateRegistry(cloud, AutoscalingOptions())
    csr.update_nodes([gone], NOW)
    assert csr.total_readiness.deleted == ("gone",) and csr.total_readiness.unready == ()


def test_registry_decides_deletions_and_size_fixes() -> None:
    cloud = RecordingCloud().with_group("ng1", 1, 10, 4)
    cloud.with_instance("ng1", Instance("i-1")).with_instance("ng1", _failed("i-2"))
    ready = cnode("n1")
    cloud.with_node("ng1", ready)
    csr = ClusterStateRegistry(cloud, AutoscalingOptions())
    csr.update_nodes([ready], NOW)
    assert [i.id for i in csr.instances_with_creation_errors()["ng1"]] == ["i-2"]
    assert csr.unregistered_to_delete(NOW) == {}
    csr.update_nodes([ready], NOW + 901)
    assert csr.unregistered_to_delete(NOW + 901) == {}  # there before kubetide looked: kept by default
    assert [u.instance_id for u in csr.unregistered_to_delete(NOW + 901, foreign_too=True)["ng1"]] == ["i-1"]
    # 1 registered of target 4, 1 unregistered: incorrect since NOW; fixed after the provision time.
    assert csr.size_fixes(NOW + 901) == {"ng1": -3}


def test_lists_given_again_are_reused_and_new_lists_are_read() -> None:
    # A provider may hand out the very same instance list while nothing changed (the simulator's
    # does); a new list is read again, whatever the old one said.
    cloud = RecordingCloud().with_group("ng1", 0, 10, 2)
    group = cloud.groups["ng1"]
    lists = {"now": [Instance("i-1", InstanceStatus(InstanceState.Running))]}
    group.nodes = lambda: lists["now"]  # type: ignore[method-assign]
    csr = ClusterStateRegistry(cloud, AutoscalingOptions())
    csr.update_nodes([], NOW)
    assert csr.instance_state("i-1") is InstanceState.Running
    csr.update_nodes([], NOW + 10)  # the same list: the same answers
    assert csr.instance_state("i-1") is InstanceState.Running
    assert csr.instances_with_creation_errors() == {}
    lists["now"] = [Instance("i-1", InstanceStatus(InstanceState.Deleting)), _failed("i-2")]
    csr.update_nodes([], NOW + 20)
    assert csr.instance_state("i-1") is InstanceState.Deleting
    assert csr.instances_with_creation_errors() == {"ng1": [_failed("i-2")]}
