"""Invalid scenarios: every problem is reported, each with its field path and a plain message."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from scenario_builders import deployment, doc, load, problems

from kubetide.model.errors import ManifestError
from kubetide.sim.scenario import load_scenario, parse_scenario


def test_max_below_min_uses_the_contract_message() -> None:
    data = doc()
    data["spec"]["nodeGroups"][1].update(minSize=2, maxSize=0)
    assert problems(data) == ["spec.nodeGroups[1].maxSize: must be >= minSize (got 0 < 2)"]


def test_every_problem_is_reported_not_just_the_first() -> None:
    data = doc(duration="6hours", seed=-1)
    data["spec"]["nodeGroups"][0]["maxSize"] = "ten"
    data["spec"]["nodeGroups"][1]["capacity"] = {"memory": "16GB"}
    data["spec"]["objects"].append(
        {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}}
    )
    found = problems(data)
    assert len(found) == 5
    assert found[0].startswith("spec.duration: must be a duration like 90s")
    assert found[1] == "spec.seed: must be >= 0, got -1"
    assert found[2] == "spec.nodeGroups[0].maxSize: must be an integer, got 'ten'"
    assert found[3].startswith("spec.nodeGroups[1].capacity.memory: '16GB' is not a valid quantity")
    assert found[4].startswith("spec.objects[1].kind: unsupported kind 'Widget' (supported: Deployment,")


def test_unknown_keys_in_kubetide_sections_suggest_the_closest_name() -> None:
    data = doc()
    data["spec"]["nodeGroups"][0]["maxsize"] = 3
    data["spec"]["metrics"] = {"resolutoin": "15s"}
    assert problems(data) == [
        "spec.nodeGroups[0].maxsize: unknown field (did you mean 'maxSize'?)",
        "spec.metrics.resolutoin: unknown field (did you mean 'resolution'?)",
    ]


def test_unknown_fields_inside_manifests_are_errors_as_with_strict_kubectl() -> None:
    """A typo is named with its path and the closest field, every one of them at once; maps of the
    user's own keys (labels, requests) and real status fields are not typos."""
    data = doc()
    manifest = data["spec"]["objects"][0]
    manifest["spec"]["replica"] = 3
    manifest["spec"]["strategy"] = {"type": "RollingUpdate", "whatever": 1}
    manifest["status"] = {"replicas": 2, "anything": True}
    manifest["spec"]["template"]["spec"]["containers"][0]["imagee"] = "nginx"
    manifest["metadata"]["labels"] = {"any-key": "fine"}
    assert problems(data) == [  # in document order
        'spec.objects[0].spec.template.spec.containers[0].imagee: unknown field "imagee" (did you mean "image"?)',
        'spec.objects[0].spec.replica: unknown field "replica" (did you mean "replicas"?)',
        'spec.objects[0].spec.strategy.whatever: unknown field "whatever"',
        'spec.objects[0].status.anything: unknown field "anything"',
    ]


def test_unknown_autoscaler_is_named() -> None:
    data = doc(autoscalers={"karpenter": {}})
    assert problems(data) == [
        "spec.autoscalers.karpenter: unknown autoscaler (not implemented in kubetide) (known: hpa, clusterAutoscaler, escalator)"
    ]


def test_manifest_errors_carry_the_object_path() -> None:
    bad = deployment()
    bad["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "lots"
    data = doc(objects=[deployment("ok"), bad])
    data["spec"]["traffic"] = []
    assert problems(data) == [
        "spec.objects[1].spec.template.spec.containers[0].resources.requests.cpu: "
        "'lots' is not a valid quantity: unexpected 'l' at position 0"
    ]


def test_scale_target_view_errors_surface_with_the_path() -> None:
    bad = deployment()
    del bad["spec"]["selector"]
    data = doc(objects=[bad])
    assert problems(data) == ["spec.objects[0].spec.selector: is required"]


def test_unknown_instance_type_lists_the_known_ones() -> None:
    data = doc()
    data["spec"]["nodeGroups"][0]["instanceType"] = "m9.huge"
    (found,) = problems(data)
    assert found.startswith("spec.nodeGroups[0].instanceType: unknown instance type 'm9.huge' (known: ")
    assert "m5.large" in found and "e2-standard-8" in found


def test_group_needs_an_instance_type_or_capacity() -> None:
    data = doc()
    del data["spec"]["nodeGroups"][0]["instanceType"]
    assert problems(data) == ["spec.nodeGroups[0]: needs `instanceType` (from the catalog) or `capacity`"]


def test_initial_size_must_be_within_the_range() -> None:
    data = doc()
    data["spec"]["nodeGroups"][0]["initialSize"] = 11
    assert problems(data) == [
        "spec.nodeGroups[0].initialSize: must be between minSize and maxSize (1..10), got 11"
    ]


def test_duplicate_group_names() -> None:
    data = doc()
    data["spec"]["nodeGroups"][1]["name"] = "general"
    assert problems(data) == ["spec.nodeGroups[1].name: duplicate name 'general' (also spec.nodeGroups[0])"]


def test_time_windows_must_fit_the_duration() -> None:
    data = doc(duration="1h", actions=[{"at": "2h", "restart": "cluster-autoscaler"}])
    data["spec"]["nodeGroups"][0]["faults"] = [{"type": "apiError", "at": "30m", "until": "90m"}]
    assert problems(data) == [
        "spec.nodeGroups[0].faults[0].until: must be within the simulation (0..1h), got 1h30m",
        "spec.traffic[0].rps.steps[1].at: must be within the simulation (0..1h), got 2h",
        "spec.actions[0].at: must be within the simulation (0..1h), got 2h",
    ]


def test_fault_window_in_order_and_types_checked() -> None:
    data = doc()
    data["spec"]["nodeGroups"][0]["faults"] = [
        {"type": "stockout", "at": "2h", "until": "1h"},
        {"type": "meteor"},
        {"count": 1},
        {"type": "unregistered"},
    ]
    assert problems(data) == [
        "spec.nodeGroups[0].faults[0].until: must be >= at (got 3600s < 7200s)",
        "spec.nodeGroups[0].faults[1].type: must be one of stockout, apiError, unregistered, missingProviderID, nodeNotReady, got 'meteor'",
        "spec.nodeGroups[0].faults[2].type: is required (one of stockout, apiError, unregistered, missingProviderID, nodeNotReady)",
        "spec.nodeGroups[0].faults[3].count: is required",
    ]


def test_traffic_target_must_exist() -> None:
    data = doc()
    data["spec"]["traffic"][0]["target"] = "Deployment/default/api"
    assert problems(data) == [
        "spec.traffic[0].target: no object Deployment/default/api in spec.objects (or applied by an action)"
    ]


def test_traffic_needs_a_workload_and_quantities_are_not_negative() -> None:
    data = doc()
    data["spec"]["traffic"][0]["target"] = "ConfigMap/default/web"
    assert problems(data) == [
        "spec.traffic[0].target: must be a Deployment, ReplicaSet, StatefulSet, DaemonSet, Job, Pod (pods serve traffic), got a ConfigMap"
    ]
    data["spec"]["traffic"][0].update(target="Deployment/default/web", baseCpu="-50m")
    assert problems(data) == ["spec.traffic[0].baseCpu: must not be negative, got '-50m'"]


def test_series_errors() -> None:
    data = doc()
    data["spec"]["traffic"][0]["rps"] = {
        "type": "step",
        "steps": [{"at": "2h", "value": 1}, {"at": "1h", "value": 2}],
    }
    data["spec"]["traffic"][0]["metrics"] = [
        {"name": "q", "kind": "Custom"},
        {"name": "d", "kind": "External", "series": {"type": "sine", "base": 1}},
    ]
    assert problems(data) == [
        "spec.traffic[0].rps.steps[1].at: must be >= steps[0].at (steps are listed in increasing time)",
        "spec.traffic[0].metrics[0].kind: must be one of Pods, Object, External, got 'Custom'",
        "spec.traffic[0].metrics[1].series.amplitude: is required",
        "spec.traffic[0].metrics[1].series.period: is required",
    ]


def test_csv_series_problems_name_the_field(tmp_path: Path) -> None:
    (tmp_path / "load.csv").write_text("t,requests\n0,10\n60,20\n")
    data = doc()
    data["spec"]["traffic"][0]["rps"] = {"type": "csv", "path": "load.csv", "column": "rps"}
    assert problems(data, base_dir=tmp_path) == [
        "spec.traffic[0].rps.column: no column 'rps' in load.csv (columns: t, requests)"
    ]
    data["spec"]["traffic"][0]["rps"] = {"type": "csv", "path": "missing.csv", "column": "rps"}
    (found,) = problems(data, base_dir=tmp_path)
    assert found.startswith("spec.traffic[0].rps.path: cannot read")


def test_action_problems() -> None:
    data = doc(
        actions=[
            {"at": "1h"},
            {"at": "1h", "restart": "hpa", "delete": "Deployment/default/web"},
            {"at": "1h", "scale": {"target": "Deployment/default/nope", "replicas": 2}},
            {"at": "1h", "scale": {"target": "ConfigMap/default/web", "replicas": 2}},
            {"at": "1h", "deleteNode": {"group": "gpu"}},
            {"at": "1h", "attachInstance": {"group": "gpu", "count": 2}},
            {"at": "1h", "restart": "escalator"},
            {"at": "1h", "restart": "kubelet"},
        ]
    )
    assert problems(data) == [
        "spec.actions[0]: must have exactly one of apply, delete, scale, restart, deleteNode, attachInstance "
        "(got none)",
        "spec.actions[1]: must have exactly one of apply, delete, scale, restart, deleteNode, attachInstance "
        "(got delete, restart)",
        "spec.actions[7].restart: must be one of cluster-autoscaler, hpa, escalator, got 'kubelet'",
    ]
    del data["spec"]["actions"][7]
    del data["spec"]["actions"][1]
    del data["spec"]["actions"][0]
    assert problems(data) == [
        "spec.actions[0].scale.target: no object Deployment/default/nope exists at that time",
        "spec.actions[1].scale.target: must be a Deployment, ReplicaSet, StatefulSet, ReplicationController, got a ConfigMap",
        "spec.actions[2].deleteNode.group: no node group 'gpu' (known: general, spot)",
        "spec.actions[3].attachInstance.group: no node group 'gpu' (known: general, spot)",
        "spec.actions[4].restart: escalator is not enabled in this scenario",
    ]


def test_cluster_autoscaler_flags_are_checked_against_the_registry() -> None:
    data = doc(
        autoscalers={
            "clusterAutoscaler": {
                "flags": {"scan-intervall": "10s", "expander": "cheapest", "max-nodes-total": "5"}
            }
        }
    )
    assert problems(data) == [
        "spec.autoscalers.clusterAutoscaler.flags.scan-intervall: unknown Cluster Autoscaler flag (did you mean 'scan-interval'?)",
        "spec.autoscalers.clusterAutoscaler.flags.expander: must be one of random, most-pods, least-waste, price, priority, grpc, least-nodes (comma-separated), got 'cheapest'",
        "spec.autoscalers.clusterAutoscaler.flags.max-nodes-total: must be an integer, got '5'",
    ]


ESCALATOR_GROUP: dict[str, Any] = {
    "name": "batch",
    "label_key": "kubetide.io/node-group",
    "label_value": "spot",
    "cloud_provider_group_name": "nope",
    "taint_upper_capacity_threshold_percent": 40,
    "taint_lower_capacity_threshold_percent": 10,
    "scale_up_threshold_percent": 30,
    "slow_node_removal_rate": 1,
    "fast_node_removal_rate": 2,
    "scale_up_cool_down_period": "2m",
    "soft_delete_grace_period": "1m",
    "hard_delete_grace_period": "10m",
}
ESC = "spec.autoscalers.escalator.nodeGroups"


def test_escalator_groups_follow_escalator_rules_and_reference_node_groups() -> None:
    group = dict(ESCALATOR_GROUP)
    data = doc(autoscalers={"escalator": {"nodeGroups": [group]}})
    assert problems(data) == [
        f"{ESC}[0].taint_upper_capacity_threshold_percent: taint_upper_capacity_threshold_percent must be less than scale_up_threshold_percent"
    ]
    group["scale_up_threshold_percent"] = 70
    data = doc(autoscalers={"escalator": {"nodeGroups": [group]}})
    assert problems(data) == [
        f"{ESC}[0].cloud_provider_group_name: no node group 'nope' in spec.nodeGroups (known: general, spot)"
    ]


def test_an_escalator_group_must_select_the_nodes_of_its_cloud_group() -> None:
    group = dict(ESCALATOR_GROUP, scale_up_threshold_percent=70, cloud_provider_group_name="spot")
    group.update(label_key="workload", label_value="batch")
    assert problems(doc(autoscalers={"escalator": {"nodeGroups": [group]}})) == [
        f"{ESC}[0].label_value: the Nodes of spec.nodeGroups[1] (spot) do not carry workload=batch: add it "
        "to its labels, or select them by kubetide.io/node-group=spot"
    ]
    data = doc(autoscalers={"escalator": {"nodeGroups": [group]}})
    data["spec"]["nodeGroups"][1]["labels"] = {"workload": "batch"}
    parse_scenario(data)


def test_escalator_groups_report_every_problem_in_escalator_words_at_once() -> None:
    first = dict(ESCALATOR_GROUP, scale_up_threshold_percent=70, cloud_provider_group_name="spot")
    first.update(min_nodes=5, max_nodes=5, taint_effect="NoWay", scale_up_cool_down_period="soon")
    second = dict(first, name="batch", min_nodes=0, max_nodes=0, taint_effect="", min_node=1)
    second.update(scale_up_cool_down_period="2m", soft_delete_grace_period=60)
    data = doc(autoscalers={"escalator": {"nodeGroups": [first, second]}})
    assert problems(data) == [
        # upstream's message names the wrong option; the path names the right one
        f"{ESC}[0].scale_up_cool_down_period: soft_delete_grace_period failed to parse into a time.Duration. check your formatting.",
        f"{ESC}[0].min_nodes: min_nodes must be less than max_nodes",
        f"{ESC}[0].taint_effect: taint_effect must be valid kubernetes taint",
        f"{ESC}[1].soft_delete_grace_period: must be a string, got 60",
        f"{ESC}[1].min_node: unknown Escalator node group key (did you mean 'min_nodes'?)",
    ]


def test_an_enabled_escalator_needs_node_groups() -> None:
    assert problems(doc(autoscalers={"escalator": {}})) == [
        "spec.autoscalers.escalator.nodeGroups: must be a non-empty list of node groups"
    ]
    parse_scenario(doc(autoscalers={"escalator": {"enabled": False}}))


def test_a_group_managed_by_both_autoscalers_is_an_error_naming_both() -> None:
    group = dict(ESCALATOR_GROUP, scale_up_threshold_percent=70, cloud_provider_group_name="spot")
    ca = {"flags": {"nodes": ["1:10:general", "0:5:spot"]}}
    data = doc(autoscalers={"escalator": {"nodeGroups": [group]}, "clusterAutoscaler": ca})
    assert problems(data) == [
        "spec.autoscalers.clusterAutoscaler.flags.nodes[1]: node group 'spot' is managed by the batch "
        f"autoscaler ({ESC}[0].cloud_provider_group_name): a group can have one autoscaler; leave it out of --nodes"
    ]
    ca = {"flags": {"nodes": ["1:10:general"]}}
    parse_scenario(doc(autoscalers={"escalator": {"nodeGroups": [group]}, "clusterAutoscaler": ca}))


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (None, ": the scenario is empty"),
        ([1, 2], ": the scenario must be a mapping (apiVersion, kind, metadata, spec), got a list"),
        ("hello", ": the scenario must be a mapping (apiVersion, kind, metadata, spec), got str 'hello'"),
    ],
)
def test_documents_that_are_not_scenarios(data: object, message: str) -> None:
    found = problems(data)
    assert len(found) == 1 and found[0].startswith(message.lstrip(": "))


def test_wrong_kind_stops_before_the_noise() -> None:
    assert problems({"apiVersion": "apps/v1", "kind": "Deployment", "spec": {"replicas": 1}}) == [
        "apiVersion: must be kubetide.io/v1alpha1, got 'apps/v1'",
        "kind: must be Scenario, got 'Deployment'",
    ]


def test_yaml_syntax_errors_give_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "broken.yaml"
    path.write_text("apiVersion: kubetide.io/v1alpha1\nmetadata:\n  name: x\n  bad: a: b\n")
    with pytest.raises(ManifestError) as info:
        load_scenario(path)
    (error,) = info.value.errors
    assert str(error) == "broken.yaml:4:9: invalid YAML: mapping values are not allowed here"


def test_json_syntax_errors_give_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text('{"apiVersion": "kubetide.io/v1alpha1",\n "kind": }')
    with pytest.raises(ManifestError, match=r"broken.json:2:10: invalid JSON"):
        load_scenario(path)


def test_empty_and_missing_files(tmp_path: Path) -> None:
    (tmp_path / "empty.yaml").write_text("# nothing\n")
    with pytest.raises(ManifestError, match="the scenario is empty"):
        load_scenario(tmp_path / "empty.yaml")
    with pytest.raises(ManifestError, match="cannot read"):
        load_scenario(tmp_path / "absent.yaml")


def test_actions_may_not_refer_to_objects_deleted_before_them() -> None:
    data = doc(
        actions=[
            {"at": "1h", "delete": "Deployment/default/web"},
            {"at": "2h", "scale": {"target": "Deployment/default/web", "replicas": 3}},
            {"at": "2h", "delete": "Deployment/default/web"},
            {"at": "3h", "apply": deployment("web")},
            {"at": "4h", "scale": {"target": "Deployment/default/web", "replicas": 3}},
        ]
    )
    assert problems(data) == [
        "spec.actions[1].scale.target: no object Deployment/default/web exists at that time",
        "spec.actions[2].delete: no object Deployment/default/web exists at that time",
    ]


def test_actions_at_the_same_time_run_in_the_order_listed() -> None:
    apply = {"at": "1h", "apply": deployment("batch")}
    scale = {"at": "1h", "scale": {"target": "Deployment/default/batch", "replicas": 3}}
    load(doc(actions=[apply, scale]))
    assert problems(doc(actions=[scale, apply])) == [
        "spec.actions[0].scale.target: no object Deployment/default/batch exists at that time"
    ]


@pytest.mark.parametrize("value", [float("inf"), float("-inf"), float("nan")])
def test_numbers_must_be_finite(value: float) -> None:
    data = doc()
    data["spec"]["traffic"][0]["rps"] = {"type": "constant", "value": value}
    data["spec"]["nodeGroups"][0]["pricePerHour"] = value
    assert problems(data) == [
        f"spec.nodeGroups[0].pricePerHour: must be a finite number, got {value}",
        f"spec.traffic[0].rps.value: must be a finite number, got {value}",
    ]


def test_inputs_kubernetes_refuses_are_refused() -> None:
    """A negative request and a pod template without containers: the API server's validation errors."""
    data = doc()
    data["spec"]["objects"][0]["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"][
        "cpu"
    ] = "-250m"
    empty = deployment("empty")
    empty["spec"]["template"]["spec"]["containers"] = None
    data["spec"]["objects"].append(empty)
    assert problems(data) == [
        "spec.objects[0].spec.template.spec.containers[0].resources.requests.cpu: must be greater than or equal to 0, got '-250m'",
        "spec.objects[1].spec.template.spec.containers: is required: a pod runs at least one container",
    ]


def test_a_key_given_twice_is_an_error_with_both_lines(tmp_path: Path) -> None:
    path = tmp_path / "twice.yaml"
    path.write_text(
        "apiVersion: kubetide.io/v1alpha1\nkind: Scenario\nspec:\n  duration: 1h\n  duration: 2h\n"
    )
    with pytest.raises(ManifestError) as info:
        load_scenario(path)
    assert [str(e) for e in info.value.errors] == [
        "twice.yaml: line 5, column 3: duplicate key 'duration' (first at line 4)"
    ]


def test_drain_priority_config_is_checked() -> None:
    data = doc(
        autoscalers={"clusterAutoscaler": {"enabled": True, "flags": {"drain-priority-config": "high:soon"}}}
    )
    (problem,) = problems(data)
    assert problem.startswith(
        "spec.autoscalers.clusterAutoscaler.flags.drain-priority-config: must be priority:seconds"
    )


def test_hpa_settings_take_kube_controller_manager_flag_names() -> None:
    flags = {
        "horizontal-pod-autoscaler-sync-period": "30s",
        "horizontal-pod-autoscaler-tolerance": 0.2,
        "horizontal-pod-autoscaler-downscale-stabilization": "1m",
    }
    by_flag = load(doc(autoscalers={"hpa": {"flags": flags}})).spec.autoscalers.hpa.config()
    by_alias = load(
        doc(autoscalers={"hpa": {"syncPeriod": "30s", "tolerance": 0.2, "downscaleStabilization": "1m"}})
    ).spec.autoscalers.hpa.config()
    assert by_flag == by_alias
    assert (by_flag.sync_period, by_flag.tolerance, by_flag.downscale_stabilization) == (30.0, 0.2, 60.0)
    assert by_flag.cpu_initialization_period == 300.0  # untouched flags keep upstream's defaults


def test_hpa_flag_typos_and_settings_given_twice_are_named() -> None:
    data = doc(
        autoscalers={
            "hpa": {
                "tolerance": 0.3,
                "flags": {
                    "horizontal-pod-autoscaler-tolerance": 0.2,
                    "horizontal-pod-autoscaler-sync-perod": "10s",
                },
            }
        }
    )
    assert problems(data) == [  # in document order
        "spec.autoscalers.hpa.tolerance: set twice: here and as flags.horizontal-pod-autoscaler-tolerance (keep one)",
        "spec.autoscalers.hpa.flags.horizontal-pod-autoscaler-sync-perod: unknown HPA controller flag "
        "(did you mean 'horizontal-pod-autoscaler-sync-period'?)",
    ]


def test_references_are_checked_even_when_the_file_has_other_problems() -> None:
    """One run lists every problem: a refused value elsewhere does not hide an unknown group or a
    missing object, and checks that read the refused value are not run on a stand-in for it."""
    data = doc(
        actions=[
            {"at": "1h", "attachInstance": {"group": "nope"}},
            {"at": "2h", "delete": "Deployment/default/gone"},
        ],
    )
    data["spec"]["nodeGroups"][0]["maxSize"] = "ten"
    data["spec"]["objects"][0]["spec"]["replicas"] = "x"
    data["spec"]["traffic"][0]["target"] = "Deployment/default/nothere"
    assert problems(data) == [
        "spec.nodeGroups[0].maxSize: must be an integer, got 'ten'",
        "spec.objects[0].spec.replicas: must be an integer, got 'x'",
        "spec.traffic[0].target: no object Deployment/default/nothere in spec.objects (or applied by an action)",
        "spec.actions[0].attachInstance.group: no node group 'nope' (known: general, spot)",
        "spec.actions[1].delete: no object Deployment/default/gone exists at that time",
    ]


def test_checks_reading_a_refused_value_wait_for_it() -> None:
    # A bad duration: whether the actions fit in it is unknown; their references still are known.
    data = doc(duration="bad", actions=[{"at": "9h", "attachInstance": {"group": "nope"}}])
    assert problems(data) == [
        "spec.duration: must be a duration like 90s, 15m, 1h30m, 500ms, or a number of seconds, got 'bad'",
        "spec.actions[0].attachInstance.group: no node group 'nope' (known: general, spot)",
    ]
    # A group whose name is refused: a reference to any group might be to it.
    data = doc(actions=[{"at": "1h", "attachInstance": {"group": "nope"}}])
    data["spec"]["nodeGroups"][1]["name"] = 7
    assert problems(data) == ["spec.nodeGroups[1].name: must be a string, got 7"]
    # An object whose name is refused: a traffic target might be it.
    data = doc()
    data["spec"]["objects"][0]["metadata"]["name"] = ["web"]
    data["spec"]["traffic"][0]["target"] = "Deployment/default/other"
    assert [p.split(":")[0] for p in problems(data)] == ["spec.objects[0].metadata.name"]


def test_a_file_with_very_many_refused_values_lists_them_without_the_cross_section_checks() -> None:
    # Each stand-in costs a validation of the file: past 64 places the checks wait for the next run.
    actions = [{"at": "soon", "restart": "hpa"} for _ in range(70)]
    data = doc(actions=[*actions, {"at": "1h", "attachInstance": {"group": "nope"}}])
    found = problems(data)
    assert len(found) == 70 and all(p.startswith("spec.actions[") and ".at:" in p for p in found)
    data = doc(actions=[*actions[:3], {"at": "1h", "attachInstance": {"group": "nope"}}])
    assert "spec.actions[3].attachInstance.group: no node group 'nope' (known: general, spot)" in problems(
        data
    )


def test_a_placement_annotation_is_checked_with_its_path() -> None:
    def scenario(value: Any, replicas: int = 2, kind: str = "Deployment") -> dict[str, Any]:
        data = doc()
        web = deployment(replicas=replicas)
        web["kind"] = kind
        web["metadata"]["annotations"] = {"kubetide.io/placement": value}
        data["spec"]["objects"] = [web]
        return data

    def placed(value: Any, replicas: int = 2, kind: str = "Deployment") -> list[str]:
        return problems(scenario(value, replicas, kind))

    path = 'spec.objects[0].metadata.annotations["kubetide.io/placement"]'
    load(scenario('{"general-1": 2}'))  # valid
    assert placed('{"general-1": 2, "general-2": 1}') == [
        f"{path}: places 3 pods but the workload starts with 2 (spec.replicas)"
    ]
    assert placed("general-1") == [f"{path}: is not JSON: Expecting value: line 1 column 1 (char 0)"]
    assert placed('["general-1"]') == [
        f'{path}: must be a JSON object of node name to pod count, e.g. {{"n-1": 2}}'
    ]
    (bad,) = placed('{"Not_A_Node": 0}')
    assert bad.startswith(f"{path}: node 'Not_A_Node': a lowercase RFC 1123 subdomain")
    assert "node 'Not_A_Node': the pod count must be an integer >= 1, got 0" in bad
    daemon = placed('{"general-1": 1}', kind="DaemonSet")[0]  # (and a DaemonSet has no replicas)
    assert daemon == (
        f"{path}: places the pods of Deployments, ReplicaSets, StatefulSets and Jobs; "
        "a DaemonSet's pods run on every node they can"
    )
