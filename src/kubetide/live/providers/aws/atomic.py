"""How an Auto Scaling group is raised all-or-nothing, which CA's aws provider does not do (its
``AtomicIncreaseSize`` is not implemented, so CA raises the group with ``IncreaseSize``).

Two routes; the provider returns which one it took, and a best-effort-atomic ProvisioningRequest's
``Provisioned`` condition says it:

- **fleet** (a group with a launch template and no mixed instances policy): one instant EC2 Fleet whose
  ``MinTargetCapacity`` is the whole increase (EC2 launches all of it or nothing; it takes
  ``MinTargetCapacity`` only with ``SingleInstanceType`` and ``SingleAvailabilityZone``), then
  ``AttachInstances`` puts the instances in the group, which raises its desired capacity by their number.
  Whatever does not end in the group (a fleet that launched less, an attach refused) is terminated before
  the call fails, so a failed increase leaves nothing behind.
- **rollback** (a mixed instances policy, which picks types and markets the fleet cannot reproduce, or a
  launch configuration, which a fleet cannot launch): ``SetDesiredCapacity`` as ``IncreaseSize``, and the
  increase is remembered (:class:`PendingIncrease`); when a refresh sees the group's launch fail before
  all of it came, the instances that did come are terminated with the desired capacity decremented (as
  CA's ``DeleteNodes``) and the capacity still asked for is dropped.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from kubetide.cloud.instance import CloudProviderError
from kubetide.live.providers.aws.api import AsgInfo, AwsApi, AwsCallError

__all__ = ["FLEET_TAG", "PendingIncrease", "came_since", "fleet_refusal", "launch_by_fleet", "rollback_route"]

log = logging.getLogger(__name__)

FLEET_TAG = "kubetide.io/atomic-increase-of"  # on a fleet's instances: the group they were launched for
_ATTACH_PER_CALL = 20  # AttachInstances' limit
MAX_MIN_TARGET_CAPACITY = 1000  # CreateFleet's limit on MinTargetCapacity


@dataclass(frozen=True, slots=True)
class PendingIncrease:
    """A rollback-route increase not yet delivered: the group's instances before it, its size, and the
    desired capacity it set."""

    before: frozenset[str]
    delta: int
    target: int


def fleet_refusal(info: AsgInfo | None, delta: int) -> str:
    """Why an instant fleet cannot raise this group by ``delta`` ("" when it can)."""
    if delta > MAX_MIN_TARGET_CAPACITY:
        return f"{delta} instances: an instant fleet's MinTargetCapacity is at most {MAX_MIN_TARGET_CAPACITY}"
    if info is None:
        return "the group is not in AWS"
    if info.mixed_instances:
        return "the group has a mixed instances policy"
    if info.launch_template is None:
        return (
            "the group launches from a launch configuration"
            if info.launch_configuration
            else "no launch template"
        )
    return ""


def fleet_route(name: str, delta: int) -> str:
    return (
        f"all-or-nothing: an instant EC2 Fleet launched {delta} instance(s) at once "
        f"(MinTargetCapacity {delta}) and attached them to ASG {name}"
    )


def rollback_route(name: str, why: str) -> str:
    return (
        f"not all-or-nothing in the cloud ({why}): ASG {name} raised with SetDesiredCapacity, "
        "rolled back if a launch fails (the instances that came terminated)"
    )


def launch_by_fleet(api: AwsApi, info: AsgInfo, instance_type: str, delta: int, *, spot: bool) -> str:
    """Launch ``delta`` instances with one instant fleet and attach them to the group; the route's note.
    CloudProviderError, with every launched instance terminated, when not all of them end in the group."""
    name = info.name
    assert info.launch_template is not None  # fleet_refusal said so
    try:
        launch = api.create_instant_fleet(
            info.launch_template,
            instance_type,
            delta,
            zones=info.zones,
            subnets=info.subnets,
            spot=spot,
            tags={FLEET_TAG: name},
        )
    except AwsCallError as exc:
        raise CloudProviderError(f"instant EC2 Fleet for ASG {name}: {exc}") from exc
    ids = list(launch.instance_ids)
    why = "; ".join(launch.errors) or "no error given"
    if len(ids) != delta:
        # MinTargetCapacity should make this none or all; a part is never kept, nor an excess attached.
        cleanup = _terminate_loose(api, ids)
        raise CloudProviderError(
            f"instant EC2 Fleet for ASG {name} launched {len(ids)} of {delta} instance(s) ({why}){cleanup}"
        )
    attached: list[str] = []
    try:
        for i in range(0, len(ids), _ATTACH_PER_CALL):
            batch = ids[i : i + _ATTACH_PER_CALL]
            api.attach_instances(name, batch)
            attached += batch
    except AwsCallError as exc:
        cleanup = _terminate_attached(api, attached) + _terminate_loose(api, ids[len(attached) :])
        raise CloudProviderError(f"attach the fleet's instances to ASG {name}: {exc}{cleanup}") from exc
    log.info("ASG %s: attached %d instance(s) of an instant EC2 Fleet: %s", name, len(ids), ", ".join(ids))
    return fleet_route(name, delta)


def came_since(info: AsgInfo, pending: PendingIncrease, terminating: tuple[str, ...]) -> list[str]:
    """The group's live instances that were not in it before the increase."""
    return [
        i.id for i in info.instances if i.id not in pending.before and i.lifecycle_state not in terminating
    ]


def _terminate_loose(api: AwsApi, ids: list[str]) -> str:
    if not ids:
        return ": nothing launched"
    try:
        api.terminate_ec2_instances(ids)
    except AwsCallError as exc:
        log.error("could not terminate the fleet's instances %s: %s", ", ".join(ids), exc)
        return f"; could NOT terminate {', '.join(ids)} (tagged {FLEET_TAG}): {exc}"
    return f"; terminated {', '.join(ids)}"


def _terminate_attached(api: AwsApi, ids: list[str]) -> str:
    failed: list[str] = []
    for instance in ids:
        try:
            api.terminate_instance(instance)  # desired capacity decremented: the group does not replace it
        except AwsCallError as exc:
            log.error("could not terminate attached instance %s: %s", instance, exc)
            failed.append(instance)
    done = [i for i in ids if i not in failed]
    out = f"; terminated attached {', '.join(done)}" if done else ""
    return out + (f"; could NOT terminate attached {', '.join(failed)}" if failed else "")
