"""The simulated metrics pipeline: traffic becomes per-pod usage, scraped like metrics-server, and served
to the HPA through its metrics port (resource, Pods, Object and External metrics).

Each scrape (every ``metrics.resolution``) samples every Running pod: a Ready pod uses ``baseCpu`` plus
its even share of ``rps x cpuPerRequest``; a Running pod that is not Ready serves no traffic and uses
``baseCpu``. A pod that was not Running at the last scrape has no sample yet (the HPA sees it as
missing), nor one that has run less than ``metrics.firstSampleAfter`` (Prometheus' rate() needs two
scrapes). Samples carry the scrape time and the averaging window, as metrics-server reports them.

A traffic's ``perPod`` series (a recorded day's measured usage) add their cores to every Ready pod's
CPU and set every Running pod's memory, whatever the number of pods.

A traffic series below 0 serves no requests (rps is floored at 0), and values in milli-units are
saturated at the int64 range a Kubernetes quantity has, so any finite series gives finite metrics.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, KeysView, Mapping, Sequence, ValuesView
from dataclasses import dataclass
from types import MappingProxyType
from typing import cast

from kubetide.hpa.ports import MetricsError, PodMetric
from kubetide.model.hpa import CrossVersionObjectReference
from kubetide.model.resources import CPU, MEMORY
from kubetide.model.selectors import LabelSelector
from kubetide.sim.cluster.cluster import SimCluster
from kubetide.sim.cluster.templates import PodTemplate
from kubetide.sim.cluster.workloads import Workload
from kubetide.sim.series import Series, SeriesBatch

_MAX_MILLI = 2**63 - 1  # the largest value a quantity (and the metrics APIs) carries


def milli(value: float) -> int:
    """``value`` as an integer number of units, saturated at the int64 range; NaN (inf - inf from
    extreme series) as 0."""
    if value != value:
        return 0
    return int(max(-_MAX_MILLI, min(_MAX_MILLI, value)))


@dataclass(frozen=True)
class MetricFeed:
    """A custom or external metric: ``Pods`` (per pod), ``Object`` or ``External`` (one value)."""

    name: str
    kind: str
    labels: Mapping[str, str]
    series: Series | None  # None: derived from the traffic's rps
    described_object: str  # Object metrics: "Kind/namespace/name"


@dataclass(frozen=True)
class Load:
    """The traffic on one workload and what it costs per pod."""

    workload: str  # "Kind/namespace/name"
    rps: Series
    cpu_per_request: float  # millicores per request/s
    base_cpu: int  # millicores per pod
    memory: int | None  # bytes per pod
    capacity_per_pod: float | None
    feeds: tuple[MetricFeed, ...] = ()
    cpu_per_pod: Series | None = None  # cores per Ready pod (perPod.cpu)
    memory_per_pod: Series | None = None  # bytes per Running pod (perPod.memory)


class UniformSamples(Mapping[str, PodMetric]):
    """One scrape's samples of a workload: every Ready pod has the same usage, every other Running pod
    the base usage. O(1) to build per scrape; its key set is shared while the pods don't change.

    ``names`` maps each Running pod to whether it counts as Ready, the Ready pods first (both parts in
    the workload's pod order), and ``ready_count`` says how many lead. Keys iterate in that order and
    ``values()`` lists the samples in the same order, so ``zip(keys(), values())`` pairs each pod with
    its own sample, and nothing here iterates a set (whose order of strings changes with
    PYTHONHASHSEED from one process to the next). The two :class:`PodMetric` objects are made on
    first use: the HPA's quiet lane reads only ``total_value`` and ``key_token``."""

    __slots__ = ("_base", "_base_value", "_names", "_ready_count", "_sample", "_value", "_when", "key_token")

    def __init__(
        self, names: dict[str, bool], ready_count: int, value: int, base: int, timestamp: float, window: float
    ) -> None:
        self._names, self._ready_count, self._value, self._base_value = names, ready_count, value, base
        self._when = (timestamp, window)
        self._sample: PodMetric | None = None
        self._base: PodMetric | None = None
        # The same object while the keys are (the HPA's pod index remembers a checked key set by it).
        self.key_token: object = names

    def _metrics(self) -> tuple[PodMetric, PodMetric]:
        if self._sample is None or self._base is None:
            timestamp, window = self._when
            self._sample = PodMetric(self._value, timestamp, window)
            self._base = PodMetric(self._base_value, timestamp, window)
        return self._sample, self._base

    def __getitem__(self, name: str) -> PodMetric:
        sample, base = self._metrics()
        return sample if self._names[name] else base

    def __contains__(self, name: object) -> bool:
        return name in self._names

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)

    def keys(self) -> KeysView[str]:
        # A dict's keys view is ordered and set-like: set algebra on it stays in C.
        return self._names.keys()

    def values(self) -> ValuesView[PodMetric]:
        ready = self._ready_count
        sample, base = self._metrics()
        return cast(ValuesView[PodMetric], [sample] * ready + [base] * (len(self._names) - ready))

    def total_value(self) -> int:
        """The sum of the samples' values, in O(1)."""
        ready = self._ready_count
        return self._value * ready + self._base_value * (len(self._names) - ready)


_NO_SAMPLES: Mapping[str, PodMetric] = MappingProxyType({})


class _Scrape:
    """One workload's scrape: its samples and the figures the timeline reads."""

    __slots__ = ("cpu", "memory", "per_pod", "ready", "rps", "utilization")

    def __init__(self, ready: int, rps: float) -> None:
        self.cpu: Mapping[str, PodMetric] = _NO_SAMPLES
        self.memory: Mapping[str, PodMetric] = _NO_SAMPLES
        self.per_pod: dict[str, Mapping[str, PodMetric]] = {}  # Pods metrics by name
        self.ready = ready
        self.rps = rps
        self.utilization: float | None = None  # average cpu % of request over Ready pods


class MetricsPipeline:
    def __init__(
        self, cluster: SimCluster, loads: Iterable[Load], window: float, first_sample_after: float = 0.0
    ) -> None:
        self.cluster = cluster
        self.first_sample_after = first_sample_after
        self.loads = {load.workload: load for load in loads}
        self.window = window
        self.scrapes: dict[str, _Scrape] = {}
        # (kind, metric name, described object "Kind/namespace/name" or "" for External) -> value:
        # an Object metric is the metric of one object, so two objects' metrics of one name differ.
        self.values: dict[tuple[str, str, str], float] = {}
        self.external_labels: dict[str, list[tuple[Mapping[str, str], float]]] = {}
        # By key: (the workload, its version, Running names -> Ready, Ready count, valid until: a pod
        # that has not run ``first_sample_after`` yet joins then). The workload itself is kept because a
        # workload deleted and applied again has the same key and restarts its versions.
        self._name_cache: dict[str, tuple[Workload, int, dict[str, bool], int, float]] = {}
        self._requests: dict[str, tuple[PodTemplate, int]] = {}
        # Every load's rps at a scrape, the usual sine curves in one numpy expression.
        self._rps_batch = SeriesBatch([load.rps for load in self.loads.values()])

    # --- scraping -------------------------------------------------------------------------------

    def scrape(self, now: float) -> None:
        self.external_labels = {}
        self.values = {}
        rps_now = dict(zip(self.loads, self._rps_batch.at(now), strict=True))
        # A fresh map: a deleted workload has no samples (nor timeline figures) any more.
        self.scrapes = {
            key: self._scrape_workload(workload, self.loads.get(key), rps_now.get(key, 0.0), now)
            for key, workload in self.cluster.workloads.items()
        }
        for key, load in self.loads.items():
            for feed in load.feeds:
                if feed.kind == "Pods":
                    continue
                value = feed.series.at(now) if feed.series is not None else max(rps_now[key], 0.0)
                described = feed.described_object if feed.kind == "Object" else ""
                self.values[(feed.kind, feed.name, described)] = value
                if feed.kind == "External":
                    self.external_labels.setdefault(feed.name, []).append((feed.labels, value))

    def _names(self, workload: Workload, now: float) -> tuple[dict[str, bool], int]:
        """Running pod names -> Ready, the Ready ones first, each part in the workload's pod order; and
        the number of Ready pods. Recomputed only when the workload's pods change (or a pod's first
        sample comes due)."""
        cached = self._name_cache.get(workload.key)
        if cached is not None and cached[0] is workload and cached[1] == workload.version and now < cached[4]:
            return cached[2], cached[3]
        running = [p for p in workload.pods.values() if p.phase == "Running"]
        until = math.inf
        if self.first_sample_after > 0:
            due = [(p.running_at or 0.0) + self.first_sample_after for p in running]
            until = min((d for d in due if d > now), default=math.inf)
            running = [p for p, d in zip(running, due, strict=True) if d <= now]
        names = {p.spec.name: True for p in running if p.ready}
        ready = len(names)
        if ready < len(running):
            names.update((p.spec.name, False) for p in running if not p.ready)
        self._name_cache[workload.key] = (workload, workload.version, names, ready, until)
        return names, ready

    def _scrape_workload(self, workload: Workload, load: Load | None, rps_at: float, now: float) -> _Scrape:
        running, ready = self._names(workload, now)
        rps = max(rps_at, 0.0) if load is not None else 0.0
        scrape = _Scrape(ready, rps)
        base = load.base_cpu if load is not None else 0
        value = base + milli(rps * load.cpu_per_request / ready) if load is not None and ready else base
        if load is not None and load.cpu_per_pod is not None and ready:
            value += milli(
                round(max(load.cpu_per_pod.at(now), 0.0) * 1000)
            )  # 0.7 cores: 700m, not 700.0000000000001
        window = self.window
        scrape.cpu = UniformSamples(running, ready, value, base, now, window)
        if load is not None and load.memory_per_pod is not None:
            memory = milli(round(max(load.memory_per_pod.at(now), 0.0)) * 1000)
            scrape.memory = UniformSamples(running, len(running), memory, memory, now, window)
        elif load is not None and load.memory is not None:
            memory = load.memory * 1000
            scrape.memory = UniformSamples(running, len(running), memory, memory, now, window)
        if ready:
            request = self._cpu_request(workload)
            if request > 0:
                scrape.utilization = 100.0 * value / request
        if load is not None and load.feeds:
            for feed in load.feeds:
                if feed.kind == "Pods":
                    per_pod = (feed.series.at(now) if feed.series is not None else rps / max(ready, 1)) * 1000
                    scrape.per_pod[feed.name] = UniformSamples(running, ready, milli(per_pod), 0, now, window)
        return scrape

    def _cpu_request(self, workload: Workload) -> int:
        """The cpu request of the workload's pods (per template object: a re-applied workload has a new one)."""
        cached = self._requests.get(workload.key)
        if cached is not None and cached[0] is workload.template:
            return cached[1]
        request = workload.template.view.requests[CPU]
        self._requests[workload.key] = (workload.template, request)
        return request

    # --- the HPA's metrics port -----------------------------------------------------------------

    def _matching(self, namespace: str, selector: LabelSelector) -> list[tuple[Workload, _Scrape]]:
        """The scrapes of the workloads whose pods ``selector`` matches, as metrics-server answers a
        label selector: usually one workload's own (its index), else every workload it matches."""
        workload = self.cluster.workload_for_selector(namespace, selector)
        if workload is not None:
            scrape = self.scrapes.get(workload.key)
            return [(workload, scrape)] if scrape is not None else []
        return [
            (w, self.scrapes[w.key])
            for w in self.cluster.workloads.values()
            if w.namespace == namespace and w.key in self.scrapes and selector.matches(w.template.view.labels)
        ]

    def resource_metrics(
        self, namespace: str, selector: LabelSelector, resource: str, container: str
    ) -> Mapping[str, PodMetric]:
        if not container and resource == CPU:  # the common case: one workload's own cpu samples
            workload = self.cluster.workload_for_selector(namespace, selector)
            if workload is not None:
                scrape = self.scrapes.get(workload.key)
                if scrape is not None and scrape.cpu:
                    return scrape.cpu
        parts = []
        for workload, scrape in self._matching(namespace, selector):
            samples = scrape.cpu if resource == CPU else scrape.memory if resource == MEMORY else {}
            if samples and container:
                samples = self._container_share(workload, samples, resource, container)
            if samples:
                parts.append(samples)
        if not parts:
            raise MetricsError("no metrics returned from resource metrics API")
        return parts[0] if len(parts) == 1 else {n: m for part in parts for n, m in part.items()}

    def _container_share(
        self, workload: Workload, samples: Mapping[str, PodMetric], resource: str, container: str
    ) -> Mapping[str, PodMetric]:
        """A container's part of its pod's usage, in proportion to its request."""
        containers = workload.template.view.containers
        total = sum(c.requests[resource] for c in containers)
        mine = next((c.requests[resource] for c in containers if c.name == container), None)
        if mine is None:
            return {}
        fraction = mine / total if total else 1.0 / len(containers)
        return {n: PodMetric(int(m.value * fraction), m.timestamp, m.window) for n, m in samples.items()}

    def pod_metrics(
        self, namespace: str, name: str, selector: LabelSelector, metric_selector: LabelSelector | None
    ) -> Mapping[str, PodMetric]:
        parts = [s.per_pod[name] for _, s in self._matching(namespace, selector) if s.per_pod.get(name)]
        if not parts:
            raise MetricsError(f"no metrics returned from custom metrics API for {name}")
        return parts[0] if len(parts) == 1 else {n: m for part in parts for n, m in part.items()}

    def object_metric(
        self,
        namespace: str,
        name: str,
        described_object: CrossVersionObjectReference,
        metric_selector: LabelSelector | None,
    ) -> int:
        described = f"{described_object.kind}/{namespace}/{described_object.name}"
        value = self.values.get(("Object", name, described))
        if value is None:
            raise MetricsError(f"unable to fetch metrics from custom metrics API: {name} not found")
        return milli(value * 1000)

    def external_metric(
        self, namespace: str, name: str, metric_selector: LabelSelector | None
    ) -> Sequence[int]:
        series = self.external_labels.get(name, [])
        values = [
            milli(v * 1000)
            for labels, v in series
            if metric_selector is None or metric_selector.matches(labels)
        ]
        if not values:
            raise MetricsError("no metrics returned from external metrics API")
        return values

    # --- for the timeline ---------------------------------------------------------------------

    def workload_figures(self, key: str) -> tuple[float, float | None, int]:
        """(rps, cpu utilization % over Ready pods, Ready pods) at the last scrape."""
        scrape = self.scrapes.get(key)
        if scrape is None:
            return 0.0, None, 0
        return scrape.rps, scrape.utilization, scrape.ready
