"""Which cloud instance each Node is, when the Node does not say (kubetide; upstream matches by
``spec.providerID`` only).

A Node that registered without ``spec.providerID`` (a kubelet started without ``--cloud-provider``, a
cloud-controller-manager that has not caught up) matches no instance, so upstream counts its instance as
unregistered and deletes it after ``--max-node-provision-time``, with no drain: the machine goes while
its Node runs pods. kubetide matches such a Node by the addresses and host names the cloud reports for
its instances (the Node's ``status.addresses``, its name and ``kubernetes.io/hostname`` label) and,
when exactly one instance not claimed by another Node matches, treats the Node as that instance's. A
Node that matches nothing is *unidentified*: while one is Ready, no instance can be proven unregistered,
so none is removed as such (see :mod:`kubetide.cluster.loop.housekeeping`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from kubetide.cloud.instance import Instance
from kubetide.model.node import HOSTNAME_LABEL, NodeView

__all__ = ["AddressMatch", "NodeMatching", "match_nodes_without_provider_id"]


@dataclass(frozen=True, slots=True)
class AddressMatch:
    node: str
    group: str
    instance: str
    address: str


@dataclass(frozen=True, slots=True)
class NodeMatching:
    """The nodes with the matched ones' providerID filled in (same order), what matched, and the nodes
    without providerID that matched no instance."""

    nodes: tuple[NodeView, ...]
    matched: tuple[AddressMatch, ...] = ()
    unidentified: tuple[NodeView, ...] = ()


def _keys(node: NodeView) -> list[str]:
    keys = [a for a in node.addresses if a]
    keys.append(node.name)
    hostname = node.labels.get(HOSTNAME_LABEL)
    if hostname:
        keys.append(hostname)
    return keys


def match_nodes_without_provider_id(
    nodes: Sequence[NodeView], instances: Mapping[str, Sequence[Instance]]
) -> NodeMatching:
    """Match each Node with an empty providerID to the one instance (of ``instances``, by group) that
    reports one of its addresses or host names and that no Node claims by providerID."""
    if all(n.provider_id for n in nodes):
        return NodeMatching(tuple(nodes))
    claimed = {n.provider_id for n in nodes if n.provider_id}
    by_address: dict[str, list[tuple[str, Instance]]] = {}
    for gid, group_instances in instances.items():
        for inst in group_instances:
            if inst.id in claimed:
                continue
            for address in dict.fromkeys(inst.addresses):
                by_address.setdefault(address, []).append((gid, inst))
    out: list[NodeView] = []
    matched: list[AddressMatch] = []
    unidentified: list[NodeView] = []
    for node in nodes:
        if node.provider_id:
            out.append(node)
            continue
        found: dict[str, tuple[str, str]] = {}
        for key in _keys(node):
            for gid, inst in by_address.get(key, ()):
                found.setdefault(inst.id, (gid, key))
        if len(found) == 1:
            ((instance_id, (gid, address)),) = found.items()
            if instance_id not in claimed:
                claimed.add(instance_id)
                matched.append(AddressMatch(node.name, gid, instance_id, address))
                out.append(replace(node, provider_id=instance_id))
                continue
        unidentified.append(node)
        out.append(node)
    return NodeMatching(tuple(out), tuple(matched), tuple(unidentified))
