"""The report's event log: the events a person can read, as an HTML table filterable by source.

``events.jsonl`` keeps every event; a page cannot. Per-pod scheduler events (a ``Scheduled`` per pod,
a ``FailedScheduling`` per attempt) are most of a big run's log and say little one by one, so they are
grouped per minute into one row each ("37 pods scheduled onto 4 nodes"). If the log is still longer
than ``max_rows``, the page shows its start and its end with a row saying how many were left out.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from html import escape

from kubetide.sim.output.events import SOURCES, EventTuple
from kubetide.sim.output.svgplot import format_clock

__all__ = ["GROUPED", "EventRow", "event_rows", "render_event_counts", "render_event_log"]

GROUPED: frozenset[tuple[str, str]] = frozenset(
    {("scheduler", "Scheduled"), ("scheduler", "FailedScheduling")}
)
_WARNING_WORDS = (
    "Fail",
    "Backoff",
    "TimedOut",
    "NotReady",
    "NotTrigger",
    "Mismatch",
    "FaultStarted",
    "Unregistered",
)


@dataclass
class EventRow:
    t: float
    source: str
    reason: str
    object: str
    message: str
    count: int = 1
    objects: list[str] = field(default_factory=list)
    nodes: set[str] = field(default_factory=set)

    @property
    def warning(self) -> bool:
        return any(word in self.reason for word in _WARNING_WORDS)


def event_rows(
    events: Iterable[EventTuple], *, group_seconds: float = 60.0, max_rows: int = 5000
) -> tuple[list[EventRow], int]:
    """Rows for the table, and how many rows were left out in the middle (0 if none)."""
    rows: list[EventRow] = []
    open_groups: dict[tuple[str, str, int], EventRow] = {}
    for t, source, reason, obj, message, data in events:
        if (source, reason) not in GROUPED:
            rows.append(EventRow(t, source, reason, obj, message))
            continue
        bucket = (source, reason, int(t // group_seconds))
        row = open_groups.get(bucket)
        if row is None:
            row = EventRow(t, source, reason, obj, message)
            open_groups[bucket] = row
            rows.append(row)
        else:
            row.count += 1
        if len(row.objects) < 4:
            row.objects.append(obj)
        node = data.get("node")
        if isinstance(node, str):
            row.nodes.add(node)
    for row in rows:
        if row.count > 1:
            _describe_group(row)
    if len(rows) <= max_rows:
        return rows, 0
    half = max_rows // 2
    return rows[:half] + rows[len(rows) - half :], len(rows) - 2 * half


def _describe_group(row: EventRow) -> None:
    shown = ", ".join(o.rsplit("/", 1)[-1] for o in row.objects[:3])
    more = ", …" if row.count > 3 else ""
    if row.reason == "Scheduled":
        onto = f" onto {len(row.nodes)} node{'s' if len(row.nodes) != 1 else ''}" if row.nodes else ""
        row.message = f"{row.count} pods scheduled{onto} within a minute"
    else:
        row.message = f"{row.count} {row.reason} events within a minute; first: {row.message}"
    row.object = f"{shown}{more}"


def render_event_log(rows: Sequence[EventRow], omitted: int, by_source: Mapping[str, int]) -> str:
    """The filter controls (each source with its number of events) and the table; the page's script
    does the filtering."""
    counts = dict(by_source)
    present = [s for s in SOURCES if s in counts]
    total = sum(counts.values())
    boxes = "".join(
        f'<label class="src-filter"><input type="checkbox" value="{s}" checked>'
        f'<span class="src src-{s}">{s}</span> <small>{counts[s]:,}</small></label>'
        for s in present
    )
    body: list[str] = []
    for i, row in enumerate(rows):
        if omitted and i == len(rows) // 2:
            body.append(
                f'<tr class="gap"><td colspan="5">… {omitted:,} rows left out here; '
                "every event is in <code>events.jsonl</code> …</td></tr>"
            )
        css = ' class="warn"' if row.warning else ""
        count = f' <span class="count">×{row.count}</span>' if row.count > 1 else ""
        body.append(
            f'<tr data-src="{escape(row.source)}"{css}><td class="t">{format_clock(row.t, True)}</td>'
            f'<td><span class="src src-{escape(row.source)}">{escape(row.source)}</span></td>'
            f'<td>{escape(row.reason)}{count}</td><td class="obj">{escape(row.object)}</td>'
            f"<td>{escape(row.message)}</td></tr>"
        )
    note = (
        f"{total:,} events; per-pod scheduler events grouped by minute"
        + (f"; {omitted:,} rows left out in the middle" if omitted else "")
        + ". The full log is <code>events.jsonl</code>."
    )
    return (
        '<div class="event-controls">'
        f'<div class="src-filters">{boxes}</div>'
        '<input type="search" id="event-search" placeholder="Filter by reason, object or message…">'
        '<span id="event-shown" class="muted"></span></div>'
        f'<p class="muted small">{note}</p>'
        '<div class="event-scroll"><table id="events" class="events">'
        '<colgroup><col class="c-t"><col class="c-src"><col class="c-reason"><col class="c-obj"><col></colgroup>'
        "<thead><tr><th>time</th><th>source</th><th>reason</th><th>object</th><th>message</th></tr></thead>"
        f"<tbody>{''.join(body)}</tbody></table></div>"
    )


def render_event_counts(counts: dict[tuple[str, str], int]) -> str:
    """Counts by source and reason, sources in the contract's order."""
    order = {s: i for i, s in enumerate(SOURCES)}
    items = sorted(counts.items(), key=lambda kv: (order.get(kv[0][0], 99), -kv[1], kv[0][1]))
    body = "".join(
        f'<tr><td><span class="src src-{escape(s)}">{escape(s)}</span></td><td>{escape(r)}</td>'
        f'<td class="num">{n:,}</td></tr>'
        for (s, r), n in items
    )
    return (
        '<table class="data"><thead><tr><th>source</th><th>reason</th><th class="num">events</th></tr></thead>'
        f"<tbody>{body}</tbody></table>"
    )
