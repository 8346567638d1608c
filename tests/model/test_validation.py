"""The API server's validation of the objects kubetide reads (``kubetide.model.validation``).

Each case breaks one field of a valid object and names the upstream function whose rule refuses it
(Kubernetes ``pkg/apis/*/validation``, ``k8s.io/apimachinery/pkg/{api,apis/meta/v1,util}/validation``).
The boundaries are upstream's: a label value of 63 characters passes and of 64 fails, ``periodSeconds``
1800 passes and 1801 fails, and so on.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubetide.model.errors import ManifestError
from kubetide.model.pod import Pod
from kubetide.model.validation import read_validated, validate_object
from kubetide.model.validation.names import dns1123_label, dns1123_subdomain, label_value, qualified_name
from mutations import any_value, places

CONTAINER = {"name": "app", "resources": {"requests": {"cpu": "250m", "memory": "256Mi"}}}
TEMPLATE = {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [CONTAINER]}}
OBJECTS: dict[str, dict[str, Any]] = {
    "Deployment": {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "shop"},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}}, "template": TEMPLATE},
    },
    "StatefulSet": {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "db"},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}}, "template": TEMPLATE},
    },
    "DaemonSet": {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": "agent"},
        "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": TEMPLATE},
    },
    "Job": {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "nightly"},
        "spec": {
            "parallelism": 2,
            "template": {"spec": {"restartPolicy": "Never", "containers": [CONTAINER]}},
        },
    },
    "Pod": {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {"containers": [CONTAINER]},
    },
    "HorizontalPodAutoscaler": {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "web"},
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
            "minReplicas": 1,
            "maxReplicas": 10,
            "metrics": [
                {
                    "type": "Resource",
                    "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 60}},
                }
            ],
            "behavior": {"scaleUp": {"policies": [{"type": "Pods", "value": 4, "periodSeconds": 60}]}},
        },
    },
    "PodDisruptionBudget": {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "web"},
        "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}},
    },
    "ConfigMap": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"}, "data": {"a.b": "x"}},
    "Node": {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "n1", "labels": {"zone": "a"}},
        "spec": {"taints": [{"key": "dedicated", "value": "batch", "effect": "NoSchedule"}]},
        "status": {"capacity": {"cpu": "4", "memory": "16Gi", "pods": "110"}},
    },
}


def obj(kind: str, change: Callable[[dict[str, Any]], object] | None = None) -> dict[str, Any]:
    out = copy.deepcopy(OBJECTS[kind])
    if change is not None:
        change(out)
    return out


def problems(manifest: dict[str, Any]) -> list[str]:
    return [str(p) for p in validate_object(manifest, "obj")]


def pod_spec(d: dict[str, Any]) -> dict[str, Any]:
    return d["spec"]["template"]["spec"] if "template" in d["spec"] else d["spec"]


def container(d: dict[str, Any]) -> dict[str, Any]:
    return pod_spec(d)["containers"][0]


def hpa_spec(d: dict[str, Any]) -> dict[str, Any]:
    return d["spec"]


@pytest.mark.parametrize("kind", list(OBJECTS))
def test_the_valid_objects_pass(kind: str) -> None:
    assert problems(obj(kind)) == []


# (kind, change, path, message part); the upstream rule in the comment.
CASES: list[tuple[str, Callable[[dict[str, Any]], object], str, str]] = [
    # ValidateObjectMeta: names are DNS-1123 subdomains, namespaces DNS-1123 labels.
    ("Deployment", lambda d: d["metadata"].update(name="Web_App"), "obj.metadata.name", "RFC 1123 subdomain"),
    ("Deployment", lambda d: d["metadata"].update(name="a" * 254), "obj.metadata.name", "no more than 253"),
    ("Pod", lambda d: d["metadata"].update(namespace="Shop"), "obj.metadata.namespace", "RFC 1123 label"),
    ("Pod", lambda d: d["metadata"].update(name="web\n"), "obj.metadata.name", "RFC 1123 subdomain"),
    ("Pod", lambda d: d["metadata"].pop("name"), "obj.metadata.name", "is required"),
    # ValidateLabels: IsQualifiedName keys, IsValidLabelValue values.
    ("Pod", lambda d: d["metadata"].update(labels={"-bad": "x"}), 'obj.metadata.labels["-bad"]', "name part"),
    (
        "Pod",
        lambda d: d["metadata"].update(labels={"a/b/c": "x"}),
        'obj.metadata.labels["a/b/c"]',
        "qualified name",
    ),
    (
        "Pod",
        lambda d: d["metadata"].update(labels={"Ex.com/x": "v"}),
        'obj.metadata.labels["Ex.com/x"]',
        "prefix part",
    ),
    (
        "Pod",
        lambda d: d["metadata"].update(labels={"k" * 64: "v"}),
        "obj.metadata.labels." + "k" * 64,
        "no more than 63",
    ),
    (
        "Pod",
        lambda d: d["metadata"].update(labels={"app": "v" * 64}),
        "obj.metadata.labels.app",
        "no more than 63",
    ),
    ("Pod", lambda d: d["metadata"].update(labels={"app": "a b"}), "obj.metadata.labels.app", "valid label"),
    (
        "Pod",
        lambda d: d["metadata"].update(labels={"tier": 1}),
        "obj.metadata.labels.tier",
        "must be a string",
    ),
    # ValidateAnnotations: qualified keys, 256 KiB in all.
    (
        "Pod",
        lambda d: d["metadata"].update(annotations={"a": "x" * 262144}),
        "obj.metadata.annotations",
        "too long",
    ),
    (
        "Pod",
        lambda d: d["metadata"].update(annotations={"b@d": "x"}),
        'obj.metadata.annotations["b@d"]',
        "name part",
    ),
    # ValidateOwnerReferences: one controller.
    (
        "Pod",
        lambda d: d["metadata"].update(
            ownerReferences=[
                {"kind": "ReplicaSet", "name": "a", "controller": True},
                {"kind": "ReplicaSet", "name": "b", "controller": True},
            ]
        ),
        "obj.metadata.ownerReferences",
        "Only one reference can have Controller set to true",
    ),
    # validateContainers / validateInitContainers: names, unique across both lists, restartPolicy.
    ("Pod", lambda d: container(d).update(name="App"), "obj.spec.containers[0].name", "RFC 1123 label"),
    (
        "Pod",
        lambda d: pod_spec(d)["containers"].append({"name": "app"}),
        "obj.spec.containers[1].name",
        "duplicate value 'app'",
    ),
    (
        "Deployment",
        lambda d: pod_spec(d).update(initContainers=[{"name": "app"}]),
        "obj.spec.template.spec.initContainers[0].name",
        "duplicate value 'app'",
    ),
    ("Pod", lambda d: pod_spec(d).update(containers=[]), "obj.spec.containers", "is required"),
    (
        "Pod",
        lambda d: container(d).update(restartPolicy="Always"),
        "obj.spec.containers[0].restartPolicy",
        "may not be set for non-init containers",
    ),
    (
        "Pod",
        lambda d: pod_spec(d).update(initContainers=[{"name": "i", "restartPolicy": "Never"}]),
        "obj.spec.initContainers[0].restartPolicy",
        'supported values: "Always"',
    ),
    # ValidateResourceRequirements: requests <= limits; extended resources need equal limits.
    (
        "Deployment",
        lambda d: container(d)["resources"].update(limits={"cpu": "100m"}),
        "obj.spec.template.spec.containers[0].resources.requests.cpu",
        "must be less than or equal to cpu limit",
    ),
    (
        "Pod",
        lambda d: container(d)["resources"]["requests"].update({"nvidia.com/gpu": "1"}),
        "obj.spec.containers[0].resources.limits",
        "Limit must be set for non overcommitable resources",
    ),
    (
        "Pod",
        lambda d: container(d)["resources"].update(requests={"gpu": "1"}),
        "obj.spec.containers[0].resources.requests.gpu",
        "must be a standard resource for containers",
    ),
    (
        "Pod",
        lambda d: container(d)["resources"].update(
            requests={"example.com/x": "500m"}, limits={"example.com/x": "500m"}
        ),
        'obj.spec.containers[0].resources.requests["example.com/x"]',
        "must be an integer",
    ),
    (
        "Pod",
        lambda d: container(d)["resources"]["requests"].update(cpu="-1"),
        "obj.spec.containers[0].resources.requests.cpu",
        "must be greater than or equal to 0",
    ),
    (
        "Pod",
        lambda d: container(d)["resources"]["requests"].update(memory="1e999999999"),
        "obj.spec.containers[0].resources.requests.memory",
        "too large",
    ),
    # Ports: validateContainerPorts, AccumulateUniqueHostPorts.
    (
        "Pod",
        lambda d: container(d).update(ports=[{"containerPort": 70000}]),
        "obj.spec.containers[0].ports[0].containerPort",
        "between 1 and 65535",
    ),
    (
        "Pod",
        lambda d: container(d).update(ports=[{"containerPort": 80, "protocol": "HTTP"}]),
        "obj.spec.containers[0].ports[0].protocol",
        "unsupported value 'HTTP'",
    ),
    (
        "Pod",
        lambda d: (
            pod_spec(d)["containers"].append({"name": "b", "ports": [{"containerPort": 81, "hostPort": 80}]})
            or container(d).update(ports=[{"containerPort": 80, "hostPort": 80}])
        ),
        "obj.spec.containers[1].ports[0]",
        "host port already in use",
    ),
    # validateRestartPolicy, and each controller's own restartPolicy rule.
    (
        "Pod",
        lambda d: pod_spec(d).update(restartPolicy="Sometimes"),
        "obj.spec.restartPolicy",
        "unsupported value",
    ),
    (
        "Deployment",
        lambda d: pod_spec(d).update(restartPolicy="OnFailure"),
        "obj.spec.template.spec.restartPolicy",
        'supported values: "Always"',
    ),
    (
        "Job",
        lambda d: pod_spec(d).update(restartPolicy="Always"),
        "obj.spec.template.spec.restartPolicy",
        '"OnFailure", "Never"',
    ),
    (
        "Job",
        lambda d: pod_spec(d).pop("restartPolicy"),
        "obj.spec.template.spec.restartPolicy",
        "is required",
    ),
    ("Job", lambda d: d["metadata"].update(name="j" * 64), "obj.metadata.name", "no more than 63"),
    (
        "Job",
        lambda d: d["spec"].update(selector={"matchLabels": {"app": "x"}}),
        "obj.spec.selector",
        "not auto-generated",
    ),
    # Selectors: required, not empty, matching the template (ValidatePodTemplateSpecForReplicaSet).
    (
        "Deployment",
        lambda d: d["spec"].update(selector={"matchLabels": {"app": "other"}}),
        "obj.spec.template.metadata.labels",
        "`selector` does not match template `labels`",
    ),
    ("Deployment", lambda d: d["spec"].pop("selector"), "obj.spec.selector", "is required"),
    (
        "StatefulSet",
        lambda d: d["spec"].update(selector={}),
        "obj.spec.selector",
        "empty selector is invalid",
    ),
    (
        "DaemonSet",
        lambda d: d["spec"].update(selector={"matchExpressions": [{"key": "app", "operator": "Is"}]}),
        "obj.spec.selector.matchExpressions[0].operator",
        "not a valid selector operator",
    ),
    (
        "PodDisruptionBudget",
        lambda d: d["spec"].update(selector={"matchExpressions": [{"key": "app", "operator": "In"}]}),
        "obj.spec.selector.matchExpressions[0].values",
        "must be specified when `operator` is 'In'",
    ),
    # Enums and counts.
    (
        "Deployment",
        lambda d: d["spec"].update(strategy={"type": "BlueGreen"}),
        "obj.spec.strategy.type",
        "unsupported value",
    ),
    (
        "Deployment",
        lambda d: d["spec"].update(strategy={"type": "Recreate", "rollingUpdate": {"maxSurge": 1}}),
        "obj.spec.strategy.rollingUpdate",
        "may not be specified when strategy `type` is 'Recreate'",
    ),
    (
        "Deployment",
        lambda d: d["spec"].update(strategy={"rollingUpdate": {"maxSurge": 0, "maxUnavailable": "0%"}}),
        "obj.spec.strategy.rollingUpdate.maxUnavailable",
        "may not be 0 when `maxSurge` is 0",
    ),
    (
        "Deployment",
        lambda d: d["spec"].update(strategy={"rollingUpdate": {"maxUnavailable": "120%"}}),
        "obj.spec.strategy.rollingUpdate.maxUnavailable",
        "must not be greater than 100%",
    ),
    (
        "StatefulSet",
        lambda d: d["spec"].update(podManagementPolicy="Eager"),
        "obj.spec.podManagementPolicy",
        "unsupported",
    ),
    ("Deployment", lambda d: d["spec"].update(replicas=2**31), "obj.spec.replicas", "int32"),
    (
        "Deployment",
        lambda d: d["spec"].update(replicas=-1),
        "obj.spec.replicas",
        "greater than or equal to 0",
    ),
    ("Job", lambda d: d["spec"].update(parallelism=-2), "obj.spec.parallelism", "greater than or equal to 0"),
    (
        "Deployment",
        lambda d: d["spec"].update(minReadySeconds=60, progressDeadlineSeconds=60),
        "obj.spec.progressDeadlineSeconds",
        "must be greater than minReadySeconds",
    ),
    # Scheduling terms: ValidateTolerations, validateAffinity, validateTopologySpreadConstraints.
    (
        "Pod",
        lambda d: pod_spec(d).update(tolerations=[{"operator": "Equal", "value": "x"}]),
        "obj.spec.tolerations[0].operator",
        "operator must be Exists when `key` is empty",
    ),
    (
        "Pod",
        lambda d: pod_spec(d).update(
            tolerations=[{"key": "k", "tolerationSeconds": 5, "effect": "NoSchedule"}]
        ),
        "obj.spec.tolerations[0].effect",
        "effect must be 'NoExecute'",
    ),
    (
        "Pod",
        lambda d: pod_spec(d).update(
            affinity={
                "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": []}}
            }
        ),
        "obj.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms",
        "at least one node selector term",
    ),
    (
        "Pod",
        lambda d: pod_spec(d).update(
            affinity={
                "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{"labelSelector": {}}]}
            }
        ),
        "obj.spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey",
        "can not be empty",
    ),
    (
        "Pod",
        lambda d: pod_spec(d).update(
            topologySpreadConstraints=[
                {"maxSkew": 0, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}
            ]
        ),
        "obj.spec.topologySpreadConstraints[0].maxSkew",
        "must be greater than zero",
    ),
    (
        "Pod",
        lambda d: pod_spec(d).update(
            topologySpreadConstraints=[
                {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "Sometimes"}
            ]
        ),
        "obj.spec.topologySpreadConstraints[0].whenUnsatisfiable",
        "unsupported value",
    ),
    (
        "Pod",
        lambda d: pod_spec(d).update(nodeSelector={"pool": "a b"}),
        "obj.spec.nodeSelector.pool",
        "valid label",
    ),
    # HPAs: ValidateHorizontalPodAutoscaler, validateMetricSpec, validateMetricTarget, validateScalingRules.
    (
        "HorizontalPodAutoscaler",
        lambda d: hpa_spec(d).update(maxReplicas=0),
        "obj.spec.maxReplicas",
        "greater than 0",
    ),
    (
        "HorizontalPodAutoscaler",
        lambda d: hpa_spec(d).update(minReplicas=5, maxReplicas=3),
        "obj.spec.maxReplicas",
        "greater than or equal to `minReplicas`",
    ),
    (
        "HorizontalPodAutoscaler",
        lambda d: hpa_spec(d).update(minReplicas=0),
        "obj.spec.metrics",
        "at least one Object or External metric",
    ),
    (
        "HorizontalPodAutoscaler",
        lambda d: hpa_spec(d).update(maxReplicas=2**31),
        "obj.spec.maxReplicas",
        "int32",
    ),
    (
        "HorizontalPodAutoscaler",
        lambda d: hpa_spec(d)["metrics"][0].update(type="Cpu"),
        "obj.spec.metrics[0].type",
        "unsupported value 'Cpu'",
    ),
    (
        "HorizontalPodAutoscaler",
        lambda d: hpa_spec(d)["metrics"][0].update(type="Pods"),
        "obj.spec.metrics[0].pods",
        "must populate information for the given metric source",
    ),
    (
        "HorizontalPodAutoscaler",
        lambda d: hpa_spec(d)["metrics"][0].update(pods={"metric": {"name": "qps"}}),
        "obj.spec.metrics[0].pods",
        "must populate the given metric source only",
    ),
    (
        "HorizontalPodAutoscaler",
        lambda d: hpa_spec(d)["metrics"][0]["resource"]["target"].update(type="Percent"),
        "obj.spec.metrics[0].resource.target.type",
        "must be either Utilization, Value, or AverageValue",
    ),
    (
        "HorizontalPodAutoscaler",
        lambda d: hpa_spec(d)["metrics"][0]["resource"]["target"].update(averageUtilization=0),
        "obj.spec.metrics[0].resource.target.averageUtilization",
        "must be greater than 0",
    ),
    (
        "HorizontalPodAutoscaler",
        lambda d: hpa_spec(d)["metrics"][0]["resource"]["target"].update(averageValue="100m"),
        "obj.spec.metrics[0].resource.target.averageValue",
        "may not set both",
    ),
    (
        "HorizontalPodAutoscaler",
        lambda d: hpa_spec(d)["metrics"].append(
            {
                "type": "External",
                "external": {"metric": {"name": "q/x"}, "target": {"type": "Value", "value": "-1"}},
            }
        ),
        "obj.spec.metrics[1].external.target.value",
        "must be positive",
    ),
    (
        "HorizontalPodAutoscaler",
        lambda d: hpa_spec(d)["behavior"]["scaleUp"]["policies"][0].update(periodSeconds=1801),
        "obj.spec.behavior.scaleUp.policies[0].periodSeconds",
        "less than or equal to 1800",
    ),
    (
        "HorizontalPodAutoscaler",
        lambda d: hpa_spec(d)["behavior"]["scaleUp"]["policies"][0].update(periodSeconds=0),
        "obj.spec.behavior.scaleUp.policies[0].periodSeconds",
        "greater than zero",
    ),
    (
        "HorizontalPodAutoscaler",
        lambda d: hpa_spec(d)["behavior"]["scaleUp"]["policies"][0].update(value=0),
        "obj.spec.behavior.scaleUp.policies[0].value",
        "greater than zero",
    ),
    (
        "HorizontalPodAutoscaler",
        lambda d: hpa_spec(d)["behavior"]["scaleUp"]["policies"][0].update(type="Nodes"),
        "obj.spec.behavior.scaleUp.policies[0].type",
        'supported values: "Percent", "Pods"',
    ),
    (
        "HorizontalPodAutoscaler",
        lambda d: hpa_spec(d)["behavior"]["scaleUp"].update(stabilizationWindowSeconds=3601),
        "obj.spec.behavior.scaleUp.stabilizationWindowSeconds",
        "less than or equal to 3600",
    ),
    (
        "HorizontalPodAutoscaler",
        lambda d: hpa_spec(d)["behavior"]["scaleUp"].update(selectPolicy="Sum"),
        "obj.spec.behavior.scaleUp.selectPolicy",
        "unsupported value 'Sum'",
    ),
    (
        "HorizontalPodAutoscaler",
        lambda d: hpa_spec(d)["behavior"].update(scaleDown={"policies": []}),
        "obj.spec.behavior.scaleDown.policies",
        "at least one Policy",
    ),
    (
        "HorizontalPodAutoscaler",
        lambda d: hpa_spec(d)["behavior"].update(scaleDown={"tolerance": "-0.1"}),
        "obj.spec.behavior.scaleDown.tolerance",
        "greater than or equal to zero",
    ),
    (
        "HorizontalPodAutoscaler",
        lambda d: hpa_spec(d)["scaleTargetRef"].update(name="a/b"),
        "obj.spec.scaleTargetRef.name",
        "may not contain '/'",
    ),
    # PDBs, ConfigMaps, Nodes.
    (
        "PodDisruptionBudget",
        lambda d: d["spec"].update(maxUnavailable=1),
        "obj.spec",
        "cannot be both set",
    ),
    ("PodDisruptionBudget", lambda d: d["spec"].update(minAvailable="150%"), "obj.spec.minAvailable", "100%"),
    (
        "PodDisruptionBudget",
        lambda d: d["spec"].update(minAvailable="half"),
        "obj.spec.minAvailable",
        "percent",
    ),
    ("ConfigMap", lambda d: d.update(data={"a b": "x"}), 'obj.data["a b"]', "valid config key"),
    (
        "Node",
        lambda d: d["spec"]["taints"].append({"key": "dedicated", "value": "x", "effect": "NoSchedule"}),
        "obj.spec.taints[1]",
        "unique by key and effect",
    ),
    (
        "Node",
        lambda d: d["spec"]["taints"][0].update(effect="NoRun"),
        "obj.spec.taints[0].effect",
        "unsupported",
    ),
    ("Node", lambda d: d["status"]["capacity"].update(cpu="1e17"), "obj.status.capacity.cpu", "too large"),
    (
        "Node",
        lambda d: d["status"]["capacity"].update(pods="1.5"),
        "obj.status.capacity.pods",
        "must be an integer",
    ),
]


@pytest.mark.parametrize(
    ("kind", "change", "path", "message"), CASES, ids=[f"{c[0]}-{c[2]}-{c[3][:24]}" for c in CASES]
)
def test_what_the_api_server_refuses_is_refused_at_the_field(
    kind: str, change: Callable[[dict[str, Any]], object], path: str, message: str
) -> None:
    found = problems(obj(kind, change))
    assert any(p.startswith(f"{path}:") and message in p for p in found), found


@pytest.mark.parametrize(
    ("check", "ok", "bad"),
    [
        (dns1123_label, "a" * 63, "a" * 64),
        (dns1123_subdomain, ".".join(["a" * 63] * 3) + "." + "a" * 61, "a" * 254),
        (qualified_name, "example.com/" + "n" * 63, "example.com/" + "n" * 64),
        (label_value, "v" * 63, "v" * 64),
        (label_value, "", "-x"),
        (qualified_name, "a.b_c-D", "a.b_c-"),
    ],
)
def test_length_and_character_boundaries_are_upstreams(
    check: Callable[[str], tuple[str, ...]], ok: str, bad: str
) -> None:
    assert check(ok) == ()
    assert check(bad) != ()


def _converted(version: str, spec: dict[str, Any]) -> dict[str, Any]:
    body = {"scaleTargetRef": {"kind": "Deployment", "name": "web"}, "maxReplicas": 5, **spec}
    return {"apiVersion": version, "kind": "HorizontalPodAutoscaler", "metadata": {"name": "h"}, "spec": body}


@pytest.mark.parametrize(
    ("manifest", "path", "message"),
    [
        (
            _converted("autoscaling/v1", {"targetCPUUtilizationPercentage": 0}),
            "targetCPUUtilizationPercentage",
            "greater than 0",
        ),
        (
            _converted("autoscaling/v2beta1", {"metrics": [{"type": "Pods", "pods": {"metricName": "qps"}}]}),
            "metrics[0].pods.targetAverageValue",
            "must specify a positive target averageValue",
        ),
        (
            _converted(
                "autoscaling/v2beta1",
                {
                    "metrics": [
                        {"type": "Resource", "resource": {"name": "cpu", "targetAverageUtilization": -5}}
                    ]
                },
            ),
            "metrics[0].resource.targetAverageUtilization",
            "greater than 0",
        ),
        (
            _converted(
                "autoscaling/v2beta1", {"metrics": [{"type": "External", "external": {"metricName": "q%"}}]}
            ),
            "metrics[0].external.metricName",
            "may not contain '%'",
        ),
    ],
)
def test_older_hpa_versions_are_checked_at_the_fields_written(
    manifest: dict[str, Any], path: str, message: str
) -> None:
    """The API server converts v1 and v2beta1 to its internal version and validates that; the
    problem is named at the field the user wrote."""
    found = problems(manifest)
    assert any(p.startswith(f"obj.spec.{path}:") and message in p for p in found), found


def test_every_problem_of_an_object_is_listed_at_once() -> None:
    def breaks(d: dict[str, Any]) -> None:
        d["metadata"]["name"] = "Bad"
        d["spec"]["replicas"] = "x"
        container(d)["name"] = "Bad"
        container(d)["resources"]["limits"] = {"memory": "1Mi"}
        pod_spec(d)["restartPolicy"] = "Never"

    found = problems(obj("Deployment", breaks))
    assert [p.split(":")[0] for p in found] == [
        "obj.metadata.name",
        "obj.spec.replicas",
        "obj.spec.template.spec.containers[0].name",
        "obj.spec.template.spec.containers[0].resources.requests.memory",
        "obj.spec.template.spec.restartPolicy",
    ]


def test_the_view_adds_what_the_validation_does_not_check_and_nothing_twice() -> None:
    bad = obj("Pod", lambda d: d["metadata"].update(name="Bad", creationTimestamp="yesterday"))
    with pytest.raises(ManifestError) as info:
        read_validated(bad, "obj", Pod.from_manifest)
    assert [e.path for e in info.value.errors] == ["obj.metadata.name", "obj.metadata.creationTimestamp"]


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(list(OBJECTS)), st.data(), any_value(12))
def test_any_value_anywhere_gives_problems_never_an_exception(
    kind: str, data: st.DataObject, junk: Any
) -> None:
    manifest = obj(kind)
    where = data.draw(st.sampled_from(places(manifest)[1:]))
    parent = manifest
    for part in where[:-1]:
        parent = parent[part]
    parent[where[-1]] = junk
    for problem in validate_object(manifest, "obj"):
        assert problem.path and problem.message
