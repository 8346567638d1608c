"""``kubetide run cluster-autoscaler``: Cluster Autoscaler's loop against a real cluster.

Takes CA's command line (every flag of :mod:`kubetide.cluster.options` with CA's names and defaults,
plus the live flags every ``run`` shares), builds the loop from watch caches (the world), the live
cluster port and the cloud provider, and runs it with the shared
:class:`~kubetide.runners.ClusterAutoscalerRunner` under :class:`~kubetide.commands.run.runtime.Runtime`
(leader election, the real-time clock, ``/health-check``); each loop's result goes to
:class:`~kubetide.live.cluster_autoscaler.reporter.CALoopReporter` (``/metrics`` with CA's metric
names, log lines, the status ConfigMap, and the plan served at ``/debug/plan`` for
``kubetide explain --cluster``).
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import replace

from kubetide.clock import Clock
from kubetide.cloud.provider import CloudProvider
from kubetide.cluster.driver import ClusterAutoscalerDriver
from kubetide.cluster.flags import CA_FLAGS, FlagSpec
from kubetide.cluster.options import AutoscalingOptions
from kubetide.commands.run.aws import aws_flags, build_aws, check_at_start
from kubetide.commands.run.common import connect, exit_invalid, file_problems, start_caches
from kubetide.commands.run.help import render_help
from kubetide.commands.run.logs import configure_logging
from kubetide.commands.run.runtime import HealthLimits, Runtime
from kubetide.commands.run.settings import leader_flags, leader_from, live_flags, parse_line, settings_from
from kubetide.commands.run.shadow import shadow_flags, shadow_problems, shadow_provider_gate, shadow_settings
from kubetide.commands.run.shadow_ca import ShadowCAComponent
from kubetide.kube.client import KubeAccessError, RequestHook, make_client
from kubetide.kube.events import uid_lookup
from kubetide.kube.rest import Rest
from kubetide.live.actuation import KubeClusterPort
from kubetide.live.cluster_autoscaler.metrics import CAMetrics
from kubetide.live.cluster_autoscaler.published import PAGE_PATH, PublishedPlans
from kubetide.live.cluster_autoscaler.reporter import CALoopReporter, StatusAmendment
from kubetide.live.cluster_autoscaler.status_configmap import StatusConfigMap
from kubetide.live.cluster_autoscaler.world import CAWorldSource
from kubetide.live.guard import (
    GuardedCloud,
    GuardedClusterPort,
    GuardedStatusConfigMap,
    WriteGate,
    read_only_hook,
    recorder_type,
)
from kubetide.live.providers.kwok import KwokConfigError, build_kwok_provider
from kubetide.runners import ClusterAutoscalerRunner

__all__ = ["REGISTRY", "main"]

COMPONENT = "cluster-autoscaler"
PROVIDERS = ("kwok", "aws")

_LIVE: list[FlagSpec] = [
    *live_flags(),
    *leader_flags(
        enabled=True,
        name_flag="leader-elect-resource-name",
        name="cluster-autoscaler",
        namespace_flag=None,  # CA keeps its Lease in --namespace
        namespace="kube-system",
    ),
    FlagSpec("emit-per-nodegroup-metrics", "bool", False, "per node group min/max/target/backoff gauges"),
    *aws_flags(),
    *shadow_flags(),
]
REGISTRY: dict[str, FlagSpec] = {**CA_FLAGS, **{s.name: s for s in _LIVE}}
USAGE = "kubetide run cluster-autoscaler [CA FLAGS]"
INTRO = (
    "Cluster Autoscaler's loop against the cluster kubectl would use. Flags are Cluster Autoscaler's\n"
    "(names, defaults, units). --cloud-provider=kwok --cloud-config=FILE manages node groups of Node\n"
    "objects kubetide creates (for test clusters and dry runs); run `kubetide node-agent` beside it.\n"
    "--cloud-provider=aws manages Auto Scaling groups (--nodes=MIN:MAX:ASG,\n"
    "--node-group-auto-discovery=asg:tag=...), region from --aws-region or $AWS_REGION.\n"
    "--shadow --shadow-dir=DIR runs it beside the cluster's own autoscaler with read-only\n"
    "permissions (deploy/shadow): it decides every loop, changes nothing, and records where the two\n"
    "disagree in DIR; `kubetide shadow report DIR` draws them."
)


def main(argv: Sequence[str]) -> None:
    parsed = parse_line(argv, REGISTRY)
    if parsed.help:
        print(render_help(USAGE, INTRO, REGISTRY))
        return
    values = parsed.values
    problems = list(parsed.problems)
    if values["cloud-provider"] not in PROVIDERS:
        problems.append(
            (
                "cloud-provider",
                f"{values['cloud-provider']!r} is not available: use one of {', '.join(PROVIDERS)}",
            )
        )
    if values["cloud-provider"] == "kwok" and not values["cloud-config"]:
        problems.append(
            ("cloud-config", "the kwok provider needs its node groups file (--cloud-config FILE)")
        )
    problems += shadow_problems(parsed, period_flag="scan-interval", period=float(values["scan-interval"]))
    if problems:
        exit_invalid(COMPONENT, problems)
    options = AutoscalingOptions.from_flags({k: v for k, v in values.items() if k in CA_FLAGS})
    shadow = shadow_settings(values)
    # CA keeps its Lease in --namespace; a shadow takes none.
    leader = leader_from(values, name_flag="leader-elect-resource-name", namespace=options.namespace)
    if shadow is not None:
        leader = replace(leader, enabled=False)
    settings = settings_from(COMPONENT, parsed, address=options.address, leader=leader)
    configure_logging(
        settings.logging_format,
        settings.verbosity,
        COMPONENT,
        library_level=settings.library_log_level,
    )
    # One gate for every write of the process: its ports', and the kwok provider's own at refresh. It
    # asks the runtime (made below, once the provider's flags are known good) whether this replica leads.
    gate = WriteGate(COMPONENT, lambda: runtime.may_act(), dry_run=settings.dry_run)
    # A shadow's every request passes the read-only rule before it is sent.
    on_request = None if shadow is None else read_only_hook(COMPONENT, allow_events=shadow.events)
    # The provider first: its flag problems exit 2 before the cluster is contacted.
    if values["cloud-provider"] == "aws":
        provider: CloudProvider = build_aws(
            COMPONENT,
            nodes=options.nodes,
            auto_discovery=options.node_group_auto_discovery,
            region=str(values["aws-region"]),
            endpoint_url=str(values["aws-endpoint-url"]),
            price_file=str(values["aws-price-file"]),
        )
        check_at_start(
            COMPONENT,
            provider,
            group_sources={},  # every named group comes from --nodes
            missing_is_fatal=settings.once,
            priced="price" in options.expanders,
        )
    else:
        kwok_gate = gate if shadow is None else shadow_provider_gate(COMPONENT)
        provider = _kwok(options, settings.kubeconfig, kwok_gate, on_request)
    rest = connect(COMPONENT, settings.kubeconfig, on_request)
    runtime = Runtime(
        settings,
        rest,
        HealthLimits(options.max_inactivity, options.max_failing_time, options.max_startup_time),
    )
    if shadow is not None:
        sys.exit(runtime.run(ShadowCAComponent(rest, options, provider, shadow, runtime)))
    component = ClusterAutoscalerComponent(
        rest, options, provider, runtime, gate, per_nodegroup=bool(values["emit-per-nodegroup-metrics"])
    )
    sys.exit(runtime.run(component))


def _kwok(
    options: AutoscalingOptions, kubeconfig: str | None, gate: WriteGate, on_request: RequestHook | None
) -> CloudProvider:
    try:
        return build_kwok_provider(
            options.cloud_config,
            options.nodes,
            namespace=options.namespace,
            client=make_client(kubeconfig, field_manager="kubetide-kwok", on_request=on_request),
            gate=gate,
        )
    except KwokConfigError as exc:
        exit_invalid(COMPONENT, file_problems("cloud-config", exc.errors))
    except KubeAccessError as exc:
        print(f"kubetide run {COMPONENT}: {exc}", file=sys.stderr)
        sys.exit(1)


class ClusterAutoscalerComponent:
    """The caches, ports, driver and runner of one CA process."""

    def __init__(
        self,
        rest: Rest,
        options: AutoscalingOptions,
        provider: CloudProvider,
        runtime: Runtime,
        gate: WriteGate,
        *,
        per_nodegroup: bool,
    ) -> None:
        self.rest = rest
        self.options = options
        self.gate = gate
        self.cloud = GuardedCloud(provider, self.gate)
        self.provider = provider
        self.metrics = CAMetrics(per_nodegroup=per_nodegroup)
        self.status_map = GuardedStatusConfigMap(
            StatusConfigMap(rest, options.namespace, options.status_config_map_name), self.gate
        )
        self.world: CAWorldSource | None = None
        self.reporter: CALoopReporter | None = None
        self.published = PublishedPlans(mode="dry-run" if runtime.settings.dry_run else "acting")
        runtime.serve(PAGE_PATH, self.published.page)

    def start(self, stop: threading.Event, clock: Clock) -> ClusterAutoscalerRunner | None:
        versions, world = start_caches(
            COMPONENT,
            self.rest,
            stop,
            lambda v: CAWorldSource(self.rest, v, namespace=self.options.namespace, options=self.options),
        )
        if world is None:
            return None
        self.world = world
        recorder = recorder_type(self.gate)(
            self.rest, COMPONENT, uid_of=uid_lookup(world.nodes, world.pods, world.config_maps)
        )
        port = KubeClusterPort(self.rest, versions, component=COMPONENT, events=recorder)
        guarded = GuardedClusterPort(port, self.gate)
        driver = ClusterAutoscalerDriver(
            world, self.cloud, guarded, self.options, now=clock.now, stopwatch=time.perf_counter
        )
        amendment: StatusAmendment | None = None
        if self.provider.name() == "aws":
            from kubetide.commands.run.aws_watch import AwsLoopReport
            from kubetide.live.providers.aws import AwsCloudProvider

            status_map = f"ConfigMap/{self.options.namespace}/{self.options.status_config_map_name}"
            if isinstance(self.provider, AwsCloudProvider):
                amendment = AwsLoopReport(
                    self.provider,
                    priced="price" in self.options.expanders,
                    emit=lambda type_, reason, message: recorder.emit(type_, reason, status_map, message),
                )
        self.reporter = CALoopReporter(
            self.metrics,
            self.provider,
            self.options,
            self.status_map,
            amendment,
            published=self.published,
            world_of_loop=lambda: driver.last_world,
        )
        # The live metrics count a drain's deletions when they happen, not in the next loop.
        return ClusterAutoscalerRunner(
            driver, clock, self.options.scan_interval, self.reporter, carry_deletions=False
        )

    def report(self) -> str:
        return self.reporter.report() if self.reporter is not None else "no loop ran"

    def unsynced(self) -> list[str]:
        return self.world.unsynced() if self.world is not None else []

    def stop(self) -> None:
        if self.world is not None:
            self.world.stop()
