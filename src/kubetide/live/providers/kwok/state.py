"""The kwok provider's state, shared through a ConfigMap: each group's target size and the creations in
flight (node names chosen up front, with the time each is due).

Why in the cluster: a restarted autoscaler, a standby replica taking over, or the batch autoscaler
sharing the provider must neither lose a requested node nor create one twice. Names are chosen when the
request is made, so carrying a creation out twice is harmless (the second create answers 409); every
change is a read-modify-write on the ConfigMap's resourceVersion, retried on conflict.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

from kubetide.live.providers.kwok.api import KubeCallError, KwokApi, Obj

__all__ = ["STATE_CONFIGMAP", "GroupState", "KwokState", "Pending", "StateStore"]

log = logging.getLogger(__name__)

STATE_CONFIGMAP = "kubetide-kwok-state"
STATE_KEY = "state"
MAX_CONFLICT_RETRIES = 8

T = TypeVar("T")


@dataclass(slots=True)
class Pending:
    name: str
    due: float  # seconds since the epoch


@dataclass(slots=True)
class GroupState:
    target: int
    pending: list[Pending] = field(default_factory=list)


@dataclass(slots=True)
class KwokState:
    groups: dict[str, GroupState] = field(default_factory=dict)

    @classmethod
    def parse(cls, text: str | None) -> KwokState:
        if not text:
            return cls()
        try:
            data = json.loads(text)
            return cls(
                {
                    name: GroupState(
                        int(group["target"]),
                        [Pending(str(p["name"]), float(p["due"])) for p in group.get("pending", [])],
                    )
                    for name, group in data.get("groups", {}).items()
                }
            )
        except (ValueError, KeyError, TypeError, AttributeError):
            # A hand-edited or corrupt state must not wedge the autoscaler: start again from the nodes.
            log.warning("the %s ConfigMap holds no readable state; starting from the nodes", STATE_CONFIGMAP)
            return cls()

    def dump(self) -> str:
        return json.dumps(
            {
                "groups": {
                    name: {"target": g.target, "pending": [{"name": p.name, "due": p.due} for p in g.pending]}
                    for name, g in sorted(self.groups.items())
                }
            },
            indent=1,
            sort_keys=True,
        )


class StateStore:
    """Reads and changes the state ConfigMap in ``namespace`` with optimistic concurrency."""

    def __init__(self, api: KwokApi, namespace: str) -> None:
        self._api = api
        self.namespace = namespace

    def read(self) -> KwokState:
        configmap = self._api.get_configmap(self.namespace, STATE_CONFIGMAP)
        return KwokState.parse(((configmap or {}).get("data") or {}).get(STATE_KEY))

    def update(self, change: Callable[[KwokState], T]) -> tuple[T, KwokState]:
        """Apply ``change`` to the current state and write it; on a conflict, re-read and re-apply.

        ``change`` may raise to abort (nothing is written). KubeCallError after repeated conflicts.
        """
        for _ in range(MAX_CONFLICT_RETRIES):
            configmap = self._api.get_configmap(self.namespace, STATE_CONFIGMAP)
            state = KwokState.parse(((configmap or {}).get("data") or {}).get(STATE_KEY))
            result = change(state)
            try:
                if configmap is None:
                    self._api.create_configmap(self.namespace, self._manifest(state, None))
                else:
                    version = (configmap.get("metadata") or {}).get("resourceVersion")
                    self._api.replace_configmap(self.namespace, self._manifest(state, version))
            except KubeCallError as exc:
                if exc.code == 409:
                    continue  # someone else wrote first: re-read, re-decide
                raise
            return result, state
        raise KubeCallError(
            409, f"{STATE_CONFIGMAP}: gave up after {MAX_CONFLICT_RETRIES} conflicting writes"
        )

    def _manifest(self, state: KwokState, version: str | None) -> Obj:
        metadata: Obj = {
            "name": STATE_CONFIGMAP,
            "namespace": self.namespace,
            "labels": {"app.kubernetes.io/managed-by": "kubetide"},
        }
        if version is not None:
            metadata["resourceVersion"] = version
        return {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": metadata,
            "data": {STATE_KEY: state.dump()},
        }
