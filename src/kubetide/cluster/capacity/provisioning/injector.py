"""Which ProvisioningRequest the loop works on, and when it retries one: CA 1.36's
``ProvisioningRequestPodsInjector`` (``processors/provreq/injector.go``).

Each loop the pods of one request are added to the pending pods (``GetPodsFromNextRequest``): the first
request this autoscaler serves that is neither Provisioned nor Failed and whose retry time has come (a
request Provisioned=False waits ``--provisioning-request-initial-backoff-time`` from that condition, the
wait doubling each retry up to ``--provisioning-request-max-backoff-time``; the waits are kept for at
most ``--provisioning-request-max-backoff-cache-size`` requests). It is marked Accepted, except a
check-capacity request under ``--check-capacity-batch-processing`` (its batch marks it). A request whose
pods cannot be made (a PodTemplate missing) is Failed (``FailedToCreatePods``).
:meth:`RequestInjector.check_capacity_batch` is ``GetCheckCapacityBatch``.

Requests are taken oldest first (by creation, then namespace and name): CA walks its lister's list, whose
order Go's maps leave unspecified.
"""

from __future__ import annotations

import itertools
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping, Sequence

from kubetide.cluster.capacity.provisioning.requests import (
    RequestState,
    pods_for_request,
    supported_check_capacity_class,
    supported_class,
)
from kubetide.model.capacity.podtemplate import PodTemplateView
from kubetide.model.capacity.provisioning import ACCEPTED, FAILED, PROVISIONED, ProvisioningRequest
from kubetide.model.pod import Pod

__all__ = ["RequestInjector"]


class RequestInjector:
    """The injector's state between loops: each request's retry wait (by uid), an LRU of bounded size."""

    def __init__(
        self,
        initial_backoff: float,
        max_backoff: float,
        cache_size: int,
        *,
        batch_processing: bool = False,
        processor_instance: str = "",
    ) -> None:
        self.initial_backoff = initial_backoff
        self.max_backoff = max_backoff
        self.cache_size = cache_size
        self.batch_processing = batch_processing
        self.processor_instance = processor_instance
        self._backoff: OrderedDict[str, float] = OrderedDict()

    def _key(self, state: RequestState) -> str:
        return state.request.uid or state.request.key

    def available(self, state: RequestState, now: float) -> bool:
        """``IsAvailableForProvisioning``."""
        key = self._key(state)
        if state.is_true(FAILED) or state.is_true(PROVISIONED):
            self._backoff.pop(key, None)
            return False
        provisioned = state.condition(PROVISIONED)
        if provisioned is None:
            return True
        if provisioned.status != "False":
            return False
        retry = self._backoff.get(key, self.initial_backoff)
        if key in self._backoff:
            self._backoff.move_to_end(key)  # lru.Get makes it the most recent
        if provisioned.last_transition_time + retry < now:
            self._backoff.pop(key, None)
            self._backoff[key] = min(2 * retry, self.max_backoff)
            while self.cache_size > 0 and len(self._backoff) > self.cache_size:
                self._backoff.popitem(last=False)
            return True
        return False

    def _due(
        self,
        states: Sequence[RequestState],
        templates: Mapping[str, PodTemplateView],
        now: float,
        served: Callable[[ProvisioningRequest, str], bool],
    ) -> Iterator[tuple[RequestState, tuple[Pod, ...]]]:
        """The requests ``served`` takes that are due now, with their pods, in order; a request whose
        pods cannot be made is Failed (``FailedToCreatePods``) and skipped."""
        for state in states:
            if not served(state.request, self.processor_instance) or not self.available(state, now):
                continue
            try:
                pods = pods_for_request(state.request, templates)
            except ValueError as exc:
                state.set(FAILED, "True", "FailedToCreatePods", str(exc), now)
                continue
            yield state, pods

    def next_request(
        self, states: Sequence[RequestState], templates: Mapping[str, PodTemplateView], now: float
    ) -> tuple[RequestState, tuple[Pod, ...]] | None:
        """``GetPodsFromNextRequest``: the request worked on this loop and its pods."""
        for state, pods in self._due(states, templates, now, supported_class):
            if not self.batch_processing or not supported_check_capacity_class(
                state.request, self.processor_instance
            ):
                state.set(
                    ACCEPTED, "True", "Accepted", "ProvisioningRequest is accepted by ClusterAutoscaler", now
                )
            return state, pods
        return None

    def check_capacity_batch(
        self,
        states: Sequence[RequestState],
        templates: Mapping[str, PodTemplateView],
        now: float,
        most: int,
    ) -> list[tuple[RequestState, tuple[Pod, ...]]]:
        """``GetCheckCapacityBatch``: up to ``most`` check-capacity requests due now, with their pods."""
        if most <= 0:
            return []
        return list(itertools.islice(self._due(states, templates, now, supported_check_capacity_class), most))
