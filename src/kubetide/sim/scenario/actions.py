"""Actions (§6): timed changes to the scenario, exactly one kind per entry.

``apply`` manifests are checked like ``spec.objects`` ones; references (``delete``, ``scale``,
``deleteNode``, ``attachInstance``, ``resizeGroup``) are checked against the objects and groups in
:mod:`kubetide.sim.scenario.checks`. Entries may also come from files (:mod:`.action_sources`).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, model_validator

from kubetide.sim.scenario.base import Duration, NonNegativeInt, ObjectRef, SpecModel, errors_at

__all__ = [
    "ACTION_KINDS",
    "RESTARTABLE",
    "Action",
    "AttachInstance",
    "DeleteNode",
    "ResizeGroup",
    "ScaleAction",
]

ACTION_KINDS = ("apply", "delete", "scale", "restart", "deleteNode", "attachInstance", "resizeGroup")
RESTARTABLE = ("cluster-autoscaler", "hpa", "escalator")


class ScaleAction(SpecModel):
    target: ObjectRef
    replicas: NonNegativeInt


class DeleteNode(SpecModel):
    group: Annotated[str, Field(min_length=1)]
    count: Annotated[int, Field(ge=1)] = 1


class AttachInstance(SpecModel):
    """kubetide's own action: machines attached to a group by hand (``aws autoscaling attach-instances``),
    with no kubelet: what an autoscaler must not mistake for a broken node of its own."""

    group: Annotated[str, Field(min_length=1)]
    count: Annotated[int, Field(ge=1)] = 1


class ResizeGroup(SpecModel):
    """kubetide's own action: a group's size set by hand or by something not simulated (``aws
    autoscaling set-desired-capacity``, another autoscaler, a recorded day's nodes): the cloud launches
    instances with the group's provisioning delays, or terminates the newest ones."""

    group: Annotated[str, Field(min_length=1)]
    size: NonNegativeInt


class Action(SpecModel):
    at: Duration
    apply: dict[str, Any] | None = None
    delete: ObjectRef | None = None
    scale: ScaleAction | None = None
    restart: Literal["cluster-autoscaler", "hpa", "escalator"] | None = None
    deleteNode: DeleteNode | None = None
    attachInstance: AttachInstance | None = None
    resizeGroup: ResizeGroup | None = None

    @model_validator(mode="after")
    def _exactly_one(self) -> Action:
        given = [k for k in ACTION_KINDS if getattr(self, k) is not None]
        if len(given) != 1:
            found = f"got {', '.join(given)}" if given else "got none"
            message = f"must have exactly one of {', '.join(ACTION_KINDS)} ({found})"
            raise errors_at("Action", [((), message, None)])
        return self

    @property
    def kind(self) -> str:
        """Which action this is: one of :data:`ACTION_KINDS`."""
        return next(k for k in ACTION_KINDS if getattr(self, k) is not None)
