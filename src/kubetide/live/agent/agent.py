"""The node agent's worker: one round per second over the nodes it owns and the pods bound to them.

Each round renews the Leases that are due, posts node statuses that are due, applies each owned pod's
next action (:func:`kubetide.live.agent.pods.next_action`) and advances the usage ledger. Every write
is independent: one that fails is logged and naturally retried next round (the decision is recomputed
from the watched state), and never stops the others. What the agent wrote is put back into its store at
once, so a lagging watch never makes it write twice.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from kubetide.kube.failures import log_failure
from kubetide.live.agent.addresses import NODE_NETWORK, POD_NETWORK, AddressPool
from kubetide.live.agent.api import AgentApi, ApiError, Obj
from kubetide.live.agent.nodes import (
    lease_for,
    lease_renewal,
    node_internal_ip,
    node_status_patch,
    status_is_due,
)
from kubetide.live.agent.pods import Delete, PatchStatus, next_action
from kubetide.live.agent.reflector import Reflector, Store
from kubetide.live.agent.usage import UsageLedger, container_usage

__all__ = ["DEFAULT_NODE_SELECTOR", "AgentOptions", "NodeAgent"]

log = logging.getLogger("kubetide.node_agent")

DEFAULT_NODE_SELECTOR = "kubetide.io/node-group"
WARN_INTERVAL_S = 30.0


@dataclass(frozen=True, slots=True)
class AgentOptions:
    node_selector: str = DEFAULT_NODE_SELECTOR
    lease_renew_interval_s: float = 10.0  # the kubelet's: a quarter of the 40 s lease duration
    round_interval_s: float = 1.0  # the resolution of startup delays, Job durations and grace periods
    # A pod held by a finalizer outlives its confirmed deletion: ask again only this often, not every round.
    delete_retry_s: float = 10.0


class NodeAgent:
    def __init__(
        self, api: AgentApi, options: AgentOptions | None = None, clock: Callable[[], float] = time.time
    ) -> None:
        self.api = api
        self.options = options or AgentOptions()
        self.clock = clock
        self.nodes = Store()
        self.pods = Store()
        self.ledger = UsageLedger()
        self._renewed: dict[str, float] = {}  # node name -> last successful Lease renewal
        self._deleted: dict[str, float] = {}  # pod uid -> when its deletion was confirmed
        self._warned: dict[str, float] = {}  # what failed -> when it was last logged
        self._node_ips: dict[str, str] = {}
        self._node_pool = AddressPool(NODE_NETWORK)
        self._pod_pool = AddressPool(POD_NETWORK)

    # --- threads

    def start_watches(self, stop: threading.Event) -> None:
        selector = self.options.node_selector
        Reflector(
            "nodes",
            lambda: self.api.list_nodes(selector),
            lambda rv: self.api.watch_nodes(selector, rv),
            self.nodes,
            stop,
        ).start()
        Reflector("pods", self.api.list_pods, self.api.watch_pods, self.pods, stop).start()

    def run(self, stop: threading.Event) -> None:
        """Rounds until ``stop`` is set; a round that raises is logged and the next one runs anyway."""
        while not stop.is_set():
            try:
                self.round(self.clock())
            except Exception as exc:
                log_failure(log, "node agent round failed", exc, logging.ERROR)
            stop.wait(self.options.round_interval_s)

    # --- one round

    def owned_nodes(self) -> dict[str, Obj]:
        return {
            n["metadata"]["name"]: n
            for n in self.nodes.items()
            if not (n.get("metadata") or {}).get("deletionTimestamp")
        }

    def round(self, now: float) -> None:
        nodes = self.owned_nodes()
        for name in list(self._renewed):
            if name not in nodes:
                del self._renewed[name]
                self._node_ips.pop(name, None)
        for name, node in nodes.items():
            self._keep_node_alive(name, node, now)
        owned_pods = [p for p in self.pods.items() if (p.get("spec") or {}).get("nodeName") in nodes]
        if self.pods.synced.is_set():
            self._run_pods(owned_pods, nodes, now)
        running = [
            container_usage(p)
            for p in owned_pods
            if (p.get("status") or {}).get("phase") == "Running"
            and not (p.get("metadata") or {}).get("deletionTimestamp")
        ]
        self.ledger.update(now, running, nodes)

    def _keep_node_alive(self, name: str, node: Obj, now: float) -> None:
        last = self._renewed.get(name)
        if last is None or now - last >= self.options.lease_renew_interval_s:
            try:
                self._renew_lease(name, node, now)
                self._renewed[name] = now
            except ApiError as exc:
                self._warn(now, f"lease {name}", "node %s: lease renewal failed: %s", name, exc)
        if status_is_due(node, now):
            try:
                updated = self.api.patch_node_status(
                    name, node_status_patch(node, now, self._node_ip(name, node))
                )
                self.nodes.apply("MODIFIED", updated)
                log.info("node %s: posted Ready status", name)
            except ApiError as exc:
                self._warn(now, f"status {name}", "node %s: status update failed: %s", name, exc)

    def _renew_lease(self, name: str, node: Obj, now: float) -> None:
        if name in self._renewed:
            try:
                self.api.patch_lease(name, lease_renewal(node, now))
                return
            except ApiError as exc:
                if exc.code != 404:
                    raise
        if self.api.get_lease(name) is None:
            self.api.create_lease(lease_for(node, now))
            log.info("node %s: created its Lease", name)
        else:
            self.api.patch_lease(name, lease_renewal(node, now))

    def _node_ip(self, name: str, node: Obj) -> str:
        ip = node_internal_ip(node) or self._node_ips.get(name)
        if ip is None:
            in_use = [a for a in (node_internal_ip(n) for n in self.nodes.items()) if a]
            ip = self._node_pool.allocate([*in_use, *self._node_ips.values()])
        self._node_ips[name] = ip
        return ip

    def _run_pods(self, pods: list[Obj], nodes: dict[str, Obj], now: float) -> None:
        in_use: set[str] | None = None
        live = {p["metadata"].get("uid") for p in pods}
        self._deleted = {uid: at for uid, at in self._deleted.items() if uid in live}
        for pod in pods:
            meta = pod["metadata"]
            if now - self._deleted.get(meta.get("uid", ""), -1e18) < self.options.delete_retry_s:
                continue
            namespace, name = meta.get("namespace", ""), meta["name"]
            node_name = pod["spec"]["nodeName"]
            needs_ip = not (pod.get("status") or {}).get("podIP")
            new_ip = ""
            if needs_ip:
                if in_use is None:
                    in_use = {
                        str((p.get("status") or {}).get("podIP"))
                        for p in self.pods.items()
                        if (p.get("status") or {}).get("podIP")
                    }
                new_ip = self._pod_pool.allocate(in_use)
            action = next_action(pod, now, self._node_ip(node_name, nodes[node_name]), new_ip)
            try:
                if isinstance(action, PatchStatus):
                    updated = self.api.patch_pod_status(namespace, name, action.patch)
                    self.pods.apply("MODIFIED", updated)
                    if needs_ip and in_use is not None:
                        in_use.add(new_ip)
                    log.info("pod %s/%s on %s: %s", namespace, name, node_name, action.why)
                elif isinstance(action, Delete):
                    self.api.delete_pod_now(namespace, name)
                    self._deleted[meta.get("uid", "")] = now
                    self.pods.apply("DELETED", pod)
                    log.info("pod %s/%s on %s: deleted (%s)", namespace, name, node_name, action.why)
            except ApiError as exc:
                if exc.code == 404:
                    self.pods.apply("DELETED", pod)
                    continue
                self._warn(
                    now,
                    f"pod {namespace}/{name}",
                    "pod %s/%s on %s: update failed: %s",
                    namespace,
                    name,
                    node_name,
                    exc,
                )

    def _warn(self, now: float, key: str, message: str, *args: object) -> None:
        """Log a failure at most every WARN_INTERVAL_S per object: writes are retried every round, and
        an API server that is down for a minute should not bury the log under identical lines."""
        if now - self._warned.get(key, -1e18) >= WARN_INTERVAL_S:
            self._warned[key] = now
            log.warning(message, *args)
