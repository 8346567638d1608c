"""The kwok provider's cloud config and --nodes flags: every problem at once, with its field path."""

from __future__ import annotations

from pathlib import Path

import pytest

from kubetide.live.providers.kwok import (
    KwokConfigError,
    apply_nodes_flags,
    load_cloud_config,
    parse_cloud_config,
)

GOOD = """
nodeGroups:
  - name: general
    minSize: 0
    maxSize: 10
    template:
      metadata: {labels: {pool: general}}
      status: {allocatable: {cpu: "4", memory: 16Gi, pods: "110"}, capacity: {cpu: "4", memory: 16Gi, pods: "110"}}
    provisioningDelay: 0s
  - name: batch
    maxSize: 4
    provisioningDelay: 1m30s
    template: {status: {capacity: {cpu: "8", memory: 32Gi}}}
"""


def problems(data: object) -> list[str]:
    with pytest.raises(KwokConfigError) as info:
        parse_cloud_config(data)
    return [str(e) for e in info.value.errors]


def test_the_spec_example_loads(tmp_path: Path) -> None:
    path = tmp_path / "cloud.yaml"
    path.write_text(GOOD)
    general, batch = load_cloud_config(path)
    assert (general.name, general.min_size, general.max_size, general.provisioning_delay) == (
        "general",
        0,
        10,
        0.0,
    )
    assert (batch.min_size, batch.provisioning_delay) == (0, 90.0)


def test_every_problem_is_reported_with_its_path() -> None:
    data = {
        "nodeGroups": [
            {
                "name": "Bad_Name",
                "minSize": 3,
                "maxSize": 1,
                "template": {"status": {}},
                "provisioningDelay": "soon",
            },
            {
                "name": "ok",
                "minSize": -1,
                "maxSize": "x",
                "template": {"status": {"capacity": {"cpu": "four"}}},
                "extra": 1,
            },
            {"name": "ok", "maxSize": 1},
        ],
        "groups": [],
    }
    found = problems(data)
    for expected in [
        "groups: unknown field",
        "nodeGroups[0].name: must be lowercase",
        "nodeGroups[0].maxSize: must be >= minSize (3), got 1",
        "nodeGroups[0].provisioningDelay: must be a duration",
        "nodeGroups[0].template.status: needs capacity or allocatable",
        "nodeGroups[1].extra: unknown field",
        "nodeGroups[1].minSize: must be a non-negative integer",
        "nodeGroups[1].maxSize: must be a non-negative integer",
        "nodeGroups[1].template.status.capacity.cpu:",
        "nodeGroups[2].template: is required",
    ]:
        assert any(p.startswith(expected) for p in found), (expected, found)


def test_duplicate_names_and_empty_files() -> None:
    group = {"name": "a", "maxSize": 1, "template": {"status": {"capacity": {"cpu": "1"}}}}
    assert problems({"nodeGroups": [group, group]}) == ["nodeGroups[1].name: duplicate node group name 'a'"]
    assert problems({}) == ["nodeGroups: must be a non-empty list of node groups"]
    assert problems(None) == ["must be a mapping with a nodeGroups list"]


def test_unreadable_files_name_the_file(tmp_path: Path) -> None:
    with pytest.raises(KwokConfigError, match=r"cannot read .*missing\.yaml: No such file"):
        load_cloud_config(tmp_path / "missing.yaml")
    (tmp_path / "bad.yaml").write_text("nodeGroups: [")
    with pytest.raises(KwokConfigError, match=r"bad\.yaml:1:14: invalid YAML"):
        load_cloud_config(tmp_path / "bad.yaml")
    (tmp_path / "latin1.yaml").write_bytes("nodeGroups:\n  - name: caf\xe9\n".encode("latin-1"))
    with pytest.raises(KwokConfigError, match=r"latin1\.yaml: not UTF-8 text"):
        load_cloud_config(tmp_path / "latin1.yaml")


def test_nodes_flags_choose_groups_and_override_sizes(tmp_path: Path) -> None:
    path = tmp_path / "cloud.yaml"
    path.write_text(GOOD)
    groups = load_cloud_config(path)
    assert apply_nodes_flags(groups, []) == groups
    (chosen,) = apply_nodes_flags(groups, ["1:3:batch"])
    assert (chosen.name, chosen.min_size, chosen.max_size, chosen.provisioning_delay) == ("batch", 1, 3, 90.0)
    with pytest.raises(KwokConfigError) as info:
        apply_nodes_flags(groups, ["1:3:gpu", "5:2:general", "x:1:batch"])
    assert [str(e) for e in info.value.errors] == [
        "--nodes=1:3:gpu: unknown node group 'gpu' (the cloud config has: batch, general)",
        "--nodes=5:2:general: max (2) is below min (5)",
        "--nodes=x:1:batch: expected MIN:MAX:NAME with non-negative integers",
    ]
