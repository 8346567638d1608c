"""The simulated metrics pipeline: traffic becomes per-pod usage, scraped like metrics-server, and served
to the HPA through its metrics port (resource, Pods, Object and External metrics).

Each scrape (every ``metrics.resolution``) samples every Running pod: a Ready pod uses ``baseCpu`` plus
its even share of ``rps x cpuPerRequest``; a Running pod that is not Ready serves no traffic and uses
``baseCpu``. A pod that was not Running at the last scrape has no sample yet (the HPA sees it as
missing). Samples carry the scrape time and the averaging window, as metrics-server reports them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import repeat

from kubetide.hpa.ports import MetricsError, PodMetric
from kubetide.model.hpa import CrossVersionObjectReference
from kubetide.model.resources import CPU, MEMORY
from kubetide.model.selectors import LabelSelector
from kubetide.sim.cluster.cluster import SimCluster
from kubetide.sim.cluster.workloads import Workload
from kubetide.sim.series import Series


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


@dataclass
class _Scrape:
    cpu: dict[str, PodMetric] = field(default_factory=dict)
    memory: dict[str, PodMetric] = field(default_factory=dict)
    per_pod: dict[str, dict[str, PodMetric]] = field(default_factory=dict)  # Pods metrics by name
    rps: float = 0.0
    ready: int = 0
    utilization: float | None = None  # average cpu % of request over Ready pods


class MetricsPipeline:
    def __init__(self, cluster: SimCluster, loads: Iterable[Load], window: float) -> None:
        self.cluster = cluster
        self.loads = {load.workload: load for load in loads}
        self.window = window
        self.scrapes: dict[str, _Scrape] = {}
        self.values: dict[tuple[str, str], float] = {}  # (kind, metric name) -> object/external value
        self.external_labels: dict[str, list[tuple[Mapping[str, str], float]]] = {}
        self._name_cache: dict[str, tuple[int, tuple[str, ...], tuple[str, ...]]] = {}

    # --- scraping -------------------------------------------------------------------------------

    def scrape(self, now: float) -> None:
        self.external_labels = {}
        self.values = {}
        for key, workload in self.cluster.workloads.items():
            self.scrapes[key] = self._scrape_workload(workload, self.loads.get(key), now)
        for load in self.loads.values():
            for feed in load.feeds:
                if feed.kind == "Pods":
                    continue
                value = feed.series.at(now) if feed.series is not None else load.rps.at(now)
                self.values[(feed.kind, feed.name)] = value
                if feed.kind == "External":
                    self.external_labels.setdefault(feed.name, []).append((feed.labels, value))

    def _names(self, workload: Workload) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """(Ready, Running-but-not-Ready) pod names, recomputed only when the workload's pods change."""
        cached = self._name_cache.get(workload.key)
        if cached is not None and cached[0] == workload.version:
            return cached[1], cached[2]
        ready = tuple(p.spec.name for p in workload.pods.values() if p.phase == "Running" and p.ready)
        unready = tuple(p.spec.name for p in workload.pods.values() if p.phase == "Running" and not p.ready)
        self._name_cache[workload.key] = (workload.version, ready, unready)
        return ready, unready

    def _scrape_workload(self, workload: Workload, load: Load | None, now: float) -> _Scrape:
        ready, unready = self._names(workload)
        scrape = _Scrape(ready=len(ready))
        rps = load.rps.at(now) if load is not None else 0.0
        scrape.rps = rps
        base = load.base_cpu if load is not None else 0
        share = int(rps * load.cpu_per_request / len(ready)) if load is not None and ready else 0
        window = self.window
        scrape.cpu = dict(zip(ready, repeat(PodMetric(base + share, now, window))))
        scrape.cpu.update(zip(unready, repeat(PodMetric(base, now, window))))
        if load is not None and load.memory is not None:
            sample = PodMetric(load.memory * 1000, now, window)
            scrape.memory = dict(zip((*ready, *unready), repeat(sample)))
        if ready:
            request = workload.template.view.requests[CPU]
            if request > 0:
                scrape.utilization = 100.0 * (base + share) / request
        if load is not None:
            for feed in load.feeds:
                if feed.kind == "Pods":
                    per_pod = (
                        feed.series.at(now) if feed.series is not None else rps / max(len(ready), 1)
                    ) * 1000
                    sample = PodMetric(int(per_pod), now, window)
                    values = dict(zip(ready, repeat(sample)))
                    values.update(zip(unready, repeat(PodMetric(0, now, window))))
                    scrape.per_pod[feed.name] = values
        return scrape

    # --- the HPA's metrics port -----------------------------------------------------------------

    def _workload_scrape(self, namespace: str, selector: LabelSelector) -> _Scrape | None:
        key = self.cluster_workload_for(namespace, selector)
        return self.scrapes.get(key) if key is not None else None

    def cluster_workload_for(self, namespace: str, selector: LabelSelector) -> str | None:
        workload = self.cluster.workload_for_selector(namespace, selector)
        return workload.key if workload is not None else None

    def resource_metrics(
        self, namespace: str, selector: LabelSelector, resource: str, container: str
    ) -> Mapping[str, PodMetric]:
        scrape = self._workload_scrape(namespace, selector)
        if scrape is None:
            raise MetricsError("no metrics returned from resource metrics API")
        samples = scrape.cpu if resource == CPU else scrape.memory if resource == MEMORY else {}
        if not samples:
            raise MetricsError("no metrics returned from resource metrics API")
        if container:
            return self._container_share(namespace, selector, samples, resource, container)
        return samples

    def _container_share(
        self,
        namespace: str,
        selector: LabelSelector,
        samples: Mapping[str, PodMetric],
        resource: str,
        container: str,
    ) -> Mapping[str, PodMetric]:
        """A container's part of its pod's usage, in proportion to its request."""
        key = self.cluster_workload_for(namespace, selector)
        workload = self.cluster.workloads[key] if key else None
        if workload is None:
            return {}
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
        scrape = self._workload_scrape(namespace, selector)
        if scrape is None or name not in scrape.per_pod or not scrape.per_pod[name]:
            raise MetricsError(f"no metrics returned from custom metrics API for {name}")
        return scrape.per_pod[name]

    def object_metric(
        self,
        namespace: str,
        name: str,
        described_object: CrossVersionObjectReference,
        metric_selector: LabelSelector | None,
    ) -> int:
        value = self.values.get(("Object", name))
        if value is None:
            raise MetricsError(f"unable to fetch metrics from custom metrics API: {name} not found")
        return int(value * 1000)

    def external_metric(
        self, namespace: str, name: str, metric_selector: LabelSelector | None
    ) -> Sequence[int]:
        series = self.external_labels.get(name, [])
        values = [
            int(v * 1000)
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
