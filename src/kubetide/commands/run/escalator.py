"""``kubetide run escalator``: the batch autoscaler (Escalator's loop) against a real cluster.

Takes Escalator's command line (``cmd/main.go``'s flag names and defaults: ``--nodegroups``,
``--address :8080``, ``--scaninterval 60s``, ``--drymode``, ``--loglevel``/``-v``, ``--logfmt``,
``--cloud-provider``, the ``--leader-elect*`` flags) plus kubetide's live flags (``--cloud-config``,
``--dry-run``, ``--once``, ``--logging-format``), reads Escalator's ``node_groups:`` file, and runs
:class:`~kubetide.escalator.driver.EscalatorDriver` every scan interval with the shared
:class:`~kubetide.runners.EscalatorRunner` under :class:`~kubetide.commands.run.runtime.Runtime`: watch
caches of nodes and pods for the world, the live cluster port and the cloud provider behind the guard
(leader check and dry run); :class:`~kubetide.live.escalator.reporter.EscalatorLoopReporter` exports
Escalator's metrics on ``/metrics`` and logs one line per decision. Bad flags and every problem of the
files: exit 2.
"""

from __future__ import annotations

import logging
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from kubetide.clock import Clock
from kubetide.cloud.provider import CloudProvider
from kubetide.cluster.flags import FlagSpec
from kubetide.commands.run.aws import aws_flags, build_aws, check_at_start
from kubetide.commands.run.common import connect, exit_invalid, file_problems, start_caches
from kubetide.commands.run.help import render_help
from kubetide.commands.run.logs import configure_logging
from kubetide.commands.run.runtime import HealthLimits, Runtime
from kubetide.commands.run.settings import LeaderElection, leader_flags, live_flags, parse_line, settings_from
from kubetide.commands.run.shadow import (
    ShadowSettings,
    shadow_flags,
    shadow_problems,
    shadow_provider_gate,
    shadow_settings,
)
from kubetide.escalator import EscalatorDriver, NodeGroupOptions
from kubetide.escalator.config import Location, node_groups_from_entries
from kubetide.kube.client import KubeAccessError, RequestHook, make_client
from kubetide.kube.events import uid_lookup
from kubetide.kube.rest import Rest
from kubetide.live.actuation import KubeClusterPort
from kubetide.live.escalator.metrics import EscalatorMetrics
from kubetide.live.escalator.reporter import EscalatorLoopReporter
from kubetide.live.escalator.world import EscalatorCaches
from kubetide.live.guard import GuardedCloud, GuardedClusterPort, WriteGate, read_only_hook, recorder_type
from kubetide.live.providers.kwok import KwokConfigError, build_kwok_provider, load_cloud_config
from kubetide.live.shadow.escalator_shadow import EscalatorShadow
from kubetide.live.shadow.journal import Journal
from kubetide.live.shadow.shadow import ShadowRecorder, ShadowRunner
from kubetide.model import yamldoc
from kubetide.model.numbers import is_ascii_digits
from kubetide.runners import EscalatorRunner

__all__ = ["REGISTRY", "load_node_groups", "main"]

COMPONENT = "escalator"
PROVIDERS = ("kwok", "aws")


def _positive(value: Any) -> str | None:
    return "must be > 0" if value <= 0 else None


_OWN: list[FlagSpec] = [
    FlagSpec("nodegroups", "string", "", "Config file for nodegroups (Escalator's node_groups: YAML)"),
    FlagSpec("address", "string", ":8080", "Address to listen to for /metrics and /health-check"),
    FlagSpec(
        "scaninterval",
        "duration",
        60.0,
        "How often cluster is reevaluated for scale up or down",
        check=_positive,
    ),
    FlagSpec("loglevel", "int", 4, "logrus level: 4 info, 5 debug (3 warn, 2 error)"),
    FlagSpec(
        "logfmt",
        "string",
        "ascii",
        "Set the format of logging output (json, ascii)",
        choices=("ascii", "json"),
    ),
    FlagSpec("cloud-provider", "string", "aws", "Cloud provider to use: aws (Auto Scaling groups) or kwok"),
    FlagSpec("aws-assume-role-arn", "string", "", "AWS role arn to assume (aws cloud provider only)"),
    FlagSpec("cloud-config", "string", "", "the kwok provider's node groups file"),
    *aws_flags(),
]
_LIVE: list[FlagSpec] = [
    *live_flags(dry_run_alias="drymode"),
    *shadow_flags(),
    *leader_flags(
        enabled=False,
        name_flag="leader-elect-config-name",
        name="escalator-leader-elect",
        namespace_flag="leader-elect-config-namespace",
        namespace="kube-system",
    ),
]
REGISTRY: dict[str, FlagSpec] = {s.name: s for s in [*_OWN, *_LIVE]}
USAGE = "kubetide run escalator --nodegroups FILE [FLAGS]"
INTRO = (
    "Escalator's loop against the cluster kubectl would use, with Escalator's flags and node groups\n"
    "file. --cloud-provider=kwok --cloud-config=FILE scales groups of Node objects kubetide creates\n"
    "(the groups are matched by cloud_provider_group_name); its state ConfigMap lives in\n"
    "--leader-elect-config-namespace. Run `kubetide node-agent` beside it. --shadow --shadow-dir=DIR\n"
    "decides beside the Escalator that acts, changes nothing, and records where the two disagree in DIR\n"
    "(`kubetide shadow report DIR`)."
)


def _path(where: str, location: Location) -> str:
    path = "node_groups"
    for part in location:
        path += f"[{part}]" if isinstance(part, int) else f".{part}"
    return f"{where}: {path}"


def load_node_groups(path: str) -> tuple[list[NodeGroupOptions], list[tuple[str, str]]]:
    """The validated groups of Escalator's node groups file, and every problem with its path."""
    where = f"--nodegroups {path}"
    try:
        (doc,) = yamldoc.load_documents(Path(path).read_text(encoding="utf-8"), path)
    except OSError as exc:
        return [], [(where, f"cannot read: {exc.strerror or exc}")]
    except UnicodeDecodeError:
        return [], [(where, "cannot read: not UTF-8 text")]
    except yamldoc.YamlDocumentError as exc:
        return [], [(where, problem) for problem in exc.problems]
    entries = doc.get("node_groups") if isinstance(doc, dict) else None
    groups, problems = node_groups_from_entries(entries)
    return groups, [(_path(where, location), message) for location, message in problems]


def _provider_problems(values: dict[str, Any], groups: Sequence[NodeGroupOptions]) -> list[tuple[str, str]]:
    provider = values["cloud-provider"]
    if provider == "aws":
        return _aws_problems(values, groups)
    problems: list[tuple[str, str]] = []
    if values["aws-assume-role-arn"]:
        problems.append(("aws-assume-role-arn", "only usable with --cloud-provider=aws"))
    if provider not in PROVIDERS:
        return [*problems, ("cloud-provider", f"{provider!r} is not available: use one of aws, kwok")]
    if not values["cloud-config"]:
        return [
            *problems,
            ("cloud-config", "the kwok provider needs its node groups file (--cloud-config FILE)"),
        ]
    try:
        known = {g.name for g in load_cloud_config(values["cloud-config"])}
    except KwokConfigError as exc:
        return [*problems, *file_problems("cloud-config", exc.errors)]
    for i, g in enumerate(groups):
        if g.cloud_provider_group_name and g.cloud_provider_group_name not in known:
            problems.append(
                (
                    f"--nodegroups {values['nodegroups']}: node_groups[{i}].cloud_provider_group_name",
                    f"{g.cloud_provider_group_name!r} is not a group of --cloud-config"
                    f" (it has: {', '.join(sorted(known)) or 'none'})",
                )
            )
    return problems


def _aws_problems(values: dict[str, Any], groups: Sequence[NodeGroupOptions]) -> list[tuple[str, str]]:
    """What the aws provider cannot do yet, named rather than ignored: Escalator's role assumption and
    its CreateFleet scale-up (an ``aws:`` block with a launch template); the groups are then scaled
    through their desired capacity, as Escalator does without one."""
    problems: list[tuple[str, str]] = []
    if values["aws-assume-role-arn"]:
        problems.append(("aws-assume-role-arn", "not supported by kubetide yet: use the pod's own role"))
    for i, g in enumerate(groups):
        if g.aws.launch_template_id:
            problems.append(
                (
                    f"--nodegroups {values['nodegroups']}: node_groups[{i}].aws.launch_template_id",
                    "scaling up through EC2 fleets is not supported by kubetide yet (leave it out: the "
                    "group is then scaled through its desired capacity)",
                )
            )
    return problems


def _log_level(loglevel: int) -> int:
    """logrus levels (0 panic ... 4 info, 5 debug, 6 trace) as Python's."""
    if loglevel >= 5:
        return logging.DEBUG
    return {4: logging.INFO, 3: logging.WARNING}.get(loglevel, logging.ERROR)


def main(argv: Sequence[str]) -> None:
    parsed = parse_line(argv, REGISTRY)
    if parsed.help:
        print(render_help(USAGE, INTRO, REGISTRY))
        return
    values = parsed.values
    problems = list(parsed.problems)
    # Escalator's -v is --loglevel (logrus), not klog's verbosity.
    loglevel = (
        int(parsed.logging["v"]) if is_ascii_digits(parsed.logging.get("v", "")) else int(values["loglevel"])
    )
    groups: list[NodeGroupOptions] = []
    if not values["nodegroups"]:
        problems.append(("nodegroups", "required: Escalator's node groups file"))
    else:
        groups, file_problems = load_node_groups(str(values["nodegroups"]))
        problems += file_problems
    problems += _provider_problems(values, groups)
    problems += shadow_problems(parsed, period_flag="scaninterval", period=float(values["scaninterval"]))
    if values["shadow"] and values["drymode"]:
        problems.append(("drymode", "not with --shadow: a shadow changes nothing already"))
    if problems:
        exit_invalid(COMPONENT, problems)
    shadow = shadow_settings(values)
    leader = LeaderElection(
        enabled=bool(values["leader-elect"]) and shadow is None,  # a shadow takes no Lease
        name=str(values["leader-elect-config-name"]),
        namespace=str(values["leader-elect-config-namespace"]),
        lease_duration=float(values["leader-elect-lease-duration"]),
        renew_deadline=float(values["leader-elect-renew-deadline"]),
        retry_period=float(values["leader-elect-retry-period"]),
    )
    settings = settings_from(
        COMPONENT, parsed, address=str(values["address"]), leader=leader, dry_run_alias="drymode"
    )
    fmt = "json" if "json" in (values["logfmt"], values["logging-format"]) else "text"
    # Escalator's level is kubetide's own; the libraries' is --library-log-level.
    configure_logging(fmt, 0, COMPONENT, library_level=settings.library_log_level, level=_log_level(loglevel))
    # One gate for every write of the process: its ports', and the kwok provider's own at refresh. It
    # asks the runtime (made below, once the provider's flags are known good) whether this replica leads.
    # A shadow's refuses every write, and its connection every request that is not a read.
    gate = WriteGate(
        COMPONENT,
        lambda: runtime.may_act(),
        dry_run=settings.dry_run or shadow is not None,
        shadow=shadow is not None,
    )
    on_request = None if shadow is None else read_only_hook(COMPONENT, allow_events=shadow.events)
    # The provider first: its flag problems exit 2 before the cluster is contacted.
    if values["cloud-provider"] == "aws":
        # The groups the node-group file names, with the ASGs' own bounds (Escalator's min_nodes and
        # max_nodes are its own limits, checked by its core).
        provider: CloudProvider = build_aws(
            COMPONENT,
            names=[g.cloud_provider_group_name for g in groups if g.cloud_provider_group_name],
            region=str(values["aws-region"]),
            endpoint_url=str(values["aws-endpoint-url"]),
            price_file=str(values["aws-price-file"]),
        )
        # Escalator's start-up fails when a configured cloud_provider_group_name does not exist.
        check_at_start(
            COMPONENT,
            provider,
            group_sources={
                g.cloud_provider_group_name: f"--nodegroups {values['nodegroups']}: "
                f"node_groups[{i}].cloud_provider_group_name"
                for i, g in reversed(list(enumerate(groups)))
            },
            missing_is_fatal=True,
        )
    else:
        kwok_gate = gate if shadow is None else shadow_provider_gate(COMPONENT)
        provider = _kwok(values, leader.namespace, settings.kubeconfig, kwok_gate, on_request)
    rest = connect(COMPONENT, settings.kubeconfig, on_request)
    runtime = Runtime(settings, rest, HealthLimits())
    component = EscalatorComponent(
        rest, groups, provider, runtime, gate, period=float(values["scaninterval"]), shadow=shadow
    )
    sys.exit(runtime.run(component))


def _kwok(
    values: dict[str, Any],
    namespace: str,
    kubeconfig: str | None,
    gate: WriteGate,
    on_request: RequestHook | None,
) -> CloudProvider:
    try:
        # The kwok state ConfigMap beside the Lease: Escalator has no --namespace, and deploy/ grants
        # the ServiceAccount ConfigMaps in that namespace only.
        client = make_client(kubeconfig, field_manager="kubetide-kwok", on_request=on_request)
        return build_kwok_provider(
            str(values["cloud-config"]), (), namespace=namespace, client=client, gate=gate
        )
    except KwokConfigError as exc:
        exit_invalid(COMPONENT, file_problems("cloud-config", exc.errors))
    except KubeAccessError as exc:
        print(f"kubetide run {COMPONENT}: {exc}", file=sys.stderr)
        sys.exit(1)


class EscalatorComponent:
    """The caches, ports, driver and runner of one Escalator process."""

    def __init__(
        self,
        rest: Rest,
        groups: Sequence[NodeGroupOptions],
        provider: CloudProvider,
        runtime: Runtime,
        gate: WriteGate,
        *,
        period: float,
        shadow: ShadowSettings | None = None,
    ) -> None:
        self.rest, self.groups, self.period = rest, tuple(groups), period
        self.shadow = shadow
        # A shadow decides in Escalator's dry mode, behind its gate, which refuses every write.
        self.dry_run = runtime.settings.dry_run or shadow is not None
        self.gate = gate
        self.provider = provider
        self.cloud = GuardedCloud(provider, self.gate)
        self.reporter = EscalatorLoopReporter(EscalatorMetrics(), COMPONENT)
        self.caches: EscalatorCaches | None = None

    def start(self, stop: threading.Event, clock: Clock) -> EscalatorRunner | ShadowRunner | None:
        versions, caches = start_caches(COMPONENT, self.rest, stop, lambda v: EscalatorCaches(self.rest, v))
        if caches is None:
            return None
        self.caches = caches
        recorder = recorder_type(self.gate)(
            self.rest, COMPONENT, uid_of=uid_lookup(caches.node_cache, caches.pod_cache)
        )
        port = KubeClusterPort(self.rest, versions, component=COMPONENT, events=recorder)
        guarded = GuardedClusterPort(port, self.gate)
        driver = EscalatorDriver(self.groups, caches, guarded, self.cloud, dry_run=self.dry_run)
        if self.shadow is not None:
            records = ShadowRecorder(
                COMPONENT,
                "Escalator",
                Journal(self.shadow.directory),
                self.shadow.window,
                say=recorder.emit if self.shadow.events else None,
                target=lambda d: f"NodeGroup/{d.subject}",
            )
            shadow = EscalatorShadow(driver, caches, self.provider, self.groups, records)
            return ShadowRunner(shadow, clock, self.period)
        return EscalatorRunner(driver, clock, self.period, self.reporter)

    def report(self) -> str:
        return self.reporter.report()

    def unsynced(self) -> list[str]:
        return self.caches.unsynced() if self.caches is not None else []

    def stop(self) -> None:
        if self.caches is not None:
            self.caches.stop()
