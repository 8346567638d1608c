"""Unknown fields in Kubernetes manifests, reported as ``kubectl apply --validate=strict`` reports them.

A typo such as ``replica: 3`` in a Deployment is silently dropped by a lenient decoder, and the
simulation then runs something else than the user wrote. The field names come from the Kubernetes
OpenAPI schema as lightkube-models ships it, generated into ``kubetide/data/k8s-fields.json`` by
``hack/gen_k8s_fields.py`` (the cores may not import a client library). Maps whose keys are the user's
(labels, annotations, resource lists, ConfigMap data) are not checked; neither are kinds or versions
the file does not have (``autoscaling/v2beta1``).
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Mapping
from functools import cache
from importlib.resources import files
from typing import Any

from kubetide.model.errors import FieldError

__all__ = ["has_schema", "is_kubernetes_kind", "unknown_fields"]


@cache
def _data() -> Mapping[str, Any]:
    data: Mapping[str, Any] = json.loads(files("kubetide").joinpath("data/k8s-fields.json").read_text())
    return data


def _schema() -> tuple[Mapping[str, str], Mapping[str, Mapping[str, str | None]]]:
    return _data()["kinds"], _data()["types"]


def is_kubernetes_kind(kind: str) -> bool:
    """A kind of the built-in Kubernetes API (Service, Ingress, ...), modelled here or not."""
    return kind in _all_kinds()


@cache
def _all_kinds() -> frozenset[str]:
    return frozenset(_data()["all_kinds"])


def has_schema(api_version: str, kind: str) -> bool:
    return f"{api_version}/{kind}" in _schema()[0]


def unknown_fields(manifest: Any, path: str = "") -> list[FieldError]:
    """Every field of ``manifest`` its kind does not have, with the closest known name suggested."""
    if not isinstance(manifest, Mapping):
        return []
    kinds, types = _schema()
    root = kinds.get(f"{manifest.get('apiVersion')}/{manifest.get('kind')}")
    problems: list[FieldError] = []
    if root is not None:
        _walk(manifest, root, path, types, problems)
    return problems


def _walk(
    value: Any,
    type_name: str,
    path: str,
    types: Mapping[str, Mapping[str, str | None]],
    problems: list[FieldError],
) -> None:
    if isinstance(value, list):
        for i, item in enumerate(value):
            _walk(item, type_name, f"{path}[{i}]", types, problems)
        return
    fields = types.get(type_name)
    if fields is None or not isinstance(value, Mapping):
        return  # a wrong type is the typed parser's to report
    for key, child in value.items():
        where = f"{path}.{key}" if path else str(key)
        if key not in fields:
            close = difflib.get_close_matches(str(key), list(fields), n=1, cutoff=0.75)
            hint = f' (did you mean "{close[0]}"?)' if close else ""
            problems.append(FieldError(where, f'unknown field "{key}"{hint}'))
            continue
        nested = fields[key]
        if nested is not None and child is not None:
            _walk(child, nested, where, types, problems)
