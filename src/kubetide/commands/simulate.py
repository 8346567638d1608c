"""``kubetide simulate SCENARIO``: replay a scenario on a virtual clock and write the report.

Exit codes: 0 success; 2 invalid scenario (every problem with its field path); 1 other errors.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from kubetide.model.errors import ManifestError
from kubetide.sim.output.progress import Progress
from kubetide.sim.output.summary_text import render_summary
from kubetide.sim.output.writer import write_outputs
from kubetide.sim.scenario import load_scenario
from kubetide.sim.scenario.checks import unimplemented_autoscalers
from kubetide.sim.simulation import IMPLEMENTED_AUTOSCALERS, Simulation

EXIT_INVALID = 2


@click.command(short_help="Replay a scenario on a virtual clock and write the report.")
@click.argument("scenario", type=click.Path(dir_okay=False))
@click.option(
    "--output-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Where to write summary.json, events.jsonl, timeline.csv and report.html "
    "[default: ./kubetide-out/<metadata.name>].",
)
@click.option(
    "--json", "as_json", is_flag=True, help="Print exactly the summary JSON on stdout, nothing else."
)
@click.option(
    "--report",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write report.html here instead.",
)
@click.option(
    "--seed",
    type=click.IntRange(min=0),  # as spec.seed: a bad one is a usage error (exit 2), not a traceback
    default=None,
    help="Override spec.seed (same seed + same file = same result).",
)
@click.option(
    "--set",
    "overrides",
    multiple=True,
    metavar="KEY=VALUE",
    help="Override a field by dotted path, e.g. --set spec.nodeGroups[0].maxSize=5 (repeatable).",
)
def simulate(
    scenario: str,
    output_dir: Path | None,
    as_json: bool,
    report: Path | None,
    seed: int | None,
    overrides: tuple[str, ...],
) -> None:
    """Replay SCENARIO on a simulated cluster and cloud, running kubetide's real autoscaler code.

    A day of traffic takes seconds. The summary (pending pods, nodes and cost, workloads,
    autoscaler actions) is printed as tables, and four files are written to the output directory:
    summary.json, events.jsonl, timeline.csv and a self-contained report.html with plots (and, when
    the cluster autoscaler runs, cluster-autoscaler-status.yaml: its status ConfigMap at the end).
    """
    try:
        loaded = load_scenario(scenario, overrides)
    except ManifestError as exc:
        _invalid(scenario, exc)
    for note in loaded.notes:
        click.echo(f"note: {scenario}: {note}", err=True)
    missing = unimplemented_autoscalers(loaded, IMPLEMENTED_AUTOSCALERS)
    if missing:
        _invalid(scenario, ManifestError(missing))
    directory = output_dir if output_dir is not None else Path("kubetide-out") / loaded.name
    simulation = Simulation(loaded, seed=seed)
    with Progress(float(loaded.spec.duration), stream=sys.stderr, label=loaded.name) as progress:
        result = simulation.run(progress=progress.update)
    try:
        paths = write_outputs(
            directory, result.summary, result.timeline, result.events, result.meta, report=report
        )
    except OSError as exc:
        click.echo(
            f"cannot write the outputs to {directory}: {exc.strerror or exc} ({exc.filename})", err=True
        )
        sys.exit(1)
    if as_json:
        click.echo(json.dumps(result.summary.to_json(), indent=2))
        return
    click.echo(render_summary(result.summary))
    click.echo("")
    click.echo(f"Wrote {paths.summary}, {paths.events.name}, {paths.timeline.name}")
    click.echo(f"Report: {paths.report}")


def _invalid(scenario: str, exc: ManifestError) -> None:
    count = len(exc.errors)
    click.echo(f"{scenario}: invalid scenario ({count} problem{'s' if count != 1 else ''}):", err=True)
    for problem in exc.errors:
        click.echo(f"  {problem}", err=True)
    sys.exit(EXIT_INVALID)
