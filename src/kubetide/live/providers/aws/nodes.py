"""Node objects for the instances of a test AWS endpoint (moto), as a kubelet on them would register.

On real AWS every instance runs its own kubelet; against moto nothing does, so ``kubetide node-agent
--aws-endpoint-url`` registers a Node for each instance of the groups it watches: named as AWS's
resource-based hostnames (``<instance-id>.<region>.compute.internal``), with the providerID AWS's cloud
controller writes (``aws:///<zone>/<instance-id>``), the group's template capacity and labels (what CA
predicted for scale from zero is then what it gets) and ``kubetide.io/node-group`` so the agent runs
them. Nodes of instances that are gone (terminated) are deleted. Uses the kwok provider's Node calls
(:class:`~kubetide.live.providers.kwok.api.KwokApi`): the same three calls on Nodes.
"""

from __future__ import annotations

import logging

from kubetide.cloud.instance import CloudProviderError, InstanceState
from kubetide.live.providers.aws.provider import PLACEHOLDER_PREFIX, AwsCloudProvider, parse_provider_id
from kubetide.live.providers.kwok.api import KubeCallError, KwokApi, Obj
from kubetide.live.providers.kwok.nodes import GROUP_LABEL
from kubetide.model.node import HOSTNAME_LABEL

__all__ = ["register_instances"]

log = logging.getLogger(__name__)


def node_name(instance_id: str, region: str) -> str:
    return f"{instance_id}.{region}.compute.internal"


def register_instances(provider: AwsCloudProvider, api: KwokApi) -> tuple[list[str], list[str]]:
    """One pass: refresh, create the missing Nodes, delete the Nodes of vanished instances.
    Returns the names created and deleted. CloudProviderError or KubeCallError if a call fails."""
    provider.refresh()
    region = provider.api.region
    wanted: dict[str, Obj] = {}
    for group in provider.node_groups():
        instances = [
            i
            for i in group.nodes()
            if i.status is not None
            and i.status.state is not InstanceState.Deleting
            and not (parse_provider_id(i.id) or "").startswith(PLACEHOLDER_PREFIX)
        ]
        if not instances:
            continue
        try:
            template = group.template_node_info().node
        except CloudProviderError as exc:
            log.warning("%s: no template, its instances get no Node: %s", group.id(), exc)
            continue
        capacity = template.capacity.to_manifest()
        for instance in instances:
            name = node_name(parse_provider_id(instance.id) or "", region)
            wanted[name] = {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {
                    "name": name,
                    "labels": {**template.labels, GROUP_LABEL: group.id(), HOSTNAME_LABEL: name},
                },
                "spec": {
                    "providerID": instance.id,
                    **({"taints": [t.to_manifest() for t in template.taints]} if template.taints else {}),
                },
                "status": {"capacity": capacity, "allocatable": dict(capacity)},
            }
    existing = {
        str(n["metadata"]["name"]): n
        for n in api.list_nodes(GROUP_LABEL)
        if str((n.get("spec") or {}).get("providerID", "")).startswith("aws:///")
    }
    created, deleted = [], []
    for name, manifest in sorted(wanted.items()):
        if name not in existing:
            try:
                api.create_node(manifest)
            except KubeCallError as exc:
                if exc.code != 409:
                    raise
            created.append(name)
            log.info("registered Node %s for instance %s", name, manifest["spec"]["providerID"])
    for name in sorted(set(existing) - set(wanted)):
        try:
            api.delete_node(name)
        except KubeCallError as exc:
            if exc.code != 404:
                raise
        deleted.append(name)
        log.info("deleted Node %s: its instance is gone", name)
    return created, deleted
