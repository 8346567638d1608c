"""Prices for the ``price`` expander on AWS (CA's price expander is GCE-only).

A node's hourly price is its instance type's (``node.kubernetes.io/instance-type``): on-demand from the
AWS Price List API (Linux, shared tenancy, this region), spot from ``DescribeSpotPriceHistory`` in the
node's zone when the node is a spot node (one of the capacity-type labels below, which an ASG sets on
its template with a ``.../node-template/label/...`` tag). Both cached (on-demand a day, spot an hour; a
miss 5 minutes, so a failing API is not asked every loop). A user price file overrides both:

```yaml
onDemand: {m5.xlarge: 0.192}
spot: {m5.xlarge: 0.0712}
```

No price is ever invented: with none, ``node_price`` raises CloudProviderError and the expander says so.
``pod_price`` is not a cloud price but the yardstick CA's price expander divides by: CA's GCE per-core
and per-GiB hourly rates applied to the pod's requests, the same for every group, so only the ranking
depends on it.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from typing import Any

from kubetide.cloud.instance import CloudProviderError
from kubetide.live.providers.aws.api import AwsApi, AwsCallError
from kubetide.live.providers.aws.specs import AwsConfigError
from kubetide.model import yamldoc
from kubetide.model.node import INSTANCE_TYPE_LABEL, NodeView
from kubetide.model.numbers import NumberError, finite_float
from kubetide.model.pod import Pod
from kubetide.model.resources import CPU, MEMORY

__all__ = ["SPOT_LABELS", "AwsPricing", "PriceFile", "load_price_file"]

log = logging.getLogger(__name__)

SPOT_LABELS = {
    "eks.amazonaws.com/capacityType": "SPOT",
    "karpenter.sh/capacity-type": "spot",
    "node.kubernetes.io/lifecycle": "spot",
}
_ON_DEMAND_TTL, _SPOT_TTL, _MISS_TTL = 86400.0, 3600.0, 300.0
# CA's price expander yardstick (gce_price_model.go): USD per core-hour and per GiB-hour.
_CPU_HOUR, _GIB_HOUR = 0.033174, 0.004446
_GIB = 1024**3

PriceFile = dict[str, dict[str, float]]  # "onDemand" | "spot" -> instance type -> USD per hour


def load_price_file(path: str) -> PriceFile:
    """The user's prices; AwsConfigError naming ``--aws-price-file`` and the bad entry."""

    def bad(what: str) -> AwsConfigError:
        return AwsConfigError([("aws-price-file", f"{path}: {what}")])

    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as exc:
        raise bad(f"cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise bad("cannot read: not UTF-8 text") from None
    try:
        raw: Any = yamldoc.load_documents(text, str(path))[0] or {}
    except yamldoc.YamlDocumentError as exc:
        raise AwsConfigError([("aws-price-file", problem) for problem in exc.problems]) from None
    if not isinstance(raw, Mapping):
        raise bad("must be a mapping with onDemand and/or spot")
    problems = [
        f"{key}: unknown field (expected onDemand, spot)" for key in raw if key not in ("onDemand", "spot")
    ]
    result: PriceFile = {"onDemand": {}, "spot": {}}
    for kind in ("onDemand", "spot"):
        prices = raw.get(kind) or {}
        if not isinstance(prices, Mapping):
            problems.append(f"{kind}: must map instance types to USD per hour")
            continue
        for itype, price in prices.items():
            try:
                if isinstance(price, bool) or not isinstance(price, int | float):
                    raise NumberError(price)
                value = finite_float(price)  # NaN and the infinities are no price
            except NumberError:
                value = -1.0
            if value < 0:
                problems.append(f"{kind}.{itype}: must be a non-negative number, got {price!r}")
                continue
            result[kind][str(itype)] = value
    if problems:  # every problem at once
        raise AwsConfigError([("aws-price-file", f"{path}: {problem}") for problem in problems])
    return result


class AwsPricing:
    def __init__(
        self, api: AwsApi, overrides: PriceFile | None = None, *, clock: Callable[[], float] = time.time
    ) -> None:
        self._api = api
        self._overrides = overrides or {"onDemand": {}, "spot": {}}
        self._clock = clock
        self._cache: dict[tuple[str, str, str], tuple[float | None, float]] = {}  # key -> (price, until)
        self._errors: dict[tuple[str, str, str], str] = {}  # key -> why the last lookup failed

    def hourly(self, instance_type: str, *, spot: bool, zone: str = "") -> float | None:
        kind = "spot" if spot else "onDemand"
        if instance_type in self._overrides.get(kind, {}):
            return self._overrides[kind][instance_type]
        key = (kind, instance_type, zone if spot else "")
        now = self._clock()
        cached = self._cache.get(key)
        if cached is not None and now < cached[1]:
            return cached[0]
        try:
            price = (
                self._api.spot_price(instance_type, zone)
                if spot
                else self._api.on_demand_price(instance_type)
            )
            self._errors.pop(key, None)
        except AwsCallError as exc:
            log.warning("no %s price for %s: %s", kind, instance_type, exc)
            self._errors[key] = str(exc)
            price = None
        ttl = _MISS_TTL if price is None else (_SPOT_TTL if spot else _ON_DEMAND_TTL)
        self._cache[key] = (price, now + ttl)
        return price

    def node_price(self, node: NodeView, start: float, end: float) -> float:
        instance_type = node.labels.get(INSTANCE_TYPE_LABEL, "")
        if not instance_type:
            raise CloudProviderError(f"node {node.name} has no {INSTANCE_TYPE_LABEL} label: no price")
        spot = _is_spot(node)
        price = self.hourly(instance_type, spot=spot, zone=node.zone or "")
        if price is None:
            kind = "spot" if spot else "on-demand"
            raise CloudProviderError(f"no {kind} price is known for {instance_type}")
        return price * max(0.0, end - start) / 3600.0

    def why_unpriced(self, node: NodeView) -> str:
        """Why ``node`` (a group's template) has no price; "" when it has one."""
        instance_type = node.labels.get(INSTANCE_TYPE_LABEL, "")
        if not instance_type:
            return f"its nodes have no {INSTANCE_TYPE_LABEL} label"
        spot = _is_spot(node)
        zone = node.zone or ""
        if self.hourly(instance_type, spot=spot, zone=zone) is not None:
            return ""
        kind = "spot" if spot else "on-demand"
        error = self._errors.get(("spot" if spot else "onDemand", instance_type, zone if spot else ""))
        where = f"zone {zone}" if spot else f"region {self._api.region}"
        source = "DescribeSpotPriceHistory" if spot else "the AWS Price List"
        return f"no {kind} price for {instance_type} in {where}: " + (error or f"{source} has none")

    def pod_price(self, pod: Pod, start: float, end: float) -> float:
        requests = pod.requests
        hourly = requests[CPU] / 1000.0 * _CPU_HOUR + requests[MEMORY] / _GIB * _GIB_HOUR
        return hourly * max(0.0, end - start) / 3600.0


def _is_spot(node: NodeView) -> bool:
    return any(node.labels.get(k, "").lower() == v.lower() for k, v in SPOT_LABELS.items())
