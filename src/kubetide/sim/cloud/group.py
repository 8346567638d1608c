"""The machine lifecycle of one simulated group: requested → running → registered → Ready → terminated.

:class:`SimGroup` owns the target size and the instances, and drives each instance through its steps on
the engine (``provisioning.delay``, ``registerDelay``, ``readyDelay``, then ``termination_delay`` after a
deletion), applying the group's faults on the way. It trusts its caller: the API checks (min/max, which
nodes, api errors) are in :mod:`kubetide.sim.cloud.nodegroup`.

Invariant: ``target >= `` the instances not being deleted (failed creations included); the difference
is the requests the cloud accepted but has not fulfilled (a silent stockout held them back). They are
launched as soon as no stockout stops them: on the next size change or when a stockout ends, as an
ASG keeps working towards its desired capacity.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import partial

import numpy as np

from kubetide.clock import VirtualClock
from kubetide.cloud.instance import ErrorClass, Instance, InstanceErrorInfo, InstanceState
from kubetide.sim.cloud import reasons as ev
from kubetide.sim.cloud.faults import FaultBook
from kubetide.sim.cloud.instances import InstanceNamer, SimInstance
from kubetide.sim.cloud.listener import CloudListener
from kubetide.sim.cloud.nodes import build_node
from kubetide.sim.scenario.resolved import ResolvedNodeGroup

__all__ = ["STOCKOUT_CODE", "SimGroup"]

STOCKOUT_CODE = "STOCKOUT"
EMPTY: Mapping[str, object] = {}


class SimGroup:
    def __init__(
        self,
        spec: ResolvedNodeGroup,
        faults: FaultBook,
        namer: InstanceNamer,
        engine: VirtualClock,
        listener: CloudListener,
        rng: np.random.Generator,
        termination_delay: float,
        owners: dict[str, str] | None = None,
        owners_by_provider_id: dict[str, str] | None = None,
    ) -> None:
        self.spec = spec
        self.faults = faults
        self._namer = namer
        self._engine = engine
        self._listener = listener
        self.rng = rng
        self._termination_delay = termination_delay
        self.target = 0
        self.live: dict[str, SimInstance] = {}  # by instance id, in creation order; not yet terminated
        # Live instance id -> group name, shared by the cloud's groups (its lookups by providerID).
        self._owners = owners if owners is not None else {}
        self._owners_by_pid = (
            owners_by_provider_id if owners_by_provider_id is not None else {}
        )  # the same by providerID
        self._shown: list[Instance] | None = None  # instances(), until an instance or its state changes
        self.closed_seconds = 0.0  # billed seconds of terminated instances
        self._running = 0  # live instances with running_at set (the timeline reads it every scrape)

    # --- queries

    def instances(self) -> list[Instance]:
        """The cloud API's list, the very same one while no instance came, went or changed state
        (never changed once handed out)."""
        if self._shown is None:
            self._shown = [inst.to_instance() for inst in self.live.values()]
        return self._shown

    def _changed(self) -> None:
        """An instance came, went, or changed its state or error: the next list is made anew."""
        self._shown = None

    def not_deleting(self) -> list[SimInstance]:
        return [i for i in self.live.values() if i.state is not InstanceState.Deleting]

    def failed(self) -> list[SimInstance]:
        return [i for i in self.live.values() if i.error_info is not None]

    def unfulfilled(self) -> int:
        return self.target - len(self.not_deleting())

    def running_count(self) -> int:
        return self._running

    def node_seconds(self, now: float) -> float:
        return self.closed_seconds + sum(i.up_seconds(now) for i in self.live.values())

    # --- start

    def start_initial(self, now: float) -> None:
        """``initialSize`` machines, running, registered and Ready at ``now``; faults do not touch them
        (they existed before the simulation)."""
        for _ in range(self.spec.initial_size):
            inst = self._new_instance(now)
            inst.state, inst.running_at = InstanceState.Running, now
            self._running += 1
            self._register(now, inst, ready=True, with_provider_id=True)
            inst.node_ready = True
            self._kubelet(now, ev.KubeletReason.NODE_READY, inst, ev.readiness_message(inst.node_name, True))
        self.target = self.spec.initial_size

    # --- size changes (checked by the caller)

    def reconcile(self, now: float) -> None:
        """Launch the unfulfilled requests unless a silent stockout holds them back."""
        missing = self.unfulfilled()
        if missing <= 0 or self.faults.stockout(now) == "silent":
            return
        for _ in range(missing):
            self._launch(now)

    def delete(self, instances: Iterable[SimInstance], now: float, requested_by: str) -> None:
        """Start deleting these (not yet deleting) instances; failed creations vanish at once."""
        for inst in instances:
            inst.cancel_pending()
            if inst.error_info is not None:
                self._terminate(now, inst, requested_by)
                continue
            inst.state = InstanceState.Deleting
            self._changed()
            inst.pending = self._engine.at(
                now + self._termination_delay,
                partial(self._terminate, inst=inst, requested_by=requested_by),
                name=f"cloud/terminate/{inst.short_id}",
            )

    def drop_failed(self, count: int, now: float, requested_by: str) -> None:
        """Forget ``count`` failed creations, oldest first (a target decrease that reached them)."""
        for inst in self.failed()[:count]:
            self._terminate(now, inst, requested_by)

    def attach(self, now: float, count: int) -> list[SimInstance]:
        """The ``attachInstance`` action: machines attached to the group by hand (AWS
        ``AttachInstances``: running at once, the desired capacity raised by as many, up to the group's
        maximum); no kubelet on them, so no Node ever registers (a bastion, another system's host)."""
        attached = []
        for _ in range(max(0, min(count, self.spec.max_size - self.target))):
            inst = self._new_instance(now)
            inst.state, inst.running_at = InstanceState.Running, now
            self._running += 1
            self.target += 1
            message = (
                f"Instance {inst.short_id} ({self.spec.instance_type}) was attached to group "
                f"{self.spec.name} by hand; it runs no kubelet"
            )
            self._cloud(now, ev.CloudReason.INSTANCE_CREATED, inst, message, {"attached": True})
            attached.append(inst)
        return attached

    # --- lifecycle steps

    def _new_instance(self, now: float) -> SimInstance:
        short_id, pid, name, addresses = self._namer.next()
        inst = SimInstance(short_id, pid, self.spec.name, name, addresses, requested_at=now)
        self.live[short_id] = inst
        self._owners[short_id] = self._owners_by_pid[pid] = self.spec.name
        self._changed()  # the callers set its first state before anything reads the list
        return inst

    def _launch(self, now: float) -> None:
        inst = self._new_instance(now)
        if self.faults.stockout(now) == "error":
            detail = (
                f"We currently do not have sufficient {self.spec.instance_type} capacity in the "
                f"Availability Zone you requested ({self.spec.zone})."
            )
            inst.error_info = InstanceErrorInfo(ErrorClass.OutOfResources, STOCKOUT_CODE, detail)
            message = ev.failed_message(inst.short_id, self.spec.name, STOCKOUT_CODE, detail)
            self._cloud(now, ev.CloudReason.INSTANCE_FAILED, inst, message)
            return
        inst.pending = self._engine.at(
            now + self.spec.provisioning.delay,
            lambda t: self._run(t, inst),
            name=f"cloud/run/{inst.short_id}",
        )

    def _run(self, now: float, inst: SimInstance) -> None:
        if inst.running_at is None:
            self._running += 1
        inst.state, inst.running_at, inst.pending = InstanceState.Running, now, None
        self._changed()
        message = ev.created_message(inst.short_id, self.spec.name, self.spec.instance_type)
        self._cloud(now, ev.CloudReason.INSTANCE_CREATED, inst, message)
        if self.faults.take_unregistered(now):
            return  # runs (and is billed) but its kubelet never registers
        inst.pending = self._engine.at(
            now + self.spec.provisioning.registerDelay,
            lambda t: self._register_step(t, inst),
            name=f"cloud/register/{inst.short_id}",
        )

    def _register_step(self, now: float, inst: SimInstance) -> None:
        with_id = not self.faults.take_missing_provider_id(now)
        self._register(now, inst, ready=False, with_provider_id=with_id)
        inst.pending = self._engine.at(
            now + self.spec.provisioning.readyDelay,
            lambda t: self._ready_step(t, inst),
            name=f"cloud/ready/{inst.short_id}",
        )

    def _register(self, now: float, inst: SimInstance, *, ready: bool, with_provider_id: bool) -> None:
        node = build_node(self.spec, inst, now, ready=ready, with_provider_id=with_provider_id)
        inst.has_node = inst.ever_registered = True
        self._listener.register_node(now, node, self.spec.name, inst.provider_id, inst.addresses)
        self._kubelet(now, ev.KubeletReason.NODE_REGISTERED, inst, ev.registered_message(inst.node_name))

    def _ready_step(self, now: float, inst: SimInstance) -> None:
        inst.pending = None
        self.set_ready(now, inst, True)

    def set_ready(self, now: float, inst: SimInstance, ready: bool) -> None:
        """Flip the Node's Ready condition (start-up, or a nodeNotReady fault and its end)."""
        inst.node_ready = ready
        self._listener.set_node_ready(now, inst.node_name, ready)
        reason = ev.KubeletReason.NODE_READY if ready else ev.KubeletReason.NODE_NOT_READY
        self._kubelet(now, reason, inst, ev.readiness_message(inst.node_name, ready))

    def remove_node_object(self, now: float, inst: SimInstance) -> None:
        """The Node object goes (``kubectl delete node``); the machine keeps running, unregistered."""
        if inst.state is not InstanceState.Deleting:
            inst.cancel_pending()  # then a pending step can only be the Ready flip of this Node
        inst.has_node = inst.node_ready = False
        self._listener.node_deleted(now, inst.node_name)

    def _terminate(self, now: float, inst: SimInstance, requested_by: str) -> None:
        inst.pending = None
        inst.terminated_at = now
        del self.live[inst.short_id]
        del self._owners[inst.short_id]
        del self._owners_by_pid[inst.provider_id]
        self._changed()
        if inst.running_at is not None:
            self._running -= 1
        self.closed_seconds += inst.up_seconds(now)
        if inst.has_node:
            inst.has_node = inst.node_ready = False
            self._listener.node_deleted(now, inst.node_name)
        message = ev.terminated_message(inst.short_id, self.spec.name, requested_by)
        self._cloud(now, ev.CloudReason.INSTANCE_TERMINATED, inst, message, {"reason": requested_by})

    # --- events

    def _cloud(
        self, now: float, reason: str, inst: SimInstance, message: str, extra: Mapping[str, object] = EMPTY
    ) -> None:
        data = {"group": self.spec.name, "instance": inst.provider_id, **extra}
        self._listener.cloud_event(now, reason, ev.instance_object(inst.short_id), message, data)

    def _kubelet(self, now: float, reason: str, inst: SimInstance, message: str) -> None:
        data = {"group": self.spec.name, "node": inst.node_name, "instance": inst.provider_id}
        self._listener.kubelet_event(now, reason, ev.node_object(inst.node_name), message, data)
