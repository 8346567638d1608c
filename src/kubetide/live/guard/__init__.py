"""Writes only while leading, and none in a dry run: one rule for every port a live autoscaler writes
through.

Each write through a guarded port is one of three things (:class:`~.gate.WriteGate` decides):

- **refused** when this replica may not act (it lost the Lease, or a stop was asked for): a loop half
  way through its actions stops writing at once beside the new leader. The port raises its own error
  (ApiError for the cluster, CloudProviderError for the cloud, ScaleError and StatusWriteError for the
  HPA), which the loop reports and moves on from;
- **said**, in a dry run (``--dry-run``): logged as ``dry run: would ...`` and counted in
  ``kubetide_dry_run_actions_total{component,action}``, then reported to the loop as done, so a dry
  run decides exactly as a real one while nothing a user owns changes;
- **made** otherwise.

A shadow (``--shadow``) makes none: its gate refuses every write, and beneath the ports its connection
refuses any request that is not a read before it is sent (:mod:`.readonly`).

Reads and Events pass: they change nothing a user owns (a dry run's Events say "would",
:mod:`.events`). Each port protocol has its own wrapper, every method written out: nothing is forwarded
by attribute, so a wrapper offers exactly its protocol (a forwarding wrapper once hid an optional
capability, the CA driver's ConfigMap writes, and live CA wrote no state).
"""

from kubetide.live.guard.cloud import GuardedCloud, GuardedNodeGroup
from kubetide.live.guard.cluster import GuardedClusterPort, GuardedStatusConfigMap, LeadershipLost
from kubetide.live.guard.events import DryRunEventRecorder, dry_run_message, recorder_type
from kubetide.live.guard.gate import WriteGate
from kubetide.live.guard.hpa import GuardedHPAs, GuardedMemoryConfigMap, GuardedScaleTargets
from kubetide.live.guard.readonly import WriteRefused, read_only_hook

__all__ = [
    "DryRunEventRecorder",
    "GuardedCloud",
    "GuardedClusterPort",
    "GuardedHPAs",
    "GuardedMemoryConfigMap",
    "GuardedNodeGroup",
    "GuardedScaleTargets",
    "GuardedStatusConfigMap",
    "LeadershipLost",
    "WriteGate",
    "WriteRefused",
    "dry_run_message",
    "read_only_hook",
    "recorder_type",
]
