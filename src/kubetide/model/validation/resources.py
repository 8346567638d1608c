"""Resource lists: names, quantities, requests against limits (``ValidateResourceRequirements`` and
``ValidateResourceQuantityValue`` in ``pkg/apis/core/validation``, the name rules of
``pkg/apis/core/helper``), plus kubetide's bound: every quantity fits int64 milli-units, the unit
Kubernetes' ``MilliValue()`` and kubetide's scheduling vectors count in (beyond it upstream overflows
silently; here it is an error naming the field).
"""

from __future__ import annotations

from typing import Any

from kubetide.model.errors import join_path
from kubetide.model.numbers import INT64_MAX
from kubetide.model.quantity import Quantity, QuantityError, parse_quantity
from kubetide.model.validation.checker import Checker
from kubetide.model.validation.names import qualified_name

__all__ = [
    "MAX_MILLI",
    "container_resource_name",
    "validate_node_resources",
    "validate_overhead",
    "validate_quantity",
    "validate_requirements",
]

MAX_MILLI = INT64_MAX
_CONTAINER_STANDARD = frozenset({"cpu", "memory", "ephemeral-storage"})
_QOS = frozenset({"cpu", "memory"})
# Resources counted in whole units (helper.IsIntegerResourceName; extended resources too).
_INTEGER = frozenset(
    {
        "pods",
        "count/pods",
        "resourcequotas",
        "services",
        "replicationcontrollers",
        "secrets",
        "configmaps",
        "persistentvolumeclaims",
        "services.nodeports",
        "services.loadbalancers",
    }
)
_POD_LEVEL = frozenset({"cpu", "memory"})


def _hugepages(name: str) -> bool:
    return name.startswith("hugepages-")


def _native(name: str) -> bool:
    """``IsNativeResource``: no domain, or in ``kubernetes.io``."""
    return "/" not in name or "kubernetes.io/" in name


def _extended(name: str) -> bool:
    """``IsExtendedResourceName``: outside ``kubernetes.io``, no ``requests.`` prefix, a qualified name
    once prefixed with ``requests.``."""
    if _native(name) or name.startswith("requests."):
        return False
    return not qualified_name("requests." + name)


def _overcommit_allowed(name: str) -> bool:
    return _native(name) and not _hugepages(name)


def _integer_resource(name: str) -> bool:
    return name in _INTEGER or _extended(name)


def container_resource_name(name: str) -> tuple[str, ...]:
    """``validateContainerResourceName``: cpu, memory, ephemeral-storage, hugepages-*, or a
    domain-qualified (extended) resource."""
    errs = qualified_name(name)
    if errs:
        return errs
    if "/" not in name:
        if name not in _CONTAINER_STANDARD and not _hugepages(name):
            return ("must be a standard resource for containers",)
    elif not _native(name) and not _extended(name):
        return ("doesn't follow extended resource name standard",)
    return ()


def validate_quantity(ck: Checker, name: str, raw: Any, path: str) -> Quantity | None:
    """One quantity: parses, not negative, whole for integer resources, within int64 milli-units."""
    try:
        quantity = parse_quantity(raw)
    except QuantityError as exc:
        ck.add(path, str(exc))
        return None
    if quantity.amount < 0:
        ck.add(path, f"must be greater than or equal to 0, got {raw!r}")
        return None
    if quantity.amount * 1000 > MAX_MILLI:
        ck.add(
            path,
            f"too large: at most {MAX_MILLI} milli-units (int64, Kubernetes' MilliValue()), got {raw!r}",
        )
        return None
    if _integer_resource(name) and quantity.amount.denominator != 1:
        ck.add(path, f"invalid value {raw!r}: must be an integer")
    return quantity


def _quantities(ck: Checker, value: Any, path: str, *, check_names: bool) -> dict[str, Quantity]:
    out: dict[str, Quantity] = {}
    for name, raw, where in ck.entries(value, path):
        if check_names:
            ck.invalid(where, name, container_resource_name(name))
        quantity = validate_quantity(ck, name, raw, where)
        if quantity is not None:
            out[name] = quantity
    return out


def validate_requirements(ck: Checker, value: Any, path: str, *, pod_level: bool = False) -> None:
    """A container's (or, ``pod_level``, the pod's) ``resources``: names and quantities, each request
    at most its limit, extended resources and hugepages with limits equal to their requests."""
    found = ck.mapping(value, path)
    if found is None:
        return
    limits = _quantities(ck, found.get("limits"), f"{path}.limits", check_names=True)
    requests = _quantities(ck, found.get("requests"), f"{path}.requests", check_names=True)
    if pod_level:
        for kind, listed in (("limits", found.get("limits")), ("requests", found.get("requests"))):
            for name, _, where in ck.entries(listed, f"{path}.{kind}"):
                if name not in _POD_LEVEL and not _hugepages(name):
                    ck.add(where, f'unsupported value {name!r}: supported values: "cpu", "memory"')
    for name, request in requests.items():
        where = join_path(f"{path}.requests", name)
        limit = limits.get(name)
        if limit is not None:
            if request.amount != limit.amount and not _overcommit_allowed(name):
                ck.add(where, f"invalid value {str(request)!r}: must be equal to {name} limit of {limit}")
            elif request.amount > limit.amount:
                ck.add(
                    where,
                    f"invalid value {str(request)!r}: must be less than or equal to {name} limit of {limit}",
                )
        elif not _overcommit_allowed(name) and not pod_level:
            ck.add(
                f"{path}.limits", f"is required: Limit must be set for non overcommitable resources ({name})"
            )
    names = set(requests) | set(limits)
    if any(_hugepages(n) for n in names) and not names & _QOS:
        ck.add(path, "HugePages require cpu or memory")


def validate_overhead(ck: Checker, value: Any, path: str) -> None:
    """``validateOverhead``: a resource list checked as limits."""
    _quantities(ck, value, path, check_names=True)


def validate_node_resources(ck: Checker, value: Any, path: str) -> None:
    """A Node's capacity or allocatable (``ValidateNodeResources``): quantities, names not checked."""
    _quantities(ck, value, path, check_names=False)
