"""The simulator's outputs (contract §10): the event log, the timeline, the summary (JSON and the tables
printed on stdout), the self-contained HTML report, and the progress bar on stderr.

A run makes an ``EventLog`` and a ``Timeline`` (columns from ``timeline_columns``), emits and appends as
it goes, ticks a ``Progress``, fills a ``Summary`` at the end, and hands all of it with a ``ReportMeta``
to ``write_outputs`` (``meta_from_scenario`` builds the meta); ``render_summary`` gives the stdout text.
"""

from kubetide.sim.output.events import SOURCES, Event, EventContractError, EventLog, Source
from kubetide.sim.output.meta import ReportMeta
from kubetide.sim.output.progress import Progress
from kubetide.sim.output.report import render_report, write_report
from kubetide.sim.output.scenario_meta import meta_from_scenario
from kubetide.sim.output.summary import (
    ClusterAutoscalerSummary,
    EscalatorSummary,
    GroupSummary,
    HpaSummary,
    NodesSummary,
    PodsSummary,
    Summary,
    TimeToSchedule,
    WorkloadSummary,
    time_to_schedule,
    write_summary_json,
)
from kubetide.sim.output.summary_text import render_summary
from kubetide.sim.output.timeline import Timeline, timeline_columns
from kubetide.sim.output.writer import OutputPaths, write_outputs

__all__ = [
    "SOURCES",
    "ClusterAutoscalerSummary",
    "EscalatorSummary",
    "Event",
    "EventContractError",
    "EventLog",
    "GroupSummary",
    "HpaSummary",
    "NodesSummary",
    "OutputPaths",
    "PodsSummary",
    "Progress",
    "ReportMeta",
    "Source",
    "Summary",
    "TimeToSchedule",
    "Timeline",
    "WorkloadSummary",
    "meta_from_scenario",
    "render_report",
    "render_summary",
    "time_to_schedule",
    "timeline_columns",
    "write_outputs",
    "write_report",
    "write_summary_json",
]
