"""Per-pod usage from the ``kubetide.io/usage`` annotation, served in the kubelet's resource-metrics format.

A pod's annotation (``{"cpu": "450m", "memory": "200Mi"}``) is its current usage; it is split across the
containers in proportion to their requests (equally when none requests that resource). Memory is a gauge.
CPU is a counter of core-seconds, as the kubelet's: the ledger integrates each container's rate over
time, advancing with the *previous* rate up to now before it takes a new one, so ``rate()`` over it gives
the annotated value once the window holds only samples after a change. Node counters integrate the sum of
their pods' rates and keep what finished pods used, so they never go down.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field

from kubetide.live.agent.api import Obj
from kubetide.model.quantity import QuantityError, parse_quantity

__all__ = ["USAGE_ANNOTATION", "PodUsage", "UsageLedger", "container_usage"]

USAGE_ANNOTATION = "kubetide.io/usage"


@dataclass(frozen=True, slots=True)
class PodUsage:
    """One running pod's identity and its containers' usage: cores and working-set bytes."""

    namespace: str
    name: str
    uid: str
    node: str
    containers: tuple[tuple[str, float, float], ...]  # (container, cpu cores, memory bytes)


def _annotated(pod: Obj) -> tuple[float, float]:
    text = ((pod.get("metadata") or {}).get("annotations") or {}).get(USAGE_ANNOTATION)
    if not text:
        return 0.0, 0.0
    try:
        data = json.loads(text)
        cpu = parse_quantity(data.get("cpu", 0)).as_float() if isinstance(data, dict) else 0.0
        memory = parse_quantity(data.get("memory", 0)).as_float() if isinstance(data, dict) else 0.0
    except (ValueError, QuantityError, AttributeError):
        return 0.0, 0.0  # a bad annotation reads as no usage, never as a failed scrape
    return max(cpu, 0.0), max(memory, 0.0)


def _request(container: Obj, resource: str) -> float:
    value = ((container.get("resources") or {}).get("requests") or {}).get(resource)
    if value is None:
        return 0.0
    try:
        return parse_quantity(value).as_float()
    except QuantityError:
        return 0.0


def _split(total: float, weights: list[float]) -> list[float]:
    if not weights:
        return []
    whole = sum(weights)
    if whole <= 0:
        return [total / len(weights)] * len(weights)
    return [total * w / whole for w in weights]


def container_usage(pod: Obj) -> PodUsage:
    meta = pod.get("metadata") or {}
    containers = list((pod.get("spec") or {}).get("containers") or [])
    cpu, memory = _annotated(pod)
    cpus = _split(cpu, [_request(c, "cpu") for c in containers])
    memories = _split(memory, [_request(c, "memory") for c in containers])
    return PodUsage(
        namespace=str(meta.get("namespace", "")),
        name=str(meta.get("name", "")),
        uid=str(meta.get("uid", "")),
        node=str((pod.get("spec") or {}).get("nodeName", "")),
        containers=tuple((str(c.get("name", "")), cpus[i], memories[i]) for i, c in enumerate(containers)),
    )


@dataclass(slots=True)
class _Counter:
    rate: float  # cores now
    total: float = 0.0  # core-seconds so far


@dataclass
class UsageLedger:
    """CPU counters per container and node, advanced on every ``update``; thread-safe."""

    _containers: dict[tuple[str, str], _Counter] = field(default_factory=dict)
    _nodes: dict[str, float] = field(default_factory=dict)
    _pods: list[PodUsage] = field(default_factory=list)
    _last: float | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def update(self, now: float, running: Iterable[PodUsage], nodes: Iterable[str]) -> None:
        """Advance every counter to ``now`` at its previous rate, then take the new rates."""
        with self._lock:
            elapsed = 0.0 if self._last is None else max(0.0, now - self._last)
            self._last = now
            for pod in self._pods:
                for container, _cpu, _mem in pod.containers:
                    counter = self._containers.get((pod.uid, container))
                    if counter is not None:
                        delta = counter.rate * elapsed
                        counter.total += delta
                        self._nodes[pod.node] = self._nodes.get(pod.node, 0.0) + delta
            pods = list(running)
            alive: dict[tuple[str, str], _Counter] = {}
            for pod in pods:
                for container, cpu, _mem in pod.containers:
                    counter = self._containers.get((pod.uid, container)) or _Counter(rate=cpu)
                    counter.rate = cpu
                    alive[(pod.uid, container)] = counter
            self._containers = alive
            self._pods = pods
            owned = set(nodes)
            self._nodes = {n: self._nodes.get(n, 0.0) for n in owned}

    def render(self) -> str:
        """The ``/metrics/resource`` text, every sample stamped with the last update (milliseconds)."""
        with self._lock:
            stamp = int((self._last or 0.0) * 1000)
            return _render(self._pods, self._containers, self._nodes, stamp)


def _labels(**values: str) -> str:
    def escape(text: str) -> str:
        return text.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')

    return "{" + ",".join(f'{k}="{escape(v)}"' for k, v in values.items()) + "}"


def _family(name: str, kind: str, help_text: str, samples: list[tuple[str, float]], stamp: int) -> list[str]:
    lines = [f"# HELP {name} [ALPHA] {help_text}", f"# TYPE {name} {kind}"]
    lines += [f"{name}{labels} {value!r} {stamp}" for labels, value in samples]
    return lines


def _render(
    pods: list[PodUsage], counters: dict[tuple[str, str], _Counter], nodes: dict[str, float], stamp: int
) -> str:
    c_cpu, c_mem, p_cpu, p_mem = [], [], [], []
    node_mem: dict[str, float] = dict.fromkeys(nodes, 0.0)
    for pod in sorted(pods, key=lambda p: (p.namespace, p.name)):
        pod_cpu = pod_mem = 0.0
        for container, _cpu, memory in pod.containers:
            counter = counters.get((pod.uid, container))
            total = counter.total if counter is not None else 0.0
            labels = _labels(container=container, namespace=pod.namespace, pod=pod.name)
            c_cpu.append((labels, total))
            c_mem.append((labels, memory))
            pod_cpu += total
            pod_mem += memory
        labels = _labels(namespace=pod.namespace, pod=pod.name)
        p_cpu.append((labels, pod_cpu))
        p_mem.append((labels, pod_mem))
        if pod.node in node_mem:
            node_mem[pod.node] += pod_mem
    # One agent serves every node it owns, so node samples carry a ``node`` label (a kubelet's don't).
    n_cpu = [(_labels(node=n), nodes[n]) for n in sorted(nodes)]
    n_mem = [(_labels(node=n), node_mem[n]) for n in sorted(nodes)]
    lines: list[str] = []
    lines += _family(
        "container_cpu_usage_seconds_total",
        "counter",
        "Cumulative cpu time consumed by the container in core-seconds",
        c_cpu,
        stamp,
    )
    lines += _family(
        "container_memory_working_set_bytes",
        "gauge",
        "Current working set of the container in bytes",
        c_mem,
        stamp,
    )
    lines += _family(
        "node_cpu_usage_seconds_total",
        "counter",
        "Cumulative cpu time consumed by the node in core-seconds",
        n_cpu,
        stamp,
    )
    lines += _family(
        "node_memory_working_set_bytes", "gauge", "Current working set of the node in bytes", n_mem, stamp
    )
    lines += _family(
        "pod_cpu_usage_seconds_total",
        "counter",
        "Cumulative cpu time consumed by the pod in core-seconds",
        p_cpu,
        stamp,
    )
    lines += _family(
        "pod_memory_working_set_bytes", "gauge", "Current working set of the pod in bytes", p_mem, stamp
    )
    lines += [
        "# HELP scrape_error [ALPHA] 1 if there was an error while getting container metrics, 0 otherwise",
        "# TYPE scrape_error gauge",
        "scrape_error 0",
    ]
    return "\n".join(lines) + "\n"
