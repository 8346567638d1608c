"""The live commands' files as strictly as a scenario: Escalator's node groups (``--nodegroups``), the kwok
groups (``--cloud-config``) and the AWS price file (``--aws-price-file``). Every problem of a file at
once, exit 2, never a traceback: regressions for each class, then hypothesis over random structures
and random mutations of a valid file, where the outcome is a parsed config or the command's error.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_run_escalator import GOOD

from kubetide.commands.run.escalator import main as escalator_main
from kubetide.escalator.config import node_groups_from_entries
from kubetide.live.providers.aws.pricing import load_price_file
from kubetide.live.providers.aws.specs import AwsConfigError
from kubetide.live.providers.kwok.config import KwokConfigError, apply_nodes_flags, parse_cloud_config
from mutations import any_value, mutated

NODE_GROUP: dict[str, Any] = {**GOOD, "aws": {"lifecycle": "spot", "instance_type_overrides": ["m5.large"]}}
KWOK: dict[str, Any] = {
    "nodeGroups": [
        {
            "name": "batch",
            "minSize": 0,
            "maxSize": 5,
            "provisioningDelay": "30s",
            "template": {
                "metadata": {"labels": {"pool": "batch"}},
                "spec": {"taints": [{"key": "dedicated", "value": "batch", "effect": "NoSchedule"}]},
                "status": {"allocatable": {"cpu": "2", "memory": "8Gi", "pods": "110"}},
            },
        }
    ]
}


def test_a_live_node_groups_file_lists_unknown_keys_and_refused_rates_and_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "nodegroups.yaml"
    path.write_text(
        yaml.safe_dump({"node_groups": [dict(NODE_GROUP, slow_node_removal_rate=-1, max_node_agee="1h")]})
    )
    with pytest.raises(SystemExit) as info:
        escalator_main(["--nodegroups", str(path), "--kubeconfig", str(tmp_path / "none")])
    err = capsys.readouterr().err
    assert info.value.code == 2 and "Traceback" not in err
    assert (
        "node_groups[0].max_node_agee: unknown Escalator node group key (did you mean 'max_node_age'?)" in err
    )
    assert "node_groups[0].slow_node_removal_rate: slow_node_removal_rate must be larger than 0" in err


def _kwok_problems(doc: Any) -> list[str]:
    try:
        parse_cloud_config(doc)
    except KwokConfigError as exc:
        return [str(e) for e in exc.errors]
    return []


def test_kwok_node_templates_are_validated_as_nodes_with_every_problem() -> None:
    doc = copy.deepcopy(KWOK)
    group = doc["nodeGroups"][0]
    group["provisioningDelay"] = float("nan")
    group["maxSize"] = 2**31
    template = group["template"]
    template["metadata"]["labels"]["bad key"] = "x"
    template["spec"]["taints"].append({"key": "dedicated", "value": "other", "effect": "NoSchedule"})
    template["status"]["allocatable"]["cpu"] = "1e17"
    found = _kwok_problems(doc)
    for expected in (
        "nodeGroups[0].maxSize: must be a non-negative integer",
        "nodeGroups[0].provisioningDelay: must be a duration",
        'nodeGroups[0].template.metadata.labels["bad key"]: invalid value',
        "nodeGroups[0].template.spec.taints[1]: duplicate value",
        "nodeGroups[0].template.status.allocatable.cpu: too large",
    ):
        assert any(p.startswith(expected) for p in found), (expected, found)


def test_kwok_nodes_flags_take_ascii_digits_only() -> None:
    groups = parse_cloud_config(copy.deepcopy(KWOK))
    with pytest.raises(KwokConfigError) as info:
        apply_nodes_flags(groups, ["١:5:batch"])
    assert "expected MIN:MAX:NAME" in str(info.value)


def test_the_price_file_lists_every_bad_price(tmp_path: Path) -> None:
    path = tmp_path / "prices.yaml"
    path.write_text("onDemand: {m5.large: .nan, c5.large: -1}\nspot: {m5.large: .inf}\nextra: 1\n")
    with pytest.raises(AwsConfigError) as info:
        load_price_file(str(path))
    assert [message.split(": ", 1)[1] for _, message in info.value.errors] == [
        "extra: unknown field (expected onDemand, spot)",
        "onDemand.m5.large: must be a non-negative number, got nan",
        "onDemand.c5.large: must be a non-negative number, got -1",
        "spot.m5.large: must be a non-negative number, got inf",
    ]


# --- fuzzing: any structure, any mutation of a valid file ------------------------------------------

FUZZ = settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])


@FUZZ
@given(st.one_of(any_value(), mutated({"node_groups": [NODE_GROUP]})))
def test_any_node_groups_file_is_groups_or_problems(doc: Any) -> None:
    entries = doc.get("node_groups") if isinstance(doc, dict) else doc
    groups, problems = node_groups_from_entries(entries)
    assert problems or groups
    assert all(message for _, message in problems)


@FUZZ
@given(st.one_of(any_value(), mutated(KWOK)))
def test_any_kwok_cloud_config_is_groups_or_a_config_error(doc: Any) -> None:
    try:
        groups = parse_cloud_config(doc)
    except KwokConfigError as exc:
        assert exc.errors and all(e.message for e in exc.errors)
    else:
        assert groups


@FUZZ
@given(st.one_of(any_value(), mutated({"onDemand": {"m5.large": 0.1}, "spot": {}})))
def test_any_price_file_is_prices_or_a_config_error(
    tmp_path_factory: pytest.TempPathFactory, doc: Any
) -> None:
    path = tmp_path_factory.mktemp("prices") / "prices.yaml"
    path.write_text(yaml.safe_dump(doc, allow_unicode=True))
    try:
        prices = load_price_file(str(path))
    except AwsConfigError as exc:
        assert exc.errors
    else:
        assert set(prices) == {"onDemand", "spot"}
