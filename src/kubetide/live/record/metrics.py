"""The metrics the HPAs read, sampled while recording, as the series the replay's traffic reads.

At every sampling step, for each HPA, what it reads through the same metrics port the live HPA uses
(the metrics APIs, or Prometheus with ``--prometheus-url`` and the same rate window):

- CPU and memory of the pods of its target (``Resource`` and ``ContainerResource`` metrics; the whole
  pods' usage is recorded): the average per pod (``cpu`` in cores, ``memory`` in bytes) and the CPU of
  all of them together (``cpu_total``, for the ``shared`` load model);
- each ``Pods`` metric: its average per pod; each ``Object`` metric: its value; each ``External``
  metric: the sum of its series (what the HPA adds up), in the metric's own unit.

A series that cannot be read at a step (no pod has a sample yet, the API failed) has no row there: the
replay interpolates between the rows it has. How the series become the replay's usage is the
scenario document's business (:mod:`.document`).
"""

from __future__ import annotations

import logging
import statistics
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kubetide.hpa.ports import MetricsError, MetricsSource
from kubetide.model.errors import ManifestError
from kubetide.model.fields import Node
from kubetide.model.hpa import HPA, MetricSpec
from kubetide.model.pod import Pod
from kubetide.model.selectors import LabelSelector

__all__ = ["Feed", "Measured", "MetricSampler", "RawPodLister"]

log = logging.getLogger(__name__)
_MEASURED = 20  # first-sample delays kept
Json = dict[str, Any]


@dataclass(frozen=True)
class Measured:
    """One value of one series of one workload at one step."""

    workload: str  # Kind/namespace/name
    series: str  # cpu, memory, cpu_total, pods.<metric>, object.<metric>, external.<metric>
    value: float


@dataclass(frozen=True)
class Feed:
    """A custom or external metric an HPA reads, as the scenario's ``traffic[].metrics`` entry wants it."""

    series: str
    name: str
    kind: str  # Pods, Object, External
    selector: Mapping[str, str]
    described_object: str | None = None


def _selector_labels(selector: LabelSelector | None) -> dict[str, str] | None:
    """A metric selector as the scenario's metric labels (equality only); None when it says more."""
    labels: dict[str, str] = {}
    for requirement in selector.requirements if selector is not None else ():
        if requirement.operator != "In" or len(requirement.values) != 1:
            return None
        labels[requirement.key] = requirement.values[0]
    return labels


def workload_selector(workload: Mapping[str, Any]) -> LabelSelector | None:
    """The pods' selector of a workload object (``spec.selector``); None when it has none it can read."""
    selector = (workload.get("spec") or {}).get("selector")
    if not isinstance(selector, dict):
        return None
    try:
        return LabelSelector.parse(Node(selector, "spec.selector"))
    except ManifestError:
        return None


class RawPodLister:
    """``list_pods`` over a watch cache of raw pods: the pods of a namespace matching a selector, made
    into views only when matched (and kept while their resourceVersion is), so a recording of 30,000
    pods holds views only for the pods of HPA targets."""

    def __init__(self, objects: Callable[[], Iterable[Mapping[str, Any]]]) -> None:
        self.objects = objects
        self._views: dict[str, tuple[str, Pod]] = {}

    def list_pods(self, namespace: str, selector: LabelSelector) -> Sequence[Pod]:
        out = []
        kept: dict[str, tuple[str, Pod]] = {}
        for obj in self.objects():
            meta = obj.get("metadata") or {}
            if (meta.get("namespace") or "default") != namespace or not selector.matches(
                meta.get("labels") or {}
            ):
                continue
            key, rv = f"{namespace}/{meta.get('name')}", str(meta.get("resourceVersion", ""))
            cached = self._views.get(key)
            if cached is None or cached[0] != rv:
                try:
                    cached = (rv, Pod.from_manifest(dict(obj)))
                except ManifestError:
                    continue
            kept[key] = cached
            out.append(cached[1])
        self._views.update(kept)
        if len(self._views) > 4 * max(len(kept), 1000):  # forget pods long gone
            self._views = kept
        return out


class MetricSampler:
    """``started``: a pod's start (``status.startTime``, recording seconds; None: unknown or before the
    recording) by ``namespace/name``, to measure how long a new pod runs before its first CPU sample
    (the replay's ``metrics.firstSampleAfter``: the median of the last ones)."""

    def __init__(
        self,
        source: MetricsSource,
        note: Callable[[str], None],
        started: Callable[[str], float | None] = lambda pod: None,
    ) -> None:
        self.source = source
        self.note = note
        self.started = started
        self.feeds: dict[str, dict[str, Feed]] = {}  # workload -> series -> feed
        self.failures = 0
        self._sampled: dict[str, set[str]] = {}  # workload -> pods with a CPU sample at the last step
        self.first_sample_delays: deque[float] = deque(maxlen=_MEASURED)

    def first_sample_after(self) -> float | None:
        """How long a new pod ran before its first CPU sample, the median of the last ones measured."""
        return statistics.median(self.first_sample_delays) if self.first_sample_delays else None

    def sample(
        self, hpas: Iterable[Mapping[str, Any]], workloads: Mapping[str, Mapping[str, Any]], t: float = 0.0
    ) -> list[Measured]:
        """Every series of every HPA's target now; ``workloads`` are the targets' objects by key."""
        out: list[Measured] = []
        done: set[tuple[str, str]] = set()
        for manifest in hpas:
            try:
                hpa = HPA.from_manifest(dict(manifest))
            except ManifestError:
                continue  # the HPA controller reports it; nothing to measure for it
            ref = hpa.scale_target_ref
            key = f"{ref.kind}/{hpa.namespace}/{ref.name}"
            workload = workloads.get(key)
            selector = workload_selector(workload) if workload is not None else None
            if selector is None:
                continue
            resources = {"cpu"} | {
                m.resource for m in hpa.metrics if m.type in ("Resource", "ContainerResource")
            }
            for resource in sorted(resources & {"cpu", "memory"}):
                if (key, resource) not in done:
                    done.add((key, resource))
                    out += self._resource(key, hpa.namespace, selector, resource, t)
            for spec in hpa.metrics:
                if spec.type in ("Pods", "Object", "External"):
                    measured = self._custom(key, hpa, selector, spec)
                    if measured is not None and (key, measured.series) not in done:
                        done.add((key, measured.series))
                        out.append(measured)
        return out

    def _resource(
        self, key: str, namespace: str, selector: LabelSelector, resource: str, t: float
    ) -> list[Measured]:
        try:
            samples = self.source.resource_metrics(namespace, selector, resource, "")
        except MetricsError as exc:
            self._failed(key, resource, exc)
            return []
        if resource == "cpu":
            self._first_samples(key, namespace, samples.keys(), t)
        if not samples:
            return []
        total = sum(m.value for m in samples.values()) / 1000.0  # milli-units to cores or bytes
        average = total / len(samples)
        out = [Measured(key, resource, round(average, 6))]
        if resource == "cpu":
            out.append(Measured(key, "cpu_total", round(total, 6)))
        return out

    def _first_samples(self, key: str, namespace: str, pods: Iterable[str], t: float) -> None:
        sampled = {f"{namespace}/{name}" for name in pods}
        before = self._sampled.get(key)
        if before is not None:  # the first step's pods were sampled before the recording began
            for pod in sampled - before:
                started = self.started(pod)
                if started is not None and started <= t:
                    self.first_sample_delays.append(t - started)
        self._sampled[key] = sampled

    def _custom(self, key: str, hpa: HPA, selector: LabelSelector, spec: MetricSpec) -> Measured | None:
        metric = spec.metric
        if metric is None:
            return None
        labels = _selector_labels(metric.selector)
        series = f"{spec.type.lower()}.{metric.name}"
        if labels is None:
            self.note(
                f"HorizontalPodAutoscaler/{hpa.namespace}/{hpa.name}: metric {metric.name}'s selector is not "
                "plain label equalities; recorded with none (the replay's metric has no labels)"
            )
            labels = {}
        try:
            if spec.type == "Pods":
                values = self.source.pod_metrics(hpa.namespace, metric.name, selector, metric.selector)
                value = sum(m.value for m in values.values()) / len(values) / 1000.0 if values else None
            elif spec.type == "Object":
                ref = spec.described_object
                if ref is None:
                    return None
                value = self.source.object_metric(hpa.namespace, metric.name, ref, metric.selector) / 1000.0
            else:
                value = sum(self.source.external_metric(hpa.namespace, metric.name, metric.selector)) / 1000.0
        except MetricsError as exc:
            self._failed(key, series, exc)
            return None
        described = None
        if spec.type == "Object" and spec.described_object is not None:
            described = f"{spec.described_object.kind}/{hpa.namespace}/{spec.described_object.name}"
        self.feeds.setdefault(key, {})[series] = Feed(series, metric.name, spec.type, labels, described)
        return None if value is None else Measured(key, series, round(value, 6))

    def _failed(self, key: str, series: str, exc: Exception) -> None:
        self.failures += 1
        log.debug("%s %s: not measured this step: %s", key, series, exc)
