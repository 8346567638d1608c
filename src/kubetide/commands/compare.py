"""``kubetide compare A B``: two runs on one page, the question asked before changing a flag."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import NoReturn

import click

from kubetide.model.errors import ManifestError
from kubetide.sim import Simulation, load_scenario
from kubetide.sim.output.compare import Run, RunError, load_run, write_compare
from kubetide.sim.scenario.checks import unimplemented_autoscalers
from kubetide.sim.simulation import IMPLEMENTED_AUTOSCALERS

__all__ = ["compare"]

EXIT_INVALID = 2


@click.command()
@click.argument("a", type=click.Path(exists=True, path_type=Path))
@click.argument("b", type=click.Path(exists=True, path_type=Path))
@click.option(
    "--set-a", "set_a", multiple=True, metavar="KEY=VALUE", help="Override a field of A (a scenario)."
)
@click.option(
    "--set-b", "set_b", multiple=True, metavar="KEY=VALUE", help="Override a field of B (a scenario)."
)
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    default=Path("compare.html"),
    show_default=True,
    help="Where to write the comparison page.",
)
def compare(a: Path, b: Path, set_a: tuple[str, ...], set_b: tuple[str, ...], output: Path) -> None:
    """Compare two runs: A and B are each an output directory of `kubetide simulate` or a scenario
    (simulated here, in memory). Writes one self-contained page with the summary figures of both and
    their difference, and the plots of both runs overlaid (A solid, B dashed).

    \b
    The same scenario with one flag changed:
      kubetide compare examples/quickstart.yaml examples/quickstart.yaml \\
        --set-b spec.autoscalers.hpa.tolerance=0.2
    """
    runs = (_run(a, set_a, "A"), _run(b, set_b, "B"))
    try:
        write_compare(output, *runs)
    except OSError as exc:
        click.echo(f"kubetide compare: cannot write {output}: {exc.strerror or exc}", err=True)
        sys.exit(1)
    click.echo(f"Comparison: {output}")


def _run(path: Path, overrides: tuple[str, ...], tag: str) -> Run:
    if path.is_dir():
        if overrides:
            _invalid(f"--set-{tag.lower()}", "only applies to a scenario, not to an output directory")
        try:
            return load_run(path)
        except RunError as exc:
            _invalid(tag, str(exc))
    try:
        scenario = load_scenario(path, overrides)
    except ManifestError as exc:
        _invalid(str(path), "; ".join(str(e) for e in exc.errors))
    missing = unimplemented_autoscalers(scenario, IMPLEMENTED_AUTOSCALERS)
    if missing:
        _invalid(str(path), "; ".join(str(e) for e in missing))
    result = Simulation(scenario).run()
    columns = {name: result.timeline.column(name) for name in result.timeline.columns}
    name = f"{path}" + (f" ({', '.join(overrides)})" if overrides else "")
    return Run(name, result.summary.to_json(), columns)


def _invalid(where: str, message: str) -> NoReturn:
    click.echo(f"kubetide compare: {where}: {message}", err=True)
    sys.exit(EXIT_INVALID)
