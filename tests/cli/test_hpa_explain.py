"""``kubetide hpa explain``: the example explains itself, bad snapshots exit 2 naming the field."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubetide.cli import main

EXAMPLE = Path(__file__).parents[2] / "examples" / "hpa-explain.yaml"


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_example_explains_the_decision() -> None:
    code, out, _ = run("hpa", "explain", str(EXAMPLE))
    assert code == 0
    assert "Decision: scale 4 -> 5" in out
    assert "1 unready" in out  # the pod still in its cpu initialization window


def test_json_output_is_machine_readable() -> None:
    code, out, _ = run("hpa", "explain", str(EXAMPLE), "--json")
    assert code == 0
    report = json.loads(out)
    assert report["desired_replicas"] == 5 and report["scaled"] is True
    assert [m["proposal"] for m in report["metrics"]] == [5, 4]
    assert report["normalization"]["limit"] == "DesiredWithinRange"


def test_bad_field_exits_2_with_its_path(tmp_path: Path) -> None:
    data = yaml.safe_load(EXAMPLE.read_text())
    data["hpa"]["spec"]["metrics"][0]["resource"]["target"]["averageUtilization"] = "sixty"
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump(data))
    code, _, err = run("hpa", "explain", str(bad))
    assert code == 2
    assert "hpa.spec.metrics[0].resource.target.averageUtilization: must be an integer" in err


def test_invalid_yaml_and_missing_file_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("hpa: [unclosed")
    code, _, err = run("hpa", "explain", str(bad))
    assert code == 2 and "invalid YAML" in err
    code, _, err = run("hpa", "explain", str(tmp_path / "missing.yaml"))
    assert code == 2 and "cannot read" in err


scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-5, 5), st.text(max_size=4), st.floats(allow_nan=False)
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8,
)


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture], deadline=None)
@given(
    path=st.lists(
        st.sampled_from(["hpa", "spec", "scale", "pods", "metrics", 0, "status", "config"]),
        min_size=1,
        max_size=4,
    ),
    value=values,
)
def test_mutated_snapshots_never_crash(tmp_path: Path, path: list[object], value: object) -> None:
    data = yaml.safe_load(EXAMPLE.read_text())
    node = data
    for key in path[:-1]:
        node = (
            node.get(key)
            if isinstance(node, dict)
            else (node[key] if isinstance(node, list) and isinstance(key, int) and key < len(node) else None)
        )
        if node is None:
            return
    last = path[-1]
    if isinstance(node, dict) or (isinstance(node, list) and isinstance(last, int) and last < len(node)):
        node[last] = value
    else:
        return
    f = tmp_path / "m.yaml"
    f.write_text(yaml.safe_dump(data))
    result = CliRunner().invoke(main, ["hpa", "explain", str(f)])
    assert result.exit_code in (0, 2), result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)


KUBECTL = Path(__file__).parents[2] / "examples" / "hpa-explain-kubectl"
OBJECTS, POD_METRICS = str(KUBECTL / "objects.yaml"), str(KUBECTL / "pod-metrics.yaml")


def test_kubectl_output_explains_the_same_decision_as_the_snapshot() -> None:
    """The -f example is the snapshot example's cpu metric as kubectl prints it: the same reasoning."""
    code, out, err = run("hpa", "explain", "-f", OBJECTS, "-f", POD_METRICS, "--json")
    assert code == 0, err
    report = json.loads(out)
    assert report["hpa"] == "shop/web" and report["current_replicas"] == 4
    (metric,) = report["metrics"]
    assert metric["proposal"] == 5
    assert metric["pods"] == {"ready": 3, "unready": 1, "missing": 0, "ignored": 0}  # web-d: cpu init
    assert report["desired_replicas"] == 5 and report["scaled"] is True
    assert report["now"]["from"].startswith("the newest metric sample")


def test_controller_memory_from_state_shapes_the_decision(tmp_path: Path) -> None:
    state = tmp_path / "state.yaml"
    state.write_text(
        yaml.safe_dump({"recommendations": [{"replicas": 8, "timestamp": "2026-11-23T09:58:00Z"}]})
    )
    code, out, err = run("hpa", "explain", "-f", OBJECTS, "-f", POD_METRICS, "--state", str(state), "--json")
    assert code == 0, err
    report = json.loads(out)
    assert report["recommendations_before"] == [{"replicas": 8, "seconds_ago": 115.0}]
    assert report["normalization"]["stabilized"] == 8  # the higher recent recommendation holds
    assert report["desired_replicas"] == 8


def test_flags_use_kube_controller_manager_names(tmp_path: Path) -> None:
    code, out, _ = run(
        "hpa", "explain", "-f", OBJECTS, "-f", POD_METRICS, "--json",
        "--horizontal-pod-autoscaler-cpu-initialization-period=10s",
    )  # fmt: skip
    assert code == 0
    (metric,) = json.loads(out)["metrics"]
    assert metric["pods"]["unready"] == 0  # web-d is past a 10 s initialization period


def test_several_hpas_need_hpa_and_every_problem_is_listed(tmp_path: Path) -> None:
    docs = list(yaml.safe_load_all((KUBECTL / "objects.yaml").read_text()))
    items = docs[0]["items"]
    other = {**items[0], "metadata": {"name": "api", "namespace": "shop"}}
    broken_pod = {
        **items[2],
        "spec": {"containers": [{"name": "app", "resources": {"requests": {"cpu": "lots"}}}]},
    }
    both = tmp_path / "both.yaml"
    both.write_text(yaml.safe_dump_all([items[0], other, items[1], broken_pod]))
    code, _, err = run("hpa", "explain", "-f", str(both), "-f", POD_METRICS, "--now", "yesterday")
    assert code == 2
    assert "2 HPAs given (shop/web, shop/api): name the one to explain" in err
    assert "requests.cpu" in err and "lots" in err
    assert "--now: must be an RFC 3339 time" in err
    code, _, _ = run("hpa", "explain", "-f", str(both), "-f", POD_METRICS, "--hpa", "shop/api")
    assert code == 2  # the broken pod still fails, whichever HPA is named


def test_custom_and_external_metrics_from_their_value_lists(tmp_path: Path) -> None:
    docs = list(yaml.safe_load_all((KUBECTL / "objects.yaml").read_text()))
    items = docs[0]["items"]
    hpa = dict(items[0])
    hpa["spec"] = {
        **hpa["spec"],
        "metrics": [
            {"type": "Pods", "pods": {"metric": {"name": "rps"}, "target": {"type": "AverageValue", "averageValue": "100"}}},
            {"type": "External", "external": {"metric": {"name": "queue", "selector": {"matchLabels": {"q": "orders"}}},
                                              "target": {"type": "AverageValue", "averageValue": "30"}}},
        ],
    }  # fmt: skip
    objects = tmp_path / "objects.yaml"
    objects.write_text(yaml.safe_dump_all([hpa, *items[1:]]))
    custom = {
        "kind": "MetricValueList",
        "apiVersion": "custom.metrics.k8s.io/v1beta1",
        "items": [
            {"describedObject": {"kind": "Pod", "namespace": "shop", "name": name, "apiVersion": "/v1"},
             "metricName": "rps", "timestamp": "2026-11-23T09:59:50Z", "value": value}
            for name, value in (("web-a", "150"), ("web-b", "140"), ("web-c", "145"), ("web-d", "40"))
        ],
    }  # fmt: skip
    external = {
        "kind": "ExternalMetricValueList",
        "apiVersion": "external.metrics.k8s.io/v1beta1",
        "items": [
            {"metricName": "queue", "metricLabels": {"q": "orders"}, "timestamp": "2026-11-23T09:59:58Z", "value": "210"},
            {"metricName": "queue", "metricLabels": {"q": "other"}, "timestamp": "2026-11-23T09:59:58Z", "value": "9000"},
        ],
    }  # fmt: skip
    metrics = tmp_path / "metrics.json"
    metrics.write_text(json.dumps(custom) + "\n---\n" + json.dumps(external))
    code, out, err = run("hpa", "explain", "-f", str(objects), "-f", str(metrics), "--json")
    assert code == 0, err
    report = json.loads(out)
    proposals = {m["type"]: m.get("proposal") for m in report["metrics"]}
    # rps: 475 / 4 pods = 118.75 per pod against 100 -> ceil(1.1875 x 4) = 5; queue: 210 / 30 -> 7.
    assert proposals == {"Pods": 5, "External": 7}
    assert report["now"]["time"] == 1795427998.0  # the newest sample, the external one
    assert report["desired_replicas"] == 7


def test_snapshot_typos_are_errors_naming_the_closest_field(tmp_path: Path) -> None:
    data = yaml.safe_load(EXAMPLE.read_text())
    data["config"]["tolerence"] = 0.5
    data["pods"][0]["redy"] = True
    bad = tmp_path / "typo.yaml"
    bad.write_text(yaml.safe_dump(data))
    code, _, err = run("hpa", "explain", str(bad))
    assert code == 2
    assert "config.tolerence: unknown field (did you mean 'tolerance'?)" in err
    assert "pods[0].redy: unknown field (did you mean 'ready'?)" in err


def test_exactly_one_input_and_cluster_needs_hpa() -> None:
    code, _, err = run("hpa", "explain")
    assert code == 2 and "exactly one of SNAPSHOT, -f FILE, or --cluster" in err
    code, _, err = run("hpa", "explain", str(EXAMPLE), "-f", OBJECTS)
    assert code == 2
    code, _, err = run("hpa", "explain", "--cluster")
    assert code == 2 and "--hpa: required with --cluster" in err


def test_every_part_of_a_snapshot_reports_its_problems_at_once(tmp_path: Path) -> None:
    data = yaml.safe_load(EXAMPLE.read_text())
    data["hpa"]["spec"]["maxReplicas"] = "many"
    data["scale"]["spec_replicas"] = -1
    data["pods"][1]["containers"][0]["requests_milli"]["cpu"] = "lots"
    data["config"]["tolerance"] = "low"
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump(data))
    code, _, err = run("hpa", "explain", str(bad))
    assert code == 2
    for path in (
        "hpa.spec.maxReplicas",
        "scale.spec_replicas",
        "pods[1].containers[0].requests_milli.cpu",
        "config.tolerance",
    ):
        assert path in err, (path, err)


def memory_configmap(uid: str = "") -> dict[str, object]:
    """`kubectl get configmap -n kubetide kubetide-hpa-memory -o yaml`, as kubetide run hpa writes it."""
    memory = {"recommendations": [{"replicas": 8, "timestamp": "2026-11-23T09:58:00.000000Z"}]}
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": "kubetide-hpa-memory",
            "namespace": "kubetide",
            "annotations": {"kubetide.io/memory-written-at": "2026-11-23T09:59:50.000000Z"},
        },
        "data": {"shop.web": json.dumps({"uid": uid, **memory} if uid else memory)},
    }


def test_the_controllers_memory_configmap_among_the_files_shapes_the_decision(tmp_path: Path) -> None:
    cm = tmp_path / "memory.yaml"
    cm.write_text(yaml.safe_dump(memory_configmap()))
    code, out, err = run("hpa", "explain", "-f", OBJECTS, "-f", POD_METRICS, "-f", str(cm), "--json")
    assert code == 0, err
    report = json.loads(out)
    assert report["recommendations_before"] == [{"replicas": 8, "seconds_ago": 115.0}]
    assert report["desired_replicas"] == 8
    assert report["memory"]["found"] is True
    assert (
        report["memory"]["from"]
        == f"{cm}[0] (ConfigMap kubetide-hpa-memory), written 2026-11-23T09:59:50.000000Z"
    )
    code, out, _ = run("hpa", "explain", "-f", OBJECTS, "-f", POD_METRICS, "-f", str(cm))
    assert f"  controller memory: {cm}[0] (ConfigMap kubetide-hpa-memory), written" in out
    assert "  remembered recommendations: 8@115s ago" in out
    # Without it, the explanation says it is a controller that just started.
    code, out, _ = run("hpa", "explain", "-f", OBJECTS, "-f", POD_METRICS, "--json")
    assert json.loads(out)["memory"] == {
        "from": "none (neither --state nor the ConfigMap kubetide-hpa-memory among the files): "
        "explained as a controller that just started",
        "found": False,
        "written_at": None,
    }


def test_a_memory_of_another_hpa_of_that_name_is_refused(tmp_path: Path) -> None:
    objects = list(yaml.safe_load_all(Path(OBJECTS).read_text()))
    for obj in objects[0]["items"] if objects[0].get("kind") == "List" else objects:
        if obj.get("kind") == "HorizontalPodAutoscaler":
            obj["metadata"]["uid"] = "uid-now"
    mine = tmp_path / "objects.yaml"
    mine.write_text(yaml.safe_dump_all(objects))
    cm = tmp_path / "memory.yaml"
    cm.write_text(yaml.safe_dump(memory_configmap(uid="uid-before")))
    code, out, err = run("hpa", "explain", "-f", str(mine), "-f", POD_METRICS, "-f", str(cm), "--json")
    assert code == 0, err
    assert json.loads(out)["memory"]["from"].startswith(
        f"none ({cm}[0] (ConfigMap kubetide-hpa-memory) remembers another HPA of that name (uid uid-before; "
        "this one is uid-now)"
    )
    state = tmp_path / "state.json"
    state.write_text(json.dumps({"uid": "uid-before", "recommendations": []}))
    code, _, err = run("hpa", "explain", "-f", str(mine), "-f", POD_METRICS, "--state", str(state))
    assert code == 2
    assert f"{state}.uid: the memory is of the HPA with uid uid-before, not of shop/web (uid uid-now)" in err


def test_controller_address_is_for_the_cluster_only() -> None:
    code, _, err = run("hpa", "explain", "-f", OBJECTS, "--controller-address", "http://127.0.0.1:8086")
    assert code == 2 and "--controller-address: only with --cluster" in err
