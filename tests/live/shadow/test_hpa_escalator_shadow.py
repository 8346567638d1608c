"""The HPA's and Escalator's shadows: their decisions compared with what the acting controller did."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import pytest

from kubetide.hpa.config import HPAConfig
from kubetide.hpa.driver import HPADriver
from kubetide.live.shadow.compare import SCALE_DOWN, SCALE_UP
from kubetide.live.shadow.hpa_shadow import HPAShadow, ListingKept
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
from kubetide.live.shadow.escalator_shadow import escalator_intents

sys.path.insert(0, str(Path(__file__).parents[2] / "escalator"))
from builders import group


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
    listing = ListingKept(source)
    driver = HPADriver(listing, ports, ports, events, HPAConfig(sync_period=15.0), shadow=True)
    shadow = HPAShadow(driver, listing, ShadowRecorder("hpa", "the HPA controller", Journal(tmp_path), 30.0))
    opened = []
    for t in range(0, 61, 15):
        tick = shadow.tick(float(t))
        opened += tick.opened
        assert tick.timeline["hpas"] == {"a/web": {"running": 2, "kubetide": 4}}
    (d,) = opened
    assert (d.kind, d.subject, dict(d.delta), d.at) == ("replicas", "a/web", {"a/web": 2}, 0.0)
    assert d.sentence("the HPA controller").startswith(
        "the HPA controller wanted 2 replicas for a/web (since 00:00:00 or before); kubetide would have wanted 4: "
    )
    assert "cpu" in d.why and "proposal 4" in d.why
    # Nothing written: no scale, no status, no Event.
    assert ports.worlds["a"].writes == [] and source.writes == [] and events.items == []
    # The acting controller comes round to 4: the difference is gone.
    source.hpas["a/web"] = dataclasses.replace(
        source.hpas["a/web"], status=HPAStatus(2, 4, last_scale_time=70.0)
    )  # type: ignore[arg-type]
    assert [c.id for c in shadow.tick(75.0).closed] == [d.id]


def test_the_hpa_shadow_needs_a_shadow_driver(tmp_path: Path) -> None:
    ports, source, events = Worlds(), Source(), Events()
    listing = ListingKept(source)
    with pytest.raises(ValueError, match="shadow driver"):
        HPAShadow(
            HPADriver(listing, ports, ports, events),
            listing,
            ShadowRecorder("hpa", "x", Journal(tmp_path), 30.0),
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
