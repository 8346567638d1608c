"""What the cluster state must not forget across a restart, as the data of a ConfigMap the autoscaler
owns (kubetide; upstream keeps it in memory only).

Upstream forgets, when it restarts, when each scale-up was requested, which groups are backed off and
since when each instance has been unregistered and since when a group's size is wrong: a CA restarted
every few minutes (OOM-killed, evicted) then never times a scale-up out, never fixes a size the cloud
did not deliver, never fails over from a silent stockout and never removes an unregistered machine, and a restart between a scale-up and the discovery of its failure skips the
backoff. kubetide writes this state each loop it changes (``kubetide-cluster-autoscaler-state`` in
``--namespace``, key ``state``, JSON) and reads it at start. Encoding and decoding only; the driver
writes it through its port.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kubetide.cloud.instance import ErrorClass, InstanceErrorInfo
from kubetide.cluster.backoff import BackoffEntry
from kubetide.cluster.clusterstate.incorrect import IncorrectSize
from kubetide.cluster.clusterstate.requests import ScaleUpRequest
from kubetide.cluster.clusterstate.unregistered import UnregisteredNode

__all__ = ["STATE_CONFIG_MAP", "STATE_KEY", "PersistedState", "decode_state", "encode_state"]

STATE_CONFIG_MAP = "kubetide-cluster-autoscaler-state"
STATE_KEY = "state"
_VERSION = 1


@dataclass(frozen=True, slots=True)
class PersistedState:
    scale_ups: Mapping[str, ScaleUpRequest] = field(default_factory=dict)
    registered_at_request: Mapping[str, int] = field(default_factory=dict)
    backoff: Mapping[str, BackoffEntry] = field(default_factory=dict)
    unregistered: Mapping[str, UnregisteredNode] = field(default_factory=dict)
    failing: frozenset[str] = frozenset()
    # Groups whose size is wrong and since when: fixNodeGroupSize waits the provision time from it.
    incorrect: Mapping[str, IncorrectSize] = field(default_factory=dict)


def _error(e: InstanceErrorInfo | None) -> dict[str, Any] | None:
    if e is None:
        return None
    return {"class": int(e.error_class), "code": e.error_code, "message": e.error_message}


def encode_state(state: PersistedState) -> dict[str, str]:
    doc = {
        "version": _VERSION,
        "scaleUps": {
            gid: {
                "increase": r.increase,
                "time": r.time,
                "expectedAddTime": r.expected_add_time,
                "registered": state.registered_at_request.get(gid, 0),
            }
            for gid, r in state.scale_ups.items()
        },
        "backoff": {
            gid: {
                "duration": e.duration,
                "until": e.until,
                "lastFailed": e.last_failed,
                "error": _error(e.error_info),
            }
            for gid, e in state.backoff.items()
        },
        "unregistered": {
            iid: {"group": u.group, "since": u.since, **({"foreign": True} if u.foreign else {})}
            for iid, u in state.unregistered.items()
        },
        "failing": sorted(state.failing),
    }
    if state.incorrect:
        doc["incorrectSizes"] = {
            gid: {"current": i.current_size, "expected": i.expected_size, "since": i.first_observed}
            for gid, i in state.incorrect.items()
        }
    return {STATE_KEY: json.dumps(doc, sort_keys=True, separators=(",", ":"))}


def decode_state(data: Mapping[str, str] | None) -> PersistedState | None:
    """The state in a ConfigMap's data; None when absent or unreadable (the autoscaler then starts from
    what the cloud shows, as upstream does)."""
    if not data or STATE_KEY not in data:
        return None
    try:
        doc = json.loads(data[STATE_KEY])
        if doc.get("version") != _VERSION:
            return None
        scale_ups = {
            gid: ScaleUpRequest(gid, int(r["increase"]), float(r["time"]), float(r["expectedAddTime"]))
            for gid, r in doc.get("scaleUps", {}).items()
        }
        registered = {gid: int(r.get("registered", 0)) for gid, r in doc.get("scaleUps", {}).items()}
        backoff = {}
        for gid, e in doc.get("backoff", {}).items():
            err = e.get("error")
            info = (
                InstanceErrorInfo(ErrorClass(int(err["class"])), str(err["code"]), str(err["message"]))
                if err
                else None
            )
            backoff[gid] = BackoffEntry(float(e["duration"]), float(e["until"]), float(e["lastFailed"]), info)
        unregistered = {
            iid: UnregisteredNode(iid, str(u["group"]), float(u["since"]), bool(u.get("foreign", False)))
            for iid, u in doc.get("unregistered", {}).items()
        }
        failing = frozenset(str(i) for i in doc.get("failing", []))
        incorrect = {
            gid: IncorrectSize(int(i["current"]), int(i["expected"]), float(i["since"]))
            for gid, i in doc.get("incorrectSizes", {}).items()
        }
    except (ValueError, TypeError, KeyError, AttributeError):
        return None
    return PersistedState(scale_ups, registered, backoff, unregistered, failing, incorrect)
