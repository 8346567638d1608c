"""The scenario file of ``kubetide simulate`` (contract: ``shared/spec/scenario.md``): model and loader.

Public API: :func:`load_scenario` (a file, with ``--set`` overrides) and :func:`parse_scenario` (plain
data), both returning a :class:`Scenario` or raising :class:`~kubetide.model.errors.ManifestError` with
every problem and its field path (``spec.nodeGroups[1].maxSize: must be >= minSize (got 0 < 2)``).

Format decisions beyond the contract:

- Unknown keys in kubetide's own sections are errors with a "did you mean" (a silently ignored typo
  runs a different experiment); inside Kubernetes manifests they are ignored, as Kubernetes does.
  Escalator node groups are decoded and validated by Escalator's rules (:mod:`kubetide.escalator.config`,
  its messages), and their unknown keys are errors too (Escalator ignores them).
- Values are strictly typed (``"5"`` is not an integer); durations are Go strings or seconds; every
  quantity goes through the exact Kubernetes parser and a bad one is quoted.
- Defaults are applied in the model (``initialSize`` = ``minSize`` via :attr:`NodeGroupSpec.initial_size`,
  provisioning 60s/15s/10s, HPA settings as kube-controller-manager's, CA flags from
  :mod:`~kubetide.cluster.flags`); :func:`resolve_node_group` merges catalog, capacity,
  allocatable and template into what the simulated cloud uses.
- ``spec.instanceTypes`` entries override only the fields they give; a new type needs cpu and memory.
- Series semantics (step before its first ``at`` is 0, csv ``timeColumn`` defaults to the first column,
  noise held per ``interval``) are in :mod:`~kubetide.sim.scenario.series_spec`.
- Time windows (faults, steps, ramps, actions) must lie within ``spec.duration``; references
  (traffic targets, HPA targets, scale/delete actions) may name objects created by an earlier ``apply``.
- Extensions: :data:`~kubetide.sim.scenario.objects.OBJECT_VALIDATORS` (kind -> check; the HPA hook) and
  :data:`~kubetide.cluster.flags.CA_FLAGS` (Cluster Autoscaler flags) are the registries.
"""

from kubetide.sim.scenario.actions import Action
from kubetide.sim.scenario.autoscalers import (
    Autoscalers,
    ClusterAutoscalerSettings,
    EscalatorSettings,
    HpaSettings,
)
from kubetide.sim.scenario.catalog import BUILTIN_CATALOG, InstanceType
from kubetide.sim.scenario.loader import load_scenario, parse_document, parse_scenario
from kubetide.sim.scenario.model import InstanceTypeSpec, Metadata, MetricsSettings, Scenario, ScenarioSpec
from kubetide.sim.scenario.nodegroups import NodeGroupSpec, Provisioning
from kubetide.sim.scenario.resolved import ResolvedNodeGroup, resolve_node_group
from kubetide.sim.scenario.traffic import MetricFeedSpec, Traffic

__all__ = [
    "BUILTIN_CATALOG",
    "Action",
    "Autoscalers",
    "ClusterAutoscalerSettings",
    "EscalatorSettings",
    "HpaSettings",
    "InstanceType",
    "InstanceTypeSpec",
    "Metadata",
    "MetricFeedSpec",
    "MetricsSettings",
    "NodeGroupSpec",
    "Provisioning",
    "ResolvedNodeGroup",
    "Scenario",
    "ScenarioSpec",
    "Traffic",
    "load_scenario",
    "parse_document",
    "parse_scenario",
    "resolve_node_group",
]
