"""The node agent's rounds against an in-memory API: nodes kept Ready, pods run, finished and deleted."""

from __future__ import annotations

import logging
import re

import pytest

from kubetide.live.agent.agent import NodeAgent
from kubetide.live.agent.api import ApiError
from kubetide.live.agent.timefmt import format_time, parse_time
from kubetide.testing.agent_api import FakeAgentApi

T0 = 1_800_000_000.0


def sync(agent: NodeAgent, api: FakeAgentApi) -> None:
    """What the watches would deliver: the server's current state."""
    agent.nodes.replace(api.list_nodes(agent.options.node_selector)[0])
    agent.pods.replace(api.list_pods()[0])


def run_round(agent: NodeAgent, api: FakeAgentApi, now: float) -> None:
    sync(agent, api)
    agent.round(now)


def make() -> tuple[FakeAgentApi, NodeAgent]:
    api = FakeAgentApi()
    return api, NodeAgent(api)


def condition(obj: dict, kind: str) -> dict:
    return next(c for c in obj["status"]["conditions"] if c["type"] == kind)


class TestNodes:
    def test_a_new_node_gets_a_lease_owned_by_it_and_a_ready_status(self) -> None:
        api, agent = make()
        api.add_node("n1")
        run_round(agent, api, T0)
        lease = api.leases["n1"]
        assert lease["spec"]["holderIdentity"] == "n1"
        assert lease["spec"]["leaseDurationSeconds"] == 40
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z", lease["spec"]["renewTime"])
        assert lease["metadata"]["ownerReferences"][0] == {
            "apiVersion": "v1",
            "kind": "Node",
            "name": "n1",
            "uid": "uid-n1",
        }
        node = api.nodes["n1"]
        ready = condition(node, "Ready")
        assert (ready["status"], ready["reason"], ready["message"]) == (
            "True",
            "KubeletReady",
            "kubelet is posting ready status",
        )
        assert {c["type"]: c["status"] for c in node["status"]["conditions"]} == {
            "Ready": "True",
            "MemoryPressure": "False",
            "DiskPressure": "False",
            "PIDPressure": "False",
        }
        assert node["status"]["nodeInfo"]["kubeletVersion"] == "v1.20.2-kubetide"
        assert node["status"]["addresses"][0]["type"] == "InternalIP"

    def test_the_lease_is_renewed_every_10s_and_the_status_only_when_due(self) -> None:
        api, agent = make()
        api.add_node("n1")
        for second in range(0, 61):
            run_round(agent, api, T0 + second)
        assert api.calls.count(("patch_lease", "n1")) == 6  # at 10, 20, ..., 60
        assert api.calls.count(("create_lease", "n1")) == 1
        # posted at 0, then refreshed once the heartbeat is 60 s old
        assert api.calls.count(("patch_node_status", "n1")) == 2
        assert parse_time(api.leases["n1"]["spec"]["renewTime"]) == T0 + 60

    def test_a_lease_deleted_behind_the_agents_back_is_recreated(self) -> None:
        api, agent = make()
        api.add_node("n1")
        run_round(agent, api, T0)
        del api.leases["n1"]
        run_round(agent, api, T0 + 10)
        assert "n1" in api.leases

    def test_nodes_outside_the_selector_are_never_touched(self) -> None:
        api, agent = make()
        api.add_node("theirs", labels={"pool": "x"})
        api.add_pod("p", "theirs")
        run_round(agent, api, T0)
        assert api.calls == []
        assert api.pods[("default", "p")]["status"]["phase"] == "Pending"

    def test_the_internal_ip_is_kept_once_assigned(self) -> None:
        api, agent = make()
        api.add_node("n1")
        run_round(agent, api, T0)
        first = api.nodes["n1"]["status"]["addresses"][0]["address"]
        run_round(agent, api, T0 + 60)
        assert api.nodes["n1"]["status"]["addresses"][0]["address"] == first

    def test_a_failed_write_is_retried_next_round_and_does_not_stop_others(self) -> None:
        api, agent = make()
        api.add_node("n1")
        api.add_node("n2")
        api.fail[("patch_node_status", "n1")] = ApiError(500, "boom")
        run_round(agent, api, T0)
        assert condition(api.nodes["n2"], "Ready")["status"] == "True"
        del api.fail[("patch_node_status", "n1")]
        run_round(agent, api, T0 + 1)
        assert condition(api.nodes["n1"], "Ready")["status"] == "True"


class TestPods:
    def test_a_bound_pod_runs_ready_with_unique_ips(self) -> None:
        api, agent = make()
        api.add_node("n1")
        api.add_pod("a", "n1")
        api.add_pod("b", "n1")
        api.add_pod("pending", None)
        run_round(agent, api, T0)
        a, b = api.pods[("default", "a")], api.pods[("default", "b")]
        for pod in (a, b):
            status = pod["status"]
            assert status["phase"] == "Running"
            assert status["startTime"] == format_time(T0)
            assert status["hostIP"] == api.nodes["n1"]["status"]["addresses"][0]["address"]
            assert {c["type"]: c["status"] for c in status["conditions"]} == {
                "Initialized": "True",
                "Ready": "True",
                "ContainersReady": "True",
                "PodScheduled": "True",
            }
            container = status["containerStatuses"][0]
            assert container["ready"] and container["state"]["running"]["startedAt"] == format_time(T0)
        assert a["status"]["podIP"] != b["status"]["podIP"]
        assert api.pods[("default", "pending")]["status"] == {"phase": "Pending"}

    def test_a_pod_is_not_patched_again_when_the_watch_lags(self) -> None:
        api, agent = make()
        api.add_node("n1")
        api.add_pod("a", "n1")
        run_round(agent, api, T0)
        agent.round(T0 + 1)  # no sync: the store holds what the patch returned
        assert api.calls.count(("patch_pod_status", "a")) == 1

    def test_startup_delay_runs_at_once_but_ready_after_the_delay(self) -> None:
        api, agent = make()
        api.add_node("n1")
        api.add_pod("slow", "n1", annotations={"kubetide.io/startup-delay": "20s"})
        run_round(agent, api, T0)
        pod = api.pods[("default", "slow")]
        assert pod["status"]["phase"] == "Running"
        assert condition(pod, "Ready")["status"] == "False"
        ip = pod["status"]["podIP"]
        run_round(agent, api, T0 + 19)
        assert condition(api.pods[("default", "slow")], "Ready")["status"] == "False"
        run_round(agent, api, T0 + 20)
        pod = api.pods[("default", "slow")]
        assert condition(pod, "Ready")["status"] == "True"
        assert pod["status"]["podIP"] == ip
        assert pod["status"]["startTime"] == format_time(T0)

    def test_a_job_pod_succeeds_after_its_duration(self) -> None:
        api, agent = make()
        api.add_node("n1")
        owner = {"apiVersion": "batch/v1", "kind": "Job", "name": "j", "uid": "u", "controller": True}
        api.add_pod("job-x", "n1", annotations={"kubetide.io/duration": "30s"}, ownerReferences=[owner])
        run_round(agent, api, T0)
        run_round(agent, api, T0 + 29)
        assert api.pods[("default", "job-x")]["status"]["phase"] == "Running"
        run_round(agent, api, T0 + 30)
        status = api.pods[("default", "job-x")]["status"]
        assert status["phase"] == "Succeeded"
        terminated = status["containerStatuses"][0]["state"]["terminated"]
        assert (terminated["exitCode"], terminated["reason"]) == (0, "Completed")

    def test_a_duration_on_a_pod_without_a_job_is_ignored(self) -> None:
        api, agent = make()
        api.add_node("n1")
        api.add_pod("p", "n1", annotations={"kubetide.io/duration": "1s"})
        run_round(agent, api, T0)
        run_round(agent, api, T0 + 5)
        assert api.pods[("default", "p")]["status"]["phase"] == "Running"

    def test_a_deleted_pod_is_confirmed_after_its_grace_period(self) -> None:
        api, agent = make()
        api.add_node("n1")
        api.add_pod("p", "n1")
        run_round(agent, api, T0)
        pod = api.pods[("default", "p")]
        pod["metadata"]["deletionTimestamp"] = format_time(T0 + 30)  # deleted at T0 with grace 30
        pod["metadata"]["deletionGracePeriodSeconds"] = 30
        run_round(agent, api, T0 + 29)
        assert ("default", "p") in api.pods
        run_round(agent, api, T0 + 30)
        assert ("default", "p") not in api.pods

    @pytest.mark.parametrize(
        ("delay", "gone_at"),
        [("10s", 10), ("45s", 30), ("0s", 0), ("soon", 30)],  # never past its grace; bad value: absent
    )
    def test_a_termination_delay_stops_a_deleted_pod_that_long_after_the_request(
        self, delay: str, gone_at: float
    ) -> None:
        """``kubetide.io/termination-delay``: a process that shuts down that long after SIGTERM; the
        request time is deletionTimestamp - deletionGracePeriodSeconds, as the API server set them."""
        api, agent = make()
        api.add_node("n1")
        api.add_pod("p", "n1")
        run_round(agent, api, T0)
        pod = api.pods[("default", "p")]
        pod["metadata"]["annotations"] = {"kubetide.io/termination-delay": delay}
        pod["metadata"]["deletionTimestamp"] = format_time(T0 + 100 + 30)  # deleted at T0+100, grace 30
        pod["metadata"]["deletionGracePeriodSeconds"] = 30
        if gone_at > 0:
            run_round(agent, api, T0 + 100 + gone_at - 1)
            assert ("default", "p") in api.pods
        run_round(agent, api, T0 + 100 + gone_at)
        assert ("default", "p") not in api.pods

    def test_a_finished_pod_being_deleted_goes_at_once(self) -> None:
        api, agent = make()
        api.add_node("n1")
        pod = api.add_pod("done", "n1")
        pod["status"]["phase"] = "Succeeded"
        pod["metadata"]["deletionTimestamp"] = format_time(T0 + 30)
        run_round(agent, api, T0)
        assert ("default", "done") not in api.pods

    def test_pods_on_other_nodes_are_left_alone(self) -> None:
        api, agent = make()
        api.add_node("n1")
        api.add_pod("elsewhere", "kind-worker")
        run_round(agent, api, T0)
        assert api.pods[("default", "elsewhere")]["status"] == {"phase": "Pending"}
        assert all(name != "elsewhere" for _, name in api.calls)

    def test_one_failing_pod_does_not_stop_the_others(self) -> None:
        api, agent = make()
        api.add_node("n1")
        api.add_pod("a", "n1")
        api.add_pod("b", "n1")
        api.fail[("patch_pod_status", "a")] = ApiError(500, "boom")
        run_round(agent, api, T0)
        assert api.pods[("default", "b")]["status"]["phase"] == "Running"
        del api.fail[("patch_pod_status", "a")]
        run_round(agent, api, T0 + 1)
        assert api.pods[("default", "a")]["status"]["phase"] == "Running"


def test_a_pod_held_by_a_finalizer_is_not_deleted_again_every_round() -> None:
    api, agent = make()
    api.add_node("n1")
    api.add_pod("held", "n1", deletionTimestamp=format_time(T0), finalizers=["example.com/hold"])

    def keep(namespace: str, name: str) -> None:  # the finalizer keeps the object
        api.calls.append(("delete_pod_now", name))

    api.delete_pod_now = keep  # type: ignore[method-assign]
    for second in range(0, 12):
        run_round(agent, api, T0 + second)
    assert api.calls.count(("delete_pod_now", "held")) == 2  # at 0 and 10


def test_a_failure_that_repeats_every_round_is_logged_every_30s(caplog: pytest.LogCaptureFixture) -> None:
    api, agent = make()
    api.add_node("n1")
    run_round(agent, api, T0)
    api.fail[("patch_lease", "n1")] = ApiError(0, "connection refused")
    with caplog.at_level(logging.WARNING, logger="kubetide.node_agent"):
        for second in range(10, 70):
            run_round(agent, api, T0 + second)
    assert api.calls.count(("patch_lease", "n1")) == 60  # retried every round
    assert sum("lease renewal failed" in r.message for r in caplog.records) == 2  # at 10 and 40
