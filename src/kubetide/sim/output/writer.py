"""All of a run's files in one call: ``summary.json``, ``events.jsonl``, ``timeline.csv``, ``report.html``
(contract §9 ``--output-dir``), into a directory made if missing."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from kubetide.sim.output.events import EventLog
from kubetide.sim.output.meta import ReportMeta
from kubetide.sim.output.report import write_report
from kubetide.sim.output.summary import Summary, write_summary_json
from kubetide.sim.output.timeline import Timeline

__all__ = ["OutputPaths", "write_outputs"]


@dataclass(frozen=True)
class OutputPaths:
    summary: Path
    events: Path
    timeline: Path
    report: Path


def write_outputs(
    output_dir: str | Path,
    summary: Summary,
    timeline: Timeline,
    events: EventLog,
    meta: ReportMeta,
    *,
    report: str | Path | None = None,
) -> OutputPaths:
    """Write the four files; ``report`` puts ``report.html`` elsewhere (the CLI's ``--report FILE``)."""
    directory = Path(output_dir)
    directory.mkdir(parents=True, exist_ok=True)
    paths = OutputPaths(
        summary=directory / "summary.json",
        events=directory / "events.jsonl",
        timeline=directory / "timeline.csv",
        report=Path(report) if report is not None else directory / "report.html",
    )
    write_summary_json(paths.summary, summary)
    events.write_jsonl(paths.events)
    timeline.write_csv(paths.timeline)
    paths.report.parent.mkdir(parents=True, exist_ok=True)
    write_report(paths.report, summary, timeline, events, meta)
    return paths
