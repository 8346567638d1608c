"""The status ConfigMap's value (CA 1.30+, ``cluster-autoscaler-status``), as pure values and text.

Upstream's ``ClusterStateRegistry.GetStatus`` builds a ``clusterstate/api.ClusterAutoscalerStatus``
every loop and ``WriteStatusConfigMap`` marshals it with ``gopkg.in/yaml.v2`` into ``data.status``,
with the time in the ``cluster-autoscaler.kubernetes.io/last-updated`` annotation. Users and tools
parse that text, so :func:`render_status_yaml` reproduces yaml.v2's output of those Go types: fields
in declaration order under their yaml tags, ``omitempty`` fields (zero structs, zero ints, zero times)
left out, times as RFC 3339 strings (``metav1.Time`` marshals through ``time.Time.MarshalText``, and
yaml.v2 double-quotes a string that would read back as a timestamp), sequences not indented, long
messages folded as libyaml folds them past 80 columns.

:class:`StatusTracker` keeps the previous status, because each condition's ``lastTransitionTime`` is
the probe time of the loop where its status last changed (as upstream, a restart starts afresh).
Times are floats (seconds since the Unix epoch) in and RFC 3339 out; no clock is read here.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from kubetide.cloud.provider import NodeGroup
from kubetide.cluster.capacity.quotas.controller import format_amount
from kubetide.cluster.capacity.report import QuotaReport
from kubetide.cluster.clusterstate.readiness import Readiness
from kubetide.cluster.clusterstate.registry import ClusterStateRegistry

__all__ = [
    "LAST_UPDATED_ANNOTATION",
    "ClusterAutoscalerStatus",
    "ClusterWideStatus",
    "Condition",
    "NodeCount",
    "NodeGroupStatus",
    "StatusTracker",
    "build_status",
    "format_last_updated",
    "format_rfc3339",
    "render_status_config_map",
    "render_status_yaml",
]

LAST_UPDATED_ANNOTATION = "cluster-autoscaler.kubernetes.io/last-updated"
MAX_ERROR_MESSAGE_SIZE = 500  # upstream's maxErrorMessageSize for backoffInfo.errorMessage


@dataclass(frozen=True, slots=True)
class NodeCount:
    """``api.NodeCount`` (registered: total, ready, notStarted, beingDeleted, unready)."""

    total: int = 0
    ready: int = 0
    not_started: int = 0
    being_deleted: int = 0
    unready: int = 0
    resource_unready: int = 0
    long_unregistered: int = 0
    unregistered: int = 0

    @classmethod
    def of(cls, r: Readiness) -> NodeCount:
        return cls(
            len(r.registered),
            len(r.ready),
            len(r.not_started),
            len(r.deleted),
            len(r.unready),
            len(r.resource_unready),
            len(r.long_unregistered),
            len(r.unregistered),
        )


@dataclass(frozen=True, slots=True)
class Condition:
    """One condition: ``status`` with its probe and transition times; the extra fields are used by the
    kinds that have them (health: node counts and, per group, target/min/max; scale-up per group:
    backoff info; scale-down: candidates)."""

    status: str
    last_probe_time: float | None = None
    last_transition_time: float | None = None
    node_counts: NodeCount | None = None
    cloud_provider_target: int = 0
    min_size: int = 0
    max_size: int = 0
    backoff_error_code: str = ""
    backoff_error_message: str = ""
    candidates: int = 0


@dataclass(frozen=True, slots=True)
class ClusterWideStatus:
    health: Condition
    scale_up: Condition
    scale_down: Condition


@dataclass(frozen=True, slots=True)
class NodeGroupStatus:
    name: str
    health: Condition
    scale_up: Condition
    scale_down: Condition


@dataclass(frozen=True, slots=True)
class ClusterAutoscalerStatus:
    """``api.ClusterAutoscalerStatus``; ``time`` is filled in when it is written (the annotation's)."""

    cluster_wide: ClusterWideStatus
    node_groups: tuple[NodeGroupStatus, ...] = ()
    autoscaler_status: str = "Running"
    message: str = ""
    # kubetide: the CapacityQuotas' limits, usage and what is left (after nodeGroups; none: not written).
    capacity_quotas: tuple[QuotaReport, ...] = ()


def _transition(status: str, now: float, last: Condition | None) -> float:
    """Since when the condition has had ``status``: kept while it holds, ``now`` when it changes."""
    if last is not None and last.status == status and last.last_transition_time is not None:
        return last.last_transition_time
    return now


def build_status(
    registry: ClusterStateRegistry,
    groups: Sequence[NodeGroup],
    candidates: Mapping[str, Sequence[str]],
    now: float,
    last: ClusterAutoscalerStatus | None = None,
) -> ClusterAutoscalerStatus:
    """``GetStatus(now)``: per group health, scale-up and scale-down, then the cluster-wide ones."""
    previous = {g.name: g for g in last.node_groups} if last is not None else {}
    out: list[NodeGroupStatus] = []
    for group in groups:
        gid = group.id()
        before = previous.get(gid)
        readiness = registry.per_group_readiness.get(gid, Readiness())
        acceptable = registry.acceptable_ranges.get(gid)
        healthy = "Healthy" if registry.is_node_group_healthy(gid) else "Unhealthy"
        health = Condition(
            healthy,
            now,
            _transition(healthy, now, before.health if before else None),
            NodeCount.of(readiness),
            acceptable.current_target if acceptable is not None else 0,
            group.min_size(),
            group.max_size(),
        )
        backoff = registry.backoff.status(gid, now)
        code = message = ""
        if registry.is_node_group_scaling_up(gid):
            up = "InProgress"
        elif not registry.is_node_group_healthy(gid):
            up = "Unhealthy"
        elif backoff.backed_off:
            up = "Backoff"
            if backoff.error_info is not None:
                code = backoff.error_info.error_code
                message = backoff.error_info.error_message[:MAX_ERROR_MESSAGE_SIZE]
        else:
            up = "NoActivity"
        scale_up = Condition(
            up,
            now,
            _transition(up, now, before.scale_up if before else None),
            backoff_error_code=code,
            backoff_error_message=message,
        )
        n = len(candidates.get(gid, ()))
        down = "CandidatesPresent" if n > 0 else "NoCandidates"
        scale_down = Condition(
            down, now, _transition(down, now, before.scale_down if before else None), candidates=n
        )
        out.append(NodeGroupStatus(gid, health, scale_up, scale_down))
    wide_before = last.cluster_wide if last is not None else None
    health_status = "Healthy" if registry.is_cluster_healthy() else "Unhealthy"
    up_status = "InProgress" if any(g.scale_up.status == "InProgress" for g in out) else "NoActivity"
    total = sum(len(v) for v in candidates.values())
    down_status = "CandidatesPresent" if total > 0 else "NoCandidates"
    wide = ClusterWideStatus(
        Condition(
            health_status,
            now,
            _transition(health_status, now, wide_before.health if wide_before else None),
            NodeCount.of(registry.total_readiness),
        ),
        Condition(up_status, now, _transition(up_status, now, wide_before.scale_up if wide_before else None)),
        Condition(
            down_status,
            now,
            _transition(down_status, now, wide_before.scale_down if wide_before else None),
            candidates=total,
        ),
    )
    return ClusterAutoscalerStatus(wide, tuple(out))


@dataclass
class StatusTracker:
    """The last status, for the transition times (``csr.lastStatus`` upstream)."""

    last: ClusterAutoscalerStatus | None = field(default=None)

    def update(
        self,
        registry: ClusterStateRegistry,
        groups: Sequence[NodeGroup],
        candidates: Mapping[str, Sequence[str]],
        now: float,
    ) -> ClusterAutoscalerStatus:
        self.last = build_status(registry, groups, candidates, now, self.last)
        return self.last


# -- times -----------------------------------------------------------------------------------------


def _split(now: float) -> tuple[datetime, str]:
    """The UTC time and Go's ``.999999999`` fraction (trailing zeros trimmed, no dot when zero).

    A float of seconds since the epoch carries about 0.2 µs today, so the fraction is rounded to
    microseconds: nanosecond digits would be noise.
    """
    micros = round(now * 1_000_000)
    seconds, frac = divmod(micros, 1_000_000)
    when = datetime.fromtimestamp(seconds, UTC)
    digits = f"{frac:06d}".rstrip("0")
    return when, f".{digits}" if digits else ""


def format_rfc3339(now: float) -> str:
    """``time.RFC3339Nano`` in UTC, as ``metav1.Time`` marshals to text: ``2024-05-15T09:20:37.5Z``."""
    when, frac = _split(now)
    return when.strftime("%Y-%m-%dT%H:%M:%S") + frac + "Z"


def format_last_updated(now: float) -> str:
    """CA's ``ConfigMapLastUpdateFormat`` (``2006-01-02 15:04:05.999999999 -0700 MST``) in UTC."""
    when, frac = _split(now)
    return when.strftime("%Y-%m-%d %H:%M:%S") + frac + " +0000 UTC"


# -- yaml.v2 rendering -----------------------------------------------------------------------------

Tree = list[tuple[str, object]]  # an ordered mapping, as yaml.v2 writes a struct


def _node_count(c: NodeCount) -> Tree:
    registered: Tree = [("total", c.total), ("ready", c.ready), ("notStarted", c.not_started)]
    if c.being_deleted:
        registered.append(("beingDeleted", c.being_deleted))
    if c.unready or c.resource_unready:
        registered.append(("unready", [("total", c.unready), ("resourceUnready", c.resource_unready)]))
    out: Tree = []
    # omitempty on a struct: yaml.v2 leaves it out when every field is zero.
    if any(v != 0 for _, v in registered if isinstance(v, int)) or len(registered) > 3:
        out.append(("registered", registered))
    out += [("longUnregistered", c.long_unregistered), ("unregistered", c.unregistered)]
    return out


def _times(c: Condition) -> Tree:
    out: Tree = []
    if c.last_probe_time is not None:
        out.append(("lastProbeTime", format_rfc3339(c.last_probe_time)))
    if c.last_transition_time is not None:
        out.append(("lastTransitionTime", format_rfc3339(c.last_transition_time)))
    return out


def _with_counts(c: Condition) -> Tree:
    counts = _node_count(c.node_counts or NodeCount())
    return [("nodeCounts", counts)] if counts != [("longUnregistered", 0), ("unregistered", 0)] else []


def _cluster_health(c: Condition) -> Tree:
    return [("status", c.status), *_with_counts(c), *_times(c)]


def _group_health(c: Condition) -> Tree:
    return [
        ("status", c.status),
        *_with_counts(c),
        ("cloudProviderTarget", c.cloud_provider_target),
        ("minSize", c.min_size),
        ("maxSize", c.max_size),
        *_times(c),
    ]


def _scale_up(c: Condition, per_group: bool) -> Tree:
    out: Tree = [("status", c.status)]
    if per_group and (c.backoff_error_code or c.backoff_error_message):
        info: Tree = []
        if c.backoff_error_code:
            info.append(("errorCode", c.backoff_error_code))
        if c.backoff_error_message:
            info.append(("errorMessage", c.backoff_error_message))
        out.append(("backoffInfo", info))
    return out + _times(c)


def _scale_down(c: Condition) -> Tree:
    out: Tree = [("status", c.status)]
    if c.candidates:
        out.append(("candidates", c.candidates))
    return out + _times(c)


def status_tree(status: ClusterAutoscalerStatus, now: float) -> Tree:
    """The ordered fields yaml.v2 writes for ``api.ClusterAutoscalerStatus`` with ``Time`` set."""
    w = status.cluster_wide
    out: Tree = [("time", format_last_updated(now)), ("autoscalerStatus", status.autoscaler_status)]
    if status.message:
        out.append(("message", status.message))
    out.append(
        (
            "clusterWide",
            [
                ("health", _cluster_health(w.health)),
                ("scaleUp", _scale_up(w.scale_up, False)),
                ("scaleDown", _scale_down(w.scale_down)),
            ],
        )
    )
    if status.node_groups:
        groups = [
            [
                ("name", g.name),
                ("health", _group_health(g.health)),
                ("scaleUp", _scale_up(g.scale_up, True)),
                ("scaleDown", _scale_down(g.scale_down)),
            ]
            for g in status.node_groups
        ]
        out.append(("nodeGroups", groups))
    if status.capacity_quotas:
        out.append(("capacityQuotas", [_quota(q) for q in status.capacity_quotas]))
    return out


def _amounts(values: Mapping[str, int]) -> Tree:
    return [(r, format_amount(r, v * 1000 if r == "cpu" else v)) for r, v in sorted(values.items())]


def _quota(q: QuotaReport) -> Tree:
    """kubetide: one CapacityQuota (cpu in cores, memory in bytes, as the quota counts them)."""
    out: Tree = [("name", q.id), ("limits", _amounts(q.limits)), ("used", _amounts(q.used))]
    out.append(("left", _amounts(q.left)))
    if q.minimums:
        out.append(("minimums", _amounts(q.minimums)))
    return out


def render_status_yaml(status: ClusterAutoscalerStatus, now: float) -> str:
    """``data.status`` as CA writes it at ``now`` (the same time as :func:`format_last_updated`)."""
    lines: list[str] = []
    _emit_map(status_tree(status, now), 0, lines, first_prefix=None)
    return "\n".join(lines) + "\n"


def _emit_map(tree: Tree, indent: int, lines: list[str], first_prefix: str | None) -> None:
    pad = " " * indent
    for i, (key, value) in enumerate(tree):
        head = first_prefix if (i == 0 and first_prefix is not None) else pad
        if isinstance(value, list) and value and isinstance(value[0], list):
            lines.append(f"{head}{key}:")
            for item in value:  # yaml.v2 does not indent a sequence under its key
                _emit_map(item, indent + 2, lines, first_prefix=pad + "- ")
        elif isinstance(value, list):
            lines.append(f"{head}{key}:" if value else f"{head}{key}: {{}}")
            _emit_map(value, indent + 2, lines, first_prefix=None)
        else:
            start = f"{head}{key}: "
            lines.append(start + _fold(_scalar(value), len(start), indent + 2))


_PLAIN_UNSAFE_START = set("-?:,[]{}#&*!|>'\"%@`")
_NON_STRING = re.compile(
    r"""^(?:~|null|Null|NULL|y|Y|yes|Yes|YES|n|N|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF
    |[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+|[-+]?0[0-7_]+|[-+]?0b[01_]+
    |[-+]?(?:[0-9][0-9_]*)?\.[0-9_]*(?:[eE][-+]?[0-9]+)?|[-+]?[0-9][0-9_]*(?:[eE][-+]?[0-9]+)
    |[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)
    |\d{4}-\d{1,2}-\d{1,2}(?:[Tt ]\d{1,2}:\d{1,2}:\d{1,2}(?:\.\d*)?(?:Z|[-+]\d{2}:\d{2})?)?)$""",
    re.VERBOSE,
)


BEST_WIDTH = 80  # libyaml's (and yaml.v2's) default line width


def _fold(text: str, column: int, indent: int) -> str:
    """Break a plain or single-quoted scalar as libyaml's emitter does: at the first single space met
    once the line is past ``BEST_WIDTH`` (never at the first or last character, nor before another
    space), continuing on a new line at ``indent``. Double-quoted scalars here are short timestamps."""
    if text.startswith('"') or len(text) + column <= BEST_WIDTH:
        return text
    quoted = text.startswith("'")
    out: list[str] = []
    col = column
    spaces = False
    for i, ch in enumerate(text):
        inner = not quoted or 0 < i < len(text) - 1
        if ch == " " and inner:
            nxt = text[i + 1] if i + 1 < len(text) else ""
            edge = quoted and (i == 1 or i == len(text) - 2)
            if not spaces and col > BEST_WIDTH and nxt != " " and not edge:
                out.append("\n" + " " * indent)
                col = indent
            else:
                out.append(ch)
                col += 1
            spaces = True
        else:
            out.append(ch)
            col += 1
            spaces = False
    return "".join(out)


def _scalar(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    s = str(value)
    if _NON_STRING.match(s):
        # A string that would read back as another type (a timestamp, a number): double-quoted.
        return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if (
        not s
        or s[0] in _PLAIN_UNSAFE_START
        or s[0] == " "
        or s[-1] == " "
        or ": " in s
        or " #" in s
        or s.endswith(":")
        or "\n" in s
    ):
        return "'" + s.replace("'", "''") + "'"
    return s


LAST_UPDATED_ANNOTATION = "cluster-autoscaler.kubernetes.io/last-updated"


def render_status_config_map(status: ClusterAutoscalerStatus, now: float, namespace: str, name: str) -> str:
    """The whole ConfigMap as ``kubectl get configmap NAME -o yaml`` shows what CA wrote at ``now``:
    the status YAML under ``data.status`` (a literal block) and the last-updated annotation."""
    body = render_status_yaml(status, now)
    indented = "".join(f"    {line}\n" if line else "\n" for line in body.splitlines())
    return (
        "apiVersion: v1\n"
        "kind: ConfigMap\n"
        "metadata:\n"
        f"  name: {name}\n"
        f"  namespace: {namespace}\n"
        "  annotations:\n"
        f'    {LAST_UPDATED_ANNOTATION}: "{format_last_updated(now)}"\n'
        "data:\n"
        "  status: |\n"
        f"{indented}"
    )
