"""``kubetide record``'s loop: watch caches in, a scenario and its data files out, as it goes.

Every ``poll`` seconds the recorder reads its watch caches (the informers of :mod:`kubetide.kube.cache`:
each keeps its resource current with list and watch, relisting after a broken watch) and turns what
changed into actions (:mod:`.objects`, :mod:`.nodes`), pending pod-seconds (:mod:`.pods`) and recorded
events (:mod:`.events`); every ``interval`` it samples the metrics the HPAs read (:mod:`.metrics`) and
the figures the replay is compared with; every ``flush_every`` it writes: first ``scenario.yaml`` and
``recording.json`` whole (the scenario's duration already reaching the end of the batch), then the
batch appended to the data files. So at any moment, a crash included, the directory is a scenario that
loads: every appended line lies within the duration, and a line cut short by the crash is repaired
when the recording resumes.

A recording resumes (``kubetide record`` on a directory that holds one) on the same clock: times are
seconds from the first start, so the stretch while nobody recorded stays in the timeline as time in
which nothing was recorded (the metrics interpolate across it; the replay's autoscalers run through
it). What changed meanwhile is found by comparing the cluster with the state the files describe, and
applied at the moment recording resumed.

Memory is bounded by the cluster, not by time: the caches (trimmed objects), a digest per object, the
pods pending now, the node names seen; everything measured goes to the files at each flush.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

from kubetide.cloud.instance import CloudProviderError
from kubetide.cloud.provider import CloudProvider
from kubetide.hpa.ports import MetricsSource
from kubetide.kube.cache import Informer
from kubetide.kube.discovery import ResourceKind, ServedVersions, discover, resource_kinds
from kubetide.kube.rest import KubeStatusError, Rest
from kubetide.live.export.fit import Checker
from kubetide.live.export.nodegroups import GroupBounds, export_node_groups
from kubetide.live.export.objects import PRIORITY_EXPANDER_CONFIGMAP, SYSTEM_NAMESPACES
from kubetide.live.export.provider import provider_groups
from kubetide.live.record.document import scenario_document, traffic_entries
from kubetide.live.record.events import COMPONENTS, EventTracker
from kubetide.live.record.files import AppendLog, Layout, repair, replace_text
from kubetide.live.record.metrics import Measured, MetricSampler
from kubetide.live.record.nodes import NodeTracker
from kubetide.live.record.objects import RESOURCES, ObjectTracker
from kubetide.live.record.phases import PhaseEstimate, parse_last_updated
from kubetide.live.record.pods import PendingTracker
from kubetide.live.record.settings import RecordSettings, RecordState
from kubetide.model import yamldoc
from kubetide.model.durations import DurationError, parse_duration
from kubetide.model.fields import parse_time
from kubetide.model.node import NodeView

__all__ = ["RecordError", "Recorder", "RecordingSources", "Totals"]

log = logging.getLogger(__name__)
Json = dict[str, Any]
LAST_UPDATED = "cluster-autoscaler.kubernetes.io/last-updated"
KUBETIDE_HPAS = ResourceKind(
    "autoscaling.kubetide.io", "v1", "HorizontalPodAutoscaler", "horizontalpodautoscalers"
)
SYNC_TIMEOUT_S = 120.0
_PLURALS = {
    "deployments": "deployments",
    "statefulsets": "statefulsets",
    "daemonsets": "daemonsets",
    "jobs": "jobs",
    "pods": "pods",
    "hpas": "horizontalpodautoscalers",
    "pdbs": "poddisruptionbudgets",
    "configmaps": "configmaps",
}
_RESOURCE_OF_KIND = {kind: resource for resource, kind in RESOURCES.items() if resource != "kubetide_hpas"}
_SCALABLE = {"Deployment": "deployments", "StatefulSet": "statefulsets"}


class RecordError(Exception):
    """The recording cannot start or go on (the caches never synced, the directory cannot be written)."""


@dataclass
class RecordingSources:
    """What the command wires in: the API, the loader as a checker, the cloud, the metrics."""

    rest: Rest
    check: Checker
    provider: CloudProvider | None = None
    metrics: MetricsSource | None = None
    catalog: Collection[str] = ()
    bounds: Mapping[str, GroupBounds] = field(default_factory=dict)  # --nodes without a provider


@dataclass
class Totals:
    """What the recording holds so far (the progress line, the summary at the end)."""

    seconds: float = 0.0
    actions: int = 0
    samples: int = 0
    events: int = 0
    notes: int = 0
    metric_rows: int = 0


def _rfc3339(unix: float) -> str:
    return datetime.fromtimestamp(unix, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class _Notes:
    """Notes appended to ``notes.txt``, each text once."""

    def __init__(self, log_file: AppendLog) -> None:
        self.file = log_file
        self.seen: set[str] = set()
        self.pending: list[str] = []

    def __call__(self, text: str) -> None:
        if text not in self.seen:
            self.seen.add(text)
            self.pending.append(text)

    def flush(self) -> list[str]:
        written, self.pending = self.pending, []
        self.file.append(written)
        return written


class Recorder:
    def __init__(
        self,
        layout: Layout,
        settings: RecordSettings,
        sources: RecordingSources,
        *,
        resume: RecordState | None = None,
        clock: Callable[[], float] = time.time,
        poll: float = 1.0,
        stop: threading.Event | None = None,
        progress: Callable[[Totals], None] | None = None,
        on_note: Callable[[str], None] | None = None,
        metrics_factory: Callable[[Callable[[], list[Json]]], MetricsSource] | None = None,
        make_informer: Callable[..., Informer[Json]] = Informer,
    ) -> None:
        self.layout, self.settings, self.sources = layout, settings, sources
        self.resume, self.clock, self.poll = resume, clock, poll
        self.stop = stop or threading.Event()
        self.progress = progress
        self.on_note = on_note
        self.totals = Totals()
        self.notes = _Notes(AppendLog(layout.path(Layout.NOTES)))
        self.informers: dict[str, Informer[Json]] = {}
        self.actions = AppendLog(layout.path(Layout.ACTIONS))
        self.samples = AppendLog(layout.path(Layout.SAMPLES))
        self.events_log = AppendLog(layout.path(Layout.EVENTS))
        self.metric_logs: dict[tuple[str, str], AppendLog] = {}
        self.with_rows: dict[str, dict[str, str]] = {}  # workload -> series -> file, holding rows
        self.objects = ObjectTracker(settings.namespaces, sources.check, self.notes)
        self.sampler: MetricSampler | None = None
        self.metrics_factory = metrics_factory
        self.make_informer = make_informer  # the watch caches (tests pass in-memory ones)
        self._pending_actions: list[Json] = []
        self._pending_samples: list[Json] = []
        self._pending_events: list[Json] = []
        self._pending_rows: list[tuple[float, Measured]] = []
        self.start = 0.0
        self.nodes: NodeTracker | None = None
        self.pending: PendingTracker | None = None
        self.events: EventTracker | None = None
        self._has_objects = False
        self._versions: dict[str, int] = {}
        self._resumed_sizes: dict[str, int] = {}
        self.state: RecordState | None = None
        self._next_sample = 0.0
        self._next_flush = 0.0
        self.ca_loops = self._estimate("clusterAutoscaler", "scan-interval", 10.0)
        self.hpa_syncs = self._estimate("hpa", "horizontal-pod-autoscaler-sync-period", 15.0)

    def _estimate(self, section: str, flag: str, default: float) -> PhaseEstimate | None:
        """The phase estimate of a replayed autoscaler's loop (None: it is not replayed)."""
        settings = self.settings.autoscalers.get(section)
        if not isinstance(settings, dict):
            return None
        value = (settings.get("flags") or {}).get(flag)
        try:
            period = parse_duration(value) if value is not None else default
        except DurationError:
            period = default
        return PhaseEstimate(period) if period > 0 else None

    def _ca_flag(self, name: str, default: str) -> str:
        flags = (self.settings.autoscalers.get("clusterAutoscaler") or {}).get("flags") or {}
        return str(flags.get(name) or default)

    # --- caches

    def _start_caches(self) -> None:
        rest = self.sources.rest
        try:
            versions: ServedVersions = discover(rest)
        except KubeStatusError as exc:
            raise RecordError(f"cannot read the API server's versions: {exc}") from None
        kinds = resource_kinds(versions)
        identity: Callable[[Json], Json] = lambda obj: obj  # noqa: E731 - the raw objects are read
        for resource, plural in _PLURALS.items():
            selector = f"metadata.name={PRIORITY_EXPANDER_CONFIGMAP}" if resource == "configmaps" else None
            self.informers[resource] = self.make_informer(
                rest, kinds[plural], identity, field_selector=selector
            )
        try:
            rest.request("GET", "/apis/autoscaling.kubetide.io/v1")
            self.informers["kubetide_hpas"] = self.make_informer(rest, KUBETIDE_HPAS, identity)
        except KubeStatusError as exc:
            if exc.status != 404:
                raise RecordError(f"cannot read kubetide's HPA resource: {exc}") from None
        self.informers["nodes"] = self.make_informer(rest, kinds["nodes"], identity)
        if self.ca_loops is not None:  # its status ConfigMap says when its loops ran
            name = self._ca_flag("status-config-map-name", "cluster-autoscaler-status")
            self.informers["ca-status"] = self.make_informer(
                rest,
                kinds["configmaps"],
                identity,
                namespace=self._ca_flag("namespace", "kube-system"),
                field_selector=f"metadata.name={name}",
            )
        for component in COMPONENTS:
            self.informers[f"events:{component}"] = self.make_informer(
                rest, kinds["events"], identity, field_selector=f"source={component}"
            )
        for resource, informer in self.informers.items():
            self.objects.api_versions[resource] = informer.kind.api_version
            informer.start()
        deadline = time.monotonic() + SYNC_TIMEOUT_S
        for name, informer in self.informers.items():
            if not informer.wait_synced(max(deadline - time.monotonic(), 0.0)):
                raise RecordError(f"the {name} cache did not sync within {SYNC_TIMEOUT_S:.0f}s")

    def _stop_caches(self) -> None:
        for informer in self.informers.values():
            informer.stop()

    def _objects(self, name: str) -> list[Json]:
        informer = self.informers.get(name)
        return informer.objects() if informer is not None else []

    def _changed(self, name: str) -> bool:
        informer = self.informers.get(name)
        if informer is None:
            return False
        version = informer.version
        if self._versions.get(name) == version:
            return False
        self._versions[name] = version
        return True

    # --- start

    def _group_for(self) -> Callable[[Mapping[str, Any]], str | None]:
        provider = self.sources.provider
        if provider is None:
            return lambda node: None

        def group_for(node: Mapping[str, Any]) -> str | None:
            try:
                group = provider.node_group_for_node(NodeView.from_manifest(dict(node)))
            except (CloudProviderError, ValueError):
                return None
            return group.id() if group is not None else None

        return group_for

    def _begin_fresh(self) -> list[Json]:
        # A whole second, as the API server's timestamps are: the replay's "to the second" (a pod's
        # creationTimestamp, which CA's age checks read) then falls where the cluster's did.
        self.start = float(math.floor(self.clock()))
        nodes = self._objects("nodes")
        provider = self.sources.provider
        try:
            groups_of_provider = provider_groups(provider, nodes) if provider is not None else None
        except CloudProviderError as exc:
            raise RecordError(f"cannot read the cloud provider's node groups: {exc}") from None
        exported = export_node_groups(nodes, self.sources.catalog, self.sources.bounds, groups_of_provider)
        for text in exported.notes:
            self.notes(text)
        for group in exported.groups:
            provisioning = self.settings.provisioning.get(group["name"])
            if provisioning:
                group["provisioning"] = dict(provisioning)
        initial: list[Json] = []
        for resource in (
            "deployments",
            "statefulsets",
            "daemonsets",
            "jobs",
            "pods",
            "hpas",
            "kubetide_hpas",
            "pdbs",
            "configmaps",
        ):
            initial += self.objects.initial(resource, self._objects(resource))
        self._has_objects = bool(initial)
        text = yaml.safe_dump_all(initial, sort_keys=False, allow_unicode=True, width=110)
        replace_text(self.layout.path(Layout.OBJECTS), text)
        for name in (Layout.ACTIONS, Layout.SAMPLES, Layout.EVENTS):
            self.layout.path(name).parent.mkdir(parents=True, exist_ok=True)
            self.layout.path(name).touch()
        self._make_trackers(exported.groups)
        assert self.nodes is not None and self.events is not None
        self.nodes.begin(nodes)
        for name in COMPONENTS:
            self.events.begin(name, self._objects(f"events:{name}"))
        return exported.groups

    def _make_trackers(self, groups: list[Json]) -> None:
        self.nodes = NodeTracker(
            groups,
            set(self.settings.managed),
            self._group_for(),
            self.start,
            self.sources.catalog,
            self.notes,
        )
        self.pending = PendingTracker(self.start, self.settings.namespaces)
        self.events = EventTracker(
            self.start, lambda node: self.nodes.ever.get(node) if self.nodes else None, self._recorded_event
        )

    def _pod_started(self, key: str) -> float | None:
        """A pod's ``status.startTime`` in recording seconds; None before the recording or unknown."""
        informer = self.informers.get("pods")
        pod = informer.get(key) if informer is not None else None
        text = ((pod or {}).get("status") or {}).get("startTime")
        try:
            started = parse_time(str(text)) - self.start if text else None
        except ValueError:
            return None
        return started if started is not None and started >= 0 else None

    def _recorded_event(self, event: Mapping[str, Any]) -> bool:
        """An Event of what the recording records: an object of a recorded namespace, a Node, or the
        replayed cluster autoscaler's status ConfigMap (where CA records its scale-ups)."""
        involved = event.get("involvedObject") or {}
        namespace = involved.get("namespace")
        if not namespace:
            return True  # cluster-scoped: a Node
        if involved.get("kind") == "ConfigMap" and self.ca_loops is not None:
            status = (
                self._ca_flag("namespace", "kube-system"),
                self._ca_flag("status-config-map-name", "cluster-autoscaler-status"),
            )
            if (namespace, involved.get("name")) == status:
                return True
        if self.settings.namespaces:
            return namespace in self.settings.namespaces
        return namespace not in SYSTEM_NAMESPACES

    def _begin_resumed(self, state: RecordState) -> None:
        self.start = state.start
        for name in (Layout.ACTIONS, Layout.SAMPLES, Layout.EVENTS):
            cut = repair(self.layout.path(name))
            if cut:
                self.notes(f"{name}: a line cut short by the last run's end removed ({cut} bytes)")
        metrics_dir = self.layout.path(Layout.METRICS)
        for csv_path in sorted(metrics_dir.glob("*.csv")) if metrics_dir.is_dir() else []:
            repair(csv_path)
        self._has_objects = self._replay_files()
        self._make_trackers(state.node_groups)
        assert self.nodes is not None and self.pending is not None and self.events is not None
        self.nodes.begin([])  # every difference with the cluster now is a resize at the resume
        self.pending.resume_at(state.recorded_until, state.pending_pod_seconds)
        for name in COMPONENTS:
            events = self._objects(f"events:{name}")
            self._pending_events += self.events.begin(name, events, since=state.recorded_until)
        self._find_metric_files()

    def _replay_files(self) -> bool:
        """The objects' state the files describe: the start, then every recorded action."""
        objects_path = self.layout.path(Layout.OBJECTS)
        try:
            initial = yamldoc.load_documents(
                objects_path.read_text(encoding="utf-8"), Layout.OBJECTS, multi=True
            )
        except (OSError, yamldoc.YamlDocumentError) as exc:
            raise RecordError(f"cannot resume: {objects_path}: {exc}") from None
        for manifest in initial:
            self.objects.remember(self._resource_of(manifest), manifest)
        sizes: dict[str, int] = {}
        for line_number, line in enumerate(
            self.layout.path(Layout.ACTIONS).read_text(encoding="utf-8").splitlines(), 1
        ):
            if not line.strip():
                continue
            try:
                action = yaml.safe_load(line)
            except yaml.YAMLError:
                raise RecordError(f"cannot resume: {Layout.ACTIONS} line {line_number} is not JSON") from None
            if "apply" in action:
                self.objects.remember(self._resource_of(action["apply"]), action["apply"])
            elif "delete" in action:
                self.objects.forget(action["delete"])
            elif "scale" in action:
                self.objects.scaled(action["scale"]["target"], int(action["scale"]["replicas"]))
            elif "resizeGroup" in action:
                sizes[action["resizeGroup"]["group"]] = int(action["resizeGroup"]["size"])
        self._resumed_sizes = sizes
        return bool(initial)

    def _resource_of(self, manifest: Mapping[str, Any]) -> str:
        kind = str(manifest.get("kind", ""))
        if kind == "HorizontalPodAutoscaler":
            meta = manifest.get("metadata") or {}
            key = f"{meta.get('namespace') or 'default'}/{meta.get('name')}"
            standard = self.informers.get("hpas")
            if standard is not None and standard.get(key) is None and "kubetide_hpas" in self.informers:
                return "kubetide_hpas"
        return _RESOURCE_OF_KIND.get(kind, "deployments")

    def _find_metric_files(self) -> None:
        directory = self.layout.path(Layout.METRICS)
        if not directory.is_dir():
            return
        for path in directory.glob("*.csv"):
            lines = path.read_text(encoding="utf-8").splitlines()
            if len(lines) < 2:
                continue
            relative = f"{Layout.METRICS}/{path.name}"
            # The file's name is the workload's key with '/' as '.', then the series.
            for workload, series in self._metric_names(path.name):
                self.with_rows.setdefault(workload, {})[series] = relative

    def _metric_names(self, file_name: str) -> list[tuple[str, str]]:
        out = []
        for workload in self.objects.hpa_targets():
            prefix = workload.replace("/", ".") + "."
            if file_name.startswith(prefix) and file_name.endswith(".csv"):
                out.append((workload, file_name[len(prefix) : -len(".csv")]))
        return out

    # --- the loop

    def run(self) -> Totals:
        """Record until the duration is reached or ``stop`` is set; the files are flushed either way."""
        self.open()
        try:
            while not self.step():
                wait = min(self.poll, max(self.settings.duration - self.totals.seconds, 0.0))
                self.stop.wait(wait or self.poll)
        finally:
            self.close()
        return self.totals

    def open(self) -> None:
        """Fill the caches and begin: a new recording's start, or a resumed one's state."""
        self._start_caches()
        try:
            source = self.sources.metrics
            if source is None and self.metrics_factory is not None:
                source = self.metrics_factory(lambda: self._objects("pods"))
            if source is not None:
                self.sampler = MetricSampler(source, self.notes, self._pod_started)
            if self.resume is None:
                self.state = RecordState(self.settings, 0.0, self._begin_fresh())
                self.state.start = self.start
            else:
                self.state = self.resume
                self._begin_resumed(self.state)
                assert self.nodes is not None
                self.nodes.sizes.update(self._resumed_sizes)
        except BaseException:
            self._stop_caches()
            raise
        t = min(self.clock() - self.start, self.settings.duration)
        # The first sample at the start (or, resumed, at the next step): the day's first row.
        interval = self.settings.interval
        self._next_sample = 0.0 if self.resume is None else math.ceil(t / interval) * interval
        self._next_flush = t

    def step(self) -> bool:
        """One poll: observe, sample when due, flush when due; True once the recording is over."""
        assert self.state is not None
        t = min(self.clock() - self.start, self.settings.duration)
        self._observe(t)
        if t >= self._next_sample:
            # Stamped at the step it stands for when taken within a poll of it (the replay's scrapes
            # fall on the steps), else when it was taken (after a stall).
            late = t - self._next_sample > self.poll
            self._sample(round(t, 3) if late else self._next_sample)
            while self._next_sample <= t:  # steps missed while stalled are not made up
                self._next_sample += self.settings.interval
        done = t >= self.settings.duration or self.stop.is_set()
        if done or t >= self._next_flush:
            self._flush(self.state, t)
            self._next_flush = t + self.settings.flush_every
        self.totals.seconds = t
        if self.progress is not None:
            self.progress(self.totals)
        return done

    def close(self) -> None:
        self._stop_caches()

    def _observe(self, t: float) -> None:
        assert self.nodes is not None and self.pending is not None and self.events is not None
        t = round(t, 3)
        changed = {name for name in self.informers if self._changed(name)}
        for resource in RESOURCES:
            if resource in changed:
                self._pending_actions += self.objects.observe(resource, self._objects(resource), t)
        if "nodes" in changed:
            self._pending_actions += self.nodes.observe(self._objects("nodes"), t)
        if "pods" in changed:
            self.pending.observe(self._objects("pods"), t)
        for name in COMPONENTS:
            if f"events:{name}" in changed:
                events = self.events.observe(name, self._objects(f"events:{name}"))
                self._pending_events += events
                if self.hpa_syncs is not None:
                    for event in events:
                        if event["source"] == "hpa":  # stamped to the second: the sync was within it
                            self.hpa_syncs.observe(event["t"] + 0.5)
        if "ca-status" in changed and self.ca_loops is not None:
            for config_map in self._objects("ca-status"):
                annotations = (config_map.get("metadata") or {}).get("annotations") or {}
                stamp = parse_last_updated(str(annotations.get(LAST_UPDATED, "")))
                if stamp is not None:
                    self.ca_loops.observe(round(stamp - self.start, 3))

    def _sample(self, t: float) -> None:
        assert self.nodes is not None and self.pending is not None
        t = round(t, 3)
        hpas = [*self._objects("hpas"), *self._objects("kubetide_hpas")]
        targets = sorted(self.objects.hpa_targets())
        workloads: dict[str, Json] = {}
        for key in targets:
            kind, namespace, name = key.split("/", 2)
            resource = _SCALABLE.get(kind)
            obj = self.informers[resource].get(f"{namespace}/{name}") if resource in self.informers else None
            if obj is not None:
                workloads[key] = obj
        row: Json = {
            "t": t,
            "nodes": self.nodes.ready_by_group(),
            "replicas": {k: int((w.get("spec") or {}).get("replicas") or 0) for k, w in workloads.items()},
            "ready": {
                k: int((w.get("status") or {}).get("readyReplicas") or 0) for k, w in workloads.items()
            },
            "pending_pods": len(self.pending.pending),
            "pending_pod_seconds": round(self.pending.pod_seconds(t), 3),
        }
        self._pending_samples.append(row)
        if self.sampler is not None:
            for measured in self.sampler.sample(hpas, workloads, t):
                self._pending_rows.append((t, measured))

    # --- writing

    def _traffic(self) -> list[Json]:
        feeds = self.sampler.feeds if self.sampler is not None else {}
        return traffic_entries(self.settings.load_model, self.with_rows, feeds)

    def _ready_delays(self, groups: list[Json]) -> None:
        assert self.nodes is not None
        for group in groups:
            measured = self.nodes.measured_ready_delay(group["name"])
            if measured is not None:
                provisioning = group.setdefault("provisioning", {})
                provisioning["readyDelay"] = f"{round(measured, 1):g}s"

    def _phases(self) -> dict[str, float]:
        """``{"clusterAutoscaler": phase, "hpa": phase}`` of the loops seen so far."""
        out = {}
        for section, estimate in (("clusterAutoscaler", self.ca_loops), ("hpa", self.hpa_syncs)):
            phase = estimate.phase() if estimate is not None else None
            if phase is not None:
                out[section] = phase
        return out

    def _flush(self, state: RecordState, t: float) -> None:
        assert self.nodes is not None and self.pending is not None
        state.node_groups = self.nodes.groups
        self._ready_delays(state.node_groups)
        state.recorded_until = max(t, state.recorded_until)
        state.pending_pod_seconds = self.pending.pod_seconds(t)
        first_sample = self.sampler.first_sample_after() if self.sampler is not None else None
        document = scenario_document(
            self.settings,
            self._phases(),
            state.node_groups,
            state.recorded_until,
            has_objects=self._has_objects,
            traffic=self._traffic(),  # only series already holding rows: the scenario loads now
            recorded_from=_rfc3339(self.start),
            recorded_until=_rfc3339(self.start + state.recorded_until),
            first_sample_after=first_sample,
        )
        try:
            replace_text(self.layout.path(Layout.STATE), state.to_text())
            replace_text(
                self.layout.path(Layout.SCENARIO),
                yaml.safe_dump(document, sort_keys=False, allow_unicode=True, width=110),
            )
            self._append()
        except OSError as exc:
            raise RecordError(
                f"cannot write the recording in {self.layout.root}: {exc.strerror or exc}"
            ) from None
        for text in self.notes.flush():
            self.totals.notes += 1
            if self.on_note is not None:
                self.on_note(text)

    def _append(self) -> None:
        actions = sorted(self._pending_actions, key=lambda a: a["at"])
        self.actions.append_json(actions)
        self.totals.actions += len(actions)
        self.samples.append_json(self._pending_samples)
        self.totals.samples += len(self._pending_samples)
        events = sorted(self._pending_events, key=lambda e: e["t"])
        self.events_log.append_json(events)
        self.totals.events += len(events)
        by_file: dict[tuple[str, str], list[str]] = {}
        for t, measured in self._pending_rows:
            by_file.setdefault((measured.workload, measured.series), []).append(f"{t:g},{measured.value!r}")
        for (workload, series), rows in by_file.items():
            name = self.layout.metric_file(workload, series)
            log_file = self.metric_logs.get((workload, series))
            if log_file is None:
                log_file = self.metric_logs[(workload, series)] = AppendLog(
                    self.layout.path(name), f"t,{series}"
                )
            log_file.append(rows)
            self.with_rows.setdefault(workload, {})[series] = name
            self.totals.metric_rows += len(rows)
        self._pending_actions, self._pending_samples, self._pending_events, self._pending_rows = (
            [],
            [],
            [],
            [],
        )


def recording_exists(directory: Path) -> bool:
    return (directory / Layout.STATE).is_file()
