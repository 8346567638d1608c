"""``CapacityBuffer`` (``autoscaling.x-k8s.io/v1beta1``, and the deprecated ``v1alpha1``): spare capacity
kept ready, as Cluster Autoscaler 1.36 defines it (``apis/capacitybuffer``), read into a view.

``spec``: ``provisioningStrategy`` (the CRD's default ``buffer.x-k8s.io/active-capacity``),
``podTemplateRef`` or ``scalableRef`` (not both), ``replicas``, ``percentage`` and ``limits``; ``status``:
the controller's ``podTemplateRef``, ``replicas``, ``podTemplateGeneration``, ``provisioningStrategy`` and
conditions. The CRD's validation rules (its CEL rules too, which a 1.20 API server does not run) are
checked here, every problem at once with its path.

kubetide's extensions, as annotations so that CA's own CRD (which prunes unknown spec fields) keeps
them: ``kubetide.io/active-windows`` (when the buffer is active: ``Mon-Fri 08:00-18:00``, windows
separated by ``;``, an optional UTC offset: ``Mon-Fri 08:00-18:00 +01:00``) and a one-shot buffer's end,
``kubetide.io/expires-at`` (RFC 3339) or ``kubetide.io/expires-after`` (a duration from its creation).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kubetide.model.capacity.conditions import Condition, parse_conditions
from kubetide.model.capacity.reading import Problems, api_version, known_fields
from kubetide.model.durations import DurationError, parse_duration
from kubetide.model.errors import FieldError, join_path
from kubetide.model.fields import Node, parse_time
from kubetide.model.quantity import Quantity

__all__ = [
    "ACTIVE_STRATEGY",
    "ACTIVE_WINDOWS_ANNOTATION",
    "BUFFER_API_VERSIONS",
    "EXPIRES_AFTER_ANNOTATION",
    "EXPIRES_AT_ANNOTATION",
    "ActiveWindow",
    "BufferStatus",
    "CapacityBuffer",
    "ScalableRef",
    "parse_windows",
]

GROUP = "autoscaling.x-k8s.io"
BUFFER_API_VERSIONS = (f"{GROUP}/v1beta1", f"{GROUP}/v1alpha1")
ACTIVE_STRATEGY = "buffer.x-k8s.io/active-capacity"
ACTIVE_WINDOWS_ANNOTATION = "kubetide.io/active-windows"
EXPIRES_AT_ANNOTATION = "kubetide.io/expires-at"
EXPIRES_AFTER_ANNOTATION = "kubetide.io/expires-after"

_SPEC_FIELDS = ("provisioningStrategy", "podTemplateRef", "scalableRef", "replicas", "percentage", "limits")
_STATUS_FIELDS = ("podTemplateRef", "replicas", "podTemplateGeneration", "conditions", "provisioningStrategy")
_INT32_MAX = 2**31 - 1


@dataclass(frozen=True, slots=True)
class ScalableRef:
    api_group: str
    kind: str
    name: str


@dataclass(frozen=True, slots=True)
class BufferStatus:
    pod_template_ref: str | None = None
    replicas: int | None = None
    pod_template_generation: int | None = None
    conditions: tuple[Condition, ...] = ()
    provisioning_strategy: str | None = None

    def to_manifest(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.pod_template_ref is not None:
            out["podTemplateRef"] = {"name": self.pod_template_ref}
        if self.replicas is not None:
            out["replicas"] = self.replicas
        if self.pod_template_generation is not None:
            out["podTemplateGeneration"] = self.pod_template_generation
        if self.conditions:
            out["conditions"] = [c.to_manifest() for c in self.conditions]
        if self.provisioning_strategy is not None:
            out["provisioningStrategy"] = self.provisioning_strategy
        return out


_DAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_WINDOW = re.compile(
    r"^(?:(?P<days>\*|[A-Za-z]{3}(?:-[A-Za-z]{3})?(?:,[A-Za-z]{3}(?:-[A-Za-z]{3})?)*)\s+)?"
    r"(?P<start>\d{2}:\d{2})-(?P<end>\d{2}:\d{2})"
    r"(?:\s+(?P<zone>UTC|[+-]\d{2}:\d{2}))?$"
)


@dataclass(frozen=True, slots=True)
class ActiveWindow:
    """Days of the week (0 is Monday), minutes of the day ``[start, end)`` (an end before the start runs
    past midnight, into the next day), at a UTC offset in seconds."""

    days: frozenset[int]
    start: int
    end: int
    offset: int = 0

    def active(self, t: float) -> bool:
        local = t + self.offset
        day = (int(local // 86400) + 3) % 7  # 1970-01-01 was a Thursday
        minute = int(local % 86400) // 60
        if self.start < self.end:
            return day in self.days and self.start <= minute < self.end
        # Past midnight: the evening part on the window's day, the morning part on the next.
        return (day in self.days and minute >= self.start) or (
            (day - 1) % 7 in self.days and minute < self.end
        )


def _minutes(text: str) -> int | None:
    hours, minutes = int(text[:2]), int(text[3:])
    if minutes > 59 or hours > 24 or (hours == 24 and minutes):
        return None
    return hours * 60 + minutes


def parse_windows(text: str) -> tuple[ActiveWindow, ...]:
    """``kubetide.io/active-windows``; ValueError says what is wrong."""
    windows = []
    for part in (p.strip() for p in text.split(";")):
        match = _WINDOW.match(part)
        if match is None:
            raise ValueError(
                f"{part!r} is not a window like 'Mon-Fri 08:00-18:00' (days, from-to, optional UTC offset)"
            )
        start, end = _minutes(match["start"]), _minutes(match["end"])
        if start is None or end is None or start == end:
            raise ValueError(f"{part!r}: times must be 00:00 to 24:00 and differ")
        days: set[int] = set()
        for spec in (match["days"] or "*").split(","):
            if spec == "*":
                days.update(range(7))
                continue
            first, _, last = spec.partition("-")
            names = [first.capitalize(), (last or first).capitalize()]
            if not all(n in _DAYS for n in names):
                raise ValueError(f"{part!r}: days are Mon, Tue, Wed, Thu, Fri, Sat, Sun")
            i, j = _DAYS.index(names[0]), _DAYS.index(names[1])
            days.update(range(i, j + 1) if i <= j else [*range(i, 7), *range(0, j + 1)])
        zone = match["zone"] or "UTC"
        offset = (
            0
            if zone == "UTC"
            else (1 if zone[0] == "+" else -1) * (int(zone[1:3]) * 3600 + int(zone[4:]) * 60)
        )
        windows.append(ActiveWindow(frozenset(days), start, end % 1440 if end == 1440 else end, offset))
    return tuple(windows)


@dataclass(frozen=True, slots=True)
class CapacityBuffer:
    name: str
    namespace: str = "default"
    uid: str = ""
    generation: int = 0
    creation_time: float | None = None
    api_version: str = BUFFER_API_VERSIONS[0]
    annotations: Mapping[str, str] = field(default_factory=dict, hash=False, compare=False)
    provisioning_strategy: str | None = ACTIVE_STRATEGY
    pod_template_ref: str | None = None
    scalable_ref: ScalableRef | None = None
    replicas: int | None = None
    percentage: int | None = None
    limits: Mapping[str, Quantity] | None = field(default=None, hash=False, compare=False)
    status: BufferStatus = field(default_factory=BufferStatus)
    # kubetide's extensions (annotations): when the buffer is active, and when a one-shot buffer ends.
    windows: tuple[ActiveWindow, ...] = ()
    expires_at: float | None = None

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    def active(self, t: float) -> tuple[bool, str]:
        """Whether the buffer provisions at ``t`` (kubetide's schedule and expiry), and why not."""
        if self.expires_at is not None and t >= self.expires_at:
            return False, "Expired"
        if self.windows and not any(w.active(t) for w in self.windows):
            return False, "OutsideActiveWindows"
        return True, ""

    @classmethod
    def from_manifest(cls, manifest: Any, path: str = "") -> CapacityBuffer:
        root = Node(manifest, path)
        problems = Problems()
        meta, spec, status = root.get("metadata"), root.get("spec"), root.get("status")
        version = api_version(root, BUFFER_API_VERSIONS, problems)
        if spec.value is None:
            problems.add(spec, "is required")
        known_fields(spec, _SPEC_FIELDS, problems)
        known_fields(status, _STATUS_FIELDS, problems)
        strategy = problems.take(
            lambda: spec.get("provisioningStrategy").str(ACTIVE_STRATEGY), ACTIVE_STRATEGY
        )
        template = _local_ref(spec.get("podTemplateRef"), problems)
        scalable = _scalable_ref(spec.get("scalableRef"), problems)
        replicas = _int32(spec.get("replicas"), problems)
        percentage = _int32(spec.get("percentage"), problems)
        limits = _limits(spec.get("limits"), problems)
        if template is not None and scalable is not None:
            problems.add(spec, "podTemplateRef and scalableRef cannot both be set")
        if template is not None and replicas is None and limits is None:
            problems.add(spec, "with podTemplateRef, replicas or limits must also be set")
        annotations: dict[str, str] = problems.take(lambda: meta.get("annotations").string_map(), {})
        windows: tuple[ActiveWindow, ...] = ()
        node = meta.get("annotations")
        if ACTIVE_WINDOWS_ANNOTATION in annotations:
            try:
                windows = parse_windows(annotations[ACTIVE_WINDOWS_ANNOTATION])
            except ValueError as exc:
                problems.errors.append(_annotation_error(node, ACTIVE_WINDOWS_ANNOTATION, str(exc)))
        created = problems.take(lambda: meta.get("creationTimestamp").time(None), None)
        expires = _expiry(node, annotations, created, problems)
        buffer = cls(
            name=problems.take(lambda: meta.get("name").str(), ""),
            namespace=problems.take(lambda: meta.get("namespace").str("default"), "default"),
            uid=problems.take(lambda: meta.get("uid").str(""), ""),
            generation=problems.take(lambda: meta.get("generation").int(0), 0),
            creation_time=created,
            api_version=version,
            annotations=annotations,
            provisioning_strategy=strategy,
            pod_template_ref=template,
            scalable_ref=scalable,
            replicas=replicas,
            percentage=percentage,
            limits=limits,
            status=_status(status, problems),
            windows=windows,
            expires_at=expires,
        )
        problems.raise_any()
        return buffer


def _annotation_error(annotations: Node, key: str, message: str) -> FieldError:
    return FieldError(join_path(annotations.path, key), message)


def _expiry(
    node: Node, annotations: Mapping[str, str], created: float | None, problems: Problems
) -> float | None:
    at, after = annotations.get(EXPIRES_AT_ANNOTATION), annotations.get(EXPIRES_AFTER_ANNOTATION)
    if at is not None and after is not None:
        problems.errors.append(
            _annotation_error(
                node, EXPIRES_AFTER_ANNOTATION, f"give {EXPIRES_AT_ANNOTATION} or this, not both"
            )
        )
        return None
    if at is not None:
        try:
            return parse_time(at)
        except ValueError:
            problems.errors.append(
                _annotation_error(node, EXPIRES_AT_ANNOTATION, f"must be an RFC 3339 time, got {at!r}")
            )
            return None
    if after is not None:
        try:
            seconds = parse_duration(after)
        except DurationError as exc:
            problems.errors.append(_annotation_error(node, EXPIRES_AFTER_ANNOTATION, str(exc)))
            return None
        return (created or 0.0) + seconds
    return None


def _local_ref(node: Node, problems: Problems) -> str | None:
    if node.value is None:
        return None
    known_fields(node, ("name",), problems)
    name: str = problems.take(lambda: node.get("name").str(), "")
    if node.value is not None and isinstance(node.value, dict) and not name and "name" in node.value:
        problems.add(node.get("name"), "must not be empty")
    return name


def _scalable_ref(node: Node, problems: Problems) -> ScalableRef | None:
    if node.value is None:
        return None
    known_fields(node, ("apiGroup", "kind", "name"), problems)
    kind = problems.take(lambda: node.get("kind").str(), "")
    name = problems.take(lambda: node.get("name").str(), "")
    for key, value in (("kind", kind), ("name", name)):
        if isinstance(node.value, dict) and key in node.value and not value:
            problems.add(node.get(key), "must not be empty")
    return ScalableRef(problems.take(lambda: node.get("apiGroup").str(""), ""), kind, name)


def _int32(node: Node, problems: Problems) -> int | None:
    value: int | None = problems.take(lambda: node.int(None, minimum=0), None)
    if value is not None and value > _INT32_MAX:
        problems.add(node, f"must be <= {_INT32_MAX} (got {value})")
        return None
    return value


def _limits(node: Node, problems: Problems) -> dict[str, Quantity] | None:
    if node.value is None:
        return None
    out = {}
    items: list[tuple[str, Node]] = problems.take(lambda: list(node.items()), [])
    for name, value in items:
        quantity: Quantity | None = problems.take(lambda value=value: value.quantity(), None)  # type: ignore[misc]
        if quantity is not None:
            out[name] = quantity
    return out


def _status(node: Node, problems: Problems) -> BufferStatus:
    ref = node.get("podTemplateRef")
    return BufferStatus(
        pod_template_ref=problems.take(lambda: ref.get("name").str(None), None),
        replicas=problems.take(lambda: node.get("replicas").int(None), None),
        pod_template_generation=problems.take(lambda: node.get("podTemplateGeneration").int(None), None),
        conditions=problems.take(lambda: parse_conditions(node.get("conditions")), ()),
        provisioning_strategy=problems.take(lambda: node.get("provisioningStrategy").str(None), None),
    )
