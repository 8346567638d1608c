"""A shadow cannot write: its connection refuses every request that is not a read before sending it,
and its gate refuses the ports' writes. Its flags are checked as a whole (exit 2, each flag named)."""

from __future__ import annotations

from pathlib import Path

import httpx2
import pytest
from click.testing import CliRunner
from prometheus_client import REGISTRY

from kubetide.cli import main
from kubetide.kube.rest import Rest
from kubetide.live.guard import LeadershipLost, WriteGate, WriteRefused, read_only_hook


def client(allow_events: bool) -> tuple[Rest, list[str]]:
    sent: list[str] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        sent.append(f"{request.method} {request.url.path}")
        return httpx2.Response(200, json={})

    http = httpx2.Client(
        base_url="https://api.test",
        transport=httpx2.MockTransport(handler),
        event_hooks={"request": [read_only_hook("shadow-test", allow_events=allow_events)]},
    )
    return Rest(http), sent


def refused() -> float:
    return (
        REGISTRY.get_sample_value("kubetide_shadow_writes_refused_total", {"component": "shadow-test"}) or 0.0
    )


def test_reads_pass_and_writes_are_refused_before_they_are_sent() -> None:
    rest, sent = client(allow_events=False)
    before = refused()
    rest.request("GET", "/api/v1/nodes")
    for method, path in [
        ("POST", "/api/v1/namespaces/kube-system/configmaps"),
        ("PUT", "/api/v1/nodes/n1"),
        ("PATCH", "/api/v1/nodes/n1"),
        ("DELETE", "/api/v1/nodes/n1"),
        ("POST", "/api/v1/namespaces/ns/pods/p/eviction"),
        ("POST", "/api/v1/namespaces/default/events"),  # not asked for
    ]:
        with pytest.raises(WriteRefused, match=f"{method} {path} was not sent"):
            rest.request(method, path, body={})
    assert sent == ["GET /api/v1/nodes"]
    assert refused() == before + 6


def test_with_shadow_events_the_one_write_that_passes_is_an_event() -> None:
    rest, sent = client(allow_events=True)
    rest.request("POST", "/api/v1/namespaces/default/events", body={})
    rest.request("PATCH", "/api/v1/namespaces/default/events/n1.abc", body={})
    with pytest.raises(WriteRefused):
        rest.request("POST", "/api/v1/namespaces/default/events/n1.abc/x", body={})
    with pytest.raises(WriteRefused):
        rest.request("PATCH", "/api/v1/namespaces/default/pods/p", body={})
    assert sent == [
        "POST /api/v1/namespaces/default/events",
        "PATCH /api/v1/namespaces/default/events/n1.abc",
    ]


def test_a_shadow_gate_refuses_every_write_even_when_it_could_act() -> None:
    gate = WriteGate("shadow-test", lambda: True, shadow=True)
    with pytest.raises(LeadershipLost):
        gate.admit("delete-node", "delete node n1", lambda: LeadershipLost("refused"))


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["run", *args])
    assert "Traceback" not in result.output + result.stderr
    return result.exit_code, result.stderr


@pytest.mark.parametrize(
    ("component", "period_flag", "base"),
    [
        ("cluster-autoscaler", "--scan-interval", ["--cloud-provider=kwok", "--cloud-config=c.yaml"]),
        ("hpa", "--horizontal-pod-autoscaler-sync-period", []),
    ],
)
def test_shadow_flags_are_checked_together_and_named(
    component: str, period_flag: str, base: list[str]
) -> None:
    code, err = run(
        component, *base, "--shadow", "--dry-run", "--once", "--leader-elect=true", "--shadow-match-window=1s"
    )
    assert code == 2
    assert "--shadow-dir: required with --shadow" in err
    assert "--dry-run: not with --shadow" in err
    assert "--once: not with --shadow" in err
    assert "--leader-elect: not with --shadow: a shadow takes no Lease" in err
    assert f"--shadow-match-window: must be at least {period_flag}" in err
    code, err = run(component, *base, "--shadow-events", "--shadow-dir=x")
    assert code == 2
    assert (
        "--shadow-events: only used with --shadow" in err and "--shadow-dir: only used with --shadow" in err
    )


def test_a_shadow_dir_that_cannot_be_used_is_named(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    code, err = run("escalator", "--nodegroups=x.yaml", "--shadow", f"--shadow-dir={blocker}", "--drymode")
    assert code == 2
    assert f"--shadow-dir: {blocker}" in err and "--drymode: not with --shadow" in err
