"""``kubetide record``'s recorder on in-memory caches: what a day's changes become in the files, that
the files always load, and that a recording resumes where a crash left it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from kubetide.live.record.files import Layout
from kubetide.live.record.objects import ENV_NOTE
from kubetide.live.record.settings import RecordState
from kubetide.sim.scenario import load_scenario
from kubetide.sim.simulation import Simulation

from .harness import START, Clock, Cluster, deployment, hpa, iso, node, pod, recorder, settings


def _lines(directory: Path, name: str) -> list[Any]:
    return [json.loads(line) for line in (directory / name).read_text().splitlines() if line.strip()]


def _start(tmp_path: Path, **changes: Any) -> tuple[Cluster, Clock, Any]:
    cluster, clock = Cluster(), Clock()
    made = recorder(tmp_path, cluster, clock, record_settings=settings(**changes))
    made._start_caches()  # the caches exist; the test fills them before the recording begins
    return cluster, clock, made


def _begin(made: Any) -> None:
    """What ``open`` does once the caches are synced (they are filled by the test already)."""
    informers = made.informers
    made._start_caches = lambda: None
    made.informers = informers
    made.open()


def test_the_objects_at_the_start_and_each_change_are_recorded(tmp_path: Path) -> None:
    cluster, clock, made = _start(tmp_path)
    cluster["deployments"].put(deployment("web", 2))
    cluster["deployments"].put(deployment("batch", 1))
    cluster["kubetide_hpas"].put(
        {**hpa("web"), "apiVersion": "autoscaling.kubetide.io/v1", "kind": "HorizontalPodAutoscaler"}
    )
    _begin(made)
    made.step()
    # The HPA scales web: its replicas are the replay's HPA's to decide, not an action.
    clock.t = 20.0
    cluster["deployments"].put(deployment("web", 4))
    # batch is scaled by hand: an action.
    cluster["deployments"].put(deployment("batch", 3))
    made.step()
    # web's template changes: applied without replicas, so the replay's HPA keeps its count.
    clock.t = 40.0
    cluster["deployments"].put(deployment("web", 4, annotations={"changed": "yes"}))
    cluster["deployments"].remove("default/batch")
    made.step()
    clock.t = 600.0
    assert made.step()
    actions = _lines(tmp_path, Layout.ACTIONS)
    assert [list(a)[1] for a in actions] == ["scale", "apply", "delete"]
    assert actions[0] == {"at": 20.0, "scale": {"target": "Deployment/default/batch", "replicas": 3}}
    assert actions[1]["at"] == 40.0 and "replicas" not in actions[1]["apply"]["spec"]
    assert actions[1]["apply"]["spec"]["template"]["metadata"]["annotations"] == {"changed": "yes"}
    assert actions[2] == {"at": 40.0, "delete": "Deployment/default/batch"}
    objects = (tmp_path / Layout.OBJECTS).read_text()
    assert "name: web" in objects and "name: batch" in objects and "uid" not in objects
    samples = _lines(tmp_path, Layout.SAMPLES)
    # Every 15 s, at the step when polled within a second of it; else when polled (the test polls late).
    assert [s["t"] for s in samples] == [0.0, 20.0, 40.0, 600.0]
    assert samples[1]["replicas"] == {"Deployment/default/web": 4}
    scenario = load_scenario(tmp_path / Layout.SCENARIO)
    assert scenario.spec.duration == 600 and len(scenario.spec.actions) == 3
    assert scenario.spec.objects[-1]["apiVersion"] == "autoscaling/v2"  # kubetide's HPA, as v2
    result = Simulation(scenario).run()  # the recorded day replays
    assert result.summary.simulated_seconds == 600.0


def test_secrets_never_reach_the_files(tmp_path: Path) -> None:
    cluster, clock, made = _start(tmp_path)
    secret_env = [
        {"name": "TOKEN", "value": "s3cr3t-value"},
        {"name": "PASSWORD", "valueFrom": {"secretKeyRef": {"name": "db", "key": "password"}}},
    ]
    cluster["deployments"].put(deployment("web", 1, env=secret_env, envFrom=[{"secretRef": {"name": "all"}}]))
    _begin(made)
    made.step()
    clock.t = 30.0
    cluster["deployments"].put(deployment("api", 1, env=[{"name": "KEY", "value": "another-s3cr3t"}]))
    made.step()
    clock.t = 600.0
    made.step()
    everything = "".join(p.read_text() for p in tmp_path.rglob("*") if p.is_file())
    assert ENV_NOTE in (tmp_path / Layout.NOTES).read_text()
    for word in ("s3cr3t", "secretKeyRef", "secretRef", "PASSWORD", "envFrom"):
        assert word not in everything.replace(ENV_NOTE, "")


def test_nodes_of_a_group_no_replayed_autoscaler_manages_are_resized_as_they_came(tmp_path: Path) -> None:
    cluster, clock, made = _start(tmp_path)
    cluster["nodes"].put(node("fixed-1", "fixed"))
    _begin(made)
    made.step()
    clock.t = 100.0
    cluster["nodes"].put(node("fixed-2", "fixed", created=iso(99.0)))
    made.step()
    clock.t = 200.0
    cluster["nodes"].remove("fixed-1")
    made.step()
    clock.t = 600.0
    made.step()
    actions = _lines(tmp_path, Layout.ACTIONS)
    # The group's provisioning is the simulator's default (60 s + 15 s): the resize is that much
    # earlier, so the replay's node registers when the real one did; a removal 30 s earlier.
    assert actions == [
        {"at": 25.0, "resizeGroup": {"group": "fixed", "size": 2}},
        {"at": 170.0, "resizeGroup": {"group": "fixed", "size": 1}},
    ]
    scenario = load_scenario(tmp_path / Layout.SCENARIO)
    group = scenario.node_group("fixed")
    assert (group.minSize, group.maxSize, group.initial_size) == (0, 10, 1)
    timeline = Simulation(scenario).run().timeline
    nodes = dict(zip(timeline.t.tolist(), timeline.column("nodes:fixed").tolist(), strict=True))
    assert (nodes[90.0], nodes[105.0], nodes[195.0], nodes[210.0]) == (1, 2, 2, 1)


def test_pending_pod_seconds_count_from_creation_to_binding(tmp_path: Path) -> None:
    cluster, clock, made = _start(tmp_path)
    cluster["pods"].put(pod("a", created=iso(-50.0)))  # pending before the start: counted from it
    _begin(made)
    made.step()
    clock.t = 10.0
    bound = pod("a", created=iso(-50.0), node_name="n1")
    bound["status"]["conditions"] = [
        {"type": "PodScheduled", "status": "True", "lastTransitionTime": iso(8.0)}
    ]
    cluster["pods"].put(bound)
    cluster["pods"].put(pod("b", created=iso(9.0)))
    made.step()
    clock.t = 30.0
    cluster["pods"].remove("default/b")  # deleted while pending: 21 s
    made.step()
    clock.t = 45.0
    made.step()
    samples = _lines(tmp_path, Layout.SAMPLES)
    assert [(s["t"], s["pending_pods"], s["pending_pod_seconds"]) for s in samples] == [
        (0.0, 1, 0.0),
        (30.0, 0, 29.0),
        (45.0, 0, 29.0),
    ]


def test_a_crash_keeps_what_was_flushed_and_the_recording_resumes_on_the_same_clock(tmp_path: Path) -> None:
    cluster, clock, made = _start(tmp_path)
    cluster["deployments"].put(deployment("web", 1))
    cluster["deployments"].put(deployment("gone", 1))
    _begin(made)
    made.step()
    clock.t = 20.0
    cluster["deployments"].put(deployment("web", 2))
    made.step()  # flushed: the scale at 20 s is on disk
    # The process dies in the middle of a write: half a line at the end of the actions.
    with (tmp_path / Layout.ACTIONS).open("a") as f:
        f.write('{"at": 25.0, "scale": {"tar')
    scenario_text = (tmp_path / Layout.SCENARIO).read_text()
    assert "duration: 20" in scenario_text  # what is on disk loads as it is, the torn line aside
    # While nobody records: web scaled, gone deleted, a new Deployment.
    cluster["deployments"].put(deployment("web", 5))
    cluster["deployments"].remove("default/gone")
    cluster["deployments"].put(deployment("new", 1))
    clock.t = 300.0
    state = RecordState.read(tmp_path / Layout.STATE)
    resumed = recorder(tmp_path, cluster, clock, record_settings=state.settings, resume=state)
    resumed.make_informer = lambda rest, kind, convert, **options: _same(cluster, kind, options)
    resumed.open()
    resumed.step()
    clock.t = 600.0
    assert resumed.step()
    actions = _lines(tmp_path, Layout.ACTIONS)
    assert [a["at"] for a in actions] == [20.0, 300.0, 300.0, 300.0]
    kinds = sorted(list(a)[1] for a in actions[1:])
    assert kinds == ["apply", "delete", "scale"]
    assert {"at": 300.0, "delete": "Deployment/default/gone"} in actions
    samples = _lines(tmp_path, Layout.SAMPLES)
    assert [s["t"] for s in samples] == [0.0, 20.0, 300.0, 600.0]  # the gap stays a gap
    notes = (tmp_path / Layout.NOTES).read_text()
    assert "actions.jsonl: a line cut short by the last run's end removed" in notes
    scenario = load_scenario(tmp_path / Layout.SCENARIO)
    assert scenario.spec.duration == 600


def _same(cluster: Cluster, kind: Any, options: dict[str, Any]) -> Any:
    """The resumed recorder's caches: the very ones the test filled (a new process lists the same)."""
    for cache in cluster.caches.values():
        if cache.kind == kind and cache.options == options:
            return cache
    raise AssertionError(f"no cache for {kind} {options} ({list(cluster.caches)})")


def test_the_recording_starts_on_a_whole_second_as_the_api_servers_timestamps_are(tmp_path: Path) -> None:
    """So a time the cluster kept to the second (a pod's creationTimestamp) is a whole number of seconds
    from the start, and the replay's "to the second" falls where the cluster's did."""
    _, clock, made = _start(tmp_path)
    clock.t = 0.834
    _begin(made)
    clock.t = 0.9
    made.step()
    clock.t = 600.0
    made.step()
    assert RecordState.read(tmp_path / Layout.STATE).start == START
    assert _lines(tmp_path, Layout.SAMPLES)[0]["t"] == 0.0


def test_only_the_events_of_what_is_recorded_are_kept(tmp_path: Path) -> None:
    """Another namespace's pods, and another cluster autoscaler's status ConfigMap, are not the day
    recorded (a second CA on another group, or tests beside each other on one cluster)."""
    flags = {"status-config-map-name": "ca-status-shop", "scan-interval": "10s"}
    cluster, clock, made = _start(
        tmp_path,
        namespaces=("shop",),
        autoscalers={"clusterAutoscaler": {"enabled": True, "flags": flags}},
    )
    _begin(made)
    made.step()

    def event(uid: str, kind: str, namespace: str | None, name: str) -> dict[str, Any]:
        return {
            "metadata": {"name": uid, "namespace": namespace or "default", "uid": uid},
            "involvedObject": {"kind": kind, "namespace": namespace, "name": name},
            "reason": "ScaledUpGroup" if kind == "ConfigMap" else "TriggeredScaleUp",
            "message": "Scale-up: setting group general size to 2 instead of 1 (max: 5)",
            "count": 1,
            "lastTimestamp": iso(5.0),
            "source": {"component": "cluster-autoscaler"},
        }

    for made_event in (
        event("ours", "ConfigMap", "kube-system", "ca-status-shop"),
        event("theirs", "ConfigMap", "kube-system", "cluster-autoscaler-status"),
        event("pod-ours", "Pod", "shop", "web-1"),
        event("pod-theirs", "Pod", "other", "web-1"),
        event("node", "Node", None, "n1"),
    ):
        cluster["events:cluster-autoscaler"].put(made_event)
    clock.t = 10.0
    made.step()
    clock.t = 600.0
    made.step()
    objects = [e["object"] for e in _lines(tmp_path, Layout.EVENTS)]
    assert sorted(objects) == ["ConfigMap/kube-system/ca-status-shop", "Node/n1", "Pod/shop/web-1"]
