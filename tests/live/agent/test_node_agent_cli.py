"""``kubetide node-agent`` refuses bad flags and missing cluster access with exit 2, never a traceback."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from kubetide.cli import main


def test_no_cluster_configuration_is_exit_2(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["node-agent", "--kubeconfig", str(tmp_path / "missing")])
    assert result.exit_code == 2
    assert "--kubeconfig" in result.output and "Traceback" not in result.output


def test_a_bad_address_is_exit_2() -> None:
    result = CliRunner().invoke(main, ["node-agent", "--address", "nowhere"])
    assert result.exit_code == 2
    assert "--address" in result.output


def test_an_unknown_logging_format_is_exit_2() -> None:
    result = CliRunner().invoke(main, ["node-agent", "--logging-format", "xml"])
    assert result.exit_code == 2
