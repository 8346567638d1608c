"""The live caches' fast pod decoder gives the very view ``Pod.from_manifest`` gives, or its error."""

from __future__ import annotations

import copy
from dataclasses import fields
from typing import Any

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from kubetide.bench.live_objects import pod_list
from kubetide.kube.schema import list_decoder
from kubetide.kube.trim import trim_pod
from kubetide.kube.views import pod_from_json
from kubetide.model.errors import ManifestError
from kubetide.model.pod import Pod

# Values of every JSON type, so each field also meets the wrong ones.
_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 40),
    st.sampled_from([1.5, 30.0, float("inf")]),
    st.sampled_from(["", "x", "500m", "1Gi", "-1", "2026-11-23T20:00:00Z", "not a time", "True", "False"]),
)
_ANY = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(st.text(max_size=3), inner, max_size=2),
    max_leaves=4,
)
_QUANTITY = st.sampled_from(["100m", "250m", "1", "128Mi", "1Gi", "0", "-1", "x", 2, 1.5, True])
_RESOURCES = st.dictionaries(st.sampled_from(["cpu", "memory", "nvidia.com/gpu"]), _QUANTITY, max_size=3)
_CONTAINER = st.fixed_dictionaries(
    {"name": st.sampled_from(["app", "side"])},
    optional={
        "resources": st.fixed_dictionaries({}, optional={"requests": _RESOURCES, "limits": _RESOURCES})
        | _ANY,
        "ports": st.lists(
            st.fixed_dictionaries(
                {"containerPort": st.just(80)},
                optional={"hostPort": st.integers(-1, 3), "protocol": st.sampled_from(["TCP", "UDP"])},
            ),
            max_size=2,
        ),
        "restartPolicy": st.sampled_from(["Always", "Never"]),
    },
)
_TOLERATION = st.fixed_dictionaries(
    {},
    optional={
        "key": st.sampled_from(["a", "b"]),
        "operator": st.sampled_from(["Exists", "Equal", "Bad"]),
        "value": st.sampled_from(["x", ""]),
        "effect": st.sampled_from(["NoSchedule", "NoExecute", "Nope"]),
        "tolerationSeconds": st.sampled_from([300, 1.0, "3"]),
    },
)
_TERM = st.fixed_dictionaries(
    {"topologyKey": st.sampled_from(["kubernetes.io/hostname", ""])},
    optional={
        "labelSelector": st.fixed_dictionaries(
            {"matchLabels": st.dictionaries(st.just("app"), st.sampled_from(["a", "b", 3]))}
        )
    },
)
_AFFINITY = st.fixed_dictionaries(
    {},
    optional={
        "nodeAffinity": st.fixed_dictionaries(
            {},
            optional={
                "requiredDuringSchedulingIgnoredDuringExecution": st.fixed_dictionaries(
                    {
                        "nodeSelectorTerms": st.lists(
                            st.fixed_dictionaries(
                                {
                                    "matchExpressions": st.lists(
                                        st.fixed_dictionaries(
                                            {
                                                "key": st.just("zone"),
                                                "operator": st.sampled_from(["In", "Exists", "Bad"]),
                                                "values": st.lists(st.sampled_from(["a", "b"]), max_size=2),
                                            }
                                        ),
                                        max_size=2,
                                    )
                                }
                            ),
                            max_size=2,
                        )
                    }
                )
            },
        ),
        "podAffinity": st.fixed_dictionaries(
            {}, optional={"requiredDuringSchedulingIgnoredDuringExecution": st.lists(_TERM, max_size=2)}
        ),
        "podAntiAffinity": st.fixed_dictionaries(
            {},
            optional={"requiredDuringSchedulingIgnoredDuringExecution": st.lists(_TERM, max_size=2) | _ANY},
        ),
    },
)
_CONDITION = st.fixed_dictionaries(
    {"type": st.sampled_from(["Ready", "PodScheduled", "Initialized"])},
    optional={
        "status": st.sampled_from(["True", "False"]) | _SCALARS,
        "reason": st.sampled_from(["Unschedulable", "Other"]) | _SCALARS,
        "message": st.sampled_from(["0/3 nodes are available", ""]),
        "lastTransitionTime": st.sampled_from(["2026-11-23T20:00:00Z", "2026-11-23T20:00:01+01:00", "bad"])
        | _SCALARS,
    },
)
_LABELS = st.dictionaries(
    st.sampled_from(["app", "tier", "a/b"]), st.sampled_from(["web", "db", ""]) | _SCALARS, max_size=3
)
_METADATA = st.fixed_dictionaries(
    {"name": st.sampled_from(["p-1", "p-2"]) | _SCALARS},
    optional={
        "namespace": st.sampled_from(["default", "ns-1"]) | _SCALARS,
        "uid": st.sampled_from(["u-1", ""]),
        "labels": _LABELS | _ANY,
        "annotations": _LABELS,
        "ownerReferences": st.lists(
            st.fixed_dictionaries(
                {"kind": st.sampled_from(["ReplicaSet", "DaemonSet"]), "name": st.just("rs")},
                optional={"uid": st.just("rs-uid"), "controller": st.booleans() | _SCALARS},
            ),
            max_size=2,
        )
        | _ANY,
        "creationTimestamp": st.sampled_from(["2026-11-23T20:00:00Z", "2026-11-23T20:00:00"]) | _SCALARS,
        "deletionTimestamp": st.sampled_from(["2026-11-23T20:10:00Z"]),
    },
)
_SPEC = st.fixed_dictionaries(
    {"containers": st.lists(_CONTAINER, min_size=1, max_size=3)},
    optional={
        "initContainers": st.lists(_CONTAINER, max_size=2),
        "overhead": _RESOURCES | _ANY,
        "resources": st.fixed_dictionaries({}, optional={"requests": _RESOURCES}) | _ANY,
        "nodeName": st.sampled_from(["node-1", ""]) | _SCALARS,
        "nodeSelector": _LABELS,
        "affinity": _AFFINITY | _ANY,
        "tolerations": st.lists(_TOLERATION, max_size=3) | _ANY,
        "topologySpreadConstraints": st.lists(
            st.fixed_dictionaries(
                {
                    "maxSkew": st.sampled_from([1, 0, "1"]),
                    "topologyKey": st.just("zone"),
                    "whenUnsatisfiable": st.sampled_from(["DoNotSchedule", "ScheduleAnyway", "Bad"]),
                },
                optional={"labelSelector": st.fixed_dictionaries({"matchLabels": st.just({"app": "web"})})},
            ),
            max_size=2,
        ),
        "priority": st.sampled_from([0, 100, -5]) | _SCALARS,
        "schedulerName": st.sampled_from(["default-scheduler", "other"]) | _SCALARS,
        "volumes": st.lists(st.fixed_dictionaries({"name": st.just("v")}) | _SCALARS, max_size=2),
        "restartPolicy": st.sampled_from(["Always", "Never", "Sometimes"]) | _SCALARS,
        "terminationGracePeriodSeconds": st.sampled_from([30, 0, 2.5, 10**400]) | _SCALARS,
    },
)
_STATUS = st.fixed_dictionaries(
    {},
    optional={
        "phase": st.sampled_from(["Running", "Pending", "Succeeded", "Lost"]) | _SCALARS,
        "conditions": st.lists(_CONDITION, max_size=4) | _ANY,
        "startTime": st.sampled_from(["2026-11-23T20:00:00Z"]) | _SCALARS,
    },
)
_POD = st.fixed_dictionaries(
    {"metadata": _METADATA}, optional={"spec": _SPEC | _ANY, "status": _STATUS | _ANY}
)
# Pods of the shapes the API server sends (wrong values, but of the right types, stay possible), so
# most take the fast path rather than the model's.
_REGULAR_POD = st.fixed_dictionaries(
    {
        "metadata": st.fixed_dictionaries(
            {"name": st.sampled_from(["p-1", "p-2"]), "namespace": st.sampled_from(["default", "ns-1"])},
            optional={
                "labels": st.dictionaries(st.sampled_from(["app", "a/b"]), st.sampled_from(["web", ""])),
                "ownerReferences": st.lists(
                    st.fixed_dictionaries(
                        {"kind": st.sampled_from(["ReplicaSet", "DaemonSet"]), "name": st.just("rs")},
                        optional={"uid": st.just("rs-uid"), "controller": st.booleans()},
                    ),
                    max_size=2,
                ),
                "creationTimestamp": st.sampled_from(["2026-11-23T20:00:00Z", "2026-11-23T20:00:00"]),
            },
        ),
        "spec": st.fixed_dictionaries(
            {"containers": st.lists(_CONTAINER, min_size=1, max_size=3)},
            optional={
                "initContainers": st.lists(_CONTAINER, max_size=2),
                "overhead": _RESOURCES,
                "resources": st.fixed_dictionaries({}, optional={"requests": _RESOURCES}),
                "nodeName": st.sampled_from(["node-1", ""]),
                "affinity": _AFFINITY,
                "tolerations": st.lists(_TOLERATION, max_size=3),
                "priority": st.sampled_from([0, 100, -5]),
                "terminationGracePeriodSeconds": st.sampled_from([30, 0, 2.5]),
            },
        ),
        "status": st.fixed_dictionaries(
            {"phase": st.sampled_from(["Running", "Pending"])},
            optional={
                "conditions": st.lists(
                    st.fixed_dictionaries(
                        {
                            "type": st.sampled_from(["Ready", "PodScheduled"]),
                            "status": st.sampled_from(["True", "False"]),
                        },
                        optional={
                            "reason": st.sampled_from(["Unschedulable", "Other"]),
                            "message": st.just("0/3"),
                        },
                    ),
                    max_size=3,
                )
            },
        ),
    }
)


def _outcome(build: Any, manifest: Any) -> tuple[str, Any]:
    try:
        pod = build(manifest)
    except ManifestError as exc:
        return "error", str(exc)
    # Every field, the ones equality skips (labels, annotations, selectors, volumes) included.
    return "pod", {f.name: getattr(pod, f.name) for f in fields(Pod)}


def _json(manifest: Any) -> Any:
    """A fresh copy: each path gets objects of its own (neither may lean on the other's)."""
    return copy.deepcopy(manifest)


@settings(max_examples=400, deadline=None)
@given(_POD)
def test_fast_decoder_gives_the_models_view_or_its_error(manifest: dict[str, Any]) -> None:
    assert _outcome(pod_from_json, _json(manifest)) == _outcome(Pod.from_manifest, _json(manifest))


@settings(max_examples=400, deadline=None)
@given(_REGULAR_POD)
def test_fast_decoder_gives_the_models_view_of_regular_pods(manifest: dict[str, Any]) -> None:
    assert _outcome(pod_from_json, _json(manifest)) == _outcome(Pod.from_manifest, _json(manifest))


@settings(max_examples=100, deadline=None)
@given(st.lists(_POD | _REGULAR_POD, min_size=2, max_size=6))
def test_pods_decoded_in_any_order_get_the_same_views(manifests: list[dict[str, Any]]) -> None:
    # The memo tables fill as pods arrive: a part met before must give what it gives fresh.
    for manifest in manifests + manifests[::-1]:
        assert _outcome(pod_from_json, _json(manifest)) == _outcome(Pod.from_manifest, _json(manifest))


def test_the_bench_pods_decode_alike_and_share_their_templates_parts() -> None:
    # The fixture's pod i has app i % 300 and requests by i % 7 and i % 4: pod 2100 is pod 0's template.
    (page,) = pod_list(2101, 10, page=2101)
    items = [trim_pod(p) for p in list_decoder("pods").decode(page)["items"]]
    fast = [pod_from_json(p) for p in items]
    for manifest, pod in zip(items, fast, strict=True):
        assert _outcome(lambda _, made=pod: made, None) == _outcome(Pod.from_manifest, manifest)
    assert fast[2100].containers == fast[0].containers
    assert fast[2100].containers is fast[0].containers
    assert fast[2100].requests is fast[0].requests  # one sum per template
    assert all(p.tolerations is fast[0].tolerations for p in fast)
    assert fast[0].labels["tier"] is fast[1].labels["tier"]  # interned


def test_a_pod_the_model_refuses_raises_the_models_error() -> None:
    manifest = msgspec.json.decode(pod_list(1, 1)[0])["items"][0]
    manifest["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "lots"
    try:
        Pod.from_manifest(manifest)
    except ManifestError as exc:
        expected = str(exc)
    try:
        pod_from_json(manifest)
    except ManifestError as exc:
        assert str(exc) == expected
        assert "spec.containers[0].resources.requests.cpu" in expected
    else:
        raise AssertionError("no error")
