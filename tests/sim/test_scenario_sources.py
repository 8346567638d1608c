"""A scenario's objects from files, directories and Lists, as kubectl prints and applies them; kinds the
simulator does not model are skipped with a note, anything else is checked and named where it is."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from scenario_builders import deployment, doc

from kubetide.model.errors import ManifestError
from kubetide.sim.scenario import parse_scenario

SERVICE = {
    "apiVersion": "v1",
    "kind": "Service",
    "metadata": {"name": "web"},
    "spec": {"ports": [{"port": 80}]},
}


def test_files_directories_and_lists_become_the_objects(tmp_path: Path) -> None:
    (tmp_path / "manifests").mkdir()
    (tmp_path / "manifests" / "a-web.yaml").write_text(yaml.safe_dump_all([deployment("web"), SERVICE]))
    (tmp_path / "manifests" / "b-api.json").write_text(json.dumps(deployment("api")))
    (tmp_path / "manifests" / "notes.txt").write_text("not a manifest")
    (tmp_path / "db.yaml").write_text(yaml.safe_dump(deployment("db")))
    listed = {"apiVersion": "v1", "kind": "List", "items": [deployment("cache"), SERVICE]}
    data = doc(objects=["manifests", listed, "db.yaml"])
    scenario = parse_scenario(data, base_dir=tmp_path)
    names = [o["metadata"]["name"] for o in scenario.spec.objects]
    assert names == ["web", "api", "cache", "db"]
    assert [scenario.object_path(i) for i in range(4)] == [
        "manifests/a-web.yaml[0]",
        "manifests/b-api.json[0]",
        "spec.objects[1].items[0]",
        "db.yaml[0]",
    ]
    assert scenario.notes == [
        "manifests/a-web.yaml[1]: Service 'web' skipped (the simulator does not model Service objects)",
        "spec.objects[1].items[1]: Service 'web' skipped (the simulator does not model Service objects)",
    ]


def test_problems_point_at_the_file_and_document(tmp_path: Path) -> None:
    bad = deployment("web")
    bad["spec"]["replica"] = 3
    (tmp_path / "web.yaml").write_text(yaml.safe_dump_all([deployment("ok"), bad]))
    (tmp_path / "twice.yaml").write_text("apiVersion: v1\nkind: Pod\nkind: Pod\n")
    widget = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}}
    data = doc(objects=["web.yaml", "missing.yaml", "twice.yaml", widget])
    with pytest.raises(ManifestError) as info:
        parse_scenario(data, base_dir=tmp_path)
    found = [str(e) for e in info.value.errors]
    assert 'web.yaml[1].spec.replica: unknown field "replica" (did you mean "replicas"?)' in found
    assert "spec.objects[1]: no file or directory 'missing.yaml' (relative to the scenario)" in found
    assert "spec.objects[2]: twice.yaml: line 3, column 1: duplicate key 'kind' (first at line 2)" in found
    assert any(p.startswith("spec.objects[3].kind: unsupported kind 'Widget'") for p in found)


def test_duplicates_across_files_name_both_places(tmp_path: Path) -> None:
    (tmp_path / "one.yaml").write_text(yaml.safe_dump(deployment("web")))
    data = doc(objects=["one.yaml", deployment("web")])
    with pytest.raises(ManifestError) as info:
        parse_scenario(data, base_dir=tmp_path)
    assert [str(e) for e in info.value.errors] == [
        "spec.objects[1]: duplicate object Deployment/default/web (also one.yaml[0])"
    ]
