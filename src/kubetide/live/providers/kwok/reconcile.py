"""The kwok state made to agree with the Node objects: the nodes are the truth, the ConfigMap a record.

A state left by another run (another config, a crash, a hand edit) may hold a target above a group's
max, or creations in flight that would take the group past it; trusted as it was, a group of max 3 grew
to 5 Ready nodes. So, at every refresh and before every change, each configured group's state becomes:

- creations in flight: those whose Node does not exist yet, cut (latest due first) to the room left
  under ``maxSize`` (an ASG never launches past its max either);
- target: its nodes plus those creations (an ASG's desired capacity is its instances plus those
  launching; a Node deleted behind the provider's back leaves no phantom slot to wait for).

Nodes already past the max are not deleted (nothing is deleted on a guess): the target then says how
many there are, so no autoscaler adds to the group, and a warning names them. Groups of the state that
this configuration does not have are left alone (another process sharing the ConfigMap may own them).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass

from kubetide.live.providers.kwok.config import KwokGroupConfig
from kubetide.live.providers.kwok.state import GroupState, KwokState

__all__ = ["Correction", "reconcile"]


@dataclass(frozen=True, slots=True)
class Correction:
    """One correction: ``serious`` when the state would have taken a group past its max (a warning);
    else the target merely followed nodes another process made or removed (information)."""

    text: str
    serious: bool


def reconcile(
    state: KwokState, nodes: Mapping[str, Collection[str]], groups: Mapping[str, KwokGroupConfig]
) -> list[Correction]:
    """Change ``state`` in place to agree with ``nodes`` (group -> names of its live Nodes) and each
    group's max; what was corrected (empty when the state already agreed)."""
    notes: list[Correction] = []
    for name, config in groups.items():
        existing = nodes.get(name, ())
        current = state.groups.get(name)
        if current is None:  # a group the state does not know yet adopts its nodes
            state.groups[name] = GroupState(target=len(existing))
            continue
        in_flight = [p for p in current.pending if p.name not in existing]
        room = max(0, config.max_size - len(existing))
        kept = sorted(in_flight, key=lambda p: (p.due, p.name))[:room]
        if len(kept) < len(in_flight):
            dropped = sorted(p.name for p in in_flight if p not in kept)
            notes.append(
                Correction(
                    f"{name}: {len(dropped)} creation(s) in flight dropped ({', '.join(dropped)}): with "
                    f"{len(existing)} node(s) they would take the group past its max size {config.max_size}",
                    serious=True,
                )
            )
        target = len(existing) + len(kept)
        if target != current.target:
            notes.append(
                Correction(
                    f"{name}: target {current.target} corrected to {target} "
                    f"({len(existing)} node(s), {len(kept)} creation(s) in flight)",
                    serious=current.target > config.max_size,
                )
            )
        if len(existing) > config.max_size:
            notes.append(
                Correction(
                    f"{name}: {len(existing)} nodes, above the max size {config.max_size}; none is added "
                    "(and none deleted on a guess)",
                    serious=True,
                )
            )
        current.pending = [p for p in current.pending if p in kept]
        current.target = target
    return notes
