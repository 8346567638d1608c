"""All of a run's files in one call: ``summary.json``, ``events.jsonl``, ``timeline.csv``, ``report.html``
(contract §9 ``--output-dir``), into a directory made if missing."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from kubetide.sim.output.events import EventLog
from kubetide.sim.output.meta import ReportMeta
from kubetide.sim.output.report import write_report
from kubetide.sim.output.summary import Summary, write_summary_json
from kubetide.sim.output.timeline import Timeline

__all__ = ["CA_STATUS_FILE", "OutputPaths", "write_outputs"]

CA_STATUS_FILE = "cluster-autoscaler-status.yaml"


@dataclass(frozen=True)
class OutputPaths:
    summary: Path
    events: Path
    timeline: Path
    report: Path
    ca_status: Path | None = None  # cluster-autoscaler-status.yaml, when the cluster autoscaler ran


def write_outputs(
    output_dir: str | Path,
    summary: Summary,
    timeline: Timeline,
    events: EventLog,
    meta: ReportMeta,
    *,
    report: str | Path | None = None,
) -> OutputPaths:
    """Write the four files (and the cluster autoscaler's status ConfigMap when it ran, as
    ``cluster-autoscaler-status.yaml``); ``report`` puts ``report.html`` elsewhere (``--report FILE``)."""
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
    if meta.ca_status_config_map is not None:
        status = directory / CA_STATUS_FILE
        status.write_text(meta.ca_status_config_map, encoding="utf-8")
        paths = replace(paths, ca_status=status)
    return paths
