"""`kubetide shadow report DIR`: both timelines on one page, the disagreements explained, the cost."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from kubetide.cli import main
from kubetide.commands.shadow_report import node_hours


def write(directory: Path) -> None:
    directory.mkdir(exist_ok=True)
    timeline = [
        {"at": 3600.0 * 10 + 60 * k, "targets": {"small": t, "big": 0}, "kubetide": {"small": 0, "big": b}}
        for k, (t, b) in enumerate([(0, 0), (1, 1), (1, 1), (0, 0)])
    ]
    timeline.append({"at": 36240.0, "hpas": {"ns/web": {"running": 3, "kubetide": 5}}})
    (directory / "timeline.jsonl").write_text("".join(json.dumps(e) + "\n" for e in timeline))
    records = [
        {
            "type": "disagreement",
            "id": "scale-up-group/small/36060.000",
            "kind": "scale-up-group",
            "subject": "small",
            "at": 36060.0,
            "message": "CA scaled up group small (0 -> 1) at 10:01:00; kubetide would have scaled up group big",
        },
        {"type": "closed", "id": "scale-up-group/small/36060.000", "at": 36180.0},
    ]
    (directory / "disagreements.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))


def test_the_page_draws_both_timelines_lists_the_disagreements_and_prices_the_difference(
    tmp_path: Path,
) -> None:
    write(tmp_path / "rec")
    result = CliRunner().invoke(
        main, ["shadow", "report", str(tmp_path / "rec"), "--price", "small=0.1", "--price", "big=0.4"]
    )
    assert result.exit_code == 0, result.output
    html = (tmp_path / "rec" / "report.html").read_text()
    assert html.count('<svg class="plot-svg"') == 3  # two groups and one HPA
    assert "Nodes of small" in html and "Replicas of ns/web" in html and "small: kubetide" in html
    assert "CA scaled up group small (0 -&gt; 1) at 10:01:00; kubetide would have scaled up group big" in html
    assert ">10:03:00<" in html  # when it ended
    # small: 1 node for 2 minutes at 0.1; big: 1 node for 2 minutes at 0.4 (kubetide's), none running.
    assert "<td>all groups</td><td>0.003</td><td>0.013</td><td>+0.010</td>" in html
    assert "http://" not in html.replace("http://www.w3.org/2000/svg", "")  # self-contained


def test_bad_input_is_named_and_exits_2(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        main, ["shadow", "report", str(tmp_path / "none"), "--price", "small", "--price", "a=x"]
    )
    assert result.exit_code == 2
    assert "--price 'small': must be GROUP=USD" in result.stderr
    assert "--price 'a=x': 'x' is not a number" in result.stderr
    assert "is not a directory" in result.stderr
    (tmp_path / "rec").mkdir()
    (tmp_path / "rec" / "disagreements.jsonl").write_text('{"type":"disagreement","id":"x"}\nnope\n')
    result = CliRunner().invoke(main, ["shadow", "report", str(tmp_path / "rec")])
    assert result.exit_code == 2 and "disagreements.jsonl:2: not a JSON record" in result.stderr


@pytest.mark.parametrize(
    ("points", "hours"),
    [([], 0.0), ([(0.0, 3.0)], 0.0), ([(0.0, 2.0), (1800.0, 4.0), (3600.0, 0.0)], 3.0)],
)
def test_node_hours_hold_each_value_until_the_next_point(
    points: list[tuple[float, float]], hours: float
) -> None:
    assert node_hours(points) == pytest.approx(hours)
