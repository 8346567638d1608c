"""``kubetide run escalator``: bad flags and bad node groups files exit 2 naming every problem."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from kubetide.commands.run.escalator import REGISTRY, load_node_groups, main

GOOD = {
    "name": "batch",
    "label_key": "pool",
    "label_value": "batch",
    "cloud_provider_group_name": "batch",
    "min_nodes": 0,
    "max_nodes": 5,
    "taint_lower_capacity_threshold_percent": 30,
    "taint_upper_capacity_threshold_percent": 45,
    "scale_up_threshold_percent": 70,
    "slow_node_removal_rate": 1,
    "fast_node_removal_rate": 2,
    "soft_delete_grace_period": "1m",
    "hard_delete_grace_period": "10m",
    "scale_up_cool_down_period": "2m",
}
CLOUD = {
    "nodeGroups": [
        {
            "name": "batch",
            "minSize": 0,
            "maxSize": 5,
            "template": {"status": {"allocatable": {"cpu": "2", "memory": "8Gi", "pods": "110"}}},
        }
    ]
}


def write(tmp_path: Path, name: str, doc: object) -> str:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(doc))
    return str(path)


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    return int(exit_info.value.code or 0), capsys.readouterr().err


def test_escalators_flags_and_defaults() -> None:
    assert REGISTRY["address"].default == ":8080"
    assert REGISTRY["scaninterval"].default == 60.0
    assert REGISTRY["leader-elect"].default is False
    assert REGISTRY["leader-elect-config-name"].default == "escalator-leader-elect"
    assert REGISTRY["leader-elect-config-namespace"].default == "kube-system"
    assert REGISTRY["logfmt"].default == "ascii"
    assert REGISTRY["cloud-provider"].default == "aws"
    for name in ("nodegroups", "kubeconfig", "drymode", "dry-run", "once", "loglevel", "cloud-config"):
        assert name in REGISTRY


def test_every_problem_of_the_file_is_named_with_its_path(tmp_path: Path) -> None:
    bad = dict(GOOD, min_nodes=3, max_nodes=1)
    del bad["label_value"]
    path = write(tmp_path, "ng.yaml", {"node_groups": [GOOD, bad, "x", dict(GOOD, name=5), dict(GOOD)]})
    groups, problems = load_node_groups(path)
    where = {w.split(": ", 1)[1] for w, _ in problems}
    assert "node_groups[1].label_value" in where
    assert "node_groups[1].min_nodes" in where
    assert "node_groups[2]" in where
    assert "node_groups[3].name" in where
    assert "node_groups[4].name" in where  # the same name twice
    assert all(w.startswith(f"--nodegroups {path}") for w, _ in problems)
    assert [g.name for g in groups] == ["batch", "batch", "batch"]


def test_flags_file_and_cloud_problems_exit_2_together(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(
        tmp_path,
        "ng.yaml",
        {"node_groups": [dict(GOOD, cloud_provider_group_name="gpu", max_nodes=0, min_nodes=2)]},
    )
    cloud = write(tmp_path, "cloud.yaml", CLOUD)
    code, err = run(
        [
            f"--nodegroups={path}",
            "--cloud-provider=kwok",
            f"--cloud-config={cloud}",
            "--scaninterval=0s",
            "--bogus",
            "--logfmt=xml",
        ],
        capsys,
    )
    assert code == 2
    assert "--bogus: unknown flag" in err
    assert "--scaninterval" in err
    assert "--logfmt" in err
    assert "node_groups[0].max_nodes: max_nodes must be larger than 0" in err
    assert "node_groups[0].cloud_provider_group_name: 'gpu' is not a group of --cloud-config" in err
    assert "Traceback" not in err


def test_aws_problems_are_named_before_connecting(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("AWS_REGION", raising=False)
    monkeypatch.delenv("AWS_DEFAULT_REGION", raising=False)
    path = write(tmp_path, "ng.yaml", {"node_groups": [GOOD]})
    code, err = run([f"--nodegroups={path}"], capsys)  # Escalator's default provider is aws
    assert code == 2
    assert "--aws-region: no AWS region" in err
    fleet = {**GOOD, "aws": {"launch_template_id": "lt-1"}}
    path = write(tmp_path, "fleet.yaml", {"node_groups": [fleet]})
    code, err = run([f"--nodegroups={path}", "--aws-assume-role-arn=arn:aws:iam::1:role/x"], capsys)
    assert code == 2
    assert "--aws-assume-role-arn: not supported by kubetide yet" in err
    assert "node_groups[0].aws.launch_template_id: scaling up through EC2 fleets is not supported" in err


def test_missing_files_are_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, err = run(["--cloud-provider=kwok"], capsys)
    assert code == 2
    assert "--nodegroups: required" in err
    assert "--cloud-config: the kwok provider needs" in err
    code, err = run(
        [f"--nodegroups={tmp_path / 'none.yaml'}", "--cloud-provider=kwok", "--cloud-config=x"], capsys
    )
    assert code == 2
    assert "none.yaml: cannot read" in err
    path = write(tmp_path, "empty.yaml", {"groups": []})
    code, err = run(
        [
            f"--nodegroups={path}",
            "--cloud-provider=kwok",
            f"--cloud-config={write(tmp_path, 'c.yaml', CLOUD)}",
        ],
        capsys,
    )
    assert code == 2
    assert "node_groups: must be a non-empty list" in err
