"""Same seed + same file = same result, whatever the process: string hashing (PYTHONHASHSEED) must not
reach the outputs.

``examples/cluster-autoscaler.yaml`` used to rescale its HPA at t=79080 or t=79230 depending on the
process: the metrics pipeline served the HPA samples whose ``keys()`` iterated a frozenset of pod names
(hash order) while ``values()`` listed the Ready pods' samples first, so pairing them dropped random
samples along with the unready pods. Hash seeds 0 and 1 gave different event logs before the fix.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from kubetide.hpa.podgroups import PodGroups
from kubetide.hpa.ports import PodMetric
from kubetide.hpa.replicas import _samples
from kubetide.sim.metrics import UniformSamples

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
# Wall-clock figures of summary.json: the only fields allowed to differ between two runs.
WALL_CLOCK_FIELDS = ("wall_seconds", "simulated_seconds_per_wall_second")


def _start(scenario: Path, out: Path, hash_seed: str) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONHASHSEED": hash_seed}
    code = "from kubetide.cli import main; main()"
    args = [sys.executable, "-c", code, "simulate", str(scenario), "--json", "--output-dir", str(out)]
    return subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def _summary(out: Path) -> dict[str, Any]:
    summary: dict[str, Any] = json.loads((out / "summary.json").read_text())
    for name in WALL_CLOCK_FIELDS:
        summary.pop(name)
    return summary


@pytest.mark.slow
@pytest.mark.parametrize("example", ["cluster-autoscaler.yaml", "quickstart.yaml", "escalator-batch.yaml"])
def test_outputs_do_not_depend_on_the_string_hash_seed(tmp_path: Path, example: str) -> None:
    seeds = ("0", "1")  # these two disagreed on cluster-autoscaler.yaml before the fix
    runs = {seed: _start(EXAMPLES / example, tmp_path / seed, seed) for seed in seeds}
    for seed, process in runs.items():
        _, err = process.communicate(timeout=300)
        assert process.returncode == 0, f"PYTHONHASHSEED={seed}: {err.decode()}"
    first, second = (tmp_path / s for s in seeds)
    assert (first / "events.jsonl").read_text() == (second / "events.jsonl").read_text()
    assert (first / "timeline.csv").read_text() == (second / "timeline.csv").read_text()
    assert _summary(first) == _summary(second)


def test_uniform_samples_pair_each_pod_with_its_own_sample() -> None:
    names = [f"web-{i:02d}" for i in range(40)]
    ready = names[::3]
    busy, idle = PodMetric(640, 0.0, 30.0), PodMetric(50, 0.0, 30.0)
    running = {n: True for n in ready} | {n: False for n in names if n not in ready}
    samples = UniformSamples(running, len(ready), 640, 50, 0.0, 30.0)
    assert list(samples) == list(samples.keys()) == [*ready, *(n for n in names if n not in ready)]
    assert list(zip(samples.keys(), samples.values(), strict=True)) == list(samples.items())
    assert all(samples[n] == (busy if n in ready else idle) for n in names)
    assert samples.total_value() == sum(m.value for m in samples.values())
    # The HPA pairs keys with values and drops the unready pods: only Ready samples may remain.
    unready = frozenset(n for n in names if n not in ready)
    kept = _samples(samples, PodGroups(len(ready), unready, frozenset(), frozenset()))
    assert kept == dict.fromkeys(ready, 640)
