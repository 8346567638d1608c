"""A replica that loses the Lease stops writing at once: every write checks leadership, reads pass."""

from __future__ import annotations

import pytest

from kubetide.cloud.provider import CloudProviderError
from kubetide.cluster.driver import StatePort
from kubetide.live.guard import LeaderGuardedCloud, LeaderGuardedPort, LeadershipLost
from kubetide.model.node import NodeView
from kubetide.model.pod import Pod
from kubetide.model.scheduling_terms import Taint
from kubetide.testing.cloud import RecordingCloud
from kubetide.testing.cluster import RecordingClusterPort


def test_writes_stop_the_moment_leadership_is_lost() -> None:
    leading = [True]
    inner = RecordingClusterPort([NodeView("n1"), NodeView("n2")])
    port = LeaderGuardedPort(inner, lambda: leading[0])
    port.add_node_taint("n1", Taint("k", "v", "NoSchedule"))
    # The CA driver writes its state and learned templates only through a port that can: this one can.
    assert isinstance(port, StatePort)
    port.write_config_map("kube-system", "kubetide-cluster-autoscaler-templates", {})
    leading[0] = False
    for write in (
        lambda: port.write_config_map("kube-system", "kubetide-cluster-autoscaler-state", {}),
        lambda: port.add_node_taint("n2", Taint("k", "v", "NoSchedule")),
        lambda: port.remove_node_taint("n2", "k"),
        lambda: port.set_node_unschedulable("n2", True),
        lambda: port.annotate_node("n2", {"a": "b"}),
        lambda: port.delete_node("n2"),
        lambda: port.evict(Pod(name="p", namespace="default")),
    ):
        with pytest.raises(LeadershipLost):
            write()
    port.emit_event("Normal", "R", "Node/n2", "m")  # events only describe: they pass
    assert [(c.method, c.target) for c in inner.calls] == [
        ("add_node_taint", "n1"),
        ("write_config_map", "kube-system/kubetide-cluster-autoscaler-templates"),
    ]
    assert [e.reason for e in inner.events] == ["R"]


def test_cloud_writes_are_refused_and_reads_pass() -> None:
    leading = [True]
    cloud = RecordingCloud().with_group("g", min_size=0, max_size=5, target=1)
    guarded = LeaderGuardedCloud(cloud, lambda: leading[0])
    group = guarded.node_groups()[0]
    group.increase_size(1)
    leading[0] = False
    with pytest.raises(CloudProviderError):
        group.increase_size(1)
    with pytest.raises(CloudProviderError):
        group.decrease_target_size(-1)
    assert group.target_size() == 2
    assert guarded.name() == cloud.name()
