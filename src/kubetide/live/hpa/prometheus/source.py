"""The HPA's metrics port straight from Prometheus, for clusters without metrics-server or an adapter.

CPU and memory come from the kubelet's resource metrics as Prometheus scrapes them (the kubetide node
agent serves the same names on ``/metrics/resource``), per pod and container of the pods the HPA's
selector matches (from the pod lister, as the adapter lists them):

- cpu: ``sum by (pod, container) (rate(container_cpu_usage_seconds_total{...}[WINDOW]))``, cores to
  millicores as metrics-server does (whole nanocores, then ``MilliValue()``, which rounds up);
- memory: ``sum by (pod, container) (container_memory_working_set_bytes{...})`` in milli-bytes.

The matchers exclude ``container=""`` and ``container="POD"``: cAdvisor's pod-level and pause-container
series, which a cluster scraping cAdvisor too would otherwise count twice. A sample's timestamp is the
query result's, its window the rate window (``window_s``, default 1 minute, like metrics-server).
As with metrics-server's PodMetrics, a pod lacking a series for one of its containers has no sample
(unless one container is asked for).

Custom (per pod, per object) and external metrics come from prometheus-adapter rules (``rules.py``):
a rule's series are discovered with its ``seriesQuery`` (cached ``relist_s``), named by ``name``, and
queried with its ``metricsQuery``; values are ``int(value * 1000)`` milli-units, as the adapter
converts them. Errors are MetricsError with the messages the controller expects from the APIs.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence

from kubetide.hpa.ports import MetricsError, PodMetric
from kubetide.live.hpa.kinds import resource_for
from kubetide.live.hpa.prometheus.client import PrometheusClient, PrometheusError, Sample
from kubetide.live.hpa.prometheus.rules import Rule, RulesConfig
from kubetide.model.hpa import CrossVersionObjectReference
from kubetide.model.pod import Pod
from kubetide.model.selectors import LabelSelector

__all__ = ["PrometheusMetricsSource", "label_matchers"]

DEFAULT_WINDOW_S = 60.0
DEFAULT_CUSTOM_WINDOW_S = 60.0  # upstream's window for custom metrics without windowSeconds
_RESOURCE_SERIES = {
    "cpu": "container_cpu_usage_seconds_total",
    "memory": "container_memory_working_set_bytes",
}
_NO_RESOURCE = "no metrics returned from resource metrics API"

PodList = Callable[[str, LabelSelector], Sequence[Pod]]


class PrometheusMetricsSource:
    """``MetricsSource`` over Prometheus; ``list_pods`` is the scale-target port's pod lister."""

    def __init__(
        self,
        client: PrometheusClient,
        list_pods: PodList,
        rules: RulesConfig | None = None,
        *,
        window_s: float = DEFAULT_WINDOW_S,
        relist_s: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.client, self.list_pods = client, list_pods
        self.rules = rules or RulesConfig()
        self.window_s, self.relist_s, self.clock = float(window_s), relist_s, clock
        self._names: dict[bool, tuple[float, dict[str, tuple[Rule, str]]]] = {}

    # --- resource metrics ----------------------------------------------------------------------------

    def resource_metrics(
        self, namespace: str, selector: LabelSelector, resource: str, container: str
    ) -> Mapping[str, PodMetric]:
        series = _RESOURCE_SERIES.get(resource)
        if series is None:
            raise MetricsError(
                f"unable to fetch metrics from resource metrics API: no Prometheus query for resource {resource}"
            )
        listed = self.list_pods(namespace, selector)
        names = [p.name for p in listed]
        if not names:
            raise MetricsError(_NO_RESOURCE)
        containers = {p.name: {c.name for c in p.containers} for p in listed}
        matchers = (
            f'namespace="{_escape(namespace)}",pod=~"{_alternation(names)}",container!="",container!="POD"'
        )
        window = _duration(self.window_s)
        query = (
            f"sum by (pod, container) (rate({series}{{{matchers}}}[{window}]))"
            if resource == "cpu"
            else f"sum by (pod, container) ({series}{{{matchers}}})"
        )
        samples = self._query(query, "resource metrics API")
        if not samples:
            raise MetricsError(_NO_RESOURCE)
        by_pod: dict[str, list[tuple[str, int, float]]] = {}
        for s in samples:
            milli = _cpu_milli(s.value) if resource == "cpu" else int(s.value) * 1000
            by_pod.setdefault(s.labels.get("pod", ""), []).append(
                (s.labels.get("container", ""), milli, s.timestamp)
            )
        out = {}
        for pod, values in by_pod.items():
            chosen = [v for v in values if v[0] == container] if container else values
            # As upstream skips a pod whose PodMetrics lack the resource for a container: a container
            # without a series yet (just started) would otherwise understate the pod's usage.
            if not container and not containers.get(pod, set()) <= {v[0] for v in values}:
                continue
            if chosen:
                out[pod] = PodMetric(sum(v[1] for v in chosen), max(v[2] for v in chosen), self.window_s)
        return out

    # --- custom and external metrics -------------------------------------------------------------------

    def pod_metrics(
        self, namespace: str, name: str, selector: LabelSelector, metric_selector: LabelSelector | None
    ) -> Mapping[str, PodMetric]:
        rule, series = self._rule(name, external=False)
        pod_label = rule.resources.label_for("", "pods")
        if pod_label is None:
            raise MetricsError(
                f"unable to fetch metrics from custom metrics API: the server could not find the metric {name} for pods"
            )
        names = [p.name for p in self.list_pods(namespace, selector)]
        if not names:
            raise MetricsError("no metrics returned from custom metrics API")
        matchers = [*self._namespace(rule, namespace), f'{pod_label}=~"{_alternation(names)}"']
        query = rule.render(series, ",".join([*matchers, *label_matchers(metric_selector)]), pod_label)
        samples = self._query(query, "custom metrics API")
        out = {
            s.labels[pod_label]: PodMetric(int(s.value * 1000), s.timestamp, DEFAULT_CUSTOM_WINDOW_S)
            for s in samples
            if pod_label in s.labels
        }
        if not out:
            raise MetricsError("no metrics returned from custom metrics API")
        return out

    def object_metric(
        self,
        namespace: str,
        name: str,
        described_object: CrossVersionObjectReference,
        metric_selector: LabelSelector | None,
    ) -> int:
        rule, series = self._rule(name, external=False)
        ref = described_object
        resource = resource_for(ref.api_version, ref.kind)
        label = rule.resources.label_for(resource.group, resource.resource)
        if label is None:
            raise MetricsError(
                f"unable to fetch metrics from custom metrics API: the server could not find the metric {name} "
                f"for {resource.qualified}"
            )
        # A Namespace's metric is its namespace label's (upstream ignores the object's own name).
        wanted = namespace if ref.kind == "Namespace" and resource.group == "" else ref.name
        matchers = self._namespace(rule, namespace)
        if label not in {m.split("=", 1)[0] for m in matchers}:
            matchers.append(f'{label}="{_escape(wanted)}"')
        query = rule.render(series, ",".join([*matchers, *label_matchers(metric_selector)]), label)
        values = [s for s in self._query(query, "custom metrics API") if s.labels.get(label) == wanted]
        if len(values) != 1:
            raise MetricsError(
                "unable to fetch metrics from custom metrics API: the custom metrics API server returned "
                f"{len(values)} results when we asked for exactly one"
            )
        return int(values[0].value * 1000)

    def external_metric(
        self, namespace: str, name: str, metric_selector: LabelSelector | None
    ) -> Sequence[int]:
        rule, series = self._rule(name, external=True)
        matchers = self._namespace(rule, namespace) if rule.resources.namespaced else []
        query = rule.render(series, ",".join([*matchers, *label_matchers(metric_selector)]), "")
        values = [int(s.value * 1000) for s in self._query(query, "external metrics API")]
        if not values:
            raise MetricsError("no metrics returned from external metrics API")
        return values

    # --- helpers ---------------------------------------------------------------------------------------

    def _namespace(self, rule: Rule, namespace: str) -> list[str]:
        label = rule.resources.label_for("", "namespaces")
        return [f'{label}="{_escape(namespace)}"'] if label else []

    def _rule(self, name: str, *, external: bool) -> tuple[Rule, str]:
        api = "external metrics API" if external else "custom metrics API"
        now = self.clock()
        cached = self._names.get(external)
        if cached is None or now - cached[0] >= self.relist_s or name not in cached[1]:
            cached = (now, self._discover(external, api))
            self._names[external] = cached
        found = cached[1].get(name)
        if found is None:
            raise MetricsError(
                f"unable to fetch metrics from {api}: no rule of the Prometheus rules names a metric {name}"
            )
        return found

    def _discover(self, external: bool, api: str) -> dict[str, tuple[Rule, str]]:
        names: dict[str, tuple[Rule, str]] = {}
        for rule in self.rules.external_rules if external else self.rules.rules:
            try:
                found = self.client.series(rule.series_query)
            except PrometheusError as exc:
                raise MetricsError(
                    f"unable to fetch metrics from {api}: {rule.path}.seriesQuery: {exc}"
                ) from None
            for labels in found:
                series = labels.get("__name__", "")
                metric = rule.metric_name(series) if series else None
                if metric is not None:
                    names.setdefault(metric, (rule, series))  # the first rule naming a metric wins
        return names

    def _query(self, query: str, api: str) -> list[Sample]:
        try:
            return self.client.query(query)
        except PrometheusError as exc:
            raise MetricsError(f"unable to fetch metrics from {api}: {exc}") from None


def label_matchers(selector: LabelSelector | None) -> list[str]:
    """A metric label selector as PromQL matchers; MetricsError for what PromQL can't say (Gt, Lt)."""
    out = []
    for r in selector.requirements if selector is not None else ():
        values = [_escape(v) for v in r.values]
        if r.operator in ("In", "NotIn"):
            negate = r.operator == "NotIn"
            if len(values) == 1:
                out.append(f'{r.key}{"!=" if negate else "="}"{values[0]}"')
            else:
                out.append(f'{r.key}{"!~" if negate else "=~"}"{_alternation(list(r.values))}"')
        elif r.operator == "Exists":
            out.append(f'{r.key}=~".+"')
        elif r.operator == "DoesNotExist":
            out.append(f'{r.key}=""')
        else:
            raise MetricsError(f"metric selector operator {r.operator} on {r.key} has no PromQL equivalent")
    return out


def _escape(value: str) -> str:
    """A PromQL double-quoted string's content."""
    return value.replace("\\", "\\\\").replace('"', '\\"')


def _alternation(values: Sequence[str]) -> str:
    """``a|b`` as an RE2 regex inside a PromQL string: metacharacters escaped, then the string's escapes."""
    special = set(".^$*+?()[]{}|\\/")
    regex = "|".join("".join(f"\\{c}" if c in special else c for c in v) for v in values)
    return _escape(regex)


def _cpu_milli(cores: float) -> int:
    # metrics-server keeps whole nanocores; MilliValue() then rounds up (so 0.1 cores is 100, not 101).
    nanos = int(cores * 1e9)
    return -(-nanos // 1_000_000)


def _duration(seconds: float) -> str:
    return f"{int(seconds)}s" if seconds == int(seconds) else f"{int(seconds * 1000)}ms"
