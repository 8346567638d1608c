"""``kubetide explain SCENARIO --at TIME``: why the cluster autoscaler decided what it did (``--snapshot``:
one loop on a cluster's snapshot; ``--cluster``: a running one, :mod:`.explain_cluster`).

Simulates the scenario up to TIME and explains the cluster autoscaler's last loop at or before it, from
that loop's own decision values: per pending pod, the scale-up it triggered or, per node group, the
first reason it could not go there; the expander's filters in order with the groups each kept; per
node, unneeded since when or the rule that keeps it (with the blocking pod and its drain rule); per
``--group``, every word the scale-up said of it.

Exit codes: 0 explained; 2 bad input (scenario, time, pod or node; every problem named).
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path

import click

from kubetide.cluster.autoscaler import StaticAutoscaler
from kubetide.cluster.explain import Explanation, explain_loop, render_text
from kubetide.cluster.explain_cluster import explain_group, render_group
from kubetide.commands.explain_snapshot import parse_snapshot
from kubetide.model import yamldoc
from kubetide.model.durations import DurationError, parse_duration
from kubetide.model.errors import ManifestError
from kubetide.sim.scenario import load_scenario
from kubetide.sim.scenario.checks import unimplemented_autoscalers
from kubetide.sim.simulation import IMPLEMENTED_AUTOSCALERS, Simulation
from kubetide.testing.cluster import RecordingClusterPort

EXIT_INVALID = 2
DEFAULT_ADDRESS = "http://127.0.0.1:8085"  # CA's --address default (:8085), through a port-forward


@click.command(
    short_help="Why the cluster autoscaler did that: a scenario's loop, a snapshot, or a running one."
)
@click.argument("scenario", type=click.Path(dir_okay=False), required=False)
@click.option(
    "--at",
    "at",
    metavar="TIME",
    help="Simulated time, e.g. 90m or 2h30m: the last loop at or before it is explained (with SCENARIO).",
)
@click.option(
    "--snapshot",
    type=click.Path(dir_okay=False),
    default=None,
    help="Explain one loop on a snapshot file of a cluster instead of a scenario (format: README, "
    "'Why did the cluster autoscaler do that?'). Nothing is changed anywhere.",
)
@click.option(
    "--cluster",
    "from_cluster",
    is_flag=True,
    help="Explain a running `kubetide run cluster-autoscaler` from its /debug/plan (read only): its last "
    "loop, its last scale-up and the node deletions it started.",
)
@click.option(
    "--address",
    metavar="URL",
    default=None,
    help=f"With --cluster: the cluster autoscaler's --address, or a port-forward to it [default: {DEFAULT_ADDRESS}].",
)
@click.option("--pod", "pods", multiple=True, metavar="NS/NAME", help="Only this pending pod (repeatable).")
@click.option(
    "--node",
    "nodes",
    multiple=True,
    metavar="NAME",
    help="Only this node (repeatable); with --cluster, a node deleted too: why the scale-down chose it.",
)
@click.option(
    "--group",
    "groups",
    multiple=True,
    metavar="NAME",
    help="Why this node group was or was not scaled up (repeatable): skipped, each expander filter, each "
    "pending pod's reason.",
)
@click.option(
    "--set",
    "overrides",
    multiple=True,
    metavar="KEY=VALUE",
    help="Override a scenario field, as simulate --set.",
)
@click.option("--seed", type=click.IntRange(min=0), default=None, help="Override spec.seed.")
@click.option("--json", "as_json", is_flag=True, help="Print the explanation as JSON.")
def explain(
    scenario: str | None,
    at: str | None,
    snapshot: str | None,
    from_cluster: bool,
    address: str | None,
    pods: tuple[str, ...],
    nodes: tuple[str, ...],
    groups: tuple[str, ...],
    overrides: tuple[str, ...],
    seed: int | None,
    as_json: bool,
) -> None:
    """Explain the cluster autoscaler's loop at TIME of SCENARIO, one loop on a --snapshot file, or a
    running cluster autoscaler (--cluster).

    \b
    Examples:
      kubetide explain examples/cluster-autoscaler.yaml --at 1h30m
      kubetide explain examples/cluster-autoscaler.yaml --at 1h30m --pod default/batch-x --json
      kubetide explain --snapshot examples/ca-explain-snapshot.yaml
      kubetide explain --cluster --address http://127.0.0.1:8085 --node NODE --group GROUP
    For the HPA: kubetide hpa explain.
    """
    if from_cluster or address is not None:
        _explain_cluster(scenario, at, snapshot, overrides, seed, address, pods, nodes, groups, as_json)
        return
    if snapshot is not None:
        wrong = [f"{name}: not with --snapshot" for name, v in (("SCENARIO", scenario), ("--at", at)) if v]
        wrong += [f"{name}: not with --snapshot" for name, v in (("--set", overrides), ("--seed", seed)) if v]
        if wrong:
            _invalid(snapshot, wrong)
        _explain_snapshot(snapshot, pods, nodes, groups, as_json)
        return
    if scenario is None or at is None:
        _invalid(scenario or "kubetide explain", ["give SCENARIO and --at TIME, or --snapshot FILE"])
        return
    problems: list[str] = []
    try:
        loaded = load_scenario(scenario, overrides)
    except ManifestError as exc:
        _invalid(scenario, [str(e) for e in exc.errors])
        return
    problems += [str(p) for p in unimplemented_autoscalers(loaded, IMPLEMENTED_AUTOSCALERS)]
    if loaded.spec.autoscalers.clusterAutoscaler is None:
        problems.append(
            "spec.autoscalers.clusterAutoscaler: the cluster autoscaler does not run in this scenario"
        )
    try:
        t = parse_duration(at)
    except DurationError as exc:
        problems.append(f"--at: {exc}")
        t = 0.0
    if t > loaded.spec.duration:
        problems.append(f"--at: {at} is after the end of the scenario ({loaded.spec.duration:g}s)")
    if problems:
        _invalid(scenario, problems)
    simulation = Simulation(loaded, seed=seed)
    simulation.run_until(t)
    runner = simulation.ca
    if runner is None or runner.last_loop is None:
        _invalid(scenario, [f"--at: the cluster autoscaler has not run a loop by {at}"])
        return
    result, loop_at = runner.last_loop
    known = {g.name for g in loaded.spec.nodeGroups}
    ex = explain_loop(result, loop_at, runner.world())
    _show(scenario, ex, at, Narrowing(pods, nodes, groups, known), as_json)


def _explain_cluster(
    scenario: str | None,
    at: str | None,
    snapshot: str | None,
    overrides: tuple[str, ...],
    seed: int | None,
    address: str | None,
    pods: tuple[str, ...],
    nodes: tuple[str, ...],
    groups: tuple[str, ...],
    as_json: bool,
) -> None:
    # Here, not at the top: the HTTP client loads only for --cluster.
    from kubetide.commands.explain_cluster import explain_cluster
    from kubetide.live.cluster_autoscaler.explain_inputs import address_problem

    given = (
        ("SCENARIO", scenario),
        ("--at", at),
        ("--snapshot", snapshot),
        ("--set", overrides),
        ("--seed", seed),
    )
    wrong = [f"{name}: not with --cluster" for name, v in given if v is not None and v != ()]
    url = address if address is not None else DEFAULT_ADDRESS
    if (problem := address_problem(url)) is not None:
        wrong.append(f"--address: {problem}, got {url!r}")
    if wrong:
        _invalid("kubetide explain --cluster", wrong)
    explain_cluster(url, pods, nodes, groups, as_json)


def _explain_snapshot(
    path: str, pods: tuple[str, ...], nodes: tuple[str, ...], groups: tuple[str, ...], as_json: bool
) -> None:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        _invalid(path, [f"cannot read: {getattr(exc, 'strerror', None) or exc}"])
        return
    try:
        (doc,) = yamldoc.load_documents(text, path, json_syntax=path.endswith(".json"))
        snap = parse_snapshot(doc)
    except yamldoc.YamlDocumentError as exc:
        _invalid(path, exc.problems)
        return
    except ManifestError as exc:
        _invalid(path, [str(e) for e in exc.errors])
        return
    for note in snap.notes:
        click.echo(f"note: {path}: {note}", err=True)
    autoscaler = StaticAutoscaler(
        snap.cloud, RecordingClusterPort.discarding(), snap.options, start_time=snap.time - 3600
    )
    result = autoscaler.run_once(snap.world, snap.time)
    if result.error is not None:
        _invalid(path, [f"the loop could not run: {result.error}"])
    known = {g.id() for g in snap.cloud.node_groups()}
    ex = explain_loop(result, snap.time, snap.world)
    _show(path, ex, "the snapshot's time", Narrowing(pods, nodes, groups, known), as_json)


@dataclass(frozen=True)
class Narrowing:
    """What ``--pod``, ``--node`` and ``--group`` ask for; ``known_groups``: the node groups there are."""

    pods: tuple[str, ...]
    nodes: tuple[str, ...]
    groups: tuple[str, ...]
    known_groups: set[str]


def _show(source: str, ex: Explanation, at: str, only: Narrowing, as_json: bool) -> None:
    pods, nodes, groups = only.pods, only.nodes, only.groups
    known_pods = {p.pod for p in ex.pods}
    known_nodes = {n.node for n in ex.nodes}
    bad = [f"--pod {p}: no pending pod of that name at {at}" for p in pods if p not in known_pods]
    bad += [f"--node {n}: no node of that name at {at}" for n in nodes if n not in known_nodes]
    bad += [
        f"--group {g}: no node group of that name (known: {', '.join(sorted(only.known_groups)) or 'none'})"
        for g in groups
        if g not in only.known_groups
    ]
    if bad:
        _invalid(source, bad)
    if as_json:
        doc = ex.to_json()
        if pods:
            doc["pods"] = [p for p in doc["pods"] if p["pod"] in pods]
        if nodes:
            doc["scaleDown"]["nodes"] = [n for n in doc["scaleDown"]["nodes"] if n["node"] in nodes]
        if groups:
            doc["groups"] = {g: explain_group(ex, g).to_json() for g in groups}
        click.echo(json.dumps(doc, indent=2))
        return
    if groups and not pods and not nodes:  # the group's lines alone
        click.echo(
            "\n".join(line for g in groups for line in render_group(explain_group(ex, g))) + "\n", nl=False
        )
        return
    click.echo(render_text(ex, list(pods) or None, list(nodes) or None), nl=False)
    for g in groups:
        click.echo("\n" + "\n".join(render_group(explain_group(ex, g))))


def _invalid(scenario: str, problems: list[str]) -> None:
    count = len(problems)
    click.echo(f"{scenario}: cannot explain ({count} problem{'s' if count != 1 else ''}):", err=True)
    for problem in problems:
        click.echo(f"  {problem}", err=True)
    sys.exit(EXIT_INVALID)
