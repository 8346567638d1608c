"""Generate ``src/kubetide/data/k8s-fields.json``: the field names of the Kubernetes kinds a scenario
takes, from lightkube-models (the Kubernetes OpenAPI schema as typed models), so unknown fields in
manifests are errors as with ``kubectl apply --validate=strict``.

The decision cores and the simulator may not import a client library (import-linter), so the schema is
shipped as data; ``tests/model/test_strict_fields.py`` checks it against the installed models.
Run: ``.venv/bin/python hack/gen_k8s_fields.py``.
"""

from __future__ import annotations

import json
import sys
from importlib.metadata import version
from pathlib import Path
from typing import Any

import msgspec
from lightkube.resources import apps_v1, autoscaling_v1, autoscaling_v2, batch_v1, core_v1, policy_v1

OUT = Path(__file__).resolve().parents[1] / "src" / "kubetide" / "data" / "k8s-fields.json"

# apiVersion/kind -> model. autoscaling/v2beta2 has v2's fields (v2 was promoted from it unchanged);
# v2beta1 is not in the models and is not checked for unknown fields.
KINDS: dict[str, Any] = {
    "apps/v1/Deployment": apps_v1.Deployment,
    "apps/v1/ReplicaSet": apps_v1.ReplicaSet,
    "apps/v1/StatefulSet": apps_v1.StatefulSet,
    "apps/v1/DaemonSet": apps_v1.DaemonSet,
    "batch/v1/Job": batch_v1.Job,
    "v1/Pod": core_v1.Pod,
    "v1/ConfigMap": core_v1.ConfigMap,
    "v1/Node": core_v1.Node,
    "policy/v1/PodDisruptionBudget": policy_v1.PodDisruptionBudget,
    "autoscaling/v1/HorizontalPodAutoscaler": autoscaling_v1.HorizontalPodAutoscaler,
    "autoscaling/v2/HorizontalPodAutoscaler": autoscaling_v2.HorizontalPodAutoscaler,
    "autoscaling/v2beta2/HorizontalPodAutoscaler": autoscaling_v2.HorizontalPodAutoscaler,
}


def _child(prop: dict[str, Any]) -> str | None:
    """The definition a property's value (or its list items) must follow; None for scalars and maps."""
    options = prop.get("anyOf", [prop])
    for option in options:
        ref = option.get("$ref") or (option.get("items") or {}).get("$ref")
        if ref:
            return str(ref).rsplit("/", 1)[-1]
    return None


def _all_kinds() -> list[str]:
    """Every kind of the Kubernetes API (built-in resources), to tell "not modelled" from "not Kubernetes"."""
    import importlib
    import inspect
    import pkgutil

    import lightkube.resources

    kinds = set()
    for module_info in pkgutil.iter_modules(lightkube.resources.__path__):
        module = importlib.import_module(f"lightkube.resources.{module_info.name}")
        for obj in vars(module).values():
            info = getattr(obj, "_api_info", None)
            if info is not None and inspect.isclass(obj):
                kinds.add(info.resource.kind)
    return sorted(kinds)


def generate() -> dict[str, Any]:
    models = list(dict.fromkeys(KINDS.values()))
    roots, components = msgspec.json.schema_components(models, ref_template="#/$defs/{name}")
    names = {id(m): r["$ref"].rsplit("/", 1)[-1] for m, r in zip(models, roots, strict=True)}
    types = {
        name: {field: _child(prop) for field, prop in sorted((schema.get("properties") or {}).items())}
        for name, schema in sorted(components.items())
    }
    return {
        "source": f"lightkube-models {version('lightkube-models')}",
        "kinds": {key: names[id(model)] for key, model in KINDS.items()},
        "all_kinds": _all_kinds(),
        "types": types,
    }


if __name__ == "__main__":
    OUT.write_text(json.dumps(generate(), indent=0, sort_keys=True) + "\n")
    print(f"wrote {OUT}", file=sys.stderr)
