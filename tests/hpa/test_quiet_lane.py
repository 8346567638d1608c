"""The quiet lane against the general path: two drivers, one with the lane, over two copies of the same
changing world, must leave the same statuses, memory, scale writes and events after every tick."""

from __future__ import annotations

from collections.abc import Iterator, KeysView, Mapping, Sequence, ValuesView
from dataclasses import dataclass, field
from typing import Any, cast

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubetide.hpa.config import HPAConfig
from kubetide.hpa.driver import HPADriver, StatusWriteError
from kubetide.hpa.ports import MetricsError, PodMetric, Scale, ScaleError
from kubetide.hpa.state import HPAState, Recommendation
from kubetide.model.errors import ManifestError
from kubetide.model.hpa import HPA, CrossVersionObjectReference, HPAStatus
from kubetide.model.pod import Container, Pod
from kubetide.model.resources import Resources
from kubetide.model.selectors import LabelSelector

from .world import ResourceMetricsOnly


class TokenSamples(Mapping[str, PodMetric]):
    """Samples the way the simulator serves them: a key token and an O(1) total."""

    def __init__(self, samples: dict[str, PodMetric], token: object) -> None:
        self._samples = samples
        self.key_token = token

    def __getitem__(self, name: str) -> PodMetric:
        return self._samples[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._samples)

    def __len__(self) -> int:
        return len(self._samples)

    def keys(self) -> KeysView[str]:
        return self._samples.keys()

    def values(self) -> ValuesView[PodMetric]:
        return self._samples.values()

    def total_value(self) -> int:
        return sum(m.value for m in self._samples.values())


@dataclass
class PodState:
    phase: str = "Running"
    ready: bool | None = True
    start: float = -10_000.0
    transition: float = -10_000.0
    deleting: bool = False
    request: int = 500
    usage: int | None = 250  # None: no sample


@dataclass
class Target:
    name: str
    replicas: int
    pods: dict[str, PodState]
    selector: str
    view: tuple[Pod, ...] = ()
    token: object = field(default_factory=object)
    keys: frozenset[str] = frozenset()
    created: int = 0
    scale: Scale | None = None
    signature: tuple[Any, ...] = ()

    def refresh(self, namespace: str) -> None:
        # Like an informer cache: the same pod list object while no pod changed.
        signature = tuple(
            (n, p.phase, p.ready, p.start, p.transition, p.deleting, p.request) for n, p in self.pods.items()
        )
        if signature != self.signature or not self.view:
            self.signature = signature
            self._build(namespace)
        keys = frozenset(n for n, p in self.pods.items() if p.phase == "Running" and p.usage is not None)
        if keys != self.keys:
            self.keys, self.token = keys, object()

    def _build(self, namespace: str) -> None:
        self.view = tuple(
            Pod(
                name=name,
                namespace=namespace,
                labels={"app": self.selector.partition("=")[2]},
                phase=p.phase,
                ready=p.ready,
                start_time=p.start if p.phase != "Pending" else None,
                ready_transition=p.transition if p.ready is not None else None,
                deletion_time=0.0 if p.deleting else None,
                containers=(Container("app", Resources({"cpu": p.request, "memory": p.request * 1000})),),
            )
            for name, p in self.pods.items()
        )


class FakeWorld(ResourceMetricsOnly):
    """Scale targets, pods and samples in one namespace per target; records writes and events."""

    def __init__(self, targets: dict[str, Target], hpas: dict[str, HPA], token_samples: bool) -> None:
        self.targets = targets
        self.hpas = hpas
        self.token_samples = token_samples
        self.now = 0.0
        self.scale_writes: list[tuple[str, int]] = []
        self.events: list[tuple[str, str, str, str]] = []
        self.failing_status: set[str] = set()
        self.failing_scale: set[str] = set()
        for name, t in targets.items():
            t.refresh(self._ns(name))

    @staticmethod
    def _ns(target: str) -> str:
        return "default"

    def _target(self, ref: CrossVersionObjectReference) -> Target:
        target = self.targets.get(ref.name)
        if target is None:
            raise ScaleError(f'deployments.apps "{ref.name}" not found')
        return target

    # ScaleTargetPort
    def get_scale(self, namespace: str, ref: CrossVersionObjectReference) -> Scale:
        # The same object while the counts are, as the simulator's port answers (the lane's plans
        # are kept only while it is).
        t = self._target(ref)
        scale = Scale(t.replicas, len(t.pods), t.selector)
        if scale != t.scale:
            t.scale = scale
        assert t.scale is not None
        return t.scale

    def update_scale(self, namespace: str, ref: CrossVersionObjectReference, replicas: int) -> None:
        t = self._target(ref)
        if ref.name in self.failing_scale:
            raise ScaleError("the server rejected our request")
        self.scale_writes.append((ref.name, replicas))
        t.replicas = replicas
        alive = [n for n, p in t.pods.items() if not p.deleting]
        while len(alive) > replicas:
            del t.pods[alive.pop()]
        usages = [p.usage for p in t.pods.values() if p.usage is not None]
        while len(alive) < replicas:
            t.created += 1
            name = f"{t.name}-new-{t.created}"
            usage = sum(usages) // len(usages) if usages else None
            t.pods[name] = PodState(start=self.now, transition=self.now + 5, usage=usage)
            alive.append(name)
        t.refresh(namespace)

    def list_pods(self, namespace: str, selector: LabelSelector) -> Sequence[Pod]:
        found = [t.view for t in self.targets.values() if selector.matches({"app": t.selector[4:]})]
        if len(found) == 1:
            return found[0]
        return tuple(p for view in found for p in view)

    # MetricsSource
    def resource_metrics(
        self, namespace: str, selector: LabelSelector, resource: str, container: str
    ) -> Mapping[str, PodMetric]:
        samples: dict[str, PodMetric] = {}
        token: object = None
        for t in self.targets.values():
            if selector.matches({"app": t.selector[4:]}):
                token = t.token
                for name, p in t.pods.items():
                    if p.phase == "Running" and p.usage is not None:
                        value = p.usage if resource == "cpu" else p.usage * 1000
                        samples[name] = PodMetric(value, self.now - 10, 30.0)
        if not samples:
            raise MetricsError("no metrics returned from resource metrics API")
        return TokenSamples(samples, token) if self.token_samples else samples

    # HPASource
    def list_hpas(self) -> Mapping[str, HPA | ManifestError]:
        return dict(self.hpas)

    def write_status(self, hpa: HPA, status: HPAStatus) -> None:
        if hpa.key in self.failing_status:
            raise StatusWriteError("conflict")
        self.hpas[hpa.key] = hpa.with_status(status)

    # EventPort
    def emit_event(self, type_: str, reason: str, obj: str, message: str) -> None:
        self.events.append((type_, reason, obj, message))


def hpa_manifest(name: str, target: str, spec: dict[str, Any]) -> HPA:
    return HPA.from_manifest(
        {
            "apiVersion": "autoscaling/v2",
            "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {
                "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": target},
                **spec,
            },
        }
    )


@st.composite
def hpa_specs(draw: st.DrawFn) -> dict[str, Any]:
    low = draw(st.sampled_from([1, 1, 2, 3, 0, 6]))
    high = draw(st.integers(max(low, 1), 12))
    kind = draw(st.sampled_from(["cpu"] * 8 + ["memory"] * 2 + ["value", "behavior", "zero-target"]))
    resource = "memory" if kind == "memory" else "cpu"
    utilization = draw(st.sampled_from([50, 50, 45, 55]) | st.integers(1, 120))
    target: dict[str, Any] = {"type": "Utilization", "averageUtilization": utilization}
    if kind == "value":
        target = {"type": "AverageValue", "averageValue": f"{draw(st.integers(50, 800))}m"}
    if kind == "zero-target":
        target = {"type": "Utilization", "averageUtilization": 0}
    spec: dict[str, Any] = {
        "minReplicas": low,
        "maxReplicas": high,
        "metrics": [{"type": "Resource", "resource": {"name": resource, "target": target}}],
    }
    if kind == "behavior":
        spec["behavior"] = {"scaleDown": {"stabilizationWindowSeconds": draw(st.integers(0, 120))}}
    return spec


# Mostly settled pods (the lane's case), some of every other kind (the general path's).
settled_pods = st.builds(PodState, usage=st.integers(150, 350) | st.integers(235, 265), request=st.just(500))
any_pods = st.builds(
    PodState,
    phase=st.sampled_from(["Running"] * 6 + ["Pending"]),
    ready=st.sampled_from([True] * 6 + [False, None]),
    start=st.sampled_from([-10_000.0, -100.0, 0.0, 40.0]),
    transition=st.sampled_from([-10_000.0, -90.0, 10.0, 60.0]),
    deleting=st.sampled_from([False] * 8 + [True]),
    request=st.sampled_from([0, 100, 500, 1000]),
    usage=st.one_of(st.none(), st.integers(0, 2000)) | st.integers(100, 600),
)

steps = st.lists(
    st.tuples(
        st.sampled_from([15.0, 15.0, 15.0, 7.0, 60.0, 301.0]),  # time to the next tick
        st.sampled_from([1.0, 1.0, 1.0, 1.01, 0.99, 1.03, 1.3, 0.6, 0.0]),  # usage factor
        st.integers(0, 14),  # which mutation (most change nothing but the usage)
        st.integers(0, 5),  # which target / pod
    ),
    min_size=10,
    max_size=40,
)


@st.composite
def worlds(draw: st.DrawFn) -> tuple[list[tuple[str, str, dict[str, Any]]], dict[str, list[PodState]], Any]:
    n_targets = draw(st.sampled_from([1, 1, 2, 3]))
    pods = {
        f"web{i}": draw(
            st.lists(settled_pods, min_size=1, max_size=6)
            | st.lists(settled_pods, min_size=1, max_size=6)
            | st.lists(settled_pods | any_pods, max_size=6)
        )
        for i in range(n_targets)
    }
    n_hpas = draw(st.sampled_from([1, 1, 2, 3]))
    hpas = []
    for j in range(n_hpas):
        target = f"web{draw(st.integers(0, n_targets - 1))}"
        spec = draw(hpa_specs())
        if draw(st.booleans()):  # mostly within the bounds from the start
            spec["minReplicas"] = min(spec["minReplicas"], max(len(pods[target]), 1))
            spec["maxReplicas"] = max(spec["maxReplicas"], len(pods[target]))
        hpas.append((f"h{j}", target, spec))
    return hpas, pods, draw(steps)


def build(data: Any, token_samples: bool) -> FakeWorld:
    hpa_defs, pods, _ = data
    targets = {
        name: Target(
            name,
            len(states),
            {f"{name}-{k}": PodState(**vars(s)) for k, s in enumerate(states)},
            f"app={name}",
        )
        for name, states in pods.items()
    }
    hpas = {f"default/{n}": hpa_manifest(n, t, spec) for n, t, spec in hpa_defs}
    return FakeWorld(targets, hpas, token_samples)


def mutate(world: FakeWorld, factor: float, which: int, index: int) -> None:
    names = sorted(world.targets)
    t = world.targets[names[index % len(names)]]
    for p in t.pods.values():
        if p.usage is not None:
            p.usage = int(p.usage * factor)
    pods = sorted(t.pods)
    pod = t.pods[pods[index % len(pods)]] if pods else None
    if which == 1 and pod is not None:
        pod.ready = not pod.ready
        pod.transition = world.now
    elif which == 2 and pod is not None:
        pod.usage = None if pod.usage is not None else 300
    elif which == 3 and pod is not None:
        pod.phase = "Running" if pod.phase == "Pending" else "Pending"
    elif which == 4:
        t.replicas += 1  # someone else scaled the target
    elif which == 5 and pod is not None:
        pod.deleting = True
    elif which == 6:
        key = sorted(world.hpas)[index % len(world.hpas)]
        world.failing_status ^= {key}
    elif which == 7:
        world.failing_scale ^= {t.name}
    t.refresh("default")


def state_of(driver: HPADriver, world: FakeWorld) -> dict[str, Any]:
    memory = {}
    for key in world.hpas:
        state = driver.controller.memory(key)
        memory[key] = (
            None
            if state is None or state.recommendations is None
            else [(r.replicas, r.timestamp) for r in state.recommendations]
        )
    return {
        "statuses": {k: cast(HPA, h).status for k, h in world.hpas.items()},
        "memory": memory,
        "writes": list(world.scale_writes),
        "events": list(world.events),
        "replicas": {k: t.replicas for k, t in world.targets.items()},
    }


def run_both(data: Any, token_samples: bool) -> int:
    general, quiet = build(data, token_samples), build(data, token_samples)
    config = HPAConfig()
    plain = HPADriver(general, general, general, general, config)
    lane = HPADriver(quiet, quiet, quiet, quiet, config, quiet_lane=True)
    now = 0.0
    for dt, factor, which, index in data[2]:
        for world in (general, quiet):
            world.now = now
        plain.tick(now)
        lane.tick(now)
        assert state_of(lane, quiet) == state_of(plain, general), now
        now += dt
        for world in (general, quiet):
            world.now = now
            mutate(world, factor, which, index)
    assert lane._lane is not None
    rechecked.append(lane._lane.rechecked)
    return lane.quiet_syncs


rechecked: list[int] = []  # per run: the quiet syncs that reused a plan (the lane's fast recheck)


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(worlds(), st.booleans())
def test_the_quiet_lane_changes_nothing_the_general_path_would_not(data: Any, token_samples: bool) -> None:
    run_both(data, token_samples)


def steady(pods: int = 4, usage: int = 250, spec: dict[str, Any] | None = None) -> Any:
    spec = spec or {
        "minReplicas": 1,
        "maxReplicas": 10,
        "metrics": [
            {
                "type": "Resource",
                "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}},
            }
        ],
    }
    return (
        [("h0", "web0", spec)],
        {"web0": [PodState(usage=usage) for _ in range(pods)]},
        [(15.0, 1.0, 0, 0)] * 30 + [(15.0, 1.04, 0, 0)] + [(15.0, 1.0, 0, 0)] * 9,
    )


def test_the_lane_takes_the_syncs_of_a_settled_hpa() -> None:
    # The first sync seeds the memory and sets the conditions (general path); the rest are quiet,
    # including the one where a 4 % usage change only rewrites the current metric.
    for token_samples in (False, True):
        assert run_both(steady(), token_samples) == 39
    # With a samples key token the plan of the first quiet sync serves the others (but the one after
    # a status write, which is a new HPA object); without one every sync runs the full checks.
    assert rechecked[-2:] == [0, 37]


def test_an_initializing_pod_counts_only_while_ready() -> None:
    # web0-3 started 100 s ago (in its cpu initialization period) and has been Ready long enough to
    # be counted: the lane takes the syncs (52 %). At 60 s it turns unready, and Ready again at 75 s
    # but with samples older than its transition: upstream's rule for initializing pods leaves it
    # out (50 %), and so must the lane.
    spec = steady()[0][0][2]
    young = PodState(usage=300, start=-100.0, transition=-90.0)
    data = ([("h0", "web0", spec)], {"web0": [PodState(usage=250)] * 3 + [young]}, [(15.0, 1.0, 0, 0)] * 3)
    assert run_both((*data[:2], data[2] + [(15.0, 1.0, 1, 3)] * 4), True) >= 2
    assert rechecked[-1] >= 1
    # Not Ready since 40 s after its start, which is not "never Ready": only the initializing rule
    # leaves it out.
    unready = PodState(usage=300, ready=False, start=-100.0, transition=-60.0)
    assert run_both((data[0], {"web0": [PodState(usage=250)] * 3 + [unready]}, data[2]), True) == 0


class SteadyPair:
    """A steady world and its copy, with a plain driver and a quiet-lane one, ticked together."""

    def __init__(self) -> None:
        self.data = steady()
        self.general, self.quiet = build(self.data, True), build(self.data, True)
        self.plain = HPADriver(self.general, self.general, self.general, self.general, HPAConfig())
        self.lane = HPADriver(self.quiet, self.quiet, self.quiet, self.quiet, HPAConfig(), quiet_lane=True)

    def tick(self, *times: float) -> None:
        for now in times:
            self.plain.tick(now)
            self.lane.tick(now)
            assert state_of(self.lane, self.quiet) == state_of(self.plain, self.general)


def test_a_kept_plan_reads_the_memory_the_controller_has_now() -> None:
    # Remembered state installed from outside (a snapshot's) replaces the list a plan was made with.
    pair = SteadyPair()
    pair.tick(0.0, 15.0, 30.0)
    general, quiet, lane = pair.general, pair.quiet, pair.lane
    assert lane._lane is not None and lane._lane.rechecked == 1
    for driver in (pair.plain, lane):
        driver.controller.restore("default/h0", HPAState([Recommendation(8, 40.0)]))
    pair.tick(45.0, 60.0)
    # The restored recommendation of 8 is the highest in the window: both scale 4 -> 8.
    assert general.scale_writes == quiet.scale_writes == [("web0", 8)]


def test_a_kept_plan_sees_a_new_hpa_over_the_same_pods() -> None:
    # Nothing of h0's own objects changes, but h1 now selects its pods too: AmbiguousSelector.
    pair = SteadyPair()
    pair.tick(0.0, 15.0, 30.0)
    for world in (pair.general, pair.quiet):
        world.hpas["default/h1"] = hpa_manifest("h1", "web0", pair.data[0][0][2])
    pair.tick(45.0, 60.0, 75.0)
    status = cast(HPA, pair.quiet.hpas["default/h0"]).status
    assert any(c.reason == "AmbiguousSelector" for c in status.conditions)


def test_usage_totals_beyond_int64_wrap_as_upstream_s() -> None:
    # The lane's integer shortcut holds only while usage x 100 fits int64; beyond, it wraps as Go does.
    for usage in (2**59, 2**61, 2**62 - 1, 2**63 // 400):
        for token_samples in (False, True):
            run_both(steady(usage=usage), token_samples)


def test_a_rescale_goes_through_the_general_path() -> None:
    data = steady(usage=250)
    data = (data[0], data[1], [(15.0, 1.0, 0, 0)] * 5 + [(15.0, 2.0, 0, 0)] + [(15.0, 1.0, 0, 0)] * 5)
    quiet = run_both(data, True)
    assert 0 < quiet < 10


@st.composite
def steady_worlds(draw: st.DrawFn) -> Any:
    """Settled pods near their target, usage drifting, now and then a change the lane must refuse."""
    pods = draw(st.integers(1, 14))
    target = draw(st.integers(20, 90))
    request = draw(st.sampled_from([100, 250, 500, 1000]))
    usage = [request * target // 100 + draw(st.integers(-request // 20, request // 20)) for _ in range(pods)]
    if draw(st.booleans()):  # exactly at a tolerance boundary: 45 % or 55 % against 50 %
        target = 50
        usage = [request * draw(st.sampled_from([45, 55])) // 100] * pods
    spec = {
        "minReplicas": draw(st.integers(1, pods)),
        "maxReplicas": draw(st.integers(pods, pods + 4)),
        "metrics": [
            {
                "type": "Resource",
                "resource": {
                    "name": draw(st.sampled_from(["cpu", "memory"])),
                    "target": {"type": "Utilization", "averageUtilization": target},
                },
            }
        ],
    }
    states = [PodState(request=request, usage=u) for u in usage]
    moves = st.tuples(
        st.sampled_from([15.0, 15.0, 15.0, 30.0, 301.0]),
        st.sampled_from([1.0] * 8 + [1.004, 0.996, 1.02, 0.98, 1.12, 0.85]),  # mostly unchanged: plans kept
        st.sampled_from([0] * 20 + list(range(1, 8))),
        st.integers(0, 7),
    )
    return [("h0", "web0", spec)], {"web0": states}, draw(st.lists(moves, min_size=20, max_size=60))


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(steady_worlds(), st.booleans())
def test_the_quiet_lane_matches_the_general_path_in_a_steady_world(data: Any, token_samples: bool) -> None:
    run_both(data, token_samples)
