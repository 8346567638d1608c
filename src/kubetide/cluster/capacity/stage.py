"""The capacity APIs in the cluster autoscaler's loop: the few narrow entry points the loop calls.

:class:`CapacityStage` is made once per autoscaler process when a capacity flag is on
(:meth:`CapacityStage.from_options`; all off, the loop is CA's without it), and the loop calls, in
upstream's order:

1. :meth:`~CapacityStage.begin` at the start (loop-start observers and the controllers): ProvisioningRequest
   bookings expire and stale requests fail; the CapacityQuota controller keeps each quota's status; the
   CapacityBuffer controller translates each buffer into a managed PodTemplate and a number of chunks.
2. :meth:`~CapacityStage.pending` once the filter of schedulable pods has run (the pod list processors):
   buffer pods are injected, placed after the real pods (the lowest priority: they keep the nodes they
   fit on from scale-down) and those that fit nowhere join the pods to help; pending pods that consume
   a ProvisioningRequest leave them; the next request's pods join them; Provisioned requests' capacity
   is booked in the snapshot.
3. :meth:`~CapacityStage.decide_scale_up` instead of the plain scale-up decision (``WrapperOrchestrator``):
   the CapacityQuotas join the scale-up's limits; when ProvisioningRequest pods are pending, loops
   alternate between serving requests (check-capacity, then best-effort-atomic, all or nothing) and
   the other pods.
4. :meth:`~CapacityStage.after_scale_up` once it ran: an atomic request's outcome, the buffers' events
   (the fake pods' own events dropped, as ``FakePodsScaleUpStatusProcessor`` does).
5. :meth:`~CapacityStage.min_quotas` for scale-down (kubetide's CapacityQuota minimums), and
   :meth:`~CapacityStage.finish` at the end: the status writes and the loop's report.

The stage writes nothing itself: its writes go into ``LoopResult.capacity_writes`` for the driver.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

from kubetide.cluster.capacity.buffers.controller import Memo, translate_buffers
from kubetide.cluster.capacity.buffers.injection import BufferPodMaker
from kubetide.cluster.capacity.objects import CapacityObjects, CapacityWrite
from kubetide.cluster.capacity.provisioning.classes import atomic_outcome, atomic_pods_left, check_capacity
from kubetide.cluster.capacity.provisioning.delivery import PARTIAL_REASON, Delivery, judge, start_delivery
from kubetide.cluster.capacity.provisioning.injector import RequestInjector
from kubetide.cluster.capacity.provisioning.lifecycle import book_capacity, drop_consuming_pods, refresh
from kubetide.cluster.capacity.provisioning.requests import (
    RequestState,
    consumed_request,
    supported_check_capacity_class,
)
from kubetide.cluster.capacity.quotas.controller import quota_status_writes
from kubetide.cluster.capacity.quotas.tracker import QuotaTracker
from kubetide.cluster.capacity.report import BufferReport, CapacityReport, QuotaReport, RequestReport
from kubetide.cluster.loop.outcome import LoopOutcome
from kubetide.cluster.loop.plan import PartialDeliveryRemoval, PartialDeliveryRemovals
from kubetide.cluster.loop.result import LoopResult
from kubetide.cluster.loop.scaleup_decision import ScaleUpDecision
from kubetide.cluster.loop.timing import FunctionTimer
from kubetide.cluster.loop.view import LoopView
from kubetide.cluster.loop.world import CAEvent
from kubetide.cluster.options import AutoscalingOptions
from kubetide.cluster.reasons import EventReason, ScaleUpResult, UnremovableReason
from kubetide.cluster.scaleup.limits import UnknownGpuTarget, gpu_target, node_resources
from kubetide.cluster.scaleup.orchestrator import ScaleUpPlan, ScaleUpSettings
from kubetide.model.capacity.buffer import BufferStatus
from kubetide.model.capacity.provisioning import ATOMIC_CLASS, PROVISIONED
from kubetide.model.node import NodeView
from kubetide.model.pod import Pod
from kubetide.scheduling.hinting import HintingSimulator
from kubetide.scheduling.snapshot import ClusterSnapshot

__all__ = ["CapacityStage", "Decide"]

# decide(pods, settings, force): the loop's own scale-up decision for ``pods``; ``force``: even when
# CA's shouldScaleUp says no (ScaleUpEnforcer: ProvisioningRequest pods are pending).
Decide = Callable[[list[Pod], ScaleUpSettings, bool], ScaleUpDecision]
MinimumCheck = Callable[[NodeView], UnremovableReason | None]
_EMPTY = CapacityObjects()
_INVALID_OBJECT = "InvalidCapacityObject"
PROVREQ_MODE = "provisioning-requests"


class CapacityStage:
    """The capacity features of one autoscaler process: what they keep between loops."""

    def __init__(self, options: AutoscalingOptions) -> None:
        o = options
        self.options = o
        self.buffer_controller = o.capacity_buffer_controller_enabled
        self.buffer_injection = o.capacity_buffer_pod_injection_enabled
        self.quotas_enabled = o.capacity_quotas_enabled
        self.requests_enabled = o.enable_provisioning_requests
        self.injector = RequestInjector(
            o.provisioning_request_initial_backoff_time,
            o.provisioning_request_max_backoff_time,
            o.provisioning_request_max_backoff_cache_size,
            batch_processing=o.check_capacity_batch_processing,
            processor_instance=o.check_capacity_processor_instance,
        )
        self._maker = BufferPodMaker()
        self._translated: Memo = {}  # the buffer controller's last answers
        # Each simulation keeps its own hints (upstream's processors each have a HintingSimulator).
        self._buffer_sim = HintingSimulator()
        self._booking_sim = HintingSimulator()
        self._request_sim = HintingSimulator()
        self._request_mode = False  # WrapperOrchestrator.ProvisioningRequestScaleUpMode
        self._said: dict[str, str] = {}  # broken object -> the problem last reported
        self._notices: list[CAEvent] = []  # events pending() said, for the loop to carry out
        self._begun = False  # begin() ran in this loop
        # Atomic requests' scale-ups whose nodes have not all registered (by request), and each
        # group's latest failed scale-up as the cluster state found it.
        self._deliveries: dict[str, Delivery] = {}
        self._failed_at: dict[str, float] = {}
        # The group's --max-node-provision-time (the autoscaler passes each group's own option).
        self.provision_time: Callable[[str], float] = lambda _group: o.max_node_provision_time
        self._reset(_EMPTY, 0.0)

    @classmethod
    def from_options(cls, options: AutoscalingOptions) -> CapacityStage | None:
        o = options
        enabled = (
            o.capacity_buffer_controller_enabled
            or o.capacity_buffer_pod_injection_enabled
            or o.capacity_quotas_enabled
            or o.enable_provisioning_requests
        )
        return cls(options) if enabled else None

    def _reset(self, objects: CapacityObjects, now: float) -> None:
        self.objects = objects
        self.now = now
        self._writes: list[CapacityWrite] = []
        self._states: list[RequestState] = []
        self._buffer_statuses: Mapping[str, BufferStatus] = {}
        self._fake_groups: Mapping[str, Sequence[Pod]] = {}  # each buffer's fake pods this loop
        self._request_pods: frozenset[str] = frozenset()
        self._buffers: list[BufferReport] = []
        self._atomic: RequestState | None = None
        self._mode = ""
        self._quotas: tuple[QuotaReport, ...] = ()
        self._partial: list[PartialDeliveryRemoval] = []
        self._empty_buffers: list[BufferReport] = []  # the buffers that injected no pod, and why

    # -- 1. the loop's start ------------------------------------------------------------------------
    def begin(self, view: LoopView) -> tuple[CAEvent, ...]:
        """The loop's start; returns the Warnings on the objects that do not read."""
        objects = view.world.capacity or _EMPTY
        self._reset(objects, view.now)
        self._begun = True
        now = view.now
        warnings = self._report_broken()
        if self.quotas_enabled:
            self._writes.extend(quota_status_writes(objects.quotas, objects.broken, view.nodes, now))
        if self.buffer_controller:
            translation = translate_buffers(objects.buffers, objects, now, self._translated)
            self._buffer_statuses = translation.statuses
            self._writes.extend(translation.writes)
        if self.requests_enabled:
            order = sorted(
                objects.provisioning_requests, key=lambda r: (r.creation_time or 0.0, r.namespace, r.name)
            )
            self._states = [RequestState(r) for r in order]
            instance = self.options.check_capacity_processor_instance
            for state in refresh(self._states, now, instance):
                pr = state.request
                self._writes.append(
                    CapacityWrite("delete", "ProvisioningRequest", pr.namespace, pr.name, pr.api_version)
                )
            self._judge_deliveries(view)
        return warnings

    def note_failed_scale_ups(self, groups: Sequence[str], now: float) -> None:
        """The groups whose scale-up the cluster state found failed this loop (before :meth:`begin`)."""
        for group in groups:
            self._failed_at[group] = now

    def _judge_deliveries(self, view: LoopView) -> None:
        """kubetide: an atomic request whose nodes came only in part is Provisioned False, and the
        empty nodes that came for it are removed (:mod:`~.provisioning.delivery`)."""
        by_key = {s.request.key: s for s in self._states}
        for key, delivery in list(self._deliveries.items()):
            state = by_key.get(key)
            verdict = judge(delivery, view, self._failed_at, view.now) if state is not None else None
            if state is None or verdict is not None:
                del self._deliveries[key]
            if state is None or verdict is None or not verdict.why:
                continue
            if state.is_true(PROVISIONED):
                removed = sum(len(nodes) for nodes in verdict.empty.values())
                message = (
                    f"Only part of the all-or-nothing scale-up came, {verdict.why}; "
                    f"{removed} empty node(s) that came for it removed; it will be retried"
                )
                state.set(PROVISIONED, "False", PARTIAL_REASON, message, view.now)
            self._partial += [
                PartialDeliveryRemoval(key, g, nodes) for g, nodes in sorted(verdict.empty.items())
            ]

    def partial_removals(self) -> PartialDeliveryRemovals:
        """The empty nodes of atomic requests that came only in part, to delete this loop."""
        return PartialDeliveryRemovals(tuple(self._partial))

    def _report_broken(self) -> tuple[CAEvent, ...]:
        """One Warning per object that does not read (and again if the problem changes)."""
        seen = set()
        out = []
        for obj in self.objects.broken:
            where = f"{obj.namespace}/" if obj.namespace else ""
            key = f"{obj.kind}/{where}{obj.name}"
            seen.add(key)
            if self._said.get(key) == obj.message:
                continue
            self._said[key] = obj.message
            out.append(
                CAEvent("Warning", _INVALID_OBJECT, key, f"{key} is ignored: {obj.message}", {"object": key})
            )
        for key in [k for k in self._said if k not in seen]:
            del self._said[key]
        return tuple(out)

    # -- 2. the pending pods ------------------------------------------------------------------------
    def before_filter(self, view: LoopView) -> list[Pod]:
        """With ``--capacity-buffer-ca-ordering``: the buffers' fake pods, to join the pending pods before
        the filter of schedulable pods (CA 1.36's builder puts ``CapacityBufferPodListProcessor`` before
        the default pod list processors), which sorts them with the real ones by priority."""
        if not (self.buffer_injection and self.options.capacity_buffer_ca_ordering and self.objects.buffers):
            return []
        made = self._inject_buffer_pods(view)
        return [p for pods in made.values() for p in pods]

    def _inject_buffer_pods(self, view: LoopView) -> Mapping[str, Sequence[Pod]]:
        objects = self.objects
        made = self._maker.inject(objects.buffers, self._buffer_statuses, objects.pod_templates, view.now)
        self._writes.extend(made.writes)
        self._fake_groups = made.by_buffer
        self._empty_buffers = [
            BufferReport(key, 0, 0, 0, self._reason(made.writes, key))
            for key in sorted(made.buffers)
            if key not in made.by_buffer
        ]
        return made.by_buffer

    def pending(self, view: LoopView, snapshot: ClusterSnapshot, to_help: Sequence[Pod]) -> list[Pod]:
        """The pods to help once the capacity features had their say (``to_help``: the pending pods that
        fit nowhere, real ones, and with ``--capacity-buffer-ca-ordering`` the buffers' too)."""
        out = list(to_help)
        objects = self.objects
        if self.buffer_injection and self.options.capacity_buffer_ca_ordering:
            unfit = {id(p) for p in to_help}
            for key, pods in self._fake_groups.items():
                left = sum(1 for p in pods if id(p) in unfit)
                self._buffers.append(BufferReport(key, len(pods), len(pods) - left, left))
            self._buffers += self._empty_buffers
        elif self.buffer_injection and objects.buffers:
            groups = list(self._inject_buffer_pods(view).items())
            placed = self._buffer_sim.try_schedule_alike(snapshot, [pods for _, pods in groups])
            for (key, pods), bound in zip(groups, placed, strict=True):
                if len(bound) < len(pods):
                    kept = {id(p) for p in bound}
                    out.extend(p for p in pods if id(p) not in kept)
                self._buffers.append(BufferReport(key, len(pods), len(bound), len(pods) - len(bound)))
            self._buffers += self._empty_buffers
        if self.requests_enabled and self._states:
            out, told = drop_consuming_pods(out)
            for pod, name in told:
                message = (
                    "Unschedulable pod didn't trigger scale-up, because it's consuming ProvisioningRequest "
                    f"{pod.namespace}/{name}"
                )
                self._notices.append(
                    CAEvent("Normal", str(EventReason.NOT_TRIGGER_SCALE_UP), f"Pod/{pod.key}", message, {})
                )
            found = self.injector.next_request(self._states, objects.pod_templates, view.now)
            if found is not None:
                out.extend(found[1])
                self._request_pods = frozenset(p.key for p in found[1])
            unplaced = {id(p) for p in out}
            consumers = [
                p
                for p in view.world.pods
                if consumed_request(p) is not None
                and id(p) not in unplaced
                and p.phase not in ("Succeeded", "Failed")
            ]
            book_capacity(
                self._states,
                objects.pod_templates,
                consumers,
                snapshot,
                self._booking_sim,
                view.now,
                self.options.check_capacity_processor_instance,
                ca_booking=self.options.provisioning_request_book_bound_pods,
            )
        return out

    def take_notices(self) -> tuple[CAEvent, ...]:
        """The events :meth:`pending` said (pods that consume a request trigger no scale-up)."""
        out, self._notices = tuple(self._notices), []
        return out

    @staticmethod
    def _reason(writes: Sequence[CapacityWrite], key: str) -> str:
        for write in writes:
            if write.kind == "CapacityBuffer" and f"{write.namespace}/{write.name}" == key:
                for c in write.body.get("conditions", ()):
                    if c.get("type") == "Provisioning":
                        return str(c.get("reason", ""))
        return "not provisioning"

    # -- 3. the scale-up ---------------------------------------------------------------------------
    def quota_tracker(
        self, view: LoopView, nodes: Sequence[NodeView], *, minimums: bool = False
    ) -> QuotaTracker | None:
        """A tracker of the loop's CapacityQuotas over ``nodes`` (the snapshot's: upcoming ones too)."""
        if not self.quotas_enabled or not self.objects.quotas:
            return None
        label = view.gpu_label

        def resources(node: NodeView) -> Mapping[str, int]:
            try:
                gpu = gpu_target(node, label, None) if label else None
            except UnknownGpuTarget:
                gpu = None
            return node_resources(node, gpu)

        tracker = QuotaTracker(self.objects.quotas, nodes, resources, minimums=minimums)
        return tracker if tracker else None

    def decide_scale_up(
        self,
        view: LoopView,
        timer: FunctionTimer,
        to_help: list[Pod],
        settings: ScaleUpSettings,
        snapshot: ClusterSnapshot,
        snapshot_nodes: Sequence[NodeView],
        decide: Decide,
    ) -> ScaleUpDecision:
        """The scale-up decision with the CapacityQuotas, and the ProvisioningRequests' turn."""
        tracker = self.quota_tracker(view, snapshot_nodes)
        if tracker is not None:
            self._quota_reports(tracker)
            settings = replace(settings, quotas=tracker)
        if not self.requests_enabled or not self._request_pods:
            return decide(to_help, settings, False)
        requests = [p for p in to_help if p.key in self._request_pods and consumed_request(p) is not None]
        regular = [
            p for p in to_help if not (p.key in self._request_pods and consumed_request(p) is not None)
        ]
        if not requests:
            self._request_mode = False
        elif not regular:
            self._request_mode = True
        serve_requests = self._request_mode
        self._request_mode = not self._request_mode  # WrapperOrchestrator: the next loop serves the others
        if not serve_requests:
            return decide(regular, settings, bool(requests))
        self._mode = PROVREQ_MODE
        return self._serve_requests(view, timer, requests, settings, snapshot, decide)

    def _serve_requests(
        self,
        view: LoopView,
        timer: FunctionTimer,
        pods: list[Pod],
        settings: ScaleUpSettings,
        snapshot: ClusterSnapshot,
        decide: Decide,
    ) -> ScaleUpDecision:
        """``provReqOrchestrator.ScaleUp``: check-capacity, then best-effort-atomic; the first that tries."""
        o, now = self.options, view.now
        instance = o.check_capacity_processor_instance
        batched = (
            o.check_capacity_batch_processing and o.check_capacity_provisioning_request_max_batch_size > 1
        )
        batch: list[tuple[RequestState, tuple[Pod, ...]]]
        if batched:
            batch = [
                *self.injector.check_capacity_batch(
                    self._states,
                    self.objects.pod_templates,
                    now,
                    o.check_capacity_provisioning_request_max_batch_size,
                )
            ]
        else:
            batch = [
                (s, tuple(pods))
                for s in self._requests_of(pods)
                if supported_check_capacity_class(s.request, instance)
            ][:1]
        # The batch's timebox is wall time, as CA's: live mode's stopwatch; in a simulation none passes.
        started = timer.start()
        result = check_capacity(
            batch,
            snapshot,
            self._request_sim,
            now,
            batched=batched,
            timebox=o.check_capacity_provisioning_request_batch_timebox,
            elapsed=lambda: timer.start() - started,
        )
        if result is not ScaleUpResult.NOT_TRIED:
            plan = ScaleUpPlan(result) if result is ScaleUpResult.SUCCESSFUL else None
            return ScaleUpDecision(str(result), plan)
        atomic = [s for s in self._requests_of(pods) if s.request.class_name == ATOMIC_CLASS and not instance]
        if not atomic:
            return ScaleUpDecision(str(ScaleUpResult.NOT_TRIED))
        state = atomic[0]
        left = atomic_pods_left(state, pods, snapshot, self._request_sim, now)
        if not left:
            return ScaleUpDecision(str(ScaleUpResult.NOT_NEEDED))
        decision = decide(left, replace(settings, all_or_nothing=True), True)
        if decision.plan is None or decision.plan.result is not ScaleUpResult.SUCCESSFUL:
            atomic_outcome(state, False, now)
        else:
            self._atomic = state
        return replace(decision, pods=())  # fake pods get no events

    def _requests_of(self, pods: Sequence[Pod]) -> list[RequestState]:
        """``ProvisioningRequestsForPods``: the requests the pods consume, in the pods' order, once each."""
        by_key = {s.request.key: s for s in self._states}
        out: list[RequestState] = []
        for pod in pods:
            name = consumed_request(pod)
            state = by_key.get(f"{pod.namespace}/{name}") if name is not None else None
            if state is not None and state not in out:
                out.append(state)
        return out

    # -- 4. after the scale-up -----------------------------------------------------------------------
    def after_scale_up(
        self, view: LoopView, result: LoopResult, decision: ScaleUpDecision, outcome: LoopOutcome
    ) -> tuple[CAEvent, ...]:
        """Once the scale-up was carried out: an atomic request's outcome; the fake pods' own events
        taken out of ``result`` (``FakePodsScaleUpStatusProcessor``); returns each buffer's events."""
        executed = outcome.scaled_up
        if self._atomic is not None:
            scaled = bool(executed) and result.scale_up_result == str(ScaleUpResult.SUCCESSFUL)
            fallback = [i.group for i in executed if i.group in outcome.atomic_fallbacks]
            how = ""
            if scaled:
                routes = [
                    outcome.atomic_routes[i.group] for i in executed if i.group in outcome.atomic_routes
                ]
                how = "; ".join(routes) if routes else "all-or-nothing: the provider's atomic increase"
                if fallback:
                    how = (
                        f"not all-or-nothing in the cloud: node group(s) {', '.join(fallback)} raised with "
                        "IncreaseSize (the provider has no atomic increase)" + (f"; {how}" if routes else "")
                    )
            atomic_outcome(self._atomic, scaled, view.now, how)
            if scaled and self.options.provisioning_request_partial_delivery_check:
                targets = {i.group: i.new_size for i in executed}
                provision = max(self.provision_time(g) for g in targets)
                request = self._atomic.request.key
                self._deliveries[request] = start_delivery(request, targets, view, view.now, provision)
        events = result.events
        if (not self._fake_groups and not self._request_pods) or not events:
            return ()
        # fake pod key -> its buffer (namespace/name), made only when there are events to sort
        fake = {pod.key: key for key, pods in self._fake_groups.items() for pod in pods}
        kept: list[CAEvent] = []
        triggered: dict[str, int] = {}
        remaining: dict[str, list[str]] = {}
        for event in events:
            key = event.object[4:] if event.object.startswith("Pod/") else None
            if key is None or (key not in fake and key not in self._request_pods):
                kept.append(event)
                continue
            buffer = fake.get(key)
            if buffer is None:
                continue
            if event.reason == str(EventReason.TRIGGERED_SCALE_UP):
                triggered[buffer] = triggered.get(buffer, 0) + 1
            elif event.reason == str(EventReason.NOT_TRIGGER_SCALE_UP):
                remaining.setdefault(buffer, []).append(event.message)
        events[:] = kept
        out: list[CAEvent] = []
        infos = "[" + " ".join(str(i) for i in executed) + "]"
        for buffer, count in triggered.items():
            if executed:
                out.append(
                    CAEvent(
                        "Normal",
                        str(EventReason.TRIGGERED_SCALE_UP),
                        f"CapacityBuffer/{buffer}",
                        f"capacity buffer {count} fake pods triggered scale-up: {infos}",
                        {"pods": count},
                    )
                )
        if result.scale_up_result not in (str(ScaleUpResult.SUCCESSFUL), str(ScaleUpResult.ERROR)):
            for buffer, messages in remaining.items():
                out.append(
                    CAEvent(
                        "Normal",
                        str(EventReason.NOT_TRIGGER_SCALE_UP),
                        f"CapacityBuffer/{buffer}",
                        f"capacity buffer {len(messages)} fake pods didn't trigger scale-up: {','.join(messages)}",
                        {"pods": len(messages)},
                    )
                )
        return tuple(out)

    # -- 5. scale-down and the loop's end ------------------------------------------------------------
    def min_quotas(
        self, view: LoopView, snapshot: ClusterSnapshot
    ) -> Callable[[MinimumCheck], MinimumCheck] | None:
        """kubetide's CapacityQuota minimums for scale-down: a wrapper of the loop's own minimum check
        (``--cores-total``...) that also keeps each quota's selected nodes at or above its minimums (a
        node goes only if every check allows it; what it takes is then spent from each)."""
        nodes = [snapshot.node(i) for i in snapshot.active_indices().tolist()]
        tracker = self.quota_tracker(view, nodes, minimums=True)
        if tracker is None:
            return None
        quotas = tracker

        def wrap(cluster_wide: MinimumCheck) -> MinimumCheck:
            def within(node: NodeView) -> UnremovableReason | None:
                if quotas.check(node, 1).is_exceeded:
                    return UnremovableReason.MINIMAL_RESOURCE_LIMIT_EXCEEDED
                reason = cluster_wide(node)
                if reason is None:
                    quotas.consume(node, 1)
                return reason

            return within

        return wrap

    def _quota_reports(self, tracker: QuotaTracker) -> None:
        self._quotas = tuple(
            QuotaReport(
                s.quota.id,
                dict(s.limits),
                dict(s.usage),
                dict(s.left),
                dict(s.quota.minimums),
            )
            for s in tracker.statuses
        )

    def finish(self, view: LoopView, result: LoopResult) -> None:
        """The loop's writes and report, into its result (nothing when the loop ended before
        :meth:`begin`: its writes were the last loop's)."""
        if not self._begun:
            return
        self._begun = False
        writes = list(self._writes)
        for state in self._states:
            write = state.write()
            if write is not None:
                writes.append(write)
        result.capacity_writes = writes
        quotas = self._quotas
        if not quotas and self.quotas_enabled and self.objects.quotas:
            tracker = self.quota_tracker(view, view.nodes)
            if tracker is not None:
                self._quota_reports(tracker)
                quotas = self._quotas
        requests = tuple(
            RequestReport(
                s.request.key,
                s.request.class_name,
                {c.type: f"{c.status} ({c.reason})" if c.reason else c.status for c in s.conditions},
            )
            for s in self._states
            if s.changed
        )
        result.capacity = CapacityReport(quotas, tuple(self._buffers), requests, self._mode)
        status = result.status
        if status is not None and quotas:
            result.status = replace(status, capacity_quotas=quotas)
