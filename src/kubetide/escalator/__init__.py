"""The batch autoscaler, deciding exactly as Atlassian's Escalator (utilisation-driven node groups).

Entry point: :func:`kubetide.escalator.decision.escalator_scale_node_group` (one run of one node group,
``now`` passed in, the cloud group's sizes as an :class:`AsgSnapshot`, the group's in-memory state
as a :class:`GroupMemory` in and out). The stages: ``config`` (the node-group YAML options and their
validation), ``membership`` (which pods and nodes belong), ``requests`` and ``usage`` (requests,
capacity, percentages, the scale-up size), ``taints`` (buckets and which nodes to taint or untaint),
``health``, ``reap`` (which tainted nodes to delete), ``scale`` (clamping to the cloud group),
``state`` (the scale lock), ``reasons`` (Escalator's wording).

The loop: :class:`kubetide.escalator.driver.EscalatorDriver` (upstream ``RunOnce``, one ``tick(now)``
over every configured group) reads an ``EscalatorWorldSource`` (``world``), decides, and carries each
decision out through the ``ClusterPort`` and the cloud port (``executor``, in upstream's order),
reporting Escalator's metrics as plain values (``metrics``). No I/O but the ports and no clock reads.
"""

from kubetide.escalator.config import NodeGroupOptions, node_group_from_yaml, validate_node_group
from kubetide.escalator.decision import EscalatorDecision, escalator_scale_node_group
from kubetide.escalator.driver import EscalatorDriver
from kubetide.escalator.executor import Action, ActionKind, Execution
from kubetide.escalator.reasons import EventReason, Message, Reason
from kubetide.escalator.requests import CpuMem
from kubetide.escalator.result import GroupRun, TickResult
from kubetide.escalator.scale import AsgSnapshot
from kubetide.escalator.state import GroupMemory, ScaleLock
from kubetide.escalator.world import EscalatorWorldSource

__all__ = [
    "Action",
    "ActionKind",
    "AsgSnapshot",
    "CpuMem",
    "EscalatorDecision",
    "EscalatorDriver",
    "EscalatorWorldSource",
    "EventReason",
    "Execution",
    "GroupMemory",
    "GroupRun",
    "Message",
    "NodeGroupOptions",
    "Reason",
    "ScaleLock",
    "TickResult",
    "escalator_scale_node_group",
    "node_group_from_yaml",
    "validate_node_group",
]
