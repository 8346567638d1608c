"""kubetide's ``UnremovableNode`` events: a Normal event on a node when the reason that keeps an otherwise
removable node changes (CA only logs these; users ask for them as events). The everyday reasons (busy,
not unneeded long enough, recently checked, being deleted, not autoscaled) are not reported, and each
reason once until it changes.
"""

from __future__ import annotations

from collections.abc import Mapping

from kubetide.cluster.loop.plan import Notices
from kubetide.cluster.loop.world import CAEvent
from kubetide.cluster.reasons import KubetideEventReason, UnremovableReason

__all__ = ["REPORTED_UNREMOVABLE", "unremovable_notices"]

REPORTED_UNREMOVABLE = frozenset(
    str(r)
    for r in (
        UnremovableReason.BLOCKED_BY_POD,
        UnremovableReason.NODE_GROUP_MIN_SIZE_REACHED,
        UnremovableReason.MINIMAL_RESOURCE_LIMIT_EXCEEDED,
        UnremovableReason.SCALE_DOWN_DISABLED_ANNOTATION,
        UnremovableReason.SCALE_DOWN_UNREADY_DISABLED,
        UnremovableReason.NO_PLACE_TO_MOVE_PODS,
        UnremovableReason.UNEXPECTED_ERROR,
    )
)


def unremovable_notices(
    said: Mapping[str, str],
    unremovable: Mapping[str, str],
    blocking: Mapping[str, tuple[str, str]],
    group_of: Mapping[str, str | None],
) -> tuple[Notices | None, dict[str, str]]:
    """The events of reasons not said yet (by node name), and what has been said once they are:
    ``said`` is each node's reason last reported, forgotten once the node is no longer unremovable."""
    now_said = {n: r for n, r in said.items() if n in unremovable}
    news = [(n, r) for n, r in unremovable.items() if r in REPORTED_UNREMOVABLE and now_said.get(n) != r]
    events = []
    for name, reason in sorted(news):  # by node name (few: most reasons are not reported)
        now_said[name] = reason
        data: dict[str, object] = {"node": name, "group": group_of.get(name) or "", "reason": reason}
        detail = ""
        pod = blocking.get(name)
        if pod is not None:
            data.update(pod=pod[0], podReason=pod[1])
            detail = f" (pod {pod[0]}: {pod[1]})"
        events.append(
            CAEvent(
                "Normal",
                str(KubetideEventReason.UNREMOVABLE_NODE),
                f"Node/{name}",
                f"node {name} cannot be removed: {reason}{detail}",
                data,
            )
        )
    return (Notices("unremovable nodes", tuple(events)) if events else None), now_said
