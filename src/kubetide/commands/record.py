"""``kubetide record``: a real cluster's day written as a scenario the simulator replays.

Watches the cluster kubectl would use and writes, into ``--output DIR``, as it goes: ``scenario.yaml``
(loads with ``kubetide validate``; rewritten at every flush), the objects at the start
(``objects.yaml``), every change as a timed action (``actions.jsonl``), the metrics the HPAs read as
series (``metrics/*.csv``), and the day as it happened for the report and ``kubetide replay compare``
(``recorded/``), with what was dropped or assumed in ``notes.txt``. Run again on the same directory, it
resumes (same settings, same clock). The live side is :mod:`kubetide.live.record`; this module wires it
to the simulator's loader (the one place allowed to import both), the cloud provider and the metrics.

Exit codes: 0 recorded (to the end, or stopped by SIGINT/SIGTERM: what was recorded is kept and can be
resumed); 1 the cluster or the directory failed; 2 bad flags.
"""

from __future__ import annotations

import math
import signal
import sys
import threading
from pathlib import Path
from typing import Any, NoReturn

import click

from kubetide.cloud.instance import CloudProviderError
from kubetide.cloud.provider import CloudProvider
from kubetide.commands.record_autoscalers import Autoscalers, found_in_cluster, read_autoscalers
from kubetide.commands.record_progress import RecordProgress
from kubetide.commands.run.logs import configure_quiet_logging
from kubetide.hpa.ports import MetricsSource
from kubetide.kube.client import KubeAccessError, make_http_client
from kubetide.kube.rest import KubeStatusError, Rest
from kubetide.live.export.fit import Problem
from kubetide.live.export.nodegroups import GroupBounds
from kubetide.live.guard.gate import WriteGate
from kubetide.live.hpa.api import KubeApi
from kubetide.live.hpa.metrics_api import ApiMetricsSource
from kubetide.live.hpa.prometheus.client import PrometheusClient, url_problem
from kubetide.live.hpa.prometheus.source import PrometheusMetricsSource
from kubetide.live.record.files import Layout
from kubetide.live.record.metrics import RawPodLister
from kubetide.live.record.recorder import Recorder, RecordError, RecordingSources, Totals
from kubetide.live.record.settings import LOAD_MODELS, RecordSettings, RecordState, StateError
from kubetide.model import yamldoc
from kubetide.model.durations import DurationError, parse_duration
from kubetide.model.errors import ManifestError
from kubetide.model.numbers import is_ascii_digits
from kubetide.model.strict import unknown_fields
from kubetide.sim.scenario import BUILTIN_CATALOG, load_scenario
from kubetide.sim.scenario.objects import check_object
from kubetide.sim.scenario.paths import PathError, parse_path

__all__ = ["record"]

EXIT_FAILED = 1
EXIT_INVALID = 2
_NAME_CHARS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-"


def _invalid(problems: list[tuple[str, str]]) -> NoReturn:
    for flag, problem in problems:
        click.echo(f"kubetide record: --{flag.lstrip('-')}: {problem}", err=True)
    sys.exit(EXIT_INVALID)


def _fail(message: str) -> NoReturn:
    click.echo(f"kubetide record: {message}", err=True)
    sys.exit(EXIT_FAILED)


def check_manifest(document: dict[str, Any]) -> list[Problem]:
    """The simulator's checks of one object (``spec.objects[0]``): what ``kubectl apply`` and the
    loader refuse in it, as problems with their paths (the exporter drops what they name)."""
    objects = document["spec"]["objects"]
    if not objects:
        return []  # the object itself was left out
    manifest = objects[0]
    errors = list(unknown_fields(manifest, "spec.objects[0]"))
    try:
        check_object(manifest, "spec.objects[0]")
    except ManifestError as exc:
        errors += exc.errors
    problems = []
    for error in errors:
        try:
            path: tuple[str | int, ...] = tuple(parse_path(error.path)) if error.path else ()
        except PathError:
            path = ()
        problems.append(Problem(path, error.message))
    return problems


def _seconds(flag: str, value: str, problems: list[tuple[str, str]], *, positive: bool = True) -> float:
    try:
        seconds = parse_duration(int(value) if is_ascii_digits(value) else value)
    except DurationError as exc:
        problems.append((flag, str(exc)))
        return 0.0
    if positive and seconds <= 0:
        problems.append((flag, "must be > 0"))
    return seconds


def _provider(
    settings: RecordSettings, kubeconfig: str | None, problems: list[tuple[str, str]]
) -> tuple[CloudProvider | None, dict[str, dict[str, Any]]]:
    """The cloud provider the recording reads groups from, and the provisioning it knows per group."""
    if not settings.cloud_provider:
        return None, {}
    if settings.cloud_provider == "kwok":
        from kubetide.live.providers.kwok import KwokConfigError, build_kwok_provider, load_cloud_config

        if not settings.cloud_config:
            problems.append(
                ("cloud-config", "the kwok provider needs its node groups file (--cloud-config FILE)")
            )
            return None, {}
        try:
            configs = load_cloud_config(settings.cloud_config)
            # Read only: whatever the provider would write (its state at a refresh) is not written.
            gate = WriteGate("recorder", lambda: True, dry_run=True)
            provider = build_kwok_provider(
                settings.cloud_config, settings.nodes, kubeconfig=kubeconfig, gate=gate
            )
        except KwokConfigError as exc:
            problems += [(e.path if e.path.startswith("-") else "cloud-config", str(e)) for e in exc.errors]
            return None, {}
        except KubeAccessError as exc:
            _fail(str(exc))
        # The kwok provider creates a Node its provisioning delay after the request and deletes one at
        # once; the node agent makes it Ready within about a second (measured while recording).
        provisioning = {
            c.name: {
                "delay": f"{c.provisioning_delay:g}s",
                "registerDelay": "0s",
                "readyDelay": "1s",
                "terminationDelay": "0s",
            }
            for c in configs
        }
        return provider, provisioning
    if settings.cloud_provider != "aws":
        problems.append(("cloud-provider", f"{settings.cloud_provider!r}: use kwok or aws"))
        return None, {}
    try:
        from kubetide.live.providers.aws import AwsConfigError, build_aws_provider
    except ImportError:
        problems.append(
            ("cloud-provider", "aws needs boto3, which is not installed: pip install 'kubetide[aws]'")
        )
        return None, {}
    try:
        provider_aws = build_aws_provider(
            settings.nodes,
            settings.node_group_auto_discovery,
            region=settings.aws_region,
            endpoint_url=settings.aws_endpoint_url,
        )
        provider_aws.refresh()
    except AwsConfigError as exc:
        problems += exc.errors
        return None, {}
    except CloudProviderError as exc:
        _fail(f"cannot read the aws provider's groups: {exc}")
    return provider_aws, {}


def _kwok_creations(provisioning: dict[str, dict[str, Any]], found: Autoscalers) -> dict[str, dict[str, Any]]:
    """The kwok provider creates a Node due after its provisioning delay at the cluster autoscaler's
    first loop at or after then (its refresh). A scale-up is made partway through a loop, after the
    loop's start, so the due time falls after the loop a whole number of scans later: the Node comes
    at the first loop more than the delay after the one that asked (a 60 s delay with 10 s scans: 70 s
    after; 5 s: 10 s)."""
    ca = found.section.get("clusterAutoscaler")
    if not ca:
        return provisioning
    try:
        scan = parse_duration(ca["flags"].get("scan-interval", "10s"))
    except DurationError:
        return provisioning
    out = {}
    for group, values in provisioning.items():
        delay = parse_duration(values["delay"])
        effective = (math.floor(delay / scan + 1e-9) + 1) * scan if delay > 0 and scan > 0 else delay
        out[group] = {**values, "delay": f"{effective:g}s"}
    return out


def _bounds(nodes: tuple[str, ...]) -> dict[str, GroupBounds]:
    out = {}
    for value in nodes:
        low, high, group = value.split(":", 2)
        if is_ascii_digits(low) and is_ascii_digits(high):
            out[group] = GroupBounds(int(low), int(high))
    return out


def _escalator_groups(path: str | None, problems: list[tuple[str, str]]) -> list[Any] | None:
    if path is None:
        return None
    try:
        (doc,) = yamldoc.load_documents(Path(path).read_text(encoding="utf-8"), path)
    except (OSError, UnicodeDecodeError) as exc:
        problems.append(
            ("escalator-nodegroups", f"cannot read {path}: {getattr(exc, 'strerror', None) or exc}")
        )
        return None
    except yamldoc.YamlDocumentError as exc:
        problems += [("escalator-nodegroups", p) for p in exc.problems]
        return None
    entries = doc.get("node_groups") if isinstance(doc, dict) else None
    if not isinstance(entries, list):
        problems.append(("escalator-nodegroups", f"{path}: expected a node_groups list (Escalator's file)"))
        return None
    return entries


def _list_deployments(rest: Rest) -> list[dict[str, Any]]:
    try:
        return list(rest.request("GET", "/apis/apps/v1/deployments").get("items") or [])
    except KubeStatusError as exc:
        _fail(f"cannot list the Deployments (to find the autoscalers): {exc}")


def _metrics(settings: RecordSettings, rest: Rest) -> Any:
    """A factory of the metrics port for the recorder's pod cache, as the HPA reads them."""
    if settings.prometheus_url:

        def prometheus(pod_objects: Any) -> MetricsSource:
            lister = RawPodLister(pod_objects)
            return PrometheusMetricsSource(
                PrometheusClient(settings.prometheus_url),
                lister.list_pods,
                window_s=settings.prometheus_rate_window,
            )

        return prometheus
    return lambda pod_objects: ApiMetricsSource(KubeApi(rest))


def _same_settings(stored: RecordSettings, given: dict[str, Any]) -> list[tuple[str, str]]:
    problems = []
    for flag, (attribute, value) in given.items():
        if value is not None and getattr(stored, attribute) != value:
            problems.append(
                (
                    flag,
                    f"the recording was made with {getattr(stored, attribute)!r}; resume it with the same, or leave the flag out",
                )
            )
    return problems


@click.command(short_help="Record a cluster's day as a scenario the simulator replays.")
@click.option(
    "--output",
    "-o",
    "output",
    required=True,
    type=click.Path(file_okay=False),
    help="The recording's directory (made if missing; an existing recording resumes).",
)
@click.option(
    "--duration",
    default="24h",
    show_default=True,
    help="How long to record, from the recording's start (Go duration).",
)
@click.option(
    "--kubeconfig", default=None, metavar="PATH", help="As kubectl: else $KUBECONFIG, ~/.kube/config."
)
@click.option("--name", default=None, help="metadata.name of the scenario [default: the directory's name].")
@click.option(
    "--namespace",
    "-n",
    "namespaces",
    multiple=True,
    help="Record only these namespaces (repeatable) [default: all but kube-system, kube-public, kube-node-lease; kube-system's DaemonSets always].",
)
@click.option(
    "--interval",
    default="15s",
    show_default=True,
    help="Sampling interval: metrics, nodes, replicas (the scenario's metrics resolution).",
)
@click.option(
    "--load-model",
    type=click.Choice(LOAD_MODELS),
    default=None,
    help="How measured CPU becomes the replay's load: per-pod (each pod uses what the recorded pods used) or shared (the recorded total spread over the Ready pods, as behind a Service) [default: shared].",
)
@click.option(
    "--prometheus-url",
    default=None,
    help="Read the metrics from Prometheus, as `kubetide run hpa --prometheus-url` [default: the HPA's flags, else the metrics APIs].",
)
@click.option(
    "--prometheus-rate-window",
    default=None,
    help="The rate() window of CPU, as the HPA's flag [default: the HPA's, else 1m].",
)
@click.option(
    "--ca-flags",
    default=None,
    metavar="FLAGS",
    help="The cluster autoscaler's command line (what follows `kubetide run cluster-autoscaler`, or upstream CA's flags) [default: found in the cluster's Deployments].",
)
@click.option(
    "--hpa-flags",
    default=None,
    metavar="FLAGS",
    help="The HPA controller's flags (`kubetide run hpa`'s, or kube-controller-manager's HPA flags) [default: found in the cluster].",
)
@click.option(
    "--escalator-flags",
    default=None,
    metavar="FLAGS",
    help="The batch autoscaler's flags (`kubetide run escalator`'s) [default: found in the cluster].",
)
@click.option(
    "--escalator-nodegroups",
    default=None,
    metavar="FILE",
    help="The batch autoscaler's node groups file (Escalator's).",
)
@click.option(
    "--nodes",
    "nodes",
    multiple=True,
    metavar="MIN:MAX:GROUP",
    help="Node group bounds, as CA's --nodes [default: the CA flags'].",
)
@click.option(
    "--cloud-provider",
    type=click.Choice(["kwok", "aws"]),
    default=None,
    help="Groups and bounds from this provider [default: the CA flags'; none: groups by node labels].",
)
@click.option("--cloud-config", default=None, metavar="FILE", help="The kwok provider's node groups file.")
@click.option(
    "--node-group-auto-discovery",
    multiple=True,
    metavar="SPEC",
    help="aws: CA's auto-discovery (repeatable).",
)
@click.option("--aws-region", default=None, help="aws: the groups' region.")
@click.option("--aws-endpoint-url", default=None, help="aws: a test endpoint such as moto.")
def record(
    output: str,
    duration: str,
    kubeconfig: str | None,
    name: str | None,
    namespaces: tuple[str, ...],
    interval: str,
    load_model: str | None,
    prometheus_url: str | None,
    prometheus_rate_window: str | None,
    ca_flags: str | None,
    hpa_flags: str | None,
    escalator_flags: str | None,
    escalator_nodegroups: str | None,
    nodes: tuple[str, ...],
    cloud_provider: str | None,
    cloud_config: str | None,
    node_group_auto_discovery: tuple[str, ...],
    aws_region: str | None,
    aws_endpoint_url: str | None,
) -> None:
    """Record the cluster as a scenario: the objects at the start, every change as a timed action,
    the metrics the HPAs read as traffic, the node groups from the cloud provider, and the day as it
    happened (nodes, replicas, pending pods, the autoscalers' Events) to compare the replay with.

    \b
    Replay it:   kubetide simulate DIR/scenario.yaml --output-dir out
    Compare:     kubetide replay compare DIR out
    """
    configure_quiet_logging()
    problems: list[tuple[str, str]] = []
    directory = Path(output)
    layout = Layout(directory)
    total = _seconds("duration", duration, problems)
    step = _seconds("interval", interval, problems)
    window = (
        _seconds("prometheus-rate-window", prometheus_rate_window, problems)
        if prometheus_rate_window
        else None
    )
    if prometheus_url and url_problem(prometheus_url):
        problems.append(("prometheus-url", str(url_problem(prometheus_url))))
    given_escalator = _escalator_groups(escalator_nodegroups, problems)
    resume: RecordState | None = None
    if (directory / Layout.STATE).is_file():
        try:
            resume = RecordState.read(directory / Layout.STATE)
        except StateError as exc:
            _fail(str(exc))
        problems += _same_settings(
            resume.settings,
            {
                "interval": ("interval", step if interval != "15s" else None),
                "load-model": ("load_model", load_model),
                "namespace": ("namespaces", namespaces or None),
                "name": ("name", name),
            },
        )
        if (
            any(
                v is not None
                for v in (ca_flags, hpa_flags, escalator_flags, cloud_provider, cloud_config, prometheus_url)
            )
            or nodes
        ):
            problems.append(
                (
                    "ca-flags",
                    "a recording resumes with the settings it started with: leave the autoscaler, provider and metrics flags out",
                )
            )
    elif directory.exists() and any(directory.iterdir()):
        problems.append(
            (
                "output",
                f"{directory} holds files but no recording ({Layout.STATE}): give an empty or new directory",
            )
        )
    if problems:
        _invalid(problems)
    try:
        rest = Rest(make_http_client(kubeconfig))
    except KubeAccessError as exc:
        _fail(str(exc))
    found: Autoscalers | None = None
    if resume is not None:
        settings = resume.settings
        settings.duration = total
    else:
        settings, found = _new_settings(
            rest, directory, total, step, name, namespaces, load_model, prometheus_url, window,
            {"cluster-autoscaler": ca_flags, "hpa": hpa_flags, "escalator": escalator_flags},
            given_escalator, nodes, cloud_provider, cloud_config, node_group_auto_discovery, aws_region, aws_endpoint_url,
        )  # fmt: skip
    provider, provisioning = _provider(settings, kubeconfig, problems)
    if problems:
        _invalid(problems)
    if found is not None:
        settings.provisioning = (
            _kwok_creations(provisioning, found) if settings.cloud_provider == "kwok" else provisioning
        )
        settings.managed = _managed(found, provider)
    sources = RecordingSources(
        rest,
        check_manifest,
        provider,
        None,
        frozenset(BUILTIN_CATALOG),
        _bounds(settings.nodes) if provider is None else {},
    )
    _run(layout, settings, sources, resume, _metrics(settings, rest))


def _new_settings(
    rest: Rest,
    directory: Path,
    total: float,
    step: float,
    name: str | None,
    namespaces: tuple[str, ...],
    load_model: str | None,
    prometheus_url: str | None,
    window: float | None,
    lines: dict[str, str | None],
    escalator_groups: list[Any] | None,
    nodes: tuple[str, ...],
    cloud_provider: str | None,
    cloud_config: str | None,
    discovery: tuple[str, ...],
    aws_region: str | None,
    aws_endpoint_url: str | None,
) -> tuple[RecordSettings, Autoscalers]:
    in_cluster = found_in_cluster(_list_deployments(rest)) if None in lines.values() else {}
    autoscalers = read_autoscalers(lines, in_cluster, escalator_groups)
    if autoscalers.problems:
        _invalid(autoscalers.problems)
    for note in autoscalers.notes:
        click.echo(f"note: {note}", err=True)
    ca = autoscalers.provider_flags
    metrics = autoscalers.metrics_flags
    default_name = (
        "".join(c if c in _NAME_CHARS else "-" for c in directory.resolve().name).strip(".-_") or "recorded"
    )
    settings = RecordSettings(
        name=name or default_name,
        duration=total,
        interval=step,
        namespaces=tuple(namespaces),
        load_model=load_model or "shared",
        prometheus_url=prometheus_url or str(metrics.get("prometheus-url") or ""),
        prometheus_rate_window=window or float(metrics.get("prometheus-rate-window") or 60.0),
        cloud_provider=cloud_provider or str(ca.get("cloud-provider") or ""),
        cloud_config=cloud_config or str(ca.get("cloud-config") or ""),
        nodes=nodes or tuple(str(n) for n in ca.get("nodes") or ()),
        node_group_auto_discovery=discovery
        or tuple(str(d) for d in ca.get("node-group-auto-discovery") or ()),
        aws_region=aws_region or str(ca.get("aws-region") or ""),
        aws_endpoint_url=aws_endpoint_url or str(ca.get("aws-endpoint-url") or ""),
        autoscalers=autoscalers.section,
    )
    return settings, autoscalers


def _managed(autoscalers: Autoscalers, provider: CloudProvider | None) -> tuple[str, ...]:
    """The node groups the replayed autoscalers resize ("*": every group)."""
    escalator = list(autoscalers.escalator_groups)
    if "clusterAutoscaler" not in autoscalers.section:
        return tuple(escalator)
    if autoscalers.managed_by_ca is not None:
        return tuple([*autoscalers.managed_by_ca, *escalator])
    if provider is None:
        return ("*",)
    return tuple([*(g.id() for g in provider.node_groups()), *escalator])


def _run(
    layout: Layout,
    settings: RecordSettings,
    sources: RecordingSources,
    resume: RecordState | None,
    metrics: Any,
) -> None:
    stop = threading.Event()

    def stop_now(signum: int, frame: object) -> None:
        stop.set()

    previous = {s: signal.signal(s, stop_now) for s in (signal.SIGINT, signal.SIGTERM)}
    progress = RecordProgress(settings.duration, stream=sys.stderr, label=settings.name)

    def note(text: str) -> None:
        progress.clear()
        click.echo(f"note: {text}", err=True)

    recorder = Recorder(
        layout,
        settings,
        sources,
        resume=resume,
        stop=stop,
        progress=progress.update,
        on_note=note,
        metrics_factory=metrics,
    )
    try:
        totals = recorder.run()
    except RecordError as exc:
        progress.close()
        _fail(str(exc))
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
    progress.close()
    _summary(layout, totals, stop.is_set())


def _summary(layout: Layout, totals: Totals, stopped: bool) -> None:
    path = layout.path(Layout.SCENARIO)
    try:
        scenario = load_scenario(path)
    except ManifestError as exc:
        for problem in exc.errors:
            click.echo(f"  {problem}", err=True)
        _fail(f"{path} does not load ({len(exc.errors)} problems above): please report it")
    how = "stopped" if stopped else "recorded"
    click.echo(
        f"{path}: {how} {totals.seconds:.0f}s of {scenario.name!r}: {totals.actions} actions, "
        f"{totals.samples} samples, {totals.events} autoscaler events, {totals.metric_rows} metric rows"
        f"{f', {totals.notes} notes in {Layout.NOTES}' if totals.notes else ''}",
        err=True,
    )
    click.echo(f"replay: kubetide simulate {path}", err=True)
