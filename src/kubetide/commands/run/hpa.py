"""``kubetide run hpa``: the HPA controller against a real cluster, kube-controller-manager's flags.

By default it reconciles kubetide's own ``autoscaling.kubetide.io/v1`` HorizontalPodAutoscalers (per-HPA
tolerance and sync period, scale to zero), so it runs beside a managed control plane's built-in
controller; ``--standard-hpas`` takes the standard objects instead. Metrics come from the metrics APIs
or, with ``--prometheus-url``, straight from Prometheus. Each due HPA is reconciled by the same
:class:`~kubetide.hpa.driver.HPADriver` and :class:`~kubetide.runners.HPARunner` the simulator runs;
:class:`~kubetide.live.hpa.reporter.HPALoopReporter` exports the metrics and logs each rescale.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Mapping, Sequence

from kubetide.clock import Clock
from kubetide.cluster.flags import FlagSpec
from kubetide.commands.run.common import connect, exit_invalid, start_caches
from kubetide.commands.run.help import render_help
from kubetide.commands.run.logs import configure_logging
from kubetide.commands.run.runtime import HealthLimits, Runtime
from kubetide.commands.run.settings import leader_flags, leader_from, live_flags, parse_line, settings_from
from kubetide.hpa.config import HPAConfig
from kubetide.hpa.driver import HPADriver
from kubetide.hpa.flags import HPA_FLAGS, config_from_flags
from kubetide.hpa.ports import MetricsSource
from kubetide.kube.events import EventRecorder, uid_lookup
from kubetide.kube.rest import Rest
from kubetide.live.guard import GuardedHPAs, GuardedScaleTargets, WriteGate, recorder_type
from kubetide.live.hpa.api import KubeApi
from kubetide.live.hpa.controller_metrics import HPAControllerMetrics
from kubetide.live.hpa.hpas import ApiHPAObjects
from kubetide.live.hpa.live_ports import NamespacedPods, PodCache
from kubetide.live.hpa.loop_source import LoopHPASource
from kubetide.live.hpa.metrics_api import ApiMetricsSource
from kubetide.live.hpa.prometheus.client import PrometheusClient, url_problem
from kubetide.live.hpa.prometheus.rules import RulesConfig, RulesError, load_rules
from kubetide.live.hpa.prometheus.source import PrometheusMetricsSource
from kubetide.live.hpa.reporter import HPALoopReporter
from kubetide.live.hpa.scale import ApiScaleTargets
from kubetide.runners import HPARunner

__all__ = ["REGISTRY", "main"]

COMPONENT = "horizontal-pod-autoscaler"


def _positive(value: float) -> str | None:
    return "must be > 0" if value <= 0 else None


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
    *live_flags(),
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
    "--controllers=*,-horizontalpodautoscaling then)."
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
    if problems:
        exit_invalid("hpa", problems)
    config = config_from_flags({f.name: float(v[f.name]) for f in HPA_FLAGS})
    leader = leader_from(
        v, name_flag="leader-elect-resource-name", namespace=str(v["leader-elect-resource-namespace"])
    )
    settings = settings_from(COMPONENT, parsed, address=str(v["address"]), leader=leader)
    configure_logging(
        settings.logging_format, settings.verbosity, "hpa", library_level=settings.library_log_level
    )
    rest = connect("hpa", settings.kubeconfig)
    runtime = Runtime(settings, rest, HealthLimits())
    component = HPAComponent(rest, config, runtime, v, rules)
    sys.exit(runtime.run(component))


class _Events:
    """The HPA's EventPort over the recorder (source component ``horizontal-pod-autoscaler``)."""

    def __init__(self, recorder: EventRecorder) -> None:
        self.recorder = recorder

    def emit_event(self, type_: str, reason: str, obj: str, message: str) -> None:
        self.recorder.emit(type_, reason, obj, message)


class HPAComponent:
    """The pod cache, ports, driver and runner of one HPA controller process."""

    def __init__(
        self,
        rest: Rest,
        config: HPAConfig,
        runtime: Runtime,
        values: Mapping[str, object],
        rules: RulesConfig | None,
    ) -> None:
        self.rest = rest
        self.config = config
        self.runtime = runtime
        self.values = values
        self.rules = rules
        self.pods: PodCache | None = None
        self.reporter = HPALoopReporter(HPAControllerMetrics())

    def start(self, stop: threading.Event, clock: Clock) -> HPARunner | None:
        _, pods = start_caches("hpa", self.rest, stop, lambda versions: PodCache(self.rest, versions))
        if pods is None:
            return None
        self.pods = pods
        api = KubeApi(self.rest)
        store = NamespacedPods(pods.pods)
        gate = WriteGate(COMPONENT, self.runtime.may_act, dry_run=self.runtime.settings.dry_run)
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
        driver = HPADriver(hpas, metrics, targets, events, self.config, timer=time.perf_counter)
        # The driver decides per HPA when it is due; ticking every 2 s (or the sync period, when
        # shorter) honours short per-HPA periods without listing the HPAs more often than that.
        return HPARunner(driver, clock, min(2.0, self.config.sync_period), self.reporter)

    def report(self) -> str:
        return self.reporter.report()

    def unsynced(self) -> list[str]:
        # The HPAs themselves are listed from the API server each loop; the pods come from the cache.
        return self.pods.unsynced() if self.pods is not None else []

    def stop(self) -> None:
        if self.pods is not None:
            self.pods.stop()
