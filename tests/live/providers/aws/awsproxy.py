"""The fault-injecting HTTP proxy the aws tests put in front of moto's server (also used by the
end-to-end tier and, on its own, by ``hack/aws_fault_proxy.py``): throttling, failed scaling activities,
capacity that never launches, Price List answers, answers that are not AWS's.

Tests set its attributes; a person drives it over HTTP on the same port (``/_proxy/...``, JSON bodies):

- ``POST /_proxy/stockout {"group": G}``: G accepts its desired capacity and launches nothing;
- ``POST /_proxy/activity {"group": G, "status": "Failed", "message": M}``: G's scaling activities are one
  activity started now (inject it after kubetide's ``SetDesiredCapacity``: older ones are history);
- ``POST /_proxy/throttle {"action": A, "count": N}``, ``POST /_proxy/garbage {"action": A, "count": N}``;
- ``POST /_proxy/price {"instanceType": T, "usd": P}``: the Price List's on-demand price;
- ``POST /_proxy/reset``; ``GET /_proxy/requests``: the AWS actions seen, in order.
"""

from __future__ import annotations

import http.client
import json
import threading
import uuid
import xml.etree.ElementTree as ET
from collections import Counter
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, parse_qsl, urlencode

REGION = "us-east-1"
CONTROL = "/_proxy/"
_AS_NS = "http://autoscaling.amazonaws.com/doc/2011-01-01/"
ET.register_namespace("", _AS_NS)


class AwsProxy:
    """Forwards every request to moto, except what a test asks it to fake.

    - ``throttle[action] = n``: the next ``n`` calls of ``action`` answer 400 ``Throttling``.
    - ``stocked_out`` groups: ``SetDesiredCapacity`` is recorded, not forwarded (nothing launches), and
      ``DescribeAutoScalingGroups`` reports the recorded desired capacity: capacity asked for, never there.
    - ``activities[group]``: what ``DescribeScalingActivities`` answers for it (dicts of StatusCode,
      StatusMessage, Description, StartTime as a datetime).
    - ``garbage[action] = n``: the next ``n`` calls of ``action`` answer 200 with a body that is not
      AWS's XML (a captive portal, a misrouted proxy): botocore's ``ResponseParserError``.
    - ``fleet_capacity[group] = n``: an instant ``CreateFleet`` for ``group`` (its instances tagged
      ``kubetide.io/atomic-increase-of``) launches at most ``n`` instances; 0: none, and the answer's
      errors say ``InsufficientInstanceCapacity``, as EC2's when ``MinTargetCapacity`` cannot be met
      (moto always launches the whole target).
    - ``launch_cap[group] = n``: ``SetDesiredCapacity`` launches up to ``n`` instances in all while
      ``DescribeAutoScalingGroups`` reports the desired capacity asked for (part of a scale-up came).
    """

    def __init__(self, upstream: tuple[str, int], port: int = 0) -> None:
        self.upstream = upstream
        self.throttle: Counter[str] = Counter()
        self.garbage: Counter[str] = Counter()
        self.seen: Counter[str] = Counter()
        self.requests: list[tuple[str, dict[str, str]]] = []  # (action, parameters), in order
        self.stocked_out: dict[str, int | None] = {}
        self.activities: dict[str, list[dict[str, Any]]] = {}
        self.prices: dict[str, float] = {}  # the Price List API (moto has none): on-demand USD per hour
        self.fleet_capacity: dict[str, int] = {}
        self.launch_cap: dict[str, int] = {}
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                self._answer(*proxy.control("GET", self.path, b""))

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                if self.path.startswith(CONTROL):
                    self._answer(*proxy.control("POST", self.path, body))
                    return
                self._answer(*proxy.handle(self.path, dict(self.headers), body))

            def _answer(self, status: int, headers: list[tuple[str, str]], answer: bytes) -> None:
                self.send_response(status)
                for k, v in headers:
                    if k.lower() not in (
                        "content-length",
                        "transfer-encoding",
                        "connection",
                        "date",
                        "server",
                    ):
                        self.send_header(k, v)
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def reset(self) -> None:
        self.throttle.clear()
        self.garbage.clear()
        self.seen.clear()
        self.requests.clear()
        self.stocked_out.clear()
        self.activities.clear()
        self.prices.clear()
        self.fleet_capacity.clear()
        self.launch_cap.clear()

    def handle(
        self, path: str, headers: dict[str, str], body: bytes
    ) -> tuple[int, list[tuple[str, str]], bytes]:
        target = next((v for k, v in headers.items() if k.lower() == "x-amz-target"), "")
        products = target.endswith(".GetProducts")  # the Price List API (JSON; moto has none)
        params = {} if products else {k: v[0] for k, v in parse_qs(body.decode()).items()}
        action = "GetProducts" if products else params.get("Action", "")
        self.seen[action] += 1
        self.requests.append((action, params))
        if self.throttle[action] > 0:
            self.throttle[action] -= 1
            if products:
                throttled = b'{"__type": "ThrottlingException", "message": "Rate exceeded"}'
                return 400, [("Content-Type", "application/x-amz-json-1.1")], throttled
            return 400, [("Content-Type", "text/xml")], _error("Throttling", "Rate exceeded")
        if products:
            return 200, [("Content-Type", "application/x-amz-json-1.1")], self._products(body)
        if self.garbage[action] > 0:
            self.garbage[action] -= 1
            return 200, [("Content-Type", "text/html")], b"<html><body>Sign in to continue</body>"
        group = params.get("AutoScalingGroupName", "")
        if action == "CreateFleet":
            fleet_group = _fleet_group(params)
            if fleet_group in self.fleet_capacity:
                if self.fleet_capacity[fleet_group] == 0:
                    return 200, [("Content-Type", "text/xml")], _empty_fleet()
                body = _capped_fleet(body, self.fleet_capacity[fleet_group])
        if action == "SetDesiredCapacity" and group in self.launch_cap:
            asked = int(params["DesiredCapacity"])
            self.stocked_out[group] = asked
            body = _with_params(body, {"DesiredCapacity": str(min(self.launch_cap[group], asked))})
        if action == "SetDesiredCapacity" and group in self.stocked_out and group not in self.launch_cap:
            self.stocked_out[group] = int(params["DesiredCapacity"])
            return 200, [("Content-Type", "text/xml")], _ok("SetDesiredCapacity")
        if action == "DescribeScalingActivities" and group in self.activities:
            return 200, [("Content-Type", "text/xml")], _activities(group, self.activities[group])
        status, out_headers, answer = self._forward(path, headers, body)
        if action == "DescribeAutoScalingGroups" and any(v is not None for v in self.stocked_out.values()):
            answer = self._rewrite_desired(answer)
        return status, out_headers, answer

    def _products(self, body: bytes) -> bytes:
        filters = {f["Field"]: f["Value"] for f in json.loads(body).get("Filters", [])}
        price = self.prices.get(filters.get("instanceType", ""))
        products = []
        if price is not None and filters.get("regionCode") == REGION:
            product = {
                "product": {"attributes": {"instanceType": filters["instanceType"]}},
                "terms": {
                    "OnDemand": {
                        "T1": {"priceDimensions": {"D1": {"pricePerUnit": {"USD": f"{price:.10f}"}}}}
                    }
                },
            }
            products.append(json.dumps(product))
        return json.dumps({"FormatVersion": "aws_v1", "PriceList": products}).encode()

    def _forward(
        self, path: str, headers: dict[str, str], body: bytes
    ) -> tuple[int, list[tuple[str, str]], bytes]:
        conn = http.client.HTTPConnection(*self.upstream, timeout=30)
        try:
            conn.request("POST", path, body=body, headers=headers)
            response = conn.getresponse()
            return response.status, response.getheaders(), response.read()
        finally:
            conn.close()

    def _rewrite_desired(self, answer: bytes) -> bytes:
        root = ET.fromstring(answer)
        for member in root.iter(f"{{{_AS_NS}}}member"):
            name = member.find(f"{{{_AS_NS}}}AutoScalingGroupName")
            desired = member.find(f"{{{_AS_NS}}}DesiredCapacity")
            if name is not None and desired is not None and self.stocked_out.get(name.text or "") is not None:
                desired.text = str(self.stocked_out[name.text or ""])
        return ET.tostring(root)

    def control(self, method: str, path: str, body: bytes) -> tuple[int, list[tuple[str, str]], bytes]:
        """The ``/_proxy/`` API (see the module's docstring)."""
        what = path[len(CONTROL) :].strip("/")
        try:
            args: dict[str, Any] = json.loads(body) if body.strip() else {}
            if method == "GET" and what == "requests":
                out: Any = {"requests": [a for a, _ in self.requests], "seen": dict(self.seen)}
            elif method == "POST" and what == "stockout":
                self.stocked_out[str(args["group"])] = None
                out = {"stocked_out": sorted(self.stocked_out)}
            elif method == "POST" and what == "activity":
                group = str(args["group"])
                self.activities[group] = [
                    activity(str(args.get("status", "Failed")), str(args.get("message", "")))
                ]
                out = {"group": group, "activities": len(self.activities[group])}
            elif method == "POST" and what in ("throttle", "garbage"):
                counter = self.throttle if what == "throttle" else self.garbage
                counter[str(args["action"])] += int(args.get("count", 1))
                out = dict(counter)
            elif method == "POST" and what == "price":
                self.prices[str(args["instanceType"])] = float(args["usd"])
                out = dict(self.prices)
            elif method == "POST" and what == "reset":
                self.reset()
                out = {}
            else:
                return 404, [("Content-Type", "application/json")], b'{"error": "no such control"}'
        except (KeyError, TypeError, ValueError) as exc:
            answer = json.dumps({"error": f"bad request: {exc}"}).encode()
            return 400, [("Content-Type", "application/json")], answer
        return 200, [("Content-Type", "application/json")], json.dumps(out).encode()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


_EC2_NS = "http://ec2.amazonaws.com/doc/2016-11-15/"


def _fleet_group(params: dict[str, str]) -> str:
    """The group an instant fleet launches for: its instances' ``kubetide.io/atomic-increase-of`` tag."""
    for key, value in params.items():
        if (
            key.startswith("TagSpecification.")
            and key.endswith(".Key")
            and value == "kubetide.io/atomic-increase-of"
        ):
            return params.get(key[: -len("Key")] + "Value", "")
    return ""


def _with_params(body: bytes, changes: dict[str, str]) -> bytes:
    pairs = [(k, changes.get(k, v)) for k, v in parse_qsl(body.decode(), keep_blank_values=True)]
    return urlencode(pairs).encode()


def _capped_fleet(body: bytes, n: int) -> bytes:
    keys = [k for k, _ in parse_qsl(body.decode(), keep_blank_values=True)]
    capacity = [
        k
        for k in keys
        if k.endswith(
            ("TotalTargetCapacity", "OnDemandTargetCapacity", "SpotTargetCapacity", "MinTargetCapacity")
        )
    ]
    return _with_params(body, dict.fromkeys(capacity, str(n)))


def _empty_fleet() -> bytes:
    return (
        f'<CreateFleetResponse xmlns="{_EC2_NS}"><requestId>{uuid.uuid4()}</requestId>'
        f"<fleetId>fleet-{uuid.uuid4().hex[:17]}</fleetId><errorSet><item><lifecycle>on-demand</lifecycle>"
        "<errorCode>InsufficientInstanceCapacity</errorCode><errorMessage>We currently do not have "
        "sufficient capacity to launch all of the instances you requested</errorMessage></item></errorSet>"
        "<fleetInstanceSet/></CreateFleetResponse>"
    ).encode()


def _ok(action: str) -> bytes:
    return (
        f'<{action}Response xmlns="{_AS_NS}"><ResponseMetadata><RequestId>{uuid.uuid4()}</RequestId>'
        f"</ResponseMetadata></{action}Response>"
    ).encode()


def _error(code: str, message: str) -> bytes:
    return (
        f'<ErrorResponse xmlns="{_AS_NS}"><Error><Type>Sender</Type><Code>{code}</Code>'
        f"<Message>{message}</Message></Error><RequestId>{uuid.uuid4()}</RequestId></ErrorResponse>"
    ).encode()


def _activities(group: str, items: list[dict[str, Any]]) -> bytes:
    members = "".join(
        "<member>"
        f"<ActivityId>{uuid.uuid4()}</ActivityId><AutoScalingGroupName>{group}</AutoScalingGroupName>"
        f"<Description>{a.get('Description', 'Launching a new EC2 instance')}</Description>"
        f"<Cause>test</Cause><StartTime>{a['StartTime'].strftime('%Y-%m-%dT%H:%M:%S.000Z')}</StartTime>"
        f"<StatusCode>{a['StatusCode']}</StatusCode><StatusMessage>{a.get('StatusMessage', '')}</StatusMessage>"
        "<Progress>100</Progress></member>"
        for a in items
    )
    return (
        f'<DescribeScalingActivitiesResponse xmlns="{_AS_NS}"><DescribeScalingActivitiesResult>'
        f"<Activities>{members}</Activities></DescribeScalingActivitiesResult>"
        f"<ResponseMetadata><RequestId>{uuid.uuid4()}</RequestId></ResponseMetadata>"
        "</DescribeScalingActivitiesResponse>"
    ).encode()


def activity(status: str, message: str = "", at: datetime | None = None) -> dict[str, Any]:
    return {"StatusCode": status, "StatusMessage": message, "StartTime": at or datetime.now(UTC)}
