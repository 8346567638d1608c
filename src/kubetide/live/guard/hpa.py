"""The HPA controller's writes through the gate: the scale subresource, the HPAs' status and the
memory ConfigMap.

Refused once this replica stops leading (the rest of the loop is abandoned, each HPA reporting it). In a
dry run the scale write is said and reported as done, so the decision, its Events and the log say what
would have happened; the status write, made every sync, and the memory's, made every period, are
counted and logged at debug level only (a dry run's memory follows decisions nobody acted on: a real
controller restoring it would remember what never happened).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from kubetide.hpa.driver import HPASource, StatusWriteError
from kubetide.hpa.ports import Scale, ScaleError, ScaleTargetPort
from kubetide.live.guard.gate import WriteGate
from kubetide.live.hpa.memory_configmap import MemoryConfigMap, MemoryStoreError, StoredMemory
from kubetide.model.errors import ManifestError
from kubetide.model.hpa import HPA, CrossVersionObjectReference, HPAStatus
from kubetide.model.pod import Pod
from kubetide.model.selectors import LabelSelector

__all__ = ["GuardedHPAs", "GuardedMemoryConfigMap", "GuardedScaleTargets"]


def _scale_lost() -> ScaleError:
    return ScaleError("not the leader any more: scale not written")


def _status_lost() -> StatusWriteError:
    return StatusWriteError("not the leader any more: status not written")


class GuardedScaleTargets:
    """A :class:`ScaleTargetPort` whose scale writes go through the gate; reads pass."""

    def __init__(self, inner: ScaleTargetPort, gate: WriteGate) -> None:
        self._inner = inner
        self._gate = gate

    def get_scale(self, namespace: str, ref: CrossVersionObjectReference) -> Scale:
        return self._inner.get_scale(namespace, ref)

    def list_pods(self, namespace: str, selector: LabelSelector) -> Sequence[Pod]:
        return self._inner.list_pods(namespace, selector)

    def update_scale(self, namespace: str, ref: CrossVersionObjectReference, replicas: int) -> None:
        what = f"scale {ref.kind}/{namespace}/{ref.name} to {replicas}"
        if self._gate.admit("update_scale", what, _scale_lost):
            self._inner.update_scale(namespace, ref, replicas)


class GuardedHPAs:
    """An :class:`HPASource` whose status writes go through the gate; the listing passes."""

    def __init__(self, inner: HPASource, gate: WriteGate) -> None:
        self._inner = inner
        self._gate = gate

    def list_hpas(self) -> Mapping[str, HPA | ManifestError]:
        return self._inner.list_hpas()

    def write_status(self, hpa: HPA, status: HPAStatus) -> None:
        what = f"write the status of HorizontalPodAutoscaler {hpa.key}"
        if self._gate.admit("update_status", what, _status_lost, quiet=True):
            self._inner.write_status(hpa, status)


def _memory_lost() -> MemoryStoreError:
    return MemoryStoreError("not the leader any more: memory not written")


class GuardedMemoryConfigMap:
    """The memory ConfigMap, written through the gate; reading it passes."""

    def __init__(self, inner: MemoryConfigMap, gate: WriteGate) -> None:
        self._inner = inner
        self._gate = gate

    @property
    def where(self) -> str:
        return self._inner.where

    def read(self) -> StoredMemory | None:
        return self._inner.read()

    def write(self, data: Mapping[str, str], written_at: str) -> None:
        what = f"write the HPAs' memory to {self._inner.where}"
        if self._gate.admit("write_memory", what, _memory_lost, quiet=True):
            self._inner.write(data, written_at)
