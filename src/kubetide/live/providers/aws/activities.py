"""Why an Auto Scaling group cannot launch what it was asked for, from its scaling activities.

CA's aws provider (``isNodeGroupAvailable``) marks a group's placeholder instances as failed
(class OutOfResources, code ``placeholder-cannot-be-fulfilled``) when a scaling activity newer than its
last size change has status ``Failed``; CA then backs the group off and the next expander option is
tried in the same loop that sees it, instead of waiting ``--max-node-provision-time``. We keep CA's class
for every failed launch (so the failover is the same) and refine the code from the activity's message:
``InsufficientInstanceCapacity`` (a stockout), the spot codes, the quota codes, else CA's own code.

One difference from CA, on purpose: CA looks at every activity since the last size change, and after a
restart (no last change known) at all of them, so a week-old failure blocks a healthy group. We stop at
the newest successful launch as well: a later success means capacity came back.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from kubetide.cloud.instance import ErrorClass, InstanceErrorInfo
from kubetide.live.providers.aws.api import Activity

__all__ = ["UNFULFILLABLE", "failed_launch"]

UNFULFILLABLE = "placeholder-cannot-be-fulfilled"
# Codes EC2 puts in a failed launch's message, most specific first.
_CODES = (
    "InsufficientInstanceCapacity",
    "SpotMaxPriceTooLow",
    "MaxSpotInstanceCountExceeded",
    "InsufficientFreeAddressesInSubnet",
    "VcpuLimitExceeded",
    "InstanceLimitExceeded",
)
_PHRASES = (
    (re.compile(r"do not have sufficient .* capacity", re.I), "InsufficientInstanceCapacity"),
    (re.compile(r"no spot capacity available", re.I), "InsufficientInstanceCapacity"),
    (re.compile(r"(vcpu limit|quota allows)", re.I), "VcpuLimitExceeded"),
)


def failed_launch(activities: Sequence[Activity], since: float) -> InstanceErrorInfo | None:
    """The error of the newest failed activity started at or after ``since`` (newest first, as AWS
    lists them), unless a successful one came after it; None when the group is not failing."""
    for activity in activities:
        if activity.start_time < since:
            break
        if activity.status_code == "Successful":
            return None
        if activity.status_code == "Failed":
            return _classify(activity)
    return None


def _classify(activity: Activity) -> InstanceErrorInfo:
    text = f"{activity.status_message} {activity.description}"
    message = activity.status_message or activity.description
    for code in _CODES:
        if code in text:
            return InstanceErrorInfo(ErrorClass.OutOfResources, code, message)
    for pattern, code in _PHRASES:
        if pattern.search(text):
            return InstanceErrorInfo(ErrorClass.OutOfResources, code, message)
    return InstanceErrorInfo(
        ErrorClass.OutOfResources,
        UNFULFILLABLE,
        message or "AWS cannot provision any more instances for this node group",
    )
