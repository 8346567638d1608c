"""report.html: self-contained, every plot the contract names, summary tables, a filterable event log."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import numpy as np
from output_synthetic import fake_run

from kubetide.sim.output import (
    EventLog,
    ReportMeta,
    Summary,
    Timeline,
    render_report,
    timeline_columns,
    write_outputs,
)
from kubetide.sim.output.events import Event
from kubetide.sim.output.report_events import event_rows
from kubetide.sim.replay.recording import RecordedDay, RecordedEvent


def test_report_is_self_contained() -> None:
    run = fake_run()
    html = render_report(run.summary, run.timeline, run.events, run.meta)
    assert "Content-Security-Policy" in html and "default-src 'none'" in html
    assert not re.search(r"https?://", html)
    assert not re.search(r"<(link|img|iframe|object|embed)\b", html)
    assert not re.search(r"<script[^>]+src=", html)


def test_report_has_each_plot_with_its_lines() -> None:
    run = fake_run(workloads=2)
    html = render_report(run.summary, run.timeline, run.events, run.meta)
    ids = re.findall(r'<figure class="chart" id="chart-([a-z]+)"', html)
    assert ids == ["nodes", "pending", "replicas", "cpu", "rps", "cost"]
    figures = dict(zip(ids, re.split(r'<figure class="chart"', html)[1:], strict=True))
    assert figures["nodes"].count('class="line"') == 4  # Ready and target for two groups
    assert figures["replicas"].count('class="line"') == 4
    assert figures["cpu"].count('class="rule"') == 2  # each workload's HPA target
    assert "web HPA target 60%" in figures["cpu"]
    assert figures["rps"].count('class="line"') == 4  # load and capacity per workload
    for figure in figures.values():
        hover = json.loads(re.search(r"data-hover='([^']*)'", figure).group(1).replace("&quot;", '"'))
        assert 0 < len(hover["t"]) <= 600
        assert all(len(s["v"]) == len(hover["t"]) for s in hover["s"])


def test_report_has_summary_tables_and_the_event_log() -> None:
    run = fake_run()
    html = render_report(run.summary, run.timeline, run.events, run.meta)
    for title in (
        "Run",
        "Pods",
        "Nodes and cost by group",
        "Workloads",
        "Autoscalers",
        "Events by source and reason",
    ):
        assert f"<h3>{title}</h3>" in html
    assert 'id="events"' in html
    sources = set(re.findall(r'<tr data-src="([a-z-]+)"', html))
    assert {"scenario", "cloud", "kubelet", "scheduler", "hpa", "cluster-autoscaler"} <= sources
    assert set(re.findall(r'class="src-filter"><input type="checkbox" value="([a-z-]+)"', html)) == sources


def test_text_is_escaped() -> None:
    run = fake_run(hours=0.5)
    run.events.emit(
        1800, "scenario", "ActionApplied", "ConfigMap/default/<x>", "<script>alert(1)</script> & more"
    )
    html = render_report(run.summary, run.timeline, run.events, run.meta)
    assert "<script>alert(1)</script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt; &amp; more" in html


def test_per_pod_scheduler_events_are_grouped_per_minute() -> None:
    events = [
        Event(float(i), "scheduler", "Scheduled", f"Pod/default/web-{i}", "assigned", {"node": f"n-{i % 3}"})
        for i in range(120)
    ]
    events.insert(
        30, Event(30.0, "hpa", "SuccessfulRescale", "HorizontalPodAutoscaler/default/web", "New size: 9", {})
    )
    rows, omitted = event_rows(events)
    assert omitted == 0
    assert [(r.source, r.count) for r in rows] == [("scheduler", 60), ("hpa", 1), ("scheduler", 60)]
    assert rows[0].message == "60 pods scheduled onto 3 nodes within a minute"
    assert rows[0].object.startswith("web-0, web-1, web-2")


def test_very_long_logs_show_start_and_end() -> None:
    events = [
        Event(float(i), "cloud", "InstanceCreated", f"Instance/i-{i}", "created", {}) for i in range(20_000)
    ]
    rows, omitted = event_rows(events, max_rows=1000)
    assert len(rows) == 1000 and omitted == 19_000
    assert rows[0].object == "Instance/i-0" and rows[-1].object == "Instance/i-19999"


def test_empty_run_renders(tmp_path: Path) -> None:
    columns = timeline_columns(["a"], [])
    meta = ReportMeta(scenario="empty", seed=0, duration=0, node_groups=("a",))
    paths = write_outputs(tmp_path / "out", Summary("empty", 0, 0.0), Timeline(columns), EventLog(), meta)
    html = paths.report.read_text()
    assert "<svg" in html and 'id="chart-nodes"' in html


def test_writer_writes_the_four_files(tmp_path: Path) -> None:
    run = fake_run(hours=1)
    paths = write_outputs(tmp_path / "deep" / "dir", run.summary, run.timeline, run.events, run.meta)
    assert sorted(p.name for p in (tmp_path / "deep" / "dir").iterdir()) == [
        "events.jsonl",
        "report.html",
        "summary.json",
        "timeline.csv",
    ]
    assert json.loads(paths.summary.read_text())["scenario"] == "fake-sine"
    assert len(paths.events.read_text().splitlines()) == len(run.events)
    assert len(paths.timeline.read_text().splitlines()) == len(run.timeline) + 1
    other = write_outputs(
        tmp_path / "o2", run.summary, run.timeline, run.events, run.meta, report=tmp_path / "r" / "x.html"
    )
    assert other.report == tmp_path / "r" / "x.html" and other.report.exists()


def test_long_timelines_are_downsampled_in_the_page() -> None:
    columns = timeline_columns(["a"], [])
    tl = Timeline(columns)
    n = 40_320  # a week at 15 s
    rng = np.random.default_rng(1)
    for i in range(n):
        tl.append([i * 15.0, 3 + (i == 12_345) * 40, 3, int(rng.integers(0, 2)), 0.5])
    meta = ReportMeta(scenario="week", seed=0, duration=n * 15.0, node_groups=("a",))
    html = render_report(Summary("week", 0, n * 15.0), tl, EventLog(), meta)
    nodes = html.split('id="chart-nodes"')[1].split("</figure>")[0]
    d = re.search(r'<path class="line" data-label="a Ready" d="([^"]+)"', nodes).group(1)
    assert d.count("L") < 2100
    assert len(html) < 2_000_000


def test_report_and_tables_show_only_the_autoscalers_that_ran() -> None:
    from kubetide.sim.output.summary_text import render_summary

    run = fake_run()
    run.summary.hpa.enabled, run.summary.hpa.rescales = True, 7
    run.summary.cluster_autoscaler.enabled = False
    html = render_report(run.summary, run.timeline, run.events, run.meta)
    text = render_summary(run.summary)
    card, row = '<div class="label">Cluster autoscaler</div>', "<td>cluster-autoscaler</td>"
    assert '<div class="label">HPA</div>' in html and "7 rescales" in html and "\n  hpa " in text
    assert card not in html and row not in html
    assert "\n  cluster-autoscaler " not in text
    run.summary.cluster_autoscaler.enabled = True
    html = render_report(run.summary, run.timeline, run.events, run.meta)
    assert card in html and row in html
    assert "\n  cluster-autoscaler " in render_summary(run.summary)


def _recorded_day() -> RecordedDay:
    t = np.array([0.0, 600.0, 1200.0])
    series = {
        "nodes:general": np.array([2.0, 3.0, 2.0]),
        "replicas:Deployment/default/web": np.array([2.0, 4.0, 2.0]),
        "pending_pods": np.array([0.0, 1.0, 0.0]),
    }
    events = (
        RecordedEvent(600, "cluster-autoscaler", "ScaledUpGroup", "ConfigMap/kube-system/status",
                      "Scale-up: setting group general size to 3 instead of 2 (max: 10)"),
        RecordedEvent(605, "cluster-autoscaler", "ScaledUpGroup", "ConfigMap/kube-system/status",
                      "Scale-up: group general size set to 3 instead of 2 (max: 10)"),
        RecordedEvent(590, "hpa", "SuccessfulRescale", "HorizontalPodAutoscaler/default/web",
                      "New size: 4; reason: cpu resource utilization above target"),
    )  # fmt: skip
    return RecordedDay(t, series, events)


def _figures(html: str) -> dict[str, str]:
    ids = re.findall(r'<figure class="chart" id="chart-([a-z]+)"', html)
    return dict(zip(ids, re.split(r'<figure class="chart"', html)[1:], strict=True))


def test_a_replays_report_draws_the_recorded_day_beside_the_run() -> None:
    run = fake_run(hours=1.0)
    plain = render_report(run.summary, run.timeline, run.events, run.meta)
    meta = dataclasses.replace(run.meta, recorded=_recorded_day())
    html = render_report(run.summary, run.timeline, run.events, meta)
    figures = _figures(html)
    # Each recorded series dotted beside the run's, in the chart it belongs to.
    for chart, label in (
        ("nodes", "general Ready, recorded"),
        ("replicas", "web replicas, recorded"),
        ("pending", "pending, recorded"),
    ):
        assert re.search(
            rf'<path class="line" data-label="{label}" d="[^"]+" [^>]*stroke-dasharray="2 3"', figures[chart]
        ), chart
    # A series the recording does not have (a group it never saw) is not invented.
    assert "spot-a Ready, recorded" not in html
    # The recorded decisions as their own markers: a scale-up once (CA's second event is not one), on the
    # node plots; the HPA's rescale on the replicas plot.
    nodes_recorded = re.findall(r'<g class="marker recorded"><title>([^<]*)</title>', figures["nodes"])
    assert len(nodes_recorded) == 1 and "recorded ScaledUpGroup" in nodes_recorded[0]
    replicas_recorded = re.findall(r'<g class="marker recorded"><title>([^<]*)</title>', figures["replicas"])
    assert len(replicas_recorded) == 1 and "recorded SuccessfulRescale" in replicas_recorded[0]
    assert "the recorded day's decisions" in html and "the recorded day's decisions" not in plain
    # The run's own hover: the recorded value at each of the run's times, NaN before nothing.
    hover = json.loads(re.search(r"data-hover='([^']*)'", figures["nodes"]).group(1).replace("&quot;", '"'))
    recorded = next(s for s in hover["s"] if s["l"] == "general Ready, recorded")
    at = dict(zip(hover["t"], recorded["v"], strict=True))
    assert at[0] == 2 and at[900] == 3 and at[1800] == 2
    # Without a recording, nothing of it.
    assert "marker recorded" not in plain and ", recorded" not in plain
