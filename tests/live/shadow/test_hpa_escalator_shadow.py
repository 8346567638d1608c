"""The HPA's and Escalator's shadows: their decisions compared with what the acting controller did."""

from __future__ import annotations

import dataclasses
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from kubetide.hpa.config import HPAConfig
from kubetide.hpa.driver import HPADriver
from kubetide.hpa.ports import Scale
from kubetide.live.shadow.compare import (
    SCALE_DOWN,
    SCALE_UP,
    Action,
    Comparison,
    Kept,
    ShadowLoop,
    Step,
    compare,
)
from kubetide.live.shadow.events import RunningEvents
from kubetide.live.shadow.hpa_shadow import HPAShadow, ListingKept, VirtualScales
from kubetide.live.shadow.journal import Journal
from kubetide.live.shadow.shadow import ShadowRecorder
from kubetide.model.hpa import HPAStatus

sys.path.insert(0, str(Path(__file__).parents[2]))  # the HPA driver tests' doubles
from hpa.test_driver import Events, Source, Worlds, in_ns
from hpa.world import World
from kubetide.escalator.decision import EscalatorDecision
from kubetide.escalator.executor import Execution
from kubetide.escalator.reasons import Reason
from kubetide.escalator.result import GroupRun
from kubetide.live.shadow.escalator_shadow import escalator_intents, escalator_kept

sys.path.insert(0, str(Path(__file__).parents[2] / "escalator"))
from builders import group


def shadow_of(
    ports: Worlds, source: Source, events: Events, directory: Path, running: RunningEvents | None = None
) -> HPAShadow:
    listing = ListingKept(source)
    scales = VirtualScales(ports)
    driver = HPADriver(listing, ports, scales, events, HPAConfig(sync_period=15.0), shadow=True)
    recorder = ShadowRecorder("hpa", "the HPA controller", Journal(directory), 30.0)
    return HPAShadow(driver, listing, recorder, scales, running)


def test_a_desired_count_that_differs_for_a_window_is_one_record_with_kubetides_reasons(
    tmp_path: Path,
) -> None:
    ports, source, events = Worlds(a=World(replicas=2, usage_per_pod=900)), Source(), Events()
    # The acting controller wrote 2 (its status); kubetide, on the same metrics, wants 4.
    source.add(
        dataclasses.replace(
            in_ns("a"), status=HPAStatus(current_replicas=2, desired_replicas=2, last_scale_time=0.0)
        )
    )
    shadow = shadow_of(ports, source, events, tmp_path)
    opened = []
    for t in range(0, 61, 15):
        tick = shadow.tick(float(t))
        opened += tick.opened
        assert tick.timeline["hpas"] == {"a/web": {"running": 2, "kubetide": 4}}
    (d,) = opened
    assert (d.kind, d.subject, dict(d.delta), d.at) == ("replicas", "a/web", {"a/web": 2}, 0.0)
    assert d.sentence("the HPA controller").startswith(
        "the HPA controller wanted 2 replicas for a/web (since 00:00:00 or before); "
        "kubetide would have had 4, its own count since 00:00:00: "
    )
    assert "cpu" in d.why and "proposal 4" in d.why
    # Nothing written: no scale, no status, no Event.
    assert ports.worlds["a"].writes == [] and source.writes == [] and events.items == []
    # The acting controller comes round to 4: the difference is gone.
    source.hpas["a/web"] = dataclasses.replace(
        source.hpas["a/web"], status=HPAStatus(2, 4, last_scale_time=70.0)
    )  # type: ignore[arg-type]
    assert [c.id for c in shadow.tick(75.0).closed] == [d.id]


def rescale_event(at: float, size: int, reason: str, count: int = 1) -> dict[str, Any]:
    """A SuccessfulRescale as kube-controller-manager writes it (``horizontal.go``)."""
    stamp = datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return {
        "metadata": {"uid": f"rescale-{at}", "namespace": "a"},
        "source": {"component": "horizontal-pod-autoscaler"},
        "involvedObject": {"kind": "HorizontalPodAutoscaler", "namespace": "a", "name": "web"},
        "reason": "SuccessfulRescale",
        "message": f"New size: {size}; reason: {reason}",
        "count": count,
        "lastTimestamp": stamp,
    }


def test_kubetide_holds_its_own_count_through_its_stabilization_while_the_running_one_scales_down(
    tmp_path: Path,
) -> None:
    """The counterfactual: kubetide decides on its own replicas (4), not on the 1 the running controller
    scaled to; its 300 s downscale stabilization keeps 4 until 300 s after its last high recommendation,
    the disagreement says when and why the running one rescaled, and a restarted shadow goes on from the
    count its journal recorded (not from the cluster's)."""
    world = World(replicas=4, usage_per_pod=100)  # 10 % of the request: a proposal of 1
    ports, source, events = Worlds(a=world), Source(), Events()
    source.add(dataclasses.replace(in_ns("a"), status=HPAStatus(4, 4, last_scale_time=-600.0)))
    listed: list[dict[str, Any]] = []
    running = RunningEvents(lambda: listed, "the HPA controller")
    shadow = shadow_of(ports, source, events, tmp_path, running)
    assert shadow.tick(0.0).timeline["hpas"] == {"a/web": {"running": 4, "kubetide": 4}}
    # The running controller (no stabilization) scales to 1 at t=10, and says so.
    world.replicas = 1
    source.hpas["a/web"] = dataclasses.replace(
        source.hpas["a/web"], status=HPAStatus(1, 1, last_scale_time=10.0)
    )  # type: ignore[arg-type]
    listed.append(rescale_event(10.0, 1, "All metrics below target"))
    opened, counts = [], []
    for t in range(15, 121, 15):
        tick = shadow.tick(float(t))
        opened += tick.opened
        counts.append(tick.timeline["hpas"]["a/web"]["kubetide"])
    assert counts == [4] * len(counts)  # its own count, held by its stabilization
    (d,) = opened
    assert (d.at, dict(d.delta)) == (10.0, {"a/web": 3})
    assert d.running == "rescaled a/web to 1 at 00:00:10 (All metrics below target)"
    assert d.kubetide == "would have had 4" and "ScaleDownStabilized 4" in d.why
    assert world.writes == [] and source.writes == [] and events.items == []

    # A restart at 120 s: the count comes back from the journal, the open record is resumed.
    again = shadow_of(ports, source, events, tmp_path, RunningEvents(lambda: listed, "the HPA controller"))
    tick = again.tick(135.0)
    assert tick.timeline["hpas"]["a/web"] == {"running": 1, "kubetide": 4} and tick.opened == ()
    # Its memory restarts with it (a new window from 135 s): the recommendation of 4 at 135 s still
    # counts at 435 s (horizontal.go, stabilizeRecommendation: only one Before the cutoff is old), so it
    # comes down to 1 at 450 s, and the two agree.
    closed_at = None
    for t in range(150, 481, 15):
        tick = again.tick(float(t))
        if tick.closed:
            closed_at = t
            assert [c.id for c in tick.closed] == [d.id]
            break
    assert closed_at == 450
    assert tick.timeline["hpas"]["a/web"] == {"running": 1, "kubetide": 1}


def test_the_journals_last_loop_is_read_from_the_end(tmp_path: Path) -> None:
    journal = Journal(tmp_path)
    assert journal.last_timeline("hpa") is None
    for t in range(3000):  # more than one block
        journal.timeline({"at": float(t), "component": "hpa" if t % 3 else "other", "hpas": {"k": t}})
    last = journal.last_timeline("hpa")
    assert last is not None and last["at"] == 2999.0
    other = journal.last_timeline("other")
    assert other is not None and other["at"] == 2997.0
    assert journal.last_timeline("escalator") is None


def test_kubetides_count_follows_only_its_own_rescales() -> None:
    world = World(replicas=3)
    scales = VirtualScales(Worlds(a=world))
    ref = in_ns("a").scale_target_ref
    assert scales.get_scale("a", ref).spec_replicas == 3  # the cluster's, the first time
    world.replicas = 7
    assert scales.get_scale("a", ref) == Scale(3, 3, "app=web")  # kubetide's from then on
    scales.counts[("a", ref.kind, ref.name)] = 5
    assert scales.get_scale("a", ref).status_replicas == 5


def test_the_hpa_shadow_needs_a_shadow_driver(tmp_path: Path) -> None:
    ports, source, events = Worlds(), Source(), Events()
    listing = ListingKept(source)
    with pytest.raises(ValueError, match="shadow driver"):
        HPAShadow(
            HPADriver(listing, ports, ports, events),
            listing,
            ShadowRecorder("hpa", "x", Journal(tmp_path), 30.0),
            VirtualScales(ports),
        )


def test_escalators_decisions_are_intents_on_their_cloud_groups() -> None:
    options = group(name="batch", cloud_provider_group_name="asg-batch")
    up = EscalatorDecision("batch", 3, reasons=(Reason.BELOW_MIN_NODE_COUNT,), cpu_percent=120.0)
    down = EscalatorDecision("other", -2, cpu_percent=10.0)
    runs = [
        GroupRun("batch", up, Execution("batch"), options=options),
        GroupRun(
            "other", down, Execution("other"), options=group(name="other", cloud_provider_group_name="asg-o")
        ),
        GroupRun("idle", EscalatorDecision("idle", 0), Execution("idle"), options=group(name="idle")),
        GroupRun("broken", None, Execution("broken"), error="could not find node group"),
    ]
    intents = escalator_intents(runs, {"asg-batch": 2, "asg-o": 5}, 10.0)
    assert [(a.kind, a.subject, a.amount, a.size) for a in intents] == [
        (SCALE_UP, "asg-batch", 3, 2),
        (SCALE_DOWN, "asg-o", 2, 5),
    ]
    assert intents[0].why.startswith(str(Reason.BELOW_MIN_NODE_COUNT)) and "cpu 120%" in intents[0].why


def test_a_scale_down_kubetide_would_not_have_made_is_explained_by_its_decision_for_the_group() -> None:
    options = group(name="batch", cloud_provider_group_name="asg-batch")
    stay = EscalatorDecision("batch", 0, reasons=(Reason.NO_CHANGE,), cpu_percent=30.0, mem_percent=5.0)
    kept = escalator_kept([GroupRun("batch", stay, Execution("batch"), options=options)])
    assert kept == {"asg-batch": Kept("No need to scale (cpu 30%, memory 5% of the untainted nodes)")}
    state = Comparison(4.0)
    state, _, _ = compare(state, Step(ShadowLoop(0.0, kept=kept)))
    # The acting Escalator taints a node of the group at 2 s (a scale-down by one).
    down = Action(SCALE_DOWN, "asg-batch", "asg-batch", 2.0, amount=1, size=3)
    state, opened, _ = compare(state, Step(ShadowLoop(2.0, kept=kept), (down,)))
    assert opened == ()
    state, opened, _ = compare(state, Step(ShadowLoop(6.0, kept=kept)))
    (d,) = opened
    assert d.sentence("Escalator") == (
        "Escalator scaled down group asg-batch (3 -> 2) at 00:00:02; kubetide would not have scaled it "
        "down: No need to scale (cpu 30%, memory 5% of the untainted nodes)"
    )
