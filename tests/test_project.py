"""The project's own promises: one version everywhere it is shown, a changelog section for it, the
license pyproject.toml names, and an installed package without test oracles."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import re
import subprocess
import tomllib
from pathlib import Path

import yaml
from click.testing import CliRunner

from kubetide import __version__
from kubetide.cli import main

ROOT = Path(__file__).resolve().parents[1]


def test_the_version_is_written_once_and_pyproject_reads_it() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "version" not in project["project"] and "version" in project["project"]["dynamic"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "kubetide.__version__"}
    assert re.fullmatch(r"\d+\.\d+\.\d+", __version__)
    # The installed metadata (make install reinstalls when __init__.py changes).
    assert importlib.metadata.version("kubetide") == __version__


def test_kubetide_version_prints_it() -> None:
    result = CliRunner().invoke(main, ["--version"])
    assert result.exit_code == 0 and result.output == f"kubetide, version {__version__}\n"


def test_the_image_is_tagged_and_deployed_with_it() -> None:
    tagged = subprocess.run(
        ["make", "--no-print-directory", "-n", "image"], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert tagged.stdout.split() == ["docker", "build", "-t", f"kubetide:{__version__}", "."]
    assert not re.search(r"kubetide:\d", (ROOT / "Dockerfile").read_text())  # no second copy
    images = [
        container["image"]
        for path in sorted((ROOT / "deploy").glob("*.yaml"))
        for doc in yaml.safe_load_all(path.read_text())
        if doc and doc.get("kind") == "Deployment"
        for container in doc["spec"]["template"]["spec"]["containers"]
    ]
    assert len(images) == 3 and set(images) == {f"kubetide:{__version__}"}


def test_the_changelog_has_the_version_and_an_unreleased_section() -> None:
    headings = re.findall(r"^## \[([^\]]+)\]", (ROOT / "CHANGELOG.md").read_text(), re.MULTILINE)
    assert headings[0] == "Unreleased" and __version__ in headings


def test_the_license_is_the_one_pyproject_names() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    text = (ROOT / "LICENSE").read_text()
    assert project["license"] == "Apache-2.0"
    assert "Apache License" in text and "Version 2.0, January 2004" in text
    assert "END OF TERMS AND CONDITIONS" in text  # the full text, not a notice


def test_the_test_oracles_are_not_installed() -> None:
    """The plain references the fast code is tested against live under tests/, not in the package."""
    assert importlib.util.find_spec("kubetide.scheduling.reference") is None
    assert (ROOT / "tests" / "scheduling" / "reference.py").exists()
