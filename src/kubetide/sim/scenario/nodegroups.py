"""Node groups: the simulated cloud's scaling groups, their machines, start-up delays and faults (§3).

Item-level checks live here (``maxSize >= minSize``, ``initialSize`` in range, ``instanceType`` or
``capacity``, a fault's window in order); checks that need the rest of the scenario (the catalog,
the duration, unique names) are in :mod:`kubetide.sim.scenario.checks`.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, model_validator

from kubetide.model.validation.checker import Checker
from kubetide.model.validation.meta import validate_labels
from kubetide.model.validation.others import validate_taints
from kubetide.sim.scenario.base import DNS_NAME, Duration, NonNegativeInt, ResourceMap, SpecModel, errors_at
from kubetide.sim.scenario.paths import PathError, parse_path

__all__ = [
    "FAULT_TYPES",
    "ApiErrorFault",
    "Fault",
    "MissingProviderIDFault",
    "NodeGroupSpec",
    "NodeNotReadyFault",
    "NodeTemplateSpec",
    "Provisioning",
    "StockoutFault",
    "TaintSpec",
    "UnregisteredFault",
]


class TaintSpec(SpecModel):
    key: Annotated[str, Field(min_length=1)]
    value: str = ""
    effect: Literal["NoSchedule", "PreferNoSchedule", "NoExecute"]


class NodeTemplateSpec(SpecModel):
    """What the provider *claims* a new node will look like (scale-from-zero templates)."""

    allocatable: ResourceMap = Field(default_factory=dict)
    capacity: ResourceMap = Field(default_factory=dict)
    labels: dict[str, str] = Field(default_factory=dict)
    taints: list[TaintSpec] = Field(default_factory=list)


class Provisioning(SpecModel):
    delay: Duration = 60.0  # requested -> running (InstanceCreated)
    registerDelay: Duration = 15.0  # running -> Node registered
    readyDelay: Duration = 10.0  # registered -> Node Ready


CloudCall = Literal["IncreaseSize", "DeleteNodes", "DecreaseTargetSize"]


def _all_calls() -> list[CloudCall]:
    return ["IncreaseSize", "DeleteNodes", "DecreaseTargetSize"]


class _Fault(SpecModel):
    at: Duration = 0.0
    until: Duration | None = None  # None: the end of the simulation

    @model_validator(mode="after")
    def _window(self) -> Any:
        if self.until is not None and self.until < self.at:
            message = f"must be >= at (got {self.until:g}s < {self.at:g}s)"
            raise errors_at("Fault", [(("until",), message, self.until)])
        return self


class StockoutFault(_Fault):
    type: Literal["stockout"]
    mode: Literal["silent", "error"] = "silent"


class ApiErrorFault(_Fault):
    type: Literal["apiError"]
    # kubetide addition: which calls fail (default all three the contract names).
    calls: list[CloudCall] = Field(default_factory=_all_calls)


class UnregisteredFault(_Fault):
    type: Literal["unregistered"]
    count: Annotated[int, Field(ge=1)]


class MissingProviderIDFault(_Fault):
    type: Literal["missingProviderID"]
    count: Annotated[int, Field(ge=1)]


class NodeNotReadyFault(_Fault):
    type: Literal["nodeNotReady"]
    count: Annotated[int, Field(ge=1)]


Fault = Annotated[
    StockoutFault | ApiErrorFault | UnregisteredFault | MissingProviderIDFault | NodeNotReadyFault,
    Field(discriminator="type"),
]
FAULT_TYPES = ("stockout", "apiError", "unregistered", "missingProviderID", "nodeNotReady")


def _location(path: str) -> tuple[str | int, ...]:
    """A validation path (``labels["a/b"]``, ``taints[1].key``, ``zone["topology..."]``) as pydantic's loc."""
    try:
        parts = tuple(parse_path(path))
    except PathError:
        return ()
    return parts[:1] if parts[0] == "zone" else parts


class NodeGroupSpec(SpecModel):
    name: Annotated[str, Field(pattern=DNS_NAME, max_length=63)]  # part of node names
    instanceType: str | None = None
    capacity: ResourceMap | None = None
    allocatable: ResourceMap | None = None
    template: NodeTemplateSpec | None = None
    labels: dict[str, str] = Field(default_factory=dict)
    taints: list[TaintSpec] = Field(default_factory=list)
    zone: str | None = None  # None: the instance type's home zone (us-east-1a, us-central1-a, zone-a)
    minSize: NonNegativeInt
    maxSize: NonNegativeInt
    initialSize: NonNegativeInt | None = None  # None: minSize
    pricePerHour: Annotated[float, Field(ge=0)] | None = None  # None: the catalog price
    provisioning: Provisioning = Field(default_factory=Provisioning)
    faults: list[Fault] = Field(default_factory=list)

    @model_validator(mode="after")
    def _sizes(self) -> NodeGroupSpec:
        problems: list[tuple[tuple[str | int, ...], str, Any]] = []
        if self.maxSize < self.minSize:
            problems.append(
                (("maxSize",), f"must be >= minSize (got {self.maxSize} < {self.minSize})", self.maxSize)
            )
        elif self.initialSize is not None and not self.minSize <= self.initialSize <= self.maxSize:
            problems.append(
                (
                    ("initialSize",),
                    f"must be between minSize and maxSize ({self.minSize}..{self.maxSize}), got {self.initialSize}",
                    self.initialSize,
                )
            )
        if self.instanceType is None and self.capacity is None:
            problems.append(((), "needs `instanceType` (from the catalog) or `capacity`", None))
        if problems:
            raise errors_at("NodeGroup", problems)
        return self

    @model_validator(mode="after")
    def _node_labels_and_taints(self) -> NodeGroupSpec:
        """The labels and taints its Nodes (and its scale-from-zero template) carry, as the API server
        validates a Node's."""
        ck = Checker()
        for where, labels, taints in (
            ("labels", self.labels, self.taints),
            ("template.labels", self.template.labels if self.template else {}, ()),
            ("template.taints", {}, self.template.taints if self.template else ()),
        ):
            if labels:
                validate_labels(ck, labels, where)
            if taints:
                validate_taints(ck, [t.model_dump() for t in taints], where.replace("labels", "taints"))
        if self.zone:
            validate_labels(ck, {"topology.kubernetes.io/zone": self.zone}, "zone")
        if ck.problems:
            raise errors_at("NodeGroup", [(_location(p.path), p.message, None) for p in ck.problems])
        return self

    @property
    def initial_size(self) -> int:
        return self.minSize if self.initialSize is None else self.initialSize
