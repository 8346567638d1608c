"""``kubetide shadow report DIR``: a shadow's records (``run ... --shadow --shadow-dir DIR``) on one page."""

from __future__ import annotations

import math
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NoReturn

import click

from kubetide.commands.shadow_report import ShadowRecords, render_shadow_report
from kubetide.live.shadow.journal import DISAGREEMENTS, TIMELINE, JournalError, read_lines

__all__ = ["shadow"]

EXIT_INVALID = 2


@click.group(short_help="Read what a shadow recorded (run ... --shadow).")
def shadow() -> None:
    """What a shadow (`kubetide run cluster-autoscaler|hpa|escalator --shadow --shadow-dir DIR`)
    recorded beside the autoscaler that acts."""


@shadow.command()
@click.argument("directory", metavar="DIR", type=click.Path(path_type=Path))
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Where to write the page (default: DIR/report.html).",
)
@click.option(
    "--price",
    "prices",
    multiple=True,
    metavar="GROUP=USD",
    help="A node group's price per node-hour, for the cost of the two timelines (repeatable; without "
    "a price for every group the cost is in node-hours).",
)
def report(directory: Path, output: Path | None, prices: tuple[str, ...]) -> None:
    """One self-contained HTML page: the running autoscaler and kubetide on one time axis (nodes per
    group, an HPA's replicas), every disagreement with kubetide's reasons, and the cost difference of
    the two node timelines.

    \b
      kubetide shadow report shadow-records/ --price general=0.192 -o shadow.html
    """
    problems = [f"--price {p!r}: {why}" for p, why in ((p, _price_problem(p)) for p in prices) if why]
    if not directory.is_dir():
        problems.append(f"DIR: {directory} is not a directory (the --shadow-dir of a shadow)")
    elif not (directory / TIMELINE).exists() and not (directory / DISAGREEMENTS).exists():
        problems.append(f"DIR: {directory} holds no shadow records ({TIMELINE}, {DISAGREEMENTS})")
    if problems:
        _invalid(problems)
    try:
        data = ShadowRecords(
            read_lines(directory / TIMELINE),
            read_lines(directory / DISAGREEMENTS),
            {group: float(value) for group, _, value in (p.partition("=") for p in prices)},
        )
    except JournalError as exc:
        _invalid([str(exc)])
    bad = [f"{TIMELINE}: a line without a numeric 'at'" for e in data.timeline if not _has_time(e)]
    bad += [
        f"{DISAGREEMENTS}: record {r.get('id')!r} lacks {key!r}"
        for r in data.records
        for key in ("id", "at", "kind", "subject", "message")
        if r.get("type") == "disagreement" and key not in r
    ]
    if bad:
        _invalid(sorted(set(bad)))
    target = output or directory / "report.html"
    try:
        target.write_text(render_shadow_report(data, f"kubetide shadow · {directory.name}"), encoding="utf-8")
    except OSError as exc:
        click.echo(f"kubetide shadow report: cannot write {target}: {exc.strerror or exc}", err=True)
        sys.exit(1)
    click.echo(f"Report: {target}")


def _has_time(entry: Mapping[str, Any]) -> bool:
    return isinstance(entry.get("at"), int | float)


def _price_problem(text: str) -> str | None:
    group, sep, value = text.partition("=")
    if not sep or not group:
        return "must be GROUP=USD"
    try:
        price = float(value)
    except ValueError:
        return f"{value!r} is not a number"
    return None if math.isfinite(price) and price >= 0 else "must be a finite price >= 0"


def _invalid(problems: list[str]) -> NoReturn:
    count = len(problems)
    click.echo(f"kubetide shadow report: {count} problem{'s' if count != 1 else ''}:", err=True)
    for problem in problems:
        click.echo(f"  {problem}", err=True)
    sys.exit(EXIT_INVALID)
