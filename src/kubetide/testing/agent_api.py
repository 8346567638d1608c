"""An in-memory :class:`~kubetide.live.agent.api.AgentApi` for the agent's unit tests: objects as dicts,
resourceVersions counting up, patches merged (lists replaced), and injectable failures."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

from kubetide.live.agent.api import ApiError, Obj, WatchEvent


def merge(target: Obj, patch: Obj) -> Obj:
    for key, value in patch.items():
        if isinstance(value, dict) and isinstance(target.get(key), dict):
            merge(target[key], value)
        else:
            target[key] = copy.deepcopy(value)
    return target


class FakeAgentApi:
    def __init__(self) -> None:
        self.nodes: dict[str, Obj] = {}
        self.pods: dict[tuple[str, str], Obj] = {}
        self.leases: dict[str, Obj] = {}
        self.calls: list[tuple[str, str]] = []
        self.fail: dict[tuple[str, str], ApiError] = {}  # (method, name) -> error
        self._rv = 0

    def _bump(self, obj: Obj) -> Obj:
        self._rv += 1
        obj.setdefault("metadata", {})["resourceVersion"] = str(self._rv)
        return obj

    def _call(self, method: str, name: str) -> None:
        self.calls.append((method, name))
        error = self.fail.get((method, name))
        if error is not None:
            raise error

    def add_node(self, name: str, labels: dict[str, str] | None = None, **status: Any) -> Obj:
        node = {
            "metadata": {
                "name": name,
                "uid": f"uid-{name}",
                "labels": labels or {"kubetide.io/node-group": "g"},
            },
            "spec": {},
            "status": {"capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"}, **status},
        }
        self.nodes[name] = self._bump(node)
        return node

    def add_pod(self, name: str, node: str | None, namespace: str = "default", **meta: Any) -> Obj:
        pod = {
            "metadata": {"name": name, "namespace": namespace, "uid": f"uid-{name}", **meta},
            "spec": {
                "containers": [{"name": "app", "image": "nginx"}],
                **({"nodeName": node} if node else {}),
            },
            "status": {"phase": "Pending"},
        }
        self.pods[(namespace, name)] = self._bump(pod)
        return pod

    # --- AgentApi

    def list_nodes(self, label_selector: str) -> tuple[list[Obj], str]:
        key = label_selector
        items = [copy.deepcopy(n) for n in self.nodes.values() if key in n["metadata"].get("labels", {})]
        return items, str(self._rv)

    def watch_nodes(self, label_selector: str, resource_version: str) -> Iterator[WatchEvent]:
        return iter(())

    def list_pods(self) -> tuple[list[Obj], str]:
        return [copy.deepcopy(p) for p in self.pods.values()], str(self._rv)

    def watch_pods(self, resource_version: str) -> Iterator[WatchEvent]:
        return iter(())

    def patch_node_status(self, name: str, patch: Obj) -> Obj:
        self._call("patch_node_status", name)
        return copy.deepcopy(self._bump(merge(self.nodes[name], patch)))

    def get_lease(self, name: str) -> Obj | None:
        self._call("get_lease", name)
        return copy.deepcopy(self.leases.get(name))

    def create_lease(self, lease: Obj) -> None:
        self._call("create_lease", lease["metadata"]["name"])
        self.leases[lease["metadata"]["name"]] = copy.deepcopy(lease)

    def patch_lease(self, name: str, patch: Obj) -> None:
        self._call("patch_lease", name)
        if name not in self.leases:
            raise ApiError(404, "not found")
        merge(self.leases[name], patch)

    def patch_pod_status(self, namespace: str, name: str, patch: Obj) -> Obj:
        self._call("patch_pod_status", name)
        if (namespace, name) not in self.pods:
            raise ApiError(404, "not found")
        return copy.deepcopy(self._bump(merge(self.pods[(namespace, name)], patch)))

    def delete_pod_now(self, namespace: str, name: str) -> None:
        self._call("delete_pod_now", name)
        if self.pods.pop((namespace, name), None) is None:
            raise ApiError(404, "not found")
