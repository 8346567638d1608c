"""The nodes of a recording: each node's group, Ready nodes per group, and the resizes to replay.

A node's group is the cloud provider's (``NodeGroupForNode``, as CA asks it) when the recording has one,
else the group its labels say (as ``scenario from-cluster`` groups nodes). The groups a replayed
autoscaler manages change size in the replay by that autoscaler's decisions, so there their nodes are
only counted (the samples' ``nodes:<group>``, what the replay is compared with). Every other group
changed size by something the replay does not run (a person, another autoscaler, a provisioner): each
change of its node count is a ``resizeGroup`` action, timed so the replay's node registers when the
real one did (its provisioning delay and registration earlier; a removal the simulated cloud's
termination delay earlier), and a group seen for the first time is added to the scenario.

How long a node of each group took from its Node object to Ready is measured (the median of the last
ones), for the scenario's ``provisioning.readyDelay``.
"""

from __future__ import annotations

import statistics
from collections import deque
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kubetide.live.export.nodegroups import GroupBounds, group_entry, is_control_plane, label_group
from kubetide.model.durations import DurationError, parse_duration
from kubetide.model.fields import parse_time

__all__ = ["TERMINATION_DELAY", "NodeTracker"]

Json = dict[str, Any]
# The simulated cloud terminates an instance this long after it is asked to (its Node goes then).
TERMINATION_DELAY = 30.0
_MEASURED = 20  # ready delays kept per group


@dataclass
class _Node:
    group: str
    ready: bool


def _ready(node: Mapping[str, Any]) -> tuple[bool, str | None]:
    """Whether a node is Ready, and since when (the condition's last transition)."""
    for condition in (node.get("status") or {}).get("conditions") or []:
        if condition.get("type") == "Ready":
            return condition.get("status") == "True", condition.get("lastTransitionTime")
    return False, None


def _name(node: Mapping[str, Any]) -> str:
    return str((node.get("metadata") or {}).get("name", ""))


def _seconds(text: Any) -> float | None:
    try:
        return parse_time(str(text)) if text else None
    except ValueError:
        return None


@dataclass
class NodeTracker:
    """``groups`` are the scenario's ``spec.nodeGroups`` entries (kept up to date: new groups, bounds
    that had to widen, measured ready delays); ``managed`` the groups a replayed autoscaler resizes."""

    groups: list[Json]
    managed: Collection[str]
    group_for: Callable[[Mapping[str, Any]], str | None]  # the provider's answer; None: by labels
    start: float  # the recording's start (Unix seconds)
    catalog: Collection[str] = ()
    note: Callable[[str], None] = lambda text: None
    nodes: dict[str, _Node] = field(default_factory=dict)
    ever: dict[str, str] = field(
        default_factory=dict
    )  # every node seen -> its group (events name gone nodes)
    sizes: dict[str, int] = field(default_factory=dict)  # unmanaged groups: the size last replayed
    last_resize: dict[str, float] = field(default_factory=dict)
    ready_delays: dict[str, deque[float]] = field(default_factory=dict)
    _version: int = -1

    def is_managed(self, group: str) -> bool:
        return "*" in self.managed or group in self.managed

    def group_of(self, node: Mapping[str, Any]) -> str | None:
        if is_control_plane(node):
            return None
        return self.group_for(node) or label_group(node)

    def entry(self, group: str) -> Json | None:
        return next((g for g in self.groups if g["name"] == group), None)

    def begin(self, nodes: Iterable[Mapping[str, Any]]) -> None:
        """The nodes at the start (or when a recording resumes: the sizes replayed so far are
        ``sizes``, and the differences become resizes at the first :meth:`observe`)."""
        for node in nodes:
            group = self.group_of(node)
            if group is not None:
                ready, _ = _ready(node)
                self.nodes[_name(node)] = _Node(group, ready)
                self.ever[_name(node)] = group
        for entry in self.groups:
            name = str(entry["name"])
            if not self.is_managed(name):
                self.sizes.setdefault(name, self.count(name))

    def count(self, group: str, *, ready: bool = False) -> int:
        return sum(1 for n in self.nodes.values() if n.group == group and (n.ready or not ready))

    def ready_by_group(self) -> dict[str, int]:
        counts = {g["name"]: 0 for g in self.groups}
        for node in self.nodes.values():
            if node.ready:
                counts[node.group] = counts.get(node.group, 0) + 1
        return counts

    def observe(self, nodes: Iterable[Mapping[str, Any]], t: float) -> list[Json]:
        """The ``resizeGroup`` actions for the groups no replayed autoscaler manages."""
        current: dict[str, _Node] = {}
        by_group: dict[str, list[Mapping[str, Any]]] = {}
        for node in nodes:
            group = self.group_of(node)
            if group is None:
                continue
            name = _name(node)
            ready, since = _ready(node)
            before = self.nodes.get(name)
            if ready and (before is None or not before.ready):
                self._measure(group, node, since)
            current[name] = _Node(group, ready)
            self.ever[name] = group
            by_group.setdefault(group, []).append(node)
        self.nodes = current
        actions = []
        for group, members in by_group.items():
            if self.entry(group) is None:
                self._add_group(group, members)
        for entry in self.groups:
            group = str(entry["name"])
            if self.is_managed(group):
                continue
            size = sum(1 for n in current.values() if n.group == group)
            replayed = self.sizes.get(group, int(entry.get("initialSize") or 0))
            if size == replayed:
                continue
            self._widen(entry, size)
            provisioning = entry.get("provisioning") or {}
            lead = (
                _duration(provisioning.get("delay"), 60.0)
                + _duration(provisioning.get("registerDelay"), 15.0)
                if size > replayed
                else TERMINATION_DELAY
            )
            at = max(t - lead, self.last_resize.get(group, 0.0), 0.0)
            self.last_resize[group] = at
            self.sizes[group] = size
            actions.append({"at": round(at, 3), "resizeGroup": {"group": group, "size": size}})
        return actions

    def _measure(self, group: str, node: Mapping[str, Any], since: str | None) -> None:
        created = _seconds((node.get("metadata") or {}).get("creationTimestamp"))
        ready_at = _seconds(since)
        if created is None or ready_at is None or created < self.start:
            return  # a node from before the recording: its start-up was not seen
        self.ready_delays.setdefault(group, deque(maxlen=_MEASURED)).append(max(ready_at - created, 0.0))

    def measured_ready_delay(self, group: str) -> float | None:
        delays = self.ready_delays.get(group)
        return statistics.median(delays) if delays else None

    def _add_group(self, group: str, members: list[Mapping[str, Any]]) -> None:
        notes: list[str] = []
        bounds = GroupBounds(0, max(10, 2 * len(members)))
        entry = group_entry(group, members, self.catalog, bounds, notes, count=0)
        self.groups.append(entry)
        self.sizes[group] = 0
        self.note(
            f"node group {group} appeared while recording; its nodes come and go by resizeGroup actions "
            f"(bounds assumed {bounds.min_size}..{bounds.max_size})"
        )
        for text in notes:
            self.note(text)

    def _widen(self, entry: Json, size: int) -> None:
        """A group no autoscaler manages that grew or shrank beyond its bounds (a fixed group: nodes of
        no provider group) gets bounds that hold every size it had."""
        if size > int(entry.get("maxSize", 0)):
            entry["maxSize"] = size
        if size < int(entry.get("minSize", 0)):
            entry["minSize"] = size


def _duration(value: Any, default: float) -> float:
    if value is None:
        return default
    try:
        return parse_duration(value)
    except DurationError:
        return default
