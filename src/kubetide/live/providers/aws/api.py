"""The AWS calls the provider makes, on boto3, answered as typed values.

Every AWS call of the provider goes through :class:`AwsApi`, so the IAM policy in the README is exactly
its method list, and tests and the bench can count calls (``calls``, per operation). Describe calls are
paginated and batched (100 group names, 100 instance types per call: the APIs' own limits). Throttling
and transient errors (5xx, connection resets) are retried by botocore's ``standard`` retry mode with
exponential backoff and jitter; what still fails, and any answer that cannot be read, raises
:class:`~kubetide.live.providers.aws.errors.AwsCallError` (one line: what is wrong, the AWS error code).
"""

from __future__ import annotations

import json
import threading
from collections import Counter
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any, TypeVar

import boto3
from botocore.config import Config

from kubetide.live.providers.aws.errors import AwsCallError, aws_errors

__all__ = [
    "Activity",
    "AsgInfo",
    "AsgInstance",
    "AwsApi",
    "AwsCallError",
    "FleetLaunch",
    "InstanceTypeInfo",
    "LaunchTemplateRef",
]

T = TypeVar("T")
_NAMES_PER_CALL = 100  # DescribeAutoScalingGroups' MaxRecords and DescribeInstanceTypes' batch limit
_ATTACH_PER_CALL = 20  # AttachInstances takes at most 20 instance ids
_TERMINATE_PER_CALL = 1000  # TerminateInstances' limit


@dataclass(frozen=True, slots=True)
class AsgInstance:
    id: str
    zone: str
    lifecycle_state: str
    health_status: str
    instance_type: str = ""


@dataclass(frozen=True, slots=True)
class LaunchTemplateRef:
    id: str
    name: str
    version: str


@dataclass(frozen=True, slots=True)
class AsgInfo:
    name: str
    min_size: int
    max_size: int
    desired: int
    zones: tuple[str, ...]
    instances: tuple[AsgInstance, ...]
    tags: dict[str, str] = field(default_factory=dict)
    launch_template: LaunchTemplateRef | None = None
    # A mixed-instances policy's template and its first override's instance type (CA uses the first).
    override_instance_type: str = ""
    launch_configuration: str = ""
    subnets: tuple[str, ...] = ()  # VPCZoneIdentifier, split
    mixed_instances: bool = False  # a MixedInstancesPolicy: the group picks types and markets itself


@dataclass(frozen=True, slots=True)
class FleetLaunch:
    """What an instant EC2 Fleet launched: its instances, and why it launched no more (``code: message``)."""

    instance_ids: tuple[str, ...]
    errors: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Activity:
    status_code: str
    status_message: str
    description: str
    start_time: float  # seconds since the epoch


@dataclass(frozen=True, slots=True)
class InstanceTypeInfo:
    name: str
    vcpus: int
    memory_mib: int
    gpus: int
    architecture: str  # as Kubernetes spells it: amd64 or arm64


class AwsApi:
    """boto3 clients for Auto Scaling and EC2 in one region (optionally at ``endpoint_url``: moto)."""

    def __init__(
        self,
        *,
        region: str,
        endpoint_url: str | None = None,
        max_attempts: int = 5,  # in all, the first try included
        session: Any = None,
    ) -> None:
        config = Config(
            region_name=region,
            retries={"mode": "standard", "total_max_attempts": max_attempts},
            connect_timeout=5,
            read_timeout=20,
        )
        self.region = region
        self.calls: Counter[str] = Counter()
        self._lock = threading.Lock()
        with aws_errors("create_client", region=region):  # an invalid region fails here
            session = session or boto3.session.Session()
            self._autoscaling: Any = session.client("autoscaling", endpoint_url=endpoint_url, config=config)
            self._ec2: Any = session.client("ec2", endpoint_url=endpoint_url, config=config)
            # The Price List API answers in us-east-1 only (for every region's prices).
            self._pricing: Any = session.client(
                "pricing", endpoint_url=endpoint_url, config=config.merge(Config(region_name="us-east-1"))
            )
        self.endpoint_url = str(self._autoscaling.meta.endpoint_url)
        for client in (self._autoscaling, self._ec2, self._pricing):
            client.meta.events.register("before-call", self._count)

    def _count(self, model: Any, **_: Any) -> None:
        with self._lock:
            self.calls[str(model.name)] += 1

    def _errors(self, client: Any, operation: str) -> AbstractContextManager[None]:
        return aws_errors(operation, client, region=self.region)

    def _call(self, client: Any, operation: str, read: Callable[[Any], T], **params: Any) -> T:
        """``read(answer)`` of one call; reading is inside the wrapper: a malformed answer is a failed call."""
        with self._errors(client, operation):
            return read(getattr(client, operation)(**params))

    def _pages(
        self, client: Any, operation: str, key: str, read: Callable[[Any], T], **params: Any
    ) -> list[T]:
        with self._errors(client, operation):
            pages = client.get_paginator(operation).paginate(**params)
            return [read(item) for page in pages for item in page.get(key, [])]

    # --- Auto Scaling

    def groups_by_names(self, names: Sequence[str]) -> list[AsgInfo]:
        result: list[AsgInfo] = []
        ordered = sorted(set(names))
        for i in range(0, len(ordered), _NAMES_PER_CALL):
            batch = ordered[i : i + _NAMES_PER_CALL]
            result += self._pages(
                self._autoscaling,
                "describe_auto_scaling_groups",
                "AutoScalingGroups",
                _asg,
                AutoScalingGroupNames=batch,
                PaginationConfig={"PageSize": _NAMES_PER_CALL},
            )
        return result

    def groups_by_tags(self, tags: dict[str, str]) -> list[AsgInfo]:
        """Groups carrying every tag key (with the value, where one is given), as CA's auto-discovery."""
        filters = [
            {"Name": f"tag:{k}", "Values": [v]} if v else {"Name": "tag-key", "Values": [k]}
            for k, v in sorted(tags.items())
        ]
        return self._pages(
            self._autoscaling,
            "describe_auto_scaling_groups",
            "AutoScalingGroups",
            _asg,
            Filters=filters,
            PaginationConfig={"PageSize": _NAMES_PER_CALL},
        )

    def scaling_activities(self, group: str, max_records: int = 20) -> list[Activity]:
        """The group's most recent scaling activities, newest first (one call, no paging: CA's view)."""
        return self._call(
            self._autoscaling,
            "describe_scaling_activities",
            lambda answer: [_activity(a) for a in answer.get("Activities", [])],
            AutoScalingGroupName=group,
            MaxRecords=max_records,
        )

    def set_desired_capacity(self, group: str, desired: int) -> None:
        self._call(
            self._autoscaling,
            "set_desired_capacity",
            _ignore,
            AutoScalingGroupName=group,
            DesiredCapacity=desired,
            HonorCooldown=False,
        )

    def terminate_instance(self, instance_id: str) -> None:
        self._call(
            self._autoscaling,
            "terminate_instance_in_auto_scaling_group",
            _ignore,
            InstanceId=instance_id,
            ShouldDecrementDesiredCapacity=True,
        )

    def attach_instances(self, group: str, instance_ids: Sequence[str]) -> None:
        """Attach running instances to ``group`` (its desired capacity rises by their number)."""
        for i in range(0, len(instance_ids), _ATTACH_PER_CALL):
            self._call(
                self._autoscaling,
                "attach_instances",
                _ignore,
                AutoScalingGroupName=group,
                InstanceIds=list(instance_ids[i : i + _ATTACH_PER_CALL]),
            )

    # --- EC2: all-or-nothing launches (an instant fleet) and their rollback

    def create_instant_fleet(
        self,
        template: LaunchTemplateRef,
        instance_type: str,
        count: int,
        *,
        zones: Sequence[str],
        subnets: Sequence[str],
        spot: bool,
        tags: dict[str, str],
    ) -> FleetLaunch:
        """``count`` instances of the template at once or none: an instant fleet whose ``MinTargetCapacity``
        is its whole target (which EC2 accepts only with ``SingleInstanceType`` and
        ``SingleAvailabilityZone``), placed in one of the group's subnets (else zones)."""
        spec: dict[str, Any] = {"Version": template.version or "$Default"}
        if template.id:
            spec["LaunchTemplateId"] = template.id
        else:
            spec["LaunchTemplateName"] = template.name
        places = [{"SubnetId": s} for s in subnets] or [{"AvailabilityZone": z} for z in zones]
        overrides = [{"InstanceType": instance_type, **place} for place in places] or [
            {"InstanceType": instance_type}
        ]
        market = "spot" if spot else "on-demand"
        options: dict[str, Any] = {
            "MinTargetCapacity": count,
            "SingleInstanceType": True,
            "SingleAvailabilityZone": True,
        }
        if spot:
            options["AllocationStrategy"] = "price-capacity-optimized"  # AWS's advice for Spot
        params: dict[str, Any] = {
            "Type": "instant",
            "LaunchTemplateConfigs": [{"LaunchTemplateSpecification": spec, "Overrides": overrides}],
            "TargetCapacitySpecification": {
                "TotalTargetCapacity": count,
                "DefaultTargetCapacityType": market,
                ("SpotTargetCapacity" if spot else "OnDemandTargetCapacity"): count,
            },
            ("SpotOptions" if spot else "OnDemandOptions"): options,
        }
        if tags:
            params["TagSpecifications"] = [
                {
                    "ResourceType": "instance",
                    "Tags": [{"Key": k, "Value": v} for k, v in sorted(tags.items())],
                }
            ]
        return self._call(self._ec2, "create_fleet", _fleet_launch, **params)

    def terminate_ec2_instances(self, instance_ids: Sequence[str]) -> None:
        """Terminate instances that are in no Auto Scaling group (a fleet's, not attached)."""
        for i in range(0, len(instance_ids), _TERMINATE_PER_CALL):
            self._call(
                self._ec2,
                "terminate_instances",
                _ignore,
                InstanceIds=list(instance_ids[i : i + _TERMINATE_PER_CALL]),
            )

    # --- EC2 (templates for scale from zero)

    def instance_types(self, names: Sequence[str]) -> list[InstanceTypeInfo]:
        result: list[InstanceTypeInfo] = []
        ordered = sorted(set(names))
        for i in range(0, len(ordered), _NAMES_PER_CALL):
            result += self._pages(
                self._ec2,
                "describe_instance_types",
                "InstanceTypes",
                _instance_type,
                InstanceTypes=ordered[i : i + _NAMES_PER_CALL],
            )
        return result

    def launch_template_instance_type(self, ref: LaunchTemplateRef) -> str:
        """The instance type the launch template version names ("" when it names none)."""
        return self._call(
            self._ec2, "describe_launch_template_versions", _template_instance_type, **_template_params(ref)
        )

    def launch_template_spot(self, ref: LaunchTemplateRef) -> bool:
        """Whether the launch template version asks for Spot (``InstanceMarketOptions``)."""
        return self._call(
            self._ec2, "describe_launch_template_versions", _template_spot, **_template_params(ref)
        )

    def launch_configuration_instance_type(self, name: str) -> str:
        return self._call(
            self._autoscaling,
            "describe_launch_configurations",
            _configuration_instance_type,
            LaunchConfigurationNames=[name],
        )

    # --- prices

    def on_demand_price(self, instance_type: str) -> float | None:
        """USD per hour of a shared-tenancy Linux ``instance_type`` in this region; None if not listed."""
        filters = [
            {"Type": "TERM_MATCH", "Field": field, "Value": value}
            for field, value in (
                ("instanceType", instance_type),
                ("regionCode", self.region),
                ("operatingSystem", "Linux"),
                ("tenancy", "Shared"),
                ("preInstalledSw", "NA"),
                ("capacitystatus", "Used"),
            )
        ]
        return self._call(
            self._pricing,
            "get_products",
            _on_demand_usd,
            ServiceCode="AmazonEC2",
            Filters=filters,
            MaxResults=10,
        )

    def spot_price(self, instance_type: str, zone: str) -> float | None:
        """The latest Linux spot price of ``instance_type`` in ``zone`` (USD per hour); None if none."""
        return self._call(
            self._ec2,
            "describe_spot_price_history",
            _latest_spot_usd,
            InstanceTypes=[instance_type],
            ProductDescriptions=["Linux/UNIX", "Linux/UNIX (Amazon VPC)"],
            AvailabilityZone=zone,
            MaxResults=10,
        )


# --- reading answers (inside the call's error wrapper: a missing field is a failed call)


def _ignore(_answer: Any) -> None:
    return None


def _activity(a: Any) -> Activity:
    return Activity(
        status_code=str(a.get("StatusCode", "")),
        status_message=str(a.get("StatusMessage", "")),
        description=str(a.get("Description", "")),
        start_time=a["StartTime"].timestamp() if a.get("StartTime") else 0.0,
    )


def _instance_type(t: Any) -> InstanceTypeInfo:
    gpus = sum(int(g.get("Count", 0)) for g in (t.get("GpuInfo") or {}).get("Gpus", []))
    archs = (t.get("ProcessorInfo") or {}).get("SupportedArchitectures") or ["x86_64"]
    return InstanceTypeInfo(
        name=str(t["InstanceType"]),
        vcpus=int(t["VCpuInfo"]["DefaultVCpus"]),
        memory_mib=int(t["MemoryInfo"]["SizeInMiB"]),
        gpus=gpus,
        architecture="arm64" if "arm64" in archs else "amd64",
    )


def _template_instance_type(answer: Any) -> str:
    versions = answer.get("LaunchTemplateVersions", [])
    if not versions:
        return ""
    return str((versions[0].get("LaunchTemplateData") or {}).get("InstanceType", ""))


def _template_params(ref: LaunchTemplateRef) -> dict[str, Any]:
    params: dict[str, Any] = {"Versions": [ref.version or "$Default"]}
    if ref.id:
        params["LaunchTemplateId"] = ref.id
    else:
        params["LaunchTemplateName"] = ref.name
    return params


def _template_spot(answer: Any) -> bool:
    versions = answer.get("LaunchTemplateVersions", [])
    if not versions:
        return False
    market = (versions[0].get("LaunchTemplateData") or {}).get("InstanceMarketOptions") or {}
    return str(market.get("MarketType", "")) == "spot"


def _fleet_launch(answer: Any) -> FleetLaunch:
    ids = tuple(str(i) for launched in answer.get("Instances", []) for i in launched.get("InstanceIds", []))
    errors = tuple(
        f"{e.get('ErrorCode', 'Unknown')}: {e.get('ErrorMessage', '')}".rstrip(": ")
        for e in answer.get("Errors", [])
    )
    return FleetLaunch(ids, errors)


def _configuration_instance_type(answer: Any) -> str:
    configs = answer.get("LaunchConfigurations", [])
    return str(configs[0].get("InstanceType", "")) if configs else ""


def _on_demand_usd(answer: Any) -> float | None:
    for item in answer.get("PriceList", []):
        product = json.loads(item) if isinstance(item, str) else item
        for term in (product.get("terms") or {}).get("OnDemand", {}).values():
            for dimension in (term.get("priceDimensions") or {}).values():
                usd = (dimension.get("pricePerUnit") or {}).get("USD")
                if usd is not None and float(usd) > 0:
                    return float(usd)
    return None


def _latest_spot_usd(answer: Any) -> float | None:
    history = sorted(answer.get("SpotPriceHistory", []), key=lambda h: h.get("Timestamp"), reverse=True)
    return float(history[0]["SpotPrice"]) if history else None


def _template_ref(raw: Any) -> LaunchTemplateRef | None:
    if not raw:
        return None
    return LaunchTemplateRef(
        id=str(raw.get("LaunchTemplateId", "")),
        name=str(raw.get("LaunchTemplateName", "")),
        version=str(raw.get("Version", "")),
    )


def _asg(g: Any) -> AsgInfo:
    template = _template_ref(g.get("LaunchTemplate"))
    override = ""
    mixed = g.get("MixedInstancesPolicy")
    if mixed:
        spec = mixed.get("LaunchTemplate") or {}
        template = _template_ref(spec.get("LaunchTemplateSpecification")) or template
        overrides = spec.get("Overrides") or []
        if overrides:
            override = str(overrides[0].get("InstanceType", ""))
    return AsgInfo(
        name=str(g["AutoScalingGroupName"]),
        min_size=int(g["MinSize"]),
        max_size=int(g["MaxSize"]),
        desired=int(g["DesiredCapacity"]),
        zones=tuple(str(z) for z in g.get("AvailabilityZones", [])),
        instances=tuple(
            AsgInstance(
                id=str(i["InstanceId"]),
                zone=str(i.get("AvailabilityZone", "")),
                lifecycle_state=str(i.get("LifecycleState", "")),
                health_status=str(i.get("HealthStatus", "")),
                instance_type=str(i.get("InstanceType", "")),
            )
            for i in g.get("Instances", [])
        ),
        tags={str(t["Key"]): str(t.get("Value", "")) for t in g.get("Tags", [])},
        launch_template=template,
        override_instance_type=override,
        launch_configuration=str(g.get("LaunchConfigurationName", "")),
        mixed_instances=bool(mixed),
        subnets=tuple(s.strip() for s in str(g.get("VPCZoneIdentifier") or "").split(",") if s.strip()),
    )
