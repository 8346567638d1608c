"""The built-in instance type catalog: what the simulated clouds sell, with their published numbers.

Values as the clouds publish them (on-demand Linux prices per hour: AWS in us-east-1, Google Cloud in
us-central1). ``pods`` is the max pods a node of the type runs by default: on EKS the VPC CNI's
ENI-based limit ``enis * (ipv4_per_eni - 1) + 2`` (kept beside each entry so the number can be
checked), on GKE the default of 110 per node. GCE "GB" memory is GiB. A scenario's
``spec.instanceTypes`` adds entries or overrides fields of these (:func:`merged_catalog`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

__all__ = ["BUILTIN_CATALOG", "GPU_RESOURCE", "InstanceType", "eks_max_pods"]

GPU_RESOURCE = "nvidia.com/gpu"


def eks_max_pods(enis: int, ipv4_per_eni: int) -> int:
    """EKS default max pods without prefix delegation (``eni-max-pods.txt``)."""
    return enis * (ipv4_per_eni - 1) + 2


@dataclass(frozen=True, slots=True)
class InstanceType:
    """One machine type; ``cpu`` and ``memory`` are quantity strings as a Node's capacity writes them."""

    name: str
    cpu: str
    memory: str
    pods: int
    gpu: int = 0
    price_per_hour: float = 0.0
    cloud: str = "custom"  # aws, gce, or custom (from a scenario)
    zone: str = "zone-a"  # default zone of a group of this type


def _aws(
    name: str, cpu: int, memory_gib: int, enis: int, ips: int, price: float, gpu: int = 0
) -> InstanceType:
    return InstanceType(
        name, str(cpu), f"{memory_gib}Gi", eks_max_pods(enis, ips), gpu, price, "aws", "us-east-1a"
    )


def _gce(name: str, cpu: int, memory_gib: int, price: float) -> InstanceType:
    return InstanceType(name, str(cpu), f"{memory_gib}Gi", 110, 0, price, "gce", "us-central1-a")


_ENTRIES = (
    # name, vCPU, GiB, ENIs, IPv4 per ENI, $/h (us-east-1)
    _aws("t3.medium", 2, 4, 3, 6, 0.0416),
    _aws("m5.large", 2, 8, 3, 10, 0.096),
    _aws("m5.xlarge", 4, 16, 4, 15, 0.192),
    _aws("m5.2xlarge", 8, 32, 4, 15, 0.384),
    _aws("m5.4xlarge", 16, 64, 8, 30, 0.768),
    _aws("c5.large", 2, 4, 3, 10, 0.085),
    _aws("c5.xlarge", 4, 8, 4, 15, 0.17),
    _aws("c5.2xlarge", 8, 16, 4, 15, 0.34),
    _aws("c5d.large", 2, 4, 3, 10, 0.096),
    _aws("r5.large", 2, 16, 3, 10, 0.126),
    _aws("r5.xlarge", 4, 32, 4, 15, 0.252),
    _aws("g4dn.xlarge", 4, 16, 3, 10, 0.526, gpu=1),
    _aws("p3.2xlarge", 8, 61, 4, 15, 3.06, gpu=1),
    # name, vCPU, GiB, $/h (us-central1)
    _gce("n1-standard-4", 4, 15, 0.189999),
    _gce("n2-standard-4", 4, 16, 0.194236),
    _gce("n2-standard-8", 8, 32, 0.388472),
    _gce("e2-standard-4", 4, 16, 0.134012),
    _gce("e2-standard-8", 8, 32, 0.268024),
)

BUILTIN_CATALOG: Mapping[str, InstanceType] = {t.name: t for t in _ENTRIES}


def override(base: InstanceType | None, name: str, fields: Mapping[str, object]) -> InstanceType:
    """``base`` with the given fields replaced, or a new custom type when there is no base."""
    start = base if base is not None else InstanceType(name, "0", "0", 110)
    return replace(start, **fields)  # type: ignore[arg-type]
