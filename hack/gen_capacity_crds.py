"""Writes deploy/rbac/crd-capacity*.yaml from Cluster Autoscaler's own CRDs (apis/config/crd/ of CA
1.36.1), as a 1.20 API server and its kubectl accept them.

Run: python hack/gen_capacity_crds.py /path/to/cluster-autoscaler. Three changes, nothing else:
- a condition's ``message`` is nullable: a 1.20 API server reads an empty message (CA writes one for
  FakePodsInjected) as null, and would refuse the status;
- the CEL rules (``x-kubernetes-validations``, Kubernetes 1.25+) are left out: kubectl 1.20's validation
  refuses the unknown field; kubetide checks the same rules itself and reports a broken object on it;
- kubetide goes beyond CA: the CapacityBuffer's ``scale`` subresource (``spec.replicas`` and
  ``status.replicas``), so an HPA, KEDA or ``kubectl scale`` can size a buffer (CA #10170).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import yaml

SOURCES = {
    "capacitybuffers": "crd-capacitybuffers.yaml",
    "provisioningrequests": "crd-provisioningrequests.yaml",
    "capacityquotas": "crd-capacityquotas.yaml",
}
HEADER = (
    "# Cluster Autoscaler 1.36.1's CRD (apis/config/crd/autoscaling.x-k8s.io_{plural}.yaml), written by\n"
    "# hack/gen_capacity_crds.py for a 1.20 API server: without its CEL rules (x-kubernetes-validations,\n"
    "# which kubectl 1.20 refuses; kubetide checks them itself), a condition's message nullable (1.20 reads\n"
    "# an empty one as null){extra}. Do not edit: regenerate.\n"
)


def _strip(node: Any) -> Any:
    if isinstance(node, dict):
        out = {k: _strip(v) for k, v in node.items() if k != "x-kubernetes-validations"}
        conditions = (out.get("properties") or {}).get("conditions")
        if isinstance(conditions, dict) and "items" in conditions:
            # A 1.20 API server reads a condition's empty message ("", which CA writes for
            # FakePodsInjected) as null and refuses it as not a string: null is allowed here.
            message = conditions["items"].get("properties", {}).get("message")
            if isinstance(message, dict):
                message["nullable"] = True
        return out
    if isinstance(node, list):
        return [_strip(v) for v in node]
    return node


def main(root: str) -> None:
    out_dir = Path(__file__).resolve().parents[1] / "deploy" / "rbac"
    for plural, target in SOURCES.items():
        source = Path(root) / "apis" / "config" / "crd" / f"autoscaling.x-k8s.io_{plural}.yaml"
        crd = _strip(yaml.safe_load(source.read_text()))
        extra = ""
        if plural == "capacitybuffers":
            for version in crd["spec"]["versions"]:
                if version["name"] == "v1beta1":
                    version["subresources"]["scale"] = {
                        "specReplicasPath": ".spec.replicas",
                        "statusReplicasPath": ".status.replicas",
                    }
            extra = ";\n# and, beyond CA, v1beta1's scale subresource (an HPA, KEDA or kubectl scale sizes a buffer)"
        text = HEADER.format(plural=plural, extra=extra) + yaml.safe_dump(crd, sort_keys=False, width=110)
        (out_dir / target).write_text(text)


if __name__ == "__main__":
    main(sys.argv[1])
