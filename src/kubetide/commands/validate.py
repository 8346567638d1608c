"""``kubetide validate SCENARIO``: check a scenario file and list every problem with its field path.

Exit 0 with a one-paragraph summary when the file is valid; exit 2 with one line per problem when it
is not. Whatever the input, the answer is a message, never a traceback.
"""

from __future__ import annotations

import sys

import click

from kubetide.model.durations import format_duration
from kubetide.model.errors import ManifestError
from kubetide.sim.scenario import Scenario, load_scenario

EXIT_INVALID = 2


def _summary(path: str, scenario: Scenario) -> str:
    spec = scenario.spec
    kinds: dict[str, int] = {}
    for manifest in spec.objects:
        kinds[manifest["kind"]] = kinds.get(manifest["kind"], 0) + 1
    autoscalers = scenario.enabled_autoscalers()
    objects = ", ".join(f"{n} {k}" for k, n in kinds.items()) or "none"
    return "\n".join(
        [
            f"{path}: OK: scenario {scenario.name!r}, {format_duration(spec.duration)} simulated, seed {spec.seed}",
            f"  node groups: {', '.join(g.name for g in spec.nodeGroups) or 'none'}",
            f"  objects: {objects}",
            f"  traffic: {len(spec.traffic)}, actions: {len(spec.actions)}",
            f"  autoscalers: {', '.join(autoscalers) or 'none'}",
        ]
    )


@click.command(short_help="Check a scenario file; list every problem with its field path.")
@click.argument("scenario", type=click.Path(dir_okay=False))
@click.option(
    "--set", "overrides", multiple=True, metavar="KEY=VALUE", help="Override a field (dotted path)."
)
def validate(scenario: str, overrides: tuple[str, ...]) -> None:
    """Check SCENARIO and print every problem with its field path (exit 2), or a summary (exit 0)."""
    try:
        loaded = load_scenario(scenario, overrides)
    except ManifestError as exc:
        click.echo(
            f"{scenario}: invalid scenario ({len(exc.errors)} problem{'s' if len(exc.errors) != 1 else ''}):",
            err=True,
        )
        for problem in exc.errors:
            click.echo(f"  {problem}", err=True)
        sys.exit(EXIT_INVALID)
    for note in loaded.notes:
        click.echo(f"note: {scenario}: {note}", err=True)
    click.echo(_summary(scenario, loaded))
