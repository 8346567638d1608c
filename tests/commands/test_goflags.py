"""Go-style command lines: upstream Deployments' args are taken as they are, and nothing is dropped."""

from __future__ import annotations

from kubetide.cluster.flags import CA_FLAGS
from kubetide.commands.goflags import tokenize
from kubetide.commands.run.settings import live_flags, parse_line


def _registry() -> dict:
    return {**CA_FLAGS, **{s.name: s for s in live_flags()}}


def test_every_spelling_of_a_flag() -> None:
    line = tokenize(
        [
            "-scan-interval=20s",
            "--expander",
            "priority",
            "--balance-similar-node-groups",
            "--nodes=1:3:a",
            "--nodes",
            "0:5:b",
        ],
        bool_flags=["balance-similar-node-groups"],
        value_flags=["scan-interval", "expander", "nodes"],
    )
    assert line.problems == []
    assert line.values == {
        "scan-interval": ["20s"],
        "expander": ["priority"],
        "balance-similar-node-groups": ["true"],
        "nodes": ["1:3:a", "0:5:b"],
    }


def test_unknown_flags_and_stray_arguments_are_all_reported() -> None:
    line = tokenize(["--scan-intervall=10s", "extra", "--bogus", "value"], [], ["scan-interval"])
    assert line.problems == [
        ("--scan-intervall", "unknown flag (did you mean --scan-interval?)"),
        ("extra", "unexpected argument: this command takes flags only"),
        ("--bogus", "unknown flag"),
    ]


def test_klog_flags_are_accepted_for_logging() -> None:
    line = tokenize(["--v=4", "--logtostderr", "--stderrthreshold=info"], [], [])
    assert line.problems == []
    assert line.logging == {"v": "4", "logtostderr": "true", "stderrthreshold": "info"}


def test_a_value_flag_at_the_end_needs_its_value() -> None:
    assert tokenize(["--expander"], [], ["expander"]).problems == [("--expander", "needs a value")]


def test_typed_values_with_defaults_filled_in() -> None:
    parsed = parse_line(
        [
            "--scan-interval=20s",
            "--scale-down-enabled=false",
            "--max-nodes-total=7",
            "--nodes=1:3:a",
            "--dry-run",
        ],
        _registry(),
    )
    assert parsed.problems == []
    v = parsed.values
    assert v["scan-interval"] == 20.0
    assert v["scale-down-enabled"] is False
    assert v["max-nodes-total"] == 7
    assert v["nodes"] == ("1:3:a",)
    assert v["dry-run"] is True
    assert v["scale-down-unneeded-time"] == 600.0  # CA's default


def test_bad_values_name_the_flag_and_all_are_reported() -> None:
    parsed = parse_line(
        [
            "--scan-interval=soon",
            "--max-nodes-total=-1",
            "--expander=cheapest",
            "--scale-down-enabled=maybe",
            "--v=x",
        ],
        _registry(),
    )
    flags = [flag for flag, _ in parsed.problems]
    assert flags == ["scan-interval", "max-nodes-total", "expander", "scale-down-enabled", "v"]
    assert "must be >= 0" in dict(parsed.problems)["max-nodes-total"]


def test_last_occurrence_of_a_scalar_flag_wins_as_in_go() -> None:
    parsed = parse_line(["--scan-interval=5s", "--scan-interval=7s"], _registry())
    assert parsed.values["scan-interval"] == 7.0
