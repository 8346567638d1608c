"""``--set KEY=VALUE`` overrides: applied before validation, bad paths reported clearly."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from scenario_builders import doc, load, problems

from kubetide.model.errors import ManifestError
from kubetide.sim.scenario import load_scenario
from kubetide.sim.scenario.overrides import apply_overrides, parse_override
from kubetide.sim.scenario.paths import format_path, parse_path


def test_values_are_yaml_scalars() -> None:
    scenario = load(
        doc(),
        overrides=(
            "spec.nodeGroups[0].maxSize=5",
            "spec.autoscalers.clusterAutoscaler.flags.expander=price",
            "spec.autoscalers.clusterAutoscaler.flags.scale-down-enabled=false",
            "spec.duration=2h",
            "metadata.name=sweep-5",
        ),
    )
    assert scenario.spec.nodeGroups[0].maxSize == 5
    ca = scenario.spec.autoscalers.clusterAutoscaler
    assert ca is not None and ca.flag("expander") == "price" and ca.flag("scale-down-enabled") is False
    assert scenario.spec.duration == 7200 and scenario.name == "sweep-5"


def test_missing_sections_are_created() -> None:
    data = doc()
    del data["spec"]["autoscalers"]
    scenario = load(
        data,
        overrides=("spec.autoscalers.escalator.enabled=false", 'spec.nodeGroups[0].labels["team.io/x"]=a'),
    )
    assert scenario.spec.autoscalers.escalator is not None and not scenario.spec.autoscalers.escalator.enabled
    assert scenario.spec.nodeGroups[0].labels == {"team.io/x": "a"}


def test_overridden_values_are_validated_like_the_file() -> None:
    assert problems(doc(), overrides=("spec.nodeGroups[1].maxSize=-1",)) == [
        "spec.nodeGroups[1].maxSize: must be >= 0, got -1"
    ]


def test_bad_overrides_are_all_reported() -> None:
    assert problems(
        doc(), overrides=("spec.nodeGroups[5].maxSize=1", "noequals", "spec..x=1", "spec.duration.x=1")
    ) == [
        "spec.nodeGroups[5].maxSize: cannot set: spec.nodeGroups has 2 item(s) (--set)",
        "--set: expected KEY=VALUE, got 'noequals'",
        "--set: cannot read 'spec..x' at position 4: expected a name, [index] or [\"key\"]",
        "spec.duration.x: cannot set: spec.duration is not a mapping (--set)",
    ]


def test_overrides_do_not_change_the_input() -> None:
    data = doc()
    apply_overrides(data, ["spec.seed=99"])
    assert data["spec"]["seed"] == 7


def test_an_index_one_past_the_end_appends() -> None:
    out = apply_overrides(
        doc(), ["spec.nodeGroups[2]={name: extra, instanceType: m5.large, minSize: 0, maxSize: 1}"]
    )
    assert load(out).spec.nodeGroups[2].name == "extra"


def test_parse_override_keeps_unreadable_yaml_as_text() -> None:
    assert parse_override("metadata.name=a: b: c") == (["metadata", "name"], "a: b: c")
    assert parse_override("spec.seed=") == (["spec", "seed"], "")


@pytest.mark.parametrize(
    "path",
    [
        "spec.nodeGroups[0].maxSize",
        'spec.nodeGroups[0].labels["a.b/c"]',
        "spec.autoscalers.clusterAutoscaler.flags.scan-interval",
    ],
)
def test_paths_round_trip(path: str) -> None:
    assert format_path(parse_path(path)) == path


def test_load_scenario_applies_overrides(tmp_path: Path) -> None:

    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(doc()))
    assert load_scenario(path, ["spec.seed=3"]).spec.seed == 3
    with pytest.raises(ManifestError, match=r"spec\.seed: must be >= 0"):
        load_scenario(path, ["spec.seed=-3"])
