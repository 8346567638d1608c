"""``python -m kubetide.bench SUITE [--json]``: run a benchmark suite and print its figures.

Suites are registered in ``SUITES``; ``all`` runs every one. Each returns a list of records with at
least ``workload``, ``median_seconds`` and ``runs``.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from collections.abc import Callable
from typing import Any

# suite name -> module with a ``run() -> list[dict]``
SUITES: dict[str, str] = {
    "aws": "kubetide.bench.aws",
    "ca": "kubetide.bench.ca",
    "hpa": "kubetide.bench.hpa",
    "live": "kubetide.bench.live",
    "record": "kubetide.bench.record",
    "scheduling": "kubetide.bench.scheduling",
    "sim": "kubetide.bench.sim",
    "sweep": "kubetide.bench.sweep",
}
# Suites that need a running cluster (``make cluster-up``): named explicitly, not part of ``all``.
CLUSTER_SUITES: dict[str, str] = {"live-server": "kubetide.bench.live_server"}


def _load(name: str) -> Callable[..., list[dict[str, Any]]]:
    run: Callable[..., list[dict[str, Any]]] = importlib.import_module({**SUITES, **CLUSTER_SUITES}[name]).run
    return run


def _table(records: list[dict[str, Any]]) -> str:
    lines = [f"{'workload':<24} {'median':>12} {'target':>12} {'runs':>5}  decision"]
    for r in records:
        target = r.get("target_seconds")
        decision = {
            k: v for k, v in r.items() if k not in ("workload", "median_seconds", "runs", "target_seconds")
        }
        verdict = "" if target is None else ("  ok" if r["median_seconds"] <= target else "  SLOW")
        lines.append(
            f"{r['workload']:<24} {_fmt(r['median_seconds']):>12} {_fmt(target) if target else '-':>12} "
            f"{r['runs']:>5}  {json.dumps(decision)}{verdict}"
        )
    return "\n".join(lines)


def _fmt(seconds: float) -> str:
    if seconds < 1e-3:
        return f"{seconds * 1e6:.1f} us"
    if seconds < 1:
        return f"{seconds * 1e3:.1f} ms"
    return f"{seconds:.2f} s"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m kubetide.bench", description=__doc__)
    parser.add_argument("suite", choices=[*SUITES, *CLUSTER_SUITES, "all"])
    parser.add_argument("--json", action="store_true", help="print a JSON list instead of a table")
    parser.add_argument(
        "--only", metavar="WORKLOAD", help="run only this row of the suite (suites with rows)"
    )
    args = parser.parse_args(argv)
    names = list(SUITES) if args.suite == "all" else [args.suite]
    records: list[dict[str, Any]] = []
    for name in names:
        if not args.json:
            print(f"running {name} ...", file=sys.stderr)
        records.extend(_load(name)(only=args.only) if args.only else _load(name)())
    print(json.dumps(records, indent=2) if args.json else _table(records))
    return 0


if __name__ == "__main__":
    sys.exit(main())
