"""Fitting a document to the loader: rejected fields go, objects that need them go, each with a note."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kubetide.commands.scenario import _check
from kubetide.live.export import ExportOptions, Problem, build_scenario, fit_to_loader
from kubetide.live.export.fit import ExportError
from kubetide.sim.scenario import BUILTIN_CATALOG, parse_scenario

from .export_fixtures import recorded_cluster


def document(*objects: dict[str, Any]) -> dict[str, Any]:
    return {"spec": {"objects": list(objects)}}


def deployment(name: str, **spec: Any) -> dict[str, Any]:
    return {"kind": "Deployment", "metadata": {"name": name, "namespace": "default"}, "spec": spec}


def test_a_rejected_field_is_dropped_and_named() -> None:
    doc = document(deployment("web", replicas=2, shiny={"new": 1}))

    def check(d: dict[str, Any]) -> list[Problem]:
        spec = d["spec"]["objects"][0]["spec"]
        return [Problem(("spec", "objects", 0, "spec", "shiny"), "unknown field")] if "shiny" in spec else []

    notes = fit_to_loader(doc, check)
    assert doc["spec"]["objects"][0]["spec"] == {"replicas": 2}
    assert notes == ["Deployment/default/web: spec.shiny dropped (unknown field)"]


def test_an_object_that_needs_the_dropped_field_is_left_out_with_the_first_reason() -> None:
    doc = document(deployment("a"), deployment("b", target="x"))

    def check(d: dict[str, Any]) -> list[Problem]:
        for i, o in enumerate(d["spec"]["objects"]):
            if o["metadata"]["name"] == "b":
                if "target" in o["spec"]:
                    return [Problem(("spec", "objects", i, "spec", "target"), "no object x")]
                return [Problem(("spec", "objects", i, "spec", "target"), "is required")]
        return []

    notes = fit_to_loader(doc, check)
    assert [o["metadata"]["name"] for o in doc["spec"]["objects"]] == ["a"]
    assert notes == ["Deployment/default/b left out (spec.target: no object x)"]


def test_a_problem_outside_the_objects_is_raised_not_hidden() -> None:
    with pytest.raises(ExportError, match=r"spec.nodeGroups\[0\].maxSize: too small"):
        fit_to_loader(document(), lambda d: [Problem(("spec", "nodeGroups", 0, "maxSize"), "too small")])


def test_an_hpa_whose_target_is_not_exported_is_left_out_by_the_real_loader() -> None:
    cluster = recorded_cluster()
    orphan = copy.deepcopy(cluster.hpas[0])
    orphan["metadata"]["name"] = "orphan"
    orphan["spec"]["scaleTargetRef"]["name"] = "gone"
    cluster.hpas.append(orphan)
    export = build_scenario(cluster, ExportOptions(catalog=frozenset(BUILTIN_CATALOG)))
    notes = fit_to_loader(export.document, _check)
    assert notes == [
        "HorizontalPodAutoscaler/default/orphan left out (spec.scaleTargetRef: "
        "no object Deployment/default/gone in spec.objects (or applied by an action))"
    ]
    parse_scenario(export.document)
