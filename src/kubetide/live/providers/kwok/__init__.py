"""The ``kwok`` cloud provider (live contract §2): node groups of Node objects kubetide creates itself.

For the integrator: ``build_kwok_provider(cloud_config, nodes, namespace=..., kubeconfig=...)`` from the
``--cloud-config``, ``--nodes`` and ``--namespace`` flags; it raises :class:`KwokConfigError` (exit 2,
``.errors`` lists every problem with its path) or ``KubeAccessError`` (no cluster configuration).
"""

from __future__ import annotations

from collections.abc import Sequence

from lightkube import Client

from kubetide.kube.client import make_client
from kubetide.live.guard.gate import WriteGate
from kubetide.live.providers.kwok.api import KwokApi, LightkubeKwokApi
from kubetide.live.providers.kwok.config import (
    KwokConfigError,
    KwokGroupConfig,
    apply_nodes_flags,
    load_cloud_config,
    parse_cloud_config,
)
from kubetide.live.providers.kwok.nodes import GROUP_LABEL
from kubetide.live.providers.kwok.provider import KwokCloudProvider, KwokNodeGroup
from kubetide.live.providers.kwok.state import STATE_CONFIGMAP

__all__ = [
    "GROUP_LABEL",
    "STATE_CONFIGMAP",
    "KwokApi",
    "KwokCloudProvider",
    "KwokConfigError",
    "KwokGroupConfig",
    "KwokNodeGroup",
    "apply_nodes_flags",
    "build_kwok_provider",
    "load_cloud_config",
    "parse_cloud_config",
]


def build_kwok_provider(
    cloud_config: str,
    nodes: Sequence[str] = (),
    *,
    namespace: str = "kube-system",
    kubeconfig: str | None = None,
    client: Client | None = None,
    gate: WriteGate | None = None,
) -> KwokCloudProvider:
    """The provider for ``--cloud-config FILE`` and ``--nodes MIN:MAX:NAME`` (repeatable); ``gate``: the
    component's, which the provider's own writes at refresh go through too."""
    groups = apply_nodes_flags(load_cloud_config(cloud_config), nodes)
    api = LightkubeKwokApi(
        client if client is not None else make_client(kubeconfig, field_manager="kubetide-kwok")
    )
    return KwokCloudProvider(api, groups, namespace=namespace, gate=gate)
