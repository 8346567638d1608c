"""``kubetide replay compare RECORDED SIMULATED``: how close a replay came to the day it replays.

RECORDED is a recording's directory (``kubetide record -o DIR``) or its ``scenario.yaml``; SIMULATED the
output directory of ``kubetide simulate`` run on it. Prints the figures of
:mod:`kubetide.sim.replay.fidelity` (node count per group and replicas per HPA at every minute, the
groups scaled and how often, pending pod-seconds) and which criterion held.

Exit codes: 0 every criterion held; 1 one did not (the figures say which), or a file could not be read;
2 bad arguments.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from kubetide.model.errors import ManifestError
from kubetide.sim.replay.fidelity import SimulationOutputError, Tolerances, compare_day, read_simulated
from kubetide.sim.replay.recording import RecordingError, read_recording
from kubetide.sim.scenario import load_scenario

__all__ = ["replay"]


@click.group(short_help="Compare a replayed day with the recording it replays.")
def replay() -> None:
    """A recorded day (kubetide record) beside its replay (kubetide simulate)."""


@replay.command("compare", short_help="How close a replay came to the recorded day.")
@click.argument("recorded", type=click.Path(exists=True, path_type=Path))
@click.argument("simulated", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print the figures as JSON.")
@click.option(
    "--nodes-tolerance",
    type=click.FloatRange(min=0),
    default=1.0,
    show_default=True,
    help="Nodes per group, at every minute.",
)
@click.option(
    "--replicas-tolerance",
    type=click.FloatRange(min=0),
    default=1.0,
    show_default=True,
    help="Replicas per HPA target, at every minute.",
)
@click.option(
    "--pending-tolerance",
    type=click.FloatRange(min=0),
    default=0.2,
    show_default=True,
    help="Pending pod-seconds, relative to the recorded figure.",
)
def compare(
    recorded: Path,
    simulated: Path,
    as_json: bool,
    nodes_tolerance: float,
    replicas_tolerance: float,
    pending_tolerance: float,
) -> None:
    """Compare the recorded day in RECORDED (a recording's directory or its scenario.yaml) with the
    simulation's outputs in SIMULATED (kubetide simulate --output-dir)."""
    path = recorded / "scenario.yaml" if recorded.is_dir() else recorded
    try:
        scenario = load_scenario(path)
    except ManifestError as exc:
        click.echo(f"{path}: invalid scenario ({len(exc.errors)} problems):", err=True)
        for problem in exc.errors:
            click.echo(f"  {problem}", err=True)
        sys.exit(1)
    spec = scenario.spec.recording
    if spec is None:
        click.echo(f"{path}: no spec.recording: not a recorded day (kubetide record writes one)", err=True)
        sys.exit(1)
    try:
        day = read_recording(scenario.base_dir, spec.samples, spec.events)
        replayed = read_simulated(simulated)
    except (RecordingError, SimulationOutputError) as exc:
        click.echo(str(exc), err=True)
        sys.exit(1)
    fidelity = compare_day(day, replayed, Tolerances(nodes_tolerance, replicas_tolerance, pending_tolerance))
    if as_json:
        click.echo(json.dumps(fidelity.to_json(), indent=2, default=_finite))
    else:
        click.echo(fidelity.render())
    sys.exit(0 if fidelity.ok else 1)


def _finite(value: object) -> object:
    return str(value)
