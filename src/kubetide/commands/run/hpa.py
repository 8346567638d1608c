"""``kubetide run hpa``: the HPA controller against a real cluster, kube-controller-manager's flags.

By default it reconciles kubetide's own ``autoscaling.kubetide.io/v1`` HorizontalPodAutoscalers (per-HPA
tolerance and sync period, scale to zero), so it runs beside a managed control plane's built-in
controller; ``--standard-hpas`` takes the standard objects instead. Metrics come from the metrics APIs
or, with ``--prometheus-url``, straight from Prometheus. Each due HPA is reconciled by the same
:class:`~kubetide.hpa.driver.HPADriver` and :class:`~kubetide.runners.HPARunner` the simulator runs;
:class:`~kubetide.live.hpa.reporter.HPALoopReporter` exports the metrics and logs each rescale, and what
it decided and the memory it decides with are published (:mod:`kubetide.live.hpa.published`:
``/debug/hpa``, ``-v=4``, the memory ConfigMap restored at each leadership term).
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

from kubetide.clock import Clock
from kubetide.cluster.flags import FlagSpec
from kubetide.commands.run.common import connect, exit_invalid, start_caches
from kubetide.commands.run.help import render_help
from kubetide.commands.run.logs import configure_logging
from kubetide.commands.run.runtime import HealthLimits, Runtime
from kubetide.commands.run.settings import leader_flags, leader_from, live_flags, parse_line, settings_from
from kubetide.commands.run.shadow import ShadowSettings, shadow_flags, shadow_problems, shadow_settings
from kubetide.hpa.config import HPAConfig
from kubetide.hpa.driver import HPADriver, Synced
from kubetide.hpa.flags import HPA_FLAGS, config_from_flags
from kubetide.hpa.memory import DEFAULT_CONFIGMAP, DEFAULT_CONFIGMAP_NAMESPACE
from kubetide.hpa.ports import MetricsSource
from kubetide.kube.events import EventRecorder, uid_lookup
from kubetide.kube.rest import Rest
from kubetide.live.guard import (
    GuardedHPAs,
    GuardedMemoryConfigMap,
    GuardedScaleTargets,
    WriteGate,
    read_only_hook,
    recorder_type,
)
from kubetide.live.hpa.api import KubeApi
from kubetide.live.hpa.controller_metrics import HPAControllerMetrics
from kubetide.live.hpa.hpas import ApiHPAObjects
from kubetide.live.hpa.live_ports import NamespacedPods, PodCache
from kubetide.live.hpa.loop_source import LoopHPASource
from kubetide.live.hpa.memory_configmap import MemoryConfigMap
from kubetide.live.hpa.metrics_api import ApiMetricsSource
from kubetide.live.hpa.prometheus.client import PrometheusClient, url_problem
from kubetide.live.hpa.prometheus.rules import RulesConfig, RulesError, load_rules
from kubetide.live.hpa.prometheus.source import PrometheusMetricsSource
from kubetide.live.hpa.published import PublishedState
from kubetide.live.hpa.reporter import HPALoopReporter
from kubetide.live.hpa.scale import ApiScaleTargets
from kubetide.live.shadow.events import RunningEvents, event_lister
from kubetide.live.shadow.hpa_shadow import HPAShadow, ListingKept, VirtualScales
from kubetide.live.shadow.journal import Journal
from kubetide.live.shadow.shadow import ShadowRecorder, ShadowRunner
from kubetide.model.validation.names import dns1123_label, dns1123_subdomain
from kubetide.runners import HPARunner
from kubetide.runners.hpa import live_tick

__all__ = ["REGISTRY", "main"]

COMPONENT = "horizontal-pod-autoscaler"


def _positive(value: float) -> str | None:
    return "must be > 0" if value <= 0 else None


def _name_check(check: Callable[[str], tuple[str, ...]]) -> Callable[[str], str | None]:
    return lambda value: "; ".join(check(value)) or None if value else None


_OWN: list[FlagSpec] = [
    *(FlagSpec(f.name, f.kind, f.default, f.help, check=f.check) for f in HPA_FLAGS),
    FlagSpec("address", "string", ":8086", "host:port for /metrics and /health-check"),
    FlagSpec(
        "standard-hpas",
        "bool",
        False,
        "reconcile the standard autoscaling/v2 (or v2beta2) HPAs, not kubetide's",
    ),
    FlagSpec(
        "prometheus-url",
        "string",
        "",
        "read metrics straight from this Prometheus instead of the metrics APIs",
        check=lambda url: url_problem(url) if url else None,
    ),
    FlagSpec(
        "prometheus-rules", "string", "", "custom/external metric rules, prometheus-adapter's rules: format"
    ),
    FlagSpec(
        "prometheus-rate-window",
        "duration",
        60.0,
        "the rate() window of the default CPU query",
        check=_positive,
    ),
    FlagSpec(
        "memory-configmap",
        "string",
        DEFAULT_CONFIGMAP,
        "the ConfigMap that keeps each HPA's recommendations and scale events across restarts and "
        "changes of leader (hpa explain --cluster reads it); empty: memory in the process only, as "
        "kube-controller-manager",
        check=_name_check(dns1123_subdomain),
    ),
    FlagSpec(
        "memory-configmap-namespace",
        "string",
        DEFAULT_CONFIGMAP_NAMESPACE,
        "the namespace of --memory-configmap",
        check=_name_check(dns1123_label),
    ),
    *live_flags(),
    *shadow_flags(),
    *leader_flags(
        enabled=True,
        name_flag="leader-elect-resource-name",
        name="kubetide-hpa",
        namespace_flag="leader-elect-resource-namespace",
        namespace="kube-system",
    ),
]
REGISTRY: dict[str, FlagSpec] = {s.name: s for s in _OWN}
USAGE = "kubetide run hpa [FLAGS]"
INTRO = (
    "The HPA controller, deciding exactly as kube-controller-manager's. It reconciles kubetide's\n"
    "HorizontalPodAutoscalers (autoscaling.kubetide.io/v1, `kubectl get khpa`; install the CRD from\n"
    "deploy/) or, with --standard-hpas, the standard ones (run kube-controller-manager with\n"
    "--controllers=*,-horizontalpodautoscaling then). --shadow --shadow-dir=DIR decides beside the\n"
    "controller that acts (the standard one with --standard-hpas), changes nothing, and records where\n"
    "the desired replicas differ in DIR (`kubetide shadow report DIR`)."
)


def main(argv: Sequence[str]) -> None:
    parsed = parse_line(argv, REGISTRY)
    if parsed.help:
        print(render_help(USAGE, INTRO, REGISTRY))
        return
    v = parsed.values
    problems = list(parsed.problems)
    rules: RulesConfig | None = None
    if v["prometheus-rules"] and not v["prometheus-url"]:
        problems.append(("prometheus-rules", "needs --prometheus-url (the rules are Prometheus queries)"))
    elif v["prometheus-rules"]:
        try:
            rules = load_rules(str(v["prometheus-rules"]))
        except RulesError as exc:
            problems += [
                (f"prometheus-rules {e.path}" if e.path else "prometheus-rules", e.message)
                for e in exc.errors
            ]
    problems += shadow_problems(
        parsed,
        period_flag="horizontal-pod-autoscaler-sync-period",
        period=float(v["horizontal-pod-autoscaler-sync-period"]),
    )
    if problems:
        exit_invalid("hpa", problems)
    config = config_from_flags({f.name: float(v[f.name]) for f in HPA_FLAGS})
    shadow = shadow_settings(v)
    leader = leader_from(
        v, name_flag="leader-elect-resource-name", namespace=str(v["leader-elect-resource-namespace"])
    )
    if shadow is not None:  # a shadow takes no Lease
        leader = replace(leader, enabled=False)
    settings = settings_from(COMPONENT, parsed, address=str(v["address"]), leader=leader)
    configure_logging(
        settings.logging_format, settings.verbosity, "hpa", library_level=settings.library_log_level
    )
    on_request = None if shadow is None else read_only_hook(COMPONENT, allow_events=shadow.events)
    rest = connect("hpa", settings.kubeconfig, on_request)
    runtime = Runtime(settings, rest, HealthLimits())
    component = HPAComponent(rest, config, runtime, v, rules, shadow)
    sys.exit(runtime.run(component))


class _Events:
    """The HPA's EventPort over the recorder (source component ``horizontal-pod-autoscaler``)."""

    def __init__(self, recorder: EventRecorder) -> None:
        self.recorder = recorder

    def emit_event(self, type_: str, reason: str, obj: str, message: str) -> None:
        self.recorder.emit(type_, reason, obj, message)


class _PublishingReporter(HPALoopReporter):
    """The live reporter, and the published state: a new leadership term restores the memory the last
    leader kept before the driver decides; each tick's syncs are published after."""

    def __init__(self, metrics: HPAControllerMetrics, published: PublishedState, runtime: Runtime) -> None:
        super().__init__(metrics)
        self.published = published
        self.runtime = runtime
        self.driver: HPADriver | None = None
        self._term = -1  # the leadership term whose memory the driver holds

    def loop_started(self, now: float) -> None:
        if self.driver is not None and self.runtime.terms != self._term:
            self._term = self.runtime.terms
            self.published.restore(self.driver)

    def loop_finished(self, synced: tuple[Synced, ...], now: float) -> None:
        super().loop_finished(synced, now)
        if self.driver is not None:
            self.published.observe(synced, self.driver, now)


class HPAComponent:
    """The pod cache, ports, driver and runner of one HPA controller process."""

    def __init__(
        self,
        rest: Rest,
        config: HPAConfig,
        runtime: Runtime,
        values: Mapping[str, object],
        rules: RulesConfig | None,
        shadow: ShadowSettings | None = None,
    ) -> None:
        self.rest = rest
        self.config = config
        self.runtime = runtime
        self.values = values
        self.rules = rules
        self.shadow = shadow
        self.pods: PodCache | None = None
        dry_run = runtime.settings.dry_run
        self.gate = WriteGate(COMPONENT, runtime.may_act, dry_run=dry_run, shadow=shadow is not None)
        name = str(values["memory-configmap"])
        # A shadow keeps its memory to itself: the memory ConfigMap is the acting controller's.
        memory = (
            MemoryConfigMap(rest, str(values["memory-configmap-namespace"]), name)
            if name and not shadow
            else None
        )
        self.published = PublishedState(
            config,
            GuardedMemoryConfigMap(memory, self.gate) if memory is not None else None,
            mode="shadow" if shadow else "dry-run" if dry_run else "acting",
        )
        self.reporter = _PublishingReporter(HPAControllerMetrics(), self.published, runtime)
        runtime.serve("/debug/hpa", self.published.page)

    def start(self, stop: threading.Event, clock: Clock) -> HPARunner | ShadowRunner | None:
        _, pods = start_caches("hpa", self.rest, stop, lambda versions: PodCache(self.rest, versions))
        if pods is None:
            return None
        self.pods = pods
        api = KubeApi(self.rest)
        store = NamespacedPods(pods.pods)
        gate = self.gate
        targets = GuardedScaleTargets(ApiScaleTargets(api, store), gate)
        metrics: MetricsSource
        url = str(self.values["prometheus-url"])
        if url:
            metrics = PrometheusMetricsSource(
                PrometheusClient(url),
                targets.list_pods,
                self.rules,
                window_s=float(str(self.values["prometheus-rate-window"])),
            )
        else:
            metrics = ApiMetricsSource(api)
        source = ApiHPAObjects(api, standard=bool(self.values["standard-hpas"]))
        pod_uid = uid_lookup(pods.pods)

        def uid_of(kind: str, namespace: str, name: str) -> str | None:
            # kubectl describe finds an object's events by its uid.
            if kind == "HorizontalPodAutoscaler":
                return source.uid(namespace, name)
            if kind.startswith("HorizontalPodAutoscaler."):  # the other kind's HPA in a conflict
                return source.other_uid(namespace, name)
            return pod_uid(kind, namespace, name)

        recorder = recorder_type(gate)(
            self.rest, COMPONENT, uid_of=uid_of, api_versions={"HorizontalPodAutoscaler": source.api_version}
        )
        events = _Events(recorder)
        hpas = GuardedHPAs(LoopHPASource(source, events), gate)
        # The driver decides per HPA when it is due; ticking every 2 s at most honours short per-HPA
        # periods without listing the HPAs more often than that. The tick divides the sync period and
        # an HPA due within half a tick is due at it (the wall clock hands a tick a little after its
        # time): each HPA syncs every period, not at the first tick after it (16 s for 15 s).
        period = live_tick(self.config.sync_period)
        if self.shadow is not None:
            return self._shadow(self.shadow, hpas, metrics, targets, events, clock, period)
        driver = HPADriver(
            hpas, metrics, targets, events, self.config, timer=time.perf_counter, early=period / 2
        )
        self.reporter.driver = driver
        return HPARunner(driver, clock, period, self.reporter)

    def _shadow(
        self,
        shadow: ShadowSettings,
        hpas: GuardedHPAs,
        metrics: MetricsSource,
        targets: GuardedScaleTargets,
        events: _Events,
        clock: Clock,
        period: float,
    ) -> ShadowRunner:
        """A shadow driver (nothing written) over the cluster's HPAs, deciding on kubetide's own replica
        counts, compared with the HPAs' statuses and the running controller's rescale Events."""
        listing = ListingKept(hpas)
        scales = VirtualScales(targets)
        driver = HPADriver(
            listing,
            metrics,
            scales,
            events,
            self.config,
            timer=time.perf_counter,
            shadow=True,
            early=period / 2,
        )
        recorder = ShadowRecorder(
            COMPONENT,
            "the HPA controller",
            Journal(shadow.directory),
            shadow.window,
            say=events.recorder.emit if shadow.events else None,
            target=lambda d: f"HorizontalPodAutoscaler/{d.subject}",
        )
        running = RunningEvents(event_lister(self.rest, COMPONENT), "the HPA controller")
        return ShadowRunner(HPAShadow(driver, listing, recorder, scales, running), clock, period)

    def report(self) -> str:
        return self.reporter.report()

    def unsynced(self) -> list[str]:
        # The HPAs themselves are listed from the API server each loop; the pods come from the cache.
        return self.pods.unsynced() if self.pods is not None else []

    def stop(self) -> None:
        if self.pods is not None:
            self.pods.stop()
