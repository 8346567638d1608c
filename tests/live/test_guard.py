"""The guard: a write is made, refused once this replica stops leading, or only said in a dry run
(logged and counted); reads and Events pass. One wrapper per port protocol, every method written out."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from prometheus_client import REGISTRY

from kubetide.cloud.provider import CloudProvider, CloudProviderError, NodeGroup
from kubetide.hpa.driver import HPASource, StatusWriteError
from kubetide.hpa.ports import Scale, ScaleError, ScaleTargetPort
from kubetide.live.guard import (
    GuardedCloud,
    GuardedClusterPort,
    GuardedHPAs,
    GuardedNodeGroup,
    GuardedScaleTargets,
    GuardedStatusConfigMap,
    LeadershipLost,
    WriteGate,
)
from kubetide.model.api import (
    NO_CAPABILITIES,
    ClusterPort,
    ConfigMapWriter,
    EvictionOutcome,
    PortCapabilities,
)
from kubetide.model.hpa import HPA, CrossVersionObjectReference, HPAStatus
from kubetide.model.node import NodeView
from kubetide.model.pod import Pod
from kubetide.model.scheduling_terms import Taint
from kubetide.model.selectors import LabelSelector
from kubetide.testing.cloud import RecordingCloud
from kubetide.testing.cluster import RecordingClusterPort

COMPONENT = "guard-test"
REF = CrossVersionObjectReference("Deployment", "web", "apps/v1")


def _said(action: str) -> float:
    value = REGISTRY.get_sample_value(
        "kubetide_dry_run_actions_total", {"component": COMPONENT, "action": action}
    )
    return value or 0.0


def _no_config_maps() -> Any:
    """A cluster port that declares no capability."""

    class Port(RecordingClusterPort):
        def capabilities(self) -> PortCapabilities:
            return NO_CAPABILITIES

    return Port()


def test_writes_stop_the_moment_leadership_is_lost() -> None:
    leading = [True]
    inner = RecordingClusterPort([NodeView("n1"), NodeView("n2")])
    port = GuardedClusterPort(inner, WriteGate(COMPONENT, lambda: leading[0]))
    port.add_node_taint("n1", Taint("k", "v", "NoSchedule"))
    # The CA driver writes its state and learned templates only through a port that declares it can:
    # this one declares it, its writes through the guard; events with data it does not offer.
    assert port.capabilities().config_maps is port and port.capabilities().event_data is None
    assert (
        GuardedClusterPort(_no_config_maps(), WriteGate(COMPONENT, lambda: True)).capabilities().config_maps
        is None
    )
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
    guarded = GuardedCloud(cloud, WriteGate(COMPONENT, lambda: leading[0]))
    group = guarded.node_groups()[0]
    group.increase_size(1)
    leading[0] = False
    with pytest.raises(CloudProviderError):
        group.increase_size(1)
    with pytest.raises(CloudProviderError):
        group.decrease_target_size(-1)
    assert group.target_size() == 2
    assert guarded.name() == cloud.name()


def test_a_dry_run_says_each_cluster_write_reports_it_done_and_makes_none(
    caplog: pytest.LogCaptureFixture,
) -> None:
    inner = RecordingClusterPort([NodeView("n1")], [Pod(name="p", namespace="web")])
    port = GuardedClusterPort(inner, WriteGate(COMPONENT, lambda: True, dry_run=True))
    actions = ["add-taint", "remove-taint", "cordon", "annotate-node", "evict", "delete-node", "write"]
    before = [_said(a) for a in actions]
    with caplog.at_level(logging.INFO, logger="kubetide.dry-run"):
        port.add_node_taint("n1", Taint("ToBeDeletedByClusterAutoscaler", "1700000000", "NoSchedule"))
        port.remove_node_taint("n1", "DeletionCandidateOfClusterAutoscaler")
        port.set_node_unschedulable("n1", True)
        port.annotate_node("n1", {"a": "b"})
        # Nothing evicted: as if gone at once, so the dry run shows the deletion the drain ends in.
        assert port.evict(Pod(name="p", namespace="web"), 30) is EvictionOutcome.GONE
        port.delete_node("n1")
        port.write_config_map("kube-system", "kubetide-cluster-autoscaler-state", {"state": "{}"})
    port.emit_event("Normal", "ScaleDown", "Node/n1", "marked the node as toBeDeleted/unschedulable")
    assert inner.calls == [] and [e.reason for e in inner.events] == ["ScaleDown"]
    assert [_said(a) - b for a, b in zip(actions, before, strict=True)] == [1] * len(actions)
    assert caplog.messages[0] == (
        "dry run: would add taint ToBeDeletedByClusterAutoscaler=1700000000:NoSchedule to node n1"
    )
    assert "dry run: would evict pod web/p" in caplog.messages
    assert "dry run: would write ConfigMap kube-system/kubetide-cluster-autoscaler-state" in caplog.messages


def test_a_dry_run_says_each_cloud_write_and_the_groups_stay(caplog: pytest.LogCaptureFixture) -> None:
    cloud = RecordingCloud().with_group("g", min_size=0, max_size=5, target=2)
    cloud.with_node("g", NodeView("n1", provider_id="n1"))
    guarded = GuardedCloud(cloud, WriteGate(COMPONENT, lambda: True, dry_run=True))
    before = [_said(a) for a in ("increase_size", "delete_nodes", "decrease_target_size")]
    with caplog.at_level(logging.INFO, logger="kubetide.dry-run"):
        (group,) = guarded.node_groups()
        group.increase_size(2)
        group.atomic_increase_size(1)
        group.delete_nodes([NodeView("n1", provider_id="n1")])
        group.force_delete_nodes([NodeView("n1", provider_id="n1")])
        group.decrease_target_size(-1)
        assert group.create() is group
    after = [_said(a) for a in ("increase_size", "delete_nodes", "decrease_target_size")]
    assert [a - b for a, b in zip(after, before, strict=True)] == [2, 2, 1]
    assert cloud.calls == [] and group.target_size() == 2 and len(group.nodes()) == 1
    assert "dry run: would increase node group g by 2" in caplog.messages
    assert "dry run: would delete nodes n1 of node group g" in caplog.messages
    assert {getattr(r, "node_group", None) for r in caplog.records} == {"g"}


def test_the_status_config_map_is_written_in_a_dry_run_and_never_by_a_replica_that_does_not_lead() -> None:
    written: list[str] = []

    class StatusMap:
        def write(self, status_yaml: str, last_updated: str) -> None:
            written.append(status_yaml)

    leading = [True]
    status_map = GuardedStatusConfigMap(StatusMap(), WriteGate(COMPONENT, lambda: leading[0], dry_run=True))
    status_map.write("autoscalerStatus: Running", "2026-01-01 00:00:00 +0000 UTC")
    leading[0] = False
    with pytest.raises(LeadershipLost):
        status_map.write("autoscalerStatus: Running", "2026-01-01 00:00:10 +0000 UTC")
    assert written == ["autoscalerStatus: Running"]


class _Targets:
    def __init__(self) -> None:
        self.writes: list[int] = []

    def get_scale(self, namespace: str, ref: CrossVersionObjectReference) -> Scale:
        return Scale(2, 2, "app=web")

    def update_scale(self, namespace: str, ref: CrossVersionObjectReference, replicas: int) -> None:
        self.writes.append(replicas)

    def list_pods(self, namespace: str, selector: LabelSelector) -> list[Pod]:
        return []


class _HPAs:
    def __init__(self) -> None:
        self.statuses: list[HPAStatus] = []

    def list_hpas(self) -> dict[str, Any]:
        return {}

    def write_status(self, hpa: HPA, status: HPAStatus) -> None:
        self.statuses.append(status)


def _hpa() -> HPA:
    return HPA.from_manifest(
        {
            "metadata": {"name": "web", "namespace": "default"},
            "spec": {
                "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                "maxReplicas": 5,
            },
        }
    )


def test_the_hpa_writes_are_refused_once_not_leading_and_said_in_a_dry_run() -> None:
    leading = [True]
    inner_targets, inner_hpas = _Targets(), _HPAs()
    gate = WriteGate(COMPONENT, lambda: leading[0])
    targets, hpas = GuardedScaleTargets(inner_targets, gate), GuardedHPAs(inner_hpas, gate)
    targets.update_scale("default", REF, 3)
    hpas.write_status(_hpa(), HPAStatus(current_replicas=3, desired_replicas=3))
    assert targets.get_scale("default", REF) == Scale(2, 2, "app=web")
    leading[0] = False
    with pytest.raises(ScaleError):
        targets.update_scale("default", REF, 4)
    with pytest.raises(StatusWriteError):
        hpas.write_status(_hpa(), HPAStatus(current_replicas=3, desired_replicas=3))
    assert inner_targets.writes == [3] and len(inner_hpas.statuses) == 1

    dry = WriteGate(COMPONENT, lambda: True, dry_run=True)
    before = _said("update_scale"), _said("update_status")
    GuardedScaleTargets(inner_targets, dry).update_scale("default", REF, 5)
    GuardedHPAs(inner_hpas, dry).write_status(_hpa(), HPAStatus(current_replicas=3, desired_replicas=5))
    assert (_said("update_scale") - before[0], _said("update_status") - before[1]) == (1, 1)
    assert inner_targets.writes == [3] and len(inner_hpas.statuses) == 1


@pytest.mark.parametrize(
    ("wrapper", "protocols"),
    [
        (GuardedClusterPort, (ClusterPort, ConfigMapWriter)),
        (GuardedCloud, (CloudProvider,)),
        (GuardedNodeGroup, (NodeGroup,)),
        (GuardedScaleTargets, (ScaleTargetPort,)),
        (GuardedHPAs, (HPASource,)),
    ],
)
def test_each_wrapper_writes_out_every_method_of_its_protocols_and_forwards_nothing(
    wrapper: type, protocols: tuple[type, ...]
) -> None:
    wanted = {name for p in protocols for name in vars(p) if not name.startswith("_")}
    own = {name for name in vars(wrapper) if not name.startswith("_")}
    assert wanted and wanted <= own
    assert not hasattr(wrapper, "__getattr__")
