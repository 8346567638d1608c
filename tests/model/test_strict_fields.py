"""The shipped field list is lightkube-models' schema (regenerated and compared), and typos are found
with their paths while users' own map keys are not."""

from __future__ import annotations

import importlib.util
import json
from importlib.metadata import version
from importlib.resources import files
from pathlib import Path
from types import ModuleType

from hypothesis import given
from hypothesis import strategies as st

from kubetide.model.strict import has_schema, unknown_fields

GENERATOR = Path(__file__).resolve().parents[2] / "hack" / "gen_k8s_fields.py"
SHIPPED = json.loads(files("kubetide").joinpath("data/k8s-fields.json").read_text())


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_k8s_fields", GENERATOR)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_shipped_fields_are_the_installed_models_schema() -> None:
    fresh = _generator().generate()
    if SHIPPED["source"] == f"lightkube-models {version('lightkube-models')}":
        assert fresh == SHIPPED, "run hack/gen_k8s_fields.py"
    else:  # a newer release may add fields (newer Kubernetes); it must not lose any we accept
        assert fresh["kinds"].keys() >= SHIPPED["kinds"].keys()
        assert set(fresh["all_kinds"]) >= set(SHIPPED["all_kinds"])
        for name, fields in SHIPPED["types"].items():
            assert fields.keys() <= fresh["types"].get(name, {}).keys(), name


def deployment(**spec: object) -> dict[str, object]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "labels": {"any/key": "v"}, "annotations": {"x": "y"}},
        "spec": {
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "c", "resources": {"requests": {"example.com/gpu": 1}}}]},
            },
            **spec,
        },
    }


def test_a_typo_is_named_with_its_path_and_the_closest_field() -> None:
    (problem,) = unknown_fields(deployment(replica=3), "objects[0]")
    assert (problem.path, problem.message) == (
        "objects[0].spec.replica",
        'unknown field "replica" (did you mean "replicas"?)',
    )


def test_known_kinds_and_versions_only() -> None:
    assert has_schema("autoscaling/v2", "HorizontalPodAutoscaler")
    assert not has_schema("autoscaling/v2beta1", "HorizontalPodAutoscaler")
    assert unknown_fields({"apiVersion": "example.com/v1", "kind": "Widget", "spec": {"x": 1}}) == []


@given(st.dictionaries(st.text(min_size=1, max_size=8), st.text(max_size=4), max_size=5))
def test_users_own_map_keys_are_never_fields(labels: dict[str, str]) -> None:
    manifest = deployment()
    manifest["metadata"] = {"name": "web", "labels": labels, "annotations": labels}
    assert unknown_fields(manifest) == []
