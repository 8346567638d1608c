"""``kubetide hpa ...``: the HPA decision, explained."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click
import yaml

from kubetide.hpa.explain import explain, render
from kubetide.hpa.snapshot import read_snapshot
from kubetide.model.errors import ManifestError


@click.group()
def hpa() -> None:
    """Horizontal Pod Autoscaler tools."""


@hpa.command("explain")
@click.argument("snapshot", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print the decision as JSON instead of text.")
def explain_command(snapshot: Path, as_json: bool) -> None:
    """Explain what the Kubernetes HPA controller decides for SNAPSHOT, and why.

    SNAPSHOT is a YAML or JSON file describing one moment: the HPA manifest (as written, any
    autoscaling/ version), the scale target's replicas and selector, its pods, the metric values, and
    optionally the controller's settings and memory (recent recommendations and scale events). See
    examples/hpa-explain.yaml and the README for every field.

    The output shows each metric's proposal with the numbers behind it (ratio, ready / unready /
    missing pods, tolerance check), the stabilization window and rate limits applied, the resulting
    conditions and events. Exit status 2 when the snapshot is invalid.
    """
    data = _load(snapshot)
    try:
        snap = read_snapshot(data)
    except ManifestError as exc:
        for problem in exc.errors:
            click.echo(f"error: {snapshot}: {problem}", err=True)
        sys.exit(2)
    report = explain(snap)
    click.echo(json.dumps(report, indent=2) if as_json else render(report))


def _load(path: Path) -> Any:
    try:
        text = path.read_text()
    except OSError as exc:
        click.echo(f"error: cannot read {path}: {exc.strerror}", err=True)
        sys.exit(2)
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
        click.echo(f"error: {path}: not valid YAML{where}: {getattr(exc, 'problem', exc)}", err=True)
        sys.exit(2)
    if not isinstance(data, dict):
        click.echo(f"error: {path}: must be a mapping with at least 'hpa' and 'scale'", err=True)
        sys.exit(2)
    return data
