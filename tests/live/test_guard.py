"""A replica that loses the Lease stops writing at once: every write checks leadership, reads pass."""

from __future__ import annotations

import pytest

from kubetide.cloud.provider import CloudProviderError
from kubetide.cluster.driver import StatePort
from kubetide.live.guard import LeaderGuardedCloud, LeaderGuardedPort, LeadershipLost
from kubetide.model.api import EvictionOutcome
from kubetide.model.pod import Pod
from kubetide.model.scheduling_terms import Taint
from kubetide.testing.cloud import RecordingCloud


class _Port:
    def __init__(self) -> None:
        self.calls: list[str] = []

    def add_node_taint(self, node: str, taint: Taint) -> None:
        self.calls.append(f"taint {node}")

    def remove_node_taint(self, node: str, key: str) -> None:
        self.calls.append(f"untaint {node}")

    def set_node_unschedulable(self, node: str, unschedulable: bool) -> None:
        self.calls.append(f"cordon {node}")

    def annotate_node(self, node: str, annotations: object) -> None:
        self.calls.append(f"annotate {node}")

    def delete_node(self, node: str) -> None:
        self.calls.append(f"delete {node}")

    def evict(self, pod: Pod, grace_period_s: int | None = None) -> EvictionOutcome:
        self.calls.append(f"evict {pod.name}")
        return EvictionOutcome.EVICTED

    def emit_event(self, type_: str, reason: str, obj: str, message: str) -> None:
        self.calls.append(f"event {reason}")

    def write_config_map(self, namespace: str, name: str, data: object) -> None:
        self.calls.append(f"configmap {name}")


def test_writes_stop_the_moment_leadership_is_lost() -> None:
    leading = [True]
    inner = _Port()
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
    assert inner.calls == ["taint n1", "configmap kubetide-cluster-autoscaler-templates", "event R"]


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
