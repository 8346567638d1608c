"""The scenario faults (§3.1): stockouts, API errors, unregistered nodes, missing providerIDs, NotReady."""

from __future__ import annotations

import pytest

from kubetide.cloud import CloudProviderError, ErrorClass, InstanceState

from .builders import fake_node, group, world


def test_silent_stockout_accepts_the_target_and_creates_nothing_until_it_ends() -> None:
    w = world(group(faults=[{"type": "stockout", "at": "10m", "until": "30m"}]))
    w.run(600)
    w.ng().increase_size(2)
    assert w.ng().target_size() == 2
    assert w.ng().nodes() == []
    w.run(1799)
    assert w.listener.events == []
    w.run(1800)  # the stockout ends: the group works towards its target again
    assert [i.status.state for i in w.ng().nodes()] == [InstanceState.Creating] * 2
    w.run(1900)
    assert [e.t for e in w.listener.of("InstanceCreated")] == [1860, 1860]
    assert w.listener.ready_nodes() == ["ng-1", "ng-2"]


def test_silent_stockout_requests_can_be_withdrawn() -> None:
    w = world(group(faults=[{"type": "stockout", "until": "30m"}]))
    w.ng().increase_size(3)
    w.ng().decrease_target_size(-3)
    assert w.ng().target_size() == 0
    w.run(4000)
    assert w.listener.events == [] and w.ng().nodes() == []


def test_instances_requested_before_a_stockout_still_come_up() -> None:
    w = world(group(faults=[{"type": "stockout", "at": "30s"}]))
    w.ng().increase_size(1)
    w.run(200)
    assert w.listener.ready_nodes() == ["ng-1"]


def test_error_stockout_lists_failed_instances_at_once() -> None:
    w = world(group(faults=[{"type": "stockout", "mode": "error", "until": "1h"}]))
    w.ng().increase_size(2)
    instances = w.ng().nodes()
    assert len(instances) == 2
    for inst in instances:
        assert inst.has_creation_error
        info = inst.status.error_info
        assert info.error_class is ErrorClass.OutOfResources and info.error_code == "STOCKOUT"
        assert info.key == "OutOfResource.STOCKOUT"
        assert "do not have sufficient m5.large capacity" in info.error_message
    failed = w.listener.of("InstanceFailed")
    assert [e.t for e in failed] == [0, 0]
    assert [e.data["instance"] for e in failed] == [i.id for i in instances]
    w.run(7200)  # they stay listed, failed, after the stockout: only a deletion removes them
    assert w.ng().nodes() == instances
    assert w.listener.of("InstanceCreated") == []


def test_failed_instances_go_at_once_when_deleted() -> None:
    w = world(group(faults=[{"type": "stockout", "mode": "error"}]))
    w.ng().increase_size(2)
    first, second = w.ng().nodes()
    w.cloud.client("cluster-autoscaler").node_group("ng").delete_nodes([fake_node(first.id)])
    assert w.ng().nodes() == [second] and w.ng().target_size() == 1
    (terminated,) = w.listener.of("InstanceTerminated")
    assert terminated.t == 0 and terminated.data["reason"] == "cluster-autoscaler"
    assert w.cloud.billing(100)["ng"] == (0.0, 0.0)


def test_decreasing_the_target_drops_failed_instances() -> None:
    w = world(group(initialSize=1, faults=[{"type": "stockout", "mode": "error"}]))
    w.ng().increase_size(2)
    w.ng().decrease_target_size(-2)
    assert w.ng().target_size() == 1
    assert [i.status.state for i in w.ng().nodes()] == [InstanceState.Running]
    with pytest.raises(CloudProviderError, match="existing nodes"):
        w.ng().decrease_target_size(-1)


@pytest.mark.parametrize(
    ("call", "method"),
    [("IncreaseSize", "increase"), ("DeleteNodes", "delete"), ("DecreaseTargetSize", "decrease")],
)
def test_api_error_fails_the_calls_in_its_window(call: str, method: str) -> None:
    w = world(group(initialSize=2, faults=[{"type": "apiError", "at": "1m", "until": "2m"}]))
    w.ng().increase_size(1)

    def act() -> None:
        if method == "increase":
            w.ng().increase_size(1)
        elif method == "delete":
            w.ng().delete_nodes([w.listener.nodes["ng-1"]])
        else:
            w.ng().decrease_target_size(-1)

    w.run(60)
    before = (w.ng().target_size(), w.ng().nodes())
    with pytest.raises(CloudProviderError, match=f"{call} on group ng failed"):
        act()
    assert (w.ng().target_size(), w.ng().nodes()) == before
    w.run(120)
    if method != "decrease":  # by now the extra instance exists and cannot be withdrawn
        act()


def test_api_error_can_be_limited_to_some_calls() -> None:
    w = world(group(initialSize=1, faults=[{"type": "apiError", "calls": ["DeleteNodes"]}]))
    w.ng().increase_size(1)
    assert w.ng().target_size() == 2
    with pytest.raises(CloudProviderError, match="DeleteNodes"):
        w.ng().delete_nodes([w.listener.nodes["ng-1"]])


def test_unregistered_instances_run_but_never_register() -> None:
    w = world(group(faults=[{"type": "unregistered", "count": 1}]))
    w.ng().increase_size(2)
    w.run(3600)
    assert [i.status.state for i in w.ng().nodes()] == [InstanceState.Running] * 2
    assert len(w.listener.of("InstanceCreated")) == 2
    assert list(w.listener.nodes) == ["ng-2"]
    seconds, _ = w.cloud.billing(3600)["ng"]
    assert seconds == 2 * (3600 - 60)  # the unregistered machine is billed too
    w.ng().increase_size(1)  # the count is used up
    w.run(3700)
    assert sorted(w.listener.nodes) == ["ng-2", "ng-3"]


def test_missing_provider_id_nodes_register_without_it() -> None:
    w = world(group(faults=[{"type": "missingProviderID", "count": 1}]))
    w.ng().increase_size(2)
    w.run(100)
    broken, fine = w.listener.nodes["ng-1"], w.listener.nodes["ng-2"]
    assert broken.provider_id == "" and fine.provider_id.startswith("sim:///")
    assert w.listener.instance_of["ng-1"] == w.ng().nodes()[0].id
    assert w.cloud.node_group_for_node(broken) is None
    found = w.cloud.node_group_for_node(fine)
    assert found is not None and found.id() == "ng"
    with pytest.raises(CloudProviderError, match="no sim:// providerID"):
        w.cloud.has_instance(broken)
    # CA sees the instance as unregistered and deletes it through a fake node: the Node goes too.
    w.ng().delete_nodes([fake_node(w.listener.instance_of["ng-1"])])
    w.run(200)
    assert list(w.listener.nodes) == ["ng-2"]


def test_node_not_ready_hits_ready_nodes_for_its_window() -> None:
    w = world(
        group(initialSize=4, faults=[{"type": "nodeNotReady", "at": "10m", "until": "20m", "count": 2}])
    )
    w.run(600)
    not_ready = sorted(n for n, ok in w.listener.ready.items() if not ok)
    assert len(not_ready) == 2
    events = w.listener.of("NodeNotReady")
    assert sorted(str(e.data["node"]) for e in events) == not_ready and {e.t for e in events} == {600}
    w.run(1200)
    assert len(w.listener.ready_nodes()) == 4
    assert [e.data["node"] for e in w.listener.of("NodeReady") if e.t == 1200] == sorted(not_ready)


def test_node_not_ready_without_until_lasts_and_skips_deleted_nodes() -> None:
    w = world(group(initialSize=2, faults=[{"type": "nodeNotReady", "at": "1m", "count": 5}]))
    w.run(60)
    assert w.listener.ready_nodes() == []  # fewer Ready nodes than the count: all of them
    w.ng().delete_nodes([w.listener.nodes["ng-1"]])
    w.run(10_000)
    assert w.listener.ready_nodes() == []
    assert list(w.listener.nodes) == ["ng-2"]


def test_node_not_ready_picks_are_seeded() -> None:
    def picks(seed: int) -> list[str]:
        w = world(group(initialSize=10, faults=[{"type": "nodeNotReady", "at": 1, "count": 3}]), seed=seed)
        w.run(1)
        return [str(e.data["node"]) for e in w.listener.of("NodeNotReady")]

    assert picks(1) == picks(1)
    assert len({tuple(picks(s)) for s in range(8)}) > 1
