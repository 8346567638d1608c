"""Pods and pod templates as the API server validates them (``ValidatePodSpec``,
``ValidatePodTemplateSpec`` in ``pkg/apis/core/validation``), for the fields kubetide reads: containers
and init containers (names, resources, ports, ``restartPolicy``), the pod's ``restartPolicy``, node
selector and affinity, tolerations, topology spread, node name, priority, overhead, pod-level
resources and volume names. Fields kubetide never reads (images, probes, env) are not checked.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from kubetide.model.validation.checker import INT64, Checker
from kubetide.model.validation.meta import (
    validate_annotations,
    validate_label_key,
    validate_labels,
    validate_object_meta,
    validate_requirement,
    validate_selector,
)
from kubetide.model.validation.names import dns1123_label, dns1123_subdomain, label_value, qualified_name
from kubetide.model.validation.resources import validate_overhead, validate_requirements

__all__ = ["RESTART_POLICIES", "validate_pod", "validate_pod_spec", "validate_pod_template"]

RESTART_POLICIES = ("Always", "OnFailure", "Never")
_PROTOCOLS = ("TCP", "UDP", "SCTP")
_TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
_WHEN_UNSATISFIABLE = ("DoNotSchedule", "ScheduleAnyway")
_POLICIES = ("Honor", "Ignore")
_PORT = (1, 65535)


def validate_pod(ck: Checker, manifest: Mapping[str, Any], path: str) -> None:
    """``ValidatePodCreate``: metadata (the name a DNS-1123 subdomain) and the spec."""
    validate_object_meta(ck, manifest.get("metadata"), f"{path}.metadata" if path else "metadata")
    validate_pod_spec(ck, manifest.get("spec"), f"{path}.spec" if path else "spec")


def validate_pod_template(ck: Checker, value: Any, path: str) -> tuple[dict[str, str], Mapping[str, Any]]:
    """``ValidatePodTemplateSpec``: the template's labels and annotations, then its pod spec. Returns
    the (well-formed) labels and the spec, for the workload's own rules."""
    template = ck.mapping(value, path)
    if template is None:
        ck.add(path, "is required")
        return {}, {}
    meta = ck.mapping(template.get("metadata"), f"{path}.metadata") or {}
    labels = validate_labels(ck, meta.get("labels"), f"{path}.metadata.labels")
    validate_annotations(ck, meta.get("annotations"), f"{path}.metadata.annotations")
    spec = validate_pod_spec(ck, template.get("spec"), f"{path}.spec")
    return labels, spec


def validate_pod_spec(ck: Checker, value: Any, path: str) -> Mapping[str, Any]:
    spec = ck.mapping(value, path) or {}
    names: set[str] = set()
    containers = list(ck.items(spec.get("containers"), f"{path}.containers"))
    if not containers:
        ck.add(f"{path}.containers", "is required: a pod runs at least one container")
    for container, where in containers:
        _container(ck, container, where, names, init=False)
    _host_port_conflicts(ck, containers)
    for container, where in ck.items(spec.get("initContainers"), f"{path}.initContainers"):
        _container(ck, container, where, names, init=True)
        _host_port_conflicts(ck, [(container, where)])  # init containers run one at a time
    ck.enum(spec.get("restartPolicy"), f"{path}.restartPolicy", RESTART_POLICIES)
    validate_labels(ck, spec.get("nodeSelector"), f"{path}.nodeSelector")
    _affinity(ck, spec.get("affinity"), f"{path}.affinity")
    _tolerations(ck, spec.get("tolerations"), f"{path}.tolerations")
    _topology_spread(ck, spec.get("topologySpreadConstraints"), f"{path}.topologySpreadConstraints")
    node_name = ck.string(spec.get("nodeName"), f"{path}.nodeName")
    if node_name:
        ck.invalid(f"{path}.nodeName", node_name, dns1123_subdomain(node_name))
    ck.integer(spec.get("priority"), f"{path}.priority")
    ck.integer(spec.get("terminationGracePeriodSeconds"), f"{path}.terminationGracePeriodSeconds", INT64)
    deadline = ck.integer(spec.get("activeDeadlineSeconds"), f"{path}.activeDeadlineSeconds", INT64)
    if deadline is not None and not 1 <= deadline <= 2**31 - 1:
        ck.add(
            f"{path}.activeDeadlineSeconds", f"must be between 1 and {2**31 - 1}, inclusive, got {deadline}"
        )
    ck.string(spec.get("schedulerName"), f"{path}.schedulerName")
    validate_overhead(ck, spec.get("overhead"), f"{path}.overhead")
    validate_requirements(ck, spec.get("resources"), f"{path}.resources", pod_level=True)
    _volume_names(ck, spec.get("volumes"), f"{path}.volumes")
    return spec


def _container(ck: Checker, value: Any, path: str, names: set[str], *, init: bool) -> None:
    container = ck.mapping(value, path)
    if container is None:
        return
    name = ck.name(container.get("name"), f"{path}.name", dns1123_label)
    if name is not None:
        if name in names:
            ck.add(
                f"{path}.name",
                f"duplicate value {name!r}: container names must be unique (init containers too)",
            )
        names.add(name)
    restart = container.get("restartPolicy")
    if restart is not None:
        if not init:
            ck.add(f"{path}.restartPolicy", "forbidden: may not be set for non-init containers")
        else:
            ck.enum(restart, f"{path}.restartPolicy", ("Always",))
    validate_requirements(ck, container.get("resources"), f"{path}.resources")
    for port, where in ck.items(container.get("ports"), f"{path}.ports"):
        found = ck.mapping(port, where)
        if found is None:
            continue
        number = ck.integer(found.get("containerPort"), f"{where}.containerPort")
        if not number and found.get("containerPort") in (None, 0):
            ck.add(f"{where}.containerPort", "is required")
        elif number is not None:
            _port_number(ck, number, f"{where}.containerPort")
        host = ck.integer(found.get("hostPort"), f"{where}.hostPort")
        if host:
            _port_number(ck, host, f"{where}.hostPort")
        ck.enum(found.get("protocol"), f"{where}.protocol", _PROTOCOLS)
        ck.string(found.get("hostIP"), f"{where}.hostIP")


def _port_number(ck: Checker, number: int, path: str) -> None:
    if not _PORT[0] <= number <= _PORT[1]:
        ck.add(path, f"invalid value {number}: must be between 1 and 65535, inclusive")


def _host_port_conflicts(ck: Checker, containers: list[tuple[Any, str]]) -> None:
    """``AccumulateUniqueHostPorts``: a protocol/hostIP/hostPort used twice is a duplicate."""
    seen: set[str] = set()
    for container, path in containers:
        if not isinstance(container, Mapping) or not isinstance(container.get("ports"), list):
            continue
        for i, port in enumerate(container["ports"]):
            if (
                not isinstance(port, Mapping)
                or not isinstance(port.get("hostPort"), int)
                or not port["hostPort"]
            ):
                continue
            key = f"{port.get('protocol') or 'TCP'}/{port.get('hostIP') or ''}/{port['hostPort']}"
            if key in seen:
                ck.add(f"{path}.ports[{i}]", f"duplicate value {key!r}: host port already in use")
            seen.add(key)


_REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
_PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"


def _affinity(ck: Checker, value: Any, path: str) -> None:
    affinity = ck.mapping(value, path)
    if affinity is None:
        return
    node = ck.mapping(affinity.get("nodeAffinity"), f"{path}.nodeAffinity")
    if node is not None:
        where = f"{path}.nodeAffinity.{_REQUIRED}"
        required = ck.mapping(node.get(_REQUIRED), where)
        if required is not None:
            terms = list(ck.items(required.get("nodeSelectorTerms"), f"{where}.nodeSelectorTerms"))
            if not terms:
                ck.add(f"{where}.nodeSelectorTerms", "is required: must have at least one node selector term")
            for term, term_path in terms:
                _node_selector_term(ck, term, term_path)
        _weighted(
            ck, node.get(_PREFERRED), f"{path}.nodeAffinity.{_PREFERRED}", "preference", _node_selector_term
        )
    for kind in ("podAffinity", "podAntiAffinity"):
        pod = ck.mapping(affinity.get(kind), f"{path}.{kind}")
        if pod is None:
            continue
        for term, term_path in ck.items(pod.get(_REQUIRED), f"{path}.{kind}.{_REQUIRED}"):
            _pod_affinity_term(ck, term, term_path)
        _weighted(
            ck, pod.get(_PREFERRED), f"{path}.{kind}.{_PREFERRED}", "podAffinityTerm", _pod_affinity_term
        )


def _weighted(
    ck: Checker, value: Any, path: str, key: str, check: Callable[[Checker, Any, str], None]
) -> None:
    """Preferred terms: a weight of 1..100 and the term under ``key``."""
    for item, where in ck.items(value, path):
        found = ck.mapping(item, where)
        if found is not None:
            _weight(ck, found.get("weight"), f"{where}.weight")
            check(ck, found.get(key), f"{where}.{key}")


def _weight(ck: Checker, value: Any, path: str) -> None:
    weight = ck.count(value, path)
    if weight is not None and not 1 <= weight <= 100:
        ck.add(path, f"invalid value {value!r}: must be in the range 1-100")


def _node_selector_term(ck: Checker, value: Any, path: str) -> None:
    """``ValidateNodeSelectorTerm``: label requirements and the ``metadata.name`` field requirement."""
    term = ck.mapping(value, path)
    if term is None:
        return
    for req, where in ck.items(term.get("matchExpressions"), f"{path}.matchExpressions"):
        found = ck.mapping(req, where)
        if found is None:
            continue
        for item, item_path in validate_requirement(ck, found, where, numeric=True):
            ck.string(item, item_path)
    for req, where in ck.items(term.get("matchFields"), f"{path}.matchFields"):
        found = ck.mapping(req, where)
        if found is None:
            continue
        operator = ck.string(found.get("operator"), f"{where}.operator")
        values = list(ck.items(found.get("values"), f"{where}.values"))
        if operator not in ("In", "NotIn"):
            ck.add(f"{where}.operator", f"invalid value {operator!r}: not a valid selector operator")
        elif len(values) != 1:
            ck.add(
                f"{where}.values",
                "is required: must be only one value when `operator` is 'In' or 'NotIn' for node field selector",
            )
        if found.get("key") != "metadata.name":
            ck.add(f"{where}.key", f"invalid value {found.get('key')!r}: not a valid field selector key")
        for item, item_path in values:
            name = ck.string(item, item_path)
            if name is not None:
                ck.invalid(item_path, name, dns1123_subdomain(name))


def _pod_affinity_term(ck: Checker, value: Any, path: str) -> None:
    """``validatePodAffinityTerm``: the selectors, the namespaces, a topology key."""
    term = ck.mapping(value, path)
    if term is None:
        return
    validate_selector(ck, term.get("labelSelector"), f"{path}.labelSelector")
    validate_selector(ck, term.get("namespaceSelector"), f"{path}.namespaceSelector")
    for name, where in ck.items(term.get("namespaces"), f"{path}.namespaces"):
        text = ck.string(name, where)
        if text is not None:
            ck.invalid(where, text, dns1123_label(text))
    ck.name(term.get("topologyKey"), f"{path}.topologyKey", qualified_name, "can not be empty")


def _tolerations(ck: Checker, value: Any, path: str) -> None:
    """``ValidateTolerations``. A field of the wrong type is one problem, and the rules that read it
    are skipped rather than judged on a stand-in."""
    for item, where in ck.items(value, path):
        toleration = ck.mapping(item, where)
        if toleration is None:
            continue
        key = ck.optional_string(toleration.get("key"), f"{where}.key")
        operator = ck.optional_string(toleration.get("operator"), f"{where}.operator")
        text = ck.optional_string(toleration.get("value"), f"{where}.value")
        effect = ck.optional_string(toleration.get("effect"), f"{where}.effect")
        if key:
            validate_label_key(ck, key, f"{where}.key")
        if key == "" and operator is not None and operator != "Exists":
            ck.add(
                f"{where}.operator",
                f"invalid value {operator!r}: operator must be Exists when `key` is empty, which means "
                '"match all values and all keys"',
            )
        seconds = ck.integer(toleration.get("tolerationSeconds"), f"{where}.tolerationSeconds", INT64)
        if seconds is not None and effect is not None and effect != "NoExecute":
            ck.add(
                f"{where}.effect",
                f"invalid value {effect!r}: effect must be 'NoExecute' when `tolerationSeconds` is set",
            )
        if operator in ("Equal", "") and text is not None:
            ck.invalid(f"{where}.operator", text, label_value(text))
        elif operator == "Exists" and text:
            ck.add(f"{where}.operator", "invalid value: value must be empty when `operator` is 'Exists'")
        elif operator not in (None, "Equal", "", "Exists"):
            ck.add(
                f"{where}.operator", f'unsupported value {operator!r}: supported values: "Equal", "Exists"'
            )
        if effect:
            ck.enum(effect, f"{where}.effect", _TAINT_EFFECTS)


def _topology_spread(ck: Checker, value: Any, path: str) -> None:
    """``validateTopologySpreadConstraints``."""
    seen: set[tuple[str, str]] = set()
    for item, where in ck.items(value, path):
        constraint = ck.mapping(item, where)
        if constraint is None:
            continue
        skew = ck.count(constraint.get("maxSkew"), f"{where}.maxSkew")
        if skew is not None and skew <= 0:
            ck.add(
                f"{where}.maxSkew", f"invalid value {constraint.get('maxSkew')!r}: must be greater than zero"
            )
        key = ck.name(
            constraint.get("topologyKey"), f"{where}.topologyKey", qualified_name, "can not be empty"
        )
        action = ck.enum(
            constraint.get("whenUnsatisfiable"), f"{where}.whenUnsatisfiable", _WHEN_UNSATISFIABLE
        )
        if constraint.get("whenUnsatisfiable") is None:
            ck.add(
                f"{where}.whenUnsatisfiable",
                'is required: supported values: "DoNotSchedule", "ScheduleAnyway"',
            )
        domains = ck.integer(constraint.get("minDomains"), f"{where}.minDomains")
        if domains is not None:
            if domains <= 0:
                ck.add(f"{where}.minDomains", f"invalid value {domains}: must be greater than zero")
            elif action != "DoNotSchedule":
                ck.add(
                    f"{where}.minDomains",
                    f"invalid value {domains}: can only use minDomains if whenUnsatisfiable=DoNotSchedule, "
                    f"not {action}",
                )
        ck.enum(constraint.get("nodeAffinityPolicy"), f"{where}.nodeAffinityPolicy", _POLICIES)
        ck.enum(constraint.get("nodeTaintsPolicy"), f"{where}.nodeTaintsPolicy", _POLICIES)
        validate_selector(ck, constraint.get("labelSelector"), f"{where}.labelSelector")
        keys: set[str] = set()
        for label_key, key_path in ck.items(constraint.get("matchLabelKeys"), f"{where}.matchLabelKeys"):
            text = ck.string(label_key, key_path)
            if text is None:
                continue
            validate_label_key(ck, text, key_path)
            if text in keys:
                ck.add(key_path, f"duplicate value {text!r}")
            keys.add(text)
        if key and action:
            if (key, action) in seen:
                ck.add(
                    f"{where}.{{topologyKey, whenUnsatisfiable}}", f"duplicate value '{{{key}, {action}}}'"
                )
            seen.add((key, action))


def _volume_names(ck: Checker, value: Any, path: str) -> None:
    names: set[str] = set()
    for item, where in ck.items(value, path):
        volume = ck.mapping(item, where)
        if volume is None:
            continue
        name = ck.name(volume.get("name"), f"{where}.name", dns1123_label)
        if name is None:
            continue
        if name in names:
            ck.add(f"{where}.name", f"duplicate value {name!r}")
        names.add(name)
