"""Hypothesis strategies for whole, valid simulator scenarios (as plain dicts for ``parse_scenario``).

Sizes are kept small (a handful of nodes and pods) so one simulation runs in well under a second,
while every section of the contract is exercised: node groups from the catalog with delays and every
fault type, Deployments / ReplicaSets / StatefulSets with HPAs of every metric source type (custom and
external metrics fed by traffic), DaemonSets with node selectors and tolerations, Jobs, bare Pods,
PDBs, ConfigMaps, traffic of every series type, and actions of every kind at random times.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hypothesis import strategies as st

DATA_DIR = Path(__file__).resolve().parent / "data"
CSV_FILE = "traffic.csv"  # in DATA_DIR: columns t, rps, depth

INSTANCE_TYPES = [
    "g4dn.xlarge",
    "m5.large",
    "m5.xlarge",
    "c5.xlarge",
    "c5d.large",
    "r5.large",
    "n2-standard-4",
    "t3.medium",
]
CPU_REQUESTS = ["0", "1m", "50m", "100m", "250m", "500m", "1", "1500m", "3", "100000"]
MEMORY_REQUESTS = ["0", "64Mi", "256Mi", "1Gi", "3Gi", "8Pi"]  # 8Pi: fits no node, and int64 milli-units
SCALABLE = ("Deployment", "ReplicaSet", "StatefulSet")

Draw = Any  # hypothesis' draw function


def _seconds(draw: Draw, duration: int, *, low: int = 0) -> int:
    return draw(st.integers(min_value=low, max_value=duration))


def _value(draw: Draw, scale: float) -> float:
    if draw(st.integers(0, 9)) == 0:
        return draw(st.sampled_from([-scale, -1.0, 0.0, 1e-9, scale * 1000]))
    return draw(st.floats(0, scale))


def _series(draw: Draw, duration: int, scale: float) -> dict[str, Any]:
    kind = draw(st.sampled_from(["constant", "step", "ramp", "sine", "csv"]))
    out: dict[str, Any]
    if kind == "constant":
        out = {"type": "constant", "value": _value(draw, scale)}
    elif kind == "step":
        times = sorted(draw(st.lists(st.integers(0, duration), min_size=1, max_size=4)))
        out = {"type": "step", "steps": [{"at": t, "value": _value(draw, scale)} for t in times]}
    elif kind == "ramp":
        start = _seconds(draw, duration)
        end = draw(st.integers(start, duration))
        out = {"type": "ramp", "from": _value(draw, scale), "to": _value(draw, scale)}
        out.update(start=start, end=end)
    elif kind == "sine":
        out = {
            "type": "sine",
            "base": _value(draw, scale),
            "amplitude": _value(draw, scale),
            "period": draw(st.integers(60, 7200)),
            "phase": draw(st.integers(0, 3600)),
        }
    else:
        out = {"type": "csv", "path": CSV_FILE, "column": draw(st.sampled_from(["rps", "depth"]))}
        if draw(st.booleans()):
            out["timeColumn"] = "t"
    if draw(st.integers(0, 3)) == 0:
        out["noise"] = {"stddev": draw(st.floats(0, scale / 4))}
        if draw(st.booleans()):
            out["noise"]["interval"] = draw(st.integers(1, 120))
    return out


def _faults(draw: Draw, duration: int) -> list[dict[str, Any]]:
    faults = []
    for _ in range(draw(st.integers(0, 3))):
        kind = draw(
            st.sampled_from(["stockout", "apiError", "unregistered", "missingProviderID", "nodeNotReady"])
        )
        fault: dict[str, Any] = {"type": kind}
        if draw(st.booleans()):
            fault["at"] = _seconds(draw, duration)
        if draw(st.booleans()):
            fault["until"] = draw(st.integers(fault.get("at", 0), duration))
        if kind == "stockout":
            fault["mode"] = draw(st.sampled_from(["silent", "error"]))
        elif kind == "apiError":
            if draw(st.booleans()):
                fault["calls"] = draw(
                    st.lists(
                        st.sampled_from(["IncreaseSize", "DeleteNodes", "DecreaseTargetSize"]), min_size=1
                    )
                )
        else:
            fault["count"] = draw(st.integers(1, 3))
        faults.append(fault)
    return faults


def _node_group(draw: Draw, index: int, duration: int) -> dict[str, Any]:
    min_size = draw(st.integers(0, 2))
    max_size = draw(st.integers(min_size, min_size + 8))
    group: dict[str, Any] = {
        "name": f"g{index}",
        "instanceType": draw(st.sampled_from(INSTANCE_TYPES)),
        "minSize": min_size,
        "maxSize": max_size,
        "initialSize": draw(st.integers(min_size, min(max_size, min_size + 6))),
    }
    if draw(st.booleans()):
        group["labels"] = {"pool": draw(st.sampled_from(["a", "b"]))}
    if draw(st.integers(0, 3)) == 0:
        group["taints"] = [{"key": "dedicated", "value": "batch", "effect": "NoSchedule"}]
    if draw(st.booleans()):
        group["provisioning"] = {
            "delay": draw(st.integers(0, 300)),
            "registerDelay": draw(st.integers(0, 60)),
            "readyDelay": draw(st.integers(0, 60)),
        }
    if draw(st.integers(0, 4)) == 0:
        group["pricePerHour"] = draw(st.floats(0, 2))
    group["faults"] = _faults(draw, duration)
    return group


def _expression(draw: Draw) -> dict[str, Any]:
    operator = draw(st.sampled_from(["In", "NotIn", "Exists", "DoesNotExist"]))
    out: dict[str, Any] = {"key": "pool", "operator": operator}
    if operator in ("In", "NotIn"):
        out["values"] = ["a"]
    return out


def _template(draw: Draw, labels: dict[str, str], *, job: bool = False) -> dict[str, Any]:
    container: dict[str, Any] = {
        "name": "c",
        "resources": {
            "requests": {
                "cpu": draw(st.sampled_from(CPU_REQUESTS)),
                "memory": draw(st.sampled_from(MEMORY_REQUESTS)),
            }
        },
    }
    if draw(st.booleans()):
        container["readinessProbe"] = {"initialDelaySeconds": draw(st.integers(0, 60))}
    if draw(st.integers(0, 6)) == 0:
        # An extended resource's limit is required and equal to its request (API validation).
        container["resources"]["requests"]["nvidia.com/gpu"] = "1"
        container["resources"]["limits"] = {"nvidia.com/gpu": "1"}
    spec: dict[str, Any] = {"containers": [container]}
    if draw(st.integers(0, 5)) == 0:
        spec["initContainers"] = [
            {"name": "init", "resources": {"requests": {"cpu": draw(st.sampled_from(CPU_REQUESTS))}}}
        ]
    if draw(st.integers(0, 5)) == 0:
        container["ports"] = [{"containerPort": 8080, "hostPort": 8080}]
    if draw(st.integers(0, 5)) == 0:
        spec["priority"] = draw(st.sampled_from([-10, 0, 1000]))
    constraint = draw(st.integers(0, 7))
    topology = draw(st.sampled_from(["kubernetes.io/hostname", "topology.kubernetes.io/zone", "pool"]))
    # Affinity to its own pods, or to another workload's (which may be scheduled after it).
    selector = draw(st.sampled_from([labels, {"app": "w0"}, {"app": "w1"}]))
    term = {"labelSelector": {"matchLabels": selector}, "topologyKey": topology}
    if constraint == 0:
        spec["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}
    elif constraint == 1:
        spec["affinity"] = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}
    elif constraint == 2:
        spec["topologySpreadConstraints"] = [
            {
                "maxSkew": draw(st.integers(1, 2)),
                "topologyKey": topology,
                "whenUnsatisfiable": draw(st.sampled_from(["DoNotSchedule", "ScheduleAnyway"])),
                "labelSelector": {"matchLabels": labels},
            }
        ]
    elif constraint == 3:
        spec["affinity"] = {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [{"matchExpressions": [_expression(draw)]}]
                }
            }
        }
    if job:
        spec["restartPolicy"] = "Never"
    if draw(st.integers(0, 3)) == 0:
        spec["nodeSelector"] = {"pool": draw(st.sampled_from(["a", "b"]))}
    if draw(st.integers(0, 2)) == 0:
        spec["tolerations"] = [
            {"key": "dedicated", "operator": "Equal", "value": "batch", "effect": "NoSchedule"}
        ]
    meta: dict[str, Any] = {"labels": labels}
    annotations = {}
    if draw(st.booleans()):
        annotations["kubetide.io/startup-delay"] = f"{draw(st.integers(0, 120))}s"
    if job:
        annotations["kubetide.io/duration"] = f"{draw(st.integers(0, 3600))}s"
    if annotations:
        meta["annotations"] = annotations
    return {"metadata": meta, "spec": spec}


def _replicated(draw: Draw, kind: str, name: str, replicas: int | None = None) -> dict[str, Any]:
    labels = {"app": name}
    spec: dict[str, Any] = {
        "replicas": draw(st.integers(0, 12)) if replicas is None else replicas,
        "selector": {"matchLabels": labels},
        "template": _template(draw, labels),
    }
    if kind == "StatefulSet" and draw(st.booleans()):
        spec["podManagementPolicy"] = "Parallel"
    return {"apiVersion": "apps/v1", "kind": kind, "metadata": {"name": name}, "spec": spec}


def _hpa(draw: Draw, kind: str, name: str, feeds: list[dict[str, Any]]) -> dict[str, Any]:
    min_replicas = draw(st.integers(1, 3))
    metrics: list[dict[str, Any]] = []
    for _ in range(draw(st.integers(1, 3))):
        choice = draw(st.sampled_from(["cpu", "cpu-value", "memory", "feed"]))
        if choice == "cpu":
            target = {"type": "Utilization", "averageUtilization": draw(st.integers(10, 150))}
            metrics.append({"type": "Resource", "resource": {"name": "cpu", "target": target}})
        elif choice == "cpu-value":
            target = {"type": "AverageValue", "averageValue": draw(st.sampled_from(["50m", "200m", "1"]))}
            metrics.append({"type": "Resource", "resource": {"name": "cpu", "target": target}})
        elif choice == "memory":
            target = {"type": "Utilization", "averageUtilization": draw(st.integers(10, 150))}
            metrics.append({"type": "Resource", "resource": {"name": "memory", "target": target}})
        elif feeds:
            feed = draw(st.sampled_from(feeds))
            value = str(draw(st.integers(1, 500)))
            if feed["kind"] == "Pods":
                metrics.append(
                    {
                        "type": "Pods",
                        "pods": {
                            "metric": {"name": feed["name"]},
                            "target": {"type": "AverageValue", "averageValue": value},
                        },
                    }
                )
            elif feed["kind"] == "Object":
                target = draw(
                    st.sampled_from(
                        [{"type": "Value", "value": value}, {"type": "AverageValue", "averageValue": value}]
                    )
                )
                metrics.append(
                    {
                        "type": "Object",
                        "object": {
                            "describedObject": {"apiVersion": "apps/v1", "kind": kind, "name": name},
                            "metric": {"name": feed["name"]},
                            "target": target,
                        },
                    }
                )
            else:
                target = draw(
                    st.sampled_from(
                        [{"type": "Value", "value": value}, {"type": "AverageValue", "averageValue": value}]
                    )
                )
                metric: dict[str, Any] = {"name": feed["name"]}
                if feed.get("selector") and draw(st.booleans()):
                    metric["selector"] = {"matchLabels": feed["selector"]}
                metrics.append({"type": "External", "external": {"metric": metric, "target": target}})
    spec: dict[str, Any] = {
        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": kind, "name": name},
        "minReplicas": min_replicas,
        "maxReplicas": draw(st.integers(min_replicas, 8)),
        "metrics": metrics,
    }
    if draw(st.integers(0, 2)) == 0:
        spec["behavior"] = {
            "scaleDown": {"stabilizationWindowSeconds": draw(st.integers(0, 600))},
            "scaleUp": {
                "policies": [{"type": "Pods", "value": draw(st.integers(1, 4)), "periodSeconds": 60}]
            },
        }
    return {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": f"{name}-hpa"},
        "spec": spec,
    }


def _feeds(draw: Draw, duration: int, index: int) -> list[dict[str, Any]]:
    feeds = []
    for j in range(draw(st.integers(0, 2))):
        kind = draw(st.sampled_from(["Pods", "Object", "External"]))
        # Now and then one name for several workloads' metrics: each must still get its own.
        name = draw(st.sampled_from([f"m{index}-{j}", f"m{index}-{j}", "shared"]))
        feed: dict[str, Any] = {"name": name, "kind": kind}
        if kind == "External" and draw(st.booleans()):
            feed["selector"] = {"queue": f"q{index}"}
        if draw(st.booleans()):
            feed["series"] = _series(draw, duration, 500)
        feeds.append(feed)
    return feeds


def _traffic(draw: Draw, target: str, duration: int, index: int) -> dict[str, Any]:
    traffic: dict[str, Any] = {"target": target, "rps": _series(draw, duration, 1000)}
    if draw(st.booleans()):
        traffic["cpuPerRequest"] = draw(st.sampled_from(["1m", "2m", "5m"]))
    if draw(st.booleans()):
        traffic["baseCpu"] = draw(st.sampled_from(["10m", "50m"]))
    if draw(st.booleans()):
        traffic["memoryPerPod"] = draw(st.sampled_from(["100Mi", "500Mi"]))
    if draw(st.booleans()):
        traffic["capacityPerPod"] = draw(st.floats(1, 500))
    traffic["metrics"] = _feeds(draw, duration, index)
    return traffic


def _daemon_set(draw: Draw, name: str) -> dict[str, Any]:
    labels = {"ds": name}
    template = _template(draw, labels)
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": name},
        "spec": {"selector": {"matchLabels": labels}, "template": template},
    }


def _job(draw: Draw, name: str) -> dict[str, Any]:
    spec: dict[str, Any] = {"template": _template(draw, {"job": name}, job=True)}
    if draw(st.booleans()):
        spec["parallelism"] = draw(st.integers(0, 4))
    if draw(st.booleans()):
        spec["completions"] = draw(st.integers(0, 6))
    job: dict[str, Any] = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name}, "spec": spec}
    if draw(st.booleans()):
        job["metadata"]["annotations"] = {"kubetide.io/duration": f"{draw(st.integers(1, 3600))}s"}
    return job


def _pod(draw: Draw, name: str, groups: list[dict[str, Any]]) -> dict[str, Any]:
    template = _template(draw, {"bare": name})
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, **template["metadata"]},
        "spec": template["spec"],
    }
    if draw(st.integers(0, 3)) == 0:
        group = draw(st.sampled_from(groups))
        pod["spec"]["nodeName"] = f"{group['name']}-{draw(st.integers(1, 3))}"
    return pod


def _pdb(draw: Draw, name: str, labels: dict[str, str]) -> dict[str, Any]:
    spec: dict[str, Any] = {"selector": {"matchLabels": labels}}
    choice = draw(st.sampled_from(["minAvailable", "maxUnavailable", "none"]))
    if choice != "none":
        spec[choice] = draw(st.sampled_from([0, 1, 2, "50%", "100%"]))
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": name},
        "spec": spec,
    }


@st.composite
def scenarios(draw: Draw, max_duration: int = 6 * 3600) -> dict[str, Any]:
    """A valid scenario document (``parse_scenario`` with ``base_dir=DATA_DIR`` accepts it)."""
    duration = draw(st.integers(600, max_duration))
    resolution = draw(st.integers(15, 60))
    groups = [_node_group(draw, i, duration) for i in range(draw(st.integers(1, 3)))]
    objects: list[dict[str, Any]] = []
    traffic: list[dict[str, Any]] = []
    scalable: list[str] = []  # keys of scalable workloads at t=0
    pod_owners: list[str] = []  # Kind/default/name of anything traffic may target
    for i in range(draw(st.integers(0, 3))):
        kind = draw(st.sampled_from(SCALABLE))
        name = f"w{i}"
        namespace = draw(st.sampled_from(["default", "default", "team"]))
        workload_objects = [_replicated(draw, kind, name)]
        key = f"{kind}/{namespace}/{name}"
        scalable.append(key)
        pod_owners.append(key)
        feeds: list[dict[str, Any]] = []
        if draw(st.booleans()):
            t = _traffic(draw, key, duration, i)
            feeds = t["metrics"]
            traffic.append(t)
        if draw(st.booleans()):
            workload_objects.append(_hpa(draw, kind, name, feeds))
        if draw(st.integers(0, 2)) == 0:
            workload_objects.append(_pdb(draw, f"{name}-pdb", {"app": name}))
        for manifest in workload_objects:
            if namespace != "default":
                manifest["metadata"]["namespace"] = namespace
        objects += workload_objects
    for i in range(draw(st.integers(0, 2))):
        objects.append(_daemon_set(draw, f"ds{i}"))
        pod_owners.append(f"DaemonSet/default/ds{i}")
    for i in range(draw(st.integers(0, 2))):
        objects.append(_job(draw, f"job{i}"))
        pod_owners.append(f"Job/default/job{i}")
    for i in range(draw(st.integers(0, 2))):
        # Now and then the name a StatefulSet's pod would have.
        name = draw(st.sampled_from([f"pod{i}", f"pod{i}", "w0-0", "w1-1"]))
        if all(o["metadata"]["name"] != name for o in objects if o["kind"] == "Pod"):
            objects.append(_pod(draw, name, groups))
    if draw(st.integers(0, 3)) == 0:
        objects.append(
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": "cluster-autoscaler-priority-expander", "namespace": "kube-system"},
                "data": {"priorities": "10:\n  - g0\n"},
            }
        )
    # Traffic on a non-replicated pod owner (DaemonSet / Job) now and then.
    others = [k for k in pod_owners if k not in scalable and k not in {t["target"] for t in traffic}]
    if others and draw(st.integers(0, 3)) == 0:
        traffic.append(_traffic(draw, draw(st.sampled_from(others)), duration, 9))

    actions = _actions(draw, duration, groups, scalable, objects)
    hpa_enabled = draw(st.sampled_from([None, None, True, False]))
    has_hpa = any(o["kind"] == "HorizontalPodAutoscaler" for o in objects)
    hpa_settings: dict[str, Any] = {}
    if hpa_enabled is not None:
        hpa_settings["enabled"] = hpa_enabled
    if draw(st.booleans()):
        hpa_settings["syncPeriod"] = draw(st.integers(5, 60))
        hpa_settings["tolerance"] = draw(st.sampled_from([0.0, 0.05, 0.1, 0.3]))
        hpa_settings["downscaleStabilization"] = draw(st.integers(0, 600))
    runs_hpa = has_hpa if hpa_enabled is None else hpa_enabled
    if runs_hpa and draw(st.booleans()):
        actions.append({"at": _seconds(draw, duration), "restart": "hpa"})

    spec: dict[str, Any] = {
        "duration": duration,
        "seed": draw(st.integers(0, 2**16)),
        "nodeGroups": groups,
        "objects": objects,
        "traffic": traffic,
        "actions": actions,
        "metrics": {"resolution": resolution, "window": draw(st.integers(15, 120))},
        "autoscalers": {
            "hpa": hpa_settings,
            "clusterAutoscaler": {"enabled": False},
            "escalator": {"enabled": False},
        },
    }
    return {
        "apiVersion": "kubetide.io/v1alpha1",
        "kind": "Scenario",
        "metadata": {"name": "fuzz"},
        "spec": spec,
    }


def _actions(
    draw: Draw,
    duration: int,
    groups: list[dict[str, Any]],
    scalable: list[str],
    objects: list[dict[str, Any]],
) -> list[dict[str, Any]]:
    actions: list[dict[str, Any]] = []
    known = list(scalable)
    # (key, time it exists from): a delete may only name an object that exists by then.
    existing = [
        (f"{o['kind']}/{(o.get('metadata') or {}).get('namespace') or 'default'}/{o['metadata']['name']}", 0)
        for o in objects
    ]
    for j in range(draw(st.integers(0, 5))):
        at = _seconds(draw, duration)
        kind = draw(
            st.sampled_from(["apply-new", "apply-replace", "delete", "scale", "deleteNode", "attachInstance"])
        )
        if kind == "apply-new":
            what = draw(st.sampled_from(["replicated", "daemonset", "job", "pod", "hpa"]))
            name = f"a{j}"
            if what == "replicated":
                wkind = draw(st.sampled_from(SCALABLE))
                manifest = _replicated(draw, wkind, name)
                # Applied objects exist from their time on: only later actions may refer to them.
                known.append(f"{wkind}/default/{name}")
            elif what == "daemonset":
                manifest = _daemon_set(draw, name)
            elif what == "job":
                manifest = _job(draw, name)
            elif what == "pod":
                manifest = _pod(draw, name, groups)
            else:
                if not known:
                    continue
                wkind, wnamespace, wname = draw(st.sampled_from(known)).split("/")
                manifest = _hpa(draw, wkind, wname, [])
                if wnamespace != "default":
                    manifest["metadata"]["namespace"] = wnamespace
            actions.append({"at": at, "apply": manifest})
            namespace = manifest["metadata"].get("namespace", "default")
            existing.append((f"{manifest['kind']}/{namespace}/{manifest['metadata']['name']}", at))
        elif kind == "apply-replace" and objects:
            original = draw(st.sampled_from(objects))
            manifest = _replacement(draw, original, groups)
            if "namespace" in original["metadata"]:
                manifest["metadata"]["namespace"] = original["metadata"]["namespace"]
            actions.append({"at": at, "apply": manifest})
        elif kind == "delete":
            candidates = [key for key, since in existing if since <= at]
            if candidates:
                actions.append({"at": at, "delete": draw(st.sampled_from(candidates))})
        elif kind == "scale" and scalable:
            actions.append(
                {
                    "at": at,
                    "scale": {"target": draw(st.sampled_from(scalable)), "replicas": draw(st.integers(0, 6))},
                }
            )
        elif kind == "deleteNode":
            group = draw(st.sampled_from(groups))
            actions.append(
                {"at": at, "deleteNode": {"group": group["name"], "count": draw(st.integers(1, 3))}}
            )
        elif kind == "attachInstance":
            group = draw(st.sampled_from(groups))
            actions.append(
                {"at": at, "attachInstance": {"group": group["name"], "count": draw(st.integers(1, 3))}}
            )
    return _valid_references(actions, {key for key, _ in existing if _ == 0})


def _replacement(draw: Draw, original: dict[str, Any], groups: list[dict[str, Any]]) -> dict[str, Any]:
    """A new version of ``original`` (same kind and name)."""
    kind, name = original["kind"], original["metadata"]["name"]
    if kind in SCALABLE:
        return _replicated(draw, kind, name)
    if kind == "DaemonSet":
        return _daemon_set(draw, name)
    if kind == "Job":
        return _job(draw, name)
    if kind == "Pod":
        return _pod(draw, name, groups)
    return dict(original)


def _valid_references(actions: list[dict[str, Any]], at_start: set[str]) -> list[dict[str, Any]]:
    """Drop deletes and scales of objects that do not exist when they run (actions run by time, then
    as listed; a deleted object is gone until applied again)."""
    existing = set(at_start)
    dropped = set()
    for i in sorted(range(len(actions)), key=lambda i: (actions[i]["at"], i)):
        action = actions[i]
        if "apply" in action:
            meta = action["apply"]["metadata"]
            existing.add(f"{action['apply']['kind']}/{meta.get('namespace') or 'default'}/{meta['name']}")
        elif "delete" in action:
            if action["delete"] in existing:
                existing.discard(action["delete"])
            else:
                dropped.add(i)
        elif "scale" in action and action["scale"]["target"] not in existing:
            dropped.add(i)
    return [a for i, a in enumerate(actions) if i not in dropped]


CLOUD_OPS = ("increase", "delete", "force-delete", "decrease")


@st.composite
def cloud_calls(draw: Draw, duration: int, groups: int) -> list[tuple[int, int, str, int]]:
    """Calls on the simulated cloud's node groups, as an autoscaler would make them:
    ``(time, group index, operation, amount)``; bad calls are part of the test (they must fail cleanly)."""
    return draw(
        st.lists(
            st.tuples(
                st.integers(0, duration),
                st.integers(0, groups - 1),
                st.sampled_from(("increase", "increase", *CLOUD_OPS)),
                st.integers(-1, 4),
            ),
            max_size=12,
        )
    )
