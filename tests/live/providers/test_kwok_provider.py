"""The kwok provider against an in-memory API: sizes, creations in flight, deletions, shared state."""

from __future__ import annotations

import contextlib
import json
import logging
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubetide.cloud.instance import CloudProviderError, InstanceState, NotImplementedByProvider
from kubetide.live.guard import WriteGate
from kubetide.live.providers.kwok import STATE_CONFIGMAP, KwokCloudProvider, parse_cloud_config
from kubetide.live.providers.kwok.api import KubeCallError
from kubetide.model.node import NodeView
from kubetide.testing.kwok_api import FakeKwokApi

CONFIG = {
    "nodeGroups": [
        {
            "name": "general",
            "minSize": 0,
            "maxSize": 3,
            "template": {
                "metadata": {"labels": {"pool": "general"}},
                "spec": {"taints": [{"key": "dedicated", "value": "x", "effect": "NoSchedule"}]},
                "status": {"allocatable": {"cpu": "4", "memory": "16Gi", "pods": "110"}},
            },
        },
        {
            "name": "slow",
            "minSize": 1,
            "maxSize": 5,
            "provisioningDelay": "30s",
            "template": {"status": {"capacity": {"cpu": "2", "memory": "4Gi", "pods": "110"}}},
        },
    ]
}


class Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


def make(
    api: FakeKwokApi | None = None, clock: Clock | None = None, seed: int = 1
) -> tuple[FakeKwokApi, KwokCloudProvider, Clock]:
    api = api or FakeKwokApi()
    clock = clock or Clock()
    provider = KwokCloudProvider(api, parse_cloud_config(CONFIG), clock=clock, rng=random.Random(seed))
    provider.refresh()
    return api, provider, clock


def group(provider: KwokCloudProvider, name: str):  # type: ignore[no-untyped-def]
    return next(g for g in provider.node_groups() if g.id() == name)


def view(api: FakeKwokApi, name: str) -> NodeView:
    return NodeView.from_manifest(api.nodes[name])


def state(api: FakeKwokApi) -> dict:
    return json.loads(api.configmaps[("kube-system", STATE_CONFIGMAP)]["data"]["state"])


def test_increase_size_creates_nodes_from_the_template() -> None:
    api, provider, _ = make()
    general = group(provider, "general")
    general.increase_size(2)
    assert general.target_size() == 2
    assert len(api.nodes) == 2
    for name, node in api.nodes.items():
        assert name.startswith("general-") and len(name) == len("general-") + 5
        assert node["spec"]["providerID"] == f"kwok://general/{name}"
        assert node["metadata"]["labels"] == {
            "pool": "general",
            "kubetide.io/node-group": "general",
            "kubernetes.io/hostname": name,
        }
        assert (
            node["status"]["capacity"]
            == node["status"]["allocatable"]
            == {"cpu": "4", "memory": "16Gi", "pods": "110"}
        )
        assert node["spec"]["taints"][0]["key"] == "dedicated"
    assert [i.status.state for i in general.nodes() if i.status] == [InstanceState.Running] * 2
    assert state(api)["groups"]["general"] == {"target": 2, "pending": []}


def test_increase_beyond_max_or_not_positive_fails_and_changes_nothing() -> None:
    api, provider, _ = make()
    general = group(provider, "general")
    with pytest.raises(CloudProviderError, match="desired:4 max:3"):
        general.increase_size(4)
    with pytest.raises(CloudProviderError):
        general.increase_size(0)
    assert general.target_size() == 0 and api.nodes == {}


def test_creations_wait_for_the_provisioning_delay_and_show_as_creating() -> None:
    api, provider, clock = make()
    slow = group(provider, "slow")
    slow.increase_size(2)
    assert api.nodes == {} and slow.target_size() == 2
    assert [i.status.state for i in slow.nodes() if i.status] == [InstanceState.Creating] * 2
    clock.now += 29
    provider.refresh()
    assert api.nodes == {}
    clock.now += 1
    provider.refresh()
    assert len(api.nodes) == 2
    assert {i.id for i in slow.nodes()} == {f"kwok://slow/{n}" for n in api.nodes}
    assert state(api)["groups"]["slow"]["pending"] == []


def test_a_restarted_provider_neither_loses_nor_repeats_a_creation() -> None:
    api, provider, clock = make()
    group(provider, "slow").increase_size(2)
    promised = {i.id for i in group(provider, "slow").nodes()}
    # A new process (or a standby replica taking over) with the same cluster.
    _, successor, _ = make(api, clock, seed=2)
    assert group(successor, "slow").target_size() == 2
    assert {i.id for i in group(successor, "slow").nodes()} == promised
    clock.now += 30
    successor.refresh()
    provider.refresh()  # the old one carries the same creations out: a 409 each, no duplicate
    assert {f"kwok://slow/{n}" for n in api.nodes} == promised
    assert api.creates == 2


def test_a_crash_between_node_creation_and_state_write_does_not_duplicate() -> None:
    api, provider, clock = make()
    group(provider, "slow").increase_size(1)
    clock.now += 30
    api.fail["replace_configmap"] = KubeCallError(500, "etcd down")
    with pytest.raises(CloudProviderError):
        provider.refresh()  # the Node was created, the state still lists it in flight
    del api.fail["replace_configmap"]
    _, successor, _ = make(api, clock)
    assert len(api.nodes) == 1 and api.creates == 1
    assert state(api)["groups"]["slow"]["pending"] == []
    assert group(successor, "slow").target_size() == 1


def test_state_writes_retry_on_conflict() -> None:
    api, provider, _ = make()
    group(provider, "general").increase_size(1)
    api.conflicts = 2
    group(provider, "general").increase_size(1)
    assert state(api)["groups"]["general"]["target"] == 2


def test_delete_nodes_lowers_the_target_and_deletes_the_node() -> None:
    api, provider, _ = make()
    general = group(provider, "general")
    general.increase_size(2)
    victim = sorted(api.nodes)[0]
    general.delete_nodes([view(api, victim)])
    assert victim not in api.nodes and general.target_size() == 1
    assert len(general.nodes()) == 1


def test_delete_nodes_refuses_below_min_and_foreign_nodes() -> None:
    api, provider, clock = make()
    slow = group(provider, "slow")
    slow.increase_size(1)
    clock.now += 30
    provider.refresh()
    name = next(iter(api.nodes))
    with pytest.raises(CloudProviderError, match="min size"):
        slow.delete_nodes([view(api, name)])
    with pytest.raises(CloudProviderError, match="not in group"):
        group(provider, "general").delete_nodes([view(api, name)])
    with pytest.raises(CloudProviderError, match="not in group"):
        slow.delete_nodes([NodeView("kind-worker", provider_id="kind://docker/kind/kind-worker")])
    assert name in api.nodes and slow.target_size() == 1
    slow.force_delete_nodes([view(api, name)])
    assert api.nodes == {} and slow.target_size() == 0


def test_decrease_target_size_drops_only_creations_in_flight() -> None:
    api, provider, clock = make()
    slow = group(provider, "slow")
    slow.increase_size(1)
    clock.now += 30
    provider.refresh()
    slow.increase_size(2)
    with pytest.raises(CloudProviderError, match="attempt to delete existing nodes"):
        slow.decrease_target_size(-3)
    slow.decrease_target_size(-1)
    assert slow.target_size() == 2
    assert [i.status.state for i in slow.nodes() if i.status] == [
        InstanceState.Running,
        InstanceState.Creating,
    ]
    with pytest.raises(CloudProviderError):
        slow.decrease_target_size(1)
    clock.now += 30
    provider.refresh()
    assert len(api.nodes) == 2


def test_a_group_unknown_to_the_state_adopts_its_existing_nodes() -> None:
    api, provider, _ = make()
    group(provider, "general").increase_size(2)
    del api.configmaps[("kube-system", STATE_CONFIGMAP)]
    _, fresh, _ = make(api)
    assert group(fresh, "general").target_size() == 2


def test_lookups_by_provider_id() -> None:
    api, provider, _ = make()
    group(provider, "general").increase_size(1)
    node = view(api, next(iter(api.nodes)))
    found = provider.node_group_for_node(node)
    assert found is not None and found.id() == "general"
    assert provider.node_group_for_node(NodeView("cp", provider_id="")) is None
    assert provider.has_instance(node)
    group(provider, "general").delete_nodes([node])
    assert not provider.has_instance(node)
    with pytest.raises(CloudProviderError):
        provider.has_instance(NodeView("cp"))


def test_template_pricing_and_static_groups() -> None:
    _, provider, _ = make()
    template = group(provider, "general").template_node_info().node
    assert template.ready and template.labels["pool"] == "general"
    assert template.labels["kubetide.io/node-group"] == "general"
    assert template.allocatable["cpu"] == 4000
    assert template.taints[0].key == "dedicated"
    with pytest.raises(NotImplementedByProvider):
        provider.pricing()
    with pytest.raises(NotImplementedByProvider):
        group(provider, "general").create()


def test_api_failures_are_cloud_provider_errors() -> None:
    api, provider, _ = make()
    api.fail["get_configmap"] = KubeCallError(0, "connection refused")
    with pytest.raises(CloudProviderError, match="connection refused"):
        group(provider, "general").increase_size(1)
    with pytest.raises(CloudProviderError):
        provider.refresh()
    del api.fail["get_configmap"]
    api.fail["create_node"] = KubeCallError(403, "forbidden")
    group(provider, "general").increase_size(1)  # accepted: the creation stays in flight
    assert api.nodes == {} and group(provider, "general").target_size() == 1
    (failed,) = group(provider, "general").nodes()
    assert failed.has_creation_error  # CA backs off and deletes it, as for a cloud's failed VM
    assert failed.status is not None and failed.status.error_info is not None
    assert failed.status.error_info.key == "Other.api-403"
    del api.fail["create_node"]
    provider.refresh()
    assert len(api.nodes) == 1
    assert not group(provider, "general").nodes()[0].has_creation_error


def test_deleting_a_failed_creation_drops_it() -> None:
    api, provider, _ = make()
    general = group(provider, "general")
    api.fail["create_node"] = KubeCallError(422, "invalid")
    general.increase_size(1)
    (failed,) = general.nodes()
    general.delete_nodes([NodeView("ghost", provider_id=failed.id)])
    assert general.nodes() == [] and general.target_size() == 0
    del api.fail["create_node"]
    provider.refresh()
    assert api.nodes == {}


def stale_state(api: FakeKwokApi, target: int, pending: list[tuple[str, float]]) -> None:
    """A state ConfigMap left by another run for the group ``general`` (max 3)."""
    data = {"groups": {"general": {"target": target, "pending": [{"name": n, "due": d} for n, d in pending]}}}
    api.configmaps[("kube-system", STATE_CONFIGMAP)] = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": STATE_CONFIGMAP, "namespace": "kube-system", "resourceVersion": "1"},
        "data": {"state": json.dumps(data)},
    }


def test_a_stale_state_never_grows_a_group_past_its_max() -> None:
    """The field report: a state from another run asked for 5 nodes of a group of max 3; all 5 were
    created. Now the creations in flight are cut to the room under the max (the earliest due kept),
    the target is the nodes plus those, and the corrected state is written back."""
    api = FakeKwokApi()
    stale_state(api, 5, [(f"general-old{i}", 1_700_000_000.0 + i) for i in range(5)])
    _, provider, _ = make(api)
    assert sorted(api.nodes) == ["general-old0", "general-old1", "general-old2"]
    general = group(provider, "general")
    assert general.target_size() == 3
    assert state(api)["groups"]["general"] == {"target": 3, "pending": []}
    with pytest.raises(CloudProviderError, match="size increase too large"):
        general.increase_size(1)
    provider.refresh()
    assert len(api.nodes) == 3


def test_the_state_follows_the_nodes_at_each_refresh() -> None:
    """Nodes created or deleted behind the provider's back: the target follows them (no phantom slot
    waited for), and a creation in flight whose Node exists is done."""
    api, provider, _ = make()
    general = group(provider, "general")
    general.increase_size(2)
    gone = sorted(api.nodes)[0]
    del api.nodes[gone]  # kubectl delete node
    provider.refresh()
    assert general.target_size() == 1 and state(api)["groups"]["general"]["target"] == 1
    slow = group(provider, "slow")
    slow.increase_size(1)
    (pending,) = state(api)["groups"]["slow"]["pending"]
    api.nodes[pending["name"]] = dict(api.nodes[sorted(api.nodes)[0]])  # created by another replica
    api.nodes[pending["name"]]["spec"] = {"providerID": f"kwok://slow/{pending['name']}"}
    provider.refresh()
    assert state(api)["groups"]["slow"] == {"target": 1, "pending": []}
    assert api.creates == 2  # not created again


def test_nodes_already_past_the_max_are_kept_and_counted(caplog: pytest.LogCaptureFixture) -> None:
    api, provider, _ = make()
    general = group(provider, "general")
    general.increase_size(3)
    for extra in ("general-xtra1", "general-xtra2"):  # made by hand with the group's label
        api.nodes[extra] = {
            "metadata": {"name": extra, "labels": {"kubetide.io/node-group": "general"}},
            "spec": {"providerID": f"kwok://general/{extra}"},
        }
    logger = "kubetide.live.providers.kwok.provider"
    with caplog.at_level("INFO", logger=logger):
        provider.refresh()
        provider.refresh()
    assert len(api.nodes) == 5 and general.target_size() == 5  # nothing deleted on a guess
    said = [
        (r.levelname, r.getMessage())
        for r in caplog.records
        if r.name == logger and "corrected" in r.getMessage()
    ]
    # Each correction once; the target following nodes is information, the group past its max a warning.
    assert said == [
        (
            "INFO",
            "kwok state corrected from the Node objects: general: target 3 corrected to 5 (5 node(s), "
            "0 creation(s) in flight)",
        ),
        (
            "WARNING",
            "kwok state corrected from the Node objects: general: 5 nodes, above the max size 3; none is "
            "added (and none deleted on a guess)",
        ),
    ]
    with pytest.raises(CloudProviderError, match="size increase too large"):
        general.increase_size(1)


def test_a_dry_run_corrects_its_own_copy_only_and_says_what_it_would_write(
    caplog: pytest.LogCaptureFixture,
) -> None:
    api = FakeKwokApi()
    stale_state(api, 5, [(f"general-old{i}", 1_700_000_000.0 + i) for i in range(5)])
    gate = WriteGate("cluster-autoscaler", lambda: True, dry_run=True)
    provider = KwokCloudProvider(api, parse_cloud_config(CONFIG), clock=Clock(), gate=gate)
    with caplog.at_level(logging.DEBUG, logger="kubetide.dry-run"):
        provider.refresh()
    assert group(provider, "general").target_size() == 3  # three of the five in flight: room for three
    assert api.nodes == {} and state(api)["groups"]["general"]["target"] == 5
    said = [r.getMessage() for r in caplog.records if r.name == "kubetide.dry-run"]
    assert said == [
        "dry run: would write the corrected kwok state to ConfigMap kube-system/kubetide-kwok-state",
        "dry run: would create the kwok nodes due: general-old0, general-old1, general-old2",
    ]


def test_a_replica_that_does_not_lead_writes_nothing_at_refresh() -> None:
    api = FakeKwokApi()
    stale_state(api, 5, [(f"general-old{i}", 1_700_000_000.0 + i) for i in range(5)])
    gate = WriteGate("cluster-autoscaler", lambda: False)
    provider = KwokCloudProvider(api, parse_cloud_config(CONFIG), clock=Clock(), gate=gate)
    with pytest.raises(CloudProviderError, match="not the leader any more: kwok write refused"):
        provider.refresh()
    assert api.nodes == {} and state(api)["groups"]["general"]["target"] == 5
    leading = KwokCloudProvider(
        api, parse_cloud_config(CONFIG), clock=Clock(), gate=WriteGate("cluster-autoscaler", lambda: True)
    )
    leading.refresh()  # the leader corrects the state and creates the three due
    assert len(api.nodes) == 3 and state(api)["groups"]["general"]["target"] == 3


@settings(max_examples=60, deadline=None)
@given(
    target=st.integers(0, 20),
    pending=st.lists(
        st.tuples(st.integers(0, 30), st.floats(1.6e9, 1.9e9)), max_size=10, unique_by=lambda p: p[0]
    ),
    existing=st.integers(0, 3),
    asked=st.integers(1, 4),
)
def test_whatever_the_state_says_a_group_stays_within_its_max(
    target: int, pending: list[tuple[int, float]], existing: int, asked: int
) -> None:
    api = FakeKwokApi()
    for i in range(existing):
        name = f"general-here{i}"
        api.nodes[name] = {
            "metadata": {"name": name, "labels": {"kubetide.io/node-group": "general"}},
            "spec": {"providerID": f"kwok://general/{name}"},
        }
    stale_state(api, target, [(f"general-p{n}", due) for n, due in pending])
    _, provider, clock = make(api)
    general = group(provider, "general")
    for _ in range(3):
        with contextlib.suppress(CloudProviderError):
            general.increase_size(asked)
        clock.now += 60
        provider.refresh()
        assert len(api.nodes) <= 3
        recorded = state(api)["groups"]["general"]
        assert recorded["target"] == len(api.nodes) + len(recorded["pending"]) <= 3
