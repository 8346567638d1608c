"""What the running autoscaler did between two looks at the cluster: a pure difference.

A look (:class:`ClusterLook`) holds each node group's target as the provider reports it (an ASG's
desired capacity, the kwok provider's shared target), the nodes of each group, and the nodes being
removed (CA's ``ToBeDeletedByClusterAutoscaler`` taint, Escalator's removal taint). Between two looks:

- a target that rose is a scale-up (by how much, from what);
- a node that was there and is now being removed, or gone, is a deletion (``DELETE``);
- with ``group_scale_downs`` (Escalator, which decides to remove "n nodes of a group" and taints them,
  deleting them minutes later), the nodes of a group newly being removed are one scale-down of the
  group by that many, and nodes are not named.

An action's time is when it happened, where the cluster says it: first the running autoscaler's own
Events (:mod:`.events`: CA's ``ScaledUpGroup``, its ``ScaleDown`` on the node, its ``Scale-down:
removing ...``); else a deletion's ``ToBeDeletedByClusterAutoscaler`` taint's value (CA writes the Unix
second it tainted the node), a CA scale-up's the ``lastTransitionTime`` of its group's ``scaleUp:
InProgress`` in CA's status ConfigMap (``cluster-autoscaler-status``: :func:`status_scale_ups`), each
when it falls between the two looks; otherwise the later look's (the precision is then the shadow's
loop period).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import yaml

from kubetide.live.shadow.compare import DELETE, SCALE_DOWN, SCALE_UP, Action

__all__ = ["ClusterLook", "running_actions", "status_scale_ups"]


@dataclass(frozen=True, slots=True)
class ClusterLook:
    at: float
    targets: Mapping[str, int] = field(default_factory=dict)  # group -> target size
    nodes: Mapping[str, str] = field(default_factory=dict)  # node -> group, not being removed
    removing: Mapping[str, str] = field(default_factory=dict)  # node -> group, being removed
    # When, as the cluster says (a removal's taint, a group's scale-up in CA's status), if it does.
    removing_since: Mapping[str, float] = field(default_factory=dict)
    scale_up_since: Mapping[str, float] = field(default_factory=dict)
    # The pods each group's scale-up was for (CA's TriggeredScaleUp Events), if they say.
    scale_up_pods: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


def _when(said: float | None, before: ClusterLook, after: ClusterLook) -> float:
    # A taint keeps whole seconds: one tainted just after the earlier look may say a moment before it.
    if said is not None and before.at - 1.0 < said <= after.at:
        return max(said, before.at)
    return after.at


def status_scale_ups(text: str | None) -> dict[str, float]:
    """From CA's status ConfigMap (``data.status``, the YAML CA 1.30+ writes): each group whose scale-up
    is in progress, and since when. Anything that does not read so is left out (nothing is guessed)."""
    try:
        doc = yaml.safe_load(text) if text else None
    except yaml.YAMLError:
        return {}
    groups = doc.get("nodeGroups") if isinstance(doc, dict) else None
    out: dict[str, float] = {}
    for group in groups if isinstance(groups, list) else []:
        if not isinstance(group, dict) or not isinstance(group.get("scaleUp"), dict):
            continue
        scale_up: dict[str, Any] = group["scaleUp"]
        since = _seconds(scale_up.get("lastTransitionTime"))
        if (
            scale_up.get("status") == "InProgress"
            and since is not None
            and isinstance(group.get("name"), str)
        ):
            out[group["name"]] = since
    return out


def _seconds(value: object) -> float | None:
    if isinstance(value, datetime):
        return value.timestamp() if value.tzinfo is not None else None
    if isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value)
        except ValueError:
            return None
        return parsed.timestamp() if parsed.tzinfo is not None else None
    return None


def running_actions(
    before: ClusterLook | None, after: ClusterLook, *, group_scale_downs: bool = False
) -> tuple[Action, ...]:
    """The actions between ``before`` and ``after`` (none at the first look), groups and nodes in name
    order."""
    if before is None:
        return ()
    out: list[Action] = []
    for group in sorted(after.targets):
        was, now = before.targets.get(group), after.targets[group]
        if was is not None and now > was:
            at = _when(after.scale_up_since.get(group), before, after)
            pods = after.scale_up_pods.get(group, ())
            out.append(Action(SCALE_UP, group, group, at, amount=now - was, size=was, pods=pods))
    if group_scale_downs:
        newly: dict[str, int] = {}
        for node, group in after.removing.items():
            if node not in before.removing:
                newly[group] = newly.get(group, 0) + 1
        for group in sorted(newly):
            size = before.targets.get(group, -1)
            out.append(Action(SCALE_DOWN, group, group, after.at, amount=newly[group], size=size))
    else:
        for node in sorted(before.nodes):
            if node not in after.nodes:
                group = after.removing.get(node, before.nodes[node])
                out.append(Action(DELETE, node, group, _when(after.removing_since.get(node), before, after)))
    return tuple(out)
