"""The report in a real browser: Debian's headless Chromium opens report.html from synthetic data with the
network shut, and the rendered DOM must hold every plot's lines, a working script, and no error text.

Not skipped when Chromium is missing: a report nobody has seen render is not tested. Install it with
``apt-get install -y chromium``. Set ``KUBETIDE_SCREENSHOT_DIR`` to keep the screenshot for a look.
"""

from __future__ import annotations

import os
import re
import shutil
import struct
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest
from output_synthetic import fake_run

from kubetide.sim.output import write_outputs

CHARTS = ("nodes", "pending", "replicas", "cpu", "rps", "cost")


def chromium() -> str:
    path = shutil.which("chromium") or ("/usr/bin/chromium" if os.path.exists("/usr/bin/chromium") else None)
    if path is None:
        pytest.fail(
            "Debian's chromium is needed for the report's browser test and is not installed: "
            "run `apt-get install -y chromium` (as root: apt-get update first)"
        )
    return path


def run_chromium(profile: Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = [
        chromium(),
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-extensions",
        "--hide-scrollbars",
        # Networking effectively off: every name resolves nowhere and every proxy connection is refused,
        # so a report that tried to load anything would show it (and the page's CSP forbids it anyway).
        "--proxy-server=127.0.0.1:9",
        "--host-resolver-rules=MAP * ~NOTFOUND",
        "--enable-logging=stderr",
        "--v=0",
        f"--user-data-dir={profile}",
        *args,
    ]
    return subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)


class Dom(HTMLParser):
    """Per chart: how many drawn line paths; the body's attributes; all visible text."""

    def __init__(self) -> None:
        super().__init__()
        self.chart: str | None = None
        self.lines: dict[str, int] = {}
        self.svgs: dict[str, int] = {}
        self.body: dict[str, str | None] = {}
        self.text: list[str] = []
        self.hidden_rows: list[str] = []
        self.shown_rows: list[str] = []
        self.in_code = 0  # inside <script> or <style>: source, not text a reader sees

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag in ("script", "style"):
            self.in_code += 1
        if tag == "body":
            self.body = a
        if tag == "figure" and (a.get("id") or "").startswith("chart-"):
            self.chart = (a["id"] or "")[len("chart-") :]
            self.lines[self.chart] = 0
            self.svgs[self.chart] = 0
        if self.chart and tag == "svg" and a.get("class") == "plot-svg":
            self.svgs[self.chart] += 1
        if self.chart and tag == "path" and a.get("class") == "line" and "L" in (a.get("d") or ""):
            self.lines[self.chart] += 1
        if tag == "tr" and a.get("data-src"):
            hidden = "display: none" in (a.get("style") or "")
            (self.hidden_rows if hidden else self.shown_rows).append(a["data-src"] or "")
        for value in a.values():
            if value and "NaN" in value:
                self.text.append(f"NaN in attribute: {value[:80]}")

    def handle_endtag(self, tag: str) -> None:
        if tag == "figure":
            self.chart = None
        if tag in ("script", "style"):
            self.in_code -= 1

    def handle_data(self, data: str) -> None:
        if not self.in_code:
            self.text.append(data)


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    run = fake_run(workloads=2)
    out = tmp_path_factory.mktemp("report")
    return write_outputs(out, run.summary, run.timeline, run.events, run.meta).report


def dump(report: Path, profile: Path, fragment: str = "") -> tuple[Dom, str]:
    result = run_chromium(profile, "--dump-dom", report.as_uri() + fragment)
    assert result.returncode == 0, result.stderr[-2000:]
    dom = Dom()
    dom.feed(result.stdout)
    return dom, result.stderr


def test_plots_render_and_the_script_runs(report: Path, tmp_path: Path) -> None:
    dom, log = dump(report, tmp_path / "profile")
    assert dom.body.get("data-ready") == "1", "the page's script did not finish"
    assert "data-js-error" not in dom.body, dom.body.get("data-js-error")
    assert "Uncaught" not in log and "Refused to" not in log, log[-2000:]
    assert list(dom.lines) == list(CHARTS)
    expected = {"nodes": 4, "pending": 1, "replicas": 4, "cpu": 2, "rps": 4, "cost": 1}
    for chart, count in expected.items():
        assert dom.svgs[chart] == 1, chart
        assert dom.lines[chart] == count, chart
    text = " ".join(dom.text)
    for bad in ("NaN", "undefined", "Traceback", "Error"):
        assert bad not in text, bad
    assert re.search(r"\d[\d,]* rows shown", text), "the event filter did not run"


def test_event_filter_from_the_url(report: Path, tmp_path: Path) -> None:
    dom, _ = dump(report, tmp_path / "profile", "#sources=hpa,cloud")
    assert set(dom.shown_rows) == {"hpa", "cloud"}
    assert {"scheduler", "kubelet", "cluster-autoscaler"} <= set(dom.hidden_rows)


def test_screenshot(report: Path, tmp_path: Path) -> None:
    shot = tmp_path / "report.png"
    result = run_chromium(
        tmp_path / "profile", f"--screenshot={shot}", "--window-size=1400,2400", report.as_uri()
    )
    assert result.returncode == 0 and shot.exists(), result.stderr[-2000:]
    header = shot.read_bytes()[:24]
    assert header[:8] == b"\x89PNG\r\n\x1a\n"
    assert struct.unpack(">II", header[16:24]) == (1400, 2400)
    assert shot.stat().st_size > 50_000  # a blank page compresses to a few kB
    keep = os.environ.get("KUBETIDE_SCREENSHOT_DIR")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        shutil.copy(shot, Path(keep) / "report.png")
