"""``kubetide hpa ...``: the HPA decision, explained."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

import click

from kubetide.hpa.config import HPAConfig
from kubetide.hpa.explain import explain, explain_ports, render
from kubetide.hpa.memory import DEFAULT_CONFIGMAP, DEFAULT_CONFIGMAP_NAMESPACE, read_document
from kubetide.hpa.snapshot import read_snapshot, unknown_snapshot_keys
from kubetide.hpa.state import HPAState
from kubetide.model import yamldoc
from kubetide.model.durations import DurationError, parse_duration
from kubetide.model.errors import ManifestError
from kubetide.model.fields import parse_time

__all__ = ["hpa"]

EXIT_INVALID = 2


@click.group()
def hpa() -> None:
    """Horizontal Pod Autoscaler tools."""


_DEFAULTS = HPAConfig()


@hpa.command("explain")
@click.argument("snapshot", required=False, type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "-f",
    "--filename",
    "files",
    multiple=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="Objects and metrics as kubectl prints them (repeatable): `kubectl get hpa,deploy,pods -o yaml`, "
    "`kubectl get --raw /apis/metrics.k8s.io/v1beta1/namespaces/NS/pods`, custom or external "
    "metric value lists. YAML (several documents, kind: List) or JSON.",
)
@click.option(
    "--cluster",
    "from_cluster",
    is_flag=True,
    help="Read the HPA, its pods, scale and metrics from the cluster kubectl would use (nothing is written).",
)
@click.option(
    "--kubeconfig", type=click.Path(dir_okay=False), help="The kubeconfig for --cluster (implies it)."
)
@click.option(
    "--hpa",
    "hpa_name",
    metavar="[NAMESPACE/]NAME",
    help="The HPA to explain: required with --cluster (namespace default), or when -f gives several.",
)
@click.option(
    "--state",
    type=click.Path(dir_okay=False, path_type=Path),
    help="The controller's memory for -f / --cluster: {recommendations: [{replicas, timestamp}], "
    "scaleUpEvents: [{replicaChange, timestamp}], scaleDownEvents: [...], uid?}. Without it: what the "
    "live controller published (--controller-address, else its --memory-configmap), else a controller "
    "that just started.",
)
@click.option(
    "--controller-address",
    metavar="URL",
    help="With --cluster: read the memory from the running kubetide run hpa's /debug/hpa "
    "(http://HOST:8086), not from its ConfigMap.",
)
@click.option(
    "--memory-configmap",
    default=DEFAULT_CONFIGMAP,
    show_default=True,
    help="The ConfigMap kubetide run hpa keeps its memory in (--cluster reads it; -f takes it among its files).",
)
@click.option(
    "--memory-configmap-namespace",
    default=DEFAULT_CONFIGMAP_NAMESPACE,
    show_default=True,
    help="Its namespace (kubetide run hpa's --memory-configmap-namespace).",
)
@click.option(
    "--prometheus-url",
    default="",
    help="With --cluster: read the metrics from Prometheus (kubetide run hpa's default queries) "
    "instead of the metrics APIs.",
)
@click.option(
    "--prometheus-rate-window",
    default="1m",
    show_default=True,
    help="With --prometheus-url: the rate() window of the default CPU query (as kubetide run hpa).",
)
@click.option("--now", metavar="TIME", help="The moment to explain (RFC 3339); default: see the output.")
@click.option(
    "--horizontal-pod-autoscaler-tolerance",
    "tolerance",
    type=float,
    default=_DEFAULTS.tolerance,
    show_default=True,
    help="kube-controller-manager's flag (-f / --cluster; a SNAPSHOT carries its own config).",
)
@click.option(
    "--horizontal-pod-autoscaler-downscale-stabilization", "downscale", default="5m0s", show_default=True
)
@click.option(
    "--horizontal-pod-autoscaler-cpu-initialization-period", "cpu_init", default="5m0s", show_default=True
)
@click.option(
    "--horizontal-pod-autoscaler-initial-readiness-delay", "readiness", default="30s", show_default=True
)
@click.option("--json", "as_json", is_flag=True, help="Print the decision as JSON instead of text.")
def explain_command(
    snapshot: Path | None,
    files: tuple[Path, ...],
    from_cluster: bool,
    kubeconfig: str | None,
    hpa_name: str | None,
    state: Path | None,
    controller_address: str | None,
    memory_configmap: str,
    memory_configmap_namespace: str,
    prometheus_url: str,
    prometheus_rate_window: str,
    now: str | None,
    tolerance: float,
    downscale: str,
    cpu_init: str,
    readiness: str,
    as_json: bool,
) -> None:
    """Explain what the Kubernetes HPA controller decides for an HPA, and why.

    \b
    Three ways to give it the HPA's world:
      kubetide hpa explain SNAPSHOT                 one moment in kubetide's snapshot format
                                                    (examples/hpa-explain.yaml documents every field)
      kubetide hpa explain -f objects.yaml -f metrics.json [--hpa NS/NAME]
                                                    what kubectl printed from your cluster
      kubetide hpa explain --cluster --hpa NS/NAME  straight from the cluster (reads only), with the
                                                    memory kubetide run hpa publishes

    The output shows each metric's proposal with the numbers behind it (ratio, ready / unready /
    missing pods, tolerance check), the stabilization window and rate limits applied, the resulting
    conditions and events. Exit status 2 when the input is invalid (every problem is listed).
    """
    live = from_cluster or kubeconfig is not None
    ways = sum((snapshot is not None, bool(files), live))
    if ways != 1:
        _invalid("input", ["give exactly one of SNAPSHOT, -f FILE, or --cluster / --kubeconfig"])
    if snapshot is not None:
        report = _explain_snapshot(snapshot)
    else:
        report = _explain_real(
            files,
            live,
            kubeconfig,
            hpa_name,
            _MemoryOptions(state, controller_address, memory_configmap_namespace, memory_configmap),
            (prometheus_url, prometheus_rate_window),
            now,
            (tolerance, downscale, cpu_init, readiness),
        )
    click.echo(json.dumps(report, indent=2) if as_json else render(report))


def _explain_snapshot(path: Path) -> dict[str, Any]:
    (data,) = _load(path, single=True)
    if not isinstance(data, dict):
        _invalid(str(path), ["must be a mapping with at least 'hpa' and 'scale'"])
    problems = unknown_snapshot_keys(data)
    try:
        snap = read_snapshot(data)
    except ManifestError as exc:
        problems += exc.errors
    if problems:
        _invalid(str(path), [str(p) for p in problems])
    return explain(snap)


@dataclass(frozen=True)
class _MemoryOptions:
    state_file: Path | None
    controller_address: str | None
    namespace: str
    name: str


def _explain_real(
    files: tuple[Path, ...],
    live: bool,
    kubeconfig: str | None,
    hpa_name: str | None,
    memory: _MemoryOptions,
    prometheus: tuple[str, str],
    now_text: str | None,
    flags: tuple[float, str, str, str],
) -> dict[str, Any]:
    # Imported here: the live adapter (and its client library) only for the commands that need it.
    from kubetide.live.hpa.explain_inputs import (
        ExplainInputs,
        FoundMemory,
        from_recorded,
        memory_from_objects,
    )
    from kubetide.live.hpa.prometheus.client import url_problem
    from kubetide.live.hpa.recorded import split_objects

    problems: list[str] = []
    config = _config(*flags, problems)
    prometheus_url, window_text = prometheus
    try:
        window = parse_duration(window_text)
    except DurationError as exc:
        problems.append(f"--prometheus-rate-window: {exc}")
        window = 60.0
    now: float | None = None
    if now_text is not None:
        try:
            now = parse_time(now_text)
        except ValueError:
            problems.append(f"--now: must be an RFC 3339 time like 2026-01-02T03:04:05Z, got {now_text!r}")
    given: tuple[str, HPAState] | None = None
    if memory.state_file is not None:
        (data,) = _load(memory.state_file, single=True)
        try:
            given = read_document(data, str(memory.state_file))
        except ManifestError as exc:
            problems += [str(p) for p in exc.errors]
    if live and not hpa_name:
        problems.append("--hpa: required with --cluster (NAMESPACE/NAME)")
    if prometheus_url and (problem := url_problem(prometheus_url)):
        problems.append(f"--prometheus-url: {problem}, got {prometheus_url!r}")
    if prometheus_url and not live:
        problems.append("--prometheus-url: only with --cluster (-f reads the metrics from the files)")
    if memory.controller_address is not None and not live:
        problems.append("--controller-address: only with --cluster")
    if memory.controller_address is not None and (problem := url_problem(memory.controller_address)):
        problems.append(f"--controller-address: {problem}, got {memory.controller_address!r}")
    inputs: ExplainInputs | None = None
    found: FoundMemory | None = None
    try:
        if not live:  # the files are read whatever else is wrong: every problem at once
            objects = [
                (f"{path}[{i}]", obj)
                for path in files
                for i, obj in enumerate(split_objects(_load(path, single=False), str(path)))
            ]
            inputs = from_recorded(objects, hpa_name, now)
            if given is None:
                found = memory_from_objects(objects, memory.name, inputs.hpa)
        elif not problems:  # the cluster is asked only with valid arguments
            inputs, found = _from_cluster(
                kubeconfig, str(hpa_name), now, (prometheus_url, window), memory, given
            )
    except ManifestError as exc:
        problems += [str(p) for p in exc.errors]
    if inputs is not None and given is not None:
        uid, state = given
        if uid and inputs.hpa.uid and uid != inputs.hpa.uid:
            problems.append(
                f"{memory.state_file}.uid: the memory is of the HPA with uid {uid}, not of {inputs.hpa.key} "
                f"(uid {inputs.hpa.uid}): it was deleted and created again"
            )
        found = FoundMemory(state, f"--state {memory.state_file}")
    if problems or inputs is None or found is None:
        _invalid("input", problems)
    report = explain_ports(inputs.hpa, inputs.metrics, inputs.targets, config, found.state, inputs.now)
    report["now"] = {"time": inputs.now, "from": inputs.now_source}
    report["memory"] = {"from": found.source, "found": found.found, "written_at": found.written_at}
    return report


def _from_cluster(
    kubeconfig: str | None,
    name: str,
    now: float | None,
    prometheus: tuple[str, float],
    memory: _MemoryOptions,
    given: tuple[str, HPAState] | None,
) -> tuple[Any, Any]:
    """The inputs, and the memory (None when ``--state`` gives it)."""
    from kubetide.commands.run.logs import configure_quiet_logging
    from kubetide.kube.client import KubeAccessError, make_http_client
    from kubetide.kube.rest import Rest
    from kubetide.live.hpa.api import ApiFailure
    from kubetide.live.hpa.explain_inputs import (
        ControllerUnreachable,
        from_cluster,
        memory_from_configmap,
        memory_from_controller,
    )

    configure_quiet_logging()  # a library's warning never carries a credential
    namespace, _, short = name.rpartition("/")
    try:
        rest = Rest(make_http_client(kubeconfig))
        inputs = from_cluster(rest, namespace or "default", short, now, *prometheus)
        if given is not None:
            return inputs, None
        if memory.controller_address is not None:
            return inputs, memory_from_controller(memory.controller_address, inputs.hpa)
        return inputs, memory_from_configmap(rest, memory.namespace, memory.name, inputs.hpa)
    except KubeAccessError as exc:
        click.echo(f"kubetide hpa explain: {exc}", err=True)
        sys.exit(1)
    except ApiFailure as exc:
        click.echo(f"kubetide hpa explain: cannot read HPA {namespace or 'default'}/{short}: {exc}", err=True)
        sys.exit(1)
    except ControllerUnreachable as exc:
        click.echo(f"kubetide hpa explain: {exc}", err=True)
        sys.exit(1)


def _config(
    tolerance: float, downscale: str, cpu_init: str, readiness: str, problems: list[str]
) -> HPAConfig:
    def seconds(flag: str, text: str) -> float:
        try:
            return parse_duration(text)
        except DurationError as exc:
            problems.append(f"--{flag}: {exc}")
            return 0.0

    if not tolerance >= 0:  # NaN too
        problems.append(f"--horizontal-pod-autoscaler-tolerance: must be >= 0, got {tolerance}")
    return HPAConfig(
        tolerance=tolerance,
        downscale_stabilization=seconds("horizontal-pod-autoscaler-downscale-stabilization", downscale),
        cpu_initialization_period=seconds("horizontal-pod-autoscaler-cpu-initialization-period", cpu_init),
        initial_readiness_delay=seconds("horizontal-pod-autoscaler-initial-readiness-delay", readiness),
    )


def _load(path: Path, *, single: bool) -> list[Any]:
    """The YAML (or JSON) documents of ``path``; exit 2 when it cannot be read or parsed."""
    try:
        text = path.read_text()
    except OSError as exc:
        _invalid(str(path), [f"cannot read: {exc.strerror}"])
    try:
        return yamldoc.load_documents(text, str(path), multi=not single)
    except yamldoc.YamlDocumentError as exc:
        for problem in exc.problems:
            click.echo(f"error: {problem}", err=True)
        sys.exit(EXIT_INVALID)


def _invalid(source: str, problems: list[str]) -> NoReturn:
    for problem in problems:
        click.echo(f"error: {source}: {problem}", err=True)
    sys.exit(EXIT_INVALID)
