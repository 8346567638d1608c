"""``kubetide run cluster-autoscaler``: Cluster Autoscaler's loop against a real cluster.

Takes CA's command line (every flag of :mod:`kubetide.cluster.options` with CA's names and defaults,
plus the live flags every ``run`` shares), builds the loop from watch caches (the world), the live
cluster port and the cloud provider, and runs it with :class:`~kubetide.commands.run.runtime.Runtime`:
leader election, ``/metrics`` with CA's metric names, ``/health-check``, the status ConfigMap.
"""

from __future__ import annotations

import logging
import sys
import threading
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

from kubetide.cloud.provider import CloudProvider
from kubetide.cluster.driver import ClusterAutoscalerDriver
from kubetide.cluster.flags import CA_FLAGS, FlagSpec
from kubetide.cluster.loop.world import LoopResult
from kubetide.cluster.options import AutoscalingOptions
from kubetide.cluster.status import format_last_updated, format_rfc3339, render_status_yaml
from kubetide.commands.run.aws import aws_flags, build_aws, check_at_start
from kubetide.commands.run.common import connect, exit_invalid, file_problems, start_caches
from kubetide.commands.run.help import render_help
from kubetide.commands.run.logs import configure_logging
from kubetide.commands.run.runtime import HealthLimits, Runtime
from kubetide.commands.run.settings import leader_flags, leader_from, live_flags, parse_line, settings_from
from kubetide.kube.client import KubeAccessError
from kubetide.kube.events import uid_lookup
from kubetide.kube.loop import LoopFailed
from kubetide.kube.rest import KubeStatusError, Rest
from kubetide.live.actuation import KubeClusterPort
from kubetide.live.cluster_autoscaler.metrics import CAMetrics
from kubetide.live.cluster_autoscaler.status_configmap import StatusConfigMap
from kubetide.live.cluster_autoscaler.world import CAWorldSource
from kubetide.live.guard import (
    GuardedCloud,
    GuardedClusterPort,
    GuardedStatusConfigMap,
    LeadershipLost,
    WriteGate,
    recorder_type,
)
from kubetide.live.providers.kwok import KwokConfigError, build_kwok_provider

if TYPE_CHECKING:
    from kubetide.commands.run.aws_watch import AwsLoopReport

__all__ = ["REGISTRY", "main"]

COMPONENT = "cluster-autoscaler"
PROVIDERS = ("kwok", "aws")
log = logging.getLogger("kubetide.cluster-autoscaler")

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
]
REGISTRY: dict[str, FlagSpec] = {**CA_FLAGS, **{s.name: s for s in _LIVE}}
USAGE = "kubetide run cluster-autoscaler [CA FLAGS]"
INTRO = (
    "Cluster Autoscaler's loop against the cluster kubectl would use. Flags are Cluster Autoscaler's\n"
    "(names, defaults, units). --cloud-provider=kwok --cloud-config=FILE manages node groups of Node\n"
    "objects kubetide creates (for test clusters and dry runs); run `kubetide node-agent` beside it.\n"
    "--cloud-provider=aws manages Auto Scaling groups (--nodes=MIN:MAX:ASG,\n"
    "--node-group-auto-discovery=asg:tag=...), region from --aws-region or $AWS_REGION."
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
    if problems:
        exit_invalid(COMPONENT, problems)
    options = AutoscalingOptions.from_flags({k: v for k, v in values.items() if k in CA_FLAGS})
    # CA keeps its Lease in --namespace.
    leader = leader_from(values, name_flag="leader-elect-resource-name", namespace=options.namespace)
    settings = settings_from(COMPONENT, parsed, address=options.address, leader=leader)
    configure_logging(
        settings.logging_format,
        settings.verbosity,
        COMPONENT,
        library_level=settings.library_log_level,
    )
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
        provider = _kwok(options, settings.kubeconfig, settings.dry_run)
    rest = connect(COMPONENT, settings.kubeconfig)
    runtime = Runtime(
        settings,
        rest,
        HealthLimits(options.max_inactivity, options.max_failing_time, options.max_startup_time),
    )
    component = ClusterAutoscalerComponent(
        rest, options, provider, runtime, per_nodegroup=bool(values["emit-per-nodegroup-metrics"])
    )
    sys.exit(runtime.run(component))


def _kwok(options: AutoscalingOptions, kubeconfig: str | None, dry_run: bool) -> CloudProvider:
    try:
        return build_kwok_provider(
            options.cloud_config,
            options.nodes,
            namespace=options.namespace,
            kubeconfig=kubeconfig,
            dry_run=dry_run,
        )
    except KwokConfigError as exc:
        exit_invalid(COMPONENT, file_problems("cloud-config", exc.errors))
    except KubeAccessError as exc:
        print(f"kubetide run {COMPONENT}: {exc}", file=sys.stderr)
        sys.exit(1)


class ClusterAutoscalerComponent:
    """The caches, ports and driver of one CA process."""

    def __init__(
        self,
        rest: Rest,
        options: AutoscalingOptions,
        provider: CloudProvider,
        runtime: Runtime,
        *,
        per_nodegroup: bool,
    ) -> None:
        self.rest = rest
        self.options = options
        self.runtime = runtime
        self.gate = WriteGate(COMPONENT, runtime.may_act, dry_run=runtime.settings.dry_run)
        self.cloud = GuardedCloud(provider, self.gate)
        self.provider = provider
        self.period = options.scan_interval
        self.metrics = CAMetrics(per_nodegroup=per_nodegroup)
        self.status_map = GuardedStatusConfigMap(
            StatusConfigMap(rest, options.namespace, options.status_config_map_name), self.gate
        )
        self.world: CAWorldSource | None = None
        self.driver: ClusterAutoscalerDriver | None = None
        self.last: LoopResult | None = None
        # Drain steps due between loops (the end of --node-delete-delay-after-taint, an eviction retry, a
        # look for the evicted pods): a timer wakes the loop thread at that time, and the woken tick runs
        # only the deletions pass, as CA's drain goroutine would.
        self._deletions_due: float | None = None
        self._deletion_wake = threading.Event()  # set by the timer: the next tick is the deletions pass
        self._timer: threading.Timer | None = None
        self.aws_report: AwsLoopReport | None = None

    def start(self, stop: threading.Event) -> bool:
        versions, world = start_caches(
            COMPONENT,
            self.rest,
            stop,
            lambda v: CAWorldSource(self.rest, v, namespace=self.options.namespace),
        )
        if world is None:
            return False
        self.world = world
        recorder = recorder_type(self.gate)(
            self.rest, COMPONENT, uid_of=uid_lookup(world.nodes, world.pods, world.config_maps)
        )
        port = KubeClusterPort(self.rest, versions, component=COMPONENT, events=recorder)
        guarded = GuardedClusterPort(port, self.gate)
        self.driver = ClusterAutoscalerDriver(
            world, self.cloud, guarded, self.options, now=time.time(), stopwatch=time.perf_counter
        )
        if self.provider.name() == "aws":
            from kubetide.commands.run.aws_watch import AwsLoopReport
            from kubetide.live.providers.aws import AwsCloudProvider

            status_map = f"ConfigMap/{self.options.namespace}/{self.options.status_config_map_name}"
            if isinstance(self.provider, AwsCloudProvider):
                self.aws_report = AwsLoopReport(
                    self.provider,
                    priced="price" in self.options.expanders,
                    emit=lambda type_, reason, message: recorder.emit(type_, reason, status_map, message),
                )
        return True

    def tick(self, now: float) -> None:
        assert self.driver is not None
        if self._deletion_wake.is_set():
            self._deletion_wake.clear()
            self._deletions(now)  # woken for deletions between loops: nothing else
            return
        started = time.monotonic()
        self.metrics.loop_started(now)
        result = self.driver.tick(now)
        self.last = result
        self.metrics.loop_finished(result, now, time.monotonic() - started, self.provider)
        log.debug(
            "loop: scale-up %s, scale-down %s, unneeded %s, unremovable %s",
            result.scale_up_result or "-",
            result.scale_down_result or "-",
            sorted(result.unneeded),
            dict(sorted(result.unremovable.items())),
        )
        _log_events(result)
        status = result.status
        if status is not None and self.aws_report is not None:
            status = self.aws_report.status(status)
        if status is not None and self.options.write_status_configmap:
            try:
                self.status_map.write(render_status_yaml(status, now), format_last_updated(now))
            except LeadershipLost as exc:
                log.debug("status ConfigMap not written: %s", exc)
            except KubeStatusError as exc:
                log.warning("status ConfigMap not written: %s", exc)
        if self.aws_report is not None:
            self.aws_report.after_loop()
        for problem in result.write_problems:
            log.warning("%s", problem)
        self._wake_for_deletions(result, now)
        if result.error is not None:
            raise LoopFailed(result.error)

    def _deletions(self, now: float) -> None:
        assert self.driver is not None
        result = self.driver.deletions(now, carry=False)
        self.metrics.deletions_finished(result, now)
        _log_events(result)
        if result.error is not None:
            log.warning("deletions between loops: %s", result.error)
        self._wake_for_deletions(result, now)

    def _wake_for_deletions(self, result: LoopResult, now: float) -> None:
        """Upstream drains a tainted node in its own goroutine, which sleeps between its steps; wake the
        loop thread at the next step, so the drain is not put off to the next scan."""
        due = result.deletions_due_at
        if due is None or due <= now:
            return
        if self._timer is not None and self._deletions_due is not None and now < self._deletions_due <= due:
            return  # a wake at or before it is already set
        if self._timer is not None:
            self._timer.cancel()
        self._deletions_due = due
        self._timer = threading.Timer(due - now, self._wake)
        self._timer.daemon = True
        self._timer.start()

    def _wake(self) -> None:
        self._deletion_wake.set()
        self.runtime.wake.set()

    def report(self) -> str:
        r = self.last
        if r is None:
            return "no loop ran"
        lines = [
            f"scale-up: {r.scale_up_result or 'none'}",
            f"scale-down: {r.scale_down_result or 'none'}",
        ]
        lines += [
            f"unneeded: {name} (since {format_rfc3339(since)})" for name, since in sorted(r.unneeded.items())
        ]
        lines += [f"unremovable: {name}: {why}" for name, why in sorted(r.unremovable.items())]
        lines += [f"event {ev.type} {ev.reason} {ev.object}: {ev.message}" for ev in r.events]
        if r.error:
            lines.append(f"error: {r.error}")
        return "\n".join(lines)

    def unsynced(self) -> list[str]:
        return self.world.unsynced() if self.world is not None else []

    def stop(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        if self.world is not None:
            self.world.stop()


def _log_events(result: LoopResult) -> None:
    for ev in result.events:
        log.info(
            "%s %s: %s", ev.reason, ev.object, ev.message, extra={"reason": ev.reason, "object": ev.object}
        )
