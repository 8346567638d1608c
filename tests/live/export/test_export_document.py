"""The recorded 1.20 cluster written as a scenario: it loads, it runs, and its manifests are clean."""

from __future__ import annotations

from typing import Any

from kubetide.live.export import ClusterObjects, Export, ExportOptions, build_scenario
from kubetide.sim.scenario import BUILTIN_CATALOG, parse_scenario
from kubetide.sim.simulation import Simulation

from .export_fixtures import recorded_cluster

OPTIONS = ExportOptions(name="shop", duration="5m", catalog=frozenset(BUILTIN_CATALOG))


def export(**replace: Any) -> Export:
    return build_scenario(recorded_cluster(**replace), OPTIONS)


def objects(result: Export) -> dict[str, dict[str, Any]]:
    return {
        f"{o['kind']}/{o['metadata'].get('namespace', 'default')}/{o['metadata']['name']}": o
        for o in result.document["spec"]["objects"]
    }


def test_the_recorded_cluster_loads_and_runs_in_the_simulator() -> None:
    scenario = parse_scenario(export().document)
    assert [g.name for g in scenario.spec.nodeGroups] == ["batch", "custom.big-zone-b", "general"]
    assert scenario.enabled_autoscalers() == ("hpa", "cluster-autoscaler")
    result = Simulation(scenario).run()
    summary = result.summary.to_json()
    assert summary["nodes"]["by_group"]["general"]["final"] == 2
    assert summary["pods"]["unschedulable_at_end"] == 0
    assert summary["workloads"]["Deployment/shop/api"]["final_replicas"] == 2


def test_what_is_exported_and_what_is_left_out() -> None:
    result = export()
    assert sorted(objects(result)) == [
        "ConfigMap/kube-system/cluster-autoscaler-priority-expander",
        "DaemonSet/kube-system/kube-proxy",  # kube-system's DaemonSets take node capacity
        "DaemonSet/monitoring/log-agent",
        "Deployment/default/web",
        "Deployment/shop/api",
        "HorizontalPodAutoscaler/default/web",
        "HorizontalPodAutoscaler/shop/api",
        "Job/default/nightly-report",
        "Pod/default/debug",
        "PodDisruptionBudget/default/web",
        "StatefulSet/shop/db",
    ]
    # Left out: coredns (kube-system), the finished Job, the Succeeded pod, the ReplicaSet's pod, the
    # v1beta1 PDB with an empty selector; each with a note where the user could be surprised.
    notes = "\n".join(result.notes)
    assert "Job/default/yesterday-report" in notes
    assert "PodDisruptionBudget/shop/everything left out" in notes
    assert "master-0" in notes


def test_manifests_are_cleaned_as_for_reapplying() -> None:
    found = objects(export())
    assert "annotations" not in found["DaemonSet/kube-system/kube-proxy"]["metadata"]
    web = found["Deployment/default/web"]
    assert "status" not in web
    assert set(web["metadata"]) == {"name", "namespace", "labels"}
    assert "creationTimestamp" not in web["spec"]["template"]["metadata"]
    assert web["spec"]["replicas"] == 3  # current replicas, not the last-applied 2
    # What the user wrote and the server defaulted stays: it is what the cluster runs.
    assert web["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"]["cpu"] == "500m"
    assert web["spec"]["strategy"]["rollingUpdate"]["maxSurge"] == "25%"


def test_a_statefulsets_claim_templates_lose_their_status() -> None:
    (claim,) = objects(export())["StatefulSet/shop/db"]["spec"]["volumeClaimTemplates"]
    assert claim == {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": "data"},
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "resources": {"requests": {"storage": "10Gi"}},
            "volumeMode": "Filesystem",
        },
    }


def test_a_job_loses_its_generated_selector_and_a_bare_pod_its_node() -> None:
    found = objects(export())
    job = found["Job/default/nightly-report"]
    assert "selector" not in job["spec"]
    assert "labels" not in job["metadata"]
    assert "labels" not in job["spec"]["template"]["metadata"]
    assert job["spec"]["template"]["metadata"]["annotations"] == {"kubetide.io/duration": "20m"}
    pod = found["Pod/default/debug"]
    assert "nodeName" not in pod["spec"] and "status" not in pod
    assert "managedFields" not in pod["metadata"] and "selfLink" not in pod["metadata"]
    # The injected token of this cluster's ServiceAccount goes: admission injects one where it runs.
    assert "volumes" not in pod["spec"] and "volumeMounts" not in pod["spec"]["containers"][0]


def test_a_v1beta1_pdb_with_a_selector_becomes_policy_v1_and_an_empty_one_is_dropped() -> None:
    result = export()
    pdbs = {k: o for k, o in objects(result).items() if k.startswith("PodDisruptionBudget/")}
    assert list(pdbs) == ["PodDisruptionBudget/default/web"]
    assert pdbs["PodDisruptionBudget/default/web"]["apiVersion"] == "policy/v1"
    assert any("empty selector protects no pods" in n for n in result.notes)


def test_a_v1beta1_pdb_without_any_selector_is_dropped_too() -> None:
    pdb = {
        "apiVersion": "policy/v1beta1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "none", "namespace": "default"},
        "spec": {"minAvailable": 1},
    }
    assert not [k for k in objects(export(pdbs=[pdb])) if k.startswith("PodDisruptionBudget/")]


def test_a_policy_v1_pdb_with_an_empty_selector_is_kept_as_served() -> None:
    pdb = {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "all", "namespace": "shop", "uid": "x"},
        "spec": {"maxUnavailable": 1, "selector": {}},
    }
    result = export(pdbs=[pdb])
    assert objects(result)["PodDisruptionBudget/shop/all"]["spec"] == {"maxUnavailable": 1, "selector": {}}
    parse_scenario(result.document)


def test_hpas_keep_their_served_version_and_kubetide_ones_become_autoscaling_v2() -> None:
    result = export()
    found = objects(result)
    assert found["HorizontalPodAutoscaler/default/web"]["apiVersion"] == "autoscaling/v2beta2"
    api = found["HorizontalPodAutoscaler/shop/api"]
    assert api["apiVersion"] == "autoscaling/v2" and "syncPeriod" not in api["spec"]
    assert any("spec.syncPeriod 30s dropped" in n for n in result.notes)


def test_namespaces_given_limit_the_export_but_keep_kube_system_daemonsets() -> None:
    result = build_scenario(
        recorded_cluster(),
        ExportOptions(namespaces=frozenset({"shop"}), catalog=frozenset(BUILTIN_CATALOG)),
    )
    assert sorted(objects(result)) == [
        "ConfigMap/kube-system/cluster-autoscaler-priority-expander",
        "DaemonSet/kube-system/kube-proxy",
        "Deployment/shop/api",
        "HorizontalPodAutoscaler/shop/api",
        "StatefulSet/shop/db",
    ]
    assert "hpa" in result.document["spec"]["autoscalers"]
    parse_scenario(result.document)


def test_no_hpa_leaves_the_hpa_controller_off_and_the_notes_ask_for_traffic() -> None:
    result = export(hpas=[], kubetide_hpas=[])
    assert result.document["spec"]["autoscalers"] == {"clusterAutoscaler": {"enabled": True}}
    assert "traffic" not in result.document["spec"]
    assert any("no traffic" in n and "§5" in n for n in result.notes)
    assert any("assumed: batch 0..10" in n for n in result.notes)


def test_an_empty_cluster_is_still_a_scenario_that_runs() -> None:
    result = build_scenario(ClusterObjects(), ExportOptions(duration=600))
    assert result.document["spec"]["nodeGroups"] == [] and result.document["spec"]["objects"] == []
    Simulation(parse_scenario(result.document)).run()
