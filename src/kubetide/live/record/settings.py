"""What a recording is made with, kept in its directory so a resumed recording goes on the same way.

The settings are fixed when a recording starts: a resumed one takes them from ``recording.json``
(a flag given again must say the same, the command checks it). Beside them the file keeps what the
recorder learned as it went: the node groups (groups appear, fixed groups widen) and where it got to.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

__all__ = ["LOAD_MODELS", "RecordSettings", "RecordState", "StateError"]

LOAD_MODELS = ("per-pod", "shared")
FORMAT = 1


class StateError(ValueError):
    """A ``recording.json`` that cannot be read back."""


@dataclass
class RecordSettings:
    name: str
    duration: float  # seconds from the start: a resumed recording ends at start + duration
    interval: float = 15.0  # seconds between samples (the scenario's metrics resolution)
    flush_every: float = 10.0  # seconds between writes to the files
    namespaces: tuple[str, ...] = ()
    load_model: str = "per-pod"
    prometheus_url: str = ""
    prometheus_rate_window: float = 60.0
    cloud_provider: str = ""  # kwok, aws or "" (groups by node labels)
    cloud_config: str = ""
    nodes: tuple[str, ...] = ()  # --nodes MIN:MAX:GROUP
    node_group_auto_discovery: tuple[str, ...] = ()
    aws_region: str = ""
    aws_endpoint_url: str = ""
    # The scenario's spec.autoscalers (the autoscalers found running or given, their flags).
    autoscalers: dict[str, Any] = field(default_factory=dict)
    managed: tuple[str, ...] = ()  # node groups a replayed autoscaler resizes
    provisioning: dict[str, dict[str, Any]] = field(default_factory=dict)  # by group, from the provider

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RecordSettings:
        known = {f.name for f in fields(cls)}
        values: dict[str, Any] = {
            k: (tuple(v) if isinstance(v, list) else v) for k, v in data.items() if k in known
        }
        return cls(**values)


@dataclass
class RecordState:
    """``recording.json``: the settings, the start (Unix seconds), the node groups, and how far the
    recording got (seconds from the start) with its pending pod-seconds then."""

    settings: RecordSettings
    start: float
    node_groups: list[dict[str, Any]] = field(default_factory=list)
    recorded_until: float = 0.0
    pending_pod_seconds: float = 0.0

    def to_text(self) -> str:
        data = {
            "format": FORMAT,
            "start": self.start,
            "recordedUntil": self.recorded_until,
            "pendingPodSeconds": self.pending_pod_seconds,
            "settings": self.settings.to_json(),
            "nodeGroups": self.node_groups,
        }
        return json.dumps(data, indent=1) + "\n"

    @classmethod
    def read(cls, path: Path) -> RecordState:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            if data.get("format") != FORMAT:
                raise StateError(f"{path}: format {data.get('format')!r}, this kubetide writes {FORMAT}")
            return cls(
                RecordSettings.from_json(data["settings"]),
                float(data["start"]),
                list(data.get("nodeGroups") or []),
                float(data.get("recordedUntil", 0.0)),
                float(data.get("pendingPodSeconds", 0.0)),
            )
        except StateError:
            raise
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
            raise StateError(f"cannot read {path}: {exc}") from None
