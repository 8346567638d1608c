"""The Python examples of the README and docs/ run as written (from the repository root, as a reader
would)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
BLOCKS = [b for page in PAGES for b in re.findall(r"```python\n(.*?)```", page.read_text(), re.DOTALL)]


def test_the_readme_has_python_examples() -> None:
    assert len(BLOCKS) >= 2


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_readme_example_runs(index: int, tmp_path: Path) -> None:
    script = tmp_path / "example.py"
    # Outputs go under tmp_path: the example's relative paths are resolved against the repository
    # only for its inputs (examples/), so the checkout is left clean.
    code = BLOCKS[index].replace('"examples/', f'"{ROOT}/examples/')
    script.write_text(code)
    done = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=120,
        env={**os.environ, "PYTHONHASHSEED": "0"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr


def test_python_dash_m_kubetide_is_the_command_line() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "kubetide", "--help"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("Usage: kubetide ") and "simulate" in done.stdout
