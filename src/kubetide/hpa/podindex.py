"""The fast path of ``group_pods``: what a pod list says about itself is classified once, so a sync
only intersects sets with the sample names (C-speed) instead of looping over every pod.

Most of upstream's classification depends on the pod alone (deleted, phase, Ready condition, start
and transition times, and for pods past the cpu initialization period, "never been ready"). Only
pods still initializing look at the sample's timestamp; they are kept sorted by start time so a
sync visits just those. ``group_pods`` in ``podgroups`` is the plain reference; both must agree.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from kubetide.hpa.podgroups import PodGroups, RequestError, _pod_request, sample_before
from kubetide.hpa.ports import NEVER, PodMetric
from kubetide.model.pod import Pod
from kubetide.model.resources import CPU


@dataclass(frozen=True, slots=True)
class _Young:
    start: float
    name: str
    ready: bool
    transition: float


@dataclass
class PodIndex:
    """Static facts of one pod list, for one (cpu initialization period, readiness delay) setting."""

    pods: Sequence[Pod]
    ignored: frozenset[str]
    pending: frozenset[str]
    active: frozenset[str]
    no_condition: frozenset[str]  # active, without a Ready condition or a start time
    never_ready: frozenset[str]  # active, not Ready and never been Ready (counts once initialized)
    by_start: tuple[_Young, ...]  # active with condition and start, newest first
    requests: dict[tuple[str, str, bool], dict[str, int] | str] = field(default_factory=dict)
    active_totals: dict[tuple[str, str, bool], int] = field(default_factory=dict)
    # The key set of the last samples found to be exactly the active pods (by the identity of the
    # ``key_token`` a metrics source may offer: an object that stays the same while its keys do).
    _exact_token: object = field(default=None, init=False, repr=False)

    @classmethod
    def build(cls, pods: Sequence[Pod], readiness_delay: float) -> PodIndex:
        ignored, pending, active, no_condition, never_ready = set(), set(), set(), set(), set()
        timed = []
        for pod in pods:
            if pod.deletion_time is not None or pod.phase in ("Failed", "Succeeded"):
                ignored.add(pod.name)
            elif pod.phase == "Pending":
                pending.add(pod.name)
            else:
                active.add(pod.name)
                if pod.ready is None or pod.start_time is None:
                    no_condition.add(pod.name)
                    continue
                transition = pod.ready_transition if pod.ready_transition is not None else NEVER
                if pod.ready is False and pod.start_time + readiness_delay > transition:
                    never_ready.add(pod.name)
                timed.append(_Young(pod.start_time, pod.name, pod.ready, transition))
        timed.sort(key=lambda y: -y.start)
        return cls(
            pods,
            frozenset(ignored),
            frozenset(pending),
            frozenset(active),
            frozenset(no_condition),
            frozenset(never_ready),
            tuple(timed),
        )

    def group(
        self, metrics: Mapping[str, PodMetric], resource: str, now: float, init_period: float
    ) -> PodGroups:
        """Same result as ``podgroups.group_pods`` for these pods."""
        keys = metrics.keys()
        if self.active <= keys:  # the common case: every counted pod has a sample (no copy made)
            missing: frozenset[str] = frozenset()
            sampled = self.active
        else:
            missing = self.active.difference(keys)
            sampled = self.active - missing
        exact = not missing and len(keys) == len(self.active)
        if resource != CPU:
            return PodGroups(len(sampled), self.pending, missing, self.ignored, exact)
        unready = (self.no_condition | self.never_ready) & sampled
        young_until = now - init_period  # a pod is initializing if start > now - period
        if self.by_start and self.by_start[0].start > young_until:
            changed = set(unready)
            for y in self.by_start:
                if y.start <= young_until:
                    break
                if y.name not in sampled:
                    continue
                metric = metrics[y.name]
                if y.ready is False or sample_before(metric.timestamp, y.transition, metric.window):
                    changed.add(y.name)
                else:
                    changed.discard(y.name)  # initializing pods don't use the never-ready rule
            unready = frozenset(changed)
        return PodGroups(
            len(sampled) - len(unready), self.pending | unready, missing, self.ignored, exact and not unready
        )

    def settled(
        self, metrics: Mapping[str, PodMetric], resource: str, now: float, init_period: float
    ) -> bool:
        """True when ``group`` would find every counted pod sampled, nothing extra sampled, and no pod
        pending or unready (for cpu: none without a Ready condition, never ready, or initializing and
        not yet counted): the sync then counts exactly the active pods, as the quiet lane assumes."""
        if self.pending or not self.active:
            return False
        if resource == CPU and (self.no_condition or self.never_ready):
            return False
        token = getattr(metrics, "key_token", None)
        if token is None or token is not self._exact_token:
            keys = metrics.keys()
            if len(keys) != len(self.active) or not self.active <= keys:
                return False
            if token is not None:
                self._exact_token = token
        return resource != CPU or self.initializing_counted(metrics, now, init_period)

    def initializing_counted(self, metrics: Mapping[str, PodMetric], now: float, init_period: float) -> bool:
        """True when no pod still in its cpu initialization period is unready by ``group``'s rule: each
        is Ready with a sample taken a window after it became Ready (pods all sampled, as
        :meth:`settled` checked first). True at once when no pod is initializing (the usual case)."""
        young_until = now - init_period
        for y in self.by_start:
            if y.start <= young_until:
                break
            if y.ready is False:
                return False
            metric = metrics[y.name]
            if sample_before(metric.timestamp, y.transition, metric.window):
                return False
        return True

    @staticmethod
    def cached(
        cache: dict[str, tuple[Sequence[Pod], PodIndex]],
        key: str,
        pods: Sequence[Pod],
        readiness_delay: float,
    ) -> PodIndex:
        """The index of ``pods`` for HPA ``key``, reused from ``cache`` while the pod lister returns the
        very same sequence object (``ScaleTargetPort.list_pods``' contract)."""
        found = cache.get(key)
        if found is not None and found[0] is pods:
            return found[1]
        index = PodIndex.build(pods, readiness_delay)
        cache[key] = (pods, index)
        return index

    def requests_milli(self, resource: str, container: str, pod_level: bool) -> dict[str, int]:
        key = (resource, container, pod_level)
        cached = self.requests.get(key)
        if cached is None:
            try:
                cached = {p.name: _pod_request(p, resource, container, pod_level) for p in self.pods}
            except RequestError as exc:
                cached = str(exc)
            self.requests[key] = cached
        if isinstance(cached, str):
            raise RequestError(cached)
        return cached

    def active_request_total(self, resource: str, container: str, pod_level: bool) -> int:
        """Sum of the counted (active) pods' requests, for syncs whose samples are exactly those pods."""
        key = (resource, container, pod_level)
        total = self.active_totals.get(key)
        if total is None:
            requests = self.requests_milli(resource, container, pod_level)
            total = sum(requests[name] for name in self.active)
            self.active_totals[key] = total
        return total
