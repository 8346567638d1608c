"""An in-memory :class:`~kubetide.live.providers.kwok.api.KwokApi`: Nodes and ConfigMaps as dicts,
resourceVersion checks on replace (409 on a stale one), and injectable failures."""

from __future__ import annotations

import copy

from kubetide.live.providers.kwok.api import KubeCallError, Obj


class FakeKwokApi:
    def __init__(self) -> None:
        self.nodes: dict[str, Obj] = {}
        self.configmaps: dict[tuple[str, str], Obj] = {}
        self.fail: dict[str, KubeCallError] = {}  # method -> error
        self.conflicts = 0  # replace_configmap answers 409 this many more times
        self.creates = 0
        self._rv = 0

    def _check(self, method: str) -> None:
        if method in self.fail:
            raise self.fail[method]

    def list_nodes(self, label: str) -> list[Obj]:
        self._check("list_nodes")
        return [copy.deepcopy(n) for n in self.nodes.values() if label in n["metadata"].get("labels", {})]

    def create_node(self, node: Obj) -> None:
        self._check("create_node")
        name = node["metadata"]["name"]
        if name in self.nodes:
            raise KubeCallError(409, f'nodes "{name}" already exists')
        self.creates += 1
        self.nodes[name] = copy.deepcopy(node)

    def delete_node(self, name: str) -> None:
        self._check("delete_node")
        if self.nodes.pop(name, None) is None:
            raise KubeCallError(404, f'nodes "{name}" not found')

    def get_configmap(self, namespace: str, name: str) -> Obj | None:
        self._check("get_configmap")
        return copy.deepcopy(self.configmaps.get((namespace, name)))

    def create_configmap(self, namespace: str, configmap: Obj) -> None:
        self._check("create_configmap")
        key = (namespace, configmap["metadata"]["name"])
        if key in self.configmaps:
            raise KubeCallError(409, "already exists")
        self._store(key, configmap)

    def replace_configmap(self, namespace: str, configmap: Obj) -> None:
        self._check("replace_configmap")
        key = (namespace, configmap["metadata"]["name"])
        current = self.configmaps[key]
        if (
            self.conflicts > 0
            or configmap["metadata"].get("resourceVersion") != current["metadata"]["resourceVersion"]
        ):
            self.conflicts = max(0, self.conflicts - 1)
            self._rv += 1  # someone else's write
            current["metadata"]["resourceVersion"] = str(self._rv)
            raise KubeCallError(409, "the object has been modified")
        self._store(key, configmap)

    def _store(self, key: tuple[str, str], configmap: Obj) -> None:
        self._rv += 1
        stored = copy.deepcopy(configmap)
        stored["metadata"]["resourceVersion"] = str(self._rv)
        self.configmaps[key] = stored
